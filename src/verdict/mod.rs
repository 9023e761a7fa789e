//! The answer, not just the data: from measured points, per target and per block size and access
//! pattern, the fastest configuration, the lowest tail latency at queue depth 1, the cheapest in
//! CPU per I/O, and the one recommended for throughput, latency and a balance of both — each with
//! its label, its figures and how sure the measurement lets us be (the spread of repetitions, or
//! of per-second figures for a single run, against the margin over the runner-up).
//! readlab's measurements of itself (the null engine, the clock's cost) are reported apart and
//! never ranked. The survey, `run`, `study` and the report all print these ([`render`]).

pub mod render;
mod runs;

pub use runs::text_for;

use crate::interval::{Interval, interval};
use crate::report::model::{Point, Report};
use crate::result::Document;
use crate::tune::Goal;
use crate::units::{Style, format_bytes};
use std::collections::BTreeMap;

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

    pub fn title(self) -> String {
        match self {
            Kind::Fastest => "fastest".into(),
            Kind::LowestTailQd1 => "lowest tail at QD1".into(),
            Kind::CheapestCpu => "cheapest CPU per I/O".into(),
            Kind::Recommended(g) => format!("recommended: {}", g.name()),
        }
    }
}

/// How a figure varied over repetitions or over the seconds of one run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    /// Half the interval's width relative to the median (0.05 = ±5 %).
    pub relative: f64,
    /// Runs it comes from; 0 when it is the spread of per-second figures of one run.
    pub runs: usize,
}

/// How sure a finding is.
#[derive(Debug, Clone, PartialEq)]
pub enum Sureness {
    /// The only configuration measured here: nothing to rank against.
    Alone,
    /// Ahead of the runner-up by `margin` (relative), more than twice the spreads combined.
    Clear {
        runner_up: String,
        margin: f64,
        spread: Spread,
    },
    /// Ahead by more than the spreads combined, less than twice.
    Narrow {
        runner_up: String,
        margin: f64,
        spread: Spread,
    },
    /// The runner-up is within the run-to-run spread: a tie.
    Tie {
        runner_up: String,
        margin: f64,
        spread: Spread,
    },
    /// Ahead by `margin`, but no spread was measured (one short run without a timeline).
    Unmeasured { runner_up: String, margin: f64 },
}

/// A relative margin in percent, with a decimal below 10 %: `0.3`, `35`.
fn pct(m: f64) -> String {
    if m.abs() < 0.095 {
        format!("{:.1}", 100.0 * m)
    } else {
        format!("{:.0}", 100.0 * m)
    }
}

impl Sureness {
    /// One phrase for a finding of `kind`: `clear: 35 % more IOPS than A32B1 (spread ±3 % over
    /// 3 runs)`.
    pub fn phrase(&self, kind: Kind) -> String {
        let what = kind.comparative();
        let spread = |s: &Spread| {
            if s.runs > 1 {
                format!("spread ±{:.0} % over {} runs", 100.0 * s.relative, s.runs)
            } else {
                format!("per-second spread ±{:.0} %", 100.0 * s.relative)
            }
        };
        match self {
            Sureness::Alone => match kind {
                Kind::LowestTailQd1 => "the only configuration at queue depth 1".into(),
                Kind::Recommended(g @ (Goal::Balanced | Goal::Latency)) => format!(
                    "the only configuration keeping {:.0} % of the best IOPS",
                    100.0 * g.floor()
                ),
                _ => "the only configuration measured".into(),
            },
            Sureness::Clear {
                runner_up,
                margin,
                spread: s,
            } => format!(
                "clear: {} % {what} than {runner_up} ({})",
                pct(*margin),
                spread(s)
            ),
            Sureness::Narrow {
                runner_up,
                margin,
                spread: s,
            } => format!(
                "narrow: {:.1} % {what} than {runner_up} ({})",
                100.0 * margin,
                spread(s)
            ),
            Sureness::Tie {
                runner_up,
                margin,
                spread: s,
            } => format!(
                "a tie: {runner_up} is within {:.1} % ({})",
                100.0 * margin,
                spread(s)
            ),
            Sureness::Unmeasured { runner_up, margin } => format!(
                "{} % {what} than {runner_up}; no spread measured (use --repeat)",
                pct(*margin)
            ),
        }
    }
}

/// One answer: which point, and how sure.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub kind: Kind,
    /// Index into the points the verdict was made from.
    pub point: usize,
    pub label: String,
    pub sure: Sureness,
}

/// The findings for one block size and access pattern of one target.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    pub bs: u64,
    /// `random` or `sequential`.
    pub access: String,
    pub direct: bool,
    /// Distinct configurations measured.
    pub configurations: usize,
    /// The tail percentile its points are compared on.
    pub tail: Tail,
    pub findings: Vec<Finding>,
}

