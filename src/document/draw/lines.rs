//! Line charts: series over a numeric or category x axis, plain, dashed or stepped, with
//! markers; several of them stacked as panels of one figure.

use super::axes::{AxisMap, category_axis, category_name};
use super::canvas::{configure, draw_marker, mesh_chart};
use super::labels::{Placer, h_pos};
use super::legend::{Entry, Swatch, draw_legend, entry, with_legend};
use super::style::*;
use crate::document::chart::{Lines, Scale, Shape, Unit, XAxis};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{Pos, VPos};

pub(super) fn draw_lines<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    l: &Lines,
    legend: bool,
) -> Res {
    draw_lines_beside(area, l, legend, 0)
}

/// Lines with a legend at least `legend_width` pixels wide (stacked panels share one width so
/// their x axes line up).
pub(super) fn draw_lines_beside<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    l: &Lines,
    legend: bool,
    legend_width: u32,
) -> Res {
    let entries = if legend {
        legend_entries(l)
    } else {
        Vec::new()
    };
    let (plot, leg) = with_legend(area, &entries, legend_width)?;
    if let Some(a) = &leg {
        draw_legend(a, &entries)?;
    }
    let ymap = AxisMap::new(
        &l.y,
        l.series.iter().flat_map(|s| s.points.iter().map(|p| p.1)),
    );
    let (xmap, names, turned) = x_axis(&plot, l);
    let xt = match &names {
        Some(n) => (0..n.len()).map(|i| i as f64).collect(),
        None => xmap.ticks(),
    };
    let x_desc = match &l.x {
        XAxis::Categories { desc, .. } => desc.clone(),
        XAxis::Numeric(a) => a.desc.clone(),
    };
    let label_h = label_height(&plot, names.as_deref(), turned);
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
    let (pw, ph) = pa.dim_in_pixel();
    // Point labels go on after every line, so they can keep clear of every marker.
    let mut labels: Vec<(String, (i32, i32), RGBColor)> = Vec::new();
    let mut placer = Placer::new(pw, ph);
    for s in &l.series {
        let c = color(s.color);
        let labelled: Vec<((f64, f64), Option<&String>)> = s
            .points
            .iter()
            .enumerate()
            .filter_map(|(k, &(x, y))| Some(((xmap.t(x)?, ymap.t(y)?), s.labels.get(k))))
            .collect();
        let pts: Vec<(f64, f64)> = labelled.iter().map(|p| p.0).collect();
        let path = if s.step { steps(&pts) } else { pts.clone() };
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
                placer.avoid((px - base.0 - 5, py - base.1 - 5, 10, 10));
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
        for (p, label) in &labelled {
            if let Some(text) = label {
                let (px, py) = chart.backend_coord(p);
                labels.push(((*text).clone(), (px - base.0, py - base.1), c));
            }
        }
    }
    draw_labels(&pa, placer, labels)
}

/// The legend: a line swatch per series, and what fio's lines look like.
fn legend_entries(l: &Lines) -> Vec<Entry> {
    let mut entries: Vec<Entry> = l
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
    entries
}

/// The x axis: its map, its names when it is a category axis, and whether they are turned (too
/// wide to stand side by side).
fn x_axis<DB: DrawingBackend>(
    plot: &DrawingArea<DB, Shift>,
    l: &Lines,
) -> (AxisMap, Option<Vec<String>>, bool) {
    match &l.x {
        XAxis::Categories { names, .. } => {
            let (lo, hi, _, turned) = category_axis(plot, names);
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
    }
}

/// The height under the plot for the x axis' tick labels (turned names need their width).
fn label_height<DB: DrawingBackend>(
    plot: &DrawingArea<DB, Shift>,
    names: Option<&[String]>,
    turned: bool,
) -> u32 {
    if turned {
        names
            .map(|n| {
                n.iter()
                    .map(|s| text_width(plot, s, SMALL))
                    .max()
                    .unwrap_or(0)
            })
            .unwrap_or(0)
            + 40
    } else {
        48
    }
}

/// A distribution's points as steps: each value held until the next x.
fn steps(pts: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut v = Vec::with_capacity(pts.len() * 2);
    for (k, &(x, y)) in pts.iter().enumerate() {
        if k > 0 {
            v.push((x, pts[k - 1].1));
        }
        v.push((x, y));
    }
    v
}

/// The points' labels, each where `placer` finds it room (or dropped).
fn draw_labels<DB: DrawingBackend>(
    pa: &DrawingArea<DB, Shift>,
    mut placer: Placer,
    labels: Vec<(String, (i32, i32), RGBColor)>,
) -> Res {
    for (text, at, c) in labels {
        let (tw, th) = text_box(pa, &text, SMALL);
        if let Some(spot) = placer.place(&text, at, 4, tw, th) {
            pa.draw_text(
                &text,
                &text_style(SMALL, c).pos(Pos::new(h_pos(spot.align), VPos::Top)),
                (spot.x, spot.y),
            )
            .map_err(fail)?;
        }
    }
    Ok(())
}
