//! What the runner tells its caller (phases, progress ticks, the [`Observer`] trait), how it is
//! handed engines ([`EngineFactory`]) and where it meets other processes ([`StartGate`]). Apart
//! from `runner/mod.rs` so that the runner's parts (worker, watch, aggregate) and the runner that
//! calls them do not name each other.

use crate::engine::{Engine, EngineSetup};
use crate::error::Result;
use crate::monitor::{MonitorOptions, Sample};
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

/// Where the processes of one run meet before measuring. Once every worker of this process has
/// set up its engine, the runner hands the gate the set-up outcome and starts the run (ramp
/// included) at the instant the gate returns. A fleet of processes (MPI ranks, `crate::fleet`)
/// meets here so all start together; a lone process has no gate and starts at once.
pub trait StartGate {
    /// `setup` is this process's outcome (the first failed worker's error, as
    /// `Error::SetupFailed`). Returns the instant the run starts, or the error that stops every
    /// member; either way the workers are released (after an error they stop at once).
    fn start(&self, setup: Result<()>) -> Result<Instant>;
}
