//! The runner: one honest run of one workload, like fio's `td_io_queue`. It owns every timestamp,
//! histogram and counter; engines only move data. It never prints: progress goes to an [`Observer`].
//!
//! - `checks`: what is checked before a run ([`prepare_run`]) and during and after it (the
//!   every-read-failed rule, warnings, the first errors kept in full).
//! - `worker`: one worker thread's loop: queue, submit, reap, time and verify every completion.
//! - `schedule`: the open-loop schedule of `--rate`: when requests fall due, how late they went out.
//! - `think`: the pauses of `--thinktime` between a worker's I/Os, measured apart from latency.
//! - `watch`: the runner's own thread while the workers run: ticks, CPU snapshots and the stop
//!   conditions that decide [`EndedBy`].
//! - `windows`: the measured window in 100 ms windows the watch samples, and the run's
//!   [`Precision`](crate::result::Precision) from them.
//! - `aggregate`: the workers' outputs merged into one [`RunResult`](crate::result::RunResult).
//! - `targets`: several targets in one run ([`run_targets`]): one group of workers per target
//!   behind the same start barrier, results per target and their aggregate.
//! - `selfcost`: readlab's own cost per I/O in a run's shape ([`null_cost`]): the null engine's
//!   run in that shape (the runner's own, [`null_run`]), once per shape, after every run of real
//!   engines.
//!
//! Engines come from an [`EngineFactory`]: [`run`] opens the real ones, tests hand [`run_with`] a
//! scripted fake. An observer that asks for the monitor ([`Observer::monitor`]) gets its samples
//! live and in the document.

mod aggregate;
pub mod breakdown;
mod checks;
mod depth;
mod distribution;
mod observe;
mod requests;
mod schedule;
mod selfcost;
mod shared;
mod targets;
mod think;
mod watch;
mod windows;
mod worker;

#[cfg(test)]
mod gate_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod window_tests;

pub(crate) use checks::{OTHER_LOAD, other_load};
pub use checks::{Prepared, check_all, check_prepared_throughout, prepare_run};
pub use observe::{EngineFactory, Observer, Phase, Silent, StartGate, Tick};
pub use selfcost::{NullCost, WINDOW as SELF_COST_WINDOW, measures_self, same_shape};
use shared::{Counter, Ended, Group, GroupFile, Shared};
pub use targets::{run_targets, run_targets_with};

use crate::clock;
use crate::config::{Range, RunConfig};
use crate::engine;
use crate::env::Environment;
use crate::error::{Error, Result};
use crate::monitor::{Monitor, MonitorRecord};
use crate::result::{Document, RunResult, SCHEMA};
use crate::source::{Handle, Source, WorkerOpen};
use crate::stats;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::sync::{Barrier, Condvar, Mutex, OnceLock};
use std::time::Instant;

/// Run one workload with the engine `cfg.engine` names and return its document, with readlab's
/// own cost in the same shape measured after it ([`null_cost`]). Bad input fails before any I/O.
pub fn run(cfg: &RunConfig, observer: &dyn Observer) -> Result<Document> {
    run_measured(cfg, observer, None)
}

/// [`run`], starting when `gate` says: the set-up (target checks, engines) happens first, then
/// the gate is passed, then the measured run. An error before the gate is returned without
/// calling it; the caller tells the other members. Each member measures its own cost after the
/// run ([`null_cost`]), on its own.
pub fn run_gated(
    cfg: &RunConfig,
    observer: &dyn Observer,
    gate: &dyn StartGate,
) -> Result<Document> {
    run_measured(cfg, observer, Some(gate))
}

/// [`run`] and [`run_gated`]: the real engines, then readlab's own cost in the run's shape.
fn run_measured(
    cfg: &RunConfig,
    observer: &dyn Observer,
    gate: Option<&dyn StartGate>,
) -> Result<Document> {
    let open = registered(cfg.engine);
    let (mut doc, size) = run_sized(cfg, observer, &open, gate)?;
    selfcost::attach(cfg, size, &mut doc.result, &null_run);
    Ok(doc)
}

/// Every worker's engine: the registry's engine of this kind (what a run opens unless it is
/// handed engines of its own).
pub(super) fn registered(
    kind: engine::EngineKind,
) -> impl Fn(usize, engine::EngineSetup) -> Result<Box<dyn engine::Engine>> + Sync {
    move |_, setup| engine::open(kind, setup)
}

