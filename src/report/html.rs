//! The report as one self-contained HTML page: inline SVG charts, inline CSS, no script, nothing
//! loaded from anywhere, readable on screen and on paper. One section per study with data, then
//! all experiments; each figure captioned with target, kernel and date.

use super::charts::{self, Chart};
use super::draw;
use super::model::Report;
use super::tables::{COLUMNS, Table, Value, human_layout, tables};
use crate::error::Result;
use std::fmt::Write;

const CSS: &str = r#"
:root { color-scheme: light; }
body { font-family: "DejaVu Sans", "Liberation Sans", Arial, sans-serif; color: #1b1b1b; background: #fff;
       max-width: 1100px; margin: 0 auto; padding: 12px 24px 40px; line-height: 1.45; }
h1 { font-size: 1.7em; margin: .4em 0 .1em; }
h2 { font-size: 1.3em; border-bottom: 2px solid #d8d8d8; padding-bottom: .15em; margin-top: 2.2em; }
p.lead { color: #444; margin-top: 0; }
nav ol { columns: 2; padding-left: 1.4em; }
a { color: #0a58a8; }
figure { margin: 1.4em 0; break-inside: avoid; page-break-inside: avoid; }
svg.chart { display: block; width: 100%; height: auto; max-width: 960px; border: 1px solid #ececec; }
figcaption { font-size: .88em; color: #333; margin-top: .45em; }
figcaption .env { color: #555; display: block; }
.tablewrap { overflow-x: auto; margin: .8em 0 1.6em; }
table { border-collapse: collapse; font-size: .76em; }
th, td { border: 1px solid #dcdcdc; padding: 2px 6px; text-align: right; white-space: nowrap; }
th { background: #f3f3f3; font-weight: 600; }
td.t, th.t { text-align: left; }
tr.fio td { color: #0050b4; }
tr.front td.lab { font-weight: 700; }
caption { caption-side: top; text-align: left; color: #555; padding-bottom: .3em; font-size: 1.05em; }
.notes { background: #fff8e6; border: 1px solid #f0d9a0; padding: .5em 1em; }
.empty { color: #666; font-style: italic; }
@media print {
  body { max-width: none; padding: 0; font-size: 10pt; }
  nav { display: none; }
  .tablewrap { overflow: visible; }
  table { font-size: 6.5pt; }
  h2 { break-after: avoid; page-break-after: avoid; }
  svg.chart { border: none; }
  a { color: inherit; text-decoration: none; }
}
@page { margin: 12mm; }
"#;

/// Escape text for HTML content and attribute values.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

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

fn figure(out: &mut String, n: &mut usize, c: &Chart) -> Result<()> {
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

fn table_html(out: &mut String, t: &Table) {
    let (cols, shared) = human_layout(t);
    let source = COLUMNS.iter().position(|c| c.key == "source");
    // Rows keep their source as a class even though the column is not shown.
    let pareto = COLUMNS.iter().position(|c| c.key == "pareto");
    let label = COLUMNS.iter().position(|c| c.key == "label");
    let _ = write!(
        out,
        "<div class=\"tablewrap\"><table id=\"table-{}\"><caption>{} — every point, every percentile{}</caption>\n<thead><tr>",
        esc(&t.id),
        esc(&t.title),
        if shared.is_empty() {
            String::new()
        } else {
            format!(
                ". Every row: {}",
                esc(&shared
                    .iter()
                    .map(|(h, v)| format!("{h} {v}"))
                    .collect::<Vec<_>>()
                    .join(", "))
            )
        }
    );
    for &k in &cols {
        let text = t
            .rows
            .first()
            .is_some_and(|r| matches!(r.get(k), Some(Value::Text(_)) | Some(Value::Empty)));
        let _ = write!(
            out,
            "<th{}>{}</th>",
            if text { " class=\"t\"" } else { "" },
            esc(COLUMNS[k].header)
        );
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for r in &t.rows {
        let fio = source
            .and_then(|k| r.get(k))
            .is_some_and(|v| v.raw() == "fio");
        let front = pareto
            .and_then(|k| r.get(k))
            .is_some_and(|v| *v == Value::Flag(true));
        let class = match (fio, front) {
            (true, true) => " class=\"fio front\"",
            (true, false) => " class=\"fio\"",
            (false, true) => " class=\"front\"",
            _ => "",
        };
        let _ = write!(out, "<tr{class}>");
        for &k in &cols {
            let v = r.get(k).cloned().unwrap_or(Value::Empty);
            let mut classes = Vec::new();
            if matches!(v, Value::Text(_) | Value::Empty) {
                classes.push("t");
            }
            if Some(k) == label {
                classes.push("lab");
            }
            let attr = if classes.is_empty() {
                String::new()
            } else {
                format!(" class=\"{}\"", classes.join(" "))
            };
            let _ = write!(out, "<td{attr}>{}</td>", esc(&v.human()));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table></div>\n");
}

/// The whole page.
pub fn render(report: &Report) -> Result<String> {
    let mut out = String::with_capacity(256 * 1024);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>readlab report</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
    );
    let fio = report.points.iter().filter(|p| p.is_fio()).count();
    let _ = write!(
        out,
        "<header>\n<h1>readlab report</h1>\n<p class=\"lead\">What is the fastest way to read from this device, at what latency, and at what CPU cost? {} point(s): {} measured by readlab, {} imported from fio. Inputs: {}.</p>\n</header>\n",
        report.points.len(),
        report.points.len() - fio,
        fio,
        esc(&report.inputs.join(", "))
    );
    let tables = tables(report);
    let mut by_section = charts::charts_by_section(report);
    // Contents.
    out.push_str("<nav><h2>Contents</h2><ol>\n");
    for s in &report.sections {
        let _ = writeln!(
            out,
            "<li><a href=\"#sec-{}\">{}</a></li>",
            s.study.name(),
            esc(super::section_title(s.study))
        );
    }
    let _ = writeln!(
        out,
        "<li><a href=\"#sec-all\">{}</a></li>",
        super::ALL_TITLE
    );
    if !report.notes.is_empty() {
        out.push_str("<li><a href=\"#notes\">Notes</a></li>\n");
    }
    out.push_str("</ol></nav>\n");
    let mut fig = 0usize;
    for s in &report.sections {
        let name = s.study.name();
        let _ = write!(
            out,
            "<section id=\"sec-{name}\">\n<h2>{}</h2>\n<p>Study <code>{name}</code>: {}.</p>\n",
            esc(super::section_title(s.study)),
            esc(s.study.describe())
        );
        let charts = by_section.remove(name).unwrap_or_default();
        if charts.is_empty() {
            out.push_str("<p class=\"empty\">No point of this study could be drawn (no reads measured).</p>\n");
        }
        for c in &charts {
            figure(&mut out, &mut fig, c)?;
        }
        if let Some(t) = tables.iter().find(|t| t.id == name) {
            table_html(&mut out, t);
        }
        out.push_str("</section>\n");
    }
    let _ = write!(
        out,
        "<section id=\"sec-all\">\n<h2>{}</h2>\n<p>Every point of every input on one chart, as in §11 of the report: throughput against p99.9 latency, \
         shape for block size, colour for CPU. Points on the dashed Pareto frontier are beaten by no other point on both throughput and p99.9; \
         the best points of each block size are drawn larger and labelled. fio points have a blue outline and a <code>fio:</code> label.</p>\n",
        super::ALL_TITLE
    );
    let all = by_section.remove("all").unwrap_or_default();
    if all.is_empty() {
        out.push_str("<p class=\"empty\">No measured points: nothing to draw.</p>\n");
    }
    for c in &all {
        figure(&mut out, &mut fig, c)?;
    }
    if let Some(t) = tables.iter().find(|t| t.id == "all") {
        table_html(&mut out, t);
    }
    out.push_str("</section>\n");
    if !report.notes.is_empty() {
        out.push_str("<section id=\"notes\" class=\"notes\">\n<h2>Notes</h2>\n<ul>\n");
        for n in &report.notes {
            let _ = writeln!(out, "<li>{}</li>", esc(n));
        }
        out.push_str("</ul>\n</section>\n");
    }
    out.push_str("</body>\n</html>\n");
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping() {
        assert_eq!(
            esc("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }

    #[test]
    fn an_empty_report_is_still_a_page() {
        let html = render(&Report::default()).unwrap();
        assert!(html.contains("No measured points"));
        assert!(!html.contains("<svg"));
        assert!(!html.contains("<script"));
    }
}
