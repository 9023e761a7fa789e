//! The measured window's samples and the precision they give, on runs of the null engine: a
//! second of it has windows enough for an interval that holds its IOPS, and windows whose I/Os
//! are the run's; a fifth of a second has none; each target of a multi-target run gets its own.

use super::{ReadyTarget, Silent, aggregate, execute, registered, run_targets_with};
use crate::config::RunConfig;
use crate::engine::EngineKind;
use crate::estimate::Estimate;
use crate::result::RunResult;
use crate::targets::TargetSpec;
use std::io::Write;
use std::time::Duration;

/// A 1 MiB file to point the null engine at (it reads nothing).
fn target() -> tempfile::NamedTempFile {
    let mut f = tempfile::NamedTempFile::new().unwrap();
    f.write_all(&vec![0u8; 1 << 20]).unwrap();
    f.flush().unwrap();
    f
}

/// One null-engine thread for `runtime`, no ramp.
fn config(f: &tempfile::NamedTempFile, runtime: Duration) -> RunConfig {
    RunConfig {
        engine: EngineKind::Null,
        direct: false,
        runtime,
        ..RunConfig::new(f.path())
    }
}

fn holds(e: &Estimate) -> bool {
    matches!((e.lo, e.hi), (Some(lo), Some(hi)) if lo <= e.value && e.value <= hi)
}

/// The run's result, and the I/Os its windows counted.
fn run(cfg: &RunConfig) -> (RunResult, u64) {
    let ready = ReadyTarget::prepare(cfg).unwrap();
    let open = registered(cfg.engine);
    let mut done = execute(vec![ready], &Silent, &open, None, None).unwrap();
    let (outs, intervals, _) = done.groups.pop().unwrap();
    let (samples, ramp_end) = (done.ended.samples.clone(), done.ended.ramp_end);
    let r = aggregate::result(cfg, outs, &intervals, done.ended, 0.0, Vec::new()).unwrap();
    let until = ramp_end + Duration::from_secs_f64(r.seconds);
    let ios = samples.windows(until).iter().map(|w| w.ios).sum();
    (r, ios)
}

#[test]
fn a_second_has_windows_and_an_interval_that_holds_its_iops() {
    let f = target();
    let (r, window_ios) = run(&config(&f, Duration::from_secs(1)));
    assert!(r.ios > 1000, "{}", r.ios);
    let diff = (window_ios as f64 - r.ios as f64).abs();
    assert!(diff <= 0.01 * r.ios as f64, "{window_ios} vs {}", r.ios);
    let p = r.precision.clone().expect("a second of windows");
    assert!(p.windows >= 8, "{p:?}");
    assert!(p.batches >= crate::estimate::MIN_BATCHES, "{p:?}");
    assert_eq!(p.window_s, 0.1);
    assert_eq!(p.iops.value, r.iops);
    assert!(holds(&p.iops), "{:?}", p.iops);
    let cpu = p.cpu_us_per_io.expect("CPU per I/O");
    assert_eq!(cpu.value, r.cpu_us_per_io);
    assert!(holds(&cpu), "{cpu:?}");
    let l = &r.latency;
    for (e, v) in [(&p.p50_ns, l.p50_ns), (&p.p99_ns, l.p99_ns)] {
        assert_eq!(e.value, v as f64);
        assert!(holds(e), "{e:?}");
    }
    // The document carries it.
    let back: RunResult = serde_json::from_str(&serde_json::to_string(&r).unwrap()).unwrap();
    assert_eq!(back.precision, r.precision);
}

#[test]
fn a_fifth_of_a_second_is_too_short_for_an_interval() {
    let f = target();
    let (r, _) = run(&config(&f, Duration::from_millis(200)));
    assert!(r.ios > 0);
    assert_eq!(r.precision, None);
    assert!(!serde_json::to_string(&r).unwrap().contains("precision"));
}

#[test]
fn each_target_gets_its_own_interval_and_shares_the_cpu() {
    let (a, b) = (target(), target());
    let specs = [("a", &a), ("b", &b)].map(|(name, f)| TargetSpec {
        name: name.into(),
        path: f.path().into(),
    });
    let cfg = config(&a, Duration::from_secs(1));
    let doc = run_targets_with(&cfg, &specs, &Silent, &registered(cfg.engine)).unwrap();
    let all = doc.result.precision.expect("the aggregate's");
    assert!(holds(&all.iops), "{:?}", all.iops);
    for t in &doc.targets {
        let r = t.result.as_ref().unwrap();
        let p = r.precision.as_ref().expect("each target's");
        assert_eq!(p.iops.value, r.iops);
        assert!(holds(&p.iops), "{}: {:?}", t.name, p.iops);
        assert_eq!(p.cpu_us_per_io, all.cpu_us_per_io);
    }
}
