//! The answer, not just the data: from measured points, per target and per block size and access
//! pattern, the fastest configuration, the lowest tail latency at queue depth 1, the cheapest in
//! CPU per I/O, and the one recommended for throughput, latency and a balance of both — each with
//! its label, its figures and how sure the measurements let us be: the gap to the runner-up with
//! its interval (paired race rounds, repetitions or each run's own interval), called ahead, equal
//! within the margin, or too close ([`sure`]).
//! readlab's measurements of itself (the null engine, the clock's cost) are reported apart and
//! never ranked. The survey, `run`, `study` and the report all print these ([`render`]).

pub mod answer;
mod finalists;
mod kind;
pub mod render;
mod runs;
pub mod sure;

pub use kind::{Kind, Tail};
pub use runs::{answer_text_for, text_for, text_for_within};
pub use sure::{REPEAT_HINT, Sureness};

use kind::figure;

use crate::interval::interval;
use crate::points::{Point, Report};
use crate::result::Document;
use crate::tune::Goal;
use crate::units::{Style, format_bytes};
use std::collections::BTreeMap;

/// One answer: which point, and how sure.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub kind: Kind,
    /// Index into the points the verdict was made from.
    pub point: usize,
    pub label: String,
    pub sure: Sureness,
    /// No winner can be named: the gap is inside the noise, or no interval was measured (also
    /// for the only configuration keeping a goal's share of the best IOPS, when other
    /// configurations were measured: how far they fell short is unknown without an interval).
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
            format!("too close to call: {p}, but no interval was measured; {REPEAT_HINT}")
        } else {
            p
        }
    }
}

/// The findings for one block size and access pattern of one target.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    pub bs: u64,
    /// `random`, `sequential`, or a skewed random's `random zipf:1.2` (its own workload).
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

/// Whether `p` carries an interval of its own (a run long enough for one, repetitions, or a
/// race).
fn measured(p: &Point) -> bool {
    p.precision.is_some() || p.race.is_some() || p.spread.as_ref().is_some_and(|s| s.runs > 1)
}

/// How sure the pick `w` of `kind` is against the best other configuration of `members`
/// (every other one is a comparison made: the confidence is shared among them).
fn sureness(
    points: &[Point],
    members: &[usize],
    w: usize,
    kind: Kind,
    tail: Tail,
    label: &dyn Fn(usize) -> String,
) -> (Sureness, Option<usize>) {
    let higher = figure(&points[w], kind, tail).1;
    let others: Vec<usize> = members
        .iter()
        .copied()
        .filter(|&i| points[i].label != points[w].label)
        .collect();
    let by = |a: &usize, b: &usize| {
        figure(&points[*a], kind, tail)
            .0
            .total_cmp(&figure(&points[*b], kind, tail).0)
    };
    let runner = if higher {
        others.iter().copied().max_by(by)
    } else {
        others.iter().copied().min_by(by)
    };
    let Some(r) = runner else {
        return (Sureness::Alone, None);
    };
    let sure = sure::sureness(&points[w], &points[r], label(r), kind, tail, others.len());
    (sure, Some(r))
}

/// A fastest pick equal to its runner-up within the margin: the one of the two with less CPU
/// per I/O is picked, and says so — by the gap the cheapest-CPU finding states (paired rounds
/// when the two were raced), so the saving said is the one said there.
fn cheaper_of_equals(
    points: &[Point],
    w: usize,
    r: usize,
    sure: Sureness,
    label: &dyn Fn(usize) -> String,
) -> (usize, Sureness) {
    let Sureness::Equal { gap, margin, .. } = &sure else {
        return (w, sure);
    };
    if points[w].cpu_us_per_io <= 0.0 || points[r].cpu_us_per_io <= 0.0 {
        return (w, sure);
    }
    let cpu = |a: usize, b: usize| {
        sure::gap(&points[a], &points[b], Kind::CheapestCpu, Tail::P999, 1).map(|(g, _)| g.value)
    };
    let (pick, other, saving) = match (cpu(w, r), cpu(r, w)) {
        (Some(s), _) if s > 0.0 => (w, r, s),
        (_, Some(s)) if s > 0.0 => (r, w, s),
        _ => return (w, sure),
    };
    let gap = if pick == w { *gap } else { gap.reversed() };
    (
        pick,
        Sureness::Equal {
            runner_up: label(other),
            gap,
            margin: *margin,
            picked_for: Some(format!("{} % less CPU per I/O", crate::decide::pct(saving))),
        },
    )
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
            let (sure, r) = sureness(points, among, w, kind, tail, label);
            let (w, sure) = match (kind, r) {
                (Kind::Fastest, Some(r)) => cheaper_of_equals(points, w, r, sure, label),
                _ => (w, sure),
            };
            let close = sure.close()
                || (sure == Sureness::Alone && configurations > 1 && !measured(&points[w]));
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
