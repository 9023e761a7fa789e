//! The report's charts as data: for each study the figures the report draws (latency bars per
//! block size, bandwidth against offset, throughput and CPU against threads, grouped bars for
//! queue and batch sizes, …) and the all-experiments figures (throughput vs p99.9 scatter with
//! its Pareto frontier, latency CDFs, a per-second timeline). `draw` turns them into pictures.

use super::model::{Point, Report, caption};
use crate::size::format_size;
use std::collections::{BTreeMap, BTreeSet};

mod all;
pub mod cache;
pub mod devices;
pub mod figures;
mod fleet;
mod monitor;
pub mod net;
mod sections;
pub mod studies;

pub use all::all_charts;
pub use fleet::fleet_charts;
pub use sections::{ChartFn, charts_by_section, every_chart, section_charts, study_charts};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    Linear,
    Log,
}

/// What an axis measures, which decides how its ticks read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Latency in ns, printed as `250µs`, `1ms`.
    Ns,
    /// Plain numbers (MB/s, blocks).
    Number,
    /// Large counts printed as `12k`, `1.2M` (IOPS).
    Count,
    /// % of one core.
    Pct,
    /// Bytes printed as `64 MiB`.
    Bytes,
    Seconds,
    /// A cumulative fraction on a scale that spreads the tail: tick k stands for 1 − 10^−k
    /// (90 %, 99 %, 99.9 %, …).
    Tail,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    /// The axis title, with the unit.
    pub desc: String,
    pub scale: Scale,
    pub unit: Unit,
    /// Linear axes of amounts start at zero.
    pub from_zero: bool,
}

impl Axis {
    pub fn linear(desc: &str, unit: Unit) -> Axis {
        Axis {
            desc: desc.into(),
            scale: Scale::Linear,
            unit,
            from_zero: true,
        }
    }

