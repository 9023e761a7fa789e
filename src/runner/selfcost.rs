//! readlab's own cost per I/O in a run's shape, so that a result says how much of its CPU per I/O
//! is readlab rather than the engine, the kernel and the device: the runner itself (the same
//! worker loop, watch thread and aggregation as every run) drives the null engine, which reads
//! nothing, over a null source of the run's size, with the run's threads, depth, batch,
//! complete-min, blocks per request, block size, access, rate and sampling, for a short window
//! ([`WINDOW`]) and no ramp. Each shape is measured once per process: a study's or a tuner's
//! points that share a shape share the figure. The run itself is handed in ([`NullRun`]: the
//! runner's own), so that this module and the runner's do not name each other.
//!
//! What it leaves out: verification (the null engine's buffers hold no prepared data), the
//! engine's own options and threads (rings, a thread pool, SQ polling: the engine's cost, not the
//! loop's), the monitor. A run on several targets is measured in the shape of one target (its
//! threads), an NBD run on the null engine here (the network and the server are not readlab's
//! loop). A fleet's ranks each measure their own, with no exchange between them.

use crate::config::{Range, RunConfig};
use crate::engine::{EngineKind, EngineOptions};
use crate::error::{Error, Result};
use crate::result::{EndedBy, RunResult, RunnerCost};
use crate::source::{Source, Target, TargetKind};
use std::sync::Mutex;
use std::time::Duration;

/// How long the null engine runs in each shape: hundreds of thousands of I/Os in a closed loop,
/// and short beside any run it is added to.
pub const WINDOW: Duration = Duration::from_millis(150);

/// Runs a null engine's configuration on a source over a range, through the runner, quietly:
/// the run's figures.
pub(super) type NullRun<'a> = dyn Fn(&RunConfig, Box<dyn Source>, Range) -> Result<RunResult> + 'a;

/// What readlab's loop did on the null engine in one shape.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NullCost {
    /// CPU of readlab's threads per I/O, µs: the same computation as a run's `cpu_us_per_io`.
    pub cpu_us_per_io: f64,
    pub iops: f64,
}

/// What of a configuration readlab's loop costs depend on, the range read aside. The engine is
/// not part of it: the null engine stands in for every one.
#[derive(Debug, Clone, PartialEq)]
struct Loop {
    threads: usize,
    iodepth: usize,
    batch: usize,
    complete_min: usize,
    blocks_per_request: usize,
    bs: u64,
    rw: crate::config::Rw,
    rate: Option<crate::config::Rate>,
    sample_bytes: Option<u64>,
}

impl Loop {
    fn of(cfg: &RunConfig) -> Loop {
        Loop {
            threads: cfg.threads,
            iodepth: cfg.iodepth,
            batch: cfg.batch,
            complete_min: cfg.complete_min,
            blocks_per_request: cfg.blocks_per_request,
            bs: cfg.bs,
            rw: cfg.rw,
            rate: cfg.rate,
            sample_bytes: cfg.sample_bytes,
        }
    }
}

/// A shape as measured (the cache's key): the loop and the range it read.
#[derive(Debug, Clone, PartialEq)]
struct Measured {
    of: Loop,
    range: Range,
}

impl Measured {
    fn of(cfg: &RunConfig, range: Range) -> Measured {
        Measured {
            of: Loop::of(cfg),
            range,
        }
    }
}

/// Whether a run of `cfg` is followed by the measurement of readlab's own cost (every engine
/// but the null engine, whose own figures are it).
pub fn measures_self(cfg: &RunConfig) -> bool {
    cfg.engine != EngineKind::Null
}

/// Whether runs of `a` and `b` measure readlab's own cost in the same shape, so that the later
/// one of a process takes the earlier's figure without measuring (as far as their
/// configurations tell: the same target, range and loop).
pub fn same_shape(a: &RunConfig, b: &RunConfig) -> bool {
    (&a.target, a.offset, a.size) == (&b.target, b.offset, b.size) && Loop::of(a) == Loop::of(b)
}

/// The shapes measured in this process. Held while a shape is measured, so two measurements
/// never share the CPU.
static MEASURED: Mutex<Vec<(Measured, NullCost)>> = Mutex::new(Vec::new());

/// readlab's CPU per I/O and IOPS on the null engine in the shape of `cfg`, on a source of
/// `size` bytes (the run's target's), run by `run`: measured for [`WINDOW`] the first time this
/// process asks for that shape, then remembered. Bad input when `cfg` is not a valid run on such
/// a source.
pub(super) fn null_cost(cfg: &RunConfig, size: u64, run: &NullRun) -> Result<NullCost> {
    let (null_cfg, range) = null_config(cfg, size)?;
    cached(&MEASURED, Measured::of(&null_cfg, range), || {
        measure(&null_cfg, size, range, run)
    })
}

