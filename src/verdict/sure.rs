//! How sure a pick is: the gap to its runner-up with its interval — from the paired rounds of a
//! race, the repetitions, or each run's own interval, in that order of preference — called by
//! [`crate::decide`]'s one rule, and said in words with its confidence.

use super::kind::{Kind, Tail, figure, on_tail};
use crate::decide::{self, Better, Call, Gap};
use crate::estimate;
use crate::points::Point;
use crate::points::figure::Figure;

/// What to do when a pick is too close to call and no race estimated the time to settle it.
pub const REPEAT_HINT: &str =
    "race them: readlab run with the configurations (--budget for more time), or --repeat 3";

/// How sure a finding is.
#[derive(Debug, Clone, PartialEq)]
pub enum Sureness {
    /// The only configuration measured here: nothing to rank against.
    Alone,
    /// Ahead of the runner-up: the gap's interval lies above zero.
    Ahead { runner_up: String, gap: Gap },
    /// Equal to the runner-up within `margin`: the gap's interval lies inside ±margin.
    /// `picked_for` says why this one was picked among the equals (less CPU per I/O).
    Equal {
        runner_up: String,
        gap: Gap,
        margin: f64,
        picked_for: Option<String>,
    },
    /// Too close to call: the interval holds zero and reaches past the margin. `settle` is
    /// how much more measuring would likely settle it, in words, when the race's rounds tell.
    Open {
        runner_up: String,
        gap: Gap,
        margin: f64,
        settle: Option<String>,
    },
    /// Ahead by `margin` (relative), but one of the two has no interval (a run too short for
    /// four batches of windows, an imported fio result): too close to call, whatever the gap.
    Unmeasured { runner_up: String, margin: f64 },
}

impl Sureness {
    /// No winner can be named: the gap is inside the noise, or no interval was measured.
    pub fn close(&self) -> bool {
        matches!(self, Sureness::Open { .. } | Sureness::Unmeasured { .. })
    }

    /// The configuration the pick is measured against, when there is one.
    pub fn runner_up(&self) -> Option<&str> {
        match self {
            Sureness::Alone => None,
            Sureness::Ahead { runner_up, .. }
            | Sureness::Equal { runner_up, .. }
            | Sureness::Open { runner_up, .. }
            | Sureness::Unmeasured { runner_up, .. } => Some(runner_up),
        }
    }

    /// The gap with its interval, when one was measured.
    pub fn gap(&self) -> Option<&Gap> {
        match self {
            Sureness::Ahead { gap, .. }
            | Sureness::Equal { gap, .. }
            | Sureness::Open { gap, .. } => Some(gap),
            _ => None,
        }
    }

    /// The call in one word, as the JSON says it: `alone`, `ahead`, `equal`, `open`,
    /// `unmeasured`.
    pub fn call_word(&self) -> &'static str {
        match self {
            Sureness::Alone => "alone",
            Sureness::Ahead { .. } => "ahead",
            Sureness::Equal { .. } => "equal",
            Sureness::Open { .. } => "open",
            Sureness::Unmeasured { .. } => "unmeasured",
        }
    }

    /// The call in a table cell, short enough to stay whole at 100 columns: `ahead 21 %`,
    /// `equal ±5 %`, `too close`; the phrase says the rest.
    pub fn short(&self) -> String {
        match self {
            Sureness::Alone => "only one".into(),
            Sureness::Ahead { gap, .. } => format!("ahead {} %", decide::pct(gap.value)),
            Sureness::Equal { margin, .. } => format!("equal ±{} %", decide::margin_pct(*margin)),
            Sureness::Open { .. } => "too close".into(),
            Sureness::Unmeasured { .. } => "no interval".into(),
        }
    }

    /// One phrase for a finding of `kind`: `21 % more IOPS than A32B1 (95 % interval 15–27 %,
    /// 5 paired rounds)`.
    pub fn phrase(&self, kind: Kind) -> String {
        let what = kind.comparative();
        match self {
            Sureness::Alone => match kind {
                Kind::LowestTailQd1 => "the only configuration at queue depth 1".into(),
                Kind::Recommended(
                    g @ (crate::tune::Goal::Balanced | crate::tune::Goal::Latency),
                ) => {
                    format!(
                        "the only configuration keeping {:.0} % of the best IOPS",
                        100.0 * g.floor()
                    )
                }
                _ => "the only configuration measured".into(),
            },
            Sureness::Ahead { runner_up, gap } => format!(
                "{} % {what} than {runner_up} ({})",
                decide::pct(gap.value),
                gap.words()
            ),
            Sureness::Equal {
                runner_up,
                gap,
                margin,
                picked_for,
            } => format!(
                "equal to {runner_up} within {} % ({}){}",
                decide::margin_pct(*margin),
                gap.eq_words(),
                picked_for
                    .as_ref()
                    .map_or_else(String::new, |w| format!("; picked for {w}"))
            ),
            Sureness::Open {
                runner_up,
                gap,
                settle,
                ..
            } => format!(
                "too close to call: {} % {what} than {runner_up} ({}); {}",
                decide::pct(gap.value),
                gap.words(),
                settle.as_deref().unwrap_or(REPEAT_HINT)
            ),
            Sureness::Unmeasured { runner_up, margin } => format!(
                "too close to call: {} % {what} than {runner_up}, no interval measured (a run \
                 shorter than 0.4 s, or an imported result); {REPEAT_HINT}",
                decide::pct(*margin)
            ),
        }
    }
}

