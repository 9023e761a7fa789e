//! Drawing the report's charts with plotters: inline SVG for the HTML page, PNG through the
//! bitmap backend for `--png`. Log axes are drawn on log10 values with our own tick labels, so
//! every axis reads in units (µs, MB/s, % of a core) and empty or zero data cannot upset a scale.

use super::charts::{Axis, Bars, Chart, Dot, Kind, Lines, Scale, Scatter, Shape, Unit, XAxis};
use crate::error::{Error, Result};
use plotters::coord::Shift;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::Path;

type Res<T = ()> = std::result::Result<T, String>;

/// One linear f64 axis with the ticks we chose (plotters' extension point for coordinates).
/// Log axes hold log10 values.
#[derive(Debug, Clone)]
struct Ticked {
    lo: f64,
    hi: f64,
    ticks: Vec<f64>,
}

impl Ranged for Ticked {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        let f = (v - self.lo) / (self.hi - self.lo);
        (limit.0 as f64 + f * (limit.1 - limit.0) as f64).round() as i32
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.lo..self.hi
    }
}

/// Every chart's coordinates.
type Plane = Cartesian2d<Ticked, Ticked>;

fn fail<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}

const FONT: &str = "sans-serif";
/// Text sizes (plotters' units; the SVG backend prints them as size / 1.24 px).
const TICK: f64 = 15.0;
const DESC: f64 = 16.0;
const LEGEND: f64 = 15.0;
const SMALL: f64 = 14.0;
const TITLE: f64 = 18.0;
const ROW: i32 = 22;

/// Tableau 10: distinct hues that survive printing in grey.
const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

const GRID: RGBColor = RGBColor(225, 225, 225);
const FIO: RGBColor = RGBColor(0, 90, 200);

fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

fn mix(a: RGBColor, b: RGBColor, t: f64) -> RGBColor {
    let t = t.clamp(0.0, 1.0);
    let m = |x: u8, y: u8| (x as f64 + (y as f64 - x as f64) * t).round() as u8;
    RGBColor(m(a.0, b.0), m(a.1, b.1), m(a.2, b.2))
}

/// Layer `k` of `n` of a hue: the first (min) darkest, the last (max) lightest.
fn shade(hue: RGBColor, k: usize, n: usize) -> RGBColor {
    if n <= 1 {
        return hue;
    }
    let t = k as f64 / (n - 1) as f64;
    if t < 0.25 {
        mix(hue, BLACK, 0.35 * (0.25 - t) / 0.25)
    } else {
        mix(hue, WHITE, (t - 0.25) / 0.75 * 0.78)
    }
}

/// CPU colour: white at 0, through yellow and orange, to dark red at the top of the scale.
fn cpu_color(frac: f64) -> RGBColor {
    const STOPS: [RGBColor; 5] = [
        RGBColor(255, 255, 255),
        RGBColor(255, 237, 120),
        RGBColor(253, 165, 50),
        RGBColor(230, 60, 30),
        RGBColor(120, 0, 30),
    ];
    let f = if frac.is_finite() {
        frac.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let pos = f * (STOPS.len() - 1) as f64;
    let i = (pos.floor() as usize).min(STOPS.len() - 2);
    mix(STOPS[i], STOPS[i + 1], pos - i as f64)
}

/// Three significant digits at most, no trailing zeros.
fn sig(v: f64) -> String {
    let a = v.abs();
    let s = if a >= 100.0 || a == 0.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    };
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    if s == "-0" { "0".into() } else { s }
}

fn fmt_ns(ns: f64) -> String {
    let a = ns.abs();
    if a < 1e3 {
        format!("{}ns", sig(ns))
    } else if a < 1e6 {
        format!("{}µs", sig(ns / 1e3))
    } else if a < 1e9 {
        format!("{}ms", sig(ns / 1e6))
    } else {
        format!("{}s", sig(ns / 1e9))
    }
}

fn fmt_bytes(b: f64) -> String {
    const UNITS: [(&str, f64); 4] = [
        ("TiB", 1_099_511_627_776.0),
        ("GiB", 1_073_741_824.0),
        ("MiB", 1_048_576.0),
        ("KiB", 1024.0),
    ];
    for (u, s) in UNITS {
        if b.abs() >= s {
            return format!("{} {u}", sig(b / s));
        }
    }
    format!("{} B", sig(b))
}

/// Round tick values from `lo` to `hi`, about `n` of them (steps of 1, 2 or 5 × 10^k).
fn linear_ticks(lo: f64, hi: f64, n: f64) -> Vec<f64> {
    let span = hi - lo;
    if span <= 0.0 || !span.is_finite() {
        return vec![lo];
    }
    let raw = span / n;
    let p = 10f64.powf(raw.log10().floor());
    let m = raw / p;
    let step = p * if m <= 1.0 {
        1.0
    } else if m <= 2.0 {
        2.0
    } else if m <= 5.0 {
        5.0
    } else {
        10.0
    };
    let mut t = Vec::new();
    let mut k = (lo / step).ceil();
    while k * step <= hi + step * 1e-9 && t.len() < 60 {
        let x = k * step;
        t.push(if x.abs() < step * 1e-9 { 0.0 } else { x });
        k += 1.0;
    }
    t
}

