//! Where readlab's own nanoseconds per I/O go: each part of the worker's loop (clock reads,
//! latency histogram, per-second timeline, depth accounting, offsets, the engine calls, the
//! completion counter, the observer's ticks, verification when on) timed alone on the real types
//! with the thread's CPU clock, and weighted by how often a run of a given shape does it.
//! `benches/breakdown.rs` prints it; `benches/vs_fio.sh` prints it beside each cell.

use super::depth::DepthMeter;
use super::requests::Offsets;
use super::shared::flush_into;
use crate::buffer::BufferPool;
use crate::clock::Tick;
use crate::engine::{Completion, EngineKind, EngineSetup, Io};
use crate::source::Handle;
use crate::stats::Recorder;
use serde::Serialize;
use std::collections::BTreeMap;
use std::hint::black_box;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// What a run does per I/O, as far as its own cost goes.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    /// Clock reads per I/O (a result's `timer.clock_reads_per_io`: 2 for a synchronous engine,
    /// about 1 for a queued one).
    pub clock_reads_per_io: f64,
    /// I/Os per depth-accounting step (1 for a synchronous engine; a queued engine accounts
    /// once per submitted and once per reaped batch).
    pub ios_per_batch: f64,
    /// I/Os per second of one worker (the timeline is flushed once per second, the observer
    /// ticks five times per second).
    pub iops: f64,
    /// Block size, for verification's cost.
    pub bs: usize,
}

/// One part of the loop and its cost.
#[derive(Debug, Clone, Serialize)]
pub struct Component {
    pub name: &'static str,
    /// Nanoseconds of CPU per I/O of a run of the shape asked.
    pub ns_per_io: f64,
    /// Nanoseconds one occurrence costs, and how many occurrences an I/O has.
    pub ns_each: f64,
    pub per_io: f64,
    /// Counted in the run (verification is not, unless asked for).
    pub counted: bool,
}

/// The thread's own CPU time.
fn cpu_now() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// Nanoseconds of thread CPU per call of `f` over `n` calls (the best of three rounds: the
/// cheapest round is the one least disturbed by the rest of the machine).
fn each(n: u64, mut f: impl FnMut(u64)) -> f64 {
    (0..3)
        .map(|_| {
            let t = cpu_now();
            for i in 0..n {
                f(i);
            }
            (cpu_now() - t).as_nanos() as f64 / n as f64
        })
        .fold(f64::INFINITY, f64::min)
}

