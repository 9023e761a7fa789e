//! What a verdict ranks on: the kinds of finding, the tail percentile a group is compared on,
//! and the figure each kind reads from a point. A leaf of the verdict, so that how sure a pick
//! is (`sure.rs`) and the verdict itself can both name these without naming each other.

use crate::points::Point;
use crate::tune::Goal;

/// What a finding ranks on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Most IOPS.
    Fastest,
    /// Lowest p99.9 (p99 when a point of the group has too few samples) with one request in
    /// flight, one thread.
    LowestTailQd1,
    /// Least CPU per I/O.
    CheapestCpu,
    /// A goal's pick (the tuner's rule).
    Recommended(Goal),
}

impl Kind {
    /// How a finding is ahead of the runner-up: `more IOPS`, `lower tail`.
    pub fn comparative(self) -> &'static str {
        match self {
            k if on_tail(k) => "lower tail",
            Kind::CheapestCpu => "less CPU per I/O",
            _ => "more IOPS",
        }
    }

    /// The rule a pick of this kind follows, said wherever the pick is printed:
    /// `latency: lowest p99.9 keeping half the best IOPS`.
    pub fn rule(self) -> String {
        match self {
            Kind::Fastest => "fastest: most IOPS".into(),
            Kind::LowestTailQd1 => {
                "lowest tail at QD1: lowest p99.9 with one request in flight and one thread".into()
            }
            Kind::CheapestCpu => "cheapest: least CPU per I/O".into(),
            Kind::Recommended(g) => format!("{}: {}", g.name(), g.rule()),
        }
    }

    pub fn title(self) -> String {
        match self {
            Kind::Fastest => "fastest".into(),
            Kind::LowestTailQd1 => "lowest tail at QD1".into(),
            Kind::CheapestCpu => "cheapest CPU per I/O".into(),
            Kind::Recommended(g) => format!("recommended: {}", g.name()),
        }
    }
}

/// The tail percentile a group of points is compared on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tail {
    P999,
    /// Some point of the group has too few samples for p99.9.
    P99,
}

impl Tail {
    /// p99.9 when every point supports it, else p99: never one point's p99 against another's
    /// p99.9.
    pub fn of(points: &[&Point]) -> Tail {
        if points.iter().all(|p| p.latency.supports(99.9)) {
            Tail::P999
        } else {
            Tail::P99
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Tail::P999 => "p99.9",
            Tail::P99 => "p99",
        }
    }

    pub fn ns(self, p: &Point) -> f64 {
        match self {
            Tail::P999 => p.latency.p999_ns as f64,
            Tail::P99 => p.latency.p99_ns as f64,
        }
    }
}

/// Whether a kind ranks on the tail latency.
pub(crate) fn on_tail(kind: Kind) -> bool {
    matches!(
        kind,
        Kind::LowestTailQd1 | Kind::Recommended(Goal::Balanced | Goal::Latency)
    )
}

/// The figure a kind ranks on, and whether higher is better.
pub(crate) fn figure(p: &Point, kind: Kind, tail: Tail) -> (f64, bool) {
    match kind {
        k if on_tail(k) => (tail.ns(p), false),
        Kind::CheapestCpu => (p.cpu_us_per_io, false),
        _ => (p.iops, true),
    }
}