/// One axis: its scale in drawing space (log10 for log axes) and how its ticks read.
#[derive(Debug, Clone, PartialEq)]
struct AxisMap {
    scale: Scale,
    unit: Unit,
    lo: f64,
    hi: f64,
}

impl AxisMap {
    fn new(axis: &Axis, values: impl Iterator<Item = f64>) -> AxisMap {
        let vals: Vec<f64> = values
            .filter(|v| v.is_finite() && (axis.scale == Scale::Linear || *v > 0.0))
            .collect();
        let (min, max) = vals
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
                (a.min(v), b.max(v))
            });
        let (lo, hi) = if vals.is_empty() {
            match axis.scale {
                Scale::Log => (0.0, 1.0),
                Scale::Linear => (0.0, 1.0),
            }
        } else if axis.scale == Scale::Log {
            let (a, b) = (min.log10(), max.log10());
            let pad = ((b - a) * 0.06).max(0.08);
            let (mut lo, mut hi) = (a - pad, b + pad);
            if hi - lo < 0.6 {
                let mid = (a + b) / 2.0;
                lo = mid - 0.3;
                hi = mid + 0.3;
            }
            (lo, hi)
        } else if axis.unit == Unit::Tail {
            (0.0, max.ceil().clamp(1.0, 7.0))
        } else if axis.from_zero {
            let lo = min.min(0.0);
            let hi = if max > 0.0 { max * 1.08 } else { 1.0 };
            (lo, hi)
        } else if max > min {
            let pad = (max - min) * 0.04;
            (min - pad, max + pad)
        } else {
            let d = if min == 0.0 { 1.0 } else { min.abs() * 0.1 };
            (min - d, max + d)
        };
        AxisMap {
            scale: axis.scale,
            unit: axis.unit,
            lo,
            hi,
        }
    }

    /// A value in drawing space, or None when it cannot be drawn (≤ 0 on a log axis).
    fn t(&self, v: f64) -> Option<f64> {
        match self.scale {
            _ if !v.is_finite() => None,
            Scale::Log if v <= 0.0 => None,
            Scale::Log => Some(v.log10()),
            Scale::Linear => Some(v),
        }
    }

    fn ticks(&self) -> Vec<f64> {
        let (lo, hi) = (self.lo, self.hi);
        if self.unit == Unit::Tail {
            let mut t: Vec<f64> = (0..=(hi.floor() as i64)).map(|k| k as f64).collect();
            t.insert(1.min(t.len()), 2f64.log10());
            return t;
        }
        match self.scale {
            Scale::Log if hi - lo < 1.0 => {
                // Less than a decade: round values, evenly spaced in value.
                linear_ticks(10f64.powf(lo), 10f64.powf(hi), 5.0)
                    .into_iter()
                    .filter(|v| *v > 0.0)
                    .map(f64::log10)
                    .collect()
            }
            Scale::Log => {
                let (d0, d1) = (lo.floor() as i64, hi.ceil() as i64);
                let decades = (d1 - d0).max(1);
                let mults: &[f64] = if decades > 6 {
                    &[1.0]
                } else if decades > 2 {
                    &[1.0, 3.0]
                } else {
                    &[1.0, 2.0, 5.0]
                };
                let mut t: Vec<f64> = (d0..=d1)
                    .flat_map(|d| {
                        mults
                            .iter()
                            .map(move |m| (m * 10f64.powi(d as i32)).log10())
                    })
                    .filter(|x| *x >= lo - 1e-9 && *x <= hi + 1e-9)
                    .collect();
                if t.len() < 3 {
                    t = (d0..=d1)
                        .flat_map(|d| {
                            (1..10).map(move |m| (m as f64 * 10f64.powi(d as i32)).log10())
                        })
                        .filter(|x| *x >= lo - 1e-9 && *x <= hi + 1e-9)
                        .collect();
                }
                t
            }
            Scale::Linear if self.unit == Unit::Bytes => {
                // Steps of whole binary units (MiB, GiB).
                let m = lo.abs().max(hi.abs()).max(1.0);
                let unit = 1024f64.powi((m.log2() / 10.0).floor().max(0.0) as i32);
                linear_ticks(lo / unit, hi / unit, 6.0)
                    .into_iter()
                    .map(|t| t * unit)
                    .collect()
            }
            Scale::Linear => linear_ticks(lo, hi, 6.0),
        }
    }

    /// The tick label of a drawing-space value, with its unit.
    fn label(&self, t: f64) -> String {
        let v = match self.scale {
            Scale::Log => 10f64.powf(t),
            Scale::Linear => t,
        };
        match self.unit {
            Unit::Ns => fmt_ns(v),
            Unit::Number => sig(v),
            Unit::Count => {
                if v.abs() >= 1e6 {
                    format!("{}M", sig(v / 1e6))
                } else if v.abs() >= 1e4 {
                    format!("{}k", sig(v / 1e3))
                } else {
                    sig(v)
                }
            }
            Unit::Pct => format!("{}%", sig(v)),
            Unit::Bytes => fmt_bytes(v),
            Unit::Seconds => format!("{}s", sig(v)),
            Unit::Tail => {
                let pct = 100.0 * (1.0 - 10f64.powf(-t));
                let decimals = (t.round() as i64 - 2).max(0) as usize;
                format!("{pct:.decimals$}%")
            }
        }
    }
}

