//! The report's charts as data: for each study the figures the report draws (latency bars per
//! block size, bandwidth against offset, throughput and CPU against threads, grouped bars for
//! queue and batch sizes, …) and the all-experiments figures (throughput vs p99.9 scatter with
//! its Pareto frontier, latency CDFs, a per-second timeline). `draw` turns them into pictures.

use super::model::{Point, Report, Section, caption};
use crate::size::format_size;
use crate::study::StudyName;
use std::collections::{BTreeMap, BTreeSet};

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

/// Names points by the parts that differ: the target when readlab's (or fio's) points read
/// several, the input file when they come from several, then `what`.
struct Namer {
    several_targets: [bool; 2],
    several_files: [bool; 2],
}

/// A target path short enough for a legend: its last 28 characters.
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
            several_targets: [
                distinct(false, &|p| &p.env.target),
                distinct(true, &|p| &p.env.target),
            ],
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
            parts.push(short_target(&p.env.target));
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

/// The charts of one study section.
pub fn section_charts(report: &Report, s: &Section) -> Vec<Chart> {
    let all = report.section_points(s);
    let pts: Vec<&Point> = all.into_iter().filter(|p| p.plottable()).collect();
    if pts.is_empty() {
        return Vec::new();
    }
    let namer = Namer::new(&pts);
    let study = s.study.name();
    let id = |what: &str| format!("{study}-{what}");
    let mut out = Vec::new();
    match s.study {
        StudyName::Latency => {
            let b = bars(
                &pts,
                "block size",
                |p| p.bs,
                bs_name,
                |p| namer.name(p, &p.engine),
                Measure::latency(),
            );
            out.push(chart(
                id("bars"),
                "Single-read latency per block size: min, avg, p99, p99.9, max".into(),
                &pts,
                Kind::Bars(b),
            ));
        }
        StudyName::Scan => {
            let mut series = Vec::new();
            for p in &pts {
                let mut offset = p.offset as f64;
                let mut points = Vec::new();
                for t in &p.timeline {
                    offset += t.ios as f64 * p.bs as f64;
                    points.push((offset, t.mib_s * 1.048_576));
                }
                let points = thin(&points, MAX_LINE_POINTS);
                let n = series.len();
                series.push(LineSeries {
                    name: namer.name(p, if p.direct { "direct" } else { "buffered" }),
                    points,
                    color: n,
                    dashed: false,
                    marker: None,
                    fio: p.is_fio(),
                    step: false,
                });
            }
            let lines = Lines {
                x: XAxis::Numeric(Axis::linear("offset read up to (bytes)", Unit::Bytes)),
                y: mb_axis(),
                series,
            };
            out.push(chart(
                id("bandwidth"),
                "Whole-target sequential read: bandwidth against offset (1 MiB blocks, per second)"
                    .into(),
                &pts,
                Kind::Lines(lines),
            ));
        }
        StudyName::Stream => {
            let l = lines_over(
                &pts,
                "block size",
                |p| p.bs,
                bs_name,
                |p| namer.name(p, p.access()),
                mb_axis(),
                |p| p.mb_s,
            );
            out.push(chart(
                id("throughput"),
                "One thread: sequential and random throughput per block size".into(),
                &pts,
                Kind::Lines(l),
            ));
            let b = bars(
                &pts,
                "block size",
                |p| p.bs,
                bs_name,
                |p| namer.name(p, p.access()),
                Measure::latency(),
            );
            out.push(chart(
                id("latency"),
                "One thread: sequential and random read latency per block size".into(),
                &pts,
                Kind::Bars(b),
            ));
        }
        StudyName::Threads => {
            let thr = |p: &Point| p.threads;
            let tname = |t: &usize| t.to_string();
            let series = |p: &Point| namer.name(p, &format_size(p.bs));
            out.push(chart(
                id("throughput"),
                "Throughput against threads, one line per block size".into(),
                &pts,
                Kind::Lines(lines_over(
                    &pts,
                    "threads",
                    thr,
                    tname,
                    series,
                    mb_axis(),
                    |p| p.mb_s,
                )),
            ));
            out.push(chart(
                id("cpu"),
                "CPU against threads, one line per block size".into(),
                &pts,
                Kind::Lines(lines_over(
                    &pts,
                    "threads",
                    thr,
                    tname,
                    series,
                    cpu_axis(),
                    |p| p.cpu_pct,
                )),
            ));
            let sizes: BTreeSet<u64> = pts.iter().map(|p| p.bs).collect();
            for bs in sizes {
                let mine: Vec<&Point> = pts.iter().copied().filter(|p| p.bs == bs).collect();
                let b = bars(
                    &mine,
                    "threads",
                    thr,
                    tname,
                    |p| namer.name(p, &p.engine),
                    Measure::latency(),
                );
                out.push(chart(
                    id(&format!("latency-{}", format_size(bs))),
                    format!("Latency against threads, {} blocks", format_size(bs)),
                    &mine,
                    Kind::Bars(b),
                ));
            }
        }
        StudyName::Queue | StudyName::Batch => {
            let queue = s.study == StudyName::Queue;
            let (x_desc, what) = if queue {
                ("queue size (I/Os in flight per thread)", "queue size")
            } else {
                ("batch size (I/Os per submit)", "batch size")
            };
            let cat = |p: &Point| if queue { p.iodepth } else { p.batch };
            let series = |p: &Point| {
                if queue {
                    namer.name(p, &format!("{} T{}", p.engine, p.threads))
                } else {
                    namer.name(p, &format!("{} QS{}", p.engine, p.iodepth))
                }
            };
            let measures = [
                (
                    "throughput",
                    "Throughput",
                    Measure::one(mb_axis(), |p| p.mb_s),
                ),
                ("cpu", "CPU", Measure::one(cpu_axis(), |p| p.cpu_pct)),
                (
                    "p999",
                    "p99.9 latency",
                    Measure::one(p999_axis(), |p| p.latency.p999_ns as f64),
                ),
            ];
            for (key, title, m) in measures {
                let b = bars(&pts, x_desc, cat, |k| k.to_string(), series, m);
                out.push(chart(
                    id(key),
                    format!("{title} per {what}, 4 KiB random reads"),
                    &pts,
                    Kind::Bars(b),
                ));
            }
        }
        StudyName::Multiblock => {
            let mut series: Vec<LineSeries> = Vec::new();
            let engines: Vec<String> = {
                let mut e: Vec<String> = Vec::new();
                for p in &pts {
                    let n = namer.name(p, &p.engine);
                    if !e.contains(&n) {
                        e.push(n);
                    }
                }
                e
            };
            for (k, engine) in engines.iter().enumerate() {
                let mine: Vec<&&Point> = pts
                    .iter()
                    .filter(|p| namer.name(p, &p.engine) == *engine)
                    .collect();
                for (stat, dashed, marker) in [
                    ("avg", false, Shape::Circle),
                    ("p99.9", true, Shape::Triangle),
                ] {
                    let mut points: Vec<(f64, f64)> = mine
                        .iter()
                        .map(|p| {
                            let v = if dashed {
                                p.latency.p999_ns as f64
                            } else {
                                p.latency.mean_ns
                            };
                            (p.blocks_per_request as f64, v)
                        })
                        .collect();
                    points.sort_by(|a, b| a.0.total_cmp(&b.0));
                    points.dedup_by(|a, b| a.0 == b.0);
                    series.push(LineSeries {
                        name: format!("{engine} {stat}"),
                        points,
                        color: k,
                        dashed,
                        marker: Some(marker),
                        fio: false,
                        step: false,
                    });
                }
            }
            let mut x = Axis::linear("random 4 KiB blocks per request", Unit::Number);
            x.from_zero = true;
            let lines = Lines {
                x: XAxis::Numeric(x),
                y: Axis::linear("request latency (linear scale)", Unit::Ns),
                series,
            };
            out.push(chart(
                id("latency"),
                "Request latency against blocks per request (avg solid, p99.9 dashed)".into(),
                &pts,
                Kind::Lines(lines),
            ));
        }
        StudyName::UringFeatures => {
            let label = |p: &Point| p.label.clone();
            let name = |l: &String| l.clone();
            let one = |p: &Point| namer.name(p, "");
            let single = |p: &Point| {
                let n = one(p);
                if n.is_empty() {
                    "io_uring".to_string()
                } else {
                    n
                }
            };
            out.push(chart(
                id("throughput"),
                "io_uring features: throughput (M fixed buffers, F fixed files, S SQ poll)".into(),
                &pts,
                Kind::Bars(bars(
                    &pts,
                    "configuration",
                    label,
                    name,
                    single,
                    Measure::one(mb_axis(), |p| p.mb_s),
                )),
            ));
            let mut cpu = bars(
                &pts,
                "configuration",
                label,
                name,
                |p| namer.name(p, "process"),
                Measure::one(cpu_axis(), |p| p.cpu_pct),
            );
            let sq = bars(
                &pts,
                "configuration",
                label,
                name,
                |p| namer.name(p, "SQ poll thread"),
                Measure::one(cpu_axis(), |p| p.sqpoll_cpu_pct),
            );
            cpu.series.extend(sq.series);
            out.push(chart(
                id("cpu"),
                "io_uring features: CPU of the process and of its SQ poll thread".into(),
                &pts,
                Kind::Bars(cpu),
            ));
            out.push(chart(
                id("p999"),
                "io_uring features: p99.9 latency".into(),
                &pts,
                Kind::Bars(bars(
                    &pts,
                    "configuration",
                    label,
                    name,
                    single,
                    Measure::one(p999_axis(), |p| p.latency.p999_ns as f64),
                )),
            ));
        }
        StudyName::Scheduler => {
            let thr = |p: &Point| p.threads;
            let tname = |t: &usize| t.to_string();
            let series = |p: &Point| {
                namer.name(
                    p,
                    &format!(
                        "{} {}",
                        p.scheduler.as_deref().unwrap_or("?"),
                        format_size(p.bs)
                    ),
                )
            };
            out.push(chart(
                id("throughput"),
                "Throughput against threads under each I/O scheduler".into(),
                &pts,
                Kind::Lines(lines_over(
                    &pts,
                    "threads",
                    thr,
                    tname,
                    series,
                    mb_axis(),
                    |p| p.mb_s,
                )),
            ));
            out.push(chart(
                id("p999"),
                "p99.9 latency against threads under each I/O scheduler".into(),
                &pts,
                Kind::Lines(lines_over(
                    &pts,
                    "threads",
                    thr,
                    tname,
                    series,
                    p999_axis(),
                    |p| p.latency.p999_ns as f64,
                )),
            ));
        }
        StudyName::All => {}
    }
    out
}

