//! HTML export: the report's document as one self-contained page (inline SVG charts and CSS, no
//! script), rendered by `crate::document::format::html`.

use super::ReportExporter;
use crate::document::{Renderer, format::html::Html};
use crate::error::Result;
use crate::report::Report;

/// The report as a single HTML file.
pub struct HtmlExporter;

impl ReportExporter for HtmlExporter {
    fn render(&self, report: &Report) -> Result<String> {
        Html.render(&crate::report::document::document(report))
    }
}
