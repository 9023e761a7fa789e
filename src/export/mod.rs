//! Result exporters, one per format behind one trait (as hyperfine's `src/export/`); report
//! exporters (HTML, CSV, Markdown, JSON, text) behind a second trait over a whole report. Files are
//! written by `crate::fsio`.

mod csv;
mod exporter;
mod html;
mod json;
mod markdown;
mod monitor;
mod report_exporter;
mod table;
mod targets;
mod text;

pub use csv::CsvExporter;
pub use exporter::Exporter;
pub use html::HtmlExporter;
pub use json::{JsonExporter, JsonLinesExporter, REPORT_SCHEMA, ReportJson, ReportJsonExporter};
pub use markdown::MarkdownExporter;
pub use monitor::{SecondCheck, monitor_summary, per_second, target_devices};
pub use report_exporter::ReportExporter;
pub use table::{TableExporter, percentile_cell, run_report};
pub use targets::targets_report;
pub use text::TextExporter;

use crate::report::ReportFormat;

/// The exporter of a report format.
pub fn report_exporter(format: ReportFormat) -> Box<dyn ReportExporter> {
    match format {
        ReportFormat::Html => Box::new(HtmlExporter),
        ReportFormat::Csv => Box::new(CsvExporter),
        ReportFormat::Markdown => Box::new(MarkdownExporter),
        ReportFormat::Json => Box::new(ReportJsonExporter),
        ReportFormat::Text => Box::new(TextExporter),
    }
}
