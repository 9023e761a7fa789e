//! The ranks' results made into one: the fleet's aggregate [`RunResult`] (throughput summed,
//! latency histograms merged exactly, CPU summed with machine-wide figures once per host,
//! timelines summed second by second) and the [`FleetRecord`] that keeps every rank's own result,
//! when it started against the others, and the window all of them measured together.

use crate::cpu::{CpuUsage, KindCpu};
use crate::error::{Error, Result};
use crate::result::fleet::{FleetMember, FleetRecord, FleetStart};
use crate::result::{EndedBy, ErrorSummary, RunResult, VerifySummary};
use crate::stats::{self, Recorder, TimelinePoint};
use crate::units::{Style, format_ns};
use std::collections::BTreeMap;
use std::time::Duration;

#[cfg(test)]
use super::gate::NOTICE;

/// What each aggregate figure is, stored in the record for whoever reads the document.
pub const AGGREGATE: &str = "IOPS, MB/s, I/Os and bytes summed over the ranks (each over its own window; the windows start at one agreed instant); \
latency from the ranks' HDR histograms merged exactly (min, max and mean exact); CPU summed, machine-wide figures once per host; \
timeline summed second by second (a second's p50/p99/max: the slowest rank's); achieved depth: mean over ranks; \
service and hand-off latency and open-loop figures: per rank only";

/// A rank's start beyond which the ranks are not called together.
const SKEW_GOAL: Duration = Duration::from_millis(1);

/// The aggregate of the ranks' results (in rank order, rank 0 first).
pub fn aggregate(members: &[FleetMember]) -> Result<RunResult> {
    let first = &members
        .first()
        .ok_or_else(|| Error::Mpi("a fleet of no ranks".into()))?
        .result;
    let results: Vec<&RunResult> = members.iter().map(|m| &m.result).collect();
    let mut lat = Recorder::default();
    for (m, r) in members.iter().zip(&results) {
        if r.latency.count == 0 {
            continue;
        }
        let h = stats::decode_histogram(&r.histogram).ok_or_else(|| {
            Error::Mpi(format!(
                "rank {}: its latency histogram is unreadable",
                m.rank
            ))
        })?;
        lat.hist.add(&h).map_err(|e| {
            Error::Mpi(format!(
                "rank {}: its histogram does not merge ({e:?})",
                m.rank
            ))
        })?;
        lat.min = lat.min.min(r.latency.min_ns);
        lat.max = lat.max.max(r.latency.max_ns);
        lat.sum += (r.latency.mean_ns * r.latency.count as f64).round() as u128;
        lat.count += r.latency.count;
    }
    let sum = |f: &dyn Fn(&RunResult) -> f64| results.iter().map(|r| f(r)).sum::<f64>();
    let n = results.len() as f64;
    let ios: u64 = results.iter().map(|r| r.ios).sum();
    let depths: Vec<f64> = results.iter().filter_map(|r| r.achieved_depth).collect();
    let cpu = cpu(members);
    let total_cpu_s: f64 = results.iter().map(|r| r.cpu.process_total_s()).sum();
    let mut warnings = member_warnings(members);
    warnings.extend(shared_host_load(members));
    Ok(RunResult {
        offset_samples: Vec::new(),
        label: first.label.clone(),
        seconds: sum(&|r| r.seconds) / n,
        ios,
        requests: results.iter().map(|r| r.requests).sum(),
        bytes: results.iter().map(|r| r.bytes).sum(),
        iops: sum(&|r| r.iops),
        requests_per_s: sum(&|r| r.requests_per_s),
        mb_s: sum(&|r| r.mb_s),
        mib_s: sum(&|r| r.mib_s),
        latency: lat.summary(),
        achieved_depth: (!depths.is_empty())
            .then(|| depths.iter().sum::<f64>() / depths.len() as f64),
        timeline: timeline(&results),
        cpu,
        cpu_us_per_io: if ios > 0 {
            total_cpu_s * 1e6 / ios as f64
        } else {
            0.0
        },
        timer: first.timer.clone(),
        // Each rank's own result carries its loop's cost; the fleet's is not one shape's.
        runner_cost: None,
        service_latency: None,
        handoff_latency: None,
        engine_features: first.engine_features.clone(),
        completions: None,
        open_loop: None,
        think: None,
        errors: errors(members),
        verify: verify(&results),
        ended_by: results
            .iter()
            .map(|r| r.ended_by)
            .find(|e| *e == EndedBy::Interrupted)
            .or_else(|| {
                results
                    .iter()
                    .map(|r| r.ended_by)
                    .find(|e| *e != EndedBy::Runtime)
            })
            .unwrap_or(EndedBy::Runtime),
        warnings,
        repeat: None,
        histogram: stats::encode_histogram(&lat.hist),
        precision: None,
        race: None,
        // Each rank's result keeps its own sizes' figures.
        by_size: Vec::new(),
    })
}

