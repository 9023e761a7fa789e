//! What a drawn point carries besides its place (`chart::Mark`, `chart::BarMark`): its interval
//! as a whisker (a cap at a bounded end; dashed to the plot's edge, ending in an open arrow, where
//! a side is unbounded) and, in SVG, a `<title>` that names it when hovered. A mark's elements are
//! drawn between [`begin`] and [`end`], which leave sentinel texts in the SVG that [`titled`]
//! turns into `<g class="mark"><title>…</title>` … `</g>`; only [`collect`] (the SVG path) turns
//! them on, so a bitmap gets none. The one place charts get titles and whiskers.

use super::style::{FONT, Res, fail};
use crate::document::chart::Span;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::cell::RefCell;

/// Opens a mark: followed by the index of its title.
const OPEN: char = '\u{E000}';
/// Closes the mark opened last.
const CLOSE: char = '\u{E001}';

thread_local! {
    /// The titles of the marks drawn so far, while an SVG is being drawn.
    static TIPS: RefCell<Option<Vec<String>>> = const { RefCell::new(None) };
}

/// Run `draw` with titles on: every [`begin`] within leaves a sentinel; the titles, in order.
pub(super) fn collect<T>(draw: impl FnOnce() -> T) -> (T, Vec<String>) {
    let before = TIPS.with(|t| t.borrow_mut().replace(Vec::new()));
    let out = draw();
    let tips = TIPS.with(|t| std::mem::replace(&mut *t.borrow_mut(), before));
    (out, tips.unwrap_or_default())
}

fn on(tip: &str) -> bool {
    !tip.is_empty() && TIPS.with(|t| t.borrow().is_some())
}

fn sentinel<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, text: &str) -> Res {
    area.draw_text(text, &(FONT, 1).into_font().color(&BLACK), (0, 0))
        .map_err(fail)
}

/// Open a mark named `tip` (nothing when it is empty or titles are off).
pub(super) fn begin<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, tip: &str) -> Res {
    if !on(tip) {
        return Ok(());
    }
    let k = TIPS.with(|t| {
        let mut t = t.borrow_mut();
        let v = t.get_or_insert_with(Vec::new);
        v.push(tip.to_string());
        v.len() - 1
    });
    sentinel(area, &format!("{OPEN}{k}"))
}

/// Close the mark [`begin`] opened with the same `tip`.
pub(super) fn end<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, tip: &str) -> Res {
    if !on(tip) {
        return Ok(());
    }
    sentinel(area, &CLOSE.to_string())
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The SVG with each sentinel text (`<text …>`, its content, `</text>`: one line each) turned
/// into the group it stands for.
pub(super) fn titled(svg: &str, tips: &[String]) -> String {
    if tips.is_empty() {
        return svg.to_string();
    }
    let lines: Vec<&str> = svg.split_inclusive('\n').collect();
    let mut out = String::with_capacity(svg.len() + tips.len() * 80);
    let mut i = 0;
    while i < lines.len() {
        let content = lines.get(i + 1).map(|l| l.trim_end_matches('\n'));
        let sentinel = lines[i].starts_with("<text")
            && lines.get(i + 2).map(|l| l.trim_end()) == Some("</text>")
            && content.is_some_and(|c| c.starts_with(OPEN) || c == CLOSE.to_string());
        if !sentinel {
            out.push_str(lines[i]);
            i += 1;
            continue;
        }
        let c = content.unwrap_or_default();
        match c.strip_prefix(OPEN) {
            Some(k) => {
                let tip = k.parse::<usize>().ok().and_then(|k| tips.get(k));
                out.push_str(&format!(
                    "<g class=\"mark\"><title>{}</title>\n",
                    escape(tip.map_or("", |t| t.as_str()))
                ));
            }
            None => out.push_str("</g>\n"),
        }
        i += 3;
    }
    out
}

/// One end of a whisker, in pixels along its axis.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum End {
    /// The interval's end.
    At(i32),
    /// Unbounded: runs to the plot's edge here.
    Open(i32),
}

