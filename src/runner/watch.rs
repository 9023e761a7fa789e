//! The runner's own thread while the workers run: it releases them, samples progress for the
//! [`Observer`] a few times per second, takes the CPU snapshots at the edges of the measured
//! window and the measured window's samples every 100 ms (`super::windows`), and decides when
//! and why the run ends (runtime, stability, cancel, workers done). A run ends within a grace
//! period of that decision whatever the target does: workers still blocked then have their
//! source closed under them ([`STOP_GRACE`], [`CANCEL_GRACE`]).

use super::windows::Samples;
use super::{Ended, Observer, Phase, Shared, StartGate, Tick};
use crate::config::RunConfig;
use crate::cpu::CpuSnapshot;
use crate::irq::Snapshot;
use crate::result::EndedBy;
use crate::stability::Tracker;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// How long the workers may take to finish the reads in flight once the run has ended before
/// the runner closes the source under them ([`Shared::abort`](super::Shared)).
pub(super) const STOP_GRACE: Duration = Duration::from_secs(5);
/// The same once a signal (or the observer) cancelled the run: people are waiting.
pub(super) const CANCEL_GRACE: Duration = Duration::from_millis(500);

/// What the runner's thread saw, up to the moment the workers were released from the finish
/// barrier.
pub(super) struct Watched {
    ramp_end: Instant,
    end: Instant,
    /// Taken when the ramp ended (None if the run stopped during the ramp).
    cpu_start: Option<CpuSnapshot>,
    cpu_end: CpuSnapshot,
    /// /proc/interrupts beside the CPU snapshots (when some target's device has lines).
    irq_start: Option<Snapshot>,
    irq_end: Option<Snapshot>,
    samples: Samples,
    stopped_at: Instant,
    interrupted: bool,
    stable: bool,
    /// The start gate's error: the run was stopped before it began.
    pub(super) gate_failed: Option<crate::error::Error>,
}

/// Wait for the workers' set-up, pass the start gate (if any), start the workers and watch them
/// until the run ends; returns once every worker has passed the finish barrier (their threads
/// may still be returning).
pub(super) fn watch(
    shared: &Shared,
    observer: &dyn Observer,
    gate: Option<&dyn StartGate>,
) -> Watched {
    let cfg = shared.timing;
    let (t0, gate_failed, cpu_s) = release(shared, gate);

    // Checked: durations are bounded before a run (RunConfig::check), but a panic here would
    // leave the workers waiting at their barrier forever.
    let far = |d: Duration| t0.checked_add(d).unwrap_or(t0 + crate::size::MAX_DURATION);
    let planned = cfg.ramp.saturating_add(cfg.runtime);
    let at = Times {
        t0,
        ramp_end: far(cfg.ramp),
        end: far(planned),
        planned,
    };
    let mut seen = Seen {
        irq_start: if cfg.ramp.is_zero() {
            irq(shared)
        } else {
            None
        },
        cpu_start: (cfg.ramp.is_zero()).then(CpuSnapshot::take),
        interrupted: false,
        stable: false,
        samples: Samples::new(at.ramp_end),
    };
    if cfg.ramp.is_zero() && gate_failed.is_none() {
        seen.samples.start_at(t0, shared.groups.len(), cpu_s);
    }
    if gate_failed.is_none() {
        until_end(shared, observer, at, &mut seen);
    }
    // The last window closes where the run was stopped (the aggregation cuts it at the
    // window's end). None for a run stopped in its ramp: it has no measured window.
    if seen.samples.next_due().is_some() {
        seen.samples.take(Instant::now(), shared.done_per_group());
    }
    let cpu_end = CpuSnapshot::take();
    let irq_end = seen.irq_start.as_ref().and_then(|_| irq(shared));
    shared.stop.store(true, Ordering::Relaxed);
    let stopped_at = Instant::now();
    if let Some(m) = shared.monitor {
        m.end_at(stopped_at.min(at.end));
    }
    let interrupted = seen.interrupted;
    finish_workers(shared, observer, interrupted, stopped_at);
    let ios = shared.total_done();
    observer.tick(&Tick {
        phase: Phase::Drain,
        elapsed: stopped_at - t0,
        planned,
        ios,
        recent_iops: 0.0,
    });
    Watched {
        ramp_end: at.ramp_end,
        end: at.end,
        cpu_start: seen.cpu_start,
        cpu_end,
        irq_start: seen.irq_start,
        irq_end,
        samples: seen.samples,
        stopped_at,
        interrupted,
        stable: seen.stable,
        gate_failed,
    }
}

