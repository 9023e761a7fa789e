//! The terminals of stdout and stderr (width and colour), made once from the command line and
//! the environment and read by every command. Apart from `main.rs`, which names the commands, so
//! that the commands and the entry point do not name each other.
//! Also an error as the one line it is printed on (by `main` and by a fleet's rank 0).

use readlab::terminal::{ColorWhen, Terminal};
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Mutex, OnceLock};

/// The terminals of stdout and stderr.
static TERMINALS: OnceLock<(Terminal, Terminal)> = OnceLock::new();

/// stdout's terminal: the width its tables fit and whether to colour (100 columns and no colour
/// before the command line is read).
pub fn out() -> Terminal {
    TERMINALS.get().map(|t| t.0).unwrap_or_default()
}

/// stderr's terminal, for warnings and progress.
pub fn err() -> Terminal {
    TERMINALS.get().map(|t| t.1).unwrap_or_default()
}

/// Make both from `--color` and the environment (`COLUMNS`, `NO_COLOR`, `TERM`, the TTYs).
pub fn set(when: ColorWhen) {
    let columns = std::env::var("COLUMNS").ok();
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let dumb = std::env::var("TERM").is_ok_and(|t| t == "dumb");
    let of = |stderr: bool| {
        Terminal::resolve(
            when,
            columns.as_deref(),
            crate::lines::terminal_width(stderr),
            no_color,
            dumb,
        )
    };
    let _ = TERMINALS.set((of(false), of(true)));
}

/// An error and its causes on one line, each cause once: a library error that already prints its
/// OS error ("cannot open: No such file or directory (os error 2)") is not followed by it again.
pub fn one_line(e: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if !line.contains(&text) {
            if !line.is_empty() {
                line.push_str(": ");
            }
            line.push_str(&text);
        }
    }
    line.lines().collect::<Vec<_>>().join(" ")
}

/// What became of stdout: [`FINE`], [`GONE`] (its reader left: EPIPE) or [`FAILED`] (any other
/// write error, kept in [`STDOUT_ERROR`]).
static STDOUT_STATE: AtomicU8 = AtomicU8::new(FINE);
const FINE: u8 = 0;
const GONE: u8 = 1;
const FAILED: u8 = 2;
static STDOUT_ERROR: Mutex<Option<String>> = Mutex::new(None);

/// Everything the commands print on stdout goes through here (the `outp!`/`outln!` macros), so
/// that a closed or full stdout never panics as `print!` does. When the reader has left
/// (`readlab info FILE | head -1`, `| true`), printing stops and the command goes on with its
/// work that writes files (`--json`, results, summaries) and exits with its own code: the reader
/// leaving is not a failure of the command, and SIGPIPE's default would kill a study between a
/// point and its results file. Any other error (a full disk, EIO) is kept and ends the command
/// with exit 1 naming the file (see [`stdout_failure`]).
pub fn print(args: std::fmt::Arguments<'_>) {
    if STDOUT_STATE.load(Ordering::Relaxed) != FINE {
        return;
    }
    if STDOUT_CLOSED.load(Ordering::Relaxed) {
        // std writes to a closed descriptor 1 as if to /dev/null: what was asked for would be
        // lost without a word.
        STDOUT_STATE.store(FAILED, Ordering::Relaxed);
        *STDOUT_ERROR.lock().unwrap_or_else(|p| p.into_inner()) = Some(
            "cannot write to standard output: it is closed (>&-); redirect it to a file or to /dev/null".into(),
        );
        return;
    }
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(args).and_then(|()| out.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            STDOUT_STATE.store(GONE, Ordering::Relaxed);
        } else {
            STDOUT_STATE.store(FAILED, Ordering::Relaxed);
            let name = std::fs::read_link("/proc/self/fd/1")
                .map(|p| format!(" ({})", p.display()))
                .unwrap_or_default();
            *STDOUT_ERROR.lock().unwrap_or_else(|p| p.into_inner()) =
                Some(format!("cannot write to standard output{name}: {e}"));
        }
    }
}

/// Whether descriptor 1 was closed when the process began (`>&-`). Read before `main`: std's
/// runtime opens /dev/null on a closed 0, 1 or 2 before `main` runs (so no file readlab opens
/// takes their numbers), after which a closed stdout looks like `>/dev/null` and every print
/// would vanish without a word.
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

extern "C" fn note_closed_stdout() {
    // SAFETY: F_GETFD only reads the descriptor's flags; no memory is passed.
    if unsafe { libc::fcntl(1, libc::F_GETFD) } == -1 {
        STDOUT_CLOSED.store(true, Ordering::Relaxed);
    }
}

/// Run by the C runtime before std's own start-up (an ELF constructor), while a closed stdout
/// is still closed.
#[used]
#[unsafe(link_section = ".init_array")]
static NOTE_CLOSED_STDOUT: extern "C" fn() = note_closed_stdout;

/// Why stdout could not be written, when it failed other than by its reader leaving.
pub fn stdout_failure() -> Option<String> {
    STDOUT_ERROR
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone()
}

/// Notes printed on stderr before the rest are counted: many inputs, or many points each with its
/// own note, must not fill screens.
pub const NOTES_SHOWN: usize = 5;

/// Print the notes of loaded inputs on stderr: the first [`NOTES_SHOWN`], then how many more and
/// where they all are (`rest`: "the report lists them all").
pub fn notes(notes: &[String], rest: &str) {
    for n in notes.iter().take(NOTES_SHOWN) {
        errln!("readlab: note: {n}");
    }
    if notes.len() > NOTES_SHOWN {
        errln!(
            "readlab: note: {} more notes like these; {rest}",
            notes.len() - NOTES_SHOWN
        );
    }
}

/// Whether stderr could not be written (its reader left, or it is full): nothing more is tried.
static STDERR_GONE: AtomicBool = AtomicBool::new(false);

/// Everything the commands print on stderr goes through here (`eprintln!` is this in the binary,
/// see `main.rs`), so that `readlab study … 2>&1 | head` never panics and the study still writes
/// its results and summary. An error on stderr has nowhere to be said: printing stops.
pub fn eprint(args: std::fmt::Arguments<'_>) {
    if STDERR_GONE.load(Ordering::Relaxed) {
        return;
    }
    if write_whole(&mut std::io::stderr().lock(), args).is_err() {
        STDERR_GONE.store(true, Ordering::Relaxed);
    }
}

/// Write `args` with one write(2) (for what fits in one): the text is made first, newline and
/// all. stderr is unbuffered, so writing the pieces of `args` as they come makes a write per
/// piece, and two MPI ranks sharing one stderr interleaved their lines mid-line.
fn write_whole(w: &mut impl Write, args: std::fmt::Arguments<'_>) -> std::io::Result<()> {
    let text = std::fmt::format(args);
    w.write_all(text.as_bytes())?;
    w.flush()
}

#[cfg(test)]
mod write_tests {
    use super::*;

    /// A writer that counts its write calls.
    #[derive(Default)]
    struct Counting {
        writes: usize,
        bytes: Vec<u8>,
    }

    impl Write for Counting {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.writes += 1;
            self.bytes.extend_from_slice(b);
            Ok(b.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn an_error_line_is_one_write() {
        let mut w = Counting::default();
        let (rank, why) = (1, "no such file");
        write_whole(
            &mut w,
            format_args!("readlab: error: rank{rank}: {why}; see {}\n", "--help"),
        )
        .unwrap();
        assert_eq!(w.writes, 1);
        assert_eq!(
            String::from_utf8(w.bytes).unwrap(),
            "readlab: error: rank1: no such file; see --help\n"
        );
    }
}
