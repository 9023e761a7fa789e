//! `readlab monitor`: the live monitor on its own — devices, machine and a process's threads,
//! one line per interval fitted to the terminal, every sample in `--json`. Also the line printer
//! that runs and studies with `--monitor` share.

use crate::args::{count, duration};
use crate::lines::HEADER_EVERY;
use crate::progress::Progress;
use clap::Args;
use readlab::monitor::line::Layout;
use readlab::monitor::{Monitor, MonitorOptions, Sample, devices};
use readlab::runner::Observer;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

#[derive(Args, Debug)]
pub struct MonitorArgs {
    /// Devices to watch: names (loop0), device nodes (/dev/loop0) or files (their filesystem's
    /// device). Default: every disk with a size.
    pub devices: Vec<String>,
    /// Sample this process's threads many times a second (state, system call, kernel wait).
    #[arg(long)]
    pub pid: Option<u32>,
    /// One line (one sample) per interval.
    #[arg(long, default_value = "1s", value_parser = duration)]
    pub interval: Duration,
    /// Stop after this many samples (default: until Ctrl-C, or until the process ends).
    #[arg(long, value_parser = count)]
    pub count: Option<usize>,
    /// Thread samples per second.
    #[arg(long, default_value_t = readlab::monitor::DEFAULT_THREAD_HZ)]
    pub thread_hz: u32,
    /// Also write every sample to this JSON file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Replace an output file that is there and that readlab did not write (--json); never a
    /// symbolic link, an input, a device, FIFO or directory.
    #[arg(long)]
    pub force: bool,
    /// Line width (default: COLUMNS, else the terminal's, else 100).
    #[arg(long, value_parser = count)]
    pub width: Option<usize>,
}

pub fn run(a: &MonitorArgs) -> anyhow::Result<ExitCode> {
    let devices = if a.devices.is_empty() {
        devices::default_set()
    } else {
        a.devices.clone()
    };
    if let Some(p) = &a.json {
        // Never over a device or file being watched.
        let watched: Vec<&std::path::Path> = a.devices.iter().map(std::path::Path::new).collect();
        readlab::outpath::check_file(p, &watched, a.force)?;
    }
    let opts = MonitorOptions {
        devices,
        pid: a.pid,
        interval: a.interval,
        thread_hz: a.thread_hz,
    };
    let m = Monitor::new(opts, Vec::new())?;
    let width = a.width.unwrap_or(crate::out().width);
    let layout = Layout::new(m.options(), width);
    let signals = Progress::new(true);
    let printed = Mutex::new(0usize);
    // Set when a line cannot be written (the reader of stdout left: `| head -1`, `| true`):
    // the monitor ends then, as a pipeline's producer should, instead of sampling for nobody.
    let reader_gone = AtomicBool::new(false);
    let sink = |s: &Sample| {
        let mut n = printed.lock().unwrap();
        let mut out = std::io::stdout().lock();
        if *n == 0 {
            // What the columns are, once, on stderr: stdout stays one line per sample.
            eprintln!("{}", layout.legend());
        }
        let mut written = Ok(());
        if (*n).is_multiple_of(HEADER_EVERY) {
            written = writeln!(out, "{}", layout.header());
        }
        *n += 1;
        let written = written
            .and_then(|()| writeln!(out, "{}", layout.line(s)))
            .and_then(|()| out.flush());
        if written.is_err() {
            reader_gone.store(true, Ordering::Relaxed);
        }
    };
    let record = std::thread::scope(|scope| {
        let h = std::thread::Builder::new()
            .name(readlab::monitor::THREAD_NAME.into())
            .spawn_scoped(scope, || m.run(&sink))
            .expect("spawn the monitor thread");
        let epoch = m.start_now();
        if let Some(n) = a.count {
            m.end_at(epoch + a.interval * n as u32);
        }
        while !h.is_finished() {
            if signals.cancelled() || reader_gone.load(Ordering::Relaxed) {
                m.end_at(Instant::now());
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        h.join().expect("the monitor thread")
    });
    for n in &record.notes {
        errln!("readlab: {n}");
    }
    errln!(
        "readlab: {} samples; the monitor used {:.2} % of a core ({} thread samples/s)",
        record.samples.len(),
        record.sampler_cpu_pct,
        record.options.thread_hz
    );
    if let Some(p) = &a.json {
        readlab::fsio::write_file(p, &(serde_json::to_string_pretty(&record)? + "\n"))?;
    }
    if signals.cancelled() {
        return Ok(crate::progress::interrupted_exit());
    }
    Ok(ExitCode::SUCCESS)
}