/// The run's times: its start, the end of its ramp, its planned end, and the ramp and runtime
/// together.
#[derive(Clone, Copy)]
struct Times {
    t0: Instant,
    ramp_end: Instant,
    end: Instant,
    planned: Duration,
}

/// What the runner's thread saw while the workers ran.
struct Seen {
    /// Taken when the ramp ended (None while the ramp runs).
    cpu_start: Option<CpuSnapshot>,
    irq_start: Option<Snapshot>,
    interrupted: bool,
    stable: bool,
    /// The measured window's samples (from the ramp's end on).
    samples: Samples,
}

/// /proc/interrupts now, when some target's device has lines there.
fn irq(shared: &Shared) -> Option<Snapshot> {
    if shared.irq { Snapshot::take() } else { None }
}

/// Wait for the workers' set-up, pass the start gate (if any) and release the workers: the run's
/// start, the gate's error if it refused (the workers are then told to stop at once), and the
/// process's CPU clock just before the workers were released.
fn release(
    shared: &Shared,
    gate: Option<&dyn StartGate>,
) -> (Instant, Option<crate::error::Error>, f64) {
    let cfg = shared.timing;
    shared.ready.wait();
    if let Some(m) = shared.monitor {
        m.begin();
    }
    let (t0, gate_failed) = match gate {
        None => (Instant::now(), None),
        Some(g) => {
            let setup = shared
                .setup_failed
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone();
            match g.start(setup.map_or(Ok(()), |m| Err(crate::error::Error::SetupFailed(m)))) {
                Ok(t0) => (t0, None),
                Err(e) => {
                    shared.stop.store(true, Ordering::Relaxed);
                    (Instant::now(), Some(e))
                }
            }
        }
    };
    shared.t0.set(t0).expect("t0 set once");
    if let Some(m) = shared.monitor {
        // The monitor's samples fall at the ends of the run's seconds.
        m.set_epoch(t0.checked_add(cfg.ramp).unwrap_or(t0));
    }
    let cpu_s = crate::cpu::process_cpu_s();
    shared.start.wait();
    (t0, gate_failed, cpu_s)
}