/// The all-experiments charts: scatter with frontier, latency CDFs, one run's timeline.
pub fn all_charts(report: &Report) -> Vec<Chart> {
    let mut out = Vec::new();
    let idx: Vec<usize> = (0..report.points.len())
        .filter(|&i| report.points[i].plottable())
        .collect();
    if !idx.is_empty() {
        let pts: Vec<&Point> = idx.iter().map(|&i| &report.points[i]).collect();
        let sizes: Vec<u64> = pts
            .iter()
            .map(|p| p.bs)
            .collect::<BTreeSet<u64>>()
            .into_iter()
            .collect();
        let dots = idx
            .iter()
            .map(|&i| {
                let p = &report.points[i];
                let big = report.highlights.contains(&i);
                Dot {
                    x: p.mb_s,
                    y: p.latency.p999_ns as f64,
                    shape: sizes.iter().position(|&b| b == p.bs).unwrap_or(0),
                    cpu: p.cpu_pct,
                    big,
                    label: report.display_label(i),
                    fio: p.is_fio(),
                }
            })
            .collect();
        let cpu_max = pts
            .iter()
            .map(|p| p.cpu_pct)
            .fold(100.0_f64, |a, b| if b.is_finite() { a.max(b) } else { a });
        let frontier = report
            .frontier
            .iter()
            .map(|&i| {
                (
                    report.points[i].mb_s,
                    report.points[i].latency.p999_ns as f64,
                )
            })
            .collect();
        let mut c = chart(
            "all-scatter".into(),
            "All experiments: throughput against p99.9 latency (shape: block size, colour: CPU; best of each block size enlarged and labelled; dashed: Pareto frontier)".into(),
            &pts,
            Kind::Scatter(Scatter {
                x: mb_axis(),
                y: p999_axis(),
                shapes: sizes.iter().map(bs_name).collect(),
                dots,
                frontier,
                cpu_max,
            }),
        );
        c.height = 560;
        out.push(c);
    }
    let cdf = report.cdf_points(6);
    if !cdf.is_empty() {
        let pts: Vec<&Point> = cdf.iter().map(|&i| &report.points[i]).collect();
        let series = cdf
            .iter()
            .enumerate()
            .map(|(k, &i)| {
                let p = &report.points[i];
                LineSeries {
                    name: format!(
                        "{} {}{}",
                        report.display_label(i),
                        format_size(p.bs),
                        if report.frontier.contains(&i) {
                            " (frontier)"
                        } else {
                            ""
                        }
                    ),
                    points: tail_cdf(&p.bins),
                    color: k,
                    dashed: p.is_fio(),
                    marker: None,
                    fio: p.is_fio(),
                    step: true,
                }
            })
            .collect();
        let mut c = chart(
            "all-cdf".into(),
            "Latency distribution (CDF) of the frontier points and fio json+ jobs, from their stored histograms".into(),
            &pts,
            Kind::Lines(Lines {
                x: XAxis::Numeric(Axis::log("latency (log scale)", Unit::Ns)),
                y: Axis::linear("reads at or below (tail-stretched scale)", Unit::Tail),
                series,
            }),
        );
        c.height = 460;
        out.push(c);
    }
    if let Some(i) = report.timeline_point() {
        let p = &report.points[i];
        let t = |f: &dyn Fn(&crate::stats::TimelinePoint) -> f64| -> Vec<(f64, f64)> {
            let v: Vec<(f64, f64)> = p.timeline.iter().map(|tp| (tp.t_s, f(tp))).collect();
            thin(&v, MAX_LINE_POINTS)
        };
        let x = Axis {
            desc: "time since measuring began (s)".into(),
            scale: Scale::Linear,
            unit: Unit::Seconds,
            from_zero: true,
        };
        let panel = |name: &str, points, color, y| Lines {
            x: XAxis::Numeric(x.clone()),
            y,
            series: vec![LineSeries {
                name: name.into(),
                points,
                color,
                dashed: false,
                marker: Some(Shape::Circle),
                fio: false,
                step: false,
            }],
        };
        let mut c = chart(
            "all-timeline".into(),
            format!(
                "Per-second timeline of one run: {} {} {} ({}{})",
                report.display_label(i),
                p.access(),
                format_size(p.bs),
                p.engine,
                p.study
                    .as_deref()
                    .map(|s| format!(", {s} study"))
                    .unwrap_or_default()
            ),
            &[p],
            Kind::Stack(vec![
                panel(
                    "IOPS",
                    t(&|tp| tp.iops),
                    0,
                    Axis::linear("IOPS", Unit::Count),
                ),
                panel(
                    "p99",
                    t(&|tp| tp.p99_ns as f64),
                    1,
                    Axis::log("p99 latency (log scale)", Unit::Ns),
                ),
            ]),
        );
        c.height = 480;
        out.push(c);
    }
    out
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

/// Every chart of a report, section by section, all-experiments last.
pub fn every_chart(report: &Report) -> Vec<Chart> {
    let mut v: Vec<Chart> = report
        .sections
        .iter()
        .flat_map(|s| section_charts(report, s))
        .collect();
    v.extend(all_charts(report));
    v
}

/// Group charts by section id, for the HTML page.
pub fn charts_by_section(report: &Report) -> BTreeMap<String, Vec<Chart>> {
    let mut m = BTreeMap::new();
    for s in &report.sections {
        m.insert(s.study.name().to_string(), section_charts(report, s));
    }
    m.insert("all".to_string(), all_charts(report));
    m
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
        let mut f = point("fio:P", 4096, 1.0, 1.0);
        f.source = crate::report::Source::Fio;
        f.env.target = "/elsewhere".into();
        let n = Namer::new(&[&a, &f]);
        assert_eq!(n.name(&a, "psync"), "psync");
        assert_eq!(n.name(&f, "psync"), "fio psync");
        let n = Namer::new(&[&a, &b, &f]);
        assert_eq!(n.name(&a, "psync"), "/dev/x psync");
        assert_eq!(n.name(&b, "4K"), "…o/some/prepared/target-file 4K");
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
