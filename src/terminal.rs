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

/// When to colour: `--color auto|always|never`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ColorWhen {
    /// On a terminal, unless `NO_COLOR` is set (or `TERM=dumb`).
    #[default]
    Auto,
    Always,
    Never,
}

/// The narrowest width readlab lays out for, whatever `COLUMNS` says.
pub const MIN_WIDTH: usize = 40;

impl Terminal {
    /// The terminal of one output stream: `columns` is `$COLUMNS`, `tty_width` the stream's
    /// window size when it is a terminal (None for a pipe or a file), `no_color` whether
    /// `NO_COLOR` is set to something, `dumb` whether `TERM=dumb`. The width is `COLUMNS` when it
    /// is a number, else the terminal's, else 100; colour follows `when`, and in `auto` needs a
    /// terminal and no `NO_COLOR`.
    pub fn resolve(
        when: ColorWhen,
        columns: Option<&str>,
        tty_width: Option<usize>,
        no_color: bool,
        dumb: bool,
    ) -> Terminal {
        let width = columns
            .and_then(|c| c.trim().parse::<usize>().ok())
            .filter(|&c| c > 0)
            .or(tty_width.filter(|&c| c > 0))
            .unwrap_or(Terminal::default().width)
            .max(MIN_WIDTH);
        let color = match when {
            ColorWhen::Always => true,
            ColorWhen::Never => false,
            ColorWhen::Auto => tty_width.is_some() && !no_color && !dumb,
        };
        Terminal { width, color }
    }

    /// `text` with every line fitted to this terminal's width ([`wrap`]).
    pub fn fit(&self, text: &str) -> String {
        wrap(text, self.width)
    }

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

/// How many columns `s` takes on a terminal: its characters, ANSI colour sequences aside.
pub fn visible_width(s: &str) -> usize {
    strip_ansi(s).chars().count()
}

/// `s` without ANSI escape sequences (`ESC [ … letter`).
pub fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        if c == '\x1b' && it.peek() == Some(&'[') {
            it.next();
            for d in it.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// `text` with every line longer than `width` broken at spaces, its continuation lines indented
/// two more than the line. Where a line separates its parts by two spaces or more
/// (`p50 57.5us  p99 4.00ms`), it breaks there first, so a figure stays beside its name; a
/// number is never split. Only a word longer than a whole line (a long path) is cut.
pub fn wrap(text: &str, width: usize) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        wrap_line(line, width.max(2), &mut out);
    }
    out
}

/// A two-space-separated part up to this long is a figure with its name, kept on one line;
/// a longer one is prose, broken at its spaces.
const FIGURE: usize = 24;