    pub fn log(desc: &str, unit: Unit) -> Axis {
        Axis {
            desc: desc.into(),
            scale: Scale::Log,
            unit,
            from_zero: false,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum XAxis {
    /// Named positions 0, 1, 2, …: block sizes, thread counts, labels.
    Categories {
        desc: String,
        names: Vec<String>,
    },
    Numeric(Axis),
}

/// Bars of one series (one engine, target, …): per category, one value per layer, or nothing.
#[derive(Debug, Clone, PartialEq)]
pub struct BarSeries {
    pub name: String,
    pub fio: bool,
    pub values: Vec<Option<Vec<f64>>>,
}

/// Grouped bars: categories along x, one bar per series in each; with several layers each bar
/// overlays them (min, avg, p99, p99.9, max), the largest behind.
#[derive(Debug, Clone, PartialEq)]
pub struct Bars {
    pub x_desc: String,
    pub categories: Vec<String>,
    pub y: Axis,
    pub layers: Vec<String>,
    pub series: Vec<BarSeries>,
}

/// Marker shapes, one per block size on the all-experiments chart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Circle,
    Triangle,
    Square,
    Diamond,
    InvTriangle,
    Pentagon,
    Hexagon,
    Star,
}

pub const SHAPES: [Shape; 8] = [
    Shape::Circle,
    Shape::Triangle,
    Shape::Square,
    Shape::Diamond,
    Shape::InvTriangle,
    Shape::Pentagon,
    Shape::Hexagon,
    Shape::Star,
];

#[derive(Debug, Clone, PartialEq)]
pub struct LineSeries {
    pub name: String,
    /// (x, y); x is a category index on category axes.
    pub points: Vec<(f64, f64)>,
    /// Index into the palette.
    pub color: usize,
    pub dashed: bool,
    pub marker: Option<Shape>,
    pub fio: bool,
    /// Draw as steps (a distribution), without markers.
    pub step: bool,
    /// A label beside each point (`QD32`), or none.
    pub labels: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Lines {
    pub x: XAxis,
    pub y: Axis,
    pub series: Vec<LineSeries>,
}

/// One point of the all-experiments chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Dot {
    /// MB/s.
    pub x: f64,
    /// p99.9 in ns.
    pub y: f64,
    /// Index into `Scatter::shapes` (the block size).
    pub shape: usize,
    pub cpu: f64,
    /// One of the best of its block size: drawn larger and labelled.
    pub big: bool,
    pub label: String,
    pub fio: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Scatter {
    pub x: Axis,
    pub y: Axis,
    /// Block size names, one per shape.
    pub shapes: Vec<String>,
    pub dots: Vec<Dot>,
    /// Frontier points by increasing throughput.
    pub frontier: Vec<(f64, f64)>,
    /// Top of the CPU colour scale, % of one core.
    pub cpu_max: f64,
    /// The target the points were measured on (named in the legend); each target has its own
    /// scatter and frontier.
    pub target: String,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    Bars(Bars),
    Lines(Lines),
    Scatter(Scatter),
    /// Panels stacked vertically, sharing nothing but the width.
    Stack(Vec<Lines>),
}

/// One figure.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// Unique in the report: `latency-bars`, `all-scatter`, …
    pub id: String,
    pub title: String,
    /// Target, kernel and date of the points drawn.
    pub caption: String,
    pub width: u32,
    pub height: u32,
    pub kind: Kind,
}

const W: u32 = 960;
const H: u32 = 400;

fn chart(id: String, title: String, pts: &[&Point], kind: Kind) -> Chart {
    Chart {
        id,
        title,
        caption: caption(pts),
        width: W,
        height: H,
        kind,
    }
}

pub const LATENCY_LAYERS: [&str; 5] = ["min", "avg", "p99", "p99.9", "max"];

fn latency_layers(p: &Point) -> Vec<f64> {
    let l = &p.latency;
    vec![
        l.min_ns as f64,
        l.mean_ns,
        l.p99_ns as f64,
        l.p999_ns as f64,
        l.max_ns as f64,
    ]
}

/// Names points by the parts that differ: the target's name (never its path) when readlab's (or
/// fio's) points read several, the input file when they come from several, then `what`.
struct Namer {
    several_targets: [bool; 2],
    several_files: [bool; 2],
}

/// A target's name short enough for a legend: its last 28 characters.
fn short_target(t: &str) -> String {
    let n = t.chars().count();
    if n <= 28 {
        t.to_string()
    } else {
        format!("…{}", t.chars().skip(n - 27).collect::<String>())
    }
}

impl Namer {
    fn new(pts: &[&Point]) -> Namer {
        let distinct = |fio: bool, f: &dyn Fn(&Point) -> &str| {
            pts.iter()
                .filter(|p| p.is_fio() == fio)
                .map(|p| f(p))
                .collect::<BTreeSet<&str>>()
                .len()
                > 1
        };
        Namer {
            several_targets: [distinct(false, &|p| &p.name), distinct(true, &|p| &p.name)],
            several_files: [
                distinct(false, &|p| &p.origin),
                distinct(true, &|p| &p.origin),
            ],
        }
    }

    fn name(&self, p: &Point, what: &str) -> String {
        let k = p.is_fio() as usize;
        let mut parts = Vec::new();
        if p.is_fio() {
            parts.push("fio".to_string());
        }
        if self.several_targets[k] {
            parts.push(short_target(&p.name));
        }
        if !what.is_empty() {
            parts.push(what.to_string());
        }
        if self.several_files[k] {
            parts.push(format!("({})", super::model::origin_name(&p.origin)));
        }
        parts.join(" ")
    }
}

/// Category axis values: distinct keys in order, with their names.
fn categories<K: Ord + Clone>(
    pts: &[&Point],
    key: impl Fn(&Point) -> K,
    name: impl Fn(&K) -> String,
) -> (Vec<K>, Vec<String>) {
    let set: BTreeSet<K> = pts.iter().map(|p| key(p)).collect();
    let keys: Vec<K> = set.into_iter().collect();
    let names = keys.iter().map(name).collect();
    (keys, names)
}

/// The values of one bar for a point, one per layer.
type BarValues<'a> = Box<dyn Fn(&Point) -> Vec<f64> + 'a>;

/// What bars show: the y axis, the layers of each bar and their values for a point.
struct Measure<'a> {
    y: Axis,
    layers: &'a [&'a str],
    values: BarValues<'a>,
}