/// readlab's CPU per I/O and IOPS on the null engine in the shape of `cfg` (threads, depth,
/// batch, complete-min, blocks per request, block size, access, rate, sampling), on a source of
/// `size` bytes: measured for [`SELF_COST_WINDOW`] the first time this process asks for that
/// shape, then remembered. Bad input when `cfg` is not a valid run on such a source.
pub fn null_cost(cfg: &RunConfig, size: u64) -> Result<NullCost> {
    selfcost::null_cost(cfg, size, &null_run)
}

/// `cfg`, the null engine's run in some run's shape (`selfcost`), run quietly on `source`
/// through the code every run goes through: its workers, its watch thread, its aggregation.
fn null_run(cfg: &RunConfig, source: Box<dyn Source>, range: Range) -> Result<RunResult> {
    let ready = ReadyTarget::open(cfg, Prepared::one(source, range), None)?;
    let open = registered(cfg.engine);
    let mut done = execute(vec![ready], &Silent, &open, None, None)?;
    let (outs, intervals, _) = done.groups.pop().expect("one group");
    aggregate::result(cfg, outs, &intervals, done.ended, 0.0, Vec::new())
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
    run_sized(cfg, observer, open, gate).map(|(doc, _)| doc)
}

/// A run, and the size of the source it read (readlab's own cost is measured on one as large).
fn run_sized(
    cfg: &RunConfig,
    observer: &dyn Observer,
    open: &EngineFactory,
    gate: Option<&dyn StartGate>,
) -> Result<(Document, u64)> {
    let prepared = ReadyTarget::prepare(cfg)?;
    let environment = Environment::capture(prepared.job.source(), prepared.job.device.clone());
    let monitor = start_monitor(observer, std::slice::from_ref(cfg))?;
    let timer_ns = clock::timer_cost_ns();
    let mut done = execute(vec![prepared], observer, open, monitor.as_ref(), gate)?;
    let (outs, intervals, mut ready) = done.groups.pop().expect("one group");
    if let Some(path) = &cfg.log_offsets {
        let mut text = String::new();
        let files = cfg.job_files();
        for o in outs.iter().flatten() {
            // A mix of sizes writes each block's length beside its offset (as fio's iolog); a
            // job over several files writes the file first (as fio's iolog names it).
            for &(file, off, len) in &o.offsets {
                if files.len() > 1 {
                    text.push_str(&format!("{} ", files[file as usize].display()));
                }
                if cfg.bssplit.is_single() {
                    text.push_str(&format!("{off}\n"));
                } else {
                    text.push_str(&format!("{off} {len}\n"));
                }
            }
        }
        crate::fsio::write_file(path, &text)?;
    }
    let irq = done.ended.irq.clone();
    let warnings = std::mem::take(&mut ready.job.warnings);
    let mut result = aggregate::result(cfg, outs, &intervals, done.ended, timer_ns, warnings)?;
    checks::trust(cfg, &ready.job.range(), &mut result);
    checks::trust_polling(cfg, ready.irq.as_ref(), irq.as_ref(), &mut result);
    let doc = Document {
        schema: SCHEMA.into(),
        study: None,
        config: cfg.clone(),
        environment,
        result,
        targets: Vec::new(),
        monitor: done.monitor,
        fleet: None,
    };
    Ok((doc, ready.job.source().size()))
}

/// One target checked and opened, ready for its workers.
struct ReadyTarget<'a> {
    cfg: &'a RunConfig,
    /// The job's files (the target first), its device and its warnings.
    job: Prepared,
    /// Per worker, one handle per file of the job.
    handles: Vec<Vec<Handle>>,
    /// The interrupt lines of the target's device, counted over the window.
    irq: Option<crate::irq::Queues>,
}

