//! JSON exports: one pretty document (`--json FILE`), or JSON lines with one run per line.

use super::Exporter;
use crate::error::{Error, Result};
use crate::result::Document;

/// A single run as one pretty JSON object; several runs as an array of them.
pub struct JsonExporter;

impl Exporter for JsonExporter {
    fn render(&self, docs: &[Document]) -> Result<String> {
        let s = match docs {
            [one] => serde_json::to_string_pretty(one),
            many => serde_json::to_string_pretty(many),
        };
        s.map(|mut s| {
            s.push('\n');
            s
        })
        .map_err(|source| Error::Json {
            what: "results",
            source,
        })
    }
}

/// One compact JSON document per line (the results store format).
pub struct JsonLinesExporter;

impl Exporter for JsonLinesExporter {
    fn render(&self, docs: &[Document]) -> Result<String> {
        let mut out = String::new();
        for d in docs {
            out.push_str(&serde_json::to_string(d).map_err(|source| Error::Json {
                what: "results",
                source,
            })?);
            out.push('\n');
        }
        Ok(out)
    }
}
