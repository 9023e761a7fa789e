//! The document on a terminal: the answer first (coloured on a colour terminal), the banners once,
//! then each section's text and tables fitted to the terminal's width, each table followed by the
//! key to its labels. Charts are left to the HTML page.

use crate::document::{Block, Document, Renderer};
use crate::error::Result;
use crate::terminal::Terminal;
use std::fmt::Write;

/// Text for a terminal of the given width and colour.
pub struct Text(pub Terminal);

/// Units written apart from their number (`4.1 %`, `0.09 µs`): never the first word of a line.
const UNITS: [&str; 4] = ["%", "µs", "ns", "ms"];

/// The words of `text`, a unit kept with the number before it.
fn words(text: &str) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for w in text.split_whitespace() {
        match v.last_mut() {
            Some(prev)
                if UNITS
                    .iter()
                    .any(|u| w.trim_end_matches([',', ')', ';', '.']) == *u) =>
            {
                prev.push(' ');
                prev.push_str(w);
            }
            _ => v.push(w.to_string()),
        }
    }
    v
}

/// `text` broken into lines of at most `width` characters, each after `indent` (the first after
/// `first`); words longer than a line stand alone, and a unit stays beside its number.
pub fn wrap(text: &str, width: usize, first: &str, indent: &str) -> String {
    let mut out = String::new();
    let mut line = first.to_string();
    let mut empty = true;
    for w in words(text) {
        let w = w.as_str();
        let len = line.chars().count();
        if !empty && len + 1 + w.chars().count() > width {
            out.push_str(line.trim_end());
            out.push('\n');
            line = indent.to_string();
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(w);
        empty = false;
    }
    if !empty {
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

impl Text {
    /// The answer lines and the banners: what the terminal says first.
    pub fn top(&self, d: &Document) -> String {
        let t = &self.0;
        let mut s = String::new();
        for a in &d.answers {
            let w = wrap(&a.text, t.width, "", "    ");
            s.push_str(&if a.close {
                w
            } else {
                paint(&w, |x| t.answer(x))
            });
        }
        for b in &d.banners {
            let w = wrap(&b.line(), t.width, "warning: ", "    ");
            s.push_str(&paint(&w, |x| t.warning(x)));
        }
        s
    }
}

/// Colour each line on its own (so a pager or a cut line keeps its colour right).
fn paint(s: &str, f: impl Fn(&str) -> String) -> String {
    s.lines().map(|l| f(l) + "\n").collect()
}

impl Renderer for Text {
    fn render(&self, d: &Document) -> Result<String> {
        let t = &self.0;
        let mut s = String::new();
        if !d.title.is_empty() {
            let _ = writeln!(s, "{}", t.heading(&d.title));
        }
        s.push_str(&self.top(d));
        for sec in &d.sections {
            if !s.is_empty() {
                s.push('\n');
            }
            let _ = writeln!(s, "{}", t.heading(&sec.title));
            for b in &sec.blocks {
                match b {
                    Block::Heading(h) => {
                        let _ = writeln!(s, "{}", t.heading(h));
                    }
                    Block::Paragraph(p) => s.push_str(&wrap(p, t.width, "", "")),
                    Block::Note(n) => s.push_str(&wrap(n, t.width, "  ", "  ")),
                    Block::List(items) => {
                        for i in items {
                            s.push_str(&wrap(i, t.width, "- ", "  "));
                        }
                    }
                    Block::Table(tb) if tb.table.columns.is_empty() => {}
                    Block::Table(tb) => {
                        if !tb.caption.is_empty() {
                            s.push_str(&wrap(&tb.caption, t.width, "", ""));
                        }
                        for line in tb.table.text_within(t.width).lines() {
                            let _ = writeln!(s, "{}", line.trim_end());
                        }
                        if !tb.key.is_empty() {
                            let key: Vec<String> =
                                tb.key.iter().map(|(l, w)| format!("{l} = {w}")).collect();
                            s.push_str(&wrap(&key.join("; "), t.width, "key: ", "     "));
                        }
                    }
                    Block::Chart(_) => {}
                }
            }
        }
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapping_keeps_words_and_width() {
        let w = wrap(
            "one two three four five six seven eight nine ten",
            12,
            "- ",
            "  ",
        );
        assert!(w.lines().all(|l| l.chars().count() <= 12), "{w}");
        assert_eq!(w.lines().next(), Some("- one two"));
        assert_eq!(w.split_whitespace().count(), 11);
    }

    #[test]
    fn a_unit_stays_beside_its_number() {
        // Without the unit kept, "−4.1" would end the first line and "%" begin the next.
        let w = wrap("too close to call: −4.1 % lower tail", 24, "", "  ");
        assert_eq!(w.lines().next(), Some("too close to call:"), "{w}");
        assert!(w.contains("−4.1 % lower"), "{w}");
        let w = wrap("costs 0.09 µs, then", 10, "", "");
        assert!(w.lines().any(|l| l == "0.09 µs,"), "{w}");
    }
}
