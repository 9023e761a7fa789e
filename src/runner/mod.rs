//! The runner: one honest run of one workload, like fio's `td_io_queue`. It owns every timestamp,
//! histogram and counter; engines only move data. It never prints: progress goes to an [`Observer`].
//!
//! - `checks`: what is checked before a run ([`prepare_run`]) and during and after it (the
//!   every-read-failed rule, warnings, the first errors kept in full).
//! - `worker`: one worker thread's loop: queue, submit, reap, time and verify every completion.
//! - `schedule`: the open-loop schedule of `--rate`: when requests fall due, how late they went out.
//! - `watch`: the runner's own thread while the workers run: ticks, CPU snapshots and the stop
//!   conditions that decide [`EndedBy`].
//! - `aggregate`: the workers' outputs merged into one [`RunResult`](crate::result::RunResult).
//!
//! Engines come from an [`EngineFactory`]: [`run`] opens the real ones, tests hand [`run_with`] a
//! scripted fake.

mod aggregate;
mod checks;
mod depth;
mod requests;
mod schedule;
mod watch;
mod worker;

#[cfg(test)]
mod tests;

pub use checks::{Prepared, check_prepared_throughout, prepare_run};

use crate::clock;
use crate::config::{Range, RunConfig};
use crate::engine::{self, Engine, EngineSetup};
use crate::env::Environment;
use crate::error::{Error, Result};
use crate::result::{Document, EndedBy, SCHEMA};
use crate::source::{Handle, Source, WorkerOpen};
use crate::stats::Recorder;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Barrier, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Phases of a run, for progress display.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Ramp,
    Measure,
    Drain,
}

/// A progress sample, taken by the runner's own thread a few times per second.
#[derive(Debug, Clone)]
pub struct Tick {
    pub phase: Phase,
    /// Time since the workers started (ramp included).
    pub elapsed: Duration,
    /// Ramp + runtime.
    pub planned: Duration,
    /// I/Os completed since the workers started.
    pub ios: u64,
    /// IOPS over the last sample period.
    pub recent_iops: f64,
}

/// Receives progress from the runner. Implementations must be quick; they run on the runner's thread.
pub trait Observer: Sync {
    fn tick(&self, _tick: &Tick) {}
    /// Checked between samples: returning true stops the run early (e.g. on Ctrl-C).
    fn cancelled(&self) -> bool {
        false
    }
}

/// An observer that ignores everything.
pub struct Silent;
impl Observer for Silent {}

/// Creates the engine of one worker thread, given the worker's index and its set-up (opened
/// target, buffers, options). Called on that worker's thread, before the start barrier, so set-up
/// cost is never measured.
pub type EngineFactory<'a> = dyn Fn(usize, EngineSetup) -> Result<Box<dyn Engine>> + Sync + 'a;

/// Run one workload with the engine `cfg.engine` names and return its document. Bad input fails
/// before any I/O.
pub fn run(cfg: &RunConfig, observer: &dyn Observer) -> Result<Document> {
    run_with(cfg, observer, &|_, setup| engine::open(cfg.engine, setup))
}

/// Run one workload with the engines `open` creates (one per worker thread). Checks, timing,
/// counting and verification are the same as for [`run`].
pub fn run_with(
    cfg: &RunConfig,
    observer: &dyn Observer,
    open: &EngineFactory,
) -> Result<Document> {
    let Prepared {
        source,
        device,
        range,
        warnings,
    } = prepare_run(cfg)?;
    let handles = open_handles(cfg, source.as_ref(), &range)?;
    let environment = Environment::capture(source.as_ref(), device);
    let timer_ns = clock::timer_cost_ns();

    let shared = Shared {
        cfg,
        range,
        file_id: if cfg.verify {
            source.prepared_id()
        } else {
            None
        },
        start: Barrier::new(cfg.threads + 1),
        finish: Barrier::new(cfg.threads + 1),
        exited: AtomicUsize::new(0),
        t0: OnceLock::new(),
        stop: AtomicBool::new(false),
        done: (0..cfg.threads).map(|_| Counter::default()).collect(),
        intervals: Mutex::new(BTreeMap::new()),
    };

    let (outs, ended) = std::thread::scope(|s| {
        let handles: Vec<_> = handles
            .into_iter()
            .enumerate()
            .map(|(i, f)| {
                let sh = &shared;
                std::thread::Builder::new()
                    .name(format!("readlab-w{i}"))
                    .spawn_scoped(s, move || worker::worker(sh, i, f, open))
                    .expect("spawn worker thread")
            })
            .collect();
        let watched = watch::watch(&shared, observer);
        let outs: Vec<Result<worker::WorkerOut>> = handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(Error::Engine("a worker thread panicked".into())))
            })
            .collect();
        (outs, watched.finish(cfg))
    });

    let intervals = shared.intervals.into_inner().unwrap();
    let mut result = aggregate::result(cfg, outs, &intervals, ended, timer_ns, warnings)?;
    checks::trust(cfg, &shared.range, &mut result);
    Ok(Document {
        schema: SCHEMA.into(),
        study: None,
        config: cfg.clone(),
        environment,
        result,
    })
}

/// One handle per worker thread, each with the configured `posix_fadvise` hint.
fn open_handles(cfg: &RunConfig, source: &dyn Source, range: &Range) -> Result<Vec<Handle>> {
    let how = WorkerOpen {
        direct: cfg.direct && cfg.engine.capabilities().does_io,
        advice: cfg.fadvise.map(|a| match a {
            crate::config::Fadvise::Sequential => rustix::fs::Advice::Sequential,
            crate::config::Fadvise::Random => rustix::fs::Advice::Random,
        }),
        offset: range.offset,
        len: range.len,
    };
    (0..cfg.threads).map(|_| source.open_worker(&how)).collect()
}

/// A per-worker completion counter on its own cache line.
#[repr(align(64))]
#[derive(Default)]
struct Counter(AtomicU64);

/// Shared state of one run.
struct Shared<'a> {
    cfg: &'a RunConfig,
    range: Range,
    file_id: Option<u64>,
    start: Barrier,
    /// Workers wait here after their last I/O until the runner has taken its final CPU snapshot,
    /// so no worker thread (and its CPU time) disappears from /proc before it is counted.
    finish: Barrier,
    exited: AtomicUsize,
    t0: OnceLock<Instant>,
    stop: AtomicBool,
    done: Vec<Counter>,
    /// Latencies of the measured window, per second since the window began.
    intervals: Mutex<BTreeMap<u64, Recorder>>,
}

impl Shared<'_> {
    /// I/Os completed by every worker so far (ramp included).
    fn total_done(&self) -> u64 {
        self.done.iter().map(|c| c.0.load(Ordering::Relaxed)).sum()
    }

    fn flush_interval(&self, second: u64, rec: &mut Recorder) {
        if rec.count == 0 {
            return;
        }
        self.intervals
            .lock()
            .unwrap()
            .entry(second)
            .or_default()
            .merge(rec);
        rec.reset();
    }
}

/// How the measured window ended, for the aggregation.
struct Ended {
    cpu: crate::cpu::CpuUsage,
    /// Measured seconds (ramp excluded).
    window: f64,
    ended_by: EndedBy,
}