/// A legend swatch.
enum Swatch {
    Fill(RGBColor),
    /// A bar with outline (fio series).
    Outlined(RGBColor),
    /// The layers of a hue, dark to light.
    Shades(RGBColor, usize),
    Line {
        color: RGBColor,
        dashed: bool,
        marker: Option<Shape>,
        hollow: bool,
    },
    Marker {
        shape: Shape,
        fill: RGBColor,
        stroke: RGBColor,
        r: i32,
    },
    Heading,
}

struct Entry {
    swatch: Swatch,
    text: String,
}

fn entry(swatch: Swatch, text: impl Into<String>) -> Entry {
    Entry {
        swatch,
        text: text.into(),
    }
}

fn text_style(size: f64, c: RGBColor) -> TextStyle<'static> {
    (FONT, size).into_font().color(&c)
}

fn text_width<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, s: &str, size: f64) -> u32 {
    area.estimate_text_size(s, &text_style(size, BLACK))
        .map(|(w, _)| w)
        .unwrap_or((s.chars().count() as f64 * size * 0.6) as u32)
}

/// Polygon corners of a marker of radius `r` around (0, 0).
fn shape_points(shape: Shape, r: f64) -> Vec<(f64, f64)> {
    let ngon = |n: usize, r: f64, start_deg: f64| -> Vec<(f64, f64)> {
        (0..n)
            .map(|k| {
                let a = (start_deg + 360.0 * k as f64 / n as f64).to_radians();
                (r * a.cos(), r * a.sin())
            })
            .collect()
    };
    match shape {
        Shape::Circle => ngon(20, r, 0.0),
        Shape::Triangle => ngon(3, r * 1.25, -90.0),
        Shape::InvTriangle => ngon(3, r * 1.25, 90.0),
        Shape::Square => ngon(4, r * 1.2, 45.0),
        Shape::Diamond => ngon(4, r * 1.3, 0.0),
        Shape::Pentagon => ngon(5, r * 1.15, -90.0),
        Shape::Hexagon => ngon(6, r * 1.1, 0.0),
        Shape::Star => {
            let outer = ngon(5, r * 1.4, -90.0);
            let inner = ngon(5, r * 0.6, -54.0);
            outer
                .into_iter()
                .zip(inner)
                .flat_map(|(a, b)| [a, b])
                .collect()
        }
    }
}

fn draw_marker<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    at: (i32, i32),
    shape: Shape,
    r: i32,
    fill: RGBColor,
    stroke: RGBColor,
    stroke_width: u32,
) -> Res {
    let pts: Vec<(i32, i32)> = shape_points(shape, r as f64)
        .into_iter()
        .map(|(x, y)| (at.0 + x.round() as i32, at.1 + y.round() as i32))
        .collect();
    area.draw(&Polygon::new(pts.clone(), fill.filled()))
        .map_err(fail)?;
    let mut closed = pts.clone();
    closed.extend(pts.first().copied());
    area.draw(&PathElement::new(closed, stroke.stroke_width(stroke_width)))
        .map_err(fail)
}

fn draw_legend<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, entries: &[Entry]) -> Res {
    let (w, h) = area.dim_in_pixel();
    let row = ROW;
    let max_rows = ((h as i32 - 10) / row).max(1) as usize;
    let font = text_style(LEGEND, BLACK);
    for (k, e) in entries.iter().enumerate() {
        let y = 10 + k as i32 * row;
        if k + 1 == max_rows && entries.len() > max_rows {
            area.draw_text(
                &format!("… and {} more", entries.len() - k),
                &font.pos(Pos::new(HPos::Left, VPos::Center)),
                (8, y + 7),
            )
            .map_err(fail)?;
            break;
        }
        let cy = y + 7;
        match &e.swatch {
            Swatch::Fill(c) => {
                area.draw(&Rectangle::new([(8, y + 1), (30, y + 13)], c.filled()))
                    .map_err(fail)?;
            }
            Swatch::Outlined(c) => {
                area.draw(&Rectangle::new([(8, y + 1), (30, y + 13)], c.filled()))
                    .map_err(fail)?;
                area.draw(&Rectangle::new(
                    [(8, y + 1), (30, y + 13)],
                    BLACK.stroke_width(2),
                ))
                .map_err(fail)?;
            }
            Swatch::Shades(hue, n) => {
                let n = (*n).max(1);
                let step = 22 / n as i32;
                for k in 0..n {
                    let x0 = 8 + k as i32 * step;
                    area.draw(&Rectangle::new(
                        [(x0, y + 1), (x0 + step, y + 13)],
                        shade(*hue, k, n).filled(),
                    ))
                    .map_err(fail)?;
                }
            }
            Swatch::Line {
                color,
                dashed,
                marker,
                hollow,
            } => {
                let style = color.stroke_width(2);
                if *dashed {
                    for x in [6, 16, 26] {
                        area.draw(&PathElement::new(vec![(x, cy), (x + 6, cy)], style))
                            .map_err(fail)?;
                    }
                } else {
                    area.draw(&PathElement::new(vec![(6, cy), (32, cy)], style))
                        .map_err(fail)?;
                }
                if let Some(s) = marker {
                    let fill = if *hollow { WHITE } else { *color };
                    draw_marker(area, (19, cy), *s, 4, fill, *color, 1)?;
                }
            }
            Swatch::Marker {
                shape,
                fill,
                stroke,
                r,
            } => {
                draw_marker(
                    area,
                    (19, cy),
                    *shape,
                    *r,
                    *fill,
                    *stroke,
                    if *stroke == FIO { 2 } else { 1 },
                )?;
            }
            Swatch::Heading => {}
        }
        let x = if matches!(e.swatch, Swatch::Heading) {
            8
        } else {
            38
        };
        let mut text = e.text.clone();
        let room = w.saturating_sub(x as u32 + 4);
        while text.chars().count() > 4 && text_width(area, &text, LEGEND) > room {
            text.pop();
            while text.ends_with('…') {
                text.pop();
            }
            text.push('…');
        }
        let style = if matches!(e.swatch, Swatch::Heading) {
            text_style(LEGEND, RGBColor(80, 80, 80))
        } else {
            font.clone()
        };
        area.draw_text(
            &text,
            &style.pos(Pos::new(HPos::Left, VPos::Center)),
            (x, cy),
        )
        .map_err(fail)?;
    }
    Ok(())
}

