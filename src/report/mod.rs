//! `readlab report`: study results, `readlab run --json` documents and fio JSON turned into one
//! self-contained HTML page with the report's charts, or into the same tables as CSV, Markdown or
//! JSON, and optionally every chart as PNG.
//!
//! [`model`] reads the inputs and works out sections and the Pareto frontier (`crate::pareto`),
//! [`fio`] imports fio's JSON, [`charts`] describes each figure as data, [`draw`] draws it with plotters,
//! [`tables`] lays out the tables and [`document`] composes the report as one document that
//! every format renders (`crate::document`). The output formats themselves
//! are exporters in `crate::export`.

pub mod charts;
pub mod devices;
pub mod document;
pub mod draw;
pub mod fio;
pub mod model;
pub mod page;
pub mod selected;
pub mod tables;

pub use model::{Point, Report, Section, Source, load, load_baseline};

use crate::error::{Error, Result};
use crate::study::StudyName;
use std::path::{Path, PathBuf};

/// The title of the all-experiments section.
pub const ALL_TITLE: &str = "All experiments";

/// The heading of a study's section, with the report section it follows.
pub fn section_title(s: StudyName) -> &'static str {
    s.spec().title
}

/// What `readlab report --format` writes: the document's formats.
pub use crate::document::Format as ReportFormat;

/// Every chart of the page, in its order (the document's).
pub fn page_charts(report: &Report) -> Vec<charts::Chart> {
    document::document(report).charts().cloned().collect()
}

/// Write every chart of the report as `DIR/NN-<chart id>.png`; returns the files written.
pub fn write_pngs(report: &Report, dir: &Path) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, "cannot create", e))?;
    let mut files = Vec::new();
    for (n, c) in page_charts(report).iter().enumerate() {
        let name: String =
            c.id.chars()
                .map(|ch| {
                    if ch.is_ascii_alphanumeric() || ch == '-' {
                        ch
                    } else {
                        '_'
                    }
                })
                .collect();
        let path = dir.join(format!("{:02}-{name}.png", n + 1));
        draw::png(c, &path)?;
        files.push(path);
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(ReportFormat::parse("MD").unwrap(), ReportFormat::Markdown);
        assert_eq!(ReportFormat::parse("csv").unwrap().extension(), "csv");
        let e = ReportFormat::parse("pdf").unwrap_err();
        assert!(e.is_bad_input() && e.to_string().contains("html, csv, md, json or text"));
    }
}
