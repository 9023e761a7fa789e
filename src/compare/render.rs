//! A comparison for people and machines: one sentence per matched configuration (slower, faster
//! or no change beyond the noise, with the change's interval), then a table with one row per
//! configuration (each change marked `*` when its interval excludes zero, `?` when a side has no
//! interval), for the terminal, Markdown and HTML with bars of both sides; and the same as JSON.

use super::{Comparison, Delta, Metric};
use crate::document::chart::{Axis, BarSeries, Bars, Chart, Kind, Unit};
use crate::document::format::html::Html;
use crate::document::format::markdown::Markdown;
use crate::document::format::terminal::Text;
use crate::document::{Block, Document, Renderer, Section, TableBlock};
use crate::error::Result;
use crate::table::{Column, Table};
use crate::terminal::Terminal;
use crate::units::{Style, format_ns};

/// `+12.3 %*`: the change, `*` when beyond the noise (its interval excludes zero), `?` when a
/// side has no interval.
pub fn cell(d: &Delta) -> String {
    let mark = match d.beyond_noise() {
        Some(true) => "*",
        Some(false) => "",
        None => "?",
    };
    format!("{:+.1} %{mark}", 100.0 * d.change)
}

fn value(m: Metric, v: f64) -> String {
    match m {
        Metric::Iops => format!("{v:.0}"),
        Metric::MbS => format!("{v:.1}"),
        Metric::CpuPerIo => format!("{v:.2}"),
        _ => format_ns(v, Style::Table),
    }
}

/// One row per matched configuration: IOPS on both sides, then every change.
pub fn table(c: &Comparison) -> Table {
    // On a narrow terminal the changes of IOPS and p99.9 stay longest.
    let mut t = Table::new(
        [Column::left("configuration").floor(24)]
            .into_iter()
            .chain(["IOPS A", "IOPS B"].map(|h| Column::right(h).priority(1)))
            .chain(Metric::ALL.map(|m| {
                let c = Column::right(format!("Δ {}", m.name()));
                match m {
                    Metric::Iops => c.priority(3),
                    Metric::P999 => c.priority(2),
                    _ => c,
                }
            }))
            .collect(),
    );
    for r in &c.rows {
        let iops = &r.deltas[0];
        t.push(
            [
                r.what.clone(),
                value(Metric::Iops, iops.a),
                value(Metric::Iops, iops.b),
            ]
            .into_iter()
            .chain(r.deltas.iter().map(cell)),
        );
    }
    t
}

const LEGEND: &str = "Δ is B against A; * marks a change beyond the noise: its interval (95 % from each run's own, or from the repetitions of both) excludes zero; ? a change with no interval (a side without one: a run too short, results older than readlab's intervals, or imported from fio). Each interval holds on its own: among many configurations, about one in twenty unchanged may show a * by chance. Lower latency and CPU per I/O are better; higher IOPS and MB/s.";

/// Lines naming what only one side measured.
fn unmatched(c: &Comparison) -> Vec<String> {
    let mut v = Vec::new();
    if !c.only_a.is_empty() {
        v.push(format!("only in A: {}", c.only_a.join(", ")));
    }
    if !c.only_b.is_empty() {
        v.push(format!("only in B: {}", c.only_b.join(", ")));
    }
    v
}

/// For the terminal.
pub fn text(c: &Comparison) -> String {
    text_within(c, usize::MAX)
}

/// [`text`] with its table fitted to `width` columns.
pub fn text_within(c: &Comparison, width: usize) -> String {
    text_for(
        c,
        Terminal {
            width,
            color: false,
        },
    )
}

/// For a terminal of the given width and colour.
pub fn text_for(c: &Comparison, term: Terminal) -> String {
    Text(term).render(&document(c)).unwrap_or_default()
}

/// Bars of A and B per configuration: IOPS, and p99.9 on a log scale.
pub fn charts(c: &Comparison, id: &str) -> Vec<Chart> {
    let cats: Vec<String> = c.rows.iter().map(|r| r.what.clone()).collect();
    let bars = |m: Metric, y: Axis| Bars {
        x_desc: "configuration".into(),
        categories: cats.clone(),
        y,
        layers: vec!["value".into()],
        series: [("A", &c.a_name, true), ("B", &c.b_name, false)]
            .into_iter()
            .map(|(side, name, first)| BarSeries {
                name: format!("{side}: {name}"),
                fio: false,
                marks: Vec::new(),
                values: c
                    .rows
                    .iter()
                    .map(|r| {
                        let d = &r.deltas[Metric::ALL.iter().position(|x| *x == m).unwrap_or(0)];
                        Some(vec![if first { d.a } else { d.b }])
                    })
                    .collect(),
            })
            .collect(),
    };
    if c.rows.is_empty() {
        return Vec::new();
    }
    let caption = format!("A: {}. B: {}.", c.a_name, c.b_name);
    let chart = |what: &str, title: &str, kind| Chart {
        id: format!("{id}-{what}"),
        title: title.into(),
        caption: caption.clone(),
        width: 960,
        height: 420,
        kind,
    };
    vec![
        chart(
            "iops",
            "IOPS of each configuration measured on both sides",
            Kind::Bars(bars(Metric::Iops, Axis::linear("IOPS", Unit::Count))),
        ),
        chart(
            "p999",
            "p99.9 latency of each configuration measured on both sides",
            Kind::Bars(bars(
                Metric::P999,
                Axis::log("p99.9 latency (log scale)", Unit::Ns),
            )),
        ),
    ]
}