/// Second by second: I/Os and rates summed, the slowest rank's percentiles.
fn timeline(results: &[&RunResult]) -> Vec<TimelinePoint> {
    let len = results.iter().map(|r| r.timeline.len()).max().unwrap_or(0);
    (0..len)
        .map(|i| {
            let at: Vec<&TimelinePoint> =
                results.iter().filter_map(|r| r.timeline.get(i)).collect();
            TimelinePoint {
                t_s: at.iter().map(|p| p.t_s).fold(0.0, f64::max),
                ios: at.iter().map(|p| p.ios).sum(),
                iops: at.iter().map(|p| p.iops).sum(),
                mib_s: at.iter().map(|p| p.mib_s).sum(),
                p50_ns: at.iter().map(|p| p.p50_ns).max().unwrap_or(0),
                p99_ns: at.iter().map(|p| p.p99_ns).max().unwrap_or(0),
                max_ns: at.iter().map(|p| p.max_ns).max().unwrap_or(0),
            }
        })
        .collect()
}

fn add_kind(a: &mut KindCpu, b: &KindCpu) {
    a.threads += b.threads;
    a.user_s += b.user_s;
    a.sys_s += b.sys_s;
    a.total_s += b.total_s;
    a.pct_of_core += b.pct_of_core;
}

/// The ranks' CPU summed; what each rank saw of its whole machine counted once per host (the
/// mean of the host's ranks), and a host's "other processes" without its own other ranks.
fn cpu(members: &[FleetMember]) -> CpuUsage {
    let mut out = CpuUsage::default();
    let mut hosts: BTreeMap<&str, Vec<&CpuUsage>> = BTreeMap::new();
    for m in members {
        let c = &m.result.cpu;
        add_kind(&mut out.app, &c.app);
        add_kind(&mut out.sqpoll, &c.sqpoll);
        add_kind(&mut out.io_worker, &c.io_worker);
        out.process_pct_of_core += c.process_pct_of_core;
        out.window_s += c.window_s / members.len() as f64;
        hosts.entry(m.host.as_str()).or_default().push(c);
    }
    for cs in hosts.values() {
        let n = cs.len() as f64;
        let own: f64 = cs.iter().map(|c| c.process_pct_of_core).sum();
        out.machine_busy_pct_of_core +=
            cs.iter().map(|c| c.machine_busy_pct_of_core).sum::<f64>() / n;
        out.machine_cores += cs.iter().map(|c| c.machine_cores).max().unwrap_or(0);
        out.steal_pct_of_core += cs.iter().map(|c| c.steal_pct_of_core).sum::<f64>() / n;
        out.other_processes_pct_of_core += cs
            .iter()
            .map(|c| (c.other_processes_pct_of_core - (own - c.process_pct_of_core)).max(0.0))
            .fold(f64::INFINITY, f64::min);
    }
    out
}

fn errors(members: &[FleetMember]) -> ErrorSummary {
    let mut e = ErrorSummary::default();
    for m in members {
        let r = &m.result.errors;
        e.count += r.count;
        e.eagain += r.eagain;
        e.first.extend(r.first.iter().map(|x| {
            let mut x = x.clone();
            x.message = format!("rank {} ({}): {}", m.rank, m.target, x.message);
            x
        }));
    }
    e.first.truncate(16);
    e
}

fn verify(results: &[&RunResult]) -> Option<VerifySummary> {
    let mut out: Option<VerifySummary> = None;
    for v in results.iter().filter_map(|r| r.verify.as_ref()) {
        let o = out.get_or_insert_with(VerifySummary::default);
        o.checked_ios += v.checked_ios;
        o.mismatches += v.mismatches;
        o.first.extend(v.first.iter().cloned());
    }
    if let Some(o) = &mut out {
        o.first.truncate(16);
    }
    out
}

