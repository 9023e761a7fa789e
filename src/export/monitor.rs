//! What the monitor saw during a run, held against the run's own figures: per target's device,
//! the device's read IOPS in the same seconds as the run's timeline, the largest per-second gap,
//! and the request size and merges that explain a gap (readahead and merged buffered reads make
//! fewer, larger device requests); then the busiest thread groups and the monitor's own cost.

use crate::monitor::{MonitorRecord, State};
use crate::result::{Document, RunResult};
use std::collections::HashMap;
use std::fmt::Write;

/// One second of a run: its IOPS and its device's.
#[derive(Debug, Clone, PartialEq)]
pub struct SecondCheck {
    /// End of the second on the run's clock.
    pub t_s: f64,
    pub run_iops: f64,
    pub device_iops: f64,
}

impl SecondCheck {
    /// Device IOPS relative to the run's, minus one (0.02 = the device saw 2 % more).
    pub fn gap(&self) -> f64 {
        self.device_iops / self.run_iops.max(1e-9) - 1.0
    }
}

/// Every full second of `r`'s timeline beside the device's IOPS in the monitor's sample ending
/// at the same time (seconds the monitor has no sample for are left out).
pub fn per_second(r: &RunResult, rec: &MonitorRecord, device: &str) -> Vec<SecondCheck> {
    let mut prev = 0.0;
    let mut out = Vec::new();
    for tp in &r.timeline {
        let full = (tp.t_s - prev - 1.0).abs() < 1e-6;
        prev = tp.t_s;
        if !full {
            continue;
        }
        if let Some(dev) = rec.device_iops_at(device, tp.t_s) {
            out.push(SecondCheck {
                t_s: tp.t_s,
                run_iops: tp.iops,
                device_iops: dev,
            });
        }
    }
    out
}

/// The run's targets with the device each was read through and its figures.
pub fn target_devices(d: &Document) -> Vec<(String, String, &RunResult)> {
    if d.targets.is_empty() {
        return d
            .environment
            .device
            .name
            .iter()
            .map(|dev| {
                (
                    d.config.target.display().to_string(),
                    dev.clone(),
                    &d.result,
                )
            })
            .collect();
    }
    d.targets
        .iter()
        .filter_map(|t| {
            Some((
                t.name.clone(),
                t.environment.device.name.clone()?,
                t.result.as_ref()?,
            ))
        })
        .collect()
}

/// The monitor's lines under a run's report (empty when the run had no monitor).
pub fn monitor_summary(d: &Document) -> String {
    let Some(rec) = &d.monitor else {
        return String::new();
    };
    let mut s = String::new();
    for (name, dev, r) in target_devices(d) {
        let secs = per_second(r, rec, &dev);
        if secs.is_empty() {
            let _ = writeln!(s, "  monitor  {name} ({dev}): no full second to compare");
            continue;
        }
        let mean =
            |f: &dyn Fn(&SecondCheck) -> f64| secs.iter().map(f).sum::<f64>() / secs.len() as f64;
        let worst = secs
            .iter()
            .max_by(|a, b| a.gap().abs().total_cmp(&b.gap().abs()))
            .unwrap();
        let in_run: Vec<_> = rec
            .samples
            .iter()
            .filter(|x| x.t_s > 0.5 && x.t_s <= r.seconds + 0.5)
            .filter_map(|x| x.device(&dev))
            .collect();
        let n = in_run.len().max(1) as f64;
        let kib = in_run.iter().map(|x| x.read_kib_per_io).sum::<f64>() / n;
        let merges = in_run.iter().map(|x| x.read_merges_s).sum::<f64>() / n;
        let _ = writeln!(
            s,
            "  monitor  {name} ({dev}): device {:.0} reads/s vs run {:.0} IOPS over {} s, \
             per second within {:.1} % (largest gap at {:.0} s); {kib:.1} KiB per device read, \
             {merges:.0} merges/s",
            mean(&|c| c.device_iops),
            mean(&|c| c.run_iops),
            secs.len(),
            100.0 * worst.gap().abs(),
            worst.t_s
        );
        let bs_kib = d.config.bs as f64 / 1024.0;
        if kib > bs_kib * 1.05 || merges > 0.01 * mean(&|c| c.run_iops) {
            let _ = writeln!(
                s,
                "           the device read larger requests than the {bs_kib:.0} KiB blocks \
                 (readahead, merged reads): its reads/s is not the run's IOPS"
            );
        }
    }
    let mut groups: HashMap<String, u64> = HashMap::new();
    let mut samples = 0;
    for x in rec.samples.iter().filter(|x| x.t_s > 0.0) {
        samples += x.threads.thread_samples;
        for g in &x.threads.top {
            if matches!(g.state, State::Running | State::Disk) {
                let who = g.comm.clone().unwrap_or_else(|| g.kind.as_str().into());
                let key = format!("{who} {} {} {}", g.state.as_str(), g.syscall, g.wchan);
                *groups.entry(key).or_default() += g.samples;
            }
        }
    }
    let mut top: Vec<_> = groups.into_iter().collect();
    top.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    for (i, (k, n)) in top.iter().take(5).enumerate() {
        let _ = writeln!(
            s,
            "  {}  {:>5.2} threads {k}",
            if i == 0 { "threads" } else { "       " },
            *n as f64 / samples.max(1) as f64
        );
    }
    let _ = writeln!(
        s,
        "  monitor  {} samples; the sampler used {:.2} % of a core ({} thread samples/s){}",
        rec.samples.len(),
        rec.sampler_cpu_pct,
        rec.options.thread_hz,
        rec.notes
            .iter()
            .map(|n| format!("; {n}"))
            .collect::<String>()
    );
    s
}
