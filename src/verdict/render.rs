//! The verdict for people: one table per target (block size and access, what was found, its label,
//! figures and how sure), then readlab's own cost, apart. The same table prints on the terminal,
//! in Markdown and in the HTML report; JSON carries the same facts as values.

use super::{Finding, Group, Kind, Tail, TargetVerdict, Verdict};
use crate::report::model::Point;
use crate::table::{Column, Table, html_escape};
use crate::units::{Style, format_ns};
use std::fmt::Write;

/// The table of one target's findings.
pub fn table(t: &TargetVerdict, points: &[Point]) -> Table {
    let mut table = Table::new(
        ["reads", "verdict", "label", "engine"]
            .map(Column::left)
            .into_iter()
            .chain(["IOPS", "MB/s", "p50", "p99.9", "CPU µs/IO"].map(Column::right))
            .chain([Column::left("how sure")])
            .collect(),
    );
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
                f.phrase(),
            ]);
        }
    }
    table
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

/// `text` in lines of at most `width` characters (a longer word keeps its own line), the lines
/// after the first indented by two.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let indent = if lines.is_empty() { 0 } else { 2 };
        if !line.is_empty() && indent + line.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    lines.push(line);
    for l in lines.iter_mut().skip(1) {
        l.insert_str(0, "  ");
    }
    lines
}

/// For the terminal: a heading per target, its table, the rules of its picks and its own cost.
pub fn text(v: &Verdict, points: &[Point]) -> String {
    let points = &*v.points(points);
    let mut s = String::new();
    for t in &v.targets {
        let _ = writeln!(s, "Verdict for {}:", t.name);
        if t.groups.is_empty() {
            s.push_str("  nothing to rank: no real reads were measured\n");
        } else {
            for line in table(t, points).text().lines() {
                let _ = writeln!(s, "  {}", line.trim_end());
            }
            if let Some(r) = rules(t) {
                for line in wrap(&r, 96) {
                    let _ = writeln!(s, "  {line}");
                }
            }
        }
        if let Some(o) = own_cost(t, points) {
            let _ = writeln!(s, "  {o}");
        }
    }
    s
}

/// Markdown: a section per target.
pub fn markdown(v: &Verdict, points: &[Point]) -> String {
    let points = &*v.points(points);
    let mut s = String::new();
    for t in &v.targets {
        let _ = writeln!(
            s,
            "### Verdict for {}\n",
            crate::table::markdown_escape(&t.name)
        );
        if t.groups.is_empty() {
            s.push_str("Nothing to rank: no real reads were measured.\n\n");
        } else {
            s.push_str(&table(t, points).markdown());
            s.push('\n');
            if let Some(r) = rules(t) {
                let _ = writeln!(s, "{}\n", crate::table::markdown_escape(&r));
            }
        }
        if let Some(o) = own_cost(t, points) {
            let _ = writeln!(s, "{}\n", crate::table::markdown_escape(&o));
        }
    }
    s
}

/// HTML: one table per target, its own cost below, headlines first.
pub fn html(v: &Verdict, points: &[Point]) -> String {
    let points = &*v.points(points);
    let mut s = String::new();
    for (k, t) in v.targets.iter().enumerate() {
        let _ = writeln!(s, "<h3>Verdict for {}</h3>", html_escape(&t.name));
        if t.groups.is_empty() {
            s.push_str("<p class=\"empty\">Nothing to rank: no real reads were measured.</p>\n");
        } else {
            s.push_str("<ul class=\"headlines\">\n");
            for g in &t.groups {
                let _ = writeln!(s, "<li>{}</li>", html_escape(&headline(g)));
            }
            s.push_str("</ul>\n");
            let _ = writeln!(
                s,
                "<div class=\"tablewrap\">{}</div>",
                table(t, points).html(
                    &format!("verdict-{}", k + 1),
                    "Per block size and access: the fastest, the lowest tail at queue depth 1, the cheapest in CPU, and the pick of each goal, with how sure the measurements let us be"
                )
            );
            if let Some(r) = rules(t) {
                let _ = writeln!(s, "<p class=\"rules\">{}</p>", html_escape(&r));
            }
        }
        if let Some(o) = own_cost(t, points) {
            let _ = writeln!(s, "<p class=\"own\">{}</p>", html_escape(&o));
        }
    }
    s
}

/// As JSON values: per target, per group, each finding with its figures.
pub fn json(v: &Verdict, points: &[Point]) -> serde_json::Value {
    let points = &*v.points(points);
    let targets: Vec<serde_json::Value> = v
        .targets
        .iter()
        .map(|t| {
            let groups: Vec<serde_json::Value> = t
                .groups
                .iter()
                .map(|g| {
                    let findings: Vec<serde_json::Value> = g
                        .findings
                        .iter()
                        .map(|f| {
                            let p = &points[f.point];
                            serde_json::json!({
                                "verdict": f.kind.title(),
                                "rule": f.kind.rule(),
                                "label": f.label,
                                "too_close_to_call": f.close,
                                "engine": p.engine,
                                "threads": p.threads,
                                "iodepth": p.iodepth,
                                "batch": p.batch,
                                "iops": p.iops,
                                "mb_s": p.mb_s,
                                "p50_ns": p.latency.p50_ns,
                                "p99_ns": p.latency.p99_ns,
                                "p999_ns": p.latency.p999_ns,
                                "compared_on": g.tail.name(),
                                "cpu_us_per_io": p.cpu_us_per_io,
                                "how_sure": f.phrase(),
                            })
                        })
                        .collect();
                    serde_json::json!({
                        "bs": g.bs,
                        "access": g.access,
                        "direct": g.direct,
                        "configurations": g.configurations,
                        "findings": findings,
                    })
                })
                .collect();
            serde_json::json!({
                "name": t.name,
                "groups": groups,
                "self_measurement": own_cost(t, points),
            })
        })
        .collect();
    serde_json::Value::Array(targets)
}