/// Watch the running workers a few times per second until the run ends (its planned end, stable
/// IOPS, cancelled, or every worker done): progress to the observer, the CPU and interrupt
/// snapshots when the ramp ends, the stop rule fed once a second, the measured window sampled
/// every 100 ms on a grid from the ramp's end (wake-ups for a sample alone tell the observer
/// nothing: its ticks stay as they were).
fn until_end(shared: &Shared, observer: &dyn Observer, at: Times, seen: &mut Seen) {
    let Times {
        t0,
        ramp_end,
        end,
        planned,
    } = at;
    let mut last = (t0, 0u64);
    let period = Duration::from_millis(200);
    let mut tracker = shared.timing.stop_when_stable.map(Tracker::new);
    let mut next_second = (ramp_end + Duration::from_secs(1), shared.total_done());
    loop {
        let now = Instant::now();
        let next = if seen.cpu_start.is_none() {
            ramp_end
        } else {
            end
        };
        let mut due = (last.0 + period).min(next);
        if tracker.is_some() {
            due = due.min(next_second.0);
        }
        let wake = due.min(seen.samples.next_due().unwrap_or(ramp_end));
        if wake > now {
            std::thread::sleep(wake - now);
        }
        let now = Instant::now();
        // The window's sample first: it is cheap, the CPU snapshot reads /proc at length.
        if now >= ramp_end && seen.samples.next_due().is_none_or(|d| now >= d) && now < end {
            seen.samples.take(now, shared.done_per_group());
        }
        if seen.cpu_start.is_none() && now >= ramp_end {
            seen.irq_start = irq(shared);
            seen.cpu_start = Some(CpuSnapshot::take());
            next_second = (now + Duration::from_secs(1), shared.total_done());
        }
        if let Some(t) = &mut tracker
            && now >= next_second.0
        {
            let done = shared.total_done();
            let started = next_second.0 - Duration::from_secs(1);
            t.push((done - next_second.1) as f64 / now.duration_since(started).as_secs_f64());
            next_second = (now + Duration::from_secs(1), done);
            if t.stable(now.duration_since(ramp_end)) {
                seen.stable = true;
                break;
            }
        }
        if now >= end {
            break;
        }
        if now < due {
            // Woken for a sample alone.
            if observer.cancelled() || shared.exited.load(Ordering::Relaxed) == shared.threads {
                seen.interrupted = observer.cancelled();
                break;
            }
            continue;
        }
        let ios = shared.total_done();
        let dt = now.duration_since(last.0).as_secs_f64().max(1e-9);
        observer.tick(&Tick {
            phase: if now < ramp_end {
                Phase::Ramp
            } else {
                Phase::Measure
            },
            elapsed: now - t0,
            planned,
            ios,
            recent_iops: (ios - last.1) as f64 / dt,
        });
        last = (now, ios);
        if observer.cancelled() || shared.exited.load(Ordering::Relaxed) == shared.threads {
            seen.interrupted = observer.cancelled();
            break;
        }
    }
}

/// Once the run was stopped at `stopped_at`: the workers finish the reads in flight; whatever
/// does not answer within the grace period is abandoned, so the run ends then whatever the
/// target does. Returns once every worker has passed the finish barrier.
fn finish_workers(
    shared: &Shared,
    observer: &dyn Observer,
    interrupted: bool,
    stopped_at: Instant,
) {
    let grace = if interrupted || observer.cancelled() {
        CANCEL_GRACE
    } else {
        STOP_GRACE
    };
    if !shared.wait_exited(stopped_at + grace) {
        shared.abort(&if interrupted || observer.cancelled() {
            format!(
                "interrupted, and no reply within {} s after: the server stopped answering",
                grace.as_secs_f64()
            )
        } else {
            format!(
                "no reply within {} s after the run's end: the server stopped answering",
                grace.as_secs_f64()
            )
        });
    }
    shared.finish.wait();
}

impl Watched {
    /// The window's CPU, length and reason for ending; called once the workers have been joined.
    pub(super) fn finish(self, cfg: &RunConfig) -> Ended {
        // A run stopped during the ramp has no measured window: its CPU is that of an empty
        // window (zero), never a snapshot taken after the end held against the end.
        let start = self.cpu_start.unwrap_or_else(|| self.cpu_end.clone());
        let cpu = start.usage_until(&self.cpu_end);
        let window = self
            .stopped_at
            .min(self.end)
            .saturating_duration_since(self.ramp_end)
            .as_secs_f64();
        let ended_by = if self.interrupted {
            EndedBy::Interrupted
        } else if self.stable {
            EndedBy::Stable
        } else if cfg.reads_fixed_amount() && self.stopped_at < self.end {
            EndedBy::IoLimit
        } else {
            EndedBy::Runtime
        };
        Ended {
            cpu,
            window,
            ended_by,
            ramp_end: self.ramp_end,
            reached_end: self.stopped_at >= self.end,
            planned: self
                .end
                .saturating_duration_since(self.ramp_end)
                .as_secs_f64(),
            irq: self.irq_start.zip(self.irq_end),
            samples: self.samples,
        }
    }
}