impl<'a> ReadyTarget<'a> {
    /// `cfg`'s target (its every file) checked, and opened for its workers.
    fn prepare(cfg: &'a RunConfig) -> Result<ReadyTarget<'a>> {
        let job = prepare_run(cfg)?;
        // Direct reads only: a buffered read served by the page cache raises no interrupt either,
        // and would pass for a polled one.
        let irq = if cfg.direct && cfg.engine.capabilities().does_io {
            crate::irq::Queues::of(&cfg.target)
        } else {
            None
        };
        ReadyTarget::open(cfg, job, irq)
    }

    /// What the target's workers share: its files' ranges, samplers and prepared ids, their
    /// completion counters, the stop flag and the timeline of their latencies.
    fn group(&self) -> Group<'a> {
        let cfg = self.cfg;
        Group {
            cfg,
            files: self
                .job
                .files()
                .map(|(source, range)| GroupFile {
                    range,
                    sampler: distribution::Sampler::new(&cfg.random_distribution, range.blocks),
                    file_id: if cfg.verify {
                        source.prepared_id()
                    } else {
                        None
                    },
                })
                .collect(),
            stop: AtomicBool::new(false),
            done: (0..cfg.threads).map(|_| Counter::default()).collect(),
            intervals: Mutex::new(BTreeMap::new()),
        }
    }

    /// The job's files opened for `cfg`'s workers, each worker a handle on every one.
    fn open(
        cfg: &'a RunConfig,
        job: Prepared,
        irq: Option<crate::irq::Queues>,
    ) -> Result<ReadyTarget<'a>> {
        let files: Vec<(&dyn Source, Range)> = job.files().collect();
        let handles = open_handles(cfg, &files)?;
        Ok(ReadyTarget {
            cfg,
            job,
            handles,
            irq,
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
    mut ready: Vec<ReadyTarget<'a>>,
    observer: &dyn Observer,
    open: &EngineFactory,
    monitor: Option<&Monitor>,
    gate: Option<&dyn StartGate>,
) -> Result<Executed<'a>> {
    let handles: Vec<Vec<Vec<Handle>>> = ready
        .iter_mut()
        .map(|r| std::mem::take(&mut r.handles))
        .collect();
    let shared = shared(&ready, monitor);
    let timing = shared.timing;

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
                        h.join()
                            .unwrap_or(Err(Error::ThreadDied("a worker thread panicked")))
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

    // The intervals first: the groups borrow what `ready` holds (its sources).
    let intervals: Vec<_> = shared
        .groups
        .into_iter()
        .map(|g| g.intervals.into_inner().unwrap())
        .collect();
    let groups = outs
        .into_iter()
        .zip(intervals)
        .zip(ready)
        .map(|((o, i), r)| (o, i, r))
        .collect();
    Ok(Executed {
        groups,
        ended,
        monitor: record,
    })
}

/// What the run's threads share: each target's group of workers, every file's source (to close
/// under workers still blocked at the end), the barriers of all the workers and the runner's
/// thread. Ramp, runtime and stop rules are the first target's (they are the same for all).
fn shared<'a>(ready: &'a [ReadyTarget], monitor: Option<&'a Monitor>) -> Shared<'a> {
    let threads: usize = ready.iter().map(|r| r.cfg.threads).sum();
    Shared {
        timing: ready[0].cfg,
        threads,
        groups: ready.iter().map(ReadyTarget::group).collect(),
        ready: Barrier::new(threads + 1),
        setup_failed: Mutex::new(None),
        start: Barrier::new(threads + 1),
        finish: Barrier::new(threads + 1),
        exited: AtomicUsize::new(0),
        exit_signal: (Mutex::new(()), Condvar::new()),
        sources: ready
            .iter()
            .flat_map(|r| r.job.files().map(|(s, _)| s))
            .collect(),
        aborted: AtomicBool::new(false),
        t0: OnceLock::new(),
        stop: AtomicBool::new(false),
        monitor,
        irq: ready.iter().any(|r| r.irq.is_some()),
    }
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

/// Per worker thread, one handle on each of the job's files (its source and the range read),
/// each with the configured `posix_fadvise` hint.
fn open_handles(cfg: &RunConfig, files: &[(&dyn Source, Range)]) -> Result<Vec<Vec<Handle>>> {
    let how = |range: &Range| WorkerOpen {
        direct: cfg.direct && cfg.engine.capabilities().does_io,
        advice: cfg.fadvise.map(|a| match a {
            crate::config::Fadvise::Sequential => rustix::fs::Advice::Sequential,
            crate::config::Fadvise::Random => rustix::fs::Advice::Random,
        }),
        offset: range.offset,
        len: range.len,
    };
    (0..cfg.threads)
        .map(|_| {
            files
                .iter()
                .map(|(source, range)| source.open_worker(&how(range)))
                .collect()
        })
        .collect()
}
