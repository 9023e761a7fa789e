//! Markdown export of the report's tables: a heading and a caption (target, kernel, date) per
//! table, then the same rows and columns as the CSV, with units for people.

use super::ReportExporter;
use crate::error::Result;
use crate::report::Report;
use crate::report::tables::{COLUMNS, Value, human_layout, tables};
use std::fmt::Write;

/// The report's tables in Markdown.
pub struct MarkdownExporter;

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace(['\n', '\r'], " ")
}

impl ReportExporter for MarkdownExporter {
    fn render(&self, report: &Report) -> Result<String> {
        let mut s = String::from("# readlab report\n\n");
        let fio = report.points.iter().filter(|p| p.is_fio()).count();
        let _ = writeln!(
            s,
            "{} point(s): {} measured by readlab, {} imported from fio. Inputs: {}.\n",
            report.points.len(),
            report.points.len() - fio,
            fio,
            report.inputs.join(", ")
        );
        for t in tables(report) {
            let (cols, shared) = human_layout(&t);
            let _ = writeln!(s, "## {}\n\n{}\n", t.title, t.caption);
            if !shared.is_empty() {
                let every: Vec<String> = shared.iter().map(|(h, v)| format!("{h} {v}")).collect();
                let _ = writeln!(s, "Every row: {}.\n", cell(&every.join(", ")));
            }
            let _ = write!(s, "|");
            for &k in &cols {
                let _ = write!(s, " {} |", COLUMNS[k].header);
            }
            let _ = write!(s, "\n|");
            for &k in &cols {
                let text = t
                    .rows
                    .first()
                    .is_some_and(|r| matches!(r.get(k), Some(Value::Text(_)) | Some(Value::Empty)));
                let _ = write!(s, "{}|", if text { "---" } else { "---:" });
            }
            s.push('\n');
            for r in &t.rows {
                let _ = write!(s, "|");
                for &k in &cols {
                    let v = r.get(k).map(Value::human).unwrap_or_default();
                    let _ = write!(s, " {} |", cell(&v));
                }
                s.push('\n');
            }
            s.push('\n');
        }
        if !report.notes.is_empty() {
            s.push_str("## Notes\n\n");
            for n in &report.notes {
                let _ = writeln!(s, "- {}", cell(n));
            }
            s.push('\n');
        }
        Ok(s)
    }
}
