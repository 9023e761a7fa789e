//! The open-loop schedule of `--rate`: each worker's requests fall due at fixed or Poisson
//! intervals, go out when due and a slot is free, and count their latency from the due time (free
//! of coordinated omission). It also keeps how late requests went out and how far behind it fell.

use super::requests::Requests;
use crate::clock::Tick;
use crate::config::{Arrivals, Rate};
use crate::engine::Engine;
use crate::error::Result;
use crate::stats::Recorder;
use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};
use std::time::Duration;

/// The open-loop arrival schedule of one worker.
pub(super) struct Schedule {
    next: Tick,
    mean: f64,
    poisson: bool,
    rng: Xoshiro256PlusPlus,
    stats: OpenLoopStats,
}

/// What one worker's schedule saw.
#[derive(Default, Clone)]
pub(super) struct OpenLoopStats {
    /// How late each request was issued after its due time.
    pub(super) delay: Recorder,
    pub(super) late: u64,
    pub(super) max_lag: Duration,
    /// Requests still due but never issued when the window ended (ns behind / mean gap).
    pub(super) final_backlog: f64,
    pub(super) per_thread_rate: f64,
}

impl Schedule {
    pub(super) fn new(rate: Rate, threads: usize, seed: u64, t0: Tick) -> Schedule {
        let per_thread = rate.iops / threads as f64;
        Schedule {
            next: t0,
            mean: 1e9 / per_thread,
            poisson: rate.arrivals == Arrivals::Poisson,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed ^ 0x6f70_656e_6c6f_6f70),
            stats: OpenLoopStats {
                per_thread_rate: per_thread,
                ..OpenLoopStats::default()
            },
        }
    }

    /// Start every request that is due and has a free slot (one submit for all of them), and say
    /// how many completions to wait for: `None` when nothing is in flight and slots are free, so
    /// the worker should sleep until the next due time.
    pub(super) fn issue_due(
        &mut self,
        req: &mut Requests,
        engine: &mut dyn Engine,
        ramp_end: Tick,
        complete_min: usize,
    ) -> Result<Option<usize>> {
        let ts = Tick::now();
        let mut queued = 0;
        while !req.free.is_empty() && self.next <= ts && req.budget != Some(0) {
            if let Some(b) = &mut req.budget {
                *b -= 1;
            }
            let r = req.free.pop().expect("free request checked") as usize;
            req.start(r, self.next, engine)?;
            if self.next >= ramp_end {
                self.issued(ts.ns_since(self.next));
            }
            self.advance();
            queued += 1;
        }
        if queued > 0 {
            engine.submit()?;
            req.inflight += queued * req.bpr;
            req.depth.started(ts, queued);
        }
        if self.next <= ts && ts >= ramp_end {
            self.lagging(ts.ns_since(self.next)); // due but no free slot: backlog
        }
        Ok(if req.free.is_empty() {
            Some(complete_min.min(req.inflight))
        } else if req.inflight == 0 {
            None
        } else {
            // Slots are free: do not block past the next due time.
            Some(0)
        })
    }

    fn advance(&mut self) {
        let gap = if self.poisson {
            // Inverse transform of the exponential distribution.
            let u: f64 = self.rng.random();
            -(1.0 - u).ln() * self.mean
        } else {
            self.mean
        };
        self.next = self.next.plus_ns(gap as u64);
    }

    fn issued(&mut self, ns: u64) {
        self.stats.delay.record(ns, 0);
        if ns as f64 > self.mean {
            self.stats.late += 1;
        }
    }

    fn lagging(&mut self, lag_ns: u64) {
        self.stats.max_lag = self.stats.max_lag.max(Duration::from_nanos(lag_ns));
    }

    /// Nothing in flight: wait for the next due time (sleep most of it, spin the last 100 µs so
    /// the request goes out on time).
    pub(super) fn sleep_until_due(&self, end: Tick) {
        self.next
            .min(end)
            .wait_until(100_000, Duration::MAX, &|| false);
    }

    pub(super) fn finish(mut self, end: Tick) -> OpenLoopStats {
        if self.next < end {
            self.stats.final_backlog = end.ns_since(self.next) as f64 / self.mean;
        }
        self.stats
    }
}
