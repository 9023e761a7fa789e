//! The charts' look, shared by every kind: fonts and text sizes, the palette and the colour
//! ramps (layers of a hue, the CPU scale), and measuring text.

use plotters::coord::Shift;
use plotters::prelude::*;

/// Why the backend could not draw (plotters' error, in words; its type depends on the backend).
#[derive(Debug)]
pub struct DrawFailed(pub(super) String);

pub(super) type Res<T = ()> = std::result::Result<T, DrawFailed>;

pub(super) fn fail<E: std::fmt::Display>(e: E) -> DrawFailed {
    DrawFailed(e.to_string())
}

pub(super) const FONT: &str = "sans-serif";
/// Text sizes (plotters' units; the SVG backend prints them as size / 1.24 px).
pub(super) const TICK: f64 = 15.0;
pub(super) const DESC: f64 = 16.0;
pub(super) const LEGEND: f64 = 15.0;
pub(super) const SMALL: f64 = 14.0;
pub(super) const TITLE: f64 = 18.0;
pub(super) const ROW: i32 = 22;

/// Whiskers of bars: dark enough to show on any bar's hue.
pub(super) const WHISKER: RGBColor = RGBColor(30, 30, 30);

/// Tableau 10: distinct hues that survive printing in grey.
pub(super) const PALETTE: [RGBColor; 10] = [
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

/// The block sizes' own colours, 512 B … 16 MiB ([`crate::document::chart::bs_color`]): the
/// usual sizes (4K … 1M) the most distinct hues, neighbours never alike.
pub(super) const BS_PALETTE: [RGBColor; 16] = [
    RGBColor(23, 190, 207),
    RGBColor(188, 189, 34),
    RGBColor(127, 127, 127),
    RGBColor(31, 119, 180),
    RGBColor(227, 119, 194),
    RGBColor(44, 160, 44),
    RGBColor(140, 86, 75),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(214, 39, 40),
    RGBColor(0, 128, 128),
    RGBColor(60, 60, 150),
    RGBColor(128, 128, 0),
    RGBColor(255, 152, 100),
    RGBColor(90, 190, 110),
    RGBColor(120, 160, 220),
];

pub(super) const GRID: RGBColor = RGBColor(225, 225, 225);
pub(super) const FIO: RGBColor = RGBColor(0, 90, 200);

/// A palette index's colour: a series' by its order, or from
/// [`crate::document::chart::BS_COLOR_BASE`] on a block size's.
pub(super) fn color(i: usize) -> RGBColor {
    use crate::document::chart::BS_COLOR_BASE;
    if i >= BS_COLOR_BASE {
        BS_PALETTE[(i - BS_COLOR_BASE) % BS_PALETTE.len()]
    } else {
        PALETTE[i % PALETTE.len()]
    }
}

pub(super) fn mix(a: RGBColor, b: RGBColor, t: f64) -> RGBColor {
    let t = t.clamp(0.0, 1.0);
    let m = |x: u8, y: u8| (x as f64 + (y as f64 - x as f64) * t).round() as u8;
    RGBColor(m(a.0, b.0), m(a.1, b.1), m(a.2, b.2))
}

/// Layer `k` of `n` of a hue: the first (min) darkest, the last (max) lightest.
pub(super) fn shade(hue: RGBColor, k: usize, n: usize) -> RGBColor {
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
pub(super) fn cpu_color(frac: f64) -> RGBColor {
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

/// The box `s` takes at `size`, in pixels: the font's measure, or (when larger, or without a
/// font) a generous per-character estimate, so a box placed with it always holds the text.
pub(super) fn text_box<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    s: &str,
    size: f64,
) -> (i32, i32) {
    let (w, h) = area
        .estimate_text_size(s, &text_style(size, BLACK))
        .unwrap_or((0, 0));
    let guess = (s.chars().count() as f64 * size * 0.62).ceil() as i32;
    ((w as i32).max(guess), (h as i32).max(size.ceil() as i32))
}

pub(super) fn text_style(size: f64, c: RGBColor) -> TextStyle<'static> {
    (FONT, size).into_font().color(&c)
}

pub(super) fn text_width<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    s: &str,
    size: f64,
) -> u32 {
    area.estimate_text_size(s, &text_style(size, BLACK))
        .map(|(w, _)| w)
        .unwrap_or((s.chars().count() as f64 * size * 0.6) as u32)
}