/// Other load on each host that runs several ranks, not counting those ranks (each of them
/// counted its siblings as other load): the least any of them saw beyond its siblings.
fn shared_host_load(members: &[FleetMember]) -> Vec<String> {
    let mut hosts: BTreeMap<&str, Vec<&FleetMember>> = BTreeMap::new();
    for m in members {
        hosts.entry(m.host.as_str()).or_default().push(m);
    }
    let mut out = Vec::new();
    for (host, ms) in hosts.into_iter().filter(|(_, ms)| ms.len() > 1) {
        let own: f64 = ms.iter().map(|m| m.result.cpu.process_pct_of_core).sum();
        let mut cpu = ms[0].result.cpu.clone();
        cpu.other_processes_pct_of_core = ms
            .iter()
            .map(|m| {
                let c = &m.result.cpu;
                (c.other_processes_pct_of_core - (own - c.process_pct_of_core)).max(0.0)
            })
            .fold(f64::INFINITY, f64::min);
        // "readlab itself": the host's ranks together.
        cpu.app.pct_of_core = ms.iter().map(|m| m.result.cpu.threads_pct_of_core()).sum();
        cpu.sqpoll.pct_of_core = 0.0;
        cpu.io_worker.pct_of_core = 0.0;
        let seconds = ms.iter().map(|m| m.result.seconds).sum::<f64>() / ms.len() as f64;
        if let Some(w) = crate::runner::other_load(&cpu, seconds) {
            let ranks: Vec<String> = ms.iter().map(|m| m.rank.to_string()).collect();
            out.push(format!(
                "host {host} (ranks {}, not counting them): {w}",
                ranks.join(", ")
            ));
        }
    }
    out
}

/// The ranks' warnings, each once: said by every rank, or by the ranks named. A rank that shares
/// its host with other ranks counted them as other load: that warning is left to the aggregate,
/// which does not.
fn member_warnings(members: &[FleetMember]) -> Vec<String> {
    let mut by: Vec<(&str, Vec<usize>)> = Vec::new();
    for m in members {
        let siblings = members.iter().filter(|o| o.host == m.host).count() > 1;
        for w in &m.result.warnings {
            if siblings && w.starts_with(crate::runner::OTHER_LOAD) {
                continue;
            }
            match by.iter_mut().find(|(t, _)| *t == w.as_str()) {
                Some((_, ranks)) => ranks.push(m.rank),
                None => by.push((w, vec![m.rank])),
            }
        }
    }
    by.into_iter()
        .map(|(w, ranks)| {
            if ranks.len() == members.len() && members.len() > 1 {
                format!("every rank: {w}")
            } else {
                let names: Vec<String> = ranks.iter().map(|r| r.to_string()).collect();
                format!(
                    "rank{} {}: {w}",
                    if ranks.len() > 1 { "s" } else { "" },
                    names.join(", ")
                )
            }
        })
        .collect()
}

/// One rank as it reaches rank 0: its part of the record, and when it started on rank 0's clock.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Arrival {
    pub member: FleetMember,
    pub started_root_ns: i64,
}

/// The aggregate and the fleet record of the ranks' arrivals (in rank order): starts relative to
/// the earliest, the skew, the window every rank measured, warnings when the ranks were not
/// together.
pub fn assemble(
    target: &str,
    ramp: Duration,
    notice: Duration,
    arrivals: Vec<Arrival>,
) -> Result<(RunResult, FleetRecord)> {
    let earliest = arrivals
        .iter()
        .map(|a| a.started_root_ns)
        .min()
        .unwrap_or(0);
    let latest = arrivals
        .iter()
        .map(|a| a.started_root_ns)
        .max()
        .unwrap_or(0);
    let ramp_ns = ramp.as_nanos() as f64;
    let window_start = latest as f64 + ramp_ns;
    let window_end = arrivals
        .iter()
        .map(|a| a.started_root_ns as f64 + ramp_ns + a.member.result.seconds * 1e9)
        .fold(f64::INFINITY, f64::min);
    let common_window_s = ((window_end - window_start) / 1e9).max(0.0);
    let mut members: Vec<FleetMember> = arrivals
        .into_iter()
        .map(|a| FleetMember {
            start_ns: (a.started_root_ns - earliest) as u64,
            ..a.member
        })
        .collect();
    members.sort_by_key(|m| m.rank);
    let mut hosts: Vec<String> = Vec::new();
    for m in &members {
        if !hosts.contains(&m.host) {
            hosts.push(m.host.clone());
        }
    }
    let start = FleetStart {
        skew_ns: (latest - earliest) as u64,
        clock_uncertainty_ns: members
            .iter()
            .map(|m| m.clock_uncertainty_ns)
            .max()
            .unwrap_or(0),
        notice_ns: notice.as_nanos() as u64,
    };
    let mut result = aggregate(&members)?;
    result
        .warnings
        .extend(together(&start, common_window_s, &members));
    Ok((
        result,
        FleetRecord {
            ranks: members.len(),
            hosts,
            target: target.to_string(),
            start,
            common_window_s,
            aggregate: AGGREGATE.into(),
            members,
            idle: Vec::new(),
        },
    ))
}

