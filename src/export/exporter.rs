//! The trait of the exporters of finished runs. Apart from `export/mod.rs`, which re-exports
//! them, so that each exporter and the module gathering them do not name each other.

use crate::error::Result;
use crate::result::Document;

/// Turns finished runs into one output format.
pub trait Exporter {
    fn render(&self, docs: &[Document]) -> Result<String>;
}
