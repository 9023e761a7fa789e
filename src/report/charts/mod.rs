//! The report's charts as data: for each study the figures the report draws (latency bars per
//! block size, bandwidth against offset, throughput and CPU against threads, grouped bars for
//! queue and batch sizes, …) and the all-experiments figures (throughput vs p99.9 scatter with
//! its Pareto frontier, latency CDFs, a per-second timeline). `draw` turns them into pictures.

use crate::points::{Point, Report, caption};
use crate::size::format_size;
use std::collections::{BTreeMap, BTreeSet, HashMap};

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
    /// Plain numbers (MB/s, µs).
    Number,
    /// Whole numbers (ranks, targets, blocks per request): ticks only at integers.
    Whole,
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

/// Marker shapes; each block size has its own ([`bs_marker`]).
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

/// Palette indices from here on are the block sizes' own colours ([`bs_color`]), never a
/// series' by its order.
pub const BS_COLOR_BASE: usize = 1 << 20;

/// Where a block size sits among the standard sizes 512 B … 16 MiB (0 … 15); sizes between them
/// go with the nearest power of two.
pub fn bs_slot(bs: u64) -> usize {
    let l = (bs.max(1) as f64).log2().round() as i64 - 9;
    l.clamp(0, 15) as usize
}

/// A block size's colour, the same in every chart of every report.
pub fn bs_color(bs: u64) -> usize {
    BS_COLOR_BASE + bs_slot(bs)
}

/// A block size's marker, the same in every chart of every report (4K a circle).
pub fn bs_marker(bs: u64) -> Shape {
    SHAPES[(bs_slot(bs) + 5) % SHAPES.len()]
}