/// A plot area and, beside it, the legend's.
type Split<DB> = (DrawingArea<DB, Shift>, Option<DrawingArea<DB, Shift>>);

/// Split off a legend panel on the right, as wide as its widest entry needs.
fn with_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[Entry],
    extra: u32,
) -> Res<Split<DB>> {
    if entries.is_empty() && extra == 0 {
        return Ok((area.clone(), None));
    }
    let (w, _) = area.dim_in_pixel();
    let widest = entries
        .iter()
        .map(|e| text_width(area, &e.text, LEGEND) + 46)
        .max()
        .unwrap_or(0)
        .max(extra);
    let lw = widest.min(w * 34 / 100).max(60).min(w / 2);
    let (plot, legend) = area.split_horizontally(w - lw);
    Ok((plot, Some(legend)))
}

fn mesh_chart<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    x: (f64, f64, Vec<f64>),
    y: (f64, f64, Vec<f64>),
    x_label_height: u32,
) -> Res<ChartContext<'a, DB, Plane>> {
    let (x_lo, x_hi, xt) = x;
    let (y_lo, y_hi, yt) = y;
    let x_hi = if x_hi > x_lo { x_hi } else { x_lo + 1.0 };
    let y_hi = if y_hi > y_lo { y_hi } else { y_lo + 1.0 };
    ChartBuilder::on(area)
        .margin_top(12)
        .margin_right(18)
        .margin_left(6)
        .margin_bottom(4)
        .x_label_area_size(x_label_height)
        .y_label_area_size(78)
        .build_cartesian_2d(
            Ticked {
                lo: x_lo,
                hi: x_hi,
                ticks: xt,
            },
            Ticked {
                lo: y_lo,
                hi: y_hi,
                ticks: yt,
            },
        )
        .map_err(fail)
}

/// Category x axis: positions 0 … n−1; labels turned when they would not fit side by side.
fn category_axis<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    names: &[String],
) -> (f64, f64, Vec<f64>, bool) {
    let n = names.len().max(1);
    let (w, _) = area.dim_in_pixel();
    let room = (w.saturating_sub(110)) as f64 / n as f64;
    let widest = names
        .iter()
        .map(|s| text_width(area, s, TICK))
        .max()
        .unwrap_or(0) as f64;
    (
        -0.5,
        n as f64 - 0.5,
        (0..n).map(|i| i as f64).collect(),
        widest > room * 0.9,
    )
}

fn category_name(names: &[String], v: f64) -> String {
    let i = v.round();
    if (v - i).abs() > 1e-6 || i < 0.0 {
        return String::new();
    }
    names.get(i as usize).cloned().unwrap_or_default()
}

fn configure<DB: DrawingBackend>(
    chart: &mut ChartContext<'_, DB, Plane>,
    x_desc: &str,
    y_desc: &str,
    xf: &dyn Fn(&f64) -> String,
    yf: &dyn Fn(&f64) -> String,
    categories: bool,
    turned: bool,
) -> Res {
    let mut mesh = chart.configure_mesh();
    mesh.bold_line_style(GRID)
        .light_line_style(TRANSPARENT)
        .axis_style(RGBColor(90, 90, 90))
        .x_desc(x_desc)
        .y_desc(y_desc)
        .x_label_formatter(xf)
        .y_label_formatter(yf)
        .x_labels(200)
        .y_labels(200)
        .label_style(text_style(TICK, RGBColor(40, 40, 40)))
        .axis_desc_style(text_style(DESC, BLACK));
    if categories {
        mesh.disable_x_mesh();
    }
    if turned {
        mesh.x_label_style(
            text_style(SMALL, RGBColor(40, 40, 40))
                .transform(FontTransform::Rotate90)
                .pos(Pos::new(HPos::Left, VPos::Center)),
        );
    }
    mesh.draw().map_err(fail)
}

