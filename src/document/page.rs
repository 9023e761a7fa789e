//! The frame every readlab page shares: the style sheet, the page around a body, and charts as
//! numbered figures of inline SVG with their captions (the report and `readlab compare` use it).

use super::draw;
use crate::document::chart::Chart;
use crate::error::Result;
use crate::table::html_escape as esc;
use std::fmt::Write;

/// The page's style sheet (screen and print).
const CSS: &str = include_str!("page.css");
/// The page around the report: `{{css}}` and `{{body}}` are filled in.
const PAGE: &str = include_str!("page.html");

/// plotters' SVG, made fit for inlining: an id and class on the root element, no XML namespace
/// URL (HTML does not need it), scalable through its viewBox.
fn inline_svg(c: &Chart) -> Result<String> {
    let svg = draw::svg(c)?;
    let svg = svg.trim_start();
    let svg = match svg.find("<svg") {
        Some(i) => &svg[i..],
        None => svg,
    };
    let svg = svg.replacen(r#" xmlns="http://www.w3.org/2000/svg""#, "", 1);
    Ok(svg.replacen(
        "<svg",
        &format!(
            r#"<svg id="chart-{}" class="chart" role="img" aria-label="{}""#,
            esc(&c.id),
            esc(&c.title)
        ),
        1,
    ))
}

/// Append chart `c` as a numbered figure (`*n` counts them) with its caption.
pub fn figure(out: &mut String, n: &mut usize, c: &Chart) -> Result<()> {
    *n += 1;
    let svg = inline_svg(c)?;
    let _ = write!(
        out,
        "<figure id=\"fig-{}\">\n{svg}\n<figcaption><b>Figure {}.</b> {}<span class=\"env\">{}</span></figcaption>\n</figure>\n",
        esc(&c.id),
        n,
        esc(&c.title),
        esc(&c.caption)
    );
    Ok(())
}

/// Any body in the report's page (its style sheet, no script).
pub fn page(body: &str) -> String {
    let (head, tail) = page_parts();
    format!("{head}{body}{tail}")
}

/// The page before and after the body, the style sheet filled in.
pub fn page_parts() -> (String, &'static str) {
    let (head, tail) = PAGE
        .split_once("{{body}}")
        .expect("page.html has a {{body}}");
    (head.replacen("{{css}}", CSS, 1), tail)
}
