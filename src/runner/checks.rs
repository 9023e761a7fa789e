//! What the runner checks around the I/O: before a run, the configuration against its target
//! ([`prepare_run`]); during it, the rule that stops a worker whose reads all fail; after it, the
//! warnings a result carries. Also how many errors and mismatches are kept in full.

use crate::config::{Range, RunConfig};
use crate::data::{self, Mismatch};
use crate::error::{Error, Result};
use crate::result::{ErrorSummary, IoErrorRecord, VerifySummary};
use crate::target::Target;

/// How many errors and mismatches are kept in full (all are counted).
pub(super) const KEEP_FIRST: usize = 16;
/// A worker whose first this-many reads all failed stops the run instead of spinning on errors.
pub(super) const ABORT_AFTER_FAILURES: u64 = 256;

/// What `prepare_run` found out about a run before any I/O.
pub struct Prepared {
    pub target: Target,
    pub device: crate::env::DeviceInfo,
    pub range: Range,
    /// The probe's warnings for this configuration.
    pub warnings: Vec<String>,
}

/// Check a configuration against its target; nothing is read yet.
pub fn prepare_run(cfg: &RunConfig) -> Result<Prepared> {
    let target = Target::inspect(&cfg.target)?;
    let range = cfg.validate(&target)?;
    let device = crate::env::DeviceInfo::of(&target.path);
    let warnings = crate::probe::check_run(cfg, &device).map_err(Error::InvalidArgument)?;
    if cfg.verify {
        let last = range.offset + range.len - 1;
        let last_sector = last - last % data::SECTOR as u64;
        if !target.prepared_at(last_sector) {
            return Err(Error::invalid(format!(
                "{}: the sector at {last_sector} is not part of the prepared image; \
                 limit the range with --size or drop --verify",
                target.path.display()
            )));
        }
    }
    Ok(Prepared {
        target,
        device,
        range,
        warnings,
    })
}

/// Never spin for the whole runtime on an interface that fails every read (IOPOLL on a device
/// without poll queues): once a worker's first [`ABORT_AFTER_FAILURES`] reads have all failed,
/// the error that stops the run, with the probe's explanation.
pub(super) fn every_read_failed(
    errors: &ErrorSummary,
    succeeded: bool,
    cfg: &RunConfig,
) -> Option<Error> {
    if succeeded || errors.count < ABORT_AFTER_FAILURES {
        return None;
    }
    let first = &errors.first[0];
    Some(Error::Engine(format!(
        "every read failed ({} of {}), first at offset {}: {}{}",
        errors.count,
        errors.count,
        first.offset,
        first.message,
        crate::probe::explain_errno(first.errno, cfg)
            .map(|h| format!(". {h}"))
            .unwrap_or_default()
    )))
}

/// Warnings a finished run adds to the probe's: reads failed and none was measured.
pub(super) fn after_run(errors: &ErrorSummary, ios: u64, warnings: &mut Vec<String>) {
    if errors.count > 0 && ios == 0 {
        let first = &errors.first[0];
        warnings.push(format!(
            "every read failed; first at offset {}: {}",
            first.offset, first.message
        ));
    }
}

/// Count a failed read; keep the first few in full (a short read has errno 0 and its own message).
pub(super) fn record_error(
    e: &mut ErrorSummary,
    offset: u64,
    len: u64,
    errno: i32,
    msg: Option<String>,
) {
    e.count += 1;
    if e.first.len() < KEEP_FIRST {
        let message = msg.unwrap_or_else(|| std::io::Error::from_raw_os_error(errno).to_string());
        e.first.push(IoErrorRecord {
            offset,
            len,
            errno,
            message,
        });
    }
}

/// Count a verification mismatch; keep the first few in full.
pub(super) fn record_mismatch(v: &mut VerifySummary, m: Mismatch) {
    v.mismatches += 1;
    if v.first.len() < KEEP_FIRST {
        v.first.push(m);
    }
}