fn draw_bars<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, b: &Bars) -> Res {
    let layered = b.layers.len() > 1;
    let mut entries: Vec<Entry> = b
        .series
        .iter()
        .enumerate()
        .map(|(j, s)| {
            let swatch = if layered {
                Swatch::Shades(color(j), b.layers.len())
            } else if s.fio {
                Swatch::Outlined(color(j))
            } else {
                Swatch::Fill(color(j))
            };
            entry(swatch, s.name.clone())
        })
        .collect();
    if layered {
        entries.push(entry(Swatch::Heading, "layers, dark to light:"));
        for (k, l) in b.layers.iter().enumerate() {
            entries.push(entry(
                Swatch::Fill(shade(RGBColor(110, 110, 110), k, b.layers.len())),
                l.clone(),
            ));
        }
    }
    if b.series.iter().any(|s| s.fio) {
        entries.push(entry(Swatch::Outlined(WHITE), "black outline: fio"));
    }
    if b.series.len() == 1 && !layered && !b.series[0].fio {
        entries.clear();
    }
    let (plot, legend) = with_legend(area, &entries, 0)?;
    if let Some(l) = &legend {
        draw_legend(l, &entries)?;
    }
    let mut ymap = AxisMap::new(
        &b.y,
        b.series
            .iter()
            .flat_map(|s| s.values.iter().flatten().flatten().copied()),
    );
    if ymap.scale == Scale::Log {
        // Bars start at a power of ten, so their lengths do not exaggerate small differences.
        ymap.lo = ymap.lo.min((ymap.lo + 0.08).floor());
    }
    let (x_lo, x_hi, xt, turned) = category_axis(&plot, &b.categories);
    let label_h = if turned {
        b.categories
            .iter()
            .map(|s| text_width(&plot, s, SMALL))
            .max()
            .unwrap_or(0)
            + 40
    } else {
        48
    };
    let mut chart = mesh_chart(
        &plot,
        (x_lo, x_hi, xt),
        (ymap.lo, ymap.hi, ymap.ticks()),
        label_h.min(160),
    )?;
    let names = b.categories.clone();
    configure(
        &mut chart,
        &b.x_desc,
        &b.y.desc,
        &|v| category_name(&names, *v),
        &|v| ymap.label(*v),
        true,
        turned,
    )?;
    // In each category, bars for the series that have a value there, side by side.
    let widest = b.series.len().clamp(1, 2) as f64;
    for i in 0..b.categories.len() {
        let present: Vec<usize> = (0..b.series.len())
            .filter(|&j| b.series[j].values.get(i).is_some_and(|v| v.is_some()))
            .collect();
        let slot = 0.8 / (present.len() as f64).max(widest);
        let start = i as f64 - slot * present.len() as f64 / 2.0;
        for (pos, &j) in present.iter().enumerate() {
            let s = &b.series[j];
            let Some(Some(vals)) = s.values.get(i) else {
                continue;
            };
            let hue = color(j);
            let x0 = start + pos as f64 * slot + slot * 0.06;
            let x1 = x0 + slot * 0.88;
            let mut order: Vec<usize> = (0..vals.len()).collect();
            order.sort_by(|&a, &c| vals[c].total_cmp(&vals[a]));
            let mut top_all: Option<f64> = None;
            for k in order {
                let Some(top) = ymap.t(vals[k]) else { continue };
                let top = top.clamp(ymap.lo, ymap.hi);
                top_all = Some(top_all.map_or(top, |t| t.max(top)));
                let fill = if layered {
                    shade(hue, k, vals.len())
                } else {
                    hue
                };
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(x0, ymap.lo), (x1, top)],
                        fill.filled(),
                    )))
                    .map_err(fail)?;
            }
            if s.fio
                && let Some(top) = top_all
            {
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(x0, ymap.lo), (x1, top)],
                        BLACK.stroke_width(2),
                    )))
                    .map_err(fail)?;
            }
        }
    }
    Ok(())
}

