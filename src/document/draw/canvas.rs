//! The drawing surface every chart kind shares: plotters coordinates with our own ticks, the
//! plot frame with its grid and tick labels, point markers, and wrapping text to a width.

use super::style::*;
use crate::document::chart::Shape;
use plotters::coord::Shift;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// One linear f64 axis with the ticks we chose (plotters' extension point for coordinates).
/// Log axes hold log10 values.
#[derive(Debug, Clone)]
pub(super) struct Ticked {
    pub(super) lo: f64,
    pub(super) hi: f64,
    pub(super) ticks: Vec<f64>,
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
pub(super) type Plane = Cartesian2d<Ticked, Ticked>;

/// Polygon corners of a marker of radius `r` around (0, 0).
pub(super) fn shape_points(shape: Shape, r: f64) -> Vec<(f64, f64)> {
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

pub(super) fn draw_marker<DB: DrawingBackend>(
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

/// A circle's outline, nothing filled (the ring around a fio point).
pub(super) fn draw_ring<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    at: (i32, i32),
    r: i32,
    stroke: RGBColor,
    stroke_width: u32,
) -> Res {
    let mut pts: Vec<(i32, i32)> = shape_points(Shape::Circle, r as f64)
        .into_iter()
        .map(|(x, y)| (at.0 + x.round() as i32, at.1 + y.round() as i32))
        .collect();
    pts.extend(pts.first().copied());
    area.draw(&PathElement::new(pts, stroke.stroke_width(stroke_width)))
        .map_err(fail)
}

pub(super) fn mesh_chart<'a, DB: DrawingBackend>(
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

pub(super) fn configure<DB: DrawingBackend>(
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

/// Break `text` into lines no wider than `max` pixels.
pub(super) fn wrap<DB: DrawingBackend>(
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
