//! The trait of the exporters of finished runs. Apart from `export/mod.rs`, which picks an
//! exporter per format, so that each exporter and the module choosing among them do not name
//! each other; apart from the report exporters' trait, so that a table of runs needs nothing of
//! the report.

use crate::error::Result;
use crate::result::Document;

/// Turns finished runs into one output format.
pub trait Exporter {
    fn render(&self, docs: &[Document]) -> Result<String>;
}
