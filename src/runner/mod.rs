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
//! - `targets`: several targets in one run ([`run_targets`]): one group of workers per target
//!   behind the same start barrier, results per target and their aggregate.
//!
//! Engines come from an [`EngineFactory`]: [`run`] opens the real ones, tests hand [`run_with`] a
//! scripted fake. An observer that asks for the monitor ([`Observer::monitor`]) gets its samples
//! live and in the document.

mod aggregate;
mod checks;
mod depth;
mod requests;
mod schedule;
mod targets;
mod watch;
mod worker;

#[cfg(test)]
mod gate_tests;
#[cfg(test)]
mod tests;

pub(crate) use checks::{OTHER_LOAD, other_load};
pub use checks::{Prepared, check_prepared_throughout, prepare_run};
pub use targets::{run_targets, run_targets_with};

use crate::clock;
use crate::config::{Range, RunConfig};
use crate::engine::{self, Engine, EngineSetup};
use crate::env::Environment;
use crate::error::{Error, Result};
use crate::monitor::{Monitor, MonitorOptions, MonitorRecord, Sample};
use crate::result::{Document, EndedBy, SCHEMA};
use crate::source::{Handle, Source, WorkerOpen};
use crate::stats::{self, Recorder};
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
    /// Attach the live monitor to the run (`--monitor`): these options, to which the run adds
    /// its targets' devices and its own process. Its samples go to
    /// [`monitor_sample`](Observer::monitor_sample) as they are taken and into the document.
    fn monitor(&self) -> Option<MonitorOptions> {
        None
    }
    /// One monitor sample, from the monitor's own thread.
    fn monitor_sample(&self, _sample: &Sample) {}
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

/// Where the processes of one run meet before measuring. Once every worker of this process has
/// set up its engine, the runner hands the gate the set-up outcome and starts the run (ramp
/// included) at the instant the gate returns. A fleet of processes (MPI ranks, `crate::fleet`)
/// meets here so all start together; a lone process has no gate and starts at once.
pub trait StartGate {
    /// `setup` is this process's outcome (the first failed worker's message). Returns the
    /// instant the run starts, or the error that stops every member; either way the workers are
    /// released (after an error they stop at once).
    fn start(&self, setup: std::result::Result<(), String>) -> Result<Instant>;
}

/// [`run`], starting when `gate` says: the set-up (target checks, engines) happens first, then
/// the gate is passed, then the measured run. An error before the gate is returned without
/// calling it; the caller tells the other members.
pub fn run_gated(
    cfg: &RunConfig,
    observer: &dyn Observer,
    gate: &dyn StartGate,
) -> Result<Document> {
    run_inner(
        cfg,
        observer,
        &|_, setup| engine::open(cfg.engine, setup),
        Some(gate),
    )
}

/// Run one workload with the engines `open` creates (one per worker thread). Checks, timing,
/// counting and verification are the same as for [`run`].
pub fn run_with(
    cfg: &RunConfig,
    observer: &dyn Observer,
    open: &EngineFactory,
) -> Result<Document> {
    run_inner(cfg, observer, open, None)
}

fn run_inner(
    cfg: &RunConfig,
    observer: &dyn Observer,
    open: &EngineFactory,
    gate: Option<&dyn StartGate>,
) -> Result<Document> {
    let prepared = ReadyTarget::prepare(cfg)?;
    let environment = Environment::capture(prepared.source.as_ref(), prepared.device.clone());
    let monitor = start_monitor(observer, std::slice::from_ref(cfg))?;
    let timer_ns = clock::timer_cost_ns();
    let mut done = execute(vec![prepared], observer, open, monitor.as_ref(), gate)?;
    let (outs, intervals, ready) = done.groups.pop().expect("one group");
    let mut result =
        aggregate::result(cfg, outs, &intervals, done.ended, timer_ns, ready.warnings)?;
    checks::trust(cfg, &ready.range, &mut result);
    Ok(Document {
        schema: SCHEMA.into(),
        study: None,
        config: cfg.clone(),
        environment,
        result,
        targets: Vec::new(),
        monitor: done.monitor,
        fleet: None,
    })
}

