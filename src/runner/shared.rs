//! The state one run shares between its workers, its watch and its aggregation: per-worker
//! completion counters, the barriers, the per-target groups and how the measured window ended.
//! Apart from `runner/mod.rs` so that the runner's parts and the runner that calls them do not
//! name each other.

use crate::config::{Range, RunConfig};
use crate::monitor::Monitor;
use crate::result::EndedBy;
use crate::stats::Recorder;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Barrier, Condvar, Mutex, OnceLock};
use std::time::Instant;

/// A per-worker completion counter on its own cache line.
#[repr(align(64))]
#[derive(Default)]
pub(super) struct Counter(pub(super) AtomicU64);

/// Shared state of one run.
pub(super) struct Shared<'a> {
    /// Ramp, runtime and stopping rules (the same for every target).
    pub(super) timing: &'a RunConfig,
    /// Worker threads of every target.
    pub(super) threads: usize,
    /// One group of workers per target.
    pub(super) groups: Vec<Group<'a>>,
    /// Every worker has set up its engine (or failed to): the runner's thread passes the gate.
    pub(super) ready: Barrier,
    /// The first worker's set-up failure, for the gate.
    pub(super) setup_failed: Mutex<Option<String>>,
    pub(super) start: Barrier,
    /// Workers wait here after their last I/O until the runner has taken its final CPU snapshot,
    /// so no worker thread (and its CPU time) disappears from /proc before it is counted.
    pub(super) finish: Barrier,
    pub(super) exited: AtomicUsize,
    /// Signalled each time a worker exits (for the runner's bounded wait at the end).
    pub(super) exit_signal: (Mutex<()>, Condvar),
    /// Each target's source, to wake up workers still blocked after the grace period.
    pub(super) sources: Vec<&'a dyn crate::source::Source>,
    /// The runner closed the sources under the workers still waiting ([`Shared::abort`]):
    /// what they were waiting for is abandoned, not failed by them.
    pub(super) aborted: AtomicBool,
    pub(super) t0: OnceLock<Instant>,
    /// Stop every worker (the runner's decision, or a worker's panic).
    pub(super) stop: AtomicBool,
    pub(super) monitor: Option<&'a Monitor>,
    /// Some target's device has interrupt lines to count: snapshot /proc/interrupts at the
    /// window's edges.
    pub(super) irq: bool,
}

/// The workers of one target.
pub(super) struct Group<'a> {
    pub(super) cfg: &'a RunConfig,
    /// The job's files (one, unless it reads several as fio's `filename=a:b`), in the order
    /// [`Io::file`](crate::engine::Io) counts them.
    pub(super) files: Vec<GroupFile>,
    /// Stop this target's workers (one of them failed); the other targets go on.
    pub(super) stop: AtomicBool,
    pub(super) done: Vec<Counter>,
    /// Latencies of the measured window, per second since the window began.
    pub(super) intervals: Mutex<BTreeMap<u64, Recorder>>,
}

/// One file of a group's job: what of it is read, and how.
pub(super) struct GroupFile {
    pub(super) range: Range,
    /// The random reads' block picker, set up once for all of the target's workers.
    pub(super) sampler: super::distribution::Sampler,
    /// The prepared data's id, when the run verifies what it reads.
    pub(super) file_id: Option<u64>,
}

impl Shared<'_> {
    /// A worker has exited (it is on its way to the finish barrier).
    pub(super) fn worker_exited(&self) {
        self.exited.fetch_add(1, Ordering::Relaxed);
        let _g = self.exit_signal.0.lock().unwrap_or_else(|p| p.into_inner());
        self.exit_signal.1.notify_all();
    }

    /// Wait until every worker has exited or `deadline` passed; whether they all exited.
    pub(super) fn wait_exited(&self, deadline: Instant) -> bool {
        let mut g = self.exit_signal.0.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if self.exited.load(Ordering::Relaxed) >= self.threads {
                return true;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            g = self
                .exit_signal
                .1
                .wait_timeout(g, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// Wake up the workers still blocked on their sources: each source closes what they wait
    /// on (an NBD source, its connections), and they abandon the reads in flight with `why`.
    pub(super) fn abort(&self, why: &str) {
        // Set first: a worker woken up must see it.
        self.aborted.store(true, Ordering::SeqCst);
        let mut woke = false;
        for s in &self.sources {
            woke |= s.abort(why);
        }
        if !woke {
            // Nothing could be woken (local files): the workers' errors stay theirs.
            self.aborted.store(false, Ordering::SeqCst);
        }
    }

    /// I/Os completed by every worker so far (ramp included).
    pub(super) fn total_done(&self) -> u64 {
        self.groups
            .iter()
            .flat_map(|g| &g.done)
            .map(|c| c.0.load(Ordering::Relaxed))
            .sum()
    }

    /// I/Os completed by each target's workers so far (ramp included), in target order.
    pub(super) fn done_per_group(&self) -> Vec<u64> {
        self.groups
            .iter()
            .map(|g| g.done.iter().map(|c| c.0.load(Ordering::Relaxed)).sum())
            .collect()
    }

    /// Keep the first worker's set-up failure for the gate.
    pub(super) fn setup_failed(&self, message: &str) {
        self.setup_failed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert_with(|| message.to_string());
    }
}

impl Group<'_> {
    pub(super) fn flush_interval(&self, second: u64, rec: &mut Recorder) {
        flush_into(&self.intervals, second, rec);
    }
}

/// Merge one worker's second `second` into the run's timeline and start the next one afresh.
pub(super) fn flush_into(
    intervals: &Mutex<BTreeMap<u64, Recorder>>,
    second: u64,
    rec: &mut Recorder,
) {
    if rec.count == 0 {
        return;
    }
    intervals
        .lock()
        .unwrap()
        .entry(second)
        .or_default()
        .merge(rec);
    rec.reset();
}

/// How the measured window ended, for the aggregation.
pub(super) struct Ended {
    pub(super) cpu: crate::cpu::CpuUsage,
    /// Measured seconds (ramp excluded) as the runner's thread saw them: the planned runtime, or
    /// until it noticed the run had stopped. A run that stopped early is measured to its last
    /// completion instead ([`Ended::window_until`]).
    pub(super) window: f64,
    pub(super) ended_by: EndedBy,
    /// When the measured window began.
    pub(super) ramp_end: Instant,
    /// The run reached its planned end (its window is the runtime, whatever completed last).
    pub(super) reached_end: bool,
    /// The planned window, ramp excluded.
    pub(super) planned: f64,
    /// /proc/interrupts at the window's start and end (when some target's device has lines).
    pub(super) irq: Option<(crate::irq::Snapshot, crate::irq::Snapshot)>,
    /// The measured window's samples every 100 ms (none for a run stopped in its ramp).
    pub(super) samples: super::windows::Samples,
}

impl Ended {
    /// The measured window of workers whose last counted completion was `last`: the planned
    /// runtime when the run reached it; otherwise from the window's start to that completion
    /// (never past the planned end). The runner's thread notices the workers finished up to
    /// one progress period late; that idle time was never part of the run. Without any
    /// completion in the window, the window as the runner saw it.
    pub(super) fn window_until(&self, last: Option<Instant>) -> f64 {
        match last {
            Some(t) if !self.reached_end => t
                .saturating_duration_since(self.ramp_end)
                .as_secs_f64()
                .min(self.planned),
            _ => self.window,
        }
    }
}