/// Series of block sizes (`bs[k]` is series k's): each takes its block size's colour and, when
/// it has markers, its marker; series sharing a block size keep apart by dashes (the first of
/// each solid, fio's and later ones dashed).
pub fn style_by_block_size(series: &mut [LineSeries], bs: &[u64]) {
    let mut seen: BTreeSet<u64> = BTreeSet::new();
    for (s, &b) in series.iter_mut().zip(bs) {
        s.color = bs_color(b);
        if s.marker.is_some() {
            s.marker = Some(bs_marker(b));
        }
        if !seen.insert(b) && !s.dashed {
            s.dashed = true;
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct LineSeries {
    pub name: String,
    /// (x, y); x is a category index on category axes.
    pub points: Vec<(f64, f64)>,
    /// Index into the palette (from [`BS_COLOR_BASE`] on, a block size's colour).
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
    /// The block size (its marker and outline colour).
    pub bs: u64,
    pub cpu: f64,
    /// Drawn larger and labelled (what that means: [`Scatter::big_means`]).
    pub big: bool,
    pub label: String,
    pub fio: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Scatter {
    pub x: Axis,
    pub y: Axis,
    /// The block sizes among the dots, ascending (one legend entry each).
    pub sizes: Vec<u64>,
    /// What an enlarged, labelled dot is (legend): `best of its block size`, `the tuner's pick`.
    pub big_means: String,
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
        kind: fit(kind),
    }
}

/// How far apart a chart's lines may be, largest peak over smallest, before they get a log axis.
pub const MAGNITUDES: f64 = 10.0;

/// The largest over the smallest peak of lines (the highest value of each, those above zero),
/// or None when a value is not above zero (a log axis could not show it) or fewer than two
/// lines have values.
pub fn magnitude_span(series: &[Vec<f64>]) -> Option<f64> {
    let peaks: Vec<f64> = series
        .iter()
        .filter(|v| !v.is_empty())
        .map(|v| v.iter().copied().fold(f64::NEG_INFINITY, f64::max))
        .collect();
    if peaks.len() < 2
        || series
            .iter()
            .flatten()
            .any(|v| v.is_nan() || *v <= 0.0 || v.is_infinite())
    {
        return None;
    }
    let lo = peaks.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = peaks.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Some(hi / lo)
}

/// A linear axis made logarithmic, saying so in its title.
fn to_log(y: &mut Axis) {
    y.scale = Scale::Log;
    y.from_zero = false;
    if !y.desc.contains("log scale") {
        y.desc = format!("{} (log scale)", y.desc);
    }
}

/// Lines whose peaks are more than [`MAGNITUDES`] apart get a log y axis (a 4K line beside a
/// 256K one would read as flat at zero).
fn fit_lines(l: &mut Lines) {
    if l.y.scale != Scale::Linear || matches!(l.y.unit, Unit::Tail) {
        return;
    }
    let ys: Vec<Vec<f64>> = l
        .series
        .iter()
        .map(|s| s.points.iter().map(|p| p.1).collect())
        .collect();
    if magnitude_span(&ys).is_some_and(|r| r > MAGNITUDES) {
        to_log(&mut l.y);
    }
}

/// Lines over a numeric x axis that all sit at one x value (a fleet of one size) become bars,
/// one category: an axis of one value gets no fractional ticks.
fn one_value_to_bars(l: &Lines) -> Option<Bars> {
    let XAxis::Numeric(x) = &l.x else {
        return None;
    };
    let xs: BTreeSet<u64> = l
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0.to_bits()))
        .collect();
    if xs.len() != 1 {
        return None;
    }
    let v = f64::from_bits(*xs.iter().next()?);
    let name = match x.unit {
        Unit::Whole | Unit::Number => crate::units::sig(v),
        _ => return None,
    };
    Some(Bars {
        x_desc: x.desc.clone(),
        categories: vec![name],
        y: l.y.clone(),
        layers: vec!["value".into()],
        series: l
            .series
            .iter()
            .map(|s| BarSeries {
                name: s.name.clone(),
                fio: s.fio,
                values: vec![s.points.first().map(|p| vec![p.1])],
            })
            .collect(),
    })
}

/// What every chart gets before it is drawn: lines far apart in magnitude on a log axis, an
/// axis of one value drawn as bars, bars far apart in magnitude on a log axis.
pub fn fit(kind: Kind) -> Kind {
    match kind {
        Kind::Lines(mut l) => {
            if let Some(b) = one_value_to_bars(&l) {
                return fit(Kind::Bars(b));
            }
            fit_lines(&mut l);
            Kind::Lines(l)
        }
        Kind::Stack(panels) => Kind::Stack(
            panels
                .into_iter()
                .map(|mut l| {
                    fit_lines(&mut l);
                    l
                })
                .collect(),
        ),
        Kind::Bars(mut b) => {
            if b.y.scale == Scale::Linear && b.layers.len() == 1 {
                let ys: Vec<Vec<f64>> = b
                    .series
                    .iter()
                    .map(|s| s.values.iter().flatten().flatten().copied().collect())
                    .collect();
                if magnitude_span(&ys).is_some_and(|r| r > MAGNITUDES) {
                    to_log(&mut b.y);
                }
            }
            Kind::Bars(b)
        }
        other => other,
    }
}

/// Where more of x stops paying: the x past which the next values add less than 10 % to y (the
/// last x while they still do), from points by increasing x; None with fewer than three.
pub fn knee(points: &[(f64, f64)]) -> Option<Knee> {
    if points.len() < 3 {
        return None;
    }
    for (i, &(x, y)) in points.iter().enumerate() {
        let later = points[i + 1..]
            .iter()
            .map(|p| p.1)
            .fold(f64::NEG_INFINITY, f64::max);
        if i + 1 == points.len() {
            return Some(Knee::StillGrowing(x));
        }
        if later < y * 1.1 {
            return Some(if i == 0 {
                Knee::Never(x)
            } else {
                Knee::StopsAt(x)
            });
        }
    }
    None
}

/// Where a line stops growing ([`knee`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Knee {
    /// No gain past the first x.
    Never(f64),
    /// Growth stops past this x.
    StopsAt(f64),
    /// Still growing at the last x.
    StillGrowing(f64),
}

