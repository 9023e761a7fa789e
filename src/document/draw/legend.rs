//! Legends: entries with a swatch (filled, outlined, shaded layers, line, marker or heading)
//! drawn in a panel split off the right of the chart, as wide as the widest entry needs.

use super::canvas::draw_marker;
use super::style::*;
use crate::document::chart::Shape;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// A legend swatch.
pub(super) enum Swatch {
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

pub(super) struct Entry {
    pub(super) swatch: Swatch,
    pub(super) text: String,
}

pub(super) fn entry(swatch: Swatch, text: impl Into<String>) -> Entry {
    Entry {
        swatch,
        text: text.into(),
    }
}

pub(super) fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[Entry],
) -> Res {
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
        // Shorten a character at a time, keeping one ellipsis at the end (drop the previous
        // ellipsis first, or the loop would only ever remove what it just added).
        while text.chars().count() > 4 && text_width(area, &text, LEGEND) > room {
            while text.ends_with('…') {
                text.pop();
            }
            text.pop();
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
pub(super) type Split<DB> = (DrawingArea<DB, Shift>, Option<DrawingArea<DB, Shift>>);

/// Split off a legend panel on the right, as wide as its widest entry needs.
pub(super) fn with_legend<DB: DrawingBackend>(
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
