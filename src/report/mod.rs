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
pub mod selected;
pub mod tables;

pub use crate::points::{Point, Report, Section, Source, load, load_baseline, require_points};

pub use tables::{ALL_TITLE, section_title};

/// What `readlab report --format` writes: the document's formats.
pub use crate::document::Format as ReportFormat;

pub use document::{page_charts, write_pngs};

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
