//! The verdict for people: one table per target (block size and access, what was found, its label,
//! figures and how sure), then readlab's own cost, apart. The same table prints on the terminal,
//! in Markdown and in the HTML report; JSON carries the same facts as values.

use super::{Finding, Group, Kind, Tail, TargetVerdict, Verdict};
use crate::document::format::html::Html;
use crate::document::format::markdown::Markdown;
use crate::document::format::terminal::Text;
use crate::document::{Block, Document, Renderer, Section, TableBlock};
use crate::points::Point;
use crate::table::{Column, Table};
use crate::terminal::Terminal;
use crate::units::{Style, format_ns};

/// The table of one target's findings.
pub fn table(t: &TargetVerdict, points: &[Point]) -> Table {
    // On a narrow terminal: MB/s, the engine, CPU and p50 go first; the pick stays whole.
    let mut table = Table::new(vec![
        Column::left("reads").floor(usize::MAX),
        Column::left("verdict").floor(usize::MAX).keep(),
        Column::left("label").keep(),
        Column::left("engine"),
        Column::right("IOPS").priority(3),
        Column::right("MB/s"),
        Column::right("p50").priority(1),
        Column::right("p99.9").priority(2),
        Column::right("CPU µs/IO").priority(1),
        Column::left("how sure").keep(),
    ]);
    for g in &t.groups {
        let mut first = true;
        // One configuration answers every question alike: one row says so.
        let only = g.configurations == 1;
        for f in g.findings.iter().take(if only { 1 } else { usize::MAX }) {
            let p = &points[f.point];
            let reads = if first {
                format!("{} ({} config.)", g.title(), g.configurations)
            } else {
                String::new()
            };
            first = false;
            table.push([
                reads,
                if only {
                    "the only one measured".into()
                } else {
                    f.kind.title()
                },
                f.named(),
                p.engine.clone(),
                format!("{:.0}", p.iops),
                format!("{:.1}", p.mb_s),
                format_ns(p.latency.p50_ns as f64, Style::Table),
                tail_cell(p, g.tail),
                format!("{:.2}", p.cpu_us_per_io),
                if f.close && !f.sure.close() {
                    "no interval".into()
                } else {
                    f.sure.short()
                },
            ]);
        }
    }
    table
}

/// How sure each pick is, in full, under the table: one line per group and pick, the kinds that
/// share a pick and its phrase said once (`4K random, fastest and throughput: U32B1, 21 % more
/// IOPS than A32B1 (95 % interval 15–27 %, 5 paired rounds)`); none for a group of one.
pub fn phrases(t: &TargetVerdict) -> Vec<String> {
    let mut out = Vec::new();
    for g in t.groups.iter().filter(|g| g.configurations > 1) {
        let mut said: Vec<(String, String, Vec<String>)> = Vec::new();
        for f in &g.findings {
            let key = (f.named(), f.phrase());
            match said.iter_mut().find(|(n, p, _)| (n, p) == (&key.0, &key.1)) {
                Some((_, _, kinds)) => kinds.push(f.kind.title()),
                None => said.push((key.0, key.1, vec![f.kind.title()])),
            }
        }
        for (named, phrase, kinds) in said {
            out.push(format!(
                "{}, {}: {named}, {phrase}",
                g.title(),
                kinds.join(" and ")
            ));
        }
    }
    out
}

/// `1.2ms`, or `900us (p99)` where the group is compared on p99.
fn tail_cell(p: &Point, tail: Tail) -> String {
    let v = format_ns(tail.ns(p), Style::Table);
    match tail {
        Tail::P999 => v,
        Tail::P99 => format!("{v} (p99)"),
    }
}