/// One target checked and opened, ready for its workers.
struct ReadyTarget<'a> {
    cfg: &'a RunConfig,
    source: Box<dyn Source>,
    device: crate::env::DeviceInfo,
    range: Range,
    warnings: Vec<String>,
    handles: Vec<Handle>,
}

impl<'a> ReadyTarget<'a> {
    fn prepare(cfg: &'a RunConfig) -> Result<ReadyTarget<'a>> {
        let Prepared {
            source,
            device,
            range,
            warnings,
        } = prepare_run(cfg)?;
        let handles = open_handles(cfg, source.as_ref(), &range)?;
        Ok(ReadyTarget {
            cfg,
            source,
            device,
            range,
            warnings,
            handles,
        })
    }
}

/// The monitor the observer asked for, watching the targets' devices and this process.
fn start_monitor(observer: &dyn Observer, cfgs: &[RunConfig]) -> Result<Option<Monitor>> {
    let Some(mut opts) = observer.monitor() else {
        return Ok(None);
    };
    let mut notes = Vec::new();
    for c in cfgs {
        match crate::monitor::devices::of_target(&c.target) {
            Some(d) => opts.devices.push(d),
            None => notes.push(format!(
                "{}: no block device behind it; the monitor shows the machine and the threads",
                c.target.display()
            )),
        }
    }
    opts.pid = Some(std::process::id());
    Monitor::new(opts, notes).map(Some)
}

/// What one group of workers (one target) handed back.
type GroupOut<'a> = (
    Vec<Result<worker::WorkerOut>>,
    BTreeMap<u64, stats::Recorder>,
    ReadyTarget<'a>,
);

/// What [`execute`] hands back: per target, its workers' outputs, intervals and set-up; the
/// window's CPU and ending; the monitor's record.
struct Executed<'a> {
    groups: Vec<GroupOut<'a>>,
    ended: Ended,
    monitor: Option<MonitorRecord>,
}

/// Run every target's workers behind one start barrier, watched by one runner thread (and the
/// monitor's, if any) until the run ends.
fn execute<'a>(
    ready: Vec<ReadyTarget<'a>>,
    observer: &dyn Observer,
    open: &EngineFactory,
    monitor: Option<&Monitor>,
    gate: Option<&dyn StartGate>,
) -> Result<Executed<'a>> {
    let timing = ready[0].cfg;
    let threads: usize = ready.iter().map(|r| r.cfg.threads).sum();
    let mut handles = Vec::new();
    let groups = ready
        .iter()
        .map(|r| Group {
            cfg: r.cfg,
            range: r.range,
            file_id: if r.cfg.verify {
                r.source.prepared_id()
            } else {
                None
            },
            stop: AtomicBool::new(false),
            done: (0..r.cfg.threads).map(|_| Counter::default()).collect(),
            intervals: Mutex::new(BTreeMap::new()),
        })
        .collect();
    let mut ready = ready;
    for r in &mut ready {
        handles.push(std::mem::take(&mut r.handles));
    }
    let shared = Shared {
        timing,
        threads,
        groups,
        ready: Barrier::new(threads + 1),
        setup_failed: Mutex::new(None),
        start: Barrier::new(threads + 1),
        finish: Barrier::new(threads + 1),
        exited: AtomicUsize::new(0),
        t0: OnceLock::new(),
        stop: AtomicBool::new(false),
        monitor,
    };

    let (outs, ended, record, gate_failed) = std::thread::scope(|s| {
        let _end = EndMonitor(monitor);
        let mon = monitor.map(|m| {
            std::thread::Builder::new()
                .name(crate::monitor::THREAD_NAME.into())
                .spawn_scoped(s, move || m.run(&|smp| observer.monitor_sample(smp)))
                .expect("spawn monitor thread")
        });
        let joins: Vec<Vec<_>> = handles
            .into_iter()
            .enumerate()
            .map(|(g, hs)| {
                hs.into_iter()
                    .enumerate()
                    .map(|(i, f)| {
                        let sh = &shared;
                        let name = if shared.groups.len() == 1 {
                            format!("readlab-w{i}")
                        } else {
                            format!("readlab-w{g}.{i}")
                        };
                        std::thread::Builder::new()
                            .name(name)
                            .spawn_scoped(s, move || worker::worker(sh, g, i, f, open))
                            .expect("spawn worker thread")
                    })
                    .collect()
            })
            .collect();
        let mut watched = watch::watch(&shared, observer, gate);
        let gate_failed = watched.gate_failed.take();
        let outs: Vec<Vec<Result<worker::WorkerOut>>> = joins
            .into_iter()
            .map(|hs| {
                hs.into_iter()
                    .map(|h| {
                        h.join().unwrap_or_else(|_| {
                            Err(Error::Engine("a worker thread panicked".into()))
                        })
                    })
                    .collect()
            })
            .collect();
        let ended = watched.finish(timing);
        drop(_end);
        let record = mon.and_then(|h| h.join().ok());
        (outs, ended, record, gate_failed)
    });
    if let Some(e) = gate_failed {
        return Err(e);
    }

    let groups = outs
        .into_iter()
        .zip(shared.groups)
        .zip(ready)
        .map(|((o, g), r)| (o, g.intervals.into_inner().unwrap(), r))
        .collect();
    Ok(Executed {
        groups,
        ended,
        monitor: record,
    })
}

