//! The report's JSON (`readlab report --format json`, `--json FILE`): its document as every format
//! renders it and, for machines, its tables as raw numbers, the verdict, the tuner's selection and
//! every point. Built from the types it shows (the selection is [`Selected`] itself), so a field
//! added to one of them is in the JSON too.

use super::selected::Selected;
use super::tables::{COLUMNS, tables};
use crate::error::{Error, Result};
use crate::points::{Point, Report};

/// The schema name of the report's JSON (where reports read it back, with the points).
pub use crate::points::load::REPORT_SCHEMA;

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
    pub selected: Vec<Selected>,
    pub tables: Vec<TableJson>,
    /// Every point of the inputs.
    pub points: Vec<Point>,
    /// The points of `--baseline`.
    pub baseline: Vec<Point>,
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
    pub fn of(report: &Report) -> ReportJson {
        ReportJson {
            schema: REPORT_SCHEMA.into(),
            document: crate::document::format::json::typed(&super::document::document(report)),
            inputs: report.inputs.clone(),
            banners: report.banners.clone(),
            notes: report.notes.clone(),
            verdict: crate::verdict::render::typed(
                &crate::verdict::of_report(report),
                &report.points,
            ),
            selected: super::selected::selected(report),
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
pub fn render(report: &Report) -> Result<String> {
    serde_json::to_value(ReportJson::of(report))
        .and_then(|doc| serde_json::to_string_pretty(&doc))
        .map(|mut s| {
            s.push('\n');
            s
        })
        .map_err(|source| Error::Json {
            what: "the report",
            source,
        })
}