fn wrap_line(line: &str, width: usize, out: &mut String) {
    if visible_width(line) <= width {
        out.push_str(line);
        return;
    }
    let line = line.trim_end();
    let body = line.trim_start_matches(' ');
    let indent = (line.len() - body.len()).min(width / 2);
    let hang = (indent + 2).min(width / 2);
    // The parts kept together: two-space-separated groups, split further at single spaces
    // only when a group is longer than a line.
    let mut parts: Vec<(String, usize)> = Vec::new(); // (text, spaces before it)
    let mut gap = 0;
    for (j, group) in body.split("  ").enumerate() {
        if group.is_empty() {
            gap += 2;
            continue;
        }
        let g = group.trim_start_matches(' ');
        let lead = group.len() - g.len() + if j == 0 { 0 } else { 2 };
        let g = g.trim_end_matches(' ');
        if visible_width(g) <= FIGURE.min(width - hang) {
            parts.push((g.to_string(), gap + lead));
        } else {
            for (w, word) in g.split(' ').filter(|w| !w.is_empty()).enumerate() {
                parts.push((word.to_string(), if w == 0 { gap + lead } else { 1 }));
            }
        }
        gap = 0;
    }
    let mut cur = " ".repeat(indent);
    let mut cur_w = indent;
    let mut fresh = true;
    for (part, space) in parts {
        let pw = visible_width(&part);
        if !fresh && cur_w + space + pw > width {
            out.push_str(&cur);
            out.push('\n');
            cur = " ".repeat(hang);
            cur_w = hang;
            fresh = true;
        }
        if !fresh {
            cur.push_str(&" ".repeat(space));
            cur_w += space;
        }
        // A word longer than a line: cut it where the line ends.
        let mut rest: Vec<char> = part.chars().collect();
        while cur_w + rest.len() > width && rest.len() > 1 {
            let room = width.saturating_sub(cur_w).max(1);
            let head: String = rest.drain(..room.min(rest.len() - 1)).collect();
            cur.push_str(&head);
            out.push_str(&cur);
            out.push('\n');
            cur = " ".repeat(hang);
            cur_w = hang;
        }
        let tail: String = rest.into_iter().collect();
        cur_w += visible_width(&tail);
        cur.push_str(&tail);
        fresh = false;
    }
    out.push_str(&cur);
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

    #[test]
    fn width_from_columns_then_the_terminal_then_100() {
        let r = |c: Option<&str>, tty: Option<usize>| {
            Terminal::resolve(ColorWhen::Auto, c, tty, false, false)
        };
        assert_eq!(r(Some("100"), Some(200)).width, 100);
        assert_eq!(r(None, Some(132)).width, 132);
        assert_eq!(r(None, None).width, 100);
        assert_eq!(r(Some("junk"), None).width, 100);
        assert_eq!(r(Some("10"), None).width, MIN_WIDTH);
    }

    #[test]
    fn colour_on_a_terminal_unless_no_color_or_never() {
        let c = |when, tty: Option<usize>, no_color| {
            Terminal::resolve(when, None, tty, no_color, false).color
        };
        assert!(c(ColorWhen::Auto, Some(80), false));
        assert!(!c(ColorWhen::Auto, None, false), "a pipe gets no colour");
        assert!(!c(ColorWhen::Auto, Some(80), true), "NO_COLOR");
        assert!(c(ColorWhen::Always, None, true), "--color always wins");
        assert!(!c(ColorWhen::Never, Some(80), false));
        assert!(!Terminal::resolve(ColorWhen::Auto, None, Some(80), false, true).color);
    }

    #[test]
    fn wrap_breaks_between_figures_never_inside_one() {
        let line = "  latency  min 39.7us  mean 152.5us  p50 57.5us  p90 66.4us  p99 4.00ms  p99.9 –  p99.99 –  max 9.84ms";
        let w = wrap(line, 60);
        for l in w.lines() {
            assert!(l.chars().count() <= 60, "{l:?}");
        }
        for pair in ["min 39.7us", "mean 152.5us", "p99 4.00ms", "max 9.84ms"] {
            assert!(w.contains(pair), "{pair} split in {w}");
        }
        assert!(w.lines().nth(1).unwrap().starts_with("    "), "{w}");
        // Prose breaks at spaces; every word survives whole.
        let prose = "readlab: warning: other processes used 171 % of a core during the run (readlab itself 20 %): the figures may be disturbed";
        let w = wrap(prose, 40);
        assert!(w.lines().all(|l| l.chars().count() <= 40), "{w}");
        let words = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
        assert_eq!(words(&w), words(prose));
        // A path longer than a line is cut, still within the width.
        let long = format!("results: /{}", "x".repeat(150));
        assert!(wrap(&long, 50).lines().all(|l| l.chars().count() <= 50));
        // A label before a long run of prose stays on its line.
        let queue = format!(
            "queue      logical block 512 B, {}",
            "physical 4096 B, ".repeat(6)
        );
        assert!(wrap(&queue, 100).starts_with("queue      logical block 512 B,"));
        // Short lines and empty lines are untouched.
        assert_eq!(wrap("a\n\nb\n", 50), "a\n\nb\n");
    }

    #[test]
    fn ansi_is_not_counted() {
        let c = Terminal {
            width: 100,
            color: true,
        };
        let s = c.warning("warning");
        assert_eq!(visible_width(&s), 7);
        assert_eq!(strip_ansi(&s), "warning");
        assert_eq!(wrap(&s, 10), s);
    }
}
