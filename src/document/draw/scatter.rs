//! Scatters (all experiments, the tuner's search): throughput against the tail, shape and
//! outline for the block size (its own in every chart), fill for CPU, the dashed Pareto frontier,
//! and labels of the enlarged points placed where they overlap nothing (or dropped).

use super::axes::AxisMap;
use super::canvas::{Plane, configure, draw_marker, draw_ring, mesh_chart};
use super::labels::{Placer, h_pos};
use super::legend::{Entry, Swatch, draw_legend, entry, with_legend};
use super::marks::{Whisker, begin, bounded, draw_whisker, end, ends};
use super::style::*;
use crate::document::chart::{Dot, Scatter, Shape, bs_color, bs_marker};
use crate::size::format_size;
use crate::units::format_pct;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

pub(super) fn draw_scatter<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, s: &Scatter) -> Res {
    let entries = legend_entries(s);
    let (plot, legend) = with_legend(area, &entries, 170)?;
    if let Some(l) = &legend {
        draw_legend(l, &entries)?;
        cpu_scale(l, entries.len(), s.cpu_max)?;
    }
    // Bounded ends of the intervals widen the axes, so every whisker ends inside the plot.
    let xmap = AxisMap::new(
        &s.x,
        s.dots
            .iter()
            .map(|d| d.x)
            .chain(bounded(s.dots.iter().filter_map(|d| d.mark.x.as_ref()))),
    );
    let ymap = AxisMap::new(
        &s.y,
        s.dots
            .iter()
            .map(|d| d.y)
            .chain(bounded(s.dots.iter().filter_map(|d| d.mark.y.as_ref()))),
    );
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
    let (pw, ph) = pa.dim_in_pixel();
    let px = |x: f64, y: f64| {
        let c = chart.backend_coord(&(x, y));
        (c.0 - base.0, c.1 - base.1)
    };
    let whiskers: Vec<Vec<Whisker>> = dots
        .iter()
        .map(|&(d, (x, y))| {
            let (dx, dy) = (xmap.t(d.x).unwrap_or(0.0), ymap.t(d.y).unwrap_or(0.0));
            let across_x = d.mark.x.map(|span| Whisker {
                vertical: false,
                across: y,
                at: x,
                ends: ends(span, x, &|v| Some(px(xmap.t(v)?, dy).0), (0, pw as i32 - 1)),
            });
            let along_y = d.mark.y.map(|span| Whisker {
                vertical: true,
                across: x,
                at: y,
                ends: ends(span, y, &|v| Some(px(dx, ymap.t(v)?).1), (ph as i32 - 1, 0)),
            });
            across_x.into_iter().chain(along_y).collect()
        })
        .collect();
    let frontier: Vec<(f64, f64)> = s
        .frontier
        .iter()
        .filter_map(|&(x, y)| Some((xmap.t(x)?, ymap.t(y)?)))
        .collect();
    draw_dots(&mut chart, &pa, s, &dots, &whiskers, frontier)?;
    draw_labels(&pa, &dots)
}

/// An enlarged point's radius, or a small one's.
fn radius(d: &Dot) -> i32 {
    if d.big { 9 } else { 5 }
}

/// The legend: the target, the block sizes' shapes, what an enlarged point is, fio's ring, the
/// frontier.
fn legend_entries(s: &Scatter) -> Vec<Entry> {
    let mut entries: Vec<Entry> = Vec::new();
    if !s.target.is_empty() {
        entries.push(entry(Swatch::Heading, format!("target: {}", s.target)));
    }
    entries.push(entry(Swatch::Heading, "block size (shape, outline):"));
    for &bs in &s.sizes {
        entries.push(entry(
            Swatch::Marker {
                shape: bs_marker(bs),
                fill: WHITE,
                stroke: color(bs_color(bs)),
                r: 5,
            },
            format_size(bs),
        ));
    }
    if s.dots.iter().any(|d| d.big) {
        entries.push(entry(
            Swatch::Marker {
                shape: Shape::Circle,
                fill: WHITE,
                stroke: BLACK,
                r: 8,
            },
            s.big_means.clone(),
        ));
    }
    if s.dots.iter().any(|d| d.fio) {
        entries.push(entry(
            Swatch::Marker {
                shape: Shape::Circle,
                fill: WHITE,
                stroke: FIO,
                r: 6,
            },
            "fio point (ringed in blue)",
        ));
    }
    if s.frontier.len() > 1 {
        entries.push(entry(
            Swatch::Line {
                color: BLACK,
                dashed: true,
                marker: None,
                hollow: false,
            },
            "Pareto frontier",
        ));
    }
    entries
}