/// The comparison as document blocks: which side is which, the table with its legend, what
/// only one side measured, and the bars (chart ids start with `id`).
pub fn blocks(c: &Comparison, id: &str) -> Vec<Block> {
    let mut v = vec![Block::Paragraph(format!(
        "A: {}. B: {}.",
        c.a_name, c.b_name
    ))];
    if c.rows.is_empty() {
        v.push(Block::Note(
            "No configuration was measured on both sides.".into(),
        ));
    } else {
        v.push(Block::List(
            c.rows.iter().map(super::Row::sentence).collect(),
        ));
        v.push(Block::Table(TableBlock {
            id: id.to_string(),
            caption: LEGEND.into(),
            table: table(c),
            ..TableBlock::default()
        }));
    }
    let only = unmatched(c);
    if !only.is_empty() {
        v.push(Block::List(only));
    }
    v.extend(charts(c, id).into_iter().map(Block::Chart));
    v
}

/// The comparison as a document of its own (`readlab compare`).
pub fn document(c: &Comparison) -> Document {
    let mut d = Document {
        title: "readlab compare".into(),
        label_words: Some(|l| crate::label::key(l.iter().copied())),
        ..Document::default()
    };
    let mut s = Section::new("compare", "Configuration by configuration");
    s.blocks = blocks(c, "compare");
    d.push(s);
    d
}

/// A page of its own for `readlab compare --format html`.
pub fn html(c: &Comparison) -> Result<String> {
    Html.render(&document(c))
}

/// Markdown: the table and legend.
pub fn markdown(c: &Comparison) -> String {
    Markdown.render(&document(c)).unwrap_or_default()
}

/// The schema name of the comparison's JSON.
pub const COMPARE_SCHEMA: &str = "readlab.compare/1";

/// The comparison in JSON (`compare --json`, `compare --format json -o`).
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct CompareJson {
    /// `readlab.compare/1`.
    pub schema: String,
    /// Each side's name (its input and targets, and what differs between the sides).
    pub a: String,
    pub b: String,
    /// Each side's input as given.
    pub a_input: String,
    pub b_input: String,
    /// Every configuration measured on both sides.
    pub rows: Vec<CompareRowJson>,
    /// The configurations measured on one side only.
    pub only_a: Vec<String>,
    pub only_b: Vec<String>,
}

/// One configuration measured on both sides.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct CompareRowJson {
    pub configuration: String,
    pub label: String,
    pub bs: u64,
    pub access: String,
    pub direct: bool,
    /// What the change in throughput comes to: `slower`, `faster`, `no_change` (its interval
    /// holds zero) or `unmeasured` (a side has no interval).
    pub call: String,
    /// The same in one sentence: `10 % slower (95 % interval 8–12 %, one run each)`.
    pub finding: String,
    /// Each figure (iops, mb_s, p50_ns, …) on both sides.
    pub figures: std::collections::BTreeMap<String, FigureJson>,
}

/// A figure on both sides, its change with its interval and whether the change is beyond the
/// noise.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct FigureJson {
    pub a: f64,
    pub b: f64,
    /// (b − a) / a.
    pub change: f64,
    /// The interval of the change (relative, as `change`): null when a side has no interval, or
    /// on a side the data do not bound.
    pub lo: Option<f64>,
    pub hi: Option<f64>,
    /// The confidence of that interval (null without one).
    pub confidence: Option<f64>,
    /// Whether the interval excludes zero (null without one).
    pub beyond_noise: Option<bool>,
}

/// As typed JSON: every matched configuration with what its change comes to, and each figure on
/// both sides with its change, the change's interval and whether it is beyond the noise.
pub fn typed(c: &Comparison) -> CompareJson {
    CompareJson {
        schema: COMPARE_SCHEMA.into(),
        a: c.a_name.clone(),
        b: c.b_name.clone(),
        a_input: c.a_input.clone(),
        b_input: c.b_input.clone(),
        rows: c
            .rows
            .iter()
            .map(|r| CompareRowJson {
                configuration: r.what.clone(),
                label: r.label.clone(),
                bs: r.bs,
                access: r.access.clone(),
                direct: r.direct,
                call: r.call().key().into(),
                finding: r.finding(),
                figures: r
                    .deltas
                    .iter()
                    .map(|d| {
                        let f = FigureJson {
                            a: d.a,
                            b: d.b,
                            change: d.change,
                            lo: d.gap.and_then(|g| g.lo),
                            hi: d.gap.and_then(|g| g.hi),
                            confidence: d.gap.map(|g| g.confidence),
                            beyond_noise: d.beyond_noise(),
                        };
                        (d.metric.key().to_string(), f)
                    })
                    .collect(),
            })
            .collect(),
        only_a: c.only_a.clone(),
        only_b: c.only_b.clone(),
    }
}

/// As one JSON value ([`CompareJson`], its keys in alphabetical order).
pub fn json(c: &Comparison) -> serde_json::Value {
    serde_json::to_value(typed(c)).unwrap_or_default()
}
