//! The `cache` study, after the six-SSD document: 1 MiB random reads through io_uring, direct
//! against buffered, and buffered with the device's readahead off, each point started with the
//! target's pages dropped from the page cache and watched by the monitor, so throughput, device
//! reads, page cache size and io_uring's worker threads lie on one timeline. Readahead is changed
//! only with `--allow-device-changes`; a guard restores it however the study ends (finished,
//! Ctrl-C, error or panic), like the scheduler study's.
//!
//! The decay the document saw needs a target larger than free memory: on a smaller one the
//! cache fills instead and the buffered runs end reading memory — the study says which it was.

use super::plan::*;
use super::{Counts, Exec, Key, Metric::*, StudyObserver, StudySpec, Summary, Table, run_points};
use crate::config::Rw;
use crate::engine::EngineKind;
use crate::error::{Error, Result};
use crate::monitor::{MonitorOptions, Sample};
use crate::result::{Document, StudyTag};
use crate::runner::{Observer, Tick};
use crate::store::Store;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub static SPEC: StudySpec = StudySpec {
    name: "cache",
    title: "The page cache: buffered against direct 1 MiB reads, readahead",
    describe: "1 MiB io_uring reads direct vs buffered vs buffered with readahead off, the monitor \
               attached: throughput, page cache and io_uring workers on one timeline",
    in_all: false,
    exec: Exec::Custom(run_cache_study),
    summary: Summary::Pivot(Table {
        rows: Key::Setting,
        cols: Key::One,
        metrics: &[MBs, Iops, P99, Cpu],
        title: "setting → MB/s, IOPS, p99, CPU % (io_uring workers included)",
    }),
};

/// Owns a device's `read_ahead_kb` while the study runs; restores it on drop.
pub struct ReadaheadGuard {
    path: PathBuf,
    original: u64,
}

impl ReadaheadGuard {
    pub fn new(path: &Path) -> Result<ReadaheadGuard> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, "cannot read", e))?;
        let original = text.trim().parse().map_err(|_| {
            Error::invalid(format!(
                "{}: not a number: '{}'",
                path.display(),
                text.trim()
            ))
        })?;
        let g = ReadaheadGuard {
            path: path.into(),
            original,
        };
        // Fail now, not halfway through, when sysfs cannot be written.
        g.set(original)?;
        Ok(g)
    }

    pub fn original(&self) -> u64 {
        self.original
    }

    pub fn set(&self, kb: u64) -> Result<()> {
        std::fs::write(&self.path, kb.to_string()).map_err(|e| {
            if e.kind() == std::io::ErrorKind::PermissionDenied {
                Error::invalid(format!(
                    "{}: cannot change readahead ({e}); the cache study needs root for it",
                    self.path.display()
                ))
            } else {
                Error::io(&self.path, "cannot write", e)
            }
        })
    }
}

impl Drop for ReadaheadGuard {
    fn drop(&mut self) {
        let _ = std::fs::write(&self.path, self.original.to_string());
    }
}

/// Drop the target's pages from the page cache (clean pages only: nothing is lost), so each
/// buffered point starts cold.
fn drop_cached(path: &Path) {
    if let Ok(f) = std::fs::File::open(path) {
        let _ = rustix::fs::fadvise(&f, 0, None, rustix::fs::Advice::DontNeed);
    }
}

/// The study's observer with the monitor attached (whatever `--monitor` said).
struct Monitored<'a>(&'a dyn StudyObserver);

impl Observer for Monitored<'_> {
    fn tick(&self, t: &Tick) {
        self.0.tick(t)
    }
    fn cancelled(&self) -> bool {
        self.0.cancelled()
    }
    fn monitor(&self) -> Option<MonitorOptions> {
        Some(
            self.0
                .monitor()
                .unwrap_or_else(|| MonitorOptions::new(Vec::new(), None)),
        )
    }
    fn monitor_sample(&self, s: &Sample) {
        self.0.monitor_sample(s)
    }
}

impl StudyObserver for Monitored<'_> {
    fn study_start(&self, name: super::StudyName, total: usize, skipped: usize) {
        self.0.study_start(name, total, skipped)
    }
    fn point_start(&self, index: usize, total: usize, point: &Point) {
        self.0.point_start(index, total, point)
    }
    fn point_done(&self, doc: &Document) {
        self.0.point_done(doc)
    }
    fn point_skipped(&self, point: &Point, why: &crate::error::Error) {
        self.0.point_skipped(point, why)
    }
    fn point_failed(&self, point: &Point, why: &crate::error::Error) {
        self.0.point_failed(point, why)
    }
    fn note(&self, message: &str) {
        self.0.note(message)
    }
}