/// The CPU colour scale in the legend `l`, under its `entries` entries, up to `cpu_max` % of a
/// core (where there is room for it).
fn cpu_scale<DB: DrawingBackend>(l: &DrawingArea<DB, Shift>, entries: usize, cpu_max: f64) -> Res {
    let (_, lh) = l.dim_in_pixel();
    let top = 20 + entries as i32 * ROW;
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
            l.draw_text(&format_pct(cpu_max * frac), &font, (34, y))
                .map_err(fail)?;
        }
    }
    Ok(())
}

/// The points at their places `dots` (pixels in `pa`) with their `whiskers`, and the frontier
/// (in chart coordinates): small points first, the frontier over them, the best points on top.
fn draw_dots<DB: DrawingBackend>(
    chart: &mut ChartContext<'_, DB, Plane>,
    pa: &DrawingArea<DB, Shift>,
    s: &Scatter,
    dots: &[(&Dot, (i32, i32))],
    whiskers: &[Vec<Whisker>],
    frontier: Vec<(f64, f64)>,
) -> Res {
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
        for (&(d, at), ws) in dots.iter().zip(whiskers).filter(|((d, _), _)| d.big == big) {
            let fill = cpu_color(d.cpu / s.cpu_max.max(1.0));
            begin(pa, &d.mark.tip)?;
            for w in ws {
                draw_whisker(pa, w, color(bs_color(d.bs)))?;
            }
            draw_marker(
                pa,
                at,
                bs_marker(d.bs),
                radius(d),
                fill,
                color(bs_color(d.bs)),
                2,
            )?;
            if d.fio {
                draw_ring(pa, at, radius(d) + 4, FIO, 2)?;
            }
            end(pa, &d.mark.tip)?;
        }
    }
    Ok(())
}

/// Labels of the enlarged points and of every fio point: clear of each other and of the
/// enlarged points always, of the small ones where they can; dropped when nowhere is free.
fn draw_labels<DB: DrawingBackend>(
    pa: &DrawingArea<DB, Shift>,
    dots: &[(&Dot, (i32, i32))],
) -> Res {
    let (pw, ph) = pa.dim_in_pixel();
    let mut placer = Placer::new(pw, ph);
    for &(d, (x, y)) in dots {
        let r = radius(d) + if d.fio { 4 } else { 0 };
        let b = (x - r, y - r, 2 * r, 2 * r);
        if d.big || d.fio {
            placer.block(b);
        } else {
            placer.avoid(b);
        }
    }
    let font = text_style(SMALL, BLACK);
    for &(d, (x, y)) in dots.iter().filter(|(d, _)| d.big || d.fio) {
        let text = d.label.clone();
        let (tw, th) = text_box(pa, &text, SMALL);
        let r = radius(d) + if d.fio { 4 } else { 0 };
        let Some(spot) = placer.place(&text, (x, y), r, tw, th) else {
            continue;
        };
        let style = if d.fio {
            text_style(SMALL, FIO)
        } else {
            font.clone()
        };
        pa.draw_text(
            &text,
            &style.pos(Pos::new(h_pos(spot.align), VPos::Top)),
            (spot.x, spot.y),
        )
        .map_err(fail)?;
    }
    Ok(())
}