impl<'a> Measure<'a> {
    /// One value per bar.
    fn one(y: Axis, f: impl Fn(&Point) -> f64 + 'a) -> Measure<'a> {
        Measure {
            y,
            layers: &["value"],
            values: Box::new(move |p| vec![f(p)]),
        }
    }

    /// min, avg, p99, p99.9 and max overlaid, on a log scale.
    fn latency() -> Measure<'a> {
        Measure {
            y: lat_axis(),
            layers: &LATENCY_LAYERS,
            values: Box::new(latency_layers),
        }
    }
}

/// Bars: one series per `series` name (in order of first appearance, readlab before fio), one
/// category per `cat` key, values from `m`. The first point of a (series, category) wins.
fn bars<K: Ord + Clone>(
    pts: &[&Point],
    x_desc: &str,
    cat: impl Fn(&Point) -> K,
    cat_name: impl Fn(&K) -> String,
    series: impl Fn(&Point) -> String,
    m: Measure,
) -> Bars {
    let values = &m.values;
    let (keys, names) = categories(pts, &cat, cat_name);
    let mut order: Vec<(String, bool)> = Vec::new();
    for p in pts {
        let s = series(p);
        if !order.iter().any(|(n, _)| *n == s) {
            order.push((s, p.is_fio()));
        }
    }
    order.sort_by_key(|(_, fio)| *fio);
    let series = order
        .into_iter()
        .map(|(name, fio)| {
            let values = keys
                .iter()
                .map(|k| {
                    pts.iter()
                        .find(|p| series(p) == name && cat(p) == *k)
                        .map(|p| values(p))
                })
                .collect();
            BarSeries { name, fio, values }
        })
        .collect();
    Bars {
        x_desc: x_desc.into(),
        categories: names,
        y: m.y,
        layers: m.layers.iter().map(|s| s.to_string()).collect(),
        series,
    }
}

/// Lines over a category axis: one series per name, y from `value`.
fn lines_over<K: Ord + Clone>(
    pts: &[&Point],
    x_desc: &str,
    cat: impl Fn(&Point) -> K,
    cat_name: impl Fn(&K) -> String,
    series: impl Fn(&Point) -> String,
    y: Axis,
    value: impl Fn(&Point) -> f64,
) -> Lines {
    let (keys, names) = categories(pts, &cat, cat_name);
    let mut out: Vec<LineSeries> = Vec::new();
    for p in pts {
        let name = series(p);
        let x = keys.iter().position(|k| *k == cat(p)).unwrap_or(0) as f64;
        let y = value(p);
        let n = out.len();
        match out.iter_mut().find(|s| s.name == name) {
            Some(s) => {
                if !s.points.iter().any(|q| q.0 == x) {
                    s.points.push((x, y));
                }
            }
            None => out.push(LineSeries {
                name,
                points: vec![(x, y)],
                color: n,
                dashed: p.is_fio(),
                marker: Some(SHAPES[n % SHAPES.len()]),
                fio: p.is_fio(),
                step: false,
                labels: Vec::new(),
            }),
        }
    }
    for s in &mut out {
        s.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    Lines {
        x: XAxis::Categories {
            desc: x_desc.into(),
            names,
        },
        y,
        series: out,
    }
}

fn mb_axis() -> Axis {
    Axis::linear("throughput (MB/s)", Unit::Number)
}

fn cpu_axis() -> Axis {
    Axis::linear("CPU (% of one core)", Unit::Pct)
}

fn p999_axis() -> Axis {
    Axis::log("p99.9 latency (log scale)", Unit::Ns)
}

fn lat_axis() -> Axis {
    Axis::log("latency (log scale)", Unit::Ns)
}

fn bs_name(bs: &u64) -> String {
    format_size(*bs)
}

/// What every study's chart function gets: its plottable points, how to name series, its name.
pub struct Ctx<'a> {
    pts: Vec<&'a Point>,
    namer: Namer,
    study: &'static str,
}

impl Ctx<'_> {
    /// A chart id within the study's section.
    fn id(&self, what: &str) -> String {
        format!("{}-{what}", self.study)
    }
}

