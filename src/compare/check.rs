//! The regression check of `readlab run --profile P --check [--tolerance 10%]`: a tuned profile
//! replayed, its throughput and p99.9 held against what the profile stored. A figure fails only
//! when it moved the wrong way by more than the tolerance AND beyond the noise: the change's
//! interval, from the replay's own interval against the profile's stored one
//! ([`crate::decide::from_intervals`], as the verdict and `compare` decide), excludes zero. Made
//! for a fleet of identical machines checked in CI.

use crate::decide::{self, Basis, Better, Gap};
use crate::estimate::{CONFIDENCE, Estimate};
use crate::interval::Interval;
use crate::points::Point;
use crate::points::figure::{self, Figure};
use crate::result::Document;
use crate::tune::Candidate;
use crate::units::{Style, format_ns};

/// The tolerance when the user gives none: 10 %.
pub const DEFAULT_TOLERANCE: f64 = 0.10;

/// What the check found.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    pub passed: bool,
    /// One line per figure checked, saying which held: the tolerance, the noise, or neither.
    pub lines: Vec<String>,
}

/// One figure held against the profile.
struct Held {
    /// `throughput`, `p99.9`.
    name: &'static str,
    /// `DROPPED`, `ROSE`.
    failed: &'static str,
    better: Better,
    /// The replay's figure (the median of its repetitions, when repeated) with its interval,
    /// the interval's confidence and the repetitions (1: the run's own interval).
    replay: (Estimate, Option<(f64, usize)>),
    /// The profile's figure with its stored interval, confidence and runs.
    stored: (Estimate, Option<(f64, usize)>),
    /// The figure as written: `88000 IOPS`, `240.0us`.
    show: fn(f64) -> String,
}

/// The replay's figure with its interval: over its repetitions, else the run's own at 95 %.
fn replayed(p: &Point, f: Figure) -> (Estimate, Option<(f64, usize)>) {
    if let Some((e, c, n)) = figure::repeated(p, f) {
        return (e, Some((c, n)));
    }
    match figure::own(p, f, CONFIDENCE) {
        Some(e) => (e, Some((CONFIDENCE, 1))),
        None => (
            Estimate {
                value: f.of(p),
                lo: None,
                hi: None,
            },
            None,
        ),
    }
}

/// The profile's figure with the interval its tune stored (which always holds the figure).
fn stored(value: f64, i: Option<(&Interval, f64, usize)>) -> (Estimate, Option<(f64, usize)>) {
    match i {
        Some((i, c, n)) => (
            Estimate {
                value,
                lo: Some(i.lo.min(value)),
                hi: Some(i.hi.max(value)),
            },
            Some((c, n)),
        ),
        None => (
            Estimate {
                value,
                lo: None,
                hi: None,
            },
            None,
        ),
    }
}

/// `95 % interval 9–15 %`.
fn interval_words(g: &Gap) -> String {
    format!(
        "{} interval {}",
        decide::confidence_words(g.confidence),
        g.interval_words()
    )
}

impl Held {
    /// The change of the replay against the profile for the worse (a drop of throughput, a
    /// rise of p99.9; relative, positive when worse) with its interval, when both sides have
    /// one.
    fn worse(&self) -> (f64, Option<Gap>) {
        let (r, s) = (&self.replay.0, &self.stored.0);
        let sign = match self.better {
            Better::Higher => -1.0,
            Better::Lower => 1.0,
        };
        let value = sign * decide::relative(r.value, s.value, Better::Higher);
        let gap = self
            .replay
            .1
            .zip(self.stored.1)
            .map(|((cr, nr), (cs, ns))| {
                let basis = if nr > 1 && ns > 1 {
                    Basis::Repeats(nr.min(ns))
                } else {
                    Basis::Runs
                };
                // replay/stored − 1, turned so that positive is worse.
                let g = decide::from_intervals(r, s, Better::Higher, cr.min(cs), basis);
                match self.better {
                    Better::Higher => g.negated(),
                    Better::Lower => g,
                }
            });
        (value, gap)
    }

