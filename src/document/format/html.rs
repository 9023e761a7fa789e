//! The document as one self-contained HTML page: the answer and the banners first, a contents
//! list made from the same sections as the body, inline SVG figures numbered in document order,
//! every table with the key to its labels. No script, nothing loaded from anywhere.

use crate::document::page::{figure, page_parts};
use crate::document::{Block, Document, Renderer, TableBlock};
use crate::error::Result;
use crate::table::html_escape as esc;
use std::fmt::Write;

/// HTML: a whole page.
pub struct Html;

impl Renderer for Html {
    fn render(&self, d: &Document) -> Result<String> {
        let (head, tail) = page_parts();
        let mut out = String::with_capacity(256 * 1024);
        out.push_str(&head.replacen(
            "<title>readlab report</title>",
            &format!("<title>{}</title>", esc(&d.title)),
            1,
        ));
        let _ = writeln!(
            out,
            "<header>\n<h1>{}</h1>\n<p class=\"lead\">{}</p>",
            esc(&d.title),
            esc(&d.lead)
        );
        top(&mut out, d);
        out.push_str("</header>\n");
        if d.sections.len() > 1 {
            out.push_str("<nav><h2>Contents</h2><ol>\n");
            for s in &d.sections {
                let _ = writeln!(
                    out,
                    "<li><a href=\"#sec-{}\">{}</a></li>",
                    esc(&s.id),
                    esc(&s.title)
                );
            }
            out.push_str("</ol></nav>\n");
        }
        let mut fig = 0usize;
        for s in &d.sections {
            let _ = writeln!(
                out,
                "<section id=\"sec-{}\">\n<h2>{}</h2>",
                esc(&s.id),
                esc(&s.title)
            );
            for b in &s.blocks {
                block(&mut out, b, &mut fig)?;
            }
            out.push_str("</section>\n");
        }
        out.push_str(tail);
        Ok(out)
    }
}

/// The answer lines and the banners, at the top of the page.
fn top(out: &mut String, d: &Document) {
    if !d.answers.is_empty() {
        out.push_str("<ul class=\"answers\">\n");
        for a in &d.answers {
            let _ = writeln!(
                out,
                "<li{}>{}</li>",
                if a.close { " class=\"close\"" } else { "" },
                esc(&a.text)
            );
        }
        out.push_str("</ul>\n");
    }
    for b in &d.banners {
        let _ = writeln!(out, "<p class=\"banner\">{}</p>", esc(&b.line()));
    }
}

fn block(out: &mut String, b: &Block, fig: &mut usize) -> Result<()> {
    match b {
        Block::Heading(h) => {
            let _ = writeln!(out, "<h3>{}</h3>", esc(h));
        }
        Block::Paragraph(p) => {
            let _ = writeln!(out, "<p>{}</p>", esc(p));
        }
        Block::List(items) => {
            out.push_str("<ul>\n");
            for i in items {
                let _ = writeln!(out, "<li>{}</li>", esc(i));
            }
            out.push_str("</ul>\n");
        }
        Block::Note(n) => {
            let _ = writeln!(out, "<p class=\"note\">{}</p>", esc(n));
        }
        Block::Table(t) => table(out, t),
        Block::Chart(c) => figure(out, fig, c)?,
    }
    Ok(())
}

fn table(out: &mut String, t: &TableBlock) {
    if t.table.columns.is_empty() {
        return; // a table for machines only
    }
    let _ = writeln!(
        out,
        "<div class=\"tablewrap\">{}</div>",
        t.table.html(&format!("table-{}", t.id), &t.caption)
    );
    if !t.key.is_empty() {
        out.push_str("<dl class=\"key\">");
        for (label, words) in &t.key {
            let _ = write!(out, "<dt>{}</dt><dd>{}</dd>", esc(label), esc(words));
        }
        out.push_str("</dl>\n");
    }
}
