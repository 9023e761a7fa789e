//! The `cache` study, after the six-SSD document: 1 MiB random reads through io_uring, direct
//! against buffered, and buffered with the device's readahead off, each point started with the
//! target's pages dropped from the page cache and watched by the monitor, so throughput, device
//! reads, page cache size and io_uring's worker threads lie on one timeline. Readahead is changed
//! only with `--allow-device-changes`; a guard restores it however the study ends (finished,
//! Ctrl-C, error or panic), like the scheduler study's.
//!
//! The decay the document saw needs a target larger than free memory: on a smaller one the
//! cache fills instead and the buffered runs end reading memory — the study says which it was.
//!
//! Then the whole target is read once from start to end in 1 MiB blocks (direct, then buffered
//! with the device's readahead), its throughput kept per stretch of the target, so throughput
//! against offset lies beside the page cache's size and the reclaim the monitor saw while that
//! stretch was read ([`by_offset`], the one computation the summary and the report show). No
//! whole-target pass with readahead off: the kernel then reads a buffered file one page at a time
//! (4 KiB device reads, ~10 MB/s under QEMU's emulation), far too slow for the whole target; the
//! random points show readahead's difference.

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
               attached: throughput, page cache and io_uring workers on one timeline; then the \
               whole target read once: throughput by offset beside the page cache and reclaim",
    in_all: false,
    exec: Exec::Custom(run_cache_study),
    summary: Summary::Custom(summary),
};

const TABLE: Table = Table {
    rows: Key::Setting,
    cols: Key::One,
    metrics: &[MBs, Iops, P99, Cpu],
    title: "setting → MB/s, IOPS, p99, CPU % (io_uring workers included)",
};

/// A whole-target pass's setting starts with this.
pub const WHOLE: &str = "whole target, ";

/// A whole-target pass is kept in this many stretches (of whole MiB) for throughput by offset.
const STRETCHES: u64 = 64;

/// One stretch of a whole-target pass: its throughput and what the monitor saw of memory while
/// it was read.
#[derive(Debug, Clone, PartialEq)]
pub struct OffsetCache {
    /// First byte of the stretch.
    pub offset: u64,
    /// Seconds since the pass began when the stretch's last read completed.
    pub t_s: f64,
    pub mb_s: f64,
    /// Page cache at the end of the monitor's sample holding that moment, bytes: `Cached` and
    /// `Buffers` (a block device's cached pages count as buffers).
    pub page_cache: Option<u64>,
    /// Memory available then, bytes.
    pub available: Option<u64>,
    /// Pages reclaimed and scanned per second in that sample.
    pub reclaim_pages_s: Option<f64>,
    pub scan_pages_s: Option<f64>,
    /// Pages reclaimed since the pass began, to the end of that sample.
    pub reclaimed_pages: Option<f64>,
}

/// Throughput against offset beside the page cache and reclaim: each stretch with the monitor
/// sample whose interval holds its last read (the summary, the report and the tests all use this).
pub fn by_offset(
    offsets: &[crate::stats::OffsetSample],
    monitor: Option<&crate::monitor::MonitorRecord>,
) -> Vec<OffsetCache> {
    offsets
        .iter()
        .map(|o| {
            let s = monitor.and_then(|m| m.sample_at(o.t_s));
            OffsetCache {
                offset: o.offset,
                t_s: o.t_s,
                mb_s: o.mb_s,
                page_cache: s.map(|s| s.machine.file_cache_bytes()),
                available: s.map(|s| s.machine.available_kib * 1024),
                reclaim_pages_s: s.map(|s| s.machine.reclaim_pages_s),
                scan_pages_s: s.map(|s| s.machine.scan_pages_s),
                reclaimed_pages: monitor.map(|m| m.reclaimed_pages_until(o.t_s)),
            }
        })
        .collect()
}

