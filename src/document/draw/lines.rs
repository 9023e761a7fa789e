//! Line charts: series over a numeric or category x axis, plain, dashed or stepped, with
//! markers; several of them stacked as panels of one figure.

use super::axes::{AxisMap, category_axis, category_name};
use super::canvas::{configure, draw_marker, mesh_chart};
use super::labels::{Placer, h_pos};
use super::legend::{Entry, Swatch, draw_legend, entry, with_legend};
use super::marks::{Whisker, begin, bounded, draw_whisker, end, ends};
use super::style::*;
use crate::document::chart::{Lines, Mark, Scale, Shape, Unit, XAxis};
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
    // Bounded ends of the intervals widen the axis, so every whisker ends inside the plot.
    let ymap = AxisMap::new(
        &l.y,
        l.series.iter().flat_map(|s| {
            s.points
                .iter()
                .map(|p| p.1)
                .chain(bounded(s.marks.iter().filter_map(|m| m.y.as_ref())))
        }),
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
    let edges = ((0, pw as i32 - 1), (ph as i32 - 1, 0));
    for s in &l.series {
        let c = color(s.color);
        let labelled: Vec<Placed> = s
            .points
            .iter()
            .enumerate()
            .filter_map(|(k, &(x, y))| {
                Some(((xmap.t(x)?, ymap.t(y)?), s.labels.get(k), s.marks.get(k)))
            })
            .collect();
        let pts: Vec<(f64, f64)> = labelled.iter().map(|p| p.0).collect();
        let path = if s.step { steps(&pts) } else { pts.clone() };
        begin(&pa, &s.name)?;
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
        end(&pa, &s.name)?;
        // A series of one or two points shows them, marker or not.
        let marker = s.marker.or((pts.len() <= 2).then_some(Shape::Circle));
        let px = |x: f64, y: f64| {
            let (px, py) = chart.backend_coord(&(x, y));
            (px - base.0, py - base.1)
        };
        for &((x, y), _, mark) in &labelled {
            let (mx, my) = px(x, y);
            let tip = mark.map_or("", |m| m.tip.as_str());
            let whiskers = mark.map(|m| whiskers(m, (x, y), (mx, my), &px, &xmap, &ymap, edges));
            if marker.is_none() && whiskers.as_ref().is_none_or(|w| w.is_empty()) {
                continue;
            }
            begin(&pa, tip)?;
            for w in whiskers.iter().flatten() {
                draw_whisker(&pa, w, c)?;
            }
            if let Some(shape) = marker {
                placer.avoid((mx - 5, my - 5, 10, 10));
                let fill = if s.fio { WHITE } else { c };
                draw_marker(&pa, (mx, my), shape, 4, fill, c, if s.fio { 2 } else { 1 })?;
            }
            end(&pa, tip)?;
        }
        for (p, label, _) in &labelled {
            if let Some(text) = label {
                let (px, py) = chart.backend_coord(p);
                labels.push(((*text).clone(), (px - base.0, py - base.1), c));
            }
        }
    }
    draw_labels(&pa, placer, labels)
}

/// The whiskers of the point at `at` (drawing space; `(mx, my)` in pixels, `px` maps) for the
/// intervals its `mark` has; `edges` are the plot's (left, right) and (bottom, top) pixels.
fn whiskers(
    mark: &Mark,
    at: (f64, f64),
    (mx, my): (i32, i32),
    px: &dyn Fn(f64, f64) -> (i32, i32),
    xmap: &AxisMap,
    ymap: &AxisMap,
    edges: ((i32, i32), (i32, i32)),
) -> Vec<Whisker> {
    let across_x = mark.x.map(|span| Whisker {
        vertical: false,
        across: my,
        at: mx,
        ends: ends(span, mx, &|v| Some(px(xmap.t(v)?, at.1).0), edges.0),
    });
    let along_y = mark.y.map(|span| Whisker {
        vertical: true,
        across: mx,
        at: my,
        ends: ends(span, my, &|v| Some(px(at.0, ymap.t(v)?).1), edges.1),
    });
    across_x.into_iter().chain(along_y).collect()
}

/// A point of a line in drawing space, with its label and its mark (when it has them).
type Placed<'a> = ((f64, f64), Option<&'a String>, Option<&'a Mark>);

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
                l.series.iter().flat_map(|s| {
                    s.points
                        .iter()
                        .map(|p| p.0)
                        .chain(bounded(s.marks.iter().filter_map(|m| m.x.as_ref())))
                }),
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