/// Lines longer than this (a day-long scan has 86 400 seconds) are thinned for drawing.
const MAX_LINE_POINTS: usize = 1500;

/// At most about `max` points: consecutive runs averaged, each placed at its last x.
pub fn thin(points: &[(f64, f64)], max: usize) -> Vec<(f64, f64)> {
    if points.len() <= max || max == 0 {
        return points.to_vec();
    }
    let chunk = points.len().div_ceil(max);
    points
        .chunks(chunk)
        .map(|c| {
            let y = c.iter().map(|p| p.1).sum::<f64>() / c.len() as f64;
            (c[c.len() - 1].0, y)
        })
        .collect()
}

/// A histogram as a CDF on the tail-stretched scale: (latency ns, −log10(1 − F)), F the fraction
/// at or below; the last value (F = 1) is placed one step past the last whole nine it shows.
/// At most about 300 points, spread evenly over log latency.
pub fn tail_cdf(bins: &[(u64, u64)]) -> Vec<(f64, f64)> {
    let total: u64 = bins.iter().map(|b| b.1).sum();
    if total == 0 {
        return Vec::new();
    }
    let cap = (total as f64).log10().max(1.0);
    let mut out: Vec<(f64, f64)> = Vec::new();
    let mut below = 0u64;
    let mut last_bucket = i64::MIN;
    for (i, &(v, n)) in bins.iter().enumerate() {
        below += n;
        let f = below as f64 / total as f64;
        let y = if below >= total {
            cap
        } else {
            (-(1.0 - f).log10()).min(cap)
        };
        let x = (v.max(1)) as f64;
        let bucket = (x.log10() * 60.0).floor() as i64;
        let last = i + 1 == bins.len();
        if bucket == last_bucket && !last {
            if let Some(p) = out.last_mut() {
                *p = (x, y);
            }
        } else {
            out.push((x, y));
        }
        last_bucket = bucket;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lines_are_thinned() {
        let v: Vec<(f64, f64)> = (0..10_000).map(|i| (i as f64, (i % 2) as f64)).collect();
        let t = thin(&v, 1500);
        assert!(t.len() <= 1500 && t.len() > 1000, "{}", t.len());
        assert_eq!(t.last().unwrap().0, 9999.0);
        assert!(t.iter().all(|p| (p.1 - 0.5).abs() < 0.2));
        assert_eq!(thin(&v[..3], 1500), &v[..3]);
        assert!(thin(&[], 10).is_empty());
    }

    #[test]
    fn names_say_what_differs() {
        use crate::report::model::tests::point;
        let a = point("P", 4096, 1.0, 1.0);
        let mut b = point("P", 4096, 1.0, 1.0);
        b.env.target = "/a/very/long/path/to/some/prepared/target-file".into();
        b.name = "a device with a very long model name".into();
        let mut f = point("fio:P", 4096, 1.0, 1.0);
        f.source = crate::report::Source::Fio;
        f.env.target = "/elsewhere".into();
        let n = Namer::new(&[&a, &f]);
        assert_eq!(n.name(&a, "psync"), "psync");
        assert_eq!(n.name(&f, "psync"), "fio psync");
        let n = Namer::new(&[&a, &b, &f]);
        assert_eq!(n.name(&a, "psync"), "x psync");
        assert_eq!(n.name(&b, "4K"), "…with a very long model name 4K");
        let mut c = a.clone();
        c.origin = "dir/study-b/results.jsonl".into();
        assert_eq!(Namer::new(&[&a, &c]).name(&c, "psync"), "psync (study-b)");
    }

    #[test]
    fn tail_cdf_reaches_the_cap_and_rises() {
        let bins: Vec<(u64, u64)> = (1..=1000).map(|v| (v * 1000, 1)).collect();
        let c = tail_cdf(&bins);
        assert!(c.len() < 300 && c.len() > 20, "{}", c.len());
        assert!(c.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1));
        assert_eq!(c.last().unwrap(), &(1_000_000.0, 3.0));
        assert!(tail_cdf(&[]).is_empty());
        assert!(tail_cdf(&[(5, 0)]).is_empty());
        assert_eq!(tail_cdf(&[(0, 3)]), [(1.0, 1.0)]);
    }
}
