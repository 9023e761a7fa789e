//! The report's charts as data: for each study the figures the report draws (latency bars per
//! block size, bandwidth against offset, throughput and CPU against threads, grouped bars for
//! queue and batch sizes, …) and the all-experiments figures (throughput vs p99.9 scatter with
//! its Pareto frontier, latency CDFs, a per-second timeline), made of the document layer's chart
//! types (`crate::document::chart`) from the points (`crate::points`); `crate::document::draw`
//! turns them into pictures.

use crate::document::chart::{
    Axis, BarSeries, Bars, Chart, Dot, Kind, LineSeries, Lines, SHAPES, Scale, Scatter, Shape,
    Unit, XAxis, bs_color, bs_marker, fit, style_by_block_size, tail_cdf, thin, to_log,
};
use crate::points::{Point, Report, caption};
use crate::size::format_size;
use std::collections::{BTreeMap, BTreeSet, HashMap};

mod all;
pub mod cache;
pub mod devices;
pub mod figures;
mod fleet;
mod marks;
mod monitor;
pub mod net;
mod sections;
pub mod studies;

pub use all::all_charts;
pub use fleet::fleet_charts;
use marks::{CPU, Fig, IOPS, LATENCY, MB_S, P99, P999, Reads, bar_mark, mark, shown};
pub use sections::{ChartFn, charts_by_section, every_chart, section_charts, study_charts};

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

/// What bars show: the y axis, the layers of each bar and their figures of a point (a
/// percentile too few requests support is left out: NaN).
struct Measure<'a> {
    y: Axis,
    layers: &'a [&'a str],
    figs: Vec<Fig>,
}

impl<'a> Measure<'a> {
    /// One figure per bar.
    fn one(y: Axis, f: Fig) -> Measure<'a> {
        Measure {
            y,
            layers: &["value"],
            figs: vec![f],
        }
    }

    /// min, avg, p99, p99.9 and max overlaid, on a log scale.
    fn latency() -> Measure<'a> {
        Measure {
            y: lat_axis(),
            layers: &LATENCY_LAYERS,
            figs: LATENCY.to_vec(),
        }
    }

    fn values(&self, p: &Point) -> Vec<f64> {
        self.figs.iter().map(|f| f.value(p)).collect()
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
                        .map(|&i| m.values(pts[i]))
                        // Nothing to draw (a hidden percentile alone): no bar.
                        .filter(|v| v.iter().any(|x| x.is_finite()))
                })
                .collect();
            let marks = (0..keys.len())
                .map(|ci| {
                    first
                        .get(&(si, ci))
                        .map(|&i| bar_mark(pts[i], &m.figs))
                        .unwrap_or_default()
                })
                .collect();
            BarSeries {
                name,
                fio,
                values,
                marks,
            }
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

/// Lines over a category axis: one series per name, y the figure `value`; with `by_bs` each series
/// (of one block size) in its block size's colour and marker.
#[allow(clippy::too_many_arguments)]
fn lines_over<K: Ord + Clone>(
    pts: &[&Point],
    x_desc: &str,
    cat: impl Fn(&Point) -> K,
    cat_name: impl Fn(&K) -> String,
    series: impl Fn(&Point) -> String,
    y: Axis,
    value: Fig,
    by_bs: bool,
) -> Lines {
    let (keys, names) = categories(pts, &cat, cat_name);
    let mut out: Vec<LineSeries> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut sizes: Vec<u64> = Vec::new();
    for p in pts {
        let name = series(p);
        let x = keys.binary_search(&cat(p)).unwrap_or(0) as f64;
        let y = value.value(p);
        let n = out.len();
        // A hidden value (NaN: a percentile too few requests support) is no point of the line.
        let y_shown = y.is_finite();
        match index.get(&name).map(|&i| &mut out[i]) {
            Some(s) => {
                if y_shown && !s.points.iter().any(|q| q.0 == x) {
                    s.points.push((x, y));
                    s.marks.push(mark(p, None, value));
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
                    marks: if y_shown {
                        vec![mark(p, None, value)]
                    } else {
                        Vec::new()
                    },
                })
            }
        }
    }
    for s in &mut out {
        let mut order: Vec<usize> = (0..s.points.len()).collect();
        order.sort_by(|&a, &b| s.points[a].0.total_cmp(&s.points[b].0));
        s.points = order.iter().map(|&k| s.points[k]).collect();
        s.marks = order.iter().map(|&k| s.marks[k].clone()).collect();
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
                    marks: Vec::new(),
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
