//! The verdict of finished runs, for the terminal (`readlab run` with several configurations).
//! Apart from `verdict/mod.rs`, whose types the renderers use, so that the verdict and its
//! renderers do not name each other.

use super::{Verdict, answer, of_report, render, report_of};
use crate::result::Document;

/// The verdict of finished runs, for the terminal: empty when fewer than two configurations
/// of real reads were measured (one run answers nothing a table does not).
pub fn text_for(docs: &[Document]) -> String {
    text_for_within(docs, usize::MAX)
}

/// [`text_for`] with its tables fitted to `width` columns.
pub fn text_for_within(docs: &[Document], width: usize) -> String {
    let r = report_of(docs);
    let v = of_report(&r);
    if compared(&v) {
        render::text_within(&v, &r.points, width)
    } else {
        String::new()
    }
}

/// The answer of finished runs, for the top of the terminal: one line per target, block size
/// and access (see [`answer`]); empty when fewer than two configurations of real reads were
/// measured.
pub fn answer_text_for(docs: &[Document]) -> String {
    let r = report_of(docs);
    let v = of_report(&r);
    if compared(&v) {
        answer::text(&answer::answers(&v, &r.points))
    } else {
        String::new()
    }
}

/// Whether some block size and access of some target had two configurations or more.
fn compared(v: &Verdict) -> bool {
    v.targets
        .iter()
        .flat_map(|t| &t.groups)
        .any(|g| g.configurations > 1)
}