/// readlab's own cost: the null engine and the clock, never ranked.
pub fn own_cost(t: &TargetVerdict, points: &[Point]) -> Option<String> {
    let mut parts = Vec::new();
    for &i in &t.own.null_points {
        let p = &points[i];
        parts.push(format!(
            "null engine {} ({} {}): {:.0} IOPS, {:.2} µs CPU per I/O, p50 {} — the most readlab itself can do, not a read",
            p.label,
            crate::units::format_bytes(p.bs as f64, Style::Table),
            p.access(),
            p.iops,
            p.cpu_us_per_io,
            format_ns(p.latency.p50_ns as f64, Style::Table)
        ));
    }
    if let Some(ns) = t.own.timer_ns_per_io {
        parts.push(format!(
            "clock reads cost {} per I/O (included in every latency)",
            format_ns(ns, Style::Table)
        ));
    }
    if let Some(r) = &t.own.runner {
        parts.push(format!(
            "readlab's own loop {:.2} µs CPU per I/O on the null engine in the same shapes, {:.0} % of \
             their CPU per I/O (medians of {} point{})",
            r.cpu_us_per_io,
            r.share_of_cpu * 100.0,
            r.points,
            if r.points == 1 { "" } else { "s" }
        ));
    }
    (!parts.is_empty()).then(|| format!("Self-measurement, not ranked: {}.", parts.join("; ")))
}

/// What a group's recommendation says in one line: `4K random: throughput U32B1, balanced …`
/// (`balanced too close to call (U32B1 ~ A32B1)` where no winner can be named).
pub fn headline(g: &Group) -> String {
    let picks: Vec<String> = g
        .findings
        .iter()
        .filter_map(|f: &Finding| match f.kind {
            Kind::Recommended(goal) if f.close => {
                Some(format!("{} too close to call ({})", goal.name(), f.named()))
            }
            Kind::Recommended(goal) => Some(format!("{} {}", goal.name(), f.label)),
            _ => None,
        })
        .collect();
    format!("{}: {}", g.title(), picks.join(", "))
}

/// What the verdict section says before its tables: what is picked, by which rule, how sure.
pub const INTRO: &str = "What the measurements answer, per target, block size and access: the fastest configuration, the lowest tail latency with one read in flight, the cheapest in CPU per I/O, and the pick for throughput (most IOPS), balanced (lowest p99.9 keeping 90 % of the best IOPS) and latency (lowest p99.9 keeping half). How sure: the gap to the runner-up with its interval (95 %, shared among the comparisons made), from the paired rounds of a race, from repetitions, or from each run's own interval (batch means of 100 ms windows for rates, order statistics for percentiles); a winner when the whole interval is above zero, equal when it lies within ±5 %, too close to call otherwise. fio points and readlab's own cost are not ranked.";

/// The rules of the picks in a target's table, one per kind shown, in table order: `Rules:
/// fastest: most IOPS; …; latency: lowest p99.9 keeping half the best IOPS.`
pub fn rules(t: &TargetVerdict) -> Option<String> {
    let mut kinds: Vec<Kind> = Vec::new();
    for g in t.groups.iter().filter(|g| g.configurations > 1) {
        for f in &g.findings {
            if !kinds.contains(&f.kind) {
                kinds.push(f.kind);
            }
        }
    }
    let rules: Vec<String> = kinds.into_iter().map(Kind::rule).collect();
    (!rules.is_empty()).then(|| format!("Rules: {}.", rules.join("; ")))
}

/// The verdict as document blocks: per target a heading, its headlines, its table, the rules of
/// its picks and its own cost.
pub fn blocks(v: &Verdict, points: &[Point]) -> Vec<Block> {
    let points = &*v.points(points);
    let mut out = Vec::new();
    for (k, t) in v.targets.iter().enumerate() {
        out.push(Block::Heading(format!("Verdict for {}", t.name)));
        if t.groups.is_empty() {
            out.push(Block::Note(
                "Nothing to rank: no real reads were measured.".into(),
            ));
        } else {
            out.push(Block::List(t.groups.iter().map(headline).collect()));
            out.push(Block::Table(TableBlock {
                id: format!("verdict-{}", k + 1),
                caption: "Per block size and access: the fastest, the lowest tail at queue depth 1, the cheapest in CPU, and the pick of each goal, with how sure the measurements let us be".into(),
                table: table(t, points),
                ..TableBlock::default()
            }));
            let how = phrases(t);
            if !how.is_empty() {
                out.push(Block::Paragraph("How sure:".into()));
                out.push(Block::List(how));
            }
            if let Some(r) = rules(t) {
                out.push(Block::Paragraph(r));
            }
        }
        if let Some(o) = own_cost(t, points) {
            out.push(Block::Note(o));
        }
    }
    out
}

