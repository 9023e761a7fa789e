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

/// The schema name of the report's JSON.
pub const REPORT_SCHEMA: &str = "readlab.report/1";

/// The report as one JSON document (`report --format json`): its document (the sections every
/// format renders) and, for machines, its tables as raw numbers (ns, bytes), the verdict, the
/// selection and every point.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct ReportJson {
    /// `readlab.report/1`.
    pub schema: String,
    pub document: crate::document::format::json::DocumentJson,
    /// The inputs read, as named.
    pub inputs: Vec<String>,
    pub banners: Vec<crate::warnings::Banner>,
    /// Anything odd in the inputs (a run that measured nothing, a file that holds no runs).
    pub notes: Vec<String>,
    pub verdict: crate::verdict::render::VerdictJson,
    /// The tuner's selected parameters, one row per target, block size and goal.
    pub selected: Vec<SelectedJson>,
    pub tables: Vec<TableJson>,
    /// Every point of the inputs.
    pub points: Vec<crate::report::Point>,
    /// The points of `--baseline`.
    pub baseline: Vec<crate::report::Point>,
}

/// What the tuner selected for a goal at a block size on a target.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct SelectedJson {
    /// The target's name.
    pub name: String,
    pub bs: u64,
    /// throughput, latency or balanced.
    pub goal: String,
    /// True for the recommended goal's row.
    pub recommended: bool,
    pub label: String,
    pub engine: String,
    pub threads: usize,
    pub iodepth: usize,
    pub batch: usize,
    pub features: String,
    pub iops: f64,
    pub mb_s: f64,
    pub p999_ns: f64,
    pub cpu_cores: f64,
    pub spread: Option<crate::tune::Spread>,
}

/// One of the report's tables for machines: its columns' keys and raw values.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct TableJson {
    pub id: String,
    pub title: String,
    pub caption: String,
    pub columns: Vec<String>,
    /// One value per column: text, a raw number (ns, bytes, IOPS), a flag, or null (no figure).
    #[schemars(with = "Vec<Vec<Option<Cell>>>")]
    pub rows: Vec<Vec<serde_json::Value>>,
}

/// A table cell in the JSON reference.
#[derive(schemars::JsonSchema)]
#[schemars(untagged)]
#[allow(dead_code)]
enum Cell {
    Text(String),
    Number(f64),
    Flag(bool),
}

impl ReportJson {
    /// The report's JSON.
    pub fn of(report: &crate::report::Report) -> ReportJson {
        use crate::report::tables::{COLUMNS, tables};
        ReportJson {
            schema: REPORT_SCHEMA.into(),
            document: crate::document::format::json::typed(&crate::report::document::document(
                report,
            )),
            inputs: report.inputs.clone(),
            banners: report.banners.clone(),
            notes: report.notes.clone(),
            verdict: crate::verdict::render::typed(
                &crate::verdict::of_report(report),
                &report.points,
            ),
            selected: crate::report::selected::selected(report)
                .iter()
                .map(|r| SelectedJson {
                    name: r.name.clone(),
                    bs: r.bs,
                    goal: r.goal.name().to_string(),
                    recommended: r.recommended,
                    label: r.label.clone(),
                    engine: r.engine.clone(),
                    threads: r.threads,
                    iodepth: r.iodepth,
                    batch: r.batch,
                    features: r.features.clone(),
                    iops: r.iops,
                    mb_s: r.mb_s,
                    p999_ns: r.p999_ns,
                    cpu_cores: r.cpu_cores,
                    spread: r.spread.clone(),
                })
                .collect(),
            tables: tables(report)
                .into_iter()
                .map(|t| TableJson {
                    id: t.id,
                    title: t.title,
                    caption: t.caption,
                    columns: COLUMNS.iter().map(|c| c.key.to_string()).collect(),
                    rows: t
                        .rows
                        .iter()
                        .map(|r| r.iter().map(|v| v.json()).collect())
                        .collect(),
                })
                .collect(),
            points: report.points.clone(),
            baseline: report.baseline.clone(),
        }
    }
}

/// The report as one JSON document ([`ReportJson`]), its keys in alphabetical order.
pub struct ReportJsonExporter;

impl super::ReportExporter for ReportJsonExporter {
    fn render(&self, report: &crate::report::Report) -> Result<String> {
        serde_json::to_value(ReportJson::of(report))
            .and_then(|doc| serde_json::to_string_pretty(&doc))
            .map(|mut s| {
                s.push('\n');
                s
            })
            .map_err(|e| Error::Engine(format!("cannot serialise the report: {e}")))
    }
}
