//! The report's tables as data: one per study section and one of all experiments, every point
//! with every percentile. Each output format (CSV, Markdown, JSON, HTML) prints these same tables.

use crate::points::{Point, Report, caption, origin_name};
use crate::table::{self as render, Column as RenderColumn, Row};
use crate::units::{Style, format_bytes, format_ns};

/// One cell, kept typed so each format can print it its own way.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Text(String),
    Int(u64),
    /// A number and the decimals worth printing.
    Num(f64, usize),
    /// Bytes (block sizes): raw in CSV/JSON, `4K` for people.
    Bytes(u64),
    /// Nanoseconds: raw in CSV/JSON, `12.3us` for people.
    Ns(f64),
    Flag(bool),
    Empty,
    /// A percentile too few samples support: left empty for machines, `–` for people.
    TooFew,
}

impl Value {
    /// For machines: plain numbers, no units.
    pub fn raw(&self) -> String {
        match self {
            Value::Text(s) => s.clone(),
            Value::Int(v) | Value::Bytes(v) => v.to_string(),
            Value::Num(v, d) => format!("{v:.d$}"),
            Value::Ns(v) => {
                if v.fract() == 0.0 {
                    format!("{v:.0}")
                } else {
                    format!("{v:.1}")
                }
            }
            Value::Flag(b) => if *b { "yes" } else { "no" }.into(),
            Value::Empty | Value::TooFew => String::new(),
        }
    }

    /// For people: sizes and latencies with units.
    pub fn human(&self) -> String {
        match self {
            Value::Bytes(v) => format_bytes(*v as f64, Style::Table),
            Value::Ns(v) => format_ns(*v, Style::Table),
            Value::TooFew => "–".into(),
            other => other.raw(),
        }
    }

    /// As a JSON value.
    pub fn json(&self) -> serde_json::Value {
        match self {
            Value::Text(s) => s.clone().into(),
            Value::Int(v) | Value::Bytes(v) => (*v).into(),
            Value::Num(v, _) | Value::Ns(v) if v.is_finite() => (*v).into(),
            Value::Flag(b) => (*b).into(),
            _ => serde_json::Value::Null,
        }
    }
}

/// A column: its machine name and its header for people.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Column {
    pub key: &'static str,
    pub header: &'static str,
    /// Shown to people in the table itself; otherwise the table's caption says it (target,
    /// kernel, date).
    pub human: bool,
    /// Describes the configuration: when every row of a table has the same value, tables for
    /// people say it once above the table instead of in every row.
    pub foldable: bool,
}

const fn col(key: &'static str, header: &'static str) -> Column {
    Column {
        key,
        header,
        human: true,
        foldable: true,
    }
}

const fn metric(key: &'static str, header: &'static str) -> Column {
    Column {
        key,
        header,
        human: true,
        foldable: false,
    }
}

const fn caption_col(key: &'static str, header: &'static str) -> Column {
    Column {
        key,
        header,
        human: false,
        foldable: false,
    }
}

/// Every column of every table, in order: the point's own, then one per engine option, from the
/// engines' table of options (its field as the key, its words as the header).
pub static COLUMNS: std::sync::LazyLock<Vec<Column>> = std::sync::LazyLock::new(|| {
    let options = crate::engine::option::all().map(|(_, d)| {
        caption_col(
            d.column,
            // `{n} reader threads` heads a column as `reader threads`.
            Box::leak(
                d.words
                    .replace("{n}", "")
                    .trim()
                    .to_string()
                    .into_boxed_str(),
            ),
        )
    });
    POINT_COLUMNS.iter().copied().chain(options).collect()
});

