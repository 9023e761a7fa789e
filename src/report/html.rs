//! The report as one self-contained HTML page: inline SVG charts, inline CSS, no script, nothing
//! loaded from anywhere, readable on screen and on paper. One section per study with data, then
//! all experiments; each figure captioned with target, kernel and date.

use super::charts;
use super::model::Report;
use super::page::{figure, page_parts};
use super::tables::{Table, every_row, for_people, tables};
use crate::error::Result;
use crate::table::html_escape as esc;
use std::fmt::Write;

fn table_html(out: &mut String, t: &Table) {
    let (table, shared) = for_people(t);
    let caption = format!(
        "{} — every point, every percentile{}",
        t.title,
        if shared.is_empty() {
            String::new()
        } else {
            format!(". Every row: {}", every_row(&shared))
        }
    );
    let _ = writeln!(
        out,
        "<div class=\"tablewrap\">{}</div>",
        table.html(&format!("table-{}", t.id), &caption)
    );
}

/// The whole page.
pub fn render(report: &Report) -> Result<String> {
    let (head, tail) = page_parts();
    let mut out = String::with_capacity(256 * 1024);
    out.push_str(&head);
    let fio = report.points.iter().filter(|p| p.is_fio()).count();
    let _ = write!(
        out,
        "<header>\n<h1>readlab report</h1>\n<p class=\"lead\">What is the fastest way to read from this device, at what latency, and at what CPU cost? {} point(s): {} measured by readlab, {} imported from fio. Inputs: {}.</p>\n</header>\n",
        report.points.len(),
        report.points.len() - fio,
        fio,
        esc(&report.inputs.join(", "))
    );
    for b in &report.banners {
        let _ = writeln!(out, "<p class=\"notes\">Warning: {}</p>", esc(&b.line()));
    }
    let tables = tables(report);
    let mut by_section = charts::charts_by_section(report);
    let verdict = crate::verdict::of_report(report);
    // Contents.
    out.push_str("<nav><h2>Contents</h2><ol>\n");
    if !verdict.targets.is_empty() {
        out.push_str("<li><a href=\"#sec-verdict\">Verdict</a></li>\n");
    }
    let selected = super::selected::selected(report);
    if !selected.is_empty() {
        out.push_str("<li><a href=\"#sec-selected\">Selected parameters</a></li>\n");
    }
    if !report.baseline.is_empty() {
        out.push_str("<li><a href=\"#sec-baseline\">Against the baseline</a></li>\n");
    }
    let devices = super::devices::targets(report);
    if !devices.is_empty() {
        out.push_str("<li><a href=\"#sec-devices\">Devices side by side</a></li>\n");
    }
    for s in &report.sections {
        let _ = writeln!(
            out,
            "<li><a href=\"#sec-{}\">{}</a></li>",
            s.study.name(),
            esc(super::section_title(s.study))
        );
    }
    if !report.fleet.is_empty() {
        out.push_str("<li><a href=\"#sec-fleet\">Fleet (MPI ranks)</a></li>\n");
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
    if !verdict.targets.is_empty() {
        out.push_str("<section id=\"sec-verdict\">\n<h2>Verdict</h2>\n<p>What the measurements answer, per target, block size and access: the fastest configuration, the lowest tail latency with one read in flight, the cheapest in CPU per I/O, and the pick for throughput (most IOPS), balanced (lowest p99.9 keeping 90 % of the best IOPS) and latency (lowest p99.9 keeping half). How sure: the margin over the runner-up against the run-to-run spread (of repetitions, or of the per-second figures of one run). fio points and readlab's own cost are not ranked.</p>\n");
        out.push_str(&crate::verdict::render::html(&verdict, &report.points));
        out.push_str("</section>\n");
    }
    let mut fig = 0usize;
    if !selected.is_empty() {
        out.push_str("<section id=\"sec-selected\">\n<h2>Selected parameters</h2>\n<p>What <code>readlab tune</code> selected for each goal and block size, per target, as the report's tables of selected parameters (threads, queue size, batch size): throughput is the most IOPS, balanced the lowest p99.9 keeping 90 % of it, latency the lowest p99.9 keeping half. Figures of re-measured finalists are medians of their runs.</p>\n");
        let _ = writeln!(
            out,
            "<div class=\"tablewrap\">{}</div>",
            super::selected::table(&selected).html(
                "table-selected",
                "Selected parameters per target, goal and block size"
            )
        );
        for c in super::selected::charts(report, &selected) {
            figure(&mut out, &mut fig, &c)?;
        }
        out.push_str("</section>\n");
    }
    if !devices.is_empty() {
        let _ = write!(
            out,
            "<section id=\"sec-devices\">\n<h2>Devices side by side</h2>\n<p>{} targets: {}. Each has its own all-experiments chart and Pareto frontier below; here, per block size and access, each target's best, and every configuration measured on more than one target.</p>\n",
            devices.len(),
            esc(&devices.join(", "))
        );
        let _ = writeln!(
            out,
            "<div class=\"tablewrap\">{}</div>",
            super::devices::table(&verdict, &report.points).html(
                "table-devices",
                "Each target's fastest, lowest tail at queue depth 1, cheapest in CPU and balanced pick"
            )
        );
        for c in super::devices::charts(report, &devices) {
            figure(&mut out, &mut fig, &c)?;
        }
        out.push_str("</section>\n");
    }
    if !report.baseline.is_empty() {
        let c = crate::compare::compare(&report.baseline, &report.points);
        out.push_str("<section id=\"sec-baseline\">\n<h2>Against the baseline</h2>\n<p>Every configuration measured both in the baseline (A) and here (B): the change of each figure, marked where it is beyond the run-to-run spread.</p>\n");
        out.push_str(&crate::compare::render::html_body(
            &c, "baseline", &mut fig,
        )?);
        out.push_str("</section>\n");
    }
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
    let fleet = by_section.remove("fleet").unwrap_or_default();
    if !fleet.is_empty() {
        out.push_str(super::model::fleet::SECTION_HTML);
        for c in &fleet {
            figure(&mut out, &mut fig, c)?;
        }
        if let Some((caption, t)) = super::model::fleet::spread_table(&report.fleet) {
            let _ = writeln!(
                out,
                "<div class=\"tablewrap\">{}</div>",
                t.html("table-fleet", &caption)
            );
        }
        out.push_str("</section>\n");
    }
    let _ = write!(
        out,
        "<section id=\"sec-all\">\n<h2>{}</h2>\n<p>Every point of every input, one chart per target, as in §11 of the report: throughput against p99.9 latency, \
         shape for block size, colour for CPU. Points on the dashed Pareto frontier are beaten by no other point of the same target on both throughput and p99.9; \
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
    out.push_str(tail);
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
    fn the_page_wraps_the_body() {
        let html = render(&Report::default()).unwrap();
        assert!(html.starts_with("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"));
        assert!(html.contains("<style>\n:root { color-scheme: light; }"));
        assert!(html.contains("</style>\n</head>\n<body>\n<header>\n"));
        assert!(html.ends_with("</section>\n</body>\n</html>\n"));
        assert!(!html.contains("{{"));
    }

    #[test]
    fn an_empty_report_is_still_a_page() {
        let html = render(&Report::default()).unwrap();
        assert!(html.contains("No measured points"));
        assert!(!html.contains("<svg"));
        assert!(!html.contains("<script"));
    }
}
