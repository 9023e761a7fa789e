//! The document as Markdown: the same sections in the same order as the HTML page, tables as
//! Markdown tables with their key, charts named by their figure number (drawn in the HTML page).

use crate::document::{Block, Document, Renderer};
use crate::error::Result;
use crate::table::markdown_escape as md;
use std::fmt::Write;

/// Markdown.
pub struct Markdown;

impl Renderer for Markdown {
    fn render(&self, d: &Document) -> Result<String> {
        let mut s = format!("# {}\n\n", md(&d.title));
        if !d.lead.is_empty() {
            let _ = writeln!(s, "{}\n", md(&d.lead));
        }
        for a in &d.answers {
            if a.close {
                let _ = writeln!(s, "- {}", md(&a.text));
            } else {
                let _ = writeln!(s, "- **{}**", md(&a.text));
            }
        }
        if !d.answers.is_empty() {
            s.push('\n');
        }
        for b in &d.banners {
            let _ = writeln!(s, "> **Warning:** {}\n", md(&b.line()));
        }
        let mut fig = 0usize;
        for sec in &d.sections {
            let _ = writeln!(s, "## {}\n", md(&sec.title));
            for b in &sec.blocks {
                match b {
                    Block::Heading(h) => {
                        let _ = writeln!(s, "### {}\n", md(h));
                    }
                    Block::Paragraph(p) => {
                        let _ = writeln!(s, "{}\n", md(p));
                    }
                    Block::Note(n) => {
                        let _ = writeln!(s, "*{}*\n", md(n));
                    }
                    Block::List(items) => {
                        for i in items {
                            let _ = writeln!(s, "- {}", md(i));
                        }
                        s.push('\n');
                    }
                    Block::Table(t) if t.table.columns.is_empty() => {}
                    Block::Table(t) => {
                        if !t.caption.is_empty() {
                            let _ = writeln!(s, "{}\n", md(&t.caption));
                        }
                        s.push_str(&t.table.markdown());
                        s.push('\n');
                        if !t.key.is_empty() {
                            let key: Vec<String> = t
                                .key
                                .iter()
                                .map(|(l, w)| format!("`{l}` {}", md(w)))
                                .collect();
                            let _ = writeln!(s, "Key: {}.\n", key.join("; "));
                        }
                    }
                    Block::Chart(c) => {
                        fig += 1;
                        let _ = writeln!(
                            s,
                            "*Figure {fig}. {} (chart in the HTML report).* {}\n",
                            md(&c.title),
                            md(&c.caption)
                        );
                    }
                }
            }
        }
        Ok(s)
    }
}
