//! Result exporters, one per format behind one trait (as hyperfine's `src/export/`); report
//! exporters (HTML, CSV, Markdown, JSON) behind a second trait over a whole report. Files are
//! written by `crate::fsio`.

mod csv;
mod html;
mod json;
mod markdown;
mod monitor;
mod table;
mod targets;

pub use csv::CsvExporter;
pub use html::HtmlExporter;
pub use json::{JsonExporter, JsonLinesExporter, ReportJsonExporter};
pub use markdown::MarkdownExporter;
pub use monitor::{SecondCheck, monitor_summary, per_second, target_devices};
pub use table::{TableExporter, percentile_cell, run_report};
pub use targets::targets_report;

use crate::error::Result;
use crate::report::{Report, ReportFormat};
use crate::result::Document;

/// Turns finished runs into one output format.
pub trait Exporter {
    fn render(&self, docs: &[Document]) -> Result<String>;
}

/// Turns a whole report (readlab and fio points, sections, frontier) into one output format.
pub trait ReportExporter {
    fn render(&self, report: &Report) -> Result<String>;
}

/// The report as text for a terminal (100 columns, no colour: what a file or a pipe gets).
pub struct TextExporter;

impl ReportExporter for TextExporter {
    fn render(&self, report: &Report) -> Result<String> {
        use crate::document::Renderer;
        crate::document::terminal::Text(crate::terminal::Terminal::default())
            .render(&crate::report::document::document(report))
    }
}

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
