//! The answer, not just the data: from measured points, per target and per block size and access
//! pattern, the fastest configuration, the lowest tail latency at queue depth 1, the cheapest in
//! CPU per I/O, and the one recommended for throughput, latency and a balance of both — each with
//! its label, its figures and how sure the measurement lets us be (the spread of repetitions, or
//! of per-second figures for a single run, against the margin over the runner-up).
//! readlab's measurements of itself (the null engine, the clock's cost) are reported apart and
//! never ranked. The survey, `run`, `study` and the report all print these ([`render`]).

pub mod answer;
mod finalists;
pub mod render;
mod runs;

pub use runs::{answer_text_for, text_for, text_for_within};

use crate::interval::{Interval, interval};
use crate::points::{Point, Report};
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
    /// The runner-up is within the run-to-run spread: too close to call.
    Tie {
        runner_up: String,
        margin: f64,
        spread: Spread,
    },
    /// Ahead by `margin`, but no spread was measured (one short run without a timeline): too
    /// close to call, whatever the margin.
    Unmeasured { runner_up: String, margin: f64 },
}

/// What to do when a pick is too close to call.
pub const REPEAT_HINT: &str = "run with --repeat 3";

/// A relative margin in percent, with a decimal below 10 %: `0.3`, `35`.
fn pct(m: f64) -> String {
    if m.abs() < 0.095 {
        format!("{:.1}", 100.0 * m)
    } else {
        format!("{:.0}", 100.0 * m)
    }
}

impl Sureness {
    /// No winner can be named: the margin is inside the spread, or no spread was measured.
    pub fn close(&self) -> bool {
        matches!(self, Sureness::Tie { .. } | Sureness::Unmeasured { .. })
    }

    /// The configuration the pick is measured against, when there is one.
    pub fn runner_up(&self) -> Option<&str> {
        match self {
            Sureness::Alone => None,
            Sureness::Clear { runner_up, .. }
            | Sureness::Narrow { runner_up, .. }
            | Sureness::Tie { runner_up, .. }
            | Sureness::Unmeasured { runner_up, .. } => Some(runner_up),
        }
    }

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
                "too close to call: {runner_up} is within {:.1} % ({}); {REPEAT_HINT}",
                100.0 * margin,
                spread(s)
            ),
            Sureness::Unmeasured { runner_up, margin } => format!(
                "too close to call: {} % {what} than {runner_up}, no spread measured; {REPEAT_HINT}",
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
    /// No winner can be named: the margin is inside the spread, or no spread was measured (also
    /// for the only configuration keeping a goal's share of the best IOPS, when other
    /// configurations were measured: how far they fell short is unknown without a spread).
    pub close: bool,
}

impl Finding {
    /// The label cell: the pick's label, or `A ~ B` when it is too close to call (no winner is
    /// named then).
    pub fn named(&self) -> String {
        match self.sure.runner_up() {
            Some(r) if self.close => format!("{} ~ {r}", self.label),
            _ if self.close => format!("{}?", self.label),
            _ => self.label.clone(),
        }
    }

    /// How sure, in words (see [`Sureness::phrase`]).
    pub fn phrase(&self) -> String {
        let p = self.sure.phrase(self.kind);
        if self.close && !self.sure.close() {
            format!("too close to call: {p}, but no spread was measured; {REPEAT_HINT}")
        } else {
            p
        }
    }
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
    /// readlab's own loop on the null engine in the points' shapes: medians over the points that
    /// recorded it.
    pub runner: Option<RunnerShare>,
}

/// readlab's own loop over a target's points (each measured on the null engine in its shape).
#[derive(Debug, Clone, PartialEq)]
pub struct RunnerShare {
    /// Median CPU per I/O of readlab's loop on the null engine, µs.
    pub cpu_us_per_io: f64,
    /// Median share of a point's CPU per I/O that is readlab's loop (0–1).
    pub share_of_cpu: f64,
    /// Points it is the median of.
    pub points: usize,
}

impl RunnerShare {
    /// The medians over `points`' recorded runner costs; None when none recorded one.
    pub fn of<'a>(points: impl Iterator<Item = &'a Point>) -> Option<RunnerShare> {
        let costs: Vec<&crate::result::RunnerCost> =
            points.filter_map(|p| p.runner_cost.as_ref()).collect();
        let median = |f: &dyn Fn(&crate::result::RunnerCost) -> f64| {
            interval(&costs.iter().map(|c| f(c)).collect::<Vec<_>>()).median
        };
        (!costs.is_empty()).then(|| RunnerShare {
            cpu_us_per_io: median(&|c| c.cpu_us_per_io),
            share_of_cpu: median(&|c| c.share_of_cpu),
            points: costs.len(),
        })
    }
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
    /// How many points the verdict was made from were given: a finding's `point` below it is
    /// an index into them, one at or above it an index into `extra` (less `given`).
    pub given: usize,
    /// Points ranked that are not among those given: the tuner's re-measured finalists (the
    /// medians of their interleaved runs), from the report's `tune.json`.
    pub extra: Vec<Point>,
}

