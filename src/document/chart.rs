//! The charts' vocabulary: what a figure is as data (axes and their units, bars, lines, scatters,
//! stacked panels), the look every chart shares whoever makes it (a block size's own colour and
//! marker), and the rules every chart obeys before it is drawn ([`fit`]: lines far apart on a log
//! axis, an axis of one value as bars). The document layer: the report, the comparison and the
//! verdict make charts of these types, [`super::draw`] draws them; nothing here knows what a
//! report or a measured point is.

use std::collections::BTreeSet;

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

/// How well a drawn value is known: the interval that holds it. A side that is None is
/// unbounded (too few samples to bound it): drawn to the plot's edge with an open arrow.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Span {
    pub lo: Option<f64>,
    pub hi: Option<f64>,
}

/// What a drawn point carries besides its place: the words it names itself with when hovered
/// (none when empty) and how well each of its coordinates is known (no interval drawn when None).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Mark {
    pub tip: String,
    pub x: Option<Span>,
    pub y: Option<Span>,
}

/// What one bar carries besides its values: its words on hover and, per layer, how well that
/// value is known.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BarMark {
    pub tip: String,
    pub layers: Vec<Option<Span>>,
}

/// Bars of one series (one engine, target, …): per category, one value per layer, or nothing.
#[derive(Debug, Clone, PartialEq)]
pub struct BarSeries {
    pub name: String,
    pub fio: bool,
    pub values: Vec<Option<Vec<f64>>>,
    /// Per category (as `values`), what its bar carries; empty when nothing.
    pub marks: Vec<BarMark>,
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
    /// What each point carries (as `points`: its words on hover, its interval), or none.
    pub marks: Vec<Mark>,
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
    /// Its words on hover and how well its coordinates are known.
    pub mark: Mark,
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
pub fn to_log(y: &mut Axis) {
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
                marks: s
                    .marks
                    .first()
                    .map(|m| BarMark {
                        tip: m.tip.clone(),
                        layers: vec![m.y],
                    })
                    .into_iter()
                    .collect(),
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
    use crate::size::format_size;

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
            marks: Vec::new(),
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
            marks: Vec::new(),
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
