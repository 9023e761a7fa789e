//! Several targets in one run: the same workload on each, each target with its own workers and
//! engines, all behind one start barrier and one clock. Every target is checked before anything
//! is read (bad input for one is bad input for the run); a target that fails while running stops
//! only its own workers and is reported with its error beside the others' results. The
//! aggregate sums I/Os and bytes and merges the per-second histograms exactly; CPU is the
//! process's, measured once (it is not split by target, so each target's `cpu_us_per_io` is the
//! whole run's).

use super::{
    Ended, EngineFactory, Observer, ReadyTarget, aggregate, checks, execute, selfcost,
    start_monitor,
};
use crate::clock;
use crate::config::RunConfig;
use crate::env::Environment;
use crate::error::Result;
use crate::result::{Document, RunResult, RunnerCost, SCHEMA, TargetRun};
use crate::stats::Recorder;
use crate::targets::TargetSpec;
use std::collections::BTreeMap;

/// Run the workload `cfg` (its target aside) on every target at once, with readlab's own cost in
/// one target's shape measured after it (`super::null_cost`) and held against each result.
pub fn run_targets(
    cfg: &RunConfig,
    targets: &[TargetSpec],
    observer: &dyn Observer,
) -> Result<Document> {
    let open = super::registered(cfg.engine);
    targets_inner(cfg, targets, observer, &open, true)
}

/// [`run_targets`] with the engines `open` creates; readlab's own cost is not measured.
pub fn run_targets_with(
    cfg: &RunConfig,
    targets: &[TargetSpec],
    observer: &dyn Observer,
    open: &EngineFactory,
) -> Result<Document> {
    targets_inner(cfg, targets, observer, open, false)
}

fn targets_inner(
    cfg: &RunConfig,
    targets: &[TargetSpec],
    observer: &dyn Observer,
    open: &EngineFactory,
    self_cost: bool,
) -> Result<Document> {
    if !cfg.files.is_empty() {
        return Err(crate::error::Error::invalid(
            "a job over several files (filename=a:b) is read as one target; give no other \
             TARGETs or --name beside it",
        ));
    }
    crate::targets::check_distinct(targets)?;
    crate::targets::check_threads(cfg, targets.len())?;
    let cfgs: Vec<RunConfig> = targets
        .iter()
        .map(|t| RunConfig {
            target: t.path.clone(),
            ..cfg.clone()
        })
        .collect();
    let ready = cfgs
        .iter()
        .map(ReadyTarget::prepare)
        .collect::<Result<Vec<_>>>()?;
    let environments: Vec<Environment> = ready
        .iter()
        .map(|r| Environment::capture(r.job.source(), r.job.device.clone()))
        .collect();
    let monitor = start_monitor(observer, &cfgs)?;
    let timer_ns = clock::timer_cost_ns();
    // The shape of one target: the first's threads on the first's size.
    let first_size = ready[0].job.source().size();
    let done = execute(ready, observer, open, monitor.as_ref(), None)?;

    let mut runs = Vec::new();
    let mut all_outs = Vec::new();
    let mut merged: BTreeMap<u64, Recorder> = BTreeMap::new();
    let mut threads = 0;
    let mut warnings = Vec::new();
    let mut ok_groups = Vec::new();
    for (g, ((outs, intervals, mut ready), (spec, environment))) in done
        .groups
        .into_iter()
        .zip(targets.iter().zip(environments))
        .enumerate()
    {
        let ok = outs.iter().all(Result::is_ok);
        if ok {
            all_outs.extend(outs.iter().map(|o| Ok(o.as_ref().unwrap().clone())));
            for (s, rec) in &intervals {
                merged.entry(*s).or_default().merge(rec);
            }
            threads += ready.cfg.threads;
            ok_groups.push(g);
        }
        let r = aggregate::result(
            ready.cfg,
            outs,
            &intervals,
            ended_copy(&done.ended, g),
            timer_ns,
            std::mem::take(&mut ready.job.warnings),
        );
        let (result, error) = match r {
            Ok(mut r) => {
                checked(&ready, done.ended.irq.as_ref(), &mut r);
                warnings.extend(r.warnings.iter().map(|w| format!("{}: {w}", spec.name)));
                (Some(r), None)
            }
            Err(e) => {
                warnings.push(format!("{}: failed: {e}", spec.name));
                (None, Some(e.to_string()))
            }
        };
        runs.push(TargetRun {
            name: spec.name.clone(),
            config: ready.cfg.clone(),
            environment,
            result,
            error,
        });
    }

    let mut agg_cfg = RunConfig {
        target: crate::targets::joined(targets),
        ..cfg.clone()
    };
    agg_cfg.threads = threads.max(1);
    // The aggregate counts the targets that did not fail: so do its windows.
    let mut ended = done.ended;
    ended.samples = ended.samples.only(&ok_groups);
    let mut result = aggregate::result(&agg_cfg, all_outs, &merged, ended, timer_ns, warnings)?;
    result.label = cfg.label();
    checks::trust_window(&mut result);
    checks::trust_machine(&mut result);
    checks::trust_samples(&mut result);
    share_cpu(&result, &mut runs);
    let null_run = &super::null_run;
    if self_cost && let Some(c) = selfcost::for_run(&cfgs[0], first_size, &result, null_run) {
        let of = |r: &RunResult| RunnerCost::new(c.cpu_us_per_io, c.iops, r.cpu_us_per_io);
        result.runner_cost = of(&result);
        for r in runs.iter_mut().filter_map(|t| t.result.as_mut()) {
            r.runner_cost = of(r);
        }
    }
    agg_cfg.threads = cfg.threads;
    Ok(Document {
        schema: SCHEMA.into(),
        study: None,
        config: agg_cfg,
        environment: runs[0].environment.clone(),
        result,
        targets: runs,
        monitor: done.monitor,
        fleet: None,
    })
}

/// A target's result checked as a run's is: its window, its target, its samples, its polling.
fn checked(
    ready: &ReadyTarget,
    irq: Option<&(crate::irq::Snapshot, crate::irq::Snapshot)>,
    r: &mut RunResult,
) {
    checks::trust_window(r);
    checks::trust_target(ready.cfg, &ready.job.range(), r);
    checks::trust_samples(r);
    checks::trust_polling(ready.cfg, ready.irq.as_ref(), irq, r);
}

/// Each target's CPU per I/O, and its interval, are the whole run's: the CPU is the process's,
/// not split by target.
fn share_cpu(all: &RunResult, runs: &mut [TargetRun]) {
    for r in runs.iter_mut().filter_map(|t| t.result.as_mut()) {
        r.cpu_us_per_io = all.cpu_us_per_io;
        if let (Some(p), Some(whole)) = (&mut r.precision, &all.precision) {
            p.cpu_us_per_io = whole.cpu_us_per_io;
        }
    }
}

/// How the window ended, as target `g` saw it: the run's ending, CPU and times, the samples of
/// its own completions.
fn ended_copy(e: &Ended, g: usize) -> Ended {
    Ended {
        cpu: e.cpu.clone(),
        window: e.window,
        ended_by: e.ended_by,
        ramp_end: e.ramp_end,
        reached_end: e.reached_end,
        planned: e.planned,
        irq: e.irq.clone(),
        samples: e.samples.only(&[g]),
    }
}