impl Verdict {
    /// The point a finding names: one of `points` (those the verdict was made from), or one of
    /// the verdict's own (a tuner's re-measured finalist).
    pub fn point<'a>(&'a self, points: &'a [Point], i: usize) -> &'a Point {
        if i < self.given {
            &points[i]
        } else {
            &self.extra[i - self.given]
        }
    }

    /// Every point a finding may name: `points` (those the verdict was made from), then the
    /// verdict's own, so `all[finding.point]` holds.
    pub fn points<'a>(&self, points: &'a [Point]) -> std::borrow::Cow<'a, [Point]> {
        if self.extra.is_empty() {
            std::borrow::Cow::Borrowed(points)
        } else {
            let mut all = points[..self.given.min(points.len())].to_vec();
            all.extend(self.extra.iter().cloned());
            std::borrow::Cow::Owned(all)
        }
    }
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

/// The verdict of a report, its points named by their display labels. The tuners' re-measured
/// finalists (`tune.json`) are ranked too, as the medians of their runs, in place of the single
/// search runs of the same configurations.
pub fn of_report(r: &Report) -> Verdict {
    let n = r.points.len();
    let finalists = finalists::finalists(r, false);
    if finalists.is_empty() {
        return verdict(&r.points, &|i| r.display_label(i));
    }
    let mut all = r.points.clone();
    let bases: Vec<usize> = finalists.iter().map(|(b, _)| *b).collect();
    all.extend(finalists.into_iter().map(|(_, p)| p));
    let mut v = verdict(&all, &|i| {
        r.display_label(if i < n { i } else { bases[i - n] })
    });
    v.extra = all.split_off(n);
    v.given = n;
    v
}

/// The verdict of the tuners' finalists alone, as the medians of their runs — what the tuner
/// chose its picks from — with the points it names (labelled as in `r`, whose `tuned` holds the
/// tuners' reports and whose points their search runs).
pub fn of_finalists(r: &Report) -> (Verdict, Vec<Point>) {
    let (bases, points): (Vec<usize>, Vec<Point>) =
        finalists::finalists(r, true).into_iter().unzip();
    let v = verdict(&points, &|i| r.display_label(bases[i]));
    (v, points)
}

/// Runs as a report (one point each, labels told apart) for their verdict.
pub fn report_of(docs: &[Document]) -> Report {
    let mut r = Report::from_points(
        docs.iter()
            .map(|d| Point::from_document(d, "run"))
            .collect(),
    );
    // The runs' warnings common to many of them, said once (what the answer is printed under).
    let warnings: Vec<&[String]> = docs.iter().map(|d| d.result.warnings.as_slice()).collect();
    r.banners = crate::warnings::group(&warnings).banners;
    r
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
                    let members = repeated_first(points, members);
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
                    runner: RunnerShare::of((0..points.len()).filter(mine).map(|i| &points[i])),
                },
            }
        })
        .collect();
    Verdict {
        targets,
        given: points.len(),
        extra: Vec::new(),
    }
}

/// `members` less the single measurements of configurations that were also measured repeatedly
/// (a tuner's finalist, `--repeat`): a one-second point never outranks the median of several
/// runs of the same configuration under the same conditions.
fn repeated_first(points: &[Point], members: Vec<usize>) -> Vec<usize> {
    let key = |p: &Point| (p.label.clone(), p.scheduler.clone(), p.setting.clone());
    let repeated = |p: &Point| p.spread.as_ref().is_some_and(|s| s.runs > 1);
    let has_repeats: Vec<_> = members
        .iter()
        .filter(|&&i| repeated(&points[i]))
        .map(|&i| key(&points[i]))
        .collect();
    members
        .into_iter()
        .filter(|&i| repeated(&points[i]) || !has_repeats.contains(&key(&points[i])))
        .collect()
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
            let sure = sureness(points, among, w, kind, tail, label);
            let close = sure.close()
                || (sure == Sureness::Alone
                    && configurations > 1
                    && spread(&points[w], Kind::Fastest, tail).is_none());
            findings.push(Finding {
                kind,
                point: w,
                label: label(w),
                sure,
                close,
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
