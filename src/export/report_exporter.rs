//! The trait of the exporters of a whole report (HTML, CSV, Markdown, JSON). Apart from
//! `export/mod.rs`, which picks one per format, so that each exporter and the module choosing
//! among them do not name each other.

use crate::error::Result;
use crate::report::Report;

/// Turns a whole report (readlab and fio points, sections, frontier) into one output format.
pub trait ReportExporter {
    fn render(&self, report: &Report) -> Result<String>;
}
