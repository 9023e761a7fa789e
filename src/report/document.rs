//! The report as one [`Document`]: the answer and the banners first, then the verdict, the
//! selected parameters, the devices side by side, the baseline, one section per study, the fleet,
//! all experiments and the notes — in that one order for every format. Each section is built here
//! once; HTML, Markdown, JSON, CSV and the terminal only render it.

use super::tables::{Table as PointTable, every_row, for_machines, for_people, tables};
use crate::document::{Block, Document, Section, TableBlock};
use crate::error::{Error, Result};
use crate::points::Report;
use std::path::{Path, PathBuf};

/// The report's lead paragraph: how many points, from where.
fn lead(report: &Report) -> String {
    let fio = report.points.iter().filter(|p| p.is_fio()).count();
    format!(
        "What is the fastest way to read from this device, at what latency, and at what CPU cost? {} point(s): {} measured by readlab, {} imported from fio. Inputs: {}.",
        report.points.len(),
        report.points.len() - fio,
        fio,
        report.inputs.join(", ")
    )
}

/// A table of points for people, with what every row shares said once in its caption.
fn point_table(t: &PointTable) -> TableBlock {
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
    TableBlock {
        id: t.id.clone(),
        caption: format!("{caption}. {}", t.caption),
        table,
        ..TableBlock::default()
    }
}

/// The whole report as a document.
pub fn document(report: &Report) -> Document {
    let mut d = Document {
        title: "readlab report".into(),
        lead: lead(report),
        banners: report.banners.clone(),
        label_words: Some(|l| crate::label::key(l.iter().copied())),
        ..Document::default()
    };
    let verdict = crate::verdict::of_report(report);
    d.answers = crate::verdict::answer::answers(&verdict, &report.points);
    if !verdict.targets.is_empty() {
        let mut s = Section::new("verdict", "Verdict");
        s.paragraph(crate::verdict::render::INTRO);
        s.blocks
            .extend(crate::verdict::render::blocks(&verdict, &report.points));
        d.push(s);
    }
    let selected = super::selected::selected(report);
    if !selected.is_empty() {
        let mut s = Section::new("selected", "Selected parameters");
        s.paragraph("What readlab tune selected for each goal and block size, per target, as the report's tables of selected parameters (threads, queue size, batch size): throughput is the most IOPS, balanced the lowest p99.9 keeping 90 % of it, latency the lowest p99.9 keeping half. Figures of re-measured finalists are medians of their runs.");
        s.push(Block::Table(TableBlock {
            id: "selected".into(),
            caption: "Selected parameters per target, goal and block size".into(),
            table: super::selected::table(&selected),
            ..TableBlock::default()
        }));
        for c in super::selected::charts(report, &selected) {
            s.push(Block::Chart(c));
        }
        d.push(s);
    }
    let devices = super::devices::targets(report);
    if !devices.is_empty() {
        let mut s = Section::new("devices", "Devices side by side");
        s.paragraph(format!(
            "{} targets: {}. Each has its own all-experiments chart and Pareto frontier below; here, per block size and access, each target's best, and every configuration measured on more than one target.",
            devices.len(),
            devices.join(", ")
        ));
        s.push(Block::Table(TableBlock {
            id: "devices".into(),
            caption: "Each target's fastest, lowest tail at queue depth 1, cheapest in CPU and balanced pick".into(),
            table: super::devices::table(&verdict, &report.points),
            ..TableBlock::default()
        }));
        for c in super::devices::charts(report, &devices) {
            s.push(Block::Chart(c));
        }
        d.push(s);
    }
    if !report.baseline.is_empty() {
        let c = crate::compare::compare(&report.baseline, &report.points);
        let mut s = Section::new("baseline", "Against the baseline");
        s.paragraph("Every configuration measured both in the baseline (A) and here (B): whether it got slower, faster or stayed the same beyond the noise, then the change of each figure, marked where its interval excludes zero.");
        s.blocks
            .extend(crate::compare::render::blocks(&c, "baseline"));
        d.push(s);
    }
    let tables = tables(report);
    let mut by_section = super::charts::charts_by_section(report);
    for sec in &report.sections {
        let name = sec.study.name();
        let mut s = Section::new(name, super::tables::section_title(sec.study));
        s.paragraph(format!("Study {name}: {}.", sec.study.describe()));
        let charts = by_section.remove(name).unwrap_or_default();
        if charts.is_empty() {
            s.push(Block::Note(
                "No point of this study could be drawn (no reads measured).".into(),
            ));
        }
        s.blocks.extend(charts.into_iter().map(Block::Chart));
        if let Some(t) = tables.iter().find(|t| t.id == name) {
            s.push(Block::Table(point_table(t)));
        }
        d.push(s);
    }
    let fleet = by_section.remove("fleet").unwrap_or_default();
    if !fleet.is_empty() {
        let mut s = Section::new("fleet", "Fleet (MPI ranks)");
        s.paragraph(crate::points::fleet::INTRO);
        s.blocks.extend(fleet.into_iter().map(Block::Chart));
        if let Some((caption, t)) = crate::points::fleet::spread_table(&report.fleet) {
            s.push(Block::Table(TableBlock {
                id: "fleet".into(),
                caption,
                table: t,
                ..TableBlock::default()
            }));
        }
        d.push(s);
    }
    let mut s = Section::new("all", super::tables::ALL_TITLE);
    s.paragraph("Every point of every input, one chart per target, as in §11 of the report: throughput against p99.9 latency, shape for block size, colour for CPU. Points on the dashed Pareto frontier are beaten by no other point of the same target on both throughput and p99.9; the best points of each block size are drawn larger and labelled. fio points have a blue outline and a fio: label.");
    let all = by_section.remove("all").unwrap_or_default();
    if all.is_empty() {
        s.push(Block::Note("No measured points: nothing to draw.".into()));
    }
    s.blocks.extend(all.into_iter().map(Block::Chart));
    // The table for machines is there even without a point (CSV keeps its header).
    let mut b = match tables.iter().find(|t| t.id == "all") {
        Some(t) => point_table(t),
        None => TableBlock {
            id: "all".into(),
            ..TableBlock::default()
        },
    };
    b.raw = Some(for_machines(report));
    s.push(Block::Table(b));
    d.push(s);
    if !report.notes.is_empty() {
        let mut s = Section::new("notes", "Notes");
        s.push(Block::List(report.notes.clone()));
        d.push(s);
    }
    d
}

