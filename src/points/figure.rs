//! A point's figure with its interval, as every comparison reads it: over the point's
//! repetitions (their medians' order statistics) when it was repeated, else from the run's own
//! precision (batch means for the rate and CPU, the histogram's order statistics for a
//! percentile); and the gap between two points' figures from those intervals
//! ([`crate::decide::from_intervals`]). The verdict, `compare` and `--check` find intervals here.

use super::point::Point;
use crate::decide::{self, Basis, Better, Gap};
use crate::estimate::{self, Estimate};

/// A headline figure of a point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Figure {
    Iops,
    MbS,
    P50,
    P99,
    P999,
    CpuPerIo,
}

impl Figure {
    /// The point's own value of the figure.
    pub fn of(self, p: &Point) -> f64 {
        match self {
            Figure::Iops => p.iops,
            Figure::MbS => p.mb_s,
            Figure::P50 => p.latency.p50_ns as f64,
            Figure::P99 => p.latency.p99_ns as f64,
            Figure::P999 => p.latency.p999_ns as f64,
            Figure::CpuPerIo => p.cpu_us_per_io,
        }
    }
}

/// A point's interval for a figure over its repetitions (their medians' order statistics), the
/// confidence it holds at and the repetitions; None for a point measured once.
pub fn repeated(p: &Point, f: Figure) -> Option<(Estimate, f64, usize)> {
    let s = p.spread.as_ref().filter(|s| s.runs > 1)?;
    let i = match f {
        Figure::Iops => &s.iops,
        Figure::MbS => &s.mb_s,
        Figure::P50 => &s.p50_ns,
        Figure::P99 => &s.p99_ns,
        Figure::P999 => &s.p999_ns,
        Figure::CpuPerIo => &s.cpu_us_per_io,
    };
    Some((
        Estimate {
            value: i.median,
            lo: Some(i.lo),
            hi: Some(i.hi),
        },
        s.confidence,
        s.runs,
    ))
}

/// A point's own interval for a figure at `confidence`: the rate and CPU widened from the run's
/// batch means (MB/s takes the IOPS's relative interval: the block size is the same), a
/// percentile again from its histogram's counts (the stored one when the histogram is not at
/// hand). None for a run that measured none (too short, imported, older than the intervals).
pub fn own(p: &Point, f: Figure, confidence: f64) -> Option<Estimate> {
    let pr = p.precision.as_ref()?;
    let widen = |e: &Estimate| crate::race::widen(e, pr.batches, pr.confidence, confidence);
    let percentile = |pct: f64, stored: &Estimate, value: u64| {
        if p.bins.is_empty() {
            *stored
        } else {
            estimate::percentile_interval(&p.bins, pct, value, confidence)
        }
    };
    Some(match f {
        Figure::Iops => widen(&pr.iops),
        Figure::MbS => {
            let e = widen(&pr.iops);
            let k = if e.value > 0.0 { p.mb_s / e.value } else { 0.0 };
            Estimate {
                value: p.mb_s,
                lo: e.lo.map(|x| x * k),
                hi: e.hi.map(|x| x * k),
            }
        }
        Figure::P50 => percentile(50.0, &pr.p50_ns, p.latency.p50_ns),
        Figure::P99 => percentile(99.0, &pr.p99_ns, p.latency.p99_ns),
        Figure::P999 => percentile(99.9, &pr.p999_ns, p.latency.p999_ns),
        Figure::CpuPerIo => widen(pr.cpu_us_per_io.as_ref()?),
    })
}

/// The gap of `a` over `b` for a figure with its interval: from their repetitions when both
/// were repeated, else from each run's own interval at `confidence`; None when one of them has
/// no interval.
pub fn gap(a: &Point, b: &Point, f: Figure, better: Better, confidence: f64) -> Option<Gap> {
    if let (Some((x, cx, nx)), Some((y, cy, ny))) = (repeated(a, f), repeated(b, f)) {
        let basis = Basis::Repeats(nx.min(ny));
        return Some(decide::from_intervals(&x, &y, better, cx.min(cy), basis));
    }
    let (x, y) = (own(a, f, confidence)?, own(b, f, confidence)?);
    Some(decide::from_intervals(
        &x,
        &y,
        better,
        confidence,
        Basis::Runs,
    ))
}
