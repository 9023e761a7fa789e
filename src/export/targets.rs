//! The terminal view of a run on several targets: one row per target (by its name) and the
//! aggregate's row, the merged histogram's count against the targets' sum, then the aggregate's
//! details (latency, CPU once for the process, timer).

use super::table::{percentile_cell, run_report};
use crate::result::{Document, RunResult};
use crate::table::{Column, Table};
use crate::units::{Style, format_ns};
use std::fmt::Write;

fn row(name: &str, device: &str, r: &RunResult) -> Vec<String> {
    let l = &r.latency;
    vec![
        name.to_string(),
        device.to_string(),
        format!("{:.0}", r.iops),
        format!("{:.1}", r.mib_s),
        r.achieved_depth
            .map_or_else(|| "–".into(), |d| format!("{d:.1}")),
        percentile_cell(l, 50.0, l.p50_ns),
        percentile_cell(l, 99.0, l.p99_ns),
        percentile_cell(l, 99.9, l.p999_ns),
        format_ns(l.max_ns as f64, Style::Table),
        format!(
            "{}",
            r.errors.count + r.verify.as_ref().map_or(0, |v| v.mismatches)
        ),
    ]
}

/// Per-target rows, the aggregate, and its details.
pub fn targets_report(d: &Document) -> String {
    let mut t = Table::new(vec![
        Column::left("target").width(10),
        Column::left("device").width(8),
        Column::right("IOPS").width(10),
        Column::right("MiB/s").width(9),
        Column::right("depth").width(6),
        Column::right("p50").width(9),
        Column::right("p99").width(9),
        Column::right("p99.9").width(9),
        Column::right("max").width(9),
        Column::right("errors").width(6),
    ]);
    let mut failed = Vec::new();
    for tr in &d.targets {
        let dev = tr.environment.device.name.as_deref().unwrap_or("–");
        match (&tr.result, &tr.error) {
            (Some(r), _) => t.push(row(&tr.name, dev, r)),
            (None, e) => {
                let mut cells = vec![tr.name.clone(), dev.to_string(), "failed".into()];
                cells.resize(10, "–".into());
                t.push(cells);
                failed.push(format!(
                    "  {} failed: {}",
                    tr.name,
                    e.as_deref().unwrap_or("?")
                ));
            }
        }
    }
    t.push(row("all", "", &d.result));
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{} targets at once, the same workload on each, one start barrier:",
        d.targets.len()
    );
    s.push_str(&t.text());
    for f in failed {
        let _ = writeln!(s, "{f}");
    }
    let counts: u64 = d
        .targets
        .iter()
        .filter_map(|t| t.result.as_ref())
        .map(|r| r.latency.count)
        .sum();
    let _ = writeln!(
        s,
        "  merged histogram: {} requests (targets' sum {counts}); CPU is the whole process's, \
         measured once",
        d.result.latency.count
    );
    let _ = writeln!(s, "all targets:");
    for line in run_report(d).lines() {
        let _ = writeln!(s, "{line}");
    }
    s
}