/// Every chart of the page, in its order (the document's).
pub fn page_charts(report: &Report) -> Vec<crate::document::chart::Chart> {
    document(report).charts().cloned().collect()
}

/// Write every chart of the report as `DIR/NN-<chart id>.png`; returns the files written.
pub fn write_pngs(report: &Report, dir: &Path) -> Result<Vec<PathBuf>> {
    if !dir.is_dir() {
        // Only the directory itself: its parent was checked to exist (a mistyped path is said).
        std::fs::create_dir(dir).map_err(|e| Error::io(dir, "cannot create", e))?;
    }
    let charts = page_charts(report);
    let mut files = Vec::new();
    for (c, name) in charts.iter().zip(png_names_of(&charts)) {
        let path = dir.join(name);
        // Drawn into a temporary file renamed into place: never through a link, never half.
        crate::fsio::write_with(&path, |tmp, _| crate::document::draw::png(c, tmp))?;
        files.push(path);
    }
    Ok(files)
}

/// The names [`write_pngs`] gives the report's charts (`01-iops.png`, …), for the output check
/// made before anything is written.
pub fn png_names(report: &Report) -> Vec<String> {
    png_names_of(&page_charts(report))
}

fn png_names_of(charts: &[crate::document::chart::Chart]) -> Vec<String> {
    charts
        .iter()
        .enumerate()
        .map(|(n, c)| {
            let id: String =
                c.id.chars()
                    .map(|ch| {
                        if ch.is_ascii_alphanumeric() || ch == '-' {
                            ch
                        } else {
                            '_'
                        }
                    })
                    .collect();
            format!("{:02}-{id}.png", n + 1)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::Format;

    fn render(r: &Report, f: Format) -> String {
        f.renderer(crate::terminal::Terminal::default())
            .render(&document(r))
            .unwrap()
    }

    #[test]
    fn the_page_wraps_the_body() {
        let html = render(&Report::default(), Format::Html);
        assert!(html.starts_with("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"));
        assert!(html.contains("<style>\n:root { color-scheme: light; }"));
        assert!(html.contains("</style>\n</head>\n<body>\n<header>\n"));
        assert!(html.ends_with("</section>\n</body>\n</html>\n"));
        assert!(!html.contains("{{"));
    }

    #[test]
    fn an_empty_report_is_still_a_page() {
        let html = render(&Report::default(), Format::Html);
        assert!(html.contains("No measured points"));
        assert!(!html.contains("<svg"));
        assert!(!html.contains("<script"));
    }
}

#[cfg(test)]
mod agreement {
    //! The formats render one document: same sections, same order, unique ids.
    use super::*;
    use crate::document::Format;
    use crate::points::tests::point;

    /// A report that once gave duplicate ids: two targets (the devices section), the devices
    /// study (its own `devices` section), a baseline (compare charts).
    fn combined() -> Report {
        let mut pts = Vec::new();
        for (name, mb) in [("loop6", 400.0), ("loop7", 380.0)] {
            for (label, qd) in [("P", 1), ("U32B1", 32)] {
                let mut p = point(label, 4096, mb * qd as f64 / 8.0, 100.0 * qd as f64);
                p.name = name.into();
                p.env.target = format!("/dev/{name}");
                p.iodepth = qd;
                p.engine = if qd == 1 { "psync" } else { "uring" }.into();
                p.study = Some("devices".into());
                pts.push(p);
            }
        }
        let mut r = Report::from_points(pts.clone());
        r.baseline = pts;
        r
    }

    fn between<'a>(s: &'a str, from: &str, to: &str) -> Vec<&'a str> {
        s.split(from)
            .skip(1)
            .filter_map(|x| x.split(to).next())
            .collect()
    }

    #[test]
    fn html_contents_html_body_and_markdown_have_the_same_sections_in_order() {
        let r = combined();
        let d = document(&r);
        let titles: Vec<&str> = d.sections.iter().map(|s| s.title.as_str()).collect();
        assert!(titles.len() >= 5, "{titles:?}");
        let t = crate::terminal::Terminal::default();
        let html = Format::Html.renderer(t).render(&d).unwrap();
        let nav = html
            .split("<nav>")
            .nth(1)
            .unwrap()
            .split("</nav>")
            .next()
            .unwrap();
        let contents: Vec<&str> = between(nav, "<li><a href=\"#", "</a>")
            .into_iter()
            .filter_map(|l| l.split_once("\">").map(|x| x.1))
            .collect();
        let body: Vec<&str> = between(html.split("</nav>").nth(1).unwrap(), "<h2>", "</h2>");
        let md = Format::Markdown.renderer(t).render(&d).unwrap();
        let md_titles: Vec<&str> = md.lines().filter_map(|l| l.strip_prefix("## ")).collect();
        let text = Format::Text.renderer(t).render(&d).unwrap();
        assert_eq!(contents, titles);
        assert_eq!(body, titles);
        assert_eq!(md_titles, titles);
        let mut at = 0;
        for title in &titles {
            at += text[at..].find(&format!("\n{title}\n")).expect(title) + 1;
        }
    }

    #[test]
    fn every_html_id_of_a_combined_report_is_unique() {
        let html = Format::Html
            .renderer(crate::terminal::Terminal::default())
            .render(&document(&combined()))
            .unwrap();
        let ids: Vec<&str> = between(&html, " id=\"", "\"");
        let mut seen = std::collections::BTreeSet::new();
        for id in &ids {
            assert!(seen.insert(*id), "duplicate id {id}");
        }
        assert!(
            ids.contains(&"sec-devices") && ids.contains(&"sec-devices-2"),
            "{ids:?}"
        );
        // Every contents link lands on a section.
        for href in between(&html, "href=\"#", "\"") {
            assert!(seen.contains(href), "{href}");
        }
    }
}