fn point(ctx: &Context, direct: bool, setting: String) -> Point {
    let mut c = ctx.base(EngineKind::Uring, Rw::Randread, M);
    c.direct = direct;
    c.iodepth = if ctx.quick { 8 } else { 32 };
    c.threads = if ctx.quick { 1 } else { 2 };
    // The whole timeline matters here: no warm-up, no stopping once stable.
    c.ramp = Duration::ZERO;
    c.stop_when_stable = None;
    c.runtime = Duration::from_secs(if ctx.quick { 4 } else { 30 });
    Point {
        tag: StudyTag {
            study: SPEC.study_name(),
            scheduler: None,
            setting: Some(setting),
            net: None,
        },
        cfg: c,
    }
}

fn run_cache_study(ctx: &Context, store: &mut Store, obs: &dyn StudyObserver) -> Result<Counts> {
    let obs = Monitored(obs);
    if ctx.target.size < 4 * M {
        return Err(Error::invalid(format!(
            "{}: the cache study reads 1 MiB blocks; give a target of at least 4 MiB",
            ctx.target.path.display()
        )));
    }
    let free = crate::monitor::machine::read().mem_available_kib * 1024;
    obs.note(&if ctx.target.size > free {
        format!(
            "{}: {} MiB, more than the {} MiB of memory available: buffered reads cannot all stay cached",
            ctx.target.path.display(),
            ctx.target.size >> 20,
            free >> 20
        )
    } else {
        format!(
            "{}: {} MiB fits in the {} MiB of memory available: buffered reads end up cached (the \
             document's decay needs a target larger than memory)",
            ctx.target.path.display(),
            ctx.target.size >> 20,
            free >> 20
        )
    });
    let dev = crate::env::device_of(&ctx.target.path);
    let ra_path = dev.as_ref().map(|d| d.queue_dir().join("read_ahead_kb"));
    let ra_now = ra_path
        .as_deref()
        .and_then(crate::env::sysfs_u64)
        .map_or_else(
            || "no device".to_string(),
            |kb| format!("read_ahead_kb={kb}"),
        );
    let mut counts = Counts::default();
    // Run one point and add what it did to `counts`; true when it was interrupted.
    let one = |p: Point, store: &mut Store, counts: &mut Counts| -> Result<bool> {
        let c = run_points(SPEC.study_name(), &[p], ctx.repeat, store, &obs)?;
        counts.measured += c.measured;
        counts.skipped += c.skipped;
        counts.interrupted |= c.interrupted;
        Ok(c.interrupted)
    };
    if ctx.target.direct_supported {
        if one(point(ctx, true, "direct".into()), store, &mut counts)? {
            return Ok(counts);
        }
    } else {
        obs.note("direct I/O: skipped (the target does not take O_DIRECT)");
    }
    drop_cached(&ctx.target.path);
    let p = point(ctx, false, format!("buffered, {ra_now}"));
    if one(p, store, &mut counts)? {
        return Ok(counts);
    }
    match (&ra_path, ctx.allow_device_changes) {
        (None, _) => obs.note("readahead off: skipped (no block device behind the target)"),
        (Some(_), false) => obs.note(
            "readahead off: skipped; it changes the device's read_ahead_kb (restored at the \
             end): pass --allow-device-changes",
        ),
        (Some(path), true) => {
            let guard = ReadaheadGuard::new(path)?;
            obs.note(&format!(
                "{}: read_ahead_kb {} → 0 for one point (restored at the end)",
                dev.as_ref().map_or("?", |d| d.name.as_str()),
                guard.original()
            ));
            guard.set(0)?;
            drop_cached(&ctx.target.path);
            let p = point(ctx, false, "buffered, read_ahead_kb=0".into());
            let done = one(p, store, &mut counts);
            drop(guard);
            done?;
        }
    }
    Ok(counts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_guard_restores_the_value_it_found() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("read_ahead_kb");
        std::fs::write(&p, "128\n").unwrap();
        {
            let g = ReadaheadGuard::new(&p).unwrap();
            assert_eq!(g.original(), 128);
            g.set(0).unwrap();
            assert_eq!(std::fs::read_to_string(&p).unwrap(), "0");
        }
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "128");
        std::fs::write(&p, "x").unwrap();
        assert!(ReadaheadGuard::new(&p).is_err());
    }
}
