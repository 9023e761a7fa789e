//! The terminal view of a run on several targets: one row per target (by its name) and the
//! aggregate's row, the merged histogram's count against the targets' sum, then the aggregate's
//! details (latency, CPU once for the process, timer).

use super::table::{figure_cells, figure_columns, run_report};
use crate::result::{Document, RunResult};
use crate::table::{Column, Table};
use crate::units::{Style, format_ns};
use std::fmt::Write;

fn row(name: &str, device: &str, r: &RunResult) -> Vec<String> {
    let mut cells = vec![name.to_string(), device.to_string()];
    cells.extend(figure_cells(r));
    cells.extend([
        format_ns(r.latency.max_ns as f64, Style::Table),
        format!(
            "{}",
            r.errors.count + r.verify.as_ref().map_or(0, |v| v.mismatches)
        ),
    ]);
    cells
}

/// Per-target rows, the aggregate, and its details; the table fitted to `width` columns.
pub fn targets_report(d: &Document, width: usize) -> String {
    let mut columns = vec![
        Column::left("target").width(10),
        Column::left("device").width(8).priority(1),
    ];
    columns.extend(figure_columns());
    columns.push(Column::right("errors").width(6).keep());
    let mut t = Table::new(columns);
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
    let _ = match d.targets.len() {
        1 => writeln!(s, "1 target, named:"),
        n => writeln!(
            s,
            "{n} targets at once, the same workload on each, one start barrier:"
        ),
    };
    s.push_str(&t.text_within(width));
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
