//! CSV export of the report's document (`crate::document::format::csv`): its tables for machines — every
//! point once, the report tables it appears in first; every percentile in nanoseconds, block sizes
//! in bytes (RFC 4180 quoting).

use super::ReportExporter;
use crate::document::{Renderer, format::csv::Csv};
use crate::error::Result;
use crate::report::Report;

/// The report's tables as one CSV file.
pub struct CsvExporter;

impl ReportExporter for CsvExporter {
    fn render(&self, report: &Report) -> Result<String> {
        Csv.render(&crate::report::document::document(report))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_has_every_percentile() {
        let csv = CsvExporter.render(&Report::default()).unwrap();
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
