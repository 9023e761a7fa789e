//! The answer first: one line per target, block size and access saying which configuration to
//! use (in words), against which runner-up, by what margin and against what spread — or that it
//! is too close to call — so the top of every output says what the measurements support, with
//! the rule the pick follows.

use super::{Finding, Group, Kind, REPEAT_HINT, Spread, Sureness, TargetVerdict, Verdict};
use crate::document::Answer;
use crate::points::Point;
use crate::tune::Goal;

/// The goal the answer follows when none is asked for: the tuner's default.
pub const DEFAULT_GOAL: Goal = Goal::Balanced;

/// One answer per target, block size and access, for the default goal (balanced).
pub fn answers(v: &Verdict, points: &[Point]) -> Vec<Answer> {
    answers_for(v, points, DEFAULT_GOAL)
}

/// One answer per target, block size and access that had a choice, for `goal`: "use X (X in
/// words) — the rule; runner-up Y; margin Z against spread S", or "too close to call: run with
/// --repeat 3" when the margin is inside the spread or no spread was measured. Where only one
/// configuration was measured there is no answer (the verdict's table says so).
pub fn answers_for(v: &Verdict, points: &[Point], goal: Goal) -> Vec<Answer> {
    let mut out = Vec::new();
    for t in &v.targets {
        for g in &t.groups {
            let kind = Kind::Recommended(goal);
            // One configuration measured: nothing to choose from, said in the verdict's table
            // only (a line of the answer each would crowd out the answers that choose).
            let alone = |f: &Finding| g.configurations <= 1 && f.sure == Sureness::Alone;
            if let Some(f) = g.findings.iter().find(|f| f.kind == kind && !alone(f)) {
                out.push(answer(v, points, t, g, f));
            }
        }
    }
    out
}

/// `±3 % over 3 runs`, `per-second ±3 %`.
fn spread_words(s: &Spread) -> String {
    if s.runs > 1 {
        format!("±{:.1} % over {} runs", 100.0 * s.relative, s.runs)
    } else {
        format!("per-second ±{:.1} %", 100.0 * s.relative)
    }
}

/// What a kind's margin is in: `more IOPS`, `lower p99.9`.
fn margin_words(kind: Kind, g: &Group) -> String {
    match kind.comparative() {
        "lower tail" => format!("lower {}", g.tail.name()),
        other => other.to_string(),
    }
}

fn answer(v: &Verdict, points: &[Point], t: &TargetVerdict, g: &Group, f: &Finding) -> Answer {
    let head = format!("{} {}", t.name, g.title());
    let rule = f.kind.rule();
    let p = v.point(points, f.point);
    let pick = format!(
        "{} ({}; {:.0} IOPS, {} {})",
        f.label,
        crate::label::words(&f.label),
        p.iops,
        g.tail.name(),
        crate::units::format_ns(g.tail.ns(p), crate::units::Style::Table)
    );
    let (text, close) = match &f.sure {
        // The only configuration keeping enough throughput: as sure as the throughput is.
        Sureness::Alone if f.close => (
            format!(
                "{head}: too close to call: {REPEAT_HINT} ({rule}; {} is the only configuration keeping {:.0} % of the best IOPS, but no spread was measured)",
                f.label,
                100.0 * goal_of(f.kind).floor()
            ),
            true,
        ),
        Sureness::Alone => (
            format!(
                "{head}: use {pick} — {rule}; the only configuration keeping {:.0} % of the best IOPS",
                100.0 * goal_of(f.kind).floor()
            ),
            false,
        ),
        Sureness::Clear {
            runner_up,
            margin,
            spread,
        }
        | Sureness::Narrow {
            runner_up,
            margin,
            spread,
        } => (
            format!(
                "{head}: use {pick} — {rule}; runner-up {runner_up}; margin {:.1} % {} against spread {}",
                100.0 * margin,
                margin_words(f.kind, g),
                spread_words(spread)
            ),
            false,
        ),
        Sureness::Tie {
            runner_up,
            margin,
            spread,
        } => (
            format!(
                "{head}: too close to call: {REPEAT_HINT} ({rule}; {} and {runner_up} differ by {:.1} % {}, inside the spread {})",
                f.label,
                100.0 * margin,
                margin_words(f.kind, g),
                spread_words(spread)
            ),
            true,
        ),
        Sureness::Unmeasured { runner_up, margin } => (
            format!(
                "{head}: too close to call: {REPEAT_HINT} ({rule}; {} and {runner_up} differ by {:.1} % {}, no spread measured)",
                f.label,
                100.0 * margin,
                margin_words(f.kind, g)
            ),
            true,
        ),
    };
    Answer { text, close }
}

/// The answer of a tuning session for its goal, from its finalists' medians (the figures its
/// pick was chosen on; `docs` are its stored runs, which hold their search runs).
pub fn for_tune(report: &crate::tune::TuneReport, docs: &[crate::result::Document]) -> Vec<Answer> {
    let mut r = super::report_of(docs);
    r.tuned = vec![report.clone()];
    let (v, points) = super::of_finalists(&r);
    let goal = report
        .recommendations
        .first()
        .map_or(DEFAULT_GOAL, |rec| rec.goal);
    answers_for(&v, &points, goal)
}

fn goal_of(kind: Kind) -> Goal {
    match kind {
        Kind::Recommended(g) => g,
        _ => Goal::Throughput,
    }
}

/// The answers as lines for the terminal, under `Answer:` (empty when there are none).
pub fn text(answers: &[Answer]) -> String {
    if answers.is_empty() {
        return String::new();
    }
    let mut s = String::from("Answer:\n");
    for a in answers {
        s.push_str("  ");
        s.push_str(&a.text);
        s.push('\n');
    }
    s
}
