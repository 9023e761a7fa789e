//! How well each figure a chart draws of a point is known, and the words the point names itself
//! with when hovered: a [`Fig`] is one figure of a point (its value, its interval, how it reads);
//! the interval comes from the configuration's repetitions (`Point::spread`) when it has them,
//! else from its run's precision (`Point::precision`); MB/s takes IOPS' relative interval.

use crate::document::chart::{BarMark, Mark, Span};
use crate::estimate::Estimate;
use crate::interval::Interval;
use crate::points::Point;
use crate::size::format_size;
use crate::units::{Style, format_ns, grouped, sig};

/// Percentile `pct` of a point as drawn: NaN (nothing drawn) where its tables print `–`, by the
/// one rule of [`LatencySummary::shown`](crate::stats::LatencySummary::shown).
pub(super) fn shown(p: &Point, pct: f64) -> f64 {
    p.latency.shown(pct).map_or(f64::NAN, |ns| ns as f64)
}

/// How a figure reads in words.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Reads {
    /// An amount followed by its unit: `152,300 IOPS`.
    Amount,
    /// A latency after its name: `p99.9 1.9ms`.
    Latency,
    /// A share of a core after its name: `CPU 45% of one core`.
    Pct,
}

/// One figure a chart draws of each point.
#[derive(Clone, Copy)]
pub(super) struct Fig {
    /// `IOPS`, `MB/s`, `p99.9`, `CPU`.
    pub(super) name: &'static str,
    reads: Reads,
    value: fn(&Point) -> f64,
    span: fn(&Point) -> Option<Span>,
}

fn no_span(_: &Point) -> Option<Span> {
    None
}

fn of_estimate(e: &Estimate) -> Span {
    Span { lo: e.lo, hi: e.hi }
}

fn of_interval(i: &Interval) -> Span {
    Span {
        lo: Some(i.lo),
        hi: Some(i.hi),
    }
}

fn iops_span(p: &Point) -> Option<Span> {
    match (&p.spread, &p.precision) {
        (Some(s), _) => Some(of_interval(&s.iops)),
        (None, Some(q)) => Some(of_estimate(&q.iops)),
        _ => None,
    }
}

fn mb_span(p: &Point) -> Option<Span> {
    match (&p.spread, &p.precision) {
        (Some(s), _) => Some(of_interval(&s.mb_s)),
        (None, Some(q)) if q.iops.value > 0.0 => {
            let scale = |v: Option<f64>| v.map(|v| v / q.iops.value * p.mb_s);
            Some(Span {
                lo: scale(q.iops.lo),
                hi: scale(q.iops.hi),
            })
        }
        _ => None,
    }
}

/// A percentile's interval: from the repetitions' `of_spread`, else the run's `of_run`; none
/// where the percentile is not drawn (too few requests).
fn latency_span(
    p: &Point,
    pct: f64,
    of_spread: fn(&crate::interval::RepeatSummary) -> &Interval,
    of_run: fn(&crate::result::Precision) -> &Estimate,
) -> Option<Span> {
    if !shown(p, pct).is_finite() {
        return None;
    }
    match (&p.spread, &p.precision) {
        (Some(s), _) => Some(of_interval(of_spread(s))),
        (None, Some(q)) => Some(of_estimate(of_run(q))),
        _ => None,
    }
}

pub(super) const IOPS: Fig = Fig {
    name: "IOPS",
    reads: Reads::Amount,
    value: |p| p.iops,
    span: iops_span,
};

pub(super) const MB_S: Fig = Fig {
    name: "MB/s",
    reads: Reads::Amount,
    value: |p| p.mb_s,
    span: mb_span,
};

pub(super) const P999: Fig = Fig {
    name: "p99.9",
    reads: Reads::Latency,
    value: |p| shown(p, 99.9),
    span: |p| latency_span(p, 99.9, |s| &s.p999_ns, |q| &q.p999_ns),
};

pub(super) const P99: Fig = Fig {
    name: "p99",
    reads: Reads::Latency,
    value: |p| shown(p, 99.0),
    span: |p| latency_span(p, 99.0, |s| &s.p99_ns, |q| &q.p99_ns),
};

pub(super) const CPU: Fig = Fig::plain("CPU", Reads::Pct, |p| p.cpu_pct);

/// The layers of a latency bar: min, avg, p99, p99.9, max (the percentiles with intervals).
pub(super) const LATENCY: [Fig; 5] = [
    Fig::plain("min", Reads::Latency, |p| p.latency.min_ns as f64),
    Fig::plain("avg", Reads::Latency, |p| p.latency.mean_ns),
    P99,
    P999,
    Fig::plain("max", Reads::Latency, |p| p.latency.max_ns as f64),
];

