//! The monitor's lines with their header, fitted to the terminal: what `readlab monitor` prints
//! and what runs and studies with `--monitor` print under their progress. Apart from
//! `monitor.rs` so that the progress display and the monitor command do not name each other.

use readlab::monitor::line::Layout;
use readlab::monitor::{MonitorOptions, Sample};
use std::sync::Mutex;

/// Header again after this many lines, as dstat does.
pub const HEADER_EVERY: usize = 25;

/// The terminal's width from the descriptor `fd` (stdout or stderr), if it is a terminal.
pub fn terminal_width(stderr: bool) -> Option<usize> {
    let w = if stderr {
        rustix::termios::tcgetwinsize(std::io::stderr())
    } else {
        rustix::termios::tcgetwinsize(std::io::stdout())
    };
    w.ok().map(|w| w.ws_col as usize).filter(|&c| c >= 20)
}

/// Monitor lines with their header, laid out on the first sample.
pub struct Lines {
    width: usize,
    state: Mutex<(Option<Layout>, usize)>,
}

impl Lines {
    pub fn new(width: usize) -> Lines {
        Lines {
            width,
            state: Mutex::new((None, 0)),
        }
    }

    /// The lines to print for this sample: the header first when it is due.
    pub fn lines(&self, s: &Sample) -> Vec<String> {
        let mut st = self.state.lock().unwrap();
        let (layout, n) = &mut *st;
        let layout = layout.get_or_insert_with(|| {
            let names = s.devices.iter().map(|d| d.name.clone()).collect();
            let pid = (!s.threads.kinds.is_empty() || s.threads.thread_samples > 0).then_some(0);
            Layout::new(&MonitorOptions::new(names, pid), self.width)
        });
        let mut out = Vec::new();
        if *n == 0 {
            out.extend(layout.legend().lines().map(str::to_string));
        }
        if (*n).is_multiple_of(HEADER_EVERY) {
            out.extend(layout.header().lines().map(str::to_string));
        }
        *n += 1;
        out.push(layout.line(s));
        out
    }
}
