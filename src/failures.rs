//! Failures across many runs (a study's points, the tuner's measurements): how many runs failed,
//! the I/O errors and verification mismatches they saw in total, and the first of each with its
//! offset, so a command that measures many points reports failures the way `run` reports one's.

use crate::data::Mismatch;
use crate::error::Error;
use crate::result::{Document, IoErrorRecord};
use serde::{Deserialize, Serialize};

/// What failed, over every run added.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Failures {
    /// Runs added.
    pub runs: usize,
    /// Runs that saw an I/O error or a mismatch, or could not read at all.
    pub failed_runs: usize,
    pub errors: u64,
    pub mismatches: u64,
    /// The first failed run's first error, and the run it was in.
    pub first_error: Option<(String, IoErrorRecord)>,
    /// The first failed run's first mismatch, and the run it was in.
    pub first_mismatch: Option<(String, Mismatch)>,
}

/// How a run is named in a failure line: engine, label and block size.
fn name(d: &Document) -> String {
    format!(
        "{} {} {}",
        d.config.engine.name(),
        d.result.label,
        crate::units::format_bytes(d.config.bs as f64, crate::units::Style::Table)
    )
}

impl Failures {
    /// Count one finished run.
    pub fn add(&mut self, d: &Document) {
        self.runs += 1;
        let r = &d.result;
        if !r.failed() {
            return;
        }
        self.failed_runs += 1;
        self.errors += r.errors.count;
        if self.first_error.is_none()
            && let Some(e) = r.errors.first.first()
        {
            self.first_error = Some((name(d), e.clone()));
        }
        if let Some(v) = &r.verify {
            self.mismatches += v.mismatches;
            if self.first_mismatch.is_none()
                && let Some(m) = v.first.first()
            {
                self.first_mismatch = Some((name(d), m.clone()));
            }
        }
    }

    /// Count a run that stopped because every read failed ([`Error::ReadsFailed`]; `what` names
    /// the run); any other error is not a failure of the target and is not counted.
    pub fn add_error(&mut self, what: &str, e: &Error) {
        if let Error::ReadsFailed {
            count,
            offset,
            len,
            errno,
            message,
            ..
        } = e
        {
            let first = IoErrorRecord {
                offset: *offset,
                len: *len,
                errno: *errno,
                message: message.clone(),
            };
            self.add_unreadable(what, *count, first);
        }
    }

    /// Count a run that ended because every read failed (`what` names it).
    pub fn add_unreadable(&mut self, what: &str, count: u64, first: IoErrorRecord) {
        self.runs += 1;
        self.failed_runs += 1;
        self.errors += count;
        if self.first_error.is_none() {
            self.first_error = Some((what.to_string(), first));
        }
    }

    /// True when some run failed.
    pub fn any(&self) -> bool {
        self.failed_runs > 0
    }

    /// One line each: the totals, then the first mismatch and the first error with their offsets
    /// and the runs they were in. Empty when nothing failed.
    pub fn lines(&self) -> Vec<String> {
        if !self.any() {
            return Vec::new();
        }
        let mut lines = vec![format!(
            "{} of {} run(s) failed: {} I/O error(s), {} verification mismatch(es)",
            self.failed_runs, self.runs, self.errors, self.mismatches
        )];
        if let Some((run, m)) = &self.first_mismatch {
            lines.push(format!(
                "first mismatch at offset {} (sector {}), in {run}",
                m.offset, m.sector
            ));
        }
        if let Some((run, e)) = &self.first_error {
            lines.push(format!(
                "first error at offset {}: {}, in {run}",
                e.offset, e.message
            ));
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> Vec<Document> {
        include_str!("../tests/fixtures/results-small.jsonl")
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[test]
    fn totals_and_first_offsets_over_runs() {
        let mut docs = fixture();
        let mut f = Failures::default();
        f.add(&docs[0]);
        assert!(!f.any() && f.lines().is_empty());
        docs[1].result.errors.count = 3;
        docs[1].result.errors.first.push(IoErrorRecord {
            offset: 8192,
            len: 4096,
            errno: 5,
            message: "Input/output error (os error 5)".into(),
        });
        docs[2].result.verify = Some(crate::result::VerifySummary {
            checked_ios: 10,
            mismatches: 2,
            first: vec![Mismatch {
                offset: 5244114,
                sector: 5242880,
                expected: 1,
                found: 2,
            }],
        });
        f.add(&docs[1]);
        f.add(&docs[2]);
        let every_read_failed = Error::ReadsFailed {
            count: 256,
            offset: 0,
            len: 4096,
            errno: 5,
            message: "Input/output error".into(),
            hint: String::new(),
        };
        f.add_error("uring U1B1 4K", &every_read_failed);
        // Errors that are no failure of the target (bad input, say) are not counted.
        f.add_error("x", &Error::InvalidArgument("no".into()));
        let lines = f.lines();
        assert_eq!(
            lines[0],
            "3 of 4 run(s) failed: 259 I/O error(s), 2 verification mismatch(es)"
        );
        assert!(
            lines[1].starts_with("first mismatch at offset 5244114 (sector 5242880), in "),
            "{lines:?}"
        );
        assert!(
            lines[2].starts_with("first error at offset 8192: Input/output error"),
            "{lines:?}"
        );
    }
}