fn draw_lines<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, l: &Lines, legend: bool) -> Res {
    let mut entries: Vec<Entry> = Vec::new();
    if legend {
        entries = l
            .series
            .iter()
            .map(|s| {
                entry(
                    Swatch::Line {
                        color: color(s.color),
                        dashed: s.dashed,
                        marker: s.marker,
                        hollow: s.fio,
                    },
                    s.name.clone(),
                )
            })
            .collect();
        if l.series.iter().any(|s| s.fio) {
            entries.push(entry(Swatch::Heading, "dashed, hollow: fio"));
        }
    }
    let (plot, leg) = with_legend(area, &entries, 0)?;
    if let Some(a) = &leg {
        draw_legend(a, &entries)?;
    }
    let ymap = AxisMap::new(
        &l.y,
        l.series.iter().flat_map(|s| s.points.iter().map(|p| p.1)),
    );
    let (xmap, names, turned) = match &l.x {
        XAxis::Categories { names, .. } => {
            let (lo, hi, _, turned) = category_axis(&plot, names);
            (
                AxisMap {
                    scale: Scale::Linear,
                    unit: Unit::Number,
                    lo,
                    hi,
                },
                Some(names.clone()),
                turned,
            )
        }
        XAxis::Numeric(ax) => (
            AxisMap::new(
                ax,
                l.series.iter().flat_map(|s| s.points.iter().map(|p| p.0)),
            ),
            None,
            false,
        ),
    };
    let xt = match &names {
        Some(n) => (0..n.len()).map(|i| i as f64).collect(),
        None => xmap.ticks(),
    };
    let x_desc = match &l.x {
        XAxis::Categories { desc, .. } => desc.clone(),
        XAxis::Numeric(a) => a.desc.clone(),
    };
    let label_h = if turned {
        names
            .as_ref()
            .map(|n| {
                n.iter()
                    .map(|s| text_width(&plot, s, SMALL))
                    .max()
                    .unwrap_or(0)
            })
            .unwrap_or(0)
            + 40
    } else {
        48
    };
    let mut chart = mesh_chart(
        &plot,
        (xmap.lo, xmap.hi, xt),
        (ymap.lo, ymap.hi, ymap.ticks()),
        label_h.min(160),
    )?;
    configure(
        &mut chart,
        &x_desc,
        &l.y.desc,
        &|v| match &names {
            Some(n) => category_name(n, *v),
            None => xmap.label(*v),
        },
        &|v| ymap.label(*v),
        names.is_some(),
        turned,
    )?;
    let pa = chart.plotting_area().strip_coord_spec();
    let base = pa.get_base_pixel();
    for s in &l.series {
        let c = color(s.color);
        let pts: Vec<(f64, f64)> = s
            .points
            .iter()
            .filter_map(|&(x, y)| Some((xmap.t(x)?, ymap.t(y)?)))
            .collect();
        let path: Vec<(f64, f64)> = if s.step {
            let mut v = Vec::with_capacity(pts.len() * 2);
            for (k, &(x, y)) in pts.iter().enumerate() {
                if k > 0 {
                    v.push((x, pts[k - 1].1));
                }
                v.push((x, y));
            }
            v
        } else {
            pts.clone()
        };
        if path.len() > 1 {
            let style = c.stroke_width(2);
            if s.dashed {
                chart
                    .draw_series(DashedLineSeries::new(path, 7, 4, style))
                    .map_err(fail)?;
            } else {
                chart
                    .draw_series(LineSeries::new(path, style))
                    .map_err(fail)?;
            }
        }
        // A series of one or two points shows them, marker or not.
        let marker = s.marker.or((pts.len() <= 2).then_some(Shape::Circle));
        if let Some(shape) = marker {
            for &(x, y) in &pts {
                let (px, py) = chart.backend_coord(&(x, y));
                let fill = if s.fio { WHITE } else { c };
                draw_marker(
                    &pa,
                    (px - base.0, py - base.1),
                    shape,
                    4,
                    fill,
                    c,
                    if s.fio { 2 } else { 1 },
                )?;
            }
        }
    }
    Ok(())
}

fn overlaps(a: (i32, i32, i32, i32), b: (i32, i32, i32, i32)) -> bool {
    a.0 < b.0 + b.2 && b.0 < a.0 + a.2 && a.1 < b.1 + b.3 && b.1 < a.1 + a.3
}

