//! Two sets of measurements side by side: `readlab compare A B` (runs, study directories or
//! reports' JSON), the baseline section of `readlab report --baseline OLD NEW`, and the
//! regression check of `readlab run --profile P --check` ([`check`]). Configurations are matched
//! by label, block size, access and direct/buffered; for each match, the change in IOPS, MB/s,
//! p50, p99, p99.9 and CPU per I/O with its interval from the two sides' own intervals
//! (`crate::points::figure`, called by [`crate::decide`]'s rule, as the verdict is), and per
//! configuration one sentence: slower, faster, or no change beyond the noise.
//! It reads the points (`crate::points`) and renders through the document layer
//! (`crate::document`); the report (`crate::report`), above it, calls it, never the other way.

pub mod check;
pub mod render;

use crate::decide::{self, Better, Gap};
use crate::estimate::CONFIDENCE;
use crate::points::Point;
use crate::points::figure::{self, Figure};
use std::collections::{BTreeMap, BTreeSet};

/// A figure compared: a point's headline figure ([`Figure`]), named as the comparison's
/// outputs name it.
pub use crate::points::figure::Figure as Metric;

impl Figure {
    pub const ALL: [Metric; 6] = [
        Metric::Iops,
        Metric::MbS,
        Metric::P50,
        Metric::P99,
        Metric::P999,
        Metric::CpuPerIo,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Metric::Iops => "IOPS",
            Metric::MbS => "MB/s",
            Metric::P50 => "p50",
            Metric::P99 => "p99",
            Metric::P999 => "p99.9",
            Metric::CpuPerIo => "CPU/IO",
        }
    }

    /// The machine name in JSON.
    pub fn key(self) -> &'static str {
        match self {
            Metric::Iops => "iops",
            Metric::MbS => "mb_s",
            Metric::P50 => "p50_ns",
            Metric::P99 => "p99_ns",
            Metric::P999 => "p999_ns",
            Metric::CpuPerIo => "cpu_us_per_io",
        }
    }

    /// More is better (throughput), or less (latency, CPU).
    pub fn higher_is_better(self) -> bool {
        matches!(self, Metric::Iops | Metric::MbS)
    }

    /// The change of `b` against `a` (b/a − 1) with its interval from the two sides' own
    /// intervals (repetitions of both, else each run's at 95 %); None when a side has none.
    pub fn change(self, a: &Point, b: &Point) -> Option<Gap> {
        figure::gap(b, a, self, Better::Higher, CONFIDENCE)
    }
}

/// One figure of a matched configuration, before and after.
#[derive(Debug, Clone, PartialEq)]
pub struct Delta {
    pub metric: Metric,
    pub a: f64,
    pub b: f64,
    /// (b − a) / a.
    pub change: f64,
    /// The change (b/a − 1) with its interval; None when either side measured none.
    pub gap: Option<Gap>,
}

impl Delta {
    /// Whether the change is beyond the noise: its interval excludes zero; None without one.
    pub fn beyond_noise(&self) -> Option<bool> {
        self.gap
            .map(|g| g.lo.is_some_and(|lo| lo > 0.0) || g.hi.is_some_and(|hi| hi < 0.0))
    }

    /// Whether the change is for the worse.
    pub fn worse(&self) -> bool {
        if self.metric.higher_is_better() {
            self.change < 0.0
        } else {
            self.change > 0.0
        }
    }
}

/// What a matched configuration's change in throughput comes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Call {
    /// B has fewer IOPS than A beyond the noise.
    Slower,
    /// B has more IOPS than A beyond the noise.
    Faster,
    /// The change's interval holds zero.
    Same,
    /// A side has no interval to tell.
    Unmeasured,
}

impl Call {
    /// The machine name in JSON: `slower`, `faster`, `no_change`, `unmeasured`.
    pub fn key(self) -> &'static str {
        match self {
            Call::Slower => "slower",
            Call::Faster => "faster",
            Call::Same => "no_change",
            Call::Unmeasured => "unmeasured",
        }
    }
}

/// Why a point has no interval, in words.
fn why_none(p: &Point) -> &'static str {
    match p.source {
        crate::points::Source::Fio => "imported from fio",
        crate::points::Source::Readlab => {
            "a run too short for one, or results older than readlab's intervals"
        }
    }
}

/// Whether a point carries any interval for its throughput.
fn measured(p: &Point) -> bool {
    figure::repeated(p, Figure::Iops).is_some() || p.precision.is_some()
}

/// A configuration measured on both sides.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Label (with block size, access and buffered where needed) naming the configuration.
    pub what: String,
    pub label: String,
    pub bs: u64,
    pub access: String,
    pub direct: bool,
    pub a: Point,
    pub b: Point,
    pub deltas: Vec<Delta>,
}