/// Time every part of the loop for a run of `shape`; `n` iterations per part (a million takes
/// about a second in all).
pub fn measure(shape: &Shape, n: u64) -> Vec<Component> {
    let n = n.max(1000);
    let mut out = Vec::new();
    let mut push = |name, ns_each: f64, per_io: f64, counted| {
        out.push(Component {
            name,
            ns_per_io: ns_each * per_io,
            ns_each,
            per_io,
            counted,
        })
    };

    let clock = each(n, |_| {
        black_box(Tick::now());
    });
    push("clock reads", clock, shape.clock_reads_per_io, true);

    // Latencies spread over three decades, as a real run's are.
    let mut rec = Recorder::default();
    let hist = each(n, |i| {
        rec.record(black_box(1_000 + (i * 2_654_435_761) % 1_000_000), 4096)
    });
    push("latency histogram", hist, 1.0, true);

    // A second's recorder merged into the run's timeline, once per second per worker.
    let intervals = Mutex::new(BTreeMap::new());
    let rounds = (n / 1000).max(10);
    let mut second = Recorder::default();
    let flush = each(rounds, |i| {
        for k in 0..64 {
            second.record(1_000 + k * 997, 4096);
        }
        flush_into(&intervals, i % 4, &mut second);
    });
    push(
        "per-second timeline",
        flush,
        1.0 / shape.iops.max(1.0),
        true,
    );

    let t0 = Tick::now();
    let mut meter = DepthMeter::new(t0, t0, t0.plus(Duration::from_secs(3600)));
    let depth = each(n, |i| {
        let t = t0.plus_ns(i * 100);
        meter.started(t, 1);
        meter.finished(t, 1);
    });
    black_box(meter.area(t0.plus(Duration::from_secs(1))));
    push(
        "depth accounting",
        depth,
        1.0 / shape.ios_per_batch.max(1.0),
        true,
    );

    let mut offsets = Offsets::random(4096, 1 << 18, 1);
    let off = each(n, |_| {
        black_box(offsets.next());
    });
    push("random offsets", off, 1.0, true);

    if let Some(calls) = engine_calls(n) {
        push("engine calls (null)", calls, 1.0, true);
    }

    let counter = AtomicU64::new(0);
    let store = each(n, |i| counter.store(black_box(i), Ordering::Relaxed));
    push(
        "completion counter",
        store,
        1.0 / shape.ios_per_batch.max(1.0),
        true,
    );

    // The runner's thread sums every worker's counter and calls the observer five times a second.
    let counters: Vec<AtomicU64> = (0..8).map(AtomicU64::new).collect();
    let tick = each(n / 10, |_| {
        black_box(
            counters
                .iter()
                .map(|c| c.load(Ordering::Relaxed))
                .sum::<u64>(),
        );
    });
    push("observer ticks", tick, 5.0 / shape.iops.max(1.0), true);

    let bs = shape.bs.max(512);
    let mut buf = vec![0u8; bs];
    crate::data::fill(7, 0, &mut buf);
    let verify = each((n / 100).max(100), |_| {
        black_box(crate::data::verify(7, 0, black_box(&buf)));
    });
    push("verification (--verify)", verify, 1.0, false);
    out
}

/// Nanoseconds of one queue + submit + reap through the trait object, on the null engine (it
/// reads nothing), over `n` calls; `None` where the engine cannot be opened (no /dev/null).
fn engine_calls(n: u64) -> Option<f64> {
    let file = std::fs::File::open("/dev/null").ok()?;
    let mut engine = crate::engine::open(
        EngineKind::Null,
        EngineSetup {
            handles: vec![Handle::File(std::sync::Arc::new(file))],
            pool: BufferPool::new(1, 4096),
            depth: 1,
            direct: false,
            options: Default::default(),
        },
    )
    .ok()?;
    let mut comps: Vec<Completion> = Vec::with_capacity(1);
    Some(each(n, |i| {
        let _ = engine.queue(Io {
            file: 0,
            token: 0,
            offset: i * 4096,
            len: 4096,
        });
        let _ = engine.submit();
        comps.clear();
        let _ = engine.reap_at_most(1, 1, &mut comps);
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_part_costs_something_and_verification_is_apart() {
        let shape = Shape {
            clock_reads_per_io: 2.0,
            ios_per_batch: 1.0,
            iops: 1e6,
            bs: 4096,
        };
        let parts = measure(&shape, 20_000);
        let names: Vec<&str> = parts.iter().map(|c| c.name).collect();
        for want in [
            "clock reads",
            "latency histogram",
            "per-second timeline",
            "depth accounting",
            "engine calls (null)",
            "verification (--verify)",
        ] {
            assert!(names.contains(&want), "{want} missing from {names:?}");
        }
        for c in &parts {
            assert!(c.ns_each > 0.0 && c.ns_each < 1e7, "{c:?}");
            assert!((c.ns_per_io - c.ns_each * c.per_io).abs() < 1e-9, "{c:?}");
        }
        let clock = parts.iter().find(|c| c.name == "clock reads").unwrap();
        assert_eq!(clock.per_io, 2.0);
        // Reading and hashing 4 KiB costs more than one clock read.
        let verify = parts.iter().find(|c| c.name.starts_with("verif")).unwrap();
        assert!(
            !verify.counted && verify.ns_each > clock.ns_each,
            "{parts:?}"
        );
    }
}