/// The figure of `shape` from `cache`, or `measure`d and kept (a failed measurement is not).
fn cached(
    cache: &Mutex<Vec<(Measured, NullCost)>>,
    shape: Measured,
    measure: impl FnOnce() -> Result<NullCost>,
) -> Result<NullCost> {
    let mut known = cache.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, c)) = known.iter().find(|(s, _)| *s == shape) {
        return Ok(*c);
    }
    let c = measure()?;
    known.push((shape, c));
    Ok(c)
}

/// The source the null engine "reads": `size` bytes behind `/dev/null`, which each worker opens
/// (the null engine never reads its handle).
fn null_source(size: u64) -> Target {
    Target {
        path: "/dev/null".into(),
        kind: TargetKind::File,
        size,
        dio_offset_align: 512,
        dio_mem_align: 512,
        direct_supported: true,
        prepared_id: None,
    }
}

/// `cfg`, checked as a run on a null source of `size` bytes (with its own engine, whose checks
/// it passed), turned into the null engine's run in the same shape; and the range it reads.
fn null_config(cfg: &RunConfig, size: u64) -> Result<(RunConfig, Range)> {
    let timing = RunConfig {
        target: "/dev/null".into(),
        runtime: WINDOW,
        ramp: Duration::ZERO,
        verify: false,
        fadvise: None,
        io_limit: None,
        loops: None,
        // readlab's loop without the pauses asked: a spin's CPU is the workload's, not readlab's.
        thinktime: None,
        stop_when_stable: None,
        ..cfg.clone()
    };
    let range = timing.check(&null_source(size))?;
    let null = RunConfig {
        engine: EngineKind::Null,
        options: EngineOptions::default(),
        direct: false,
        ..timing
    };
    Ok((null, range))
}

/// One run of the null engine in `cfg`'s shape on a null source of `size` bytes.
fn measure(cfg: &RunConfig, size: u64, range: Range, run: &NullRun) -> Result<NullCost> {
    let r = run(cfg, Box::new(null_source(size)), range)?;
    if r.ios == 0 {
        return Err(Error::Engine(
            "the null engine completed no I/O in its window".into(),
        ));
    }
    Ok(NullCost {
        cpu_us_per_io: r.cpu_us_per_io,
        iops: r.iops,
    })
}

/// Add readlab's own cost in `cfg`'s shape (on a source of `size` bytes, run by `run`) to
/// `result`, held against the result's CPU per I/O. Nothing for a run of the null engine (its
/// own figures are it), an interrupted run (the user asked to stop) or one that completed
/// nothing; nothing either when it cannot be measured: a run is never failed for its
/// self-measurement.
pub(super) fn attach(cfg: &RunConfig, size: u64, result: &mut RunResult, run: &NullRun) {
    if let Some(c) = for_run(cfg, size, result, run) {
        result.runner_cost = RunnerCost::new(c.cpu_us_per_io, c.iops, result.cpu_us_per_io);
    }
}