    /// Whether the figure holds, and the line saying which rule held (or neither).
    fn judge(&self, tolerance: f64) -> (bool, String) {
        let (worse, gap) = self.worse();
        let (away, toward) = match self.better {
            Better::Higher => ("below", "above"),
            Better::Lower => ("above", "below"),
        };
        let figures = format!(
            "{} measured, {} stored",
            (self.show)(self.replay.0.value),
            (self.show)(self.stored.0.value)
        );
        let tol = decide::confidence_words(tolerance);
        let by = decide::pct(worse.abs());
        let name = self.name;
        if by == "0.0" {
            return (true, format!("{name} ok: as stored ({figures})"));
        }
        if worse <= 0.0 {
            return (
                true,
                format!("{name} ok: {by} % {toward} the profile ({figures})"),
            );
        }
        if worse <= tolerance {
            let line = format!("{name} ok: {by} % {away}, within the {tol} tolerance ({figures})");
            return (true, line);
        }
        match gap {
            Some(g) if g.lo.is_some_and(|lo| lo > 0.0) => (
                false,
                format!(
                    "{name} {}: {by} % {away} the profile ({}), beyond the {tol} tolerance \
                     and the noise ({figures})",
                    self.failed,
                    interval_words(&g)
                ),
            ),
            Some(g) => (
                true,
                format!(
                    "{name} ok: {by} % {away}, but within the noise ({}; {figures})",
                    interval_words(&g)
                ),
            ),
            None => (
                false,
                format!(
                    "{name} {}: {by} % {away} the profile, beyond the {tol} tolerance; no \
                     interval to hold it against the noise ({}), so the tolerance alone \
                     decides ({figures})",
                    self.failed,
                    if self.stored.1.is_none() {
                        "the profile stored none"
                    } else {
                        "the replay measured none: run it longer, or with --repeat 3"
                    }
                ),
            ),
        }
    }
}

/// Hold a replay's result against the profile's expectation: throughput fails when it fell by
/// more than `tolerance` and the fall's interval excludes zero, p99.9 when it rose by more than
/// `tolerance` and the rise's interval excludes zero; where either side has no interval, the
/// tolerance alone decides.
pub fn check(expected: &Candidate, got: &Document, tolerance: f64) -> Check {
    let p = Point::from_document(got, "");
    let spread = expected.spread.as_ref();
    let figures = [
        Held {
            name: "throughput",
            failed: "DROPPED",
            better: Better::Higher,
            replay: replayed(&p, Figure::Iops),
            stored: stored(
                expected.iops,
                spread.map(|s| (&s.iops, s.confidence, s.runs)),
            ),
            show: |v| format!("{v:.0} IOPS"),
        },
        Held {
            name: "p99.9",
            failed: "ROSE",
            better: Better::Lower,
            replay: replayed(&p, Figure::P999),
            stored: stored(
                expected.p999_ns as f64,
                spread.map(|s| (&s.p999_ns, s.confidence, s.runs)),
            ),
            show: |v| format_ns(v, Style::Table),
        },
    ];
    let mut passed = true;
    let mut lines = Vec::new();
    for f in &figures {
        let (ok, line) = f.judge(tolerance);
        passed &= ok;
        lines.push(line);
    }
    let r = &got.result;
    if !r.latency.supports(99.9) {
        lines.push(format!(
            "note: {} requests are too few for a steady p99.9 (it needs {}); run longer (--runtime)",
            r.latency.count,
            crate::stats::min_samples(99.9)
        ));
    }
    Check { passed, lines }
}

