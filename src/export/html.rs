//! HTML export: the report as one self-contained page (inline SVG charts and CSS, no script);
//! the page itself is laid out by `crate::report::html`.

use super::ReportExporter;
use crate::error::Result;
use crate::report::Report;

/// The report as a single HTML file.
pub struct HtmlExporter;

impl ReportExporter for HtmlExporter {
    fn render(&self, report: &Report) -> Result<String> {
        crate::report::html::render(report)
    }
}