/// Ends the monitor however the run ends (a panic included), so its thread can be joined.
struct EndMonitor<'a>(Option<&'a Monitor>);

impl Drop for EndMonitor<'_> {
    fn drop(&mut self) {
        if let Some(m) = self.0 {
            m.end_at(Instant::now());
        }
    }
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
    /// Ramp, runtime and stopping rules (the same for every target).
    timing: &'a RunConfig,
    /// Worker threads of every target.
    threads: usize,
    /// One group of workers per target.
    groups: Vec<Group<'a>>,
    /// Every worker has set up its engine (or failed to): the runner's thread passes the gate.
    ready: Barrier,
    /// The first worker's set-up failure, for the gate.
    setup_failed: Mutex<Option<String>>,
    start: Barrier,
    /// Workers wait here after their last I/O until the runner has taken its final CPU snapshot,
    /// so no worker thread (and its CPU time) disappears from /proc before it is counted.
    finish: Barrier,
    exited: AtomicUsize,
    t0: OnceLock<Instant>,
    /// Stop every worker (the runner's decision, or a worker's panic).
    stop: AtomicBool,
    monitor: Option<&'a Monitor>,
}

/// The workers of one target.
struct Group<'a> {
    cfg: &'a RunConfig,
    range: Range,
    file_id: Option<u64>,
    /// Stop this target's workers (one of them failed); the other targets go on.
    stop: AtomicBool,
    done: Vec<Counter>,
    /// Latencies of the measured window, per second since the window began.
    intervals: Mutex<BTreeMap<u64, Recorder>>,
}

impl Shared<'_> {
    /// I/Os completed by every worker so far (ramp included).
    fn total_done(&self) -> u64 {
        self.groups
            .iter()
            .flat_map(|g| &g.done)
            .map(|c| c.0.load(Ordering::Relaxed))
            .sum()
    }

    /// Keep the first worker's set-up failure for the gate.
    fn setup_failed(&self, message: &str) {
        self.setup_failed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert_with(|| message.to_string());
    }
}

impl Group<'_> {
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
    /// Measured seconds (ramp excluded) as the runner's thread saw them: the planned runtime, or
    /// until it noticed the run had stopped. A run that stopped early is measured to its last
    /// completion instead ([`Ended::window_until`]).
    window: f64,
    ended_by: EndedBy,
    /// When the measured window began.
    ramp_end: Instant,
    /// The run reached its planned end (its window is the runtime, whatever completed last).
    reached_end: bool,
    /// The planned window, ramp excluded.
    planned: f64,
}

impl Ended {
    /// The measured window of workers whose last counted completion was `last`: the planned
    /// runtime when the run reached it; otherwise from the window's start to that completion
    /// (never past the planned end). The runner's thread notices the workers finished up to
    /// one progress period late; that idle time was never part of the run. Without any
    /// completion in the window, the window as the runner saw it.
    fn window_until(&self, last: Option<Instant>) -> f64 {
        match last {
            Some(t) if !self.reached_end => t
                .saturating_duration_since(self.ramp_end)
                .as_secs_f64()
                .min(self.planned),
            _ => self.window,
        }
    }
}
