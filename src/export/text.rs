//! Text export: the report's document as a terminal reads it (`readlab report --format text`),
//! rendered by `crate::document::format::terminal`.

use super::ReportExporter;
use crate::document::{Renderer, format::terminal::Text};
use crate::error::Result;
use crate::report::Report;
use crate::terminal::Terminal;

/// The report as text for a terminal (100 columns, no colour: what a file or a pipe gets).
pub struct TextExporter;

impl ReportExporter for TextExporter {
    fn render(&self, report: &Report) -> Result<String> {
        Text(Terminal::default()).render(&crate::report::document::document(report))
    }
}