/// Why a profile cannot hold a replay to `tolerance`: its stored interval (from a noisy tune)
/// reaches further from the stored figure than the tolerance itself, so a replay measured at
/// the interval's far edge — a regression larger than the tolerance — overlaps the profile's
/// interval, is within the noise, and passes without a word: e.g. an interval of 164k–330k IOPS
/// around 250k lets a replay at 164k, a 34 % drop, through at 10 % (more, by the replay's own
/// interval). None when it can.
pub fn too_wide(expected: &Candidate, tolerance: f64) -> Option<String> {
    let s = expected.spread.as_ref()?;
    let iops_low = s.iops.lo.min(expected.iops);
    let down = if expected.iops > 0.0 {
        1.0 - iops_low / expected.iops
    } else {
        0.0
    };
    let p999 = expected.p999_ns as f64;
    let p999_high = s.p999_ns.hi.max(p999);
    let up = if p999 > 0.0 {
        p999_high / p999 - 1.0
    } else {
        0.0
    };
    let mut wide = Vec::new();
    if down > tolerance {
        wide.push(format!(
            "throughput {:.0}–{:.0} IOPS around {:.0} (a drop of {:.0} % or more would pass as \
             noise)",
            s.iops.lo,
            s.iops.hi,
            expected.iops,
            100.0 * down
        ));
    }
    if up > tolerance {
        wide.push(format!(
            "p99.9 {}–{} around {} (a rise of {:.0} % or more would pass as noise)",
            format_ns(s.p999_ns.lo, Style::Table),
            format_ns(s.p999_ns.hi, Style::Table),
            format_ns(p999, Style::Table),
            100.0 * up
        ));
    }
    (!wide.is_empty()).then(|| {
        format!(
            "the profile's stored spread is wider than the tolerance of {:.0} %: {}; re-tune on a \
             quieter machine or with more --repeat, give a larger --tolerance, or add \
             --check-anyway to check against it all the same",
            100.0 * tolerance,
            wide.join("; ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::RunConfig;
    use crate::result::Precision;
    use crate::tune::Spread;

    fn within(v: f64, rel: f64) -> Estimate {
        Estimate {
            value: v,
            lo: Some(v * (1.0 - rel)),
            hi: Some(v * (1.0 + rel)),
        }
    }

    /// A replay of `iops` and `p999_ns`, its own interval ±`rel` on both (None: measured none).
    fn result(iops: f64, p999_ns: u64, rel: Option<f64>) -> Document {
        let mut d = crate::fixture::first::<Document>();
        let r = &mut d.result;
        r.iops = iops;
        r.latency.p999_ns = p999_ns;
        r.repeat = None;
        // The stored interval of p99.9 stands (no histogram to compute it again from).
        r.histogram = String::new();
        r.precision = rel.map(|rel| Precision {
            confidence: 0.95,
            window_s: 0.1,
            windows: 100,
            batches: 10,
            iops: within(iops, rel),
            cpu_us_per_io: None,
            p50_ns: within(r.latency.p50_ns as f64, rel),
            p99_ns: within(r.latency.p99_ns as f64, rel),
            p999_ns: within(p999_ns as f64, rel),
        });
        d
    }

    /// The profile: 100 000 IOPS and 200 µs p99.9, with the tune's stored interval ±`rel` when
    /// given (three runs, 75 %).
    fn expected(rel: Option<f64>) -> Candidate {
        let interval = |v: f64, rel: f64| Interval {
            median: v,
            lo: v * (1.0 - rel),
            hi: v * (1.0 + rel),
        };
        Candidate {
            config: RunConfig::new("/x"),
            label: "U32B1".into(),
            iops: 100_000.0,
            mb_s: 409.6,
            p999_ns: 200_000,
            p50_ns: 50_000,
            cpu_cores: 1.0,
            requests: 1_000_000,
            spread: rel.map(|rel| Spread {
                runs: 3,
                confidence: 0.75,
                iops: interval(100_000.0, rel),
                p999_ns: interval(200_000.0, rel),
                cpu_cores: Interval::default(),
            }),
        }
    }

    /// The same figures give or take the noise pass, whatever the tolerance.
    #[test]
    fn the_same_within_the_noise_passes() {
        let c = check(
            &expected(Some(0.02)),
            &result(99_000.0, 203_000, Some(0.02)),
            0.05,
        );
        assert!(c.passed, "{:?}", c.lines);
        assert_eq!(
            c.lines[0],
            "throughput ok: 1.0 % below, within the 5 % tolerance (99000 IOPS measured, 100000 \
             IOPS stored)"
        );
    }

    /// 10 % below with tight intervals on both sides: beyond the noise, so the tolerance
    /// decides — fails at 5 %, passes at 15 %.
    #[test]
    fn ten_percent_below_with_tight_intervals_fails_at_five_percent_only() {
        let (profile, replay) = (expected(Some(0.01)), result(90_000.0, 200_000, Some(0.01)));
        let c = check(&profile, &replay, 0.05);
        assert!(!c.passed);
        assert_eq!(
            c.lines[0],
            "throughput DROPPED: 10 % below the profile (75 % interval 8.2–12 %), beyond the 5 % \
             tolerance and the noise (90000 IOPS measured, 100000 IOPS stored)"
        );
        assert!(c.lines[1].starts_with("p99.9 ok: "), "{}", c.lines[1]);
        let c = check(&profile, &replay, 0.15);
        assert!(c.passed, "{:?}", c.lines);
        assert!(
            c.lines[0].starts_with("throughput ok: 10 % below, within the 15 % tolerance"),
            "{}",
            c.lines[0]
        );
    }

    /// A 12 % drop whose interval (the replay's own, wide) holds zero: within the noise, passes
    /// — the old rule (the stored edge less the tolerance) would have failed it.
    #[test]
    fn a_drop_within_the_noise_passes_and_says_so() {
        let c = check(
            &expected(Some(0.02)),
            &result(88_000.0, 200_000, Some(0.2)),
            0.1,
        );
        assert!(c.passed, "{:?}", c.lines);
        assert_eq!(
            c.lines[0],
            "throughput ok: 12 % below, but within the noise (75 % interval −7.8–31 %; 88000 \
             IOPS measured, 100000 IOPS stored)"
        );
    }

    /// p99.9 risen by a third, tightly measured: ROSE. Without an interval on a side, the
    /// tolerance alone decides (and the line says so).
    #[test]
    fn a_rise_of_the_tail_fails_and_no_interval_leaves_the_tolerance() {
        let c = check(
            &expected(Some(0.02)),
            &result(100_000.0, 266_000, Some(0.02)),
            0.1,
        );
        assert!(!c.passed);
        assert!(
            c.lines[1].starts_with(
                "p99.9 ROSE: 33 % above the profile (75 % interval 28–38 %), \
                 beyond the 10 % tolerance and the noise"
            ),
            "{}",
            c.lines[1]
        );
        let c = check(&expected(None), &result(85_000.0, 200_000, Some(0.2)), 0.1);
        assert!(!c.passed);
        assert!(
            c.lines[0].starts_with(
                "throughput DROPPED: 15 % below the profile, beyond the 10 % tolerance; no \
                 interval to hold it against the noise (the profile stored none)"
            ),
            "{}",
            c.lines[0]
        );
        let c = check(&expected(Some(0.02)), &result(85_000.0, 200_000, None), 0.1);
        assert!(!c.passed);
        assert!(
            c.lines[0].contains("(the replay measured none: run it longer, or with --repeat 3)")
        );
        assert!(check(&expected(None), &result(95_000.0, 210_000, None), 0.1).passed);
        let c = check(&expected(None), &result(100_000.0, 200_000, None), 0.1);
        assert_eq!(
            c.lines[1],
            "p99.9 ok: as stored (200.0us measured, 200.0us stored)"
        );
        // Faster and a lower tail are never a regression.
        let c = check(&expected(None), &result(130_000.0, 100_000, None), 0.1);
        assert!(c.passed);
        assert!(
            c.lines[0].starts_with("throughput ok: 30 % above the profile"),
            "{:?}",
            c.lines
        );
        assert!(
            c.lines[1].starts_with("p99.9 ok: 50 % below the profile"),
            "{:?}",
            c.lines
        );
    }

    /// A repeated replay stands by its medians and their interval.
    #[test]
    fn a_repeated_replay_stands_by_its_medians() {
        let mut d = result(50_000.0, 200_000, None);
        let i = |median: f64, rel: f64| Interval {
            median,
            lo: median * (1.0 - rel),
            hi: median * (1.0 + rel),
        };
        d.result.repeat = Some(crate::interval::RepeatSummary {
            runs: 5,
            confidence: 0.94,
            iops: i(89_000.0, 0.01),
            mb_s: i(364.0, 0.01),
            p50_ns: i(50_000.0, 0.01),
            p99_ns: i(100_000.0, 0.01),
            p999_ns: i(200_000.0, 0.01),
            cpu_us_per_io: i(1.0, 0.01),
            achieved_depth: None,
        });
        let c = check(&expected(Some(0.01)), &d, 0.1);
        assert!(!c.passed);
        assert!(
            c.lines[0].starts_with("throughput DROPPED: 11 % below the profile (75 % interval"),
            "{}",
            c.lines[0]
        );
    }

    #[test]
    fn a_stored_spread_wider_than_the_tolerance_is_named() {
        assert_eq!(too_wide(&expected(None), 0.1), None, "no spread stored");
        // ±15 %: within 20 %, not 10 %.
        assert_eq!(too_wide(&expected(Some(0.15)), 0.2), None);
        let why = too_wide(&expected(Some(0.15)), 0.1).unwrap();
        assert!(
            why.contains("wider than the tolerance of 10 %")
                && why.contains(
                    "p99.9 170.0us–230.0us around 200.0us (a rise of 15 % or more would pass as \
                     noise)"
                )
                && why.contains("--check-anyway"),
            "{why}"
        );
        // The noisy tune of the issue: 164k–330k around 250k.
        let mut noisy = expected(Some(0.02));
        let s = noisy.spread.as_mut().unwrap();
        (s.iops.lo, s.iops.median, s.iops.hi) = (164_000.0, 250_000.0, 330_000.0);
        noisy.iops = 250_000.0;
        let why = too_wide(&noisy, 0.1).unwrap();
        assert!(
            why.contains(
                "throughput 164000–330000 IOPS around 250000 (a drop of 34 % or more would pass \
                 as noise)"
            ),
            "{why}"
        );
        // And so it does: a replay at 165k, tightly measured, is within the noise.
        let c = check(&noisy, &result(165_000.0, 200_000, Some(0.01)), 0.1);
        assert!(
            c.passed && c.lines[0].contains("within the noise"),
            "{:?}",
            c.lines
        );
    }
}
