//! The Markdown summary of each study: the table the report would print (e.g. queue size ×
//! threads → MB/s, p99.9, CPU %), pivoted on the dimensions its spec names, and one line per point.

use super::StudyName;
use crate::config::Rw;
use crate::result::Document;
use crate::size::{format_ns, format_size};
use crate::stats::percentile_cell;
use std::collections::BTreeMap;
use std::fmt::Write;

/// The column (summary) and series (report figure) of a point of this study: its access and
/// whether it went through the page cache — `sequential direct`, `sequential buffered`,
/// `random direct` — so buffered and direct readings never share a cell, and the summary and the
/// figure name them alike. `access` is `sequential` or `random`.
pub fn column(access: &str, direct: bool) -> String {
    format!("{access} {}", if direct { "direct" } else { "buffered" })
}

/// What a study prints in its summary besides one line per point.
pub enum Summary {
    /// A pivot table (rows × columns → metrics).
    Pivot(Table),
    /// A summary of its own.
    Custom(fn(&[&Document]) -> String),
    None,
}

/// A dimension a table is pivoted on: a sort key and a label.
#[derive(Debug, Clone, Copy)]
pub enum Key {
    Bs,
    Engine,
    Rw,
    /// Access and direct or buffered (the stream study's columns, [`column`]).
    RwMode,
    Threads,
    Iodepth,
    Batch,
    Blocks,
    EngineThreads,
    EngineIodepth,
    EngineIodepthThreads,
    Label,
    Scheduler,
    /// The study tag's setting (cache study: direct, buffered, readahead off).
    Setting,
    BsThreads,
    One,
}