/// What a kind ranks on, and whether higher is better.
pub(super) fn better(kind: Kind) -> Better {
    match kind {
        k if on_tail(k) => Better::Lower,
        Kind::CheapestCpu => Better::Lower,
        _ => Better::Higher,
    }
}

/// A round's figure for a kind.
fn round_figure(r: &crate::result::RoundFigures, kind: Kind, tail: Tail) -> f64 {
    match kind {
        k if on_tail(k) && tail == Tail::P999 => r.p999_ns as f64,
        k if on_tail(k) => r.p99_ns as f64,
        Kind::CheapestCpu => r.cpu_us_per_io,
        _ => r.iops,
    }
}

/// The paired rounds of two configurations of one race, their figures for one kind round by
/// round, and the race's rule.
struct Paired {
    a: Vec<f64>,
    b: Vec<f64>,
    /// The confidence the race's last look was made at, and the race's own.
    level: f64,
    stated: f64,
    margin: f64,
}

/// The paired rounds of `a` and `b` when both ran in one race.
fn rounds(a: &Point, b: &Point, kind: Kind, tail: Tail) -> Option<Paired> {
    let (ra, rb) = (a.race.as_ref()?, b.race.as_ref()?);
    if ra.id != rb.id {
        return None;
    }
    let mut xa = Vec::new();
    let mut xb = Vec::new();
    for x in crate::race::raced(&ra.rounds) {
        if let Some(y) = rb.rounds.iter().find(|y| y.round == x.round) {
            xa.push(round_figure(x, kind, tail));
            xb.push(round_figure(y, kind, tail));
        }
    }
    (xa.len() >= 2).then_some(Paired {
        a: xa,
        b: xb,
        level: ra.confidence.min(rb.confidence),
        stated: ra.race_confidence,
        margin: ra.margin,
    })
}

/// The figure a kind ranks on.
fn figure_of(kind: Kind, tail: Tail) -> Figure {
    match kind {
        k if on_tail(k) && tail == Tail::P999 => Figure::P999,
        k if on_tail(k) => Figure::P99,
        Kind::CheapestCpu => Figure::CpuPerIo,
        _ => Figure::Iops,
    }
}

/// The gap of `w` over `r` for `kind` with its interval, among `comparisons` comparisons made
/// in the group, and the margin it is called at: from their race's paired rounds, else their
/// repetitions, else each run's own interval; None when one of them has none.
pub(super) fn gap(
    w: &Point,
    r: &Point,
    kind: Kind,
    tail: Tail,
    comparisons: usize,
) -> Option<(Gap, f64)> {
    let b = better(kind);
    if let Some(p) = rounds(w, r, kind, tail) {
        return decide::from_rounds(&p.a, &p.b, b, p.level).map(|g| (g.stated(p.stated), p.margin));
    }
    let each = decide::each(estimate::CONFIDENCE, comparisons);
    crate::points::figure::gap(w, r, figure_of(kind, tail), b, each).map(|g| {
        // What all the group's comparisons hold together (Bonferroni): 95 % when each interval
        // was made at the corrected level; less when the runs could not give that much (an
        // interval of three repetitions is a 75 % one).
        let together = decide::together(g.confidence, comparisons);
        (g.stated(together), decide::MARGIN)
    })
}

/// How much more racing would likely settle an open gap of a raced pair, in words: `about 8
/// more rounds (~40 s)`.
pub(super) fn settle(w: &Point, r: &Point, kind: Kind, tail: Tail) -> Option<String> {
    let p = rounds(w, r, kind, tail)?;
    let d = decide::log_ratios(&p.a, &p.b, better(kind));
    let need = decide::rounds_to_settle(&d, p.margin, p.level)?;
    let more = need.saturating_sub(d.len()).max(1);
    let round_s = w.race.as_ref().map_or(0.0, |r| r.round_s);
    let time = if round_s > 0.0 {
        format!(
            " (~{})",
            humantime::format_duration(std::time::Duration::from_secs(
                (more as f64 * round_s).ceil() as u64
            ))
        )
    } else {
        String::new()
    };
    Some(format!(
        "about {more} more paired round{}{time} would settle it (--budget)",
        if more == 1 { "" } else { "s" }
    ))
}

/// How sure the pick `w` of `kind` is against `r`, the best other configuration, out of
/// `comparisons` made in the group.
pub(super) fn sureness(
    w: &Point,
    r: &Point,
    runner_up: String,
    kind: Kind,
    tail: Tail,
    comparisons: usize,
) -> Sureness {
    let Some((gap, margin)) = gap(w, r, kind, tail, comparisons) else {
        let (wv, rv) = (figure(w, kind, tail).0, figure(r, kind, tail).0);
        return Sureness::Unmeasured {
            runner_up,
            margin: decide::relative(wv, rv, better(kind)),
        };
    };
    match gap.call(margin) {
        Call::Ahead => Sureness::Ahead { runner_up, gap },
        Call::Equal => Sureness::Equal {
            runner_up,
            gap,
            margin,
            picked_for: None,
        },
        Call::Open => Sureness::Open {
            runner_up,
            gap,
            margin,
            settle: settle(w, r, kind, tail),
        },
    }
}