impl Knee {
    /// In words: `{what} stops growing past 8 threads`, `… still growing at 8 threads`, `…
    /// gains nothing past 1 thread`; `n` names an x (`8 threads`, `queue size 16`).
    pub fn words(self, what: &str, n: &dyn Fn(f64) -> String) -> String {
        match self {
            Knee::Never(x) => format!("{what} gains nothing past {}", n(x)),
            Knee::StopsAt(x) => format!("{what} stops growing past {}", n(x)),
            Knee::StillGrowing(x) => format!("{what} still growing at {}", n(x)),
        }
    }
}

/// A title with what its lines say, per line where [`knee`] is defined: `{title}: 4K stops
/// growing past 8 threads; 256K still growing at 8 threads` (at most four, in order).
fn title_with_knees(title: &str, lines: &Lines, what: &str, n: &dyn Fn(f64) -> String) -> String {
    let found: Vec<(String, Knee)> = lines
        .series
        .iter()
        .filter(|s| !s.dashed || s.fio)
        .filter_map(|s| {
            let mut pts = s.points.clone();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            pts.dedup_by(|a, b| a.0 == b.0);
            let pts: Vec<(f64, f64)> = match &lines.x {
                XAxis::Categories { names, .. } => pts
                    .iter()
                    .filter_map(|&(i, y)| Some((names.get(i as usize)?.parse::<f64>().ok()?, y)))
                    .collect(),
                XAxis::Numeric(_) => pts,
            };
            let name = [s.name.as_str(), what]
                .into_iter()
                .filter(|w| !w.is_empty())
                .collect::<Vec<_>>()
                .join(" ");
            Some((name, knee(&pts)?))
        })
        .collect();
    // Every line saying the same is said once.
    let said: Vec<String> = if found.len() > 1 && found.iter().all(|f| f.1 == found[0].1) {
        let every = if what.is_empty() {
            "every line".to_string()
        } else {
            format!("{what} of every line")
        };
        vec![found[0].1.words(&every, n)]
    } else {
        found
            .iter()
            .take(4)
            .map(|(name, k)| k.words(name, n))
            .collect()
    };
    if said.is_empty() {
        title.to_string()
    } else {
        format!("{title}: {}", said.join("; "))
    }
}

pub const LATENCY_LAYERS: [&str; 5] = ["min", "avg", "p99", "p99.9", "max"];

/// Percentile `pct` of a point as drawn: NaN (nothing drawn) where its tables print `–`, by the
/// one rule of [`LatencySummary::shown`](crate::stats::LatencySummary::shown).
fn shown(p: &Point, pct: f64) -> f64 {
    p.latency.shown(pct).map_or(f64::NAN, |ns| ns as f64)
}

