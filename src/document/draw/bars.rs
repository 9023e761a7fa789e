//! Bar charts: one bar per series in each category, side by side; layered bars (min, p50, …,
//! max) drawn as shades of the series' hue; fio series outlined.

use super::axes::{AxisMap, category_axis, category_name};
use super::canvas::{Plane, configure, mesh_chart};
use super::legend::{Entry, Swatch, draw_legend, entry, with_legend};
use super::marks::{Whisker, begin, bounded, draw_whisker, end, ends};
use super::style::*;
use crate::document::chart::{BarMark, Bars, Scale};
use plotters::coord::Shift;
use plotters::prelude::*;

pub(super) fn draw_bars<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, b: &Bars) -> Res {
    let layered = b.layers.len() > 1;
    let entries = legend_entries(b, layered);
    let (plot, legend) = with_legend(area, &entries, 0)?;
    if let Some(l) = &legend {
        draw_legend(l, &entries)?;
    }
    let mut ymap = AxisMap::new(
        &b.y,
        b.series.iter().flat_map(|s| {
            // Bounded ends of the intervals widen the axis, so every whisker ends inside it.
            let spans = s.marks.iter().flat_map(|m| m.layers.iter().flatten());
            s.values
                .iter()
                .flatten()
                .flatten()
                .copied()
                .chain(bounded(spans))
        }),
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
            let mark = s.marks.get(i);
            let tip = mark.map_or("", |m| m.tip.as_str());
            let pa = chart.plotting_area().strip_coord_spec();
            begin(&pa, tip)?;
            draw_bar(&mut chart, &ymap, (x0, x1), vals, hue, layered, s.fio)?;
            if let Some(m) = mark {
                for w in whiskers(&chart, &ymap, (x0, x1), vals, m) {
                    draw_whisker(&pa, &w, WHISKER)?;
                }
            }
            end(&pa, tip)?;
        }
    }
    Ok(())
}

/// The whiskers of a bar from `x0` to `x1` with layers `vals`, for the intervals its `mark` has
/// (spread across the bar, one per layer, so a p99's and a p99.9's stand apart).
fn whiskers<DB: DrawingBackend>(
    chart: &ChartContext<'_, DB, Plane>,
    ymap: &AxisMap,
    (x0, x1): (f64, f64),
    vals: &[f64],
    mark: &BarMark,
) -> Vec<Whisker> {
    let base = chart.plotting_area().strip_coord_spec().get_base_pixel();
    let px = |x: f64, y: f64| {
        let (px, py) = chart.backend_coord(&(x, y));
        (px - base.0, py - base.1)
    };
    let (bottom, top) = (px(x0, ymap.lo).1, px(x0, ymap.hi).1);
    let n = vals.len();
    vals.iter()
        .zip(&mark.layers)
        .enumerate()
        .filter_map(|(k, (&v, span))| {
            let span = (*span)?;
            let x = if n == 1 {
                (x0 + x1) / 2.0
            } else {
                x0 + (x1 - x0) * (k + 1) as f64 / (n + 1) as f64
            };
            let (mx, my) = px(x, ymap.t(v)?.clamp(ymap.lo, ymap.hi));
            Some(Whisker {
                vertical: true,
                across: mx,
                at: my,
                ends: ends(span, my, &|v| Some(px(x, ymap.t(v)?).1), (bottom, top)),
            })
        })
        .collect()
}

/// The legend: a swatch per series (its shades when bars are layered, with the layers named),
/// fio's outline; none for a single plain series.
fn legend_entries(b: &Bars, layered: bool) -> Vec<Entry> {
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
    entries
}

/// One bar from `x0` to `x1`: its layers `vals` overlaid in shades of `hue` (one colour when
/// not layered), the largest behind, outlined in black for fio.
fn draw_bar<DB: DrawingBackend>(
    chart: &mut ChartContext<'_, DB, Plane>,
    ymap: &AxisMap,
    (x0, x1): (f64, f64),
    vals: &[f64],
    hue: RGBColor,
    layered: bool,
    fio: bool,
) -> Res {
    let mut order: Vec<usize> = (0..vals.len()).collect();
    // Largest behind; of equal values the lower layer in front, so a stacked bar whose
    // top layer adds nothing shows its bottom layer.
    order.sort_by(|&a, &c| vals[c].total_cmp(&vals[a]).then(c.cmp(&a)));
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
    if fio && let Some(top) = top_all {
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(x0, ymap.lo), (x1, top)],
                BLACK.stroke_width(2),
            )))
            .map_err(fail)?;
    }
    Ok(())
}