/// The null engine's figures for a run of `cfg` that produced `result`, when it gets them.
pub(super) fn for_run(
    cfg: &RunConfig,
    size: u64,
    result: &RunResult,
    run: &NullRun,
) -> Option<NullCost> {
    let wanted = measures_self(cfg) && result.ended_by != EndedBy::Interrupted && result.ios > 0;
    wanted.then(|| null_cost(cfg, size, run).ok()).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    fn shape(iodepth: usize) -> Measured {
        let mut cfg = RunConfig::new("/dev/null");
        cfg.engine = EngineKind::Libaio;
        cfg.iodepth = iodepth;
        null_config(&cfg, 1 << 20)
            .map(|(c, r)| Measured::of(&c, r))
            .unwrap()
    }

    /// A result as the runner's would be, with `cpu` µs per I/O over `ios`.
    fn result(cpu: f64, ios: u64) -> RunResult {
        let mut r = crate::fixture::first::<crate::result::Document>().result;
        (r.cpu_us_per_io, r.ios, r.ended_by) = (cpu, ios, EndedBy::Runtime);
        r
    }

    fn never(_: &RunConfig, _: Box<dyn Source>, _: Range) -> Result<RunResult> {
        panic!("not to be run")
    }

    #[test]
    fn a_shape_is_measured_once_a_failure_not_kept() {
        let cache = Mutex::new(Vec::new());
        let calls = Cell::new(0);
        let measure = |cpu: f64| {
            calls.set(calls.get() + 1);
            Ok(NullCost {
                cpu_us_per_io: cpu,
                iops: 1e6,
            })
        };
        let a = cached(&cache, shape(8), || measure(0.1)).unwrap();
        let again = cached(&cache, shape(8), || measure(0.5)).unwrap();
        assert_eq!((a, again, calls.get()), (again, a, 1));
        assert_eq!(a.cpu_us_per_io, 0.1);
        // Another depth is another shape.
        let other = cached(&cache, shape(16), || measure(0.2)).unwrap();
        assert_eq!((other.cpu_us_per_io, calls.get()), (0.2, 2));
        // A failed measurement is tried again next time.
        let failed = cached(&cache, shape(32), || Err(Error::Engine("no".into())));
        assert!(failed.is_err());
        let c = cached(&cache, shape(32), || measure(0.3)).unwrap();
        assert_eq!((c.cpu_us_per_io, calls.get()), (0.3, 3));
    }

    #[test]
    fn the_engine_is_not_part_of_the_shape_the_rest_is() {
        let mut cfg = RunConfig::new("/x");
        cfg.engine = EngineKind::Pvsync2;
        let (n, r) = null_config(&cfg, 1 << 20).unwrap();
        assert_eq!(n.engine, EngineKind::Null);
        assert_eq!(n.runtime, WINDOW);
        let mut psync = cfg.clone();
        psync.engine = EngineKind::Psync;
        let (p, rp) = null_config(&psync, 1 << 20).unwrap();
        assert_eq!(Measured::of(&n, r), Measured::of(&p, rp));
        let mut bs = psync.clone();
        bs.bs = 8192;
        let (b, rb) = null_config(&bs, 1 << 20).unwrap();
        assert_ne!(Measured::of(&n, r), Measured::of(&b, rb));
    }

    #[test]
    fn a_shape_no_run_could_have_is_refused() {
        let mut cfg = RunConfig::new("/x");
        cfg.bs = 1 << 20;
        assert!(null_cost(&cfg, 4096, &never).unwrap_err().is_bad_input());
    }

    #[test]
    fn the_null_engine_gets_the_runs_shape_and_its_figures_are_held_against_the_run() {
        let mut cfg = RunConfig::new("/x");
        cfg.engine = EngineKind::Libaio;
        (cfg.iodepth, cfg.batch, cfg.complete_min, cfg.threads) = (8, 4, 2, 3);
        (cfg.verify, cfg.ramp) = (true, Duration::from_secs(2));
        cfg.blocks_per_request = 2;
        // A shape no other test asks for: the process's cache is shared.
        cfg.bs = 12288;
        let seen = Mutex::new(Vec::new());
        let run = |c: &RunConfig, s: Box<dyn Source>, r: Range| {
            seen.lock().unwrap().push((c.clone(), s.size(), r));
            Ok(result(0.25, 1000))
        };
        let mut r = result(1.0, 5000);
        attach(&cfg, 64 << 20, &mut r, &run);
        let own = r.runner_cost.expect("measured");
        assert_eq!((own.cpu_us_per_io, own.share_of_cpu), (0.25, 0.25));
        let seen = seen.into_inner().unwrap();
        assert_eq!(seen.len(), 1);
        let (c, size, range) = &seen[0];
        assert_eq!(
            (c.engine, c.direct, c.verify),
            (EngineKind::Null, false, false)
        );
        assert_eq!((c.ramp, c.runtime), (Duration::ZERO, WINDOW));
        let shape = |c: &RunConfig| {
            let s = (c.threads, c.iodepth, c.batch, c.complete_min);
            (s, c.blocks_per_request, c.bs, c.rw)
        };
        assert_eq!(shape(c), shape(&cfg));
        assert_eq!((*size, range.len), (64 << 20, (64 << 20) / 12288 * 12288));
        // The same shape again: from memory, not run again, held against this run's CPU.
        let mut r2 = result(0.5, 5000);
        attach(&cfg, 64 << 20, &mut r2, &never);
        assert_eq!(r2.runner_cost.map(|o| o.share_of_cpu), Some(0.5));
    }

    #[test]
    fn nothing_for_null_runs_interrupted_runs_empty_runs_or_failed_measurements() {
        let cfg = RunConfig::new("/x");
        let mut r = result(1.0, 1000);
        r.ended_by = EndedBy::Interrupted;
        assert_eq!(for_run(&cfg, 1 << 20, &r, &never), None);
        let mut r = result(1.0, 0);
        assert_eq!(for_run(&cfg, 1 << 20, &r, &never), None);
        r.ios = 1000;
        let null = RunConfig {
            engine: EngineKind::Null,
            ..cfg.clone()
        };
        assert_eq!(for_run(&null, 1 << 20, &r, &never), None);
        // A measurement that fails leaves the run without one, and the run as it was.
        let failing = |_: &RunConfig, _: Box<dyn Source>, _: Range| -> Result<RunResult> {
            Err(Error::Engine("no".into()))
        };
        let mut other = cfg.clone();
        other.bs = 20480;
        let before = r.clone();
        attach(&other, 1 << 20, &mut r, &failing);
        assert_eq!(r, before);
    }
}
