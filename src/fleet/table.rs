//! A fleet run on the terminal: after the aggregate's usual lines, how together the ranks
//! started and measured, and one line per rank, so a slow rank stands out.

use crate::result::Document;
use crate::table::{Column, Table};
use crate::units::{Style, format_ns};
use std::fmt::Write;

/// The fleet's lines, or nothing for a single process's document.
pub fn fleet_report(d: &Document) -> String {
    let Some(f) = &d.fleet else {
        return String::new();
    };
    let mut s = String::new();
    let _ = writeln!(
        s,
        "  fleet    {} ranks on {} host(s), target {}; started within {} of each other (clocks known to ±{}); measured together {:.3} s",
        f.ranks,
        f.hosts.len(),
        f.target,
        format_ns(f.start.skew_ns as f64, Style::Table),
        format_ns(f.start.clock_uncertainty_ns as f64, Style::Table),
        f.common_window_s
    );
    let mut t = Table::new(vec![
        Column::right("rank"),
        Column::left("host"),
        Column::left("target"),
        Column::right("IOPS"),
        Column::right("MiB/s"),
        Column::right("p50"),
        Column::right("p99"),
        Column::right("max"),
        Column::right("start"),
    ]);
    for m in &f.members {
        let r = &m.result;
        t.push([
            m.rank.to_string(),
            m.host.clone(),
            m.target.clone(),
            format!("{:.0}", r.iops),
            format!("{:.1}", r.mib_s),
            format_ns(r.latency.p50_ns as f64, Style::Table),
            format_ns(r.latency.p99_ns as f64, Style::Table),
            format_ns(r.latency.max_ns as f64, Style::Table),
            format!("+{}", format_ns(m.start_ns as f64, Style::Table)),
        ]);
    }
    for line in t.text().lines() {
        let _ = writeln!(s, "    {line}");
    }
    s
}