impl Fig {
    /// A figure without an interval.
    pub(super) const fn plain(name: &'static str, reads: Reads, value: fn(&Point) -> f64) -> Fig {
        Fig {
            name,
            reads,
            value,
            span: no_span,
        }
    }

    pub(super) fn value(&self, p: &Point) -> f64 {
        (self.value)(p)
    }

    /// Its interval for `p`, none when the point has none (or the figure is not drawn).
    pub(super) fn span(&self, p: &Point) -> Option<Span> {
        (self.span)(p).filter(|_| self.value(p).is_finite())
    }

    fn one(&self, v: f64) -> String {
        match self.reads {
            Reads::Amount if v.abs() >= 1000.0 => {
                // Four significant digits, thousands apart: `152,300`.
                let mag = 10f64.powi(v.abs().log10().floor() as i32 - 3);
                grouped(((v / mag).round() * mag).max(0.0) as u64)
            }
            Reads::Amount => sig(v),
            Reads::Latency => format_ns(v, Style::Chart),
            Reads::Pct => format!("{}%", sig(v)),
        }
    }

    /// The figure of `p` in words with its interval: `152,300 IOPS (148,100–156,500, 95 %)`,
    /// `p99.9 1.9ms (1.7ms–2.2ms, 95 %)`; none when it is not drawn (NaN).
    pub(super) fn says(&self, p: &Point) -> Option<String> {
        let v = self.value(p);
        if !v.is_finite() {
            return None;
        }
        let mut s = match self.reads {
            Reads::Amount => format!("{} {}", self.one(v), self.name),
            Reads::Latency => format!("{} {}", self.name, self.one(v)),
            Reads::Pct => format!("{} {} of one core", self.name, self.one(v)),
        };
        if let Some(span) = self.span(p) {
            let pct = confidence(p) * 100.0;
            let known = match (span.lo, span.hi) {
                (Some(lo), Some(hi)) => format!("{}–{}", self.one(lo), self.one(hi)),
                (Some(lo), None) => format!("at least {}; no upper bound", self.one(lo)),
                (None, Some(hi)) => format!("at most {}; no lower bound", self.one(hi)),
                (None, None) => "unbounded".into(),
            };
            s.push_str(&format!(" ({known}, {} %)", sig(pct)));
        }
        Some(s)
    }
}

/// The confidence of a point's intervals.
fn confidence(p: &Point) -> f64 {
    match (&p.spread, &p.precision) {
        (Some(s), _) => s.confidence,
        (None, Some(q)) => q.confidence,
        _ => crate::estimate::CONFIDENCE,
    }
}

/// A point in words: `U32B1 — io_uring, queue depth 32, batch 1, 4K random reads on nvme0n1`.
pub(super) fn head(p: &Point) -> String {
    let label = match crate::label::try_words(&p.label) {
        Some(w) if !p.label.is_empty() => format!("{} — {w}", p.label),
        _ => p.label.clone(),
    };
    let mut s = format!("{label}, {} {} reads", format_size(p.bs), p.access());
    if !p.name.is_empty() {
        s.push_str(&format!(" on {}", p.name));
    }
    s
}

/// What `p` says when hovered on a chart that draws `figs` of it: its words, those figures and
/// the headline ones (IOPS, p99.9) the chart does not draw, each with its interval.
pub(super) fn tip(p: &Point, figs: &[Fig]) -> String {
    let mut all: Vec<Fig> = figs.to_vec();
    for f in [IOPS, P999] {
        if !all.iter().any(|g| g.name == f.name) {
            all.push(f);
        }
    }
    let said: Vec<String> = all.iter().filter_map(|f| f.says(p)).collect();
    format!("{}: {}", head(p), said.join(", "))
}

/// A point's mark on a chart drawing `x` (when numeric and a figure) against `y`.
pub(super) fn mark(p: &Point, x: Option<Fig>, y: Fig) -> Mark {
    let figs: Vec<Fig> = x.into_iter().chain([y]).collect();
    Mark {
        tip: tip(p, &figs),
        x: x.and_then(|f| f.span(p)),
        y: y.span(p),
    }
}

/// A bar's mark: its point's words and each layer's interval.
pub(super) fn bar_mark(p: &Point, layers: &[Fig]) -> BarMark {
    BarMark {
        tip: tip(p, layers),
        layers: layers.iter().map(|f| f.span(p)).collect(),
    }
}
