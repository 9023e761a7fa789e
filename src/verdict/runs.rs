//! The verdict of finished runs, for the terminal (`readlab run` with several configurations).
//! Apart from `verdict/mod.rs`, whose types the renderers use, so that the verdict and its
//! renderers do not name each other.

use super::{of_report, render, report_of};
use crate::result::Document;

/// The verdict of finished runs, for the terminal: empty when fewer than two configurations
/// of real reads were measured (one run answers nothing a table does not).
pub fn text_for(docs: &[Document]) -> String {
    let r = report_of(docs);
    let v = of_report(&r);
    let compared = v
        .targets
        .iter()
        .flat_map(|t| &t.groups)
        .any(|g| g.configurations > 1);
    if compared {
        render::text(&v, &r.points)
    } else {
        String::new()
    }
}