/// A point's latency bar layers; a percentile too few requests support is left out (NaN).
fn latency_layers(p: &Point) -> Vec<f64> {
    let l = &p.latency;
    vec![
        l.min_ns as f64,
        l.mean_ns,
        shown(p, 99.0),
        shown(p, 99.9),
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
            parts.push(format!("({})", crate::points::origin_name(&p.origin)));
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
    // Each point's series named once and each (series, category)'s first point found in one
    // pass: a report of thousands of inputs (each its own series) stays linear.
    let mut order: Vec<(String, bool)> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut first: HashMap<(usize, usize), usize> = HashMap::new();
    for (i, p) in pts.iter().enumerate() {
        let s = series(p);
        let si = match index.get(&s) {
            Some(&si) => si,
            None => {
                index.insert(s.clone(), order.len());
                order.push((s, p.is_fio()));
                order.len() - 1
            }
        };
        let ci = keys.binary_search(&cat(p)).unwrap_or(0);
        first.entry((si, ci)).or_insert(i);
    }
    let mut shown: Vec<usize> = (0..order.len()).collect();
    shown.sort_by_key(|&si| order[si].1);
    let series = shown
        .into_iter()
        .map(|si| {
            let (name, fio) = order[si].clone();
            let values = (0..keys.len())
                .map(|ci| {
                    first
                        .get(&(si, ci))
                        .map(|&i| values(pts[i]))
                        // Nothing to draw (a hidden percentile alone): no bar.
                        .filter(|v| v.iter().any(|x| x.is_finite()))
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

/// Lines over a category axis: one series per name, y from `value`; with `by_bs` each series
/// (of one block size) in its block size's colour and marker.
#[allow(clippy::too_many_arguments)]
fn lines_over<K: Ord + Clone>(
    pts: &[&Point],
    x_desc: &str,
    cat: impl Fn(&Point) -> K,
    cat_name: impl Fn(&K) -> String,
    series: impl Fn(&Point) -> String,
    y: Axis,
    value: impl Fn(&Point) -> f64,
    by_bs: bool,
) -> Lines {
    let (keys, names) = categories(pts, &cat, cat_name);
    let mut out: Vec<LineSeries> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut sizes: Vec<u64> = Vec::new();
    for p in pts {
        let name = series(p);
        let x = keys.binary_search(&cat(p)).unwrap_or(0) as f64;
        let y = value(p);
        let n = out.len();
        // A hidden value (NaN: a percentile too few requests support) is no point of the line.
        let y_shown = y.is_finite();
        match index.get(&name).map(|&i| &mut out[i]) {
            Some(s) => {
                if y_shown && !s.points.iter().any(|q| q.0 == x) {
                    s.points.push((x, y));
                }
            }
            None => {
                sizes.push(p.bs);
                index.insert(name.clone(), n);
                out.push(LineSeries {
                    name,
                    points: if y_shown { vec![(x, y)] } else { Vec::new() },
                    color: n,
                    dashed: p.is_fio(),
                    marker: Some(SHAPES[n % SHAPES.len()]),
                    fio: p.is_fio(),
                    step: false,
                    labels: Vec::new(),
                })
            }
        }
    }
    for s in &mut out {
        s.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    if by_bs {
        style_by_block_size(&mut out, &sizes);
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

/// A title with where each series' IOPS stop growing along `x` ([`knee`]), from the points.
fn title_with_point_knees(
    title: &str,
    pts: &[&Point],
    series: impl Fn(&Point) -> String,
    x: impl Fn(&Point) -> usize,
    what: &str,
    n: &dyn Fn(f64) -> String,
) -> String {
    let mut lines: Vec<LineSeries> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for p in pts {
        let name = series(p);
        let at = (x(p) as f64, p.iops);
        match index.get(&name).map(|&i| &mut lines[i]) {
            Some(s) => s.points.push(at),
            None => {
                index.insert(name.clone(), lines.len());
                lines.push(LineSeries {
                    name,
                    points: vec![at],
                    color: 0,
                    dashed: false,
                    marker: None,
                    fio: p.is_fio(),
                    step: false,
                    labels: Vec::new(),
                })
            }
        }
    }
    let l = Lines {
        x: XAxis::Numeric(Axis::linear("", Unit::Whole)),
        y: Axis::linear("", Unit::Count),
        series: lines,
    };
    title_with_knees(title, &l, what, n)
}

/// `1 thread`, `8 threads` (the count's noun, plural past one).
fn count_of(noun: &'static str) -> impl Fn(f64) -> String {
    move |x| {
        let s = crate::units::sig(x);
        if x == 1.0 {
            format!("{s} {noun}")
        } else {
            format!("{s} {noun}s")
        }
    }
}

fn bs_name(bs: &u64) -> String {
    format_size(*bs)
}

/// What every study's chart function gets: its plottable points, how to name series, its name.
pub struct Ctx<'a> {
    pts: Vec<&'a Point>,
    namer: Namer,
    study: &'static str,
    /// The whole report (the tuner's picks).
    report: &'a Report,
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
        use crate::points::tests::point;
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
    fn a_block_size_has_one_colour_and_marker() {
        assert_eq!(bs_color(4096), bs_color(4096));
        assert_eq!(bs_marker(4096), Shape::Circle);
        let sizes: Vec<u64> = (9..=24).map(|k| 1u64 << k).collect();
        let styles: BTreeSet<(usize, String)> = sizes
            .iter()
            .map(|&b| (bs_color(b), format!("{:?}", bs_marker(b))))
            .collect();
        assert_eq!(styles.len(), 16, "512 … 16M all told apart");
        let colors: BTreeSet<usize> = sizes.iter().map(|&b| bs_color(b)).collect();
        assert_eq!(colors.len(), 16);
        // Not by series order: 256K keeps its colour whether or not 4K is beside it.
        let line = |bs: u64| LineSeries {
            name: format_size(bs),
            points: vec![(0.0, 1.0)],
            color: 0,
            dashed: false,
            marker: Some(Shape::Circle),
            fio: false,
            step: false,
            labels: Vec::new(),
        };
        let mut a = vec![line(4096), line(262_144)];
        style_by_block_size(&mut a, &[4096, 262_144]);
        let mut b = vec![line(262_144)];
        style_by_block_size(&mut b, &[262_144]);
        assert_eq!(a[1].color, b[0].color);
        assert_eq!(a[1].marker, b[0].marker);
    }

    #[test]
    fn lines_far_apart_get_a_log_axis_and_one_value_axes_get_bars() {
        let line = |name: &str, pts: Vec<(f64, f64)>| LineSeries {
            name: name.into(),
            points: pts,
            color: 0,
            dashed: false,
            marker: None,
            fio: false,
            step: false,
            labels: Vec::new(),
        };
        let lines = |a: f64, b: f64| Lines {
            x: XAxis::Numeric(Axis::linear("ranks", Unit::Whole)),
            y: Axis::linear("throughput (MB/s)", Unit::Number),
            series: vec![
                line("4K", vec![(1.0, a / 2.0), (2.0, a)]),
                line("256K", vec![(1.0, b / 2.0), (2.0, b)]),
            ],
        };
        let Kind::Lines(l) = fit(Kind::Lines(lines(100.0, 2000.0))) else {
            panic!()
        };
        assert_eq!(l.y.scale, Scale::Log);
        assert_eq!(l.y.desc, "throughput (MB/s) (log scale)");
        let Kind::Lines(l) = fit(Kind::Lines(lines(300.0, 2000.0))) else {
            panic!()
        };
        assert_eq!(l.y.scale, Scale::Linear, "6.7× apart stays linear");
        let mut one = lines(1.0, 2.0);
        for s in &mut one.series {
            s.points.truncate(1);
        }
        let Kind::Bars(b) = fit(Kind::Lines(one)) else {
            panic!("one rank count drawn as lines")
        };
        assert_eq!(b.categories, ["1"]);
        assert_eq!(b.series[1].values, [Some(vec![1.0])]);
    }

    #[test]
    fn knees_say_where_growth_stops() {
        let n = |x: f64| format!("{x} threads");
        let k = knee(&[(1.0, 10.0), (2.0, 20.0), (4.0, 21.0), (8.0, 21.5)]).unwrap();
        assert_eq!(k, Knee::StopsAt(2.0));
        assert_eq!(k.words("4K", &n), "4K stops growing past 2 threads");
        assert_eq!(
            knee(&[(1.0, 10.0), (2.0, 20.0), (4.0, 40.0)]),
            Some(Knee::StillGrowing(4.0))
        );
        assert_eq!(
            knee(&[(1.0, 10.0), (2.0, 10.5), (4.0, 10.2)]),
            Some(Knee::Never(1.0))
        );
        assert_eq!(knee(&[(1.0, 10.0), (2.0, 20.0)]), None);
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