impl Row {
    fn delta(&self, m: Metric) -> Option<&Delta> {
        self.deltas.iter().find(|d| d.metric == m)
    }

    /// What the change in throughput comes to: IOPS decide.
    pub fn call(&self) -> Call {
        match self.delta(Metric::Iops).and_then(|d| d.gap.map(|g| (d, g))) {
            None => Call::Unmeasured,
            Some((d, _)) if d.beyond_noise() != Some(true) => Call::Same,
            Some((_, g)) if g.value < 0.0 => Call::Slower,
            Some(_) => Call::Faster,
        }
    }

    /// One sentence a storage engineer acts on, without the configuration's name: `10 %
    /// slower (95 % interval 8–12 %, one run each)`, `no change beyond the noise (…)`, `no
    /// interval measured (…)`; p99.9 is named too when its change is beyond the noise.
    pub fn finding(&self) -> String {
        let iops = self.delta(Metric::Iops);
        let gap = iops.and_then(|d| d.gap);
        let mut s = match (self.call(), gap) {
            (Call::Slower, Some(g)) => {
                let n = g.negated();
                format!("{} % slower ({})", decide::pct(n.value), n.words())
            }
            (Call::Faster, Some(g)) => format!("{} % faster ({})", decide::pct(g.value), g.words()),
            (Call::Same, Some(g)) => format!("no change beyond the noise ({})", g.words()),
            _ => self.unmeasured(iops.map_or(0.0, |d| d.change)),
        };
        if let Some(d) = self.delta(Metric::P999)
            && d.beyond_noise() == Some(true)
            && let Some(g) = d.gap
        {
            let (how, g) = if g.value > 0.0 {
                ("higher", g)
            } else {
                ("lower", g.negated())
            };
            s.push_str(&format!(
                "; p99.9 {} % {how} ({})",
                decide::pct(g.value),
                g.words()
            ));
        }
        s
    }

    /// `no interval measured (imported from fio); IOPS −20 %`.
    fn unmeasured(&self, change: f64) -> String {
        let (ma, mb) = (measured(&self.a), measured(&self.b));
        let why = match (ma, mb) {
            (false, false) if why_none(&self.a) == why_none(&self.b) => {
                why_none(&self.a).to_string()
            }
            (false, false) => format!("A: {}; B: {}", why_none(&self.a), why_none(&self.b)),
            (false, true) => format!("A: {}", why_none(&self.a)),
            (true, false) => format!("B: {}", why_none(&self.b)),
            // Both carry intervals, but one side was repeated and the other has no run's own.
            (true, true) => "one side repeated, the other measured once: measure both alike".into(),
        };
        format!(
            "no interval measured ({why}); IOPS {}{} %",
            if change >= 0.0 { "+" } else { "" },
            decide::pct(change)
        )
    }

    /// The sentence with the configuration's name: `U1B1 4K random: 10 % slower (…)`.
    pub fn sentence(&self) -> String {
        format!("{}: {}", self.what, self.finding())
    }
}

/// What two sets of points have in common, and what only one has.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Comparison {
    /// What A and B are, as the outputs name them: the input, its targets, and what differs
    /// from the other side (`before: loop3, kernel 6.1.0`).
    pub a_name: String,
    pub b_name: String,
    /// The inputs the sides were read from (file or directory names).
    pub a_input: String,
    pub b_input: String,
    /// What the sides' points differ in besides their measurements (`kernel`, `host`, `target`,
    /// `device`, `tool`), each as it reads on A and on B.
    pub differs: Vec<Difference>,
    pub rows: Vec<Row>,
    pub only_a: Vec<String>,
    pub only_b: Vec<String>,
}

type Key = (String, u64, String, bool, String);

fn key(p: &Point, by_name: bool) -> Key {
    (
        p.label.clone(),
        p.bs,
        p.access().to_string(),
        p.direct,
        if by_name {
            p.name.clone()
        } else {
            String::new()
        },
    )
}

fn what(k: &Key) -> String {
    let mut s = format!(
        "{} {} {}",
        k.0,
        crate::units::format_bytes(k.1 as f64, crate::units::Style::Table),
        k.2
    );
    if !k.3 {
        s.push_str(" buffered");
    }
    if !k.4.is_empty() {
        s.push_str(&format!(" on {}", k.4));
    }
    s
}

