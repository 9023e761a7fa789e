//! How readlab writes to a terminal: the width every table must fit and whether to colour the
//! answer and the warnings. The binary decides both (`--color`, `NO_COLOR`, `COLUMNS`, a TTY or
//! not); the library only obeys the [`Terminal`] it is given.

/// The width and colour of the terminal readlab writes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Terminal {
    /// Columns every line must fit in.
    pub width: usize,
    /// Whether ANSI colour is wanted.
    pub color: bool,
}

impl Default for Terminal {
    /// 100 columns, no colour: what a file or a pipe gets.
    fn default() -> Terminal {
        Terminal {
            width: 100,
            color: false,
        }
    }
}

impl Terminal {
    /// `s` as the answer (bold green on a colour terminal).
    pub fn answer(&self, s: &str) -> String {
        self.paint("1;32", s)
    }

    /// `s` as a warning (bold yellow on a colour terminal).
    pub fn warning(&self, s: &str) -> String {
        self.paint("1;33", s)
    }

    /// `s` as a heading (bold on a colour terminal).
    pub fn heading(&self, s: &str) -> String {
        self.paint("1", s)
    }

    fn paint(&self, sgr: &str, s: &str) -> String {
        if self.color && !s.is_empty() {
            format!("\x1b[{sgr}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_only_when_asked() {
        let plain = Terminal::default();
        assert_eq!(plain.warning("x"), "x");
        let c = Terminal {
            color: true,
            ..plain
        };
        assert_eq!(c.answer("x"), "\x1b[1;32mx\x1b[0m");
    }
}