fn draw_scatter<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, s: &Scatter) -> Res {
    let mut entries: Vec<Entry> = vec![entry(Swatch::Heading, "block size (shape):")];
    for (k, name) in s.shapes.iter().enumerate() {
        entries.push(entry(
            Swatch::Marker {
                shape: super::charts::SHAPES[k % super::charts::SHAPES.len()],
                fill: WHITE,
                stroke: BLACK,
                r: 5,
            },
            name.clone(),
        ));
    }
    entries.push(entry(
        Swatch::Marker {
            shape: Shape::Circle,
            fill: WHITE,
            stroke: BLACK,
            r: 8,
        },
        "best of its block size",
    ));
    if s.dots.iter().any(|d| d.fio) {
        entries.push(entry(
            Swatch::Marker {
                shape: Shape::Circle,
                fill: WHITE,
                stroke: FIO,
                r: 6,
            },
            "fio point (blue outline)",
        ));
    }
    entries.push(entry(
        Swatch::Line {
            color: BLACK,
            dashed: true,
            marker: None,
            hollow: false,
        },
        "Pareto frontier",
    ));
    let (plot, legend) = with_legend(area, &entries, 170)?;
    if let Some(l) = &legend {
        draw_legend(l, &entries)?;
        // The CPU colour scale under the entries.
        let (_, lh) = l.dim_in_pixel();
        let top = 20 + entries.len() as i32 * ROW;
        let bottom = lh as i32 - 24;
        if bottom - top > 60 {
            l.draw_text(
                "CPU (% of one core):",
                &text_style(LEGEND, RGBColor(80, 80, 80)).pos(Pos::new(HPos::Left, VPos::Center)),
                (8, top),
            )
            .map_err(fail)?;
            let (y0, y1) = (top + 14, bottom);
            let steps = 24;
            for k in 0..steps {
                let a = y0 + (y1 - y0) * k / steps;
                let b = y0 + (y1 - y0) * (k + 1) / steps;
                let frac = 1.0 - (k as f64 + 0.5) / steps as f64;
                l.draw(&Rectangle::new(
                    [(10, a), (28, b)],
                    cpu_color(frac).filled(),
                ))
                .map_err(fail)?;
            }
            l.draw(&Rectangle::new(
                [(10, y0), (28, y1)],
                RGBColor(120, 120, 120).stroke_width(1),
            ))
            .map_err(fail)?;
            let font = text_style(SMALL, BLACK).pos(Pos::new(HPos::Left, VPos::Center));
            for (frac, y) in [(1.0, y0), (0.5, (y0 + y1) / 2), (0.0, y1)] {
                l.draw_text(&format!("{}%", sig(s.cpu_max * frac)), &font, (34, y))
                    .map_err(fail)?;
            }
        }
    }
    let xmap = AxisMap::new(&s.x, s.dots.iter().map(|d| d.x));
    let ymap = AxisMap::new(&s.y, s.dots.iter().map(|d| d.y));
    let mut chart = mesh_chart(
        &plot,
        (xmap.lo, xmap.hi, xmap.ticks()),
        (ymap.lo, ymap.hi, ymap.ticks()),
        48,
    )?;
    configure(
        &mut chart,
        &s.x.desc,
        &s.y.desc,
        &|v| xmap.label(*v),
        &|v| ymap.label(*v),
        false,
        false,
    )?;
    let pa = chart.plotting_area().strip_coord_spec();
    let base = pa.get_base_pixel();
    let (pw, ph) = pa.dim_in_pixel();
    let at: Vec<Option<(i32, i32)>> = s
        .dots
        .iter()
        .map(|d| {
            let c = chart.backend_coord(&(xmap.t(d.x)?, ymap.t(d.y)?));
            Some((c.0 - base.0, c.1 - base.1))
        })
        .collect();
    let dots: Vec<(&Dot, (i32, i32))> = s
        .dots
        .iter()
        .zip(at)
        .filter_map(|(d, a)| Some((d, a?)))
        .collect();
    let frontier: Vec<(f64, f64)> = s
        .frontier
        .iter()
        .filter_map(|&(x, y)| Some((xmap.t(x)?, ymap.t(y)?)))
        .collect();
    let shape_of = |d: &Dot| super::charts::SHAPES[d.shape % super::charts::SHAPES.len()];
    let radius = |d: &Dot| if d.big { 9 } else { 5 };
    // Small points first, the frontier over them, the best points on top.
    for big in [false, true] {
        if big && frontier.len() > 1 {
            chart
                .draw_series(DashedLineSeries::new(
                    frontier.clone(),
                    6,
                    4,
                    BLACK.stroke_width(1),
                ))
                .map_err(fail)?;
        }
        for &(d, at) in dots.iter().filter(|(d, _)| d.big == big) {
            let fill = cpu_color(d.cpu / s.cpu_max.max(1.0));
            let (stroke, sw) = if d.fio { (FIO, 2) } else { (BLACK, 1) };
            draw_marker(&pa, at, shape_of(d), radius(d), fill, stroke, sw)?;
        }
    }
    // Labels of the best points and of every fio point, placed where they overlap least.
    // Labels avoid each other and the best points first, then every point if they can.
    let mut taken: Vec<(i32, i32, i32, i32)> = dots
        .iter()
        .filter(|(d, _)| d.big || d.fio)
        .map(|&(d, (x, y))| {
            let r = radius(d);
            (x - r, y - r, 2 * r, 2 * r)
        })
        .collect();
    let small: Vec<(i32, i32, i32, i32)> = dots
        .iter()
        .filter(|(d, _)| !d.big && !d.fio)
        .map(|&(d, (x, y))| {
            let r = radius(d);
            (x - r, y - r, 2 * r, 2 * r)
        })
        .collect();
    let font = text_style(SMALL, BLACK);
    for &(d, (x, y)) in dots.iter().filter(|(d, _)| d.big || d.fio) {
        let text = d.label.clone();
        let (tw, th) = pa
            .estimate_text_size(&text, &font)
            .map(|(w, h)| (w as i32, h as i32))
            .unwrap_or((text.len() as i32 * 7, 14));
        let r = radius(d) + 3;
        let candidates = [
            (x + r, y - th - 1),
            (x + r, y + 1),
            (x - r - tw, y - th - 1),
            (x - r - tw, y + 1),
            (x - tw / 2, y - r - th),
            (x - tw / 2, y + r),
            (x + r, y - th / 2),
            (x - r - tw, y - th / 2),
        ];
        let inside =
            |c: &(i32, i32)| c.0 >= 0 && c.1 >= 0 && c.0 + tw <= pw as i32 && c.1 + th <= ph as i32;
        let free = |c: &(i32, i32), obstacles: &[(i32, i32, i32, i32)]| {
            !obstacles.iter().any(|t| overlaps((c.0, c.1, tw, th), *t))
        };
        let spot = candidates
            .iter()
            .find(|c| inside(c) && free(c, &taken) && free(c, &small))
            .or_else(|| candidates.iter().find(|c| inside(c) && free(c, &taken)))
            .or_else(|| candidates.iter().find(|c| inside(c)))
            .copied()
            .unwrap_or(candidates[0]);
        taken.push((spot.0, spot.1, tw, th));
        pa.draw(&Rectangle::new(
            [(spot.0 - 1, spot.1), (spot.0 + tw + 1, spot.1 + th)],
            WHITE.mix(0.75).filled(),
        ))
        .map_err(fail)?;
        let style = if d.fio {
            text_style(SMALL, FIO)
        } else {
            font.clone()
        };
        pa.draw_text(&text, &style.pos(Pos::new(HPos::Left, VPos::Top)), spot)
            .map_err(fail)?;
    }
    Ok(())
}

/// Break `text` into lines no wider than `max` pixels.
fn wrap<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    text: &str,
    size: f64,
    max: u32,
) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut cur = String::new();
    for word in text.split_whitespace() {
        let candidate = if cur.is_empty() {
            word.to_string()
        } else {
            format!("{cur} {word}")
        };
        if !cur.is_empty() && text_width(area, &candidate, size) > max {
            lines.push(std::mem::take(&mut cur));
            cur = word.to_string();
        } else {
            cur = candidate;
        }
    }
    if !cur.is_empty() {
        lines.push(cur);
    }
    lines
}

