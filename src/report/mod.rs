//! `readlab report`: study results, `readlab run --json` documents and fio JSON turned into one
//! self-contained HTML page with the report's charts, or into the same tables as CSV, Markdown or
//! JSON, and optionally every chart as PNG.
//!
//! The composition layer: it reads the points (`crate::points`: the inputs loaded, sections, the
//! Pareto frontier, fio's JSON imported), the verdict (`crate::verdict`) and the comparison with a
//! baseline (`crate::compare`), and composes them into one document of the document layer
//! (`crate::document`: its chart types, drawing, page and formats). [`charts`] makes each figure,
//! [`tables`] the tables, [`selected`] and [`devices`] their sections, [`document`] the whole
//! report, which every format renders; [`json`] is the report's own JSON. Nothing below this
//! module names it.
//!
//! The layers, each naming only those before it: the leaves (`error`, `table`, `terminal`,
//! `units`, `size`, `warnings`, …); the document layer (`document`); the run's data (`result`,
//! `stats`, …) and the points read back (`points`); what reads the points (`compare`, `verdict`);
//! the composition (`report`); the commands (the binary).

pub mod charts;
pub mod devices;
pub mod document;
pub mod json;
pub mod selected;
pub mod tables;

use crate::error::{Error, Result};
use std::path::PathBuf;

pub use crate::points::{Point, Report, Section, Source, load, require_points};

pub use tables::{ALL_TITLE, section_title};

/// What `readlab report --format` writes: the document's formats.
pub use crate::document::Format as ReportFormat;

pub use document::{page_charts, png_names, write_pngs};

/// The report in `format`: its JSON is [`json::ReportJson`] (the document and, for machines, the
/// verdict, the selection, the tables and every point); every other format renders the document,
/// text as a 100-column terminal without colour reads it (what a file or a pipe gets).
pub fn render(report: &Report, format: ReportFormat) -> Result<String> {
    match format {
        ReportFormat::Json => json::render(report),
        f => f
            .renderer(crate::terminal::Terminal::default())
            .render(&document::document(report)),
    }
}

/// Read `inputs` as the baseline of `report` (`readlab report --baseline OLD NEW`): their points
/// are compared with the report's, not drawn among them.
pub fn load_baseline(report: &mut Report, inputs: &[PathBuf]) -> Result<()> {
    let old = load(inputs, &[])?;
    report
        .notes
        .extend(old.notes.into_iter().map(|n| format!("baseline: {n}")));
    report
        .banners
        .extend(old.banners.into_iter().map(|b| crate::warnings::Banner {
            text: format!("baseline: {}", b.text),
            ..b
        }));
    if crate::compare::compare(&old.points, &report.points)
        .rows
        .is_empty()
    {
        let names = |v: &[String]| v.join(", ");
        return Err(Error::invalid(format!(
            "nothing to compare with the baseline: {} and the baseline {} have no configuration (engine, block size, access, direct I/O) in common; give a baseline measured the same way, or leave out --baseline",
            names(&report.inputs),
            names(&old.inputs)
        )));
    }
    report.baseline = old.points;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(ReportFormat::parse("MD").unwrap(), ReportFormat::Markdown);
        assert_eq!(ReportFormat::parse("csv").unwrap().extension(), "csv");
        let e = ReportFormat::parse("pdf").unwrap_err();
        assert!(e.is_bad_input() && e.to_string().contains("use html, csv, md, json"));
    }

    #[test]
    fn the_csv_header_has_every_percentile() {
        let csv = render(&Report::default(), ReportFormat::Csv).unwrap();
        for k in [
            "lat_min_ns",
            "lat_mean_ns",
            "lat_p50_ns",
            "lat_p90_ns",
            "lat_p99_ns",
            "lat_p99_9_ns",
            "lat_p99_99_ns",
            "lat_max_ns",
        ] {
            assert!(
                csv.lines().next().unwrap().split(',').any(|c| c == k),
                "{k}"
            );
        }
        assert_eq!(csv.lines().count(), 1);
    }
}
