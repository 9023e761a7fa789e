//! Result exporters, one per format behind one trait (as hyperfine's `src/export/`); report
//! exporters (HTML, CSV, Markdown, JSON) behind a second trait over a whole report; and the
//! crash-safe writer that re-writes a results file after every measured point.

mod csv;
mod html;
mod json;
mod markdown;
mod table;

pub use csv::CsvExporter;
pub use html::HtmlExporter;
pub use json::{JsonExporter, JsonLinesExporter, ReportJsonExporter};
pub use markdown::MarkdownExporter;
pub use table::{TableExporter, run_report};

use crate::error::{Error, Result};
use crate::report::{Report, ReportFormat};
use crate::result::Document;
use std::io::Write;
use std::path::Path;

/// Turns finished runs into one output format.
pub trait Exporter {
    fn render(&self, docs: &[Document]) -> Result<String>;
}

/// Turns a whole report (readlab and fio points, sections, frontier) into one output format.
pub trait ReportExporter {
    fn render(&self, report: &Report) -> Result<String>;
}

/// The exporter of a report format.
pub fn report_exporter(format: ReportFormat) -> Box<dyn ReportExporter> {
    match format {
        ReportFormat::Html => Box::new(HtmlExporter),
        ReportFormat::Csv => Box::new(CsvExporter),
        ReportFormat::Markdown => Box::new(MarkdownExporter),
        ReportFormat::Json => Box::new(ReportJsonExporter),
    }
}

/// Write `content` to `path` through a temporary file, fsync, and rename, so a crash leaves either
/// the previous complete file or the new one.
pub fn write_file(path: &Path, content: &str) -> Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .ok_or_else(|| Error::invalid(format!("{}: not a file name", path.display())))?;
    let tmp = dir.join(format!(".{}.tmp", name.to_string_lossy()));
    let mut f = std::fs::File::create(&tmp).map_err(|e| Error::io(&tmp, "cannot create", e))?;
    f.write_all(content.as_bytes())
        .and_then(|_| f.sync_all())
        .map_err(|e| Error::io(&tmp, "cannot write", e))?;
    std::fs::rename(&tmp, path).map_err(|e| Error::io(path, "cannot rename into place", e))
}
