//! The document as JSON values: the same sections and blocks, each table with its columns, its
//! rows as people read them and, where it has one, its rows for machines (raw numbers).

use super::{Block, Document, Renderer};
use crate::error::{Error, Result};
use crate::table::Table;
use serde_json::{Value, json};

/// JSON.
pub struct Json;

fn table(t: &Table) -> Value {
    json!({
        "columns": t.columns.iter().map(|c| c.header.clone()).collect::<Vec<_>>(),
        "rows": t.rows.iter().map(|r| {
            (0..t.columns.len()).map(|k| r.cells.get(k).cloned().unwrap_or_default()).collect::<Vec<_>>()
        }).collect::<Vec<_>>(),
    })
}

/// The document as one JSON value.
pub fn value(d: &Document) -> Value {
    let sections: Vec<Value> = d
        .sections
        .iter()
        .map(|s| {
            let blocks: Vec<Value> = s
                .blocks
                .iter()
                .map(|b| match b {
                    Block::Heading(h) => json!({"type": "heading", "text": h}),
                    Block::Paragraph(p) => json!({"type": "paragraph", "text": p}),
                    Block::Note(n) => json!({"type": "note", "text": n}),
                    Block::List(items) => json!({"type": "list", "items": items}),
                    Block::Table(t) => json!({
                        "type": "table",
                        "id": t.id,
                        "caption": t.caption,
                        "table": table(&t.table),
                        "key": t.key.iter().map(|(l, w)| json!({"label": l, "words": w})).collect::<Vec<_>>(),
                        "raw": t.raw.as_ref().map(table),
                    }),
                    Block::Chart(c) => json!({
                        "type": "chart",
                        "id": c.id,
                        "title": c.title,
                        "caption": c.caption,
                    }),
                })
                .collect();
            json!({"id": s.id, "title": s.title, "blocks": blocks})
        })
        .collect();
    json!({
        "title": d.title,
        "lead": d.lead,
        "answers": d.answers,
        "banners": d.banners.iter().map(|b| json!({"text": b.text, "points": b.points, "line": b.line()})).collect::<Vec<_>>(),
        "sections": sections,
    })
}

impl Renderer for Json {
    fn render(&self, d: &Document) -> Result<String> {
        serde_json::to_string_pretty(&value(d))
            .map(|mut s| {
                s.push('\n');
                s
            })
            .map_err(|e| Error::Engine(format!("cannot serialise the document: {e}")))
    }
}