/// The verdict alone as a document (one section).
pub fn document(v: &Verdict, points: &[Point]) -> Document {
    let mut d = Document {
        label_words: Some(|l| crate::label::key(l.iter().copied())),
        ..Document::default()
    };
    let mut blocks = blocks(v, points);
    // One target: its name in the section's title, not in a heading of its own below it.
    let title = match (&v.targets[..], blocks.first()) {
        ([t], Some(Block::Heading(_))) => {
            blocks.remove(0);
            format!("Verdict for {}", t.name)
        }
        _ => "Verdict".into(),
    };
    let mut s = Section::new("verdict", &title);
    s.blocks = blocks;
    d.push(s);
    d
}

/// For the terminal: a heading per target, its table and its own cost.
pub fn text(v: &Verdict, points: &[Point]) -> String {
    text_within(v, points, usize::MAX)
}

/// [`text`] with each table fitted to `width` columns ([`Table::text_within`]).
pub fn text_within(v: &Verdict, points: &[Point], width: usize) -> String {
    text_for(
        v,
        points,
        Terminal {
            width,
            color: false,
        },
    )
}

/// For a terminal of the given width and colour.
pub fn text_for(v: &Verdict, points: &[Point], term: Terminal) -> String {
    Text(term).render(&document(v, points)).unwrap_or_default()
}

/// Markdown: a section per target.
pub fn markdown(v: &Verdict, points: &[Point]) -> String {
    Markdown.render(&document(v, points)).unwrap_or_default()
}

/// HTML: one table per target, its own cost below, headlines first.
pub fn html(v: &Verdict, points: &[Point]) -> String {
    Html.render(&document(v, points)).unwrap_or_default()
}

/// The verdict in JSON: one entry per target.
pub type VerdictJson = Vec<TargetJson>;

/// A target's verdict: its groups (block size and access) and readlab's own cost, apart.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct TargetJson {
    pub name: String,
    pub groups: Vec<GroupJson>,
    /// What readlab itself costs (the null engine, the clock), not ranked; null when not measured.
    pub self_measurement: Option<String>,
}

/// The configurations of one block size and access, and what was found among them.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct GroupJson {
    pub bs: u64,
    pub access: String,
    pub direct: bool,
    /// How many configurations were compared.
    pub configurations: usize,
    pub findings: Vec<FindingJson>,
}

/// One finding (a recommendation per goal, a configuration to avoid, …) with its figures.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct FindingJson {
    /// What was found, as its table's title says it.
    pub verdict: String,
    /// The rule it was found by.
    pub rule: String,
    /// The configuration's label (e.g. `U16B1`).
    pub label: String,
    /// True when no winner can be named: the gap's interval holds zero and reaches past the
    /// margin, or no interval was measured.
    pub too_close_to_call: bool,
    /// The call: `ahead` (the gap's interval is above zero), `equal` (it lies within ±margin),
    /// `open` (neither: too close to call), `unmeasured` (no interval), `alone` (nothing to
    /// compare with).
    pub call: String,
    /// The configuration the pick was compared with, when there was one.
    pub runner_up: Option<String>,
    /// The gap to the runner-up (relative: 0.21 is 21 % more IOPS, or 21 % lower latency or
    /// CPU) with its interval; null when alone or unmeasured.
    pub gap: Option<GapJson>,
    pub engine: String,
    pub threads: usize,
    pub iodepth: usize,
    pub batch: usize,
    pub iops: f64,
    pub mb_s: f64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub p999_ns: u64,
    /// The latency percentile the group was compared on.
    pub compared_on: String,
    pub cpu_us_per_io: f64,
    /// How sure the finding is, in words.
    pub how_sure: String,
}