/// The settings' table, then each whole-target pass by offset with the page cache and reclaim.
fn summary(docs: &[&Document]) -> String {
    use std::fmt::Write;
    let mut s = format!("{}\n\n{}", TABLE.title, super::summary::pivot(&TABLE, docs));
    let mib = |b: u64| format!("{} MiB", b >> 20);
    let opt = |x: Option<String>| x.unwrap_or_else(|| "–".into());
    for d in docs {
        let Some(setting) = d.study.as_ref().and_then(|t| t.setting.as_deref()) else {
            continue;
        };
        if !setting.starts_with(WHOLE) || d.result.offset_samples.is_empty() {
            continue;
        }
        let _ = writeln!(
            s,
            "\n**{setting}**: {:.1} MB/s over {} in {:.1} s ({})\n\n\
             | offset | MB/s | page cache | available | reclaimed/s | scanned/s | reclaimed since start |\n\
             |---:|---:|---:|---:|---:|---:|---:|",
            d.result.mb_s,
            mib(d.result.bytes),
            d.result.seconds,
            d.result.ended_by
        );
        for r in by_offset(&d.result.offset_samples, d.monitor.as_ref()) {
            let _ = writeln!(
                s,
                "| {} | {:.1} | {} | {} | {} | {} | {} |",
                mib(r.offset),
                r.mb_s,
                opt(r.page_cache.map(mib)),
                opt(r.available.map(mib)),
                opt(r
                    .reclaim_pages_s
                    .map(|p| format!("{} MiB", (p * 4096.0) as u64 >> 20))),
                opt(r
                    .scan_pages_s
                    .map(|p| format!("{} MiB", (p * 4096.0) as u64 >> 20))),
                opt(r
                    .reclaimed_pages
                    .map(|p| format!("{} MiB", (p * 4096.0) as u64 >> 20))),
            );
        }
    }
    s.push('\n');
    s
}

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
    fn points_planned(&self, planned: &[std::time::Duration]) {
        self.0.points_planned(planned)
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

/// One read of the whole target from start to end, 1 MiB blocks, one thread, throughput kept per
/// stretch of it.
fn whole_target(ctx: &Context, direct: bool, setting: &str) -> Point {
    let mut c = ctx.base(EngineKind::Psync, Rw::Read, M);
    c.direct = direct;
    c.threads = 1;
    c.iodepth = 1;
    c.ramp = Duration::ZERO;
    c.stop_when_stable = None;
    c.io_limit = Some(ctx.target.size / M * M);
    c.sample_bytes = Some((ctx.target.size / STRETCHES / M).max(1) * M);
    // A pass stops at its time limit (a large device is drawn as far as it got): 2 min quick, 10 min
    // otherwise.
    c.runtime = Duration::from_secs(if ctx.quick { 120 } else { 600 });
    Point {
        tag: StudyTag {
            study: SPEC.study_name(),
            scheduler: None,
            setting: Some(format!("{WHOLE}{setting}")),
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
            if done? {
                return Ok(counts);
            }
        }
    }
    // The whole target once from start to end: throughput by offset beside the page cache.
    if ctx.target.direct_supported && one(whole_target(ctx, true, "direct"), store, &mut counts)? {
        return Ok(counts);
    }
    drop_cached(&ctx.target.path);
    let p = whole_target(ctx, false, &format!("buffered, {ra_now}"));
    if one(p, store, &mut counts)? {
        return Ok(counts);
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

    #[test]
    fn each_stretch_gets_the_sample_holding_its_last_read() {
        use crate::monitor::{MachineSample, MonitorOptions, MonitorRecord, Sample};
        let sample = |t_s: f64, cached_kib: u64, reclaim: f64| Sample {
            t_s,
            interval_s: 1.0,
            devices: Vec::new(),
            machine: MachineSample {
                page_cache_kib: cached_kib,
                buffers_kib: 1024,
                reclaim_pages_s: reclaim,
                scan_pages_s: 2.0 * reclaim,
                ..Default::default()
            },
            threads: Default::default(),
            process_ended: false,
            sampler_cpu_pct: 0.0,
        };
        let rec = MonitorRecord {
            options: MonitorOptions::new(Vec::new(), None),
            samples: vec![
                sample(0.0, 1, 99.0),
                sample(1.0, 1024, 0.0),
                sample(2.0, 2048, 256.0),
            ],
            sampler_cpu_pct: 0.0,
            notes: Vec::new(),
        };
        let off = |offset: u64, t_s: f64| crate::stats::OffsetSample {
            offset,
            bytes: M,
            t_s,
            mb_s: 1.0,
        };
        let rows = by_offset(&[off(0, 0.5), off(M, 1.5), off(2 * M, 9.0)], Some(&rec));
        let cache: Vec<_> = rows.iter().map(|r| r.page_cache.unwrap() >> 20).collect();
        // Cached + Buffers; the sample before the window (t_s 0) is never used.
        assert_eq!(cache, [2, 3, 3]);
        assert_eq!(rows[1].reclaim_pages_s, Some(256.0));
        assert_eq!(rows[1].scan_pages_s, Some(512.0));
        let reclaimed: Vec<_> = rows.iter().map(|r| r.reclaimed_pages.unwrap()).collect();
        assert_eq!(reclaimed, [0.0, 256.0, 256.0]);
        assert!(by_offset(&[off(0, 0.5)], None)[0].page_cache.is_none());
    }
}
