//! The regression check of `readlab run --profile P --check [--tolerance 10%]`: a tuned profile
//! replayed, its throughput and p99.9 held against what the profile stored, allowing the stored
//! run-to-run spread and the tolerance. Made for a fleet of identical machines checked in CI.

use crate::result::RunResult;
use crate::tune::Candidate;
use crate::units::{Style, format_ns};

/// The tolerance when the user gives none: 10 %.
pub const DEFAULT_TOLERANCE: f64 = 0.10;

/// What the check found.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    pub passed: bool,
    /// One line per figure checked, saying what was expected, what was measured and the limit.
    pub lines: Vec<String>,
}

/// Hold a replay's result against the profile's expectation: throughput must not fall below the
/// stored IOPS (the low end of its stored interval, when it has one) less `tolerance`, and p99.9
/// must not rise above the stored p99.9 (the high end of its interval) plus `tolerance`.
pub fn check(expected: &Candidate, got: &RunResult, tolerance: f64) -> Check {
    let spread = expected.spread.as_ref();
    let iops_low = spread.map_or(expected.iops, |s| s.iops.lo.min(expected.iops));
    let iops_floor = iops_low * (1.0 - tolerance).max(0.0);
    let p999_high = spread.map_or(expected.p999_ns as f64, |s| {
        s.p999_ns.hi.max(expected.p999_ns as f64)
    });
    let p999_ceiling = p999_high * (1.0 + tolerance);
    let tol = format!("{:.0} %", 100.0 * tolerance);
    let from = if spread.is_some() {
        "the stored interval's edge"
    } else {
        "the stored figure"
    };
    // A repeated replay stands by its medians.
    let (iops, p999) = match &got.repeat {
        Some(r) if r.runs > 1 => (r.iops.median, r.p999_ns.median),
        _ => (got.iops, got.latency.p999_ns as f64),
    };
    let iops_ok = iops >= iops_floor;
    let p999_ok = p999 <= p999_ceiling;
    let mut lines = vec![
        format!(
            "throughput {}: {:.0} IOPS measured, {:.0} stored, at least {:.0} allowed ({from} less {tol})",
            if iops_ok { "ok" } else { "DROPPED" },
            iops,
            expected.iops,
            iops_floor
        ),
        format!(
            "p99.9 {}: {} measured, {} stored, at most {} allowed ({from} plus {tol})",
            if p999_ok { "ok" } else { "ROSE" },
            format_ns(p999, Style::Table),
            format_ns(expected.p999_ns as f64, Style::Table),
            format_ns(p999_ceiling, Style::Table)
        ),
    ];
    if !got.latency.supports(99.9) {
        lines.push(format!(
            "note: {} requests are too few for a steady p99.9 (it needs {}); run longer (--runtime)",
            got.latency.count,
            crate::stats::min_samples(99.9)
        ));
    }
    Check {
        passed: iops_ok && p999_ok,
        lines,
    }
}

/// Why a profile cannot hold a replay to `tolerance`: its stored interval (from a noisy tune)
/// reaches further from the stored figure than the tolerance itself, so the check would let
/// through a regression larger than the tolerance without a word — e.g. an interval of
/// 164k–330k IOPS around 250k passes a replay at 148k, a 41 % drop, at 10 %. None when it can.
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
            "throughput {:.0}–{:.0} IOPS around {:.0} (a drop of {:.0} % would pass)",
            s.iops.lo,
            s.iops.hi,
            expected.iops,
            100.0 * (1.0 - iops_low * (1.0 - tolerance).max(0.0) / expected.iops)
        ));
    }
    if up > tolerance {
        wide.push(format!(
            "p99.9 {}–{} around {} (a rise of {:.0} % would pass)",
            format_ns(s.p999_ns.lo, Style::Table),
            format_ns(s.p999_ns.hi, Style::Table),
            format_ns(p999, Style::Table),
            100.0 * (p999_high * (1.0 + tolerance) / p999 - 1.0)
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
    use crate::interval::Interval;
    use crate::tune::Spread;

    fn result(iops: f64, p999_ns: u64) -> RunResult {
        let mut r = crate::fixture::first::<crate::result::Document>().result;
        r.iops = iops;
        r.latency.p999_ns = p999_ns;
        r
    }

    fn expected(spread: bool) -> Candidate {
        Candidate {
            config: RunConfig::new("/x"),
            label: "U32B1".into(),
            iops: 100_000.0,
            mb_s: 409.6,
            p999_ns: 200_000,
            p50_ns: 50_000,
            cpu_cores: 1.0,
            requests: 1_000_000,
            spread: spread.then(|| Spread {
                runs: 3,
                confidence: 0.75,
                iops: Interval {
                    median: 100_000.0,
                    lo: 95_000.0,
                    hi: 103_000.0,
                },
                p999_ns: Interval {
                    median: 200_000.0,
                    lo: 180_000.0,
                    hi: 240_000.0,
                },
                cpu_cores: Interval::default(),
            }),
        }
    }

    #[test]
    fn a_drop_beyond_tolerance_fails_and_the_spread_is_allowed() {
        let c = check(&expected(false), &result(95_000.0, 200_000), 0.1);
        assert!(c.passed, "{:?}", c.lines);
        let c = check(&expected(false), &result(85_000.0, 200_000), 0.1);
        assert!(!c.passed);
        assert!(
            c.lines[0].starts_with(
                "throughput DROPPED: 85000 IOPS measured, 100000 stored, at least 90000 allowed"
            ),
            "{}",
            c.lines[0]
        );
        // The stored interval reaches down to 95 000: 85 500 is the floor.
        assert!(check(&expected(true), &result(86_000.0, 200_000), 0.1).passed);
        assert!(!check(&expected(true), &result(85_000.0, 200_000), 0.1).passed);
        // p99.9: 220 µs allowed without spread, 264 µs with it.
        assert!(!check(&expected(false), &result(100_000.0, 230_000), 0.1).passed);
        let c = check(&expected(true), &result(100_000.0, 230_000), 0.1);
        assert!(
            c.passed && c.lines[1].starts_with("p99.9 ok"),
            "{:?}",
            c.lines
        );
        assert!(!check(&expected(true), &result(100_000.0, 270_000), 0.1).passed);
    }

    #[test]
    fn a_stored_spread_wider_than_the_tolerance_is_named() {
        // 95 000–103 000 around 100 000 and 180–240 µs around 200 µs: within 20 %, not 10 %.
        assert_eq!(too_wide(&expected(false), 0.1), None, "no spread stored");
        assert_eq!(too_wide(&expected(true), 0.2), None);
        let why = too_wide(&expected(true), 0.1).unwrap();
        assert!(
            why.contains("wider than the tolerance of 10 %")
                && why.contains("p99.9 180.0us–240.0us around 200.0us (a rise of 32 % would pass)")
                && why.contains("--check-anyway")
                && !why.contains("throughput"),
            "{why}"
        );
        // The noisy tune of the issue: 164k–330k around 250k.
        let mut noisy = expected(true);
        let s = noisy.spread.as_mut().unwrap();
        (s.iops.lo, s.iops.median, s.iops.hi) = (164_000.0, 250_000.0, 330_000.0);
        noisy.iops = 250_000.0;
        let why = too_wide(&noisy, 0.1).unwrap();
        assert!(
            why.contains("throughput 164000–330000 IOPS around 250000 (a drop of 41 % would pass)"),
            "{why}"
        );
    }
}
