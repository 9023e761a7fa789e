//! The terminals of stdout and stderr (width and colour), made once from the command line and
//! the environment and read by every command. Apart from `main.rs`, which names the commands, so
//! that the commands and the entry point do not name each other.
//! Also an error as the one line it is printed on (by `main` and by a fleet's rank 0).

use readlab::terminal::{ColorWhen, Terminal};
use std::sync::OnceLock;

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
