//! Markdown export of the report's tables: a heading and a caption (target, kernel, date) per
//! table, then the same rows and columns as the CSV, with units for people.

use super::ReportExporter;
use crate::error::Result;
use crate::report::Report;
use crate::report::tables::{every_row, for_people, tables};
use crate::table::markdown_escape;
use std::fmt::Write;

/// The report's tables in Markdown.
pub struct MarkdownExporter;

impl ReportExporter for MarkdownExporter {
    fn render(&self, report: &Report) -> Result<String> {
        let mut s = String::from("# readlab report\n\n");
        let fio = report.points.iter().filter(|p| p.is_fio()).count();
        let _ = writeln!(
            s,
            "{} point(s): {} measured by readlab, {} imported from fio. Inputs: {}.\n",
            report.points.len(),
            report.points.len() - fio,
            fio,
            report.inputs.join(", ")
        );
        for b in &report.banners {
            let _ = writeln!(s, "> **Warning:** {}\n", markdown_escape(&b.line()));
        }
        let verdict = crate::verdict::of_report(report);
        if !verdict.targets.is_empty() {
            s.push_str("## Verdict\n\n");
            s.push_str(&crate::verdict::render::markdown(&verdict, &report.points));
        }
        let devices = crate::report::devices::targets(report);
        if !devices.is_empty() {
            s.push_str("## Devices side by side\n\n");
            s.push_str(&crate::report::devices::table(&verdict, &report.points).markdown());
            s.push('\n');
        }
        let selected = crate::report::selected::selected(report);
        if !selected.is_empty() {
            s.push_str("## Selected parameters\n\n");
            s.push_str(&crate::report::selected::table(&selected).markdown());
            s.push('\n');
        }
        if !report.baseline.is_empty() {
            s.push_str("## Against the baseline\n\n");
            let c = crate::compare::compare(&report.baseline, &report.points);
            s.push_str(&crate::compare::render::markdown(&c));
        }
        for t in tables(report) {
            let (table, shared) = for_people(&t);
            let _ = writeln!(s, "## {}\n\n{}\n", t.title, t.caption);
            if !shared.is_empty() {
                let _ = writeln!(s, "Every row: {}.\n", markdown_escape(&every_row(&shared)));
            }
            s.push_str(&table.markdown());
            s.push('\n');
        }
        if !report.notes.is_empty() {
            s.push_str("## Notes\n\n");
            for n in &report.notes {
                let _ = writeln!(s, "- {}", markdown_escape(n));
            }
            s.push('\n');
        }
        Ok(s)
    }
}