/// The columns of a point before its engine's options.
const POINT_COLUMNS: &[Column] = &[
    caption_col("source", "source"),
    metric("label", "label"),
    col("name", "device"),
    col("study", "study"),
    col("scheduler", "scheduler"),
    col("engine", "engine"),
    col("access", "access"),
    col("bs_bytes", "block"),
    col("threads", "threads"),
    col("iodepth", "queue"),
    metric("achieved_depth", "depth"),
    col("batch", "batch"),
    col("blocks_per_request", "blocks/req"),
    col("open_loop", "open loop"),
    col("direct", "direct"),
    col("seconds", "s"),
    metric("ios", "I/Os"),
    metric("iops", "IOPS"),
    metric("mb_s", "MB/s"),
    metric("cpu_pct_of_core", "CPU %"),
    caption_col("cpu_us_per_io", "CPU µs/IO"),
    metric("lat_min_ns", "min"),
    metric("lat_mean_ns", "avg"),
    metric("lat_p50_ns", "p50"),
    metric("lat_p90_ns", "p90"),
    metric("lat_p99_ns", "p99"),
    metric("lat_p99_9_ns", "p99.9"),
    metric("lat_p99_99_ns", "p99.99"),
    metric("lat_max_ns", "max"),
    metric("pareto", "Pareto"),
    col("input", "input"),
    caption_col("target", "target"),
    caption_col("kernel", "kernel"),
    caption_col("date", "date"),
];

#[cfg(test)]
mod option_columns {
    use super::*;
    use crate::engine::{PoolOptions, UringOptions};

    /// The engine options' columns are the engines' table of options: one per option, keyed by
    /// its field, headed by its words, filled from the point's options.
    #[test]
    fn option_columns_come_from_the_table_of_options() {
        let options: Vec<_> = crate::engine::option::all().collect();
        let tail = &COLUMNS[COLUMNS.len() - options.len()..];
        for ((_, d), c) in options.iter().zip(tail) {
            assert_eq!(c.key, d.column);
            assert!(d.words.contains(c.header.trim()), "{} {}", c.key, c.header);
        }
        let mut p = crate::points::tests::point("U8B1MF", 4096, 1.0, 10.0);
        UringOptions::edit(&mut p.options, |o| o.fixed_files = true);
        PoolOptions::edit(&mut p.options, |o| o.pool_threads = Some(4));
        let r = row(&p, false);
        let at = |k: &str| &r[COLUMNS.iter().position(|c| c.key == k).unwrap()];
        assert_eq!(at("fixed_files"), &Value::Flag(true));
        assert_eq!(at("fixed_bufs"), &Value::Flag(false));
        assert_eq!(at("pool_threads"), &Value::Int(4));
        assert_eq!(at("busy_poll_us"), &Value::Empty);
        assert_eq!(at("open_loop"), &Value::Empty);
    }
}

/// The cells of one point, in [`COLUMNS`] order.
pub fn row(p: &Point, on_frontier: bool) -> Vec<Value> {
    let l = &p.latency;
    let o = &p.options;
    // Hidden by the rule the charts follow too (`LatencySummary::shown`).
    let pct = |q: f64| l.shown(q).map_or(Value::TooFew, |ns| Value::Ns(ns as f64));
    let text = |s: &str| {
        if s.is_empty() {
            Value::Empty
        } else {
            Value::Text(s.to_string())
        }
    };
    vec![
        text(p.source.name()),
        text(&p.label),
        text(&p.name),
        text(p.study.as_deref().unwrap_or("")),
        text(p.scheduler.as_deref().unwrap_or("")),
        text(&p.engine),
        text(&p.access()),
        Value::Bytes(p.bs),
        Value::Int(p.threads as u64),
        Value::Int(p.iodepth as u64),
        Value::Num(p.achieved_depth, 1),
        Value::Int(p.batch as u64),
        Value::Int(p.blocks_per_request as u64),
        p.open_loop
            .as_deref()
            .map_or(Value::Empty, |w| Value::Text(w.into())),
        Value::Flag(p.direct),
        Value::Num(p.seconds, 2),
        Value::Int(p.ios),
        Value::Num(p.iops, 0),
        Value::Num(p.mb_s, 1),
        Value::Num(p.cpu_pct, 1),
        Value::Num(p.cpu_us_per_io, 3),
        Value::Ns(l.min_ns as f64),
        Value::Ns(l.mean_ns.round()),
        pct(50.0),
        pct(90.0),
        pct(99.0),
        pct(99.9),
        pct(99.99),
        Value::Ns(l.max_ns as f64),
        Value::Flag(on_frontier),
        text(&origin_name(&p.origin)),
        text(&p.env.target),
        text(&p.env.kernel),
        text(&p.env.date),
    ]
    .into_iter()
    // The engine's options, one column each, for machines (people read them in the label).
    .chain(
        crate::engine::option::all().map(|(_, d)| match (d.value, d.get(o)) {
            (crate::engine::option::Value::Switch, v) => Value::Flag(v.is_some()),
            (_, v) => v.map_or(Value::Empty, Value::Int),
        }),
    )
    .collect()
}

