//! Drawing charts (`super::chart`) with plotters: inline SVG for the HTML page, PNG through the
//! bitmap backend for `--png`. Log axes are drawn on log10 values with our own tick labels, so
//! every axis reads in units (µs, MB/s, % of a core) and empty or zero data cannot upset a scale.
//!
//! [`axes`] works out ranges, ticks and labels, [`legend`] draws legends, [`bars`], [`lines`] and
//! [`scatter`] draw each kind of chart on the shared [`canvas`] in the shared [`style`]; [`marks`]
//! gives their points whiskers for intervals and titles on hover.

mod axes;
mod bars;
mod canvas;
mod labels;
mod legend;
mod lines;
mod marks;
mod scatter;
mod style;

use crate::document::chart::{Chart, Kind};
use crate::error::{Error, Result};
use bars::draw_bars;
use canvas::wrap;
use lines::draw_lines;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use scatter::draw_scatter;
use std::path::Path;
use style::{DrawFailed, Res, SMALL, TITLE, fail, text_style};

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
    // Charts made outside the report's chart module obey the same rules (log axes for lines
    // far apart, no axis of one value).
    let kind = crate::document::chart::fit(c.kind.clone());
    match &kind {
        Kind::Bars(b) => draw_bars(&area, b),
        Kind::Lines(l) => draw_lines(&area, l, true),
        Kind::Scatter(s) => draw_scatter(&area, s),
        Kind::Stack(panels) => {
            let n = panels.len().max(1) as u32;
            let (_, ah) = area.dim_in_pixel();
            let parts = area.split_evenly((n as usize, 1));
            let _ = ah;
            // A panel of one series says what it is on its axis; several need a legend, and
            // all legends take the widest one's width so the panels' x axes line up.
            let widest = panels
                .iter()
                .filter(|l| l.series.len() > 1)
                .flat_map(|l| &l.series)
                .map(|s| style::text_width(&area, &s.name, style::LEGEND) + 46)
                .max()
                .unwrap_or(0);
            for (p, lines) in parts.iter().zip(panels) {
                let legend = lines.series.len() > 1;
                lines::draw_lines_beside(p, lines, legend, if legend { widest } else { 0 })?;
            }
            Ok(())
        }
    }
}

fn chart_error(c: &Chart, DrawFailed(why): DrawFailed) -> Error {
    Error::Draw {
        chart: c.id.clone(),
        hint: if why.to_lowercase().contains("font") {
            " (charts need a system font: install fontconfig and a font such as fonts-dejavu-core)"
        } else {
            ""
        },
        why,
    }
}

/// The chart as an SVG document (no script, no external references); each mark that has words
/// names itself when hovered (a `<title>`, [`marks`]).
pub fn svg(c: &Chart) -> Result<String> {
    let mut out = String::new();
    let (drawn, tips) = marks::collect(|| {
        let root = SVGBackend::with_string(&mut out, (c.width, c.height)).into_drawing_area();
        draw(c, &root, false).map_err(|e| chart_error(c, e))?;
        root.present().map_err(|e| chart_error(c, fail(e)))
    });
    drawn?;
    Ok(marks::titled(&out, &tips))
}

/// The chart as a PNG file, title and caption included, carrying readlab's name in its
/// `Software` text chunk ([`crate::outpath::PNG_SOFTWARE`]: how a later run knows the file as
/// one it wrote and may replace).
pub fn png(c: &Chart, path: &Path) -> Result<()> {
    let (w, h) = (c.width, c.height);
    let mut rgb = vec![0u8; w as usize * h as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, (w, h)).into_drawing_area();
        draw(c, &root, true)
            .and_then(|()| root.present().map_err(fail))
            .map_err(|e| chart_error(c, e))?;
    }
    let written = encode_png(&rgb, w, h, path);
    written.map_err(|e| {
        // No half-written picture is left behind.
        let _ = std::fs::remove_file(path);
        Error::io(path, "cannot write", e)
    })
}

/// 8-bit RGB pixels as a PNG file with readlab's `Software` text chunk before the image data.
fn encode_png(rgb: &[u8], w: u32, h: u32, path: &Path) -> std::io::Result<()> {
    let file = std::io::BufWriter::new(std::fs::File::create(path)?);
    let mut enc = png::Encoder::new(file, w, h);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    let (key, value) = crate::outpath::PNG_SOFTWARE;
    let io = |e: png::EncodingError| match e {
        png::EncodingError::IoError(e) => e,
        other => std::io::Error::other(other),
    };
    enc.add_text_chunk(key.to_string(), value.to_string())
        .map_err(io)?;
    let mut writer = enc.write_header().map_err(io)?;
    writer.write_image_data(rgb).map_err(io)?;
    writer.finish().map_err(io)
}
