//! The outputs of finished runs, one per format behind one trait (as hyperfine's `src/export/`):
//! JSON, JSON lines, fio's JSON and the table of runs; and the terminal's views of a run (its block, its
//! targets, its monitor). Files are written by `crate::fsio`. The report's formats are the
//! document's (`crate::document::format`), composed by `crate::report`.

mod exporter;
mod fio;
mod json;
mod monitor;
mod table;
mod targets;

pub use exporter::Exporter;
pub use fio::FioJsonExporter;
pub use json::{JsonExporter, JsonLinesExporter};
pub use monitor::{SecondCheck, monitor_summary, per_second, target_devices};
pub use table::{TableExporter, run_report};
pub use targets::targets_report;
