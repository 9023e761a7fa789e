//! The document as CSV: the tables that have a form for machines (raw numbers: ns, bytes), one
//! header, one line per row; tables whose columns differ from the first such table are left to
//! the JSON, which carries every table.

use crate::document::{Block, Document, Renderer};
use crate::error::Result;

/// CSV (RFC 4180).
pub struct Csv;

impl Renderer for Csv {
    fn render(&self, d: &Document) -> Result<String> {
        let mut out = String::new();
        let mut header: Option<Vec<String>> = None;
        for s in &d.sections {
            for b in &s.blocks {
                let Block::Table(t) = b else { continue };
                let Some(raw) = &t.raw else { continue };
                let cols: Vec<String> = raw.columns.iter().map(|c| c.header.clone()).collect();
                match &header {
                    None => {
                        out.push_str(&raw.csv());
                        header = Some(cols);
                    }
                    Some(h) if *h == cols => {
                        // The rows without a second header line.
                        let csv = raw.csv();
                        out.push_str(csv.split_once("\r\n").map_or("", |(_, rows)| rows));
                    }
                    Some(_) => {}
                }
            }
        }
        Ok(out)
    }
}
