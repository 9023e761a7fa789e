//! The tuners' re-measured finalists as points of a report: each a copy of its search run with
//! the medians of its interleaved runs and their spread, so a verdict ranks what the tuner chose
//! from rather than one lucky run.

use super::{Point, Report};
use crate::interval::Interval;

/// The tuners' re-measured finalists as points, each beside the index of its search run (the
/// point it is a copy of, with the medians of its runs and their spread in place of one run's
/// figures).
/// With `every`, the finalists the tuner could not re-measure (out of budget) too, as their
/// search runs.
pub(super) fn finalists(r: &Report, every: bool) -> Vec<(usize, Point)> {
    let mut out: Vec<(usize, Point)> = Vec::new();
    for t in &r.tuned {
        let target = t.target.display().to_string();
        for rec in &t.recommendations {
            // Every finalist when the tuner kept them, else the best of each goal.
            let cands: Vec<&crate::tune::Candidate> = if rec.finalists.is_empty() {
                rec.per_goal.iter().map(|(_, c)| c).collect()
            } else {
                rec.finalists.iter().collect()
            };
            for c in cands {
                let sp = c.spread.as_ref().filter(|s| s.runs > 1);
                if sp.is_none() && !every {
                    continue;
                }
                let Some(base) = r.points.iter().position(|p| {
                    p.study.as_deref() == Some("tune")
                        && p.label == c.label
                        && p.bs == rec.bs
                        && p.env.target == target
                        && p.spread.is_none()
                }) else {
                    continue;
                };
                if out.iter().any(|(b, _)| *b == base) {
                    continue;
                }
                out.push((
                    base,
                    match sp {
                        Some(sp) => remeasured(&r.points[base], c, sp),
                        None => r.points[base].clone(),
                    },
                ));
            }
        }
    }
    out
}

/// `search` (the tuner's one run of a configuration) with the figures of the candidate the
/// tuner re-measured: its medians, and their intervals as the point's spread.
fn remeasured(search: &Point, c: &crate::tune::Candidate, sp: &crate::tune::Spread) -> Point {
    let mut p = search.clone();
    let per_io = |cores: f64, iops: f64| {
        if iops > 0.0 { cores * 1e6 / iops } else { 0.0 }
    };
    let scale = |i: &Interval, by: f64| Interval {
        median: i.median * by,
        lo: i.lo * by,
        hi: i.hi * by,
    };
    p.iops = c.iops;
    p.mb_s = c.mb_s;
    p.latency.p50_ns = c.p50_ns;
    p.latency.p999_ns = c.p999_ns;
    p.cpu_us_per_io = per_io(c.cpu_cores, c.iops);
    // The tuner keeps no p99 interval: the p99.9's relative spread stands for it.
    let p999_rel = |v: f64| {
        let m = sp.p999_ns.median.max(f64::MIN_POSITIVE);
        Interval {
            median: v,
            lo: v * sp.p999_ns.lo / m,
            hi: v * sp.p999_ns.hi / m,
        }
    };
    let one = |v: f64| Interval {
        median: v,
        lo: v,
        hi: v,
    };
    p.spread = Some(crate::interval::RepeatSummary {
        runs: sp.runs,
        confidence: sp.confidence,
        iops: sp.iops,
        mb_s: scale(&sp.iops, c.mb_s / c.iops.max(f64::MIN_POSITIVE)),
        p50_ns: one(c.p50_ns as f64),
        p99_ns: p999_rel(p.latency.p99_ns as f64),
        p999_ns: sp.p999_ns,
        cpu_us_per_io: Interval {
            median: p.cpu_us_per_io,
            lo: per_io(sp.cpu_cores.lo, c.iops),
            hi: per_io(sp.cpu_cores.hi, c.iops),
        },
        achieved_depth: None,
    });
    p.timeline.clear();
    // Counted once, on the search run (whose CPU per I/O its runner cost is held against).
    p.timer_ns_per_io = None;
    p.runner_cost = None;
    p.note = Some(format!(
        "medians of {} interleaved runs (the tuner's re-measured finalist)",
        sp.runs
    ));
    p
}