/// A gap with its interval and what it rests on.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct GapJson {
    pub value: f64,
    /// Null where the data bound nothing on that side.
    pub lo: Option<f64>,
    pub hi: Option<f64>,
    /// The confidence the interval is stated at: of all the group's comparisons (and a race's
    /// looks) together, each made at a corrected level (the race's record has it).
    pub confidence: f64,
    /// The interval an "equal" call rests on and its confidence: from a race's paired rounds,
    /// two one-sided tests (at 2·confidence − 1); otherwise the interval above.
    pub eq_lo: Option<f64>,
    pub eq_hi: Option<f64>,
    pub eq_confidence: f64,
    /// Gaps inside ±margin are equal.
    pub margin: f64,
    /// `rounds` (paired rounds of a race), `repeats` or `runs` (each run's own interval).
    pub basis: String,
    /// Paired rounds or repetitions it rests on; null for runs.
    pub count: Option<usize>,
}

impl GapJson {
    fn of(s: &super::Sureness) -> Option<GapJson> {
        let g = s.gap()?;
        let margin = match s {
            super::Sureness::Equal { margin, .. } | super::Sureness::Open { margin, .. } => *margin,
            _ => crate::decide::MARGIN,
        };
        let (basis, count) = match g.basis {
            crate::decide::Basis::Rounds(n) => ("rounds", Some(n)),
            crate::decide::Basis::Repeats(n) => ("repeats", Some(n)),
            crate::decide::Basis::Runs => ("runs", None),
        };
        Some(GapJson {
            value: g.value,
            lo: g.lo,
            hi: g.hi,
            confidence: g.confidence,
            eq_lo: g.eq_lo,
            eq_hi: g.eq_hi,
            eq_confidence: g.eq_confidence,
            margin,
            basis: basis.into(),
            count,
        })
    }
}

/// The verdict's typed JSON over the report's points.
pub fn typed(v: &Verdict, points: &[Point]) -> VerdictJson {
    let points = &*v.points(points);
    v.targets
        .iter()
        .map(|t| TargetJson {
            name: t.name.clone(),
            groups: t
                .groups
                .iter()
                .map(|g| GroupJson {
                    bs: g.bs,
                    access: g.access.clone(),
                    direct: g.direct,
                    configurations: g.configurations,
                    findings: g
                        .findings
                        .iter()
                        .map(|f| {
                            let p = &points[f.point];
                            FindingJson {
                                verdict: f.kind.title(),
                                rule: f.kind.rule(),
                                label: f.label.clone(),
                                too_close_to_call: f.close,
                                call: f.sure.call_word().into(),
                                runner_up: f.sure.runner_up().map(str::to_string),
                                gap: GapJson::of(&f.sure),
                                engine: p.engine.clone(),
                                threads: p.threads,
                                iodepth: p.iodepth,
                                batch: p.batch,
                                iops: p.iops,
                                mb_s: p.mb_s,
                                p50_ns: p.latency.p50_ns,
                                p99_ns: p.latency.p99_ns,
                                p999_ns: p.latency.p999_ns,
                                compared_on: g.tail.name().to_string(),
                                cpu_us_per_io: p.cpu_us_per_io,
                                how_sure: f.phrase(),
                            }
                        })
                        .collect(),
                })
                .collect(),
            self_measurement: own_cost(t, points),
        })
        .collect()
}

/// The verdict as one JSON value (an array, one entry per target; see [`typed`]).
pub fn json(v: &Verdict, points: &[Point]) -> serde_json::Value {
    serde_json::to_value(typed(v, points)).unwrap_or_default()
}