/// Draw one chart on `root`. `standalone` adds its title and caption inside the picture (PNG);
/// on the HTML page the figure caption carries them.
pub fn draw<DB: DrawingBackend>(c: &Chart, root: &DrawingArea<DB, Shift>, standalone: bool) -> Res {
    root.fill(&WHITE).map_err(fail)?;
    let (w, h) = root.dim_in_pixel();
    let area = if standalone {
        let title = wrap(root, &c.title, TITLE, w - 20);
        let cap = wrap(root, &c.caption, SMALL, w - 20);
        let top = 8 + title.len() as u32 * 22;
        let foot = 6 + cap.len() as u32 * 17;
        let (head, rest) = root.split_vertically(top.min(h / 3));
        let (body, tail) =
            rest.split_vertically((h - top.min(h / 3)).saturating_sub(foot.min(h / 3)));
        for (k, line) in title.iter().enumerate() {
            head.draw_text(
                line,
                &text_style(TITLE, BLACK).pos(Pos::new(HPos::Left, VPos::Top)),
                (10, 6 + 22 * k as i32),
            )
            .map_err(fail)?;
        }
        for (k, line) in cap.iter().enumerate() {
            tail.draw_text(
                line,
                &text_style(SMALL, RGBColor(70, 70, 70)).pos(Pos::new(HPos::Left, VPos::Top)),
                (10, 2 + 17 * k as i32),
            )
            .map_err(fail)?;
        }
        body
    } else {
        root.clone()
    };
    match &c.kind {
        Kind::Bars(b) => draw_bars(&area, b),
        Kind::Lines(l) => draw_lines(&area, l, true),
        Kind::Scatter(s) => draw_scatter(&area, s),
        Kind::Stack(panels) => {
            let n = panels.len().max(1) as u32;
            let (_, ah) = area.dim_in_pixel();
            let parts = area.split_evenly((n as usize, 1));
            let _ = ah;
            for (p, lines) in parts.iter().zip(panels) {
                draw_lines(p, lines, false)?;
            }
            Ok(())
        }
    }
}

fn chart_error(c: &Chart, e: String) -> Error {
    Error::Engine(format!(
        "cannot draw chart {}: {e}{}",
        c.id,
        if e.to_lowercase().contains("font") {
            " (charts need a system font: install fontconfig and a font such as fonts-dejavu-core)"
        } else {
            ""
        }
    ))
}

/// The chart as an SVG document (no script, no external references).
pub fn svg(c: &Chart) -> Result<String> {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (c.width, c.height)).into_drawing_area();
        draw(c, &root, false).map_err(|e| chart_error(c, e))?;
        root.present().map_err(|e| chart_error(c, e.to_string()))?;
    }
    Ok(out)
}

/// The chart as a PNG file, title and caption included.
pub fn png(c: &Chart, path: &Path) -> Result<()> {
    let drawn = {
        let root = BitMapBackend::new(path, (c.width, c.height)).into_drawing_area();
        draw(c, &root, true).and_then(|()| root.present().map_err(fail))
    };
    drawn.map_err(|e| {
        // No half-drawn picture is left behind.
        let _ = std::fs::remove_file(path);
        chart_error(c, e)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tick_labels_carry_units() {
        assert_eq!(fmt_ns(250_000.0), "250µs");
        assert_eq!(fmt_ns(1_500_000.0), "1.5ms");
        assert_eq!(fmt_ns(12.0), "12ns");
        assert_eq!(fmt_bytes(64.0 * 1_048_576.0), "64 MiB");
        assert_eq!(sig(-0.0001), "0");
        assert_eq!(sig(0.0), "0");
        let a = AxisMap::new(&Axis::log("x", Unit::Ns), [1e3, 1e6].into_iter());
        let t = a.ticks();
        assert!(
            t.len() >= 4 && t.iter().all(|x| *x >= a.lo && *x <= a.hi),
            "{t:?}"
        );
        assert_eq!(a.label(3.0), "1µs");
        let tail = AxisMap::new(&Axis::linear("y", Unit::Tail), [0.5, 3.2].into_iter());
        assert_eq!(tail.hi, 4.0);
        let labels: Vec<String> = tail.ticks().iter().map(|t| tail.label(*t)).collect();
        assert_eq!(labels, ["0%", "50%", "90%", "99%", "99.9%", "99.99%"]);
    }

    #[test]
    fn empty_and_odd_values_make_sane_axes() {
        for axis in [Axis::log("x", Unit::Ns), Axis::linear("x", Unit::Number)] {
            for vals in [vec![], vec![0.0], vec![f64::NAN, -1.0], vec![5.0, 5.0]] {
                let a = AxisMap::new(&axis, vals.into_iter());
                assert!(a.hi > a.lo && a.lo.is_finite() && a.hi.is_finite(), "{a:?}");
                assert!(!a.ticks().is_empty() || a.scale == Scale::Log);
            }
        }
        assert_eq!(
            AxisMap::new(&Axis::log("x", Unit::Ns), [].into_iter()).t(0.0),
            None
        );
    }
}