impl Key {
    fn of(self, d: &Document) -> (u64, String) {
        let c = &d.config;
        match self {
            Key::Bs => (c.bs, format_size(c.bs)),
            Key::Engine => (c.engine.index() as u64, c.engine.name().into()),
            Key::Rw => match c.rw {
                Rw::Read => (0, "sequential".into()),
                Rw::Randread => (1, "random".into()),
            },
            Key::RwMode => {
                let (k, access) = match c.rw {
                    Rw::Read => (0, "sequential"),
                    Rw::Randread => (2, "random"),
                };
                (k + u64::from(!c.direct), column(access, c.direct))
            }
            Key::Threads => (c.threads as u64, c.threads.to_string()),
            Key::Iodepth => (c.iodepth as u64, c.iodepth.to_string()),
            Key::Batch => (c.batch as u64, c.batch.to_string()),
            Key::Blocks => (
                c.blocks_per_request as u64,
                c.blocks_per_request.to_string(),
            ),
            Key::EngineThreads => (
                (c.engine.index() as u64) << 32 | c.threads as u64,
                format!("{} T{}", c.engine.name(), c.threads),
            ),
            Key::EngineIodepth => (
                (c.engine.index() as u64) << 32 | c.iodepth as u64,
                format!("{} QS{}", c.engine.name(), c.iodepth),
            ),
            Key::EngineIodepthThreads => (
                (c.engine.index() as u64) << 48 | (c.iodepth as u64) << 16 | c.threads as u64,
                format!("{} QS{} T{}", c.engine.name(), c.iodepth, c.threads),
            ),
            Key::Label => (0, d.result.label.clone()),
            Key::Scheduler => (
                0,
                d.study
                    .as_ref()
                    .and_then(|s| s.scheduler.clone())
                    .unwrap_or_default(),
            ),
            Key::Setting => (
                0,
                d.study
                    .as_ref()
                    .and_then(|s| s.setting.clone())
                    .unwrap_or_default(),
            ),
            Key::BsThreads => (
                c.bs << 16 | c.threads as u64,
                format!("{} T{}", format_size(c.bs), c.threads),
            ),
            Key::One => (0, String::new()),
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub enum Metric {
    MBs,
    Iops,
    Min,
    Mean,
    P50,
    P99,
    P999,
    Max,
    Cpu,
    SqPollCpu,
}

impl Metric {
    fn header(self) -> &'static str {
        match self {
            Metric::MBs => "MB/s",
            Metric::Iops => "IOPS",
            Metric::Min => "min",
            Metric::Mean => "avg",
            Metric::P50 => "p50",
            Metric::P99 => "p99",
            Metric::P999 => "p99.9",
            Metric::Max => "max",
            Metric::Cpu => "CPU %",
            Metric::SqPollCpu => "SQ poll CPU %",
        }
    }

    fn cell(self, d: &Document) -> String {
        let r = &d.result;
        let l = &r.latency;
        match self {
            Metric::MBs => format!("{:.1}", r.mb_s),
            Metric::Iops => format!("{:.0}", r.iops),
            Metric::Min => format_ns(l.min_ns as f64),
            Metric::Mean => format_ns(l.mean_ns),
            Metric::P50 => percentile_cell(l, 50.0, l.p50_ns),
            Metric::P99 => percentile_cell(l, 99.0, l.p99_ns),
            Metric::P999 => percentile_cell(l, 99.9, l.p999_ns),
            Metric::Max => format_ns(l.max_ns as f64),
            Metric::Cpu => format!("{:.0}", d.result.cpu.threads_pct_of_core()),
            Metric::SqPollCpu => format!("{:.0}", r.cpu.sqpoll.pct_of_core),
        }
    }
}

/// A study's summary table: rows × columns → metrics.
#[derive(Debug)]
pub struct Table {
    pub rows: Key,
    pub cols: Key,
    pub metrics: &'static [Metric],
    pub title: &'static str,
}

pub(super) fn pivot(t: &Table, docs: &[&Document]) -> String {
    let mut rows: BTreeMap<(u64, String), ()> = BTreeMap::new();
    let mut cols: BTreeMap<(u64, String), ()> = BTreeMap::new();
    let mut cells: BTreeMap<(String, String), &Document> = BTreeMap::new();
    for d in docs {
        let (r, c) = (t.rows.of(d), t.cols.of(d));
        cells.insert((r.1.clone(), c.1.clone()), d);
        rows.insert(r, ());
        cols.insert(c, ());
    }
    let mut s = String::new();
    let _ = write!(s, "| |");
    for (_, c) in cols.keys() {
        for m in t.metrics {
            let _ = write!(
                s,
                " {}{}{} |",
                c,
                if c.is_empty() { "" } else { " " },
                m.header()
            );
        }
    }
    let _ = writeln!(s);
    let _ = write!(s, "|---|");
    for _ in 0..cols.len() * t.metrics.len() {
        let _ = write!(s, "---:|");
    }
    let _ = writeln!(s);
    for (_, r) in rows.keys() {
        let _ = write!(s, "| {r} |");
        for (_, c) in cols.keys() {
            for m in t.metrics {
                let v = cells
                    .get(&(r.clone(), c.clone()))
                    .map_or("–".into(), |d| m.cell(d));
                let _ = write!(s, " {v} |");
            }
        }
        let _ = writeln!(s);
    }
    s
}

fn point_lines(docs: &[&Document]) -> String {
    let mut s = String::from(
        "| label | workload | MB/s | IOPS | p50 | p99 | p99.9 | CPU % | ended |\n|---|---|---:|---:|---:|---:|---:|---:|---|\n",
    );
    for d in docs {
        let c = &d.config;
        let r = &d.result;
        let _ = writeln!(
            s,
            "| {} | {} {} {}{}{}{} | {:.1} | {:.0} | {} | {} | {} | {:.0} | {} |",
            r.label,
            c.engine.name(),
            match c.rw {
                Rw::Read => "seq",
                Rw::Randread => "rand",
            },
            format_size(c.bs),
            if c.direct { "" } else { " buffered" },
            if c.blocks_per_request > 1 {
                format!(" ×{} blocks", c.blocks_per_request)
            } else {
                String::new()
            },
            d.study
                .as_ref()
                .and_then(|t| t.scheduler.as_ref())
                .map(|s| format!(" [{s}]"))
                .unwrap_or_default(),
            r.mb_s,
            r.iops,
            percentile_cell(&r.latency, 50.0, r.latency.p50_ns),
            percentile_cell(&r.latency, 99.0, r.latency.p99_ns),
            percentile_cell(&r.latency, 99.9, r.latency.p999_ns),
            d.result.cpu.threads_pct_of_core(),
            match r.failure_summary() {
                Some(lines) => format!("{} — FAILED: {}", r.ended_by, lines.join("; ")),
                None => r.ended_by.to_string(),
            }
        );
    }
    s
}

/// The summary of studies `names` from every stored document.
pub fn summarize(names: &[StudyName], docs: &[Document]) -> String {
    let mut s = String::from("# readlab study summary\n\n");
    for name in names {
        let mine: Vec<&Document> = docs
            .iter()
            .filter(|d| d.study.as_ref().is_some_and(|t| t.study == *name))
            .collect();
        let _ = writeln!(s, "## {} — {}\n", name.name(), name.describe());
        let Some(first) = mine.first() else {
            let _ = writeln!(s, "No points measured.\n");
            continue;
        };
        let e = &first.environment;
        let _ = writeln!(
            s,
            "Target {} ({}{}), kernel {}, {} CPUs, {}.\n",
            crate::nbd::shown(&e.target.path.display().to_string()),
            e.device.name.as_deref().unwrap_or("no block device"),
            e.filesystem
                .as_deref()
                .map(|f| format!(", {f}"))
                .unwrap_or_default(),
            e.kernel,
            e.cpus,
            e.date
        );
        match &name.spec().summary {
            Summary::Pivot(t) => {
                let _ = writeln!(s, "{}\n\n{}", t.title, pivot(t, &mine));
            }
            Summary::Custom(f) => s.push_str(&f(&mine)),
            Summary::None => {}
        }
        let _ = writeln!(s, "All {} points:\n\n{}", mine.len(), point_lines(&mine));
    }
    s
}
