//! The answer first: one line per target, block size and access saying which configuration to
//! use (in words), against which runner-up, by what margin and against what spread — or that it
//! is too close to call — so the top of every output says what the measurements support, with
//! the rule the pick follows.

use super::{Finding, Group, Kind, REPEAT_HINT, Sureness, TargetVerdict, Verdict};
use crate::decide::pct;
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
        // A group of one configuration answers nothing: the verdict table says so.
        for g in t.groups.iter().filter(|g| g.configurations > 1) {
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
                "{head}: too close to call ({rule}): {} is the only configuration keeping {:.0} % of the best IOPS, but no interval was measured; {REPEAT_HINT}",
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
        Sureness::Ahead { runner_up, gap } => (
            format!(
                "{head}: use {pick} — {rule}; {} % {} than {runner_up} ({})",
                pct(gap.value),
                margin_words(f.kind, g),
                gap.words()
            ),
            false,
        ),
        Sureness::Equal {
            runner_up,
            gap,
            margin,
            picked_for,
        } => (
            format!(
                "{head}: use {pick} — {rule}; {} and {runner_up} are equal within {} % ({}){}",
                f.label,
                crate::decide::margin_pct(*margin),
                gap.words(),
                picked_for
                    .as_ref()
                    .map_or_else(String::new, |w| format!(": picked {} for {w}", f.label))
            ),
            false,
        ),
        Sureness::Open {
            runner_up,
            gap,
            settle,
            ..
        } => (
            format!(
                "{head}: too close to call ({rule}): {} and {runner_up} differ by {} % {}, {}; {}",
                f.label,
                pct(gap.value),
                margin_words(f.kind, g),
                gap.words(),
                settle.as_deref().unwrap_or(REPEAT_HINT)
            ),
            true,
        ),
        Sureness::Unmeasured { runner_up, margin } => (
            format!(
                "{head}: too close to call ({rule}): {} and {runner_up} differ by {} % {}, no interval measured; {REPEAT_HINT}",
                f.label,
                pct(*margin),
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