/// Points by configuration; several points of one configuration (the same run in two studies)
/// stand as the one with the median IOPS.
fn by_key(points: &[Point], by_name: bool) -> BTreeMap<Key, Point> {
    let mut groups: BTreeMap<Key, Vec<&Point>> = BTreeMap::new();
    for p in points.iter().filter(|p| p.plottable()) {
        groups.entry(key(p, by_name)).or_default().push(p);
    }
    groups
        .into_iter()
        .map(|(k, mut v)| {
            v.sort_by(|a, b| a.iops.total_cmp(&b.iops));
            let m = v[(v.len() - 1) / 2].clone();
            (k, m)
        })
        .collect()
}

/// The distinct values of `f` over the points, in order, joined.
fn distinct(points: &[Point], f: impl Fn(&Point) -> String) -> String {
    let mut v: Vec<String> = Vec::new();
    for p in points {
        let x = f(p);
        if !x.is_empty() && !v.contains(&x) {
            v.push(x);
        }
    }
    v.join(", ")
}

/// The names the points' targets go by, joined.
fn names(points: &[Point]) -> String {
    distinct(points, |p| p.name.clone())
}

/// One thing the two sides differ in besides their measurements.
#[derive(Debug, Clone, PartialEq)]
pub struct Difference {
    /// `kernel`, `host`, `target`, `device` or `tool`.
    pub what: &'static str,
    pub a: String,
    pub b: String,
}

/// The inputs of each side by name: the file or directory name, or the whole path when both
/// sides' names are the same.
fn inputs(a: &[Point], b: &[Point]) -> (String, String) {
    let short = |ps: &[Point]| distinct(ps, |p| crate::points::origin_name(&p.origin));
    let (x, y) = (short(a), short(b));
    if x != y {
        return (x, y);
    }
    let long = |ps: &[Point]| distinct(ps, |p| p.origin.clone());
    (long(a), long(b))
}

/// An attribute of a point the sides may differ in, and how to read it.
type Attribute = (&'static str, fn(&Point) -> String);

/// What the sides differ in: each attribute whose values are not the same on both.
fn differences(a: &[Point], b: &[Point]) -> Vec<Difference> {
    let attributes: [Attribute; 5] = [
        ("device", |p| p.env.device.clone()),
        ("target", |p| p.env.target.clone()),
        ("kernel", |p| p.env.kernel.clone()),
        ("host", |p| p.env.hostname.clone()),
        ("tool", |p| p.env.tool.clone()),
    ];
    attributes
        .into_iter()
        .map(|(what, f)| Difference {
            what,
            a: distinct(a, f),
            b: distinct(b, f),
        })
        .filter(|d| d.a != d.b)
        .collect()
}

/// A side's name: its input, its targets, and its values of what differs from the other side.
fn side_name(input: &str, targets: &str, differs: &[Difference], a: bool) -> String {
    let mut s = format!(
        "{input}: {}",
        if targets.is_empty() { "?" } else { targets }
    );
    for d in differs {
        let v = if a { &d.a } else { &d.b };
        let _ = std::fmt::Write::write_fmt(
            &mut s,
            format_args!(", {} {}", d.what, if v.is_empty() { "unknown" } else { v }),
        );
    }
    s
}

/// Compare the points of A with those of B. Targets' names take part in the match only when
/// both sides hold several targets (so one device can be compared with another).
pub fn compare(a: &[Point], b: &[Point]) -> Comparison {
    let count = |ps: &[Point]| ps.iter().map(|p| &p.name).collect::<BTreeSet<_>>().len();
    let by_name = count(a) > 1 && count(b) > 1;
    let ka = by_key(a, by_name);
    let kb = by_key(b, by_name);
    let mut rows = Vec::new();
    for (k, pa) in &ka {
        let Some(pb) = kb.get(k) else { continue };
        let deltas = Metric::ALL
            .iter()
            .map(|&m| {
                let (x, y) = (m.of(pa), m.of(pb));
                Delta {
                    metric: m,
                    a: x,
                    b: y,
                    change: if x != 0.0 { (y - x) / x } else { 0.0 },
                    gap: m.change(pa, pb),
                }
            })
            .collect();
        rows.push(Row {
            what: what(k),
            label: k.0.clone(),
            bs: k.1,
            access: k.2.clone(),
            direct: k.3,
            a: pa.clone(),
            b: pb.clone(),
            deltas,
        });
    }
    let (a_input, b_input) = inputs(a, b);
    let differs = differences(a, b);
    Comparison {
        a_name: side_name(&a_input, &names(a), &differs, true),
        b_name: side_name(&b_input, &names(b), &differs, false),
        a_input,
        b_input,
        differs,
        only_a: ka
            .keys()
            .filter(|k| !kb.contains_key(*k))
            .map(what)
            .collect(),
        only_b: kb
            .keys()
            .filter(|k| !ka.contains_key(*k))
            .map(what)
            .collect(),
        rows,
    }
}

#[cfg(test)]
mod tests;