/// The title of the all-experiments section.
pub const ALL_TITLE: &str = "All experiments";

/// The heading of a study's section, with the report section it follows.
pub fn section_title(s: crate::study::StudyName) -> &'static str {
    s.spec().title
}

/// One table of the report.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// `latency`, `threads`, …, or `all`.
    pub id: String,
    pub title: String,
    /// Target, kernel and date of the points in it.
    pub caption: String,
    pub rows: Vec<Vec<Value>>,
}

/// How people see a table: the columns shown, and the configuration every row shares (said
/// once, as `header value` pairs). Columns empty in every row are left out; tables of one row
/// show every other column.
pub fn human_layout(t: &Table) -> (Vec<usize>, Vec<(&'static str, String)>) {
    let mut shown = Vec::new();
    let mut shared = Vec::new();
    for (k, c) in COLUMNS.iter().enumerate() {
        if !c.human {
            continue;
        }
        // Rows without a value (fio points have no study) do not keep a column apart.
        let mut values = t
            .rows
            .iter()
            .filter_map(|r| r.get(k))
            .filter(|v| **v != Value::Empty);
        let first = values.next();
        let same = t.rows.len() > 1 && values.all(|v| Some(v) == first);
        if c.foldable && first.is_none() {
            // Empty in every row: nothing to say.
        } else if c.foldable && same {
            if let Some(v) = first {
                shared.push((c.header, v.human()));
            }
        } else {
            shown.push(k);
        }
    }
    (shown, shared)
}

/// The configuration every row shares, as people read it: `engine psync, block 4K`.
pub fn every_row(shared: &[(&'static str, String)]) -> String {
    shared
        .iter()
        .map(|(h, v)| format!("{h} {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A table for people (Markdown, HTML): the columns [`human_layout`] shows with units on their
/// values, text columns left-aligned, the label column marked `lab`, rows of fio points marked
/// `fio` and rows on the Pareto frontier `front`; and the configuration every row shares.
pub fn for_people(t: &Table) -> (render::Table, Vec<(&'static str, String)>) {
    let (cols, shared) = human_layout(t);
    let at = |key: &str| COLUMNS.iter().position(|c| c.key == key);
    let (source, pareto) = (at("source"), at("pareto"));
    let columns = cols
        .iter()
        .map(|&k| {
            let text = t
                .rows
                .first()
                .is_some_and(|r| matches!(r.get(k), Some(Value::Text(_)) | Some(Value::Empty)));
            let c = if text {
                RenderColumn::left(COLUMNS[k].header)
            } else {
                RenderColumn::right(COLUMNS[k].header)
            };
            if COLUMNS[k].key == "label" {
                c.class("lab")
            } else {
                c
            }
        })
        .collect();
    let mut out = render::Table::new(columns);
    for r in &t.rows {
        // Rows keep their source as a class even though the column is not shown.
        let fio = source
            .and_then(|k| r.get(k))
            .is_some_and(|v| v.raw() == "fio");
        let front = pareto
            .and_then(|k| r.get(k))
            .is_some_and(|v| *v == Value::Flag(true));
        let class = match (fio, front) {
            (true, true) => Some("fio front"),
            (true, false) => Some("fio"),
            (false, true) => Some("front"),
            _ => None,
        };
        out.push_row(Row {
            cells: cols
                .iter()
                .map(|&k| r.get(k).map(Value::human).unwrap_or_default())
                .collect(),
            class: class.map(String::from),
        });
    }
    (out, shared)
}

/// Every point of a report once, for machines: which of the report's tables it appears in
/// (`latency;all`), then every column, raw values (nanoseconds, bytes).
pub fn for_machines(report: &Report) -> render::Table {
    let mut out = render::Table::new(
        std::iter::once(RenderColumn::left("tables"))
            .chain(COLUMNS.iter().map(|c| RenderColumn::left(c.key)))
            .collect(),
    );
    for (i, p) in report.points.iter().enumerate() {
        let tables: Vec<&str> = report
            .sections
            .iter()
            .filter(|s| s.points.contains(&i))
            .map(|s| s.study.name())
            .chain(["all"])
            .collect();
        let cells = row(p, report.frontier.contains(&i));
        out.push(std::iter::once(tables.join(";")).chain(cells.iter().map(Value::raw)));
    }
    out
}

/// The tables of a report: one per section, then all experiments.
pub fn tables(report: &Report) -> Vec<Table> {
    let frontier = |i: usize| report.frontier.contains(&i);
    let mut out = Vec::new();
    for s in &report.sections {
        let pts = report.section_points(s);
        out.push(Table {
            id: s.study.name().to_string(),
            title: section_title(s.study).to_string(),
            caption: caption(&pts),
            rows: s
                .points
                .iter()
                .filter_map(|&i| Some(row(report.points.get(i)?, frontier(i))))
                .collect(),
        });
    }
    if !report.points.is_empty() {
        let all: Vec<&Point> = report.points.iter().collect();
        out.push(Table {
            id: "all".into(),
            title: ALL_TITLE.into(),
            caption: caption(&all),
            rows: report
                .points
                .iter()
                .enumerate()
                .map(|(i, p)| row(p, frontier(i)))
                .collect(),
        });
    }
    for t in &mut out {
        if t.rows.iter().flatten().any(|v| *v == Value::TooFew) {
            t.caption.push_str(&format!(
                " – marks a percentile too few samples support (p99 needs {}, p99.9 {}, p99.99 {}).",
                crate::stats::min_samples(99.0),
                crate::stats::min_samples(99.9),
                crate::stats::min_samples(99.99)
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_match_the_columns() {
        let p = crate::points::tests::point("P", 4096, 10.0, 100.0);
        let r = row(&p, true);
        assert_eq!(r.len(), COLUMNS.len());
        let get = |k: &str| &r[COLUMNS.iter().position(|c| c.key == k).unwrap()];
        assert_eq!(get("lat_p99_9_ns").raw(), "100000");
        assert_eq!(get("lat_p99_9_ns").human(), "100.0us");
        assert_eq!(get("bs_bytes").human(), "4K");
        assert_eq!(get("pareto").raw(), "yes");
        assert_eq!(get("scheduler"), &Value::Empty);
        assert_eq!(get("direct").human(), "yes");
        assert_eq!(Value::Num(f64::NAN, 1).json(), serde_json::Value::Null);
    }

    #[test]
    fn people_see_shared_configuration_once() {
        let a = crate::points::tests::point("P", 4096, 10.0, 100.0);
        let mut b = a.clone();
        b.threads = 2;
        b.label = "PT2".into();
        let t = Table {
            id: "x".into(),
            title: "x".into(),
            caption: String::new(),
            rows: vec![row(&a, false), row(&b, true)],
        };
        let (shown, shared) = human_layout(&t);
        let shown: Vec<&str> = shown.iter().map(|&k| COLUMNS[k].key).collect();
        assert!(
            shown.contains(&"threads")
                && shown.contains(&"label")
                && shown.contains(&"lat_p99_9_ns")
        );
        assert!(!shown.contains(&"engine") && !shown.contains(&"target"));
        assert!(
            !shown.contains(&"scheduler"),
            "a column empty in every row is left out"
        );
        assert!(shared.contains(&("engine", "psync".to_string())));
        assert!(shared.contains(&("block", "4K".to_string())));
        // A metric equal in every row is still shown.
        assert!(shown.contains(&"lat_min_ns"));
        let one = Table {
            rows: vec![row(&a, false)],
            ..t
        };
        // The test point has neither study, scheduler nor open loop: those columns are left out.
        assert_eq!(
            human_layout(&one).0.len(),
            COLUMNS.iter().filter(|c| c.human).count() - 3
        );
    }
}
