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
        .map_err(|e| Error::Engine(format!("cannot serialise results: {e}")))
    }
}

/// One compact JSON document per line (the results store format).
pub struct JsonLinesExporter;

impl Exporter for JsonLinesExporter {
    fn render(&self, docs: &[Document]) -> Result<String> {
        let mut out = String::new();
        for d in docs {
            out.push_str(
                &serde_json::to_string(d)
                    .map_err(|e| Error::Engine(format!("cannot serialise results: {e}")))?,
            );
            out.push('\n');
        }
        Ok(out)
    }
}

/// The report as one JSON document: its document (the sections every format renders) and, for
/// machines, its tables as raw numbers (ns, bytes), the verdict, the selection and every point.
pub struct ReportJsonExporter;

impl super::ReportExporter for ReportJsonExporter {
    fn render(&self, report: &crate::report::Report) -> Result<String> {
        use crate::report::tables::{COLUMNS, tables};
        let tables: Vec<serde_json::Value> = tables(report)
            .into_iter()
            .map(|t| {
                serde_json::json!({
                    "id": t.id,
                    "title": t.title,
                    "caption": t.caption,
                    "columns": COLUMNS.iter().map(|c| c.key).collect::<Vec<_>>(),
                    "rows": t
                        .rows
                        .iter()
                        .map(|r| r.iter().map(|v| v.json()).collect::<Vec<_>>())
                        .collect::<Vec<_>>(),
                })
            })
            .collect();
        let document = crate::report::document::document(report);
        let doc = serde_json::json!({
            "schema": "readlab.report/1",
            "document": crate::document::json::value(&document),
            "inputs": report.inputs,
            "banners": report.banners,
            "notes": report.notes,
            "verdict": crate::verdict::render::json(&crate::verdict::of_report(report), &report.points),
            "selected": crate::report::selected::selected(report)
                .iter()
                .map(|r| serde_json::json!({
                    "name": r.name,
                    "bs": r.bs,
                    "goal": r.goal.name(),
                    "recommended": r.recommended,
                    "label": r.label,
                    "engine": r.engine,
                    "threads": r.threads,
                    "iodepth": r.iodepth,
                    "batch": r.batch,
                    "features": r.features,
                    "iops": r.iops,
                    "mb_s": r.mb_s,
                    "p999_ns": r.p999_ns,
                    "cpu_cores": r.cpu_cores,
                    "spread": r.spread,
                }))
                .collect::<Vec<_>>(),
            "tables": tables,
            "points": report.points,
            "baseline": report.baseline,
        });
        serde_json::to_string_pretty(&doc)
            .map(|mut s| {
                s.push('\n');
                s
            })
            .map_err(|e| Error::Engine(format!("cannot serialise the report: {e}")))
    }
}
