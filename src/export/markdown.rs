//! Markdown export: the report's document rendered by `crate::document::format::markdown` — the same
//! sections in the same order as the HTML page.

use super::ReportExporter;
use crate::document::{Renderer, format::markdown::Markdown};
use crate::error::Result;
use crate::report::Report;

/// The report in Markdown.
pub struct MarkdownExporter;

impl ReportExporter for MarkdownExporter {
    fn render(&self, report: &Report) -> Result<String> {
        Markdown.render(&crate::report::document::document(report))
    }
}
