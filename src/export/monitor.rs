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

    /// The device's requests relative to `factor` device requests per run I/O, minus one: how far
    /// this second is from the split (or merge) the whole run shows.
    pub fn gap_from(&self, factor: f64) -> f64 {
        self.device_iops / (self.run_iops * factor).max(1e-9) - 1.0
    }
}

/// Device requests per readlab request over `secs`: 2 when the device splits each read in two
/// (a 1 MiB read through 512 KiB requests), below 1 when it merges reads (readahead), and
/// `blocks_per_request` blocks of one readlab request counting as that many reads.
pub fn split_factor(secs: &[SecondCheck], blocks_per_request: usize) -> f64 {
    let run: f64 = secs.iter().map(|c| c.run_iops).sum();
    let dev: f64 = secs.iter().map(|c| c.device_iops).sum();
    dev / run.max(1e-9) * blocks_per_request.max(1) as f64
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
                    crate::nbd::shown(&d.config.target.display().to_string()),
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
        let in_run: Vec<_> = rec
            .samples
            .iter()
            .filter(|x| x.t_s > 0.5 && x.t_s <= r.seconds + 0.5)
            .filter_map(|x| x.device(&dev))
            .collect();
        let n = in_run.len().max(1) as f64;
        let kib = in_run.iter().map(|x| x.read_kib_per_io).sum::<f64>() / n;
        let merges = in_run.iter().map(|x| x.read_merges_s).sum::<f64>() / n;
        let bpr = d.config.blocks_per_request.max(1) as f64;
        // readlab's requests per second (each of `blocks_per_request` reads) and the device's.
        let run_rps = mean(&|c| c.run_iops) / bpr;
        let dev_rps = mean(&|c| c.device_iops);
        let factor = split_factor(&secs, d.config.blocks_per_request);
        // Each second against the run's own split: a device that splits every read in two is
        // steady at 2 device requests per readlab request, not "100 % off".
        let per_io = factor / bpr;
        let worst = secs
            .iter()
            .max_by(|a, b| {
                a.gap_from(per_io)
                    .abs()
                    .total_cmp(&b.gap_from(per_io).abs())
            })
            .unwrap();
        let req_kib = d.config.bs as f64 * bpr / 1024.0;
        let _ = write!(
            s,
            "  monitor  {name} ({dev}): device {dev_rps:.0} requests/s for readlab's {run_rps:.0} \
             requests/s over {} s",
            secs.len()
        );
        if (factor - 1.0).abs() > 0.05 {
            let _ = write!(
                s,
                ": {factor:.2} device requests per readlab request ({req_kib:.0} KiB {} \
                 {kib:.1} KiB device requests)",
                if factor > 1.0 {
                    "each, split into"
                } else {
                    "each, merged into"
                }
            );
        }
        let _ = writeln!(
            s,
            "; per second within {:.1} %{} (largest gap at {:.0} s); {kib:.1} KiB per device \
             request, {merges:.0} merges/s",
            100.0 * worst.gap_from(per_io).abs(),
            if (factor - 1.0).abs() > 0.05 {
                " of that"
            } else {
                ""
            },
            worst.t_s
        );
        let bs_kib = d.config.bs as f64 / 1024.0;
        if kib > bs_kib * 1.05 || merges > 0.01 * mean(&|c| c.run_iops) {
            let _ = writeln!(
                s,
                "           the device read larger requests than the {bs_kib:.0} KiB blocks \
                 (readahead, merged reads): its requests/s is not readlab's"
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::{DeviceSample, MonitorOptions, Sample};
    use crate::stats::TimelinePoint;

    /// A run of 1 MiB reads at 1,000 a second whose device splits each read into two 512 KiB
    /// requests: `blocks_per_request` readlab blocks per request.
    fn split_run(blocks_per_request: usize) -> Document {
        let mut d: Document = crate::fixture::first();
        d.config.bs = 1 << 20;
        d.config.blocks_per_request = blocks_per_request;
        d.result.timeline = (1..=3)
            .map(|t| TimelinePoint {
                t_s: t as f64,
                ios: 1000,
                iops: 1000.0,
                mib_s: 1000.0,
                p50_ns: 1,
                p99_ns: 1,
                max_ns: 1,
            })
            .collect();
        let dev = d.environment.device.name.clone().unwrap();
        d.monitor = Some(MonitorRecord {
            options: MonitorOptions::new(vec![dev.clone()], None),
            samples: (1..=3)
                .map(|t| Sample {
                    t_s: t as f64,
                    interval_s: 1.0,
                    devices: vec![DeviceSample {
                        name: dev.clone(),
                        read_iops: if t == 2 { 2020.0 } else { 2000.0 },
                        read_kib_per_io: 512.0,
                        ..Default::default()
                    }],
                    machine: Default::default(),
                    threads: Default::default(),
                    process_ended: false,
                    sampler_cpu_pct: 0.1,
                })
                .collect(),
            sampler_cpu_pct: 0.1,
            notes: Vec::new(),
        });
        d
    }

    /// The device saw twice the requests: the check says so in requests, with the split
    /// factor, and measures each second against that split (never "within 100 %").
    #[test]
    fn a_device_splitting_each_read_in_two_is_said_in_requests() {
        let s = monitor_summary(&split_run(1));
        assert!(
            s.contains(
                "device 2007 requests/s for readlab's 1000 requests/s over 3 s: 2.01 device \
                 requests per readlab request (1024 KiB each, split into 512.0 KiB device requests)"
            ),
            "{s}"
        );
        assert!(s.contains("per second within 0.7 % of that"), "{s}");
        assert!(!s.contains("within 100"), "{s}");
        // Four 1 MiB blocks per readlab request: 8 device requests each.
        let s = monitor_summary(&split_run(4));
        assert!(
            s.contains("for readlab's 250 requests/s over 3 s: 8.03 device requests per readlab"),
            "{s}"
        );
        assert!(s.contains("(4096 KiB each, split into 512.0 KiB"), "{s}");
    }
}