/// Warnings when the ranks did not measure together: a wide start, a window cut short.
fn together(start: &FleetStart, common_s: f64, members: &[FleetMember]) -> Vec<String> {
    let mut w = Vec::new();
    if start.skew_ns > SKEW_GOAL.as_nanos() as u64 {
        let ordinary: Vec<String> = members
            .iter()
            .filter(|m| !m.realtime_wait)
            .map(|m| m.rank.to_string())
            .collect();
        let why = if ordinary.is_empty() {
            String::new()
        } else {
            format!(
                "; rank{} {} waited at ordinary priority (real-time priority, SCHED_FIFO, is not permitted there: give it CAP_SYS_NICE or an RLIMIT_RTPRIO)",
                if ordinary.len() > 1 { "s" } else { "" },
                ordinary.join(", ")
            )
        };
        w.push(format!(
            "the ranks started up to {} apart (readlab aims under {}): a rank woke late, the machines are loaded, or their clocks disagree{why}",
            format_ns(start.skew_ns as f64, Style::Table),
            format_ns(SKEW_GOAL.as_nanos() as f64, Style::Table)
        ));
    }
    if start.clock_uncertainty_ns > SKEW_GOAL.as_nanos() as u64 {
        w.push(format!(
            "the hosts' clocks are known to each other only within ±{} (from exchanges over MPI): the start skew is uncertain by as much",
            format_ns(start.clock_uncertainty_ns as f64, Style::Table)
        ));
    }
    let shortest = members
        .iter()
        .map(|m| m.result.seconds)
        .fold(f64::INFINITY, f64::min);
    let longest = members.iter().map(|m| m.result.seconds).fold(0.0, f64::max);
    if members.len() > 1 && shortest.is_finite() && common_s < 0.99 * longest {
        let early: Vec<String> = members
            .iter()
            .filter(|m| m.result.seconds <= shortest * 1.001)
            .map(|m| format!("rank {} ({})", m.rank, m.result.ended_by))
            .collect();
        w.push(format!(
            "the ranks measured together for only {common_s:.3} s of {longest:.3} s; ended first: {}",
            early.join(", ")
        ));
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ranks 0, 1, 2 on two hosts, their results taken from real runs.
    fn arrivals(starts: [i64; 3]) -> Vec<Arrival> {
        crate::result::sample_members()
            .1
            .into_iter()
            .zip(starts)
            .map(|(member, start)| Arrival {
                member,
                started_root_ns: start,
            })
            .collect()
    }

    #[test]
    fn the_aggregate_sums_throughput_and_merges_histograms_exactly() {
        let a = arrivals([1_000, 1_200, 1_050]);
        let rs: Vec<RunResult> = a.iter().map(|a| a.member.result.clone()).collect();
        let (agg, rec) = assemble("/dev/t{rank}", Duration::ZERO, NOTICE, a).unwrap();
        let counts: u64 = rs.iter().map(|r| r.latency.count).sum();
        assert_eq!(agg.latency.count, counts);
        let merged = stats::decode_histogram(&agg.histogram).unwrap();
        assert_eq!(merged.len(), counts);
        let iops: f64 = rs.iter().map(|r| r.iops).sum();
        assert!((agg.iops - iops).abs() < 1e-9 * iops);
        assert_eq!(agg.ios, rs.iter().map(|r| r.ios).sum::<u64>());
        assert_eq!(agg.bytes, rs.iter().map(|r| r.bytes).sum::<u64>());
        assert_eq!(
            agg.latency.min_ns,
            rs.iter().map(|r| r.latency.min_ns).min().unwrap()
        );
        assert_eq!(
            agg.latency.max_ns,
            rs.iter().map(|r| r.latency.max_ns).max().unwrap()
        );
        let mean = rs
            .iter()
            .map(|r| r.latency.mean_ns * r.latency.count as f64)
            .sum::<f64>()
            / counts as f64;
        assert!((agg.latency.mean_ns - mean).abs() < 1.0);
        let l = &agg.latency;
        assert!(l.min_ns <= l.p50_ns && l.p50_ns <= l.p99_ns && l.p9999_ns <= l.max_ns);
        // The timeline: every second's I/Os summed.
        let ios_t: u64 = agg.timeline.iter().map(|p| p.ios).sum();
        let each: u64 = rs.iter().flat_map(|r| &r.timeline).map(|p| p.ios).sum();
        assert_eq!(ios_t, each);
        // Machine-wide CPU once per host: two hosts.
        let by_host =
            rs[0].cpu.machine_cores.max(rs[1].cpu.machine_cores) + rs[2].cpu.machine_cores;
        assert_eq!(agg.cpu.machine_cores, by_host);
        assert_eq!(rec.ranks, 3);
        assert_eq!(rec.hosts, ["a", "b"]);
        assert_eq!(rec.target, "/dev/t{rank}");
        assert_eq!(rec.start.skew_ns, 200);
        let starts: Vec<u64> = rec.members.iter().map(|m| m.start_ns).collect();
        assert_eq!(starts, [0, 200, 50]);
        assert!(
            (rec.common_window_s - (1.0 - 200e-9)).abs() < 1e-9,
            "{}",
            rec.common_window_s
        );
        assert!(
            !agg.warnings.iter().any(|w| w.contains("apart")),
            "{:?}",
            agg.warnings
        );
    }

    #[test]
    fn ranks_apart_or_cut_short_are_warned_about() {
        let mut a = arrivals([0, 5_000_000, 0]);
        a[2].member.result.seconds = 0.5;
        a[2].member.result.ended_by = EndedBy::IoLimit;
        let (agg, rec) = assemble("/dev/t{rank}", Duration::ZERO, NOTICE, a).unwrap();
        assert_eq!(rec.start.skew_ns, 5_000_000);
        assert!((rec.common_window_s - 0.495).abs() < 1e-9);
        let w = agg.warnings.join("\n");
        assert!(w.contains("started up to 5.00ms apart"), "{w}");
        assert!(w.contains("ended first: rank 2 (io-limit)"), "{w}");
        assert_eq!(agg.ended_by, EndedBy::IoLimit);
    }

    #[test]
    fn a_warning_of_every_rank_is_said_once() {
        let mut a = arrivals([0, 0, 0]);
        for x in &mut a {
            x.member.result.warnings = vec!["same".into()];
        }
        a[1].member.result.warnings.push("only one".into());
        let agg = aggregate(&a.into_iter().map(|x| x.member).collect::<Vec<_>>()).unwrap();
        assert_eq!(agg.warnings, ["every rank: same", "rank 1: only one"]);
    }

    #[test]
    fn ranks_sharing_a_host_are_not_each_others_other_load() {
        let load = |other: f64, own: f64| {
            let mut a = arrivals([0, 0, 0]);
            for x in &mut a {
                let r = &mut x.member.result;
                r.seconds = 1.0;
                r.cpu.other_processes_pct_of_core = other;
                r.cpu.process_pct_of_core = own;
                r.warnings = crate::runner::other_load(&r.cpu, 1.0).into_iter().collect();
            }
            aggregate(&a.into_iter().map(|x| x.member).collect::<Vec<_>>())
                .unwrap()
                .warnings
                .join("\n")
        };
        // Ranks 0 and 1 share host a: each saw the other's 70 % as other load, and nothing else.
        let w = load(75.0, 70.0);
        assert!(!w.contains("rank 0") && !w.contains("rank 1"), "{w}");
        assert!(w.contains("rank 2: other processes used 75 %"), "{w}");
        assert_eq!(w.matches("other processes used").count(), 1, "{w}");
        // Beyond the siblings, other load on host a is still said, once, for the host.
        let w = load(150.0, 70.0);
        assert!(w.contains("rank 2: other processes used 150 %"), "{w}");
        assert!(
            w.contains("host a (ranks 0, 1, not counting them): other processes used 80 %"),
            "{w}"
        );
        assert_eq!(w.matches("other processes used").count(), 2, "{w}");
    }
}