/// A whisker: along y (`vertical`) or x, at `across` on the other axis, from the value at `at`
/// to its two ends.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Whisker {
    pub(super) vertical: bool,
    pub(super) across: i32,
    pub(super) at: i32,
    pub(super) ends: [End; 2],
}

/// Half a cap's length and an arrow's width, pixels.
const CAP: i32 = 4;

/// The ends of `span` around the value at pixel `at`: `px` maps a value to pixels (None when it
/// cannot be drawn, as ≤ 0 on a log axis), `edges` are the plot's edges at the low and the high
/// end of the axis. An end past its edge, or on the wrong side of the value, stops at them.
pub(super) fn ends(
    span: Span,
    at: i32,
    px: &dyn Fn(f64) -> Option<i32>,
    edges: (i32, i32),
) -> [End; 2] {
    let clamp = |p: i32, edge: i32| {
        let (a, b) = (at.min(edge), at.max(edge));
        p.clamp(a, b)
    };
    let side = |v: Option<f64>, edge: i32| match v.and_then(px) {
        Some(p) => End::At(clamp(p, edge)),
        None => End::Open(edge),
    };
    [side(span.lo, edges.0), side(span.hi, edges.1)]
}

/// Draw `w` in `color` on `area` (the plot's pixels).
pub(super) fn draw_whisker<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    w: &Whisker,
    color: RGBColor,
) -> Res {
    let pt = |along: i32, off: i32| {
        if w.vertical {
            (w.across + off, along)
        } else {
            (along, w.across + off)
        }
    };
    let line = |a: (i32, i32), b: (i32, i32)| {
        area.draw(&PathElement::new(vec![a, b], color.stroke_width(1)))
            .map_err(fail)
    };
    for end in w.ends {
        match end {
            End::At(p) => {
                if p != w.at {
                    line(pt(w.at, 0), pt(p, 0))?;
                }
                line(pt(p, -CAP), pt(p, CAP))?;
            }
            End::Open(edge) => {
                let dir = (edge - w.at).signum();
                let mut a = w.at;
                while (edge - a) * dir > 0 {
                    let b = if (edge - (a + 4 * dir)) * dir > 0 {
                        a + 4 * dir
                    } else {
                        edge
                    };
                    line(pt(a, 0), pt(b, 0))?;
                    a = b + 3 * dir;
                }
                let back = edge - 6 * dir;
                area.draw(&PathElement::new(
                    vec![pt(back, -CAP), pt(edge, 0), pt(back, CAP)],
                    color.stroke_width(1),
                ))
                .map_err(fail)?;
            }
        }
    }
    Ok(())
}

/// The values of `spans`' bounded ends (to widen an axis so they fit).
pub(super) fn bounded<'a>(spans: impl Iterator<Item = &'a Span> + 'a) -> impl Iterator<Item = f64> {
    spans.flat_map(|s| [s.lo, s.hi]).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentinels_become_titled_groups() {
        let svg = "<svg>\n<text x=\"0\">\n\u{E000}0\n</text>\n<polygon/>\n<text x=\"0\">\n\u{E001}\n</text>\n<text>\nkeep\n</text>\n</svg>\n";
        let out = titled(svg, &["a <b> & c".into()]);
        assert_eq!(
            out,
            "<svg>\n<g class=\"mark\"><title>a &lt;b&gt; &amp; c</title>\n<polygon/>\n</g>\n<text>\nkeep\n</text>\n</svg>\n"
        );
        assert_eq!(titled(svg, &[]), svg);
    }

    #[test]
    fn ends_stop_at_the_edges_and_open_where_unbounded() {
        let px = |v: f64| (v > 0.0).then_some(100 - v as i32);
        let s = Span {
            lo: Some(20.0),
            hi: None,
        };
        assert_eq!(ends(s, 70, &px, (100, 0)), [End::At(80), End::Open(0)]);
        let s = Span {
            lo: Some(-5.0),
            hi: Some(200.0),
        };
        assert_eq!(ends(s, 70, &px, (100, 0)), [End::Open(100), End::At(0)]);
    }
}