impl Group {
    /// `4K random`, `1M sequential buffered`.
    pub fn title(&self) -> String {
        format!(
            "{} {}{}",
            format_bytes(self.bs as f64, Style::Table),
            self.access,
            if self.direct { "" } else { " buffered" }
        )
    }
}

/// readlab measuring itself: the null engine's figures and the clock's cost per I/O.
#[derive(Debug, Clone, PartialEq)]
pub struct OwnCost {
    /// Null-engine points (readlab's whole cost per I/O without any I/O).
    pub null_points: Vec<usize>,
    /// Median cost of readlab's clock reads per I/O, ns, over the runs that recorded it.
    pub timer_ns_per_io: Option<f64>,
}

/// The verdict of one target.
#[derive(Debug, Clone, PartialEq)]
pub struct TargetVerdict {
    pub name: String,
    pub groups: Vec<Group>,
    pub own: OwnCost,
}

/// Every target's verdict.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Verdict {
    pub targets: Vec<TargetVerdict>,
}

/// Whether a point may be ranked: readlab's own measurement of real reads that did not fail.
pub fn rankable(p: &Point) -> bool {
    !p.is_fio()
        && p.engine != "null"
        && p.plottable()
        && !p.note.as_deref().is_some_and(|n| n.contains("FAILED"))
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

/// The spread of a figure of `p`: over its repetitions when it has them, else over the
/// per-second figures of its run (at least three seconds), else unknown.
fn spread(p: &Point, kind: Kind, tail: Tail) -> Option<Spread> {
    if let Some(r) = &p.spread
        && r.runs > 1
    {
        let i: &Interval = match kind {
            k if on_tail(k) && tail == Tail::P999 => &r.p999_ns,
            k if on_tail(k) => &r.p99_ns,
            Kind::CheapestCpu => &r.cpu_us_per_io,
            _ => &r.iops,
        };
        return Some(Spread {
            relative: i.relative_half_width(),
            runs: r.runs,
        });
    }
    if p.timeline.len() < 3 {
        return None;
    }
    let per_second: Vec<f64> = match kind {
        k if on_tail(k) => p.timeline.iter().map(|t| t.p99_ns as f64).collect(),
        // CPU is not sampled per second; throughput's spread stands for it.
        _ => p.timeline.iter().map(|t| t.iops).collect(),
    };
    Some(Spread {
        relative: interval(&per_second).relative_half_width(),
        runs: 1,
    })
}

/// Whether a kind ranks on the tail latency.
fn on_tail(kind: Kind) -> bool {
    matches!(
        kind,
        Kind::LowestTailQd1 | Kind::Recommended(Goal::Balanced | Goal::Latency)
    )
}

/// The figure a kind ranks on, and whether higher is better.
fn figure(p: &Point, kind: Kind, tail: Tail) -> (f64, bool) {
    match kind {
        k if on_tail(k) => (tail.ns(p), false),
        Kind::CheapestCpu => (p.cpu_us_per_io, false),
        _ => (p.iops, true),
    }
}

/// How sure the pick `w` of `kind` is against the best other configuration of `members`.
fn sureness(
    points: &[Point],
    members: &[usize],
    w: usize,
    kind: Kind,
    tail: Tail,
    label: &dyn Fn(usize) -> String,
) -> Sureness {
    let (wv, higher) = figure(&points[w], kind, tail);
    let others = members
        .iter()
        .copied()
        .filter(|&i| points[i].label != points[w].label);
    let runner = if higher {
        others.max_by(|&a, &b| {
            figure(&points[a], kind, tail)
                .0
                .total_cmp(&figure(&points[b], kind, tail).0)
        })
    } else {
        others.min_by(|&a, &b| {
            figure(&points[a], kind, tail)
                .0
                .total_cmp(&figure(&points[b], kind, tail).0)
        })
    };
    let Some(r) = runner else {
        return Sureness::Alone;
    };
    let rv = figure(&points[r], kind, tail).0;
    // Relative to the runner-up: "35 % more IOPS", "40 % lower p99.9".
    let margin = if higher {
        wv / rv.max(f64::MIN_POSITIVE) - 1.0
    } else {
        1.0 - wv / rv.max(f64::MIN_POSITIVE)
    };
    let runner_up = label(r);
    match (
        spread(&points[w], kind, tail),
        spread(&points[r], kind, tail),
    ) {
        (Some(a), Some(b)) => {
            let s = Spread {
                relative: a.relative + b.relative,
                runs: a.runs.min(b.runs),
            };
            if margin > 2.0 * s.relative {
                Sureness::Clear {
                    runner_up,
                    margin,
                    spread: s,
                }
            } else if margin > s.relative {
                Sureness::Narrow {
                    runner_up,
                    margin,
                    spread: s,
                }
            } else {
                Sureness::Tie {
                    runner_up,
                    margin,
                    spread: s,
                }
            }
        }
        _ => Sureness::Unmeasured { runner_up, margin },
    }
}

/// The verdict of a report, its points named by their display labels.
pub fn of_report(r: &Report) -> Verdict {
    verdict(&r.points, &|i| r.display_label(i))
}

/// Runs as a report (one point each, labels told apart) for their verdict.
pub fn report_of(docs: &[Document]) -> Report {
    Report::from_points(
        docs.iter()
            .map(|d| Point::from_document(d, "run"))
            .collect(),
    )
}

/// The verdict of `points`, labelled by `label(i)` (the report's display label, or the plain
/// label): one per target name, in order of first appearance.
pub fn verdict(points: &[Point], label: &dyn Fn(usize) -> String) -> Verdict {
    let mut names: Vec<&str> = Vec::new();
    for p in points.iter().filter(|p| !p.is_fio()) {
        if !names.contains(&p.name.as_str()) {
            names.push(&p.name);
        }
    }
    let targets = names
        .into_iter()
        .map(|name| {
            let mine = |i: &usize| points[*i].name == name && !points[*i].is_fio();
            let mut groups: BTreeMap<(u64, String, bool), Vec<usize>> = BTreeMap::new();
            for i in (0..points.len())
                .filter(mine)
                .filter(|&i| rankable(&points[i]))
            {
                let p = &points[i];
                groups
                    .entry((p.bs, p.access().to_string(), !p.direct))
                    .or_default()
                    .push(i);
            }
            let groups = groups
                .into_iter()
                .map(|((bs, access, buffered), members)| {
                    group(points, bs, access, !buffered, &members, label)
                })
                .collect();
            let null_points: Vec<usize> = (0..points.len())
                .filter(mine)
                .filter(|&i| points[i].engine == "null" && points[i].ios > 0)
                .collect();
            let timers: Vec<f64> = (0..points.len())
                .filter(mine)
                .filter_map(|i| points[i].timer_ns_per_io)
                .collect();
            TargetVerdict {
                name: name.to_string(),
                groups,
                own: OwnCost {
                    null_points,
                    timer_ns_per_io: (!timers.is_empty()).then(|| interval(&timers).median),
                },
            }
        })
        .collect();
    Verdict { targets }
}

fn group(
    points: &[Point],
    bs: u64,
    access: String,
    direct: bool,
    members: &[usize],
    label: &dyn Fn(usize) -> String,
) -> Group {
    let configurations = members
        .iter()
        .map(|&i| points[i].label.as_str())
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    let tail = Tail::of(&members.iter().map(|&i| &points[i]).collect::<Vec<_>>());
    let mut findings = Vec::new();
    let mut find = |kind: Kind, among: &[usize], pick: Option<usize>| {
        if let Some(w) = pick {
            findings.push(Finding {
                kind,
                point: w,
                label: label(w),
                sure: sureness(points, among, w, kind, tail, label),
            });
        }
    };
    let best_by = |among: &[usize], kind: Kind| {
        among.iter().copied().min_by(|&a, &b| {
            let (x, higher) = figure(&points[a], kind, tail);
            let y = figure(&points[b], kind, tail).0;
            if higher {
                y.total_cmp(&x)
            } else {
                x.total_cmp(&y)
            }
            .then(a.cmp(&b))
        })
    };
    find(Kind::Fastest, members, best_by(members, Kind::Fastest));
    let qd1: Vec<usize> = members
        .iter()
        .copied()
        .filter(|&i| {
            let p = &points[i];
            p.threads == 1 && p.iodepth == 1 && p.blocks_per_request == 1
        })
        .collect();
    find(
        Kind::LowestTailQd1,
        &qd1,
        best_by(&qd1, Kind::LowestTailQd1),
    );
    let with_cpu: Vec<usize> = members
        .iter()
        .copied()
        .filter(|&i| points[i].cpu_us_per_io > 0.0)
        .collect();
    find(
        Kind::CheapestCpu,
        &with_cpu,
        best_by(&with_cpu, Kind::CheapestCpu),
    );
    let xy: Vec<(f64, f64)> = members
        .iter()
        .map(|&i| (points[i].iops, tail.ns(&points[i])))
        .collect();
    let best = xy.iter().map(|p| p.0).fold(0.0, f64::max);
    for goal in Goal::ALL {
        let pick = crate::pareto::pick(&xy, goal.floor()).map(|k| members[k]);
        // Throughput's pick is as sure as the fastest is; the others are judged on the tail
        // against the configurations that keep enough throughput to be picked.
        let among: Vec<usize> = members
            .iter()
            .copied()
            .filter(|&i| goal == Goal::Throughput || points[i].iops >= goal.floor() * best)
            .collect();
        find(Kind::Recommended(goal), &among, pick);
    }
    Group {
        bs,
        access,
        direct,
        configurations,
        tail,
        findings,
    }
}

#[cfg(test)]
mod tests;
