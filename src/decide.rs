//! The one rule by which readlab says that one configuration beats another, that two are equal,
//! or that it cannot tell yet: the gap between them with its interval (from paired rounds of a
//! race, from repetitions, or from each run's own interval), held against zero and against a
//! practical margin, at a confidence corrected for the comparisons made. The verdict, the race,
//! `compare` and `--check` all decide through here.

use crate::estimate::{self, Estimate};

/// The practical margin by default: configurations within ±5 % are equal for every purpose a
/// reader has.
pub const MARGIN: f64 = 0.05;

/// What the measurements support about a gap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Call {
    /// The first is better: the gap's whole interval lies above zero (and not inside the
    /// margin).
    Ahead,
    /// Equal within the margin: the gap's whole interval lies inside ±margin.
    Equal,
    /// Not yet either: the interval holds zero and reaches past the margin.
    Open,
}

/// What a gap's interval rests on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Basis {
    /// Paired rounds of a race (configurations measured interleaved, compared round by round).
    Rounds(usize),
    /// Repetitions of each configuration (their medians' order-statistic intervals).
    Repeats(usize),
    /// Each run's own interval (batch means, order statistics).
    Runs,
}

impl Basis {
    /// `5 paired rounds`, `3 runs each`, `one run each`.
    pub fn words(self) -> String {
        match self {
            Basis::Rounds(n) => format!("{n} paired rounds"),
            Basis::Repeats(n) => format!("{n} runs each"),
            Basis::Runs => "one run each".into(),
        }
    }
}

/// Whether a figure is better higher (IOPS) or lower (latency, CPU per I/O).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    Higher,
    Lower,
}

/// How much better one configuration is than another, relative: 0.21 is 21 % more IOPS (a/b −
/// 1) or 21 % lower latency (1 − a/b); its interval at `confidence` (a none side: unbounded).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Gap {
    pub value: f64,
    pub lo: Option<f64>,
    pub hi: Option<f64>,
    pub confidence: f64,
    /// The interval an "equal" call rests on, at `eq_confidence`. From paired rounds, two
    /// one-sided tests (the gap is above −margin, and below +margin, each at `confidence`): the
    /// interval at 2·`confidence` − 1, as equivalence testing does. Otherwise the interval above.
    pub eq_lo: Option<f64>,
    pub eq_hi: Option<f64>,
    pub eq_confidence: f64,
    pub basis: Basis,
}

/// The two-sided confidence whose interval holds two one-sided tests at `confidence` each.
pub fn two_one_sided(confidence: f64) -> f64 {
    (2.0 * confidence - 1.0).max(0.0)
}

impl Gap {
    /// The call at `margin`: equal when the equivalence interval lies inside ±margin, ahead
    /// when the interval lies above zero.
    pub fn call(&self, margin: f64) -> Call {
        match (self.eq_lo, self.eq_hi, self.lo) {
            (Some(lo), Some(hi), _) if lo >= -margin && hi <= margin => Call::Equal,
            (_, _, Some(lo)) if lo > 0.0 => Call::Ahead,
            _ => Call::Open,
        }
    }

    /// Whether the equal call rests on two one-sided tests (an interval of its own).
    pub fn one_sided(&self) -> bool {
        self.eq_confidence != self.confidence
    }

    /// The same gap stated at `confidence`: the confidence of all the comparisons and looks
    /// its interval was corrected for, together (Bonferroni's bound; O'Brien–Fleming's
    /// repeated intervals).
    pub fn stated(self, confidence: f64) -> Gap {
        Gap {
            eq_confidence: if self.one_sided() {
                two_one_sided(confidence)
            } else {
                confidence
            },
            confidence,
            ..self
        }
    }

    /// The same gap seen from the other side (of `b` over `a`), for a gap of a figure where
    /// higher is better (a/b − 1 becomes b/a − 1).
    pub fn reversed(&self) -> Gap {
        let flip = |x: f64| 1.0 / (1.0 + x) - 1.0;
        Gap {
            value: flip(self.value),
            lo: self.hi.map(flip),
            hi: self.lo.map(flip),
            eq_lo: self.eq_hi.map(flip),
            eq_hi: self.eq_lo.map(flip),
            ..*self
        }
    }

    /// The same gap with its sign turned (a drop of 10 % rather than a change of −10 %).
    pub fn negated(&self) -> Gap {
        let neg = |x: f64| -x;
        Gap {
            value: -self.value,
            lo: self.hi.map(neg),
            hi: self.lo.map(neg),
            eq_lo: self.eq_hi.map(neg),
            eq_hi: self.eq_lo.map(neg),
            ..*self
        }
    }

    /// The interval in percent: `15–27 %`, `−3–12 %`, `above 4 %`.
    pub fn interval_words(&self) -> String {
        bounds_words(self.lo, self.hi)
    }

    /// What an equal call rests on: `95 % sure: 90 % interval −1.1–2.9 %, 20 paired rounds`
    /// from two one-sided tests, else [`Gap::words`].
    pub fn eq_words(&self) -> String {
        if !self.one_sided() {
            return self.words();
        }
        format!(
            "{} sure: {} interval {}, {}",
            confidence_words(self.confidence),
            confidence_words(self.eq_confidence),
            bounds_words(self.eq_lo, self.eq_hi),
            self.basis.words()
        )
    }

    /// `95 % interval 15–27 %, 5 paired rounds`.
    pub fn words(&self) -> String {
        format!(
            "{} interval {}, {}",
            confidence_words(self.confidence),
            self.interval_words(),
            self.basis.words()
        )
    }
}

/// Bounds in percent: `15–27 %`, `−3–12 %`, `above 4 %`.
fn bounds_words(lo: Option<f64>, hi: Option<f64>) -> String {
    match (lo, hi) {
        (Some(lo), Some(hi)) => format!("{}–{} %", pct(lo), pct(hi)),
        (Some(lo), None) => format!("above {} %", pct(lo)),
        (None, Some(hi)) => format!("below {} %", pct(hi)),
        (None, None) => "unbounded".into(),
    }
}

/// A confidence in percent: `95 %`, `99.2 %`, `99.96 %` (never rounded up to 100 %).
pub fn confidence_words(c: f64) -> String {
    let p = 100.0 * c;
    if p >= 99.995 {
        "≥ 99.99 %".into()
    } else if p >= 99.95 {
        format!("{p:.2} %")
    } else if (p - p.round()).abs() < 0.05 {
        format!("{p:.0} %")
    } else {
        format!("{p:.1} %")
    }
}

/// A relative figure in percent, with a decimal below 10 %: `0.3`, `35`, `−2.1`.
pub fn pct(m: f64) -> String {
    let s = if m.abs() < 0.095 {
        format!("{:.1}", 100.0 * m)
    } else {
        format!("{:.0}", 100.0 * m)
    };
    match s.strip_prefix('-') {
        Some(rest) => format!("−{rest}"),
        None => s,
    }
}

/// A margin in percent, whole when it is: `5`, `2.5`.
pub fn margin_pct(m: f64) -> String {
    let p = 100.0 * m;
    if (p - p.round()).abs() < 1e-9 {
        format!("{p:.0}")
    } else {
        format!("{p:.1}")
    }
}

/// The relative gap of `a` over `b`.
pub fn relative(a: f64, b: f64, better: Better) -> f64 {
    let b = b.max(f64::MIN_POSITIVE);
    match better {
        Better::Higher => a / b - 1.0,
        Better::Lower => 1.0 - a / b,
    }
}

/// The confidence each of `m` comparisons is made at so that all of them together hold
/// `confidence` (Bonferroni).
pub fn each(confidence: f64, m: usize) -> f64 {
    1.0 - (1.0 - confidence) / m.max(1) as f64
}

/// What `m` comparisons each made at `level` hold together (Bonferroni's bound, the inverse of
/// [`each`]); none below zero.
pub fn together(level: f64, m: usize) -> f64 {
    (1.0 - m.max(1) as f64 * (1.0 - level)).max(0.0)
}

/// The gap of `a` over `b` from each one's own interval (independent measurements): the
/// widest ratio the two intervals allow, so the gap is above zero exactly when the intervals
/// do not overlap. `confidence` is what each interval was made at.
pub fn from_intervals(
    a: &Estimate,
    b: &Estimate,
    better: Better,
    confidence: f64,
    basis: Basis,
) -> Gap {
    let ratio = |x: Option<f64>, y: Option<f64>| match (x, y) {
        (Some(x), Some(y)) if y > 0.0 => Some(x / y),
        _ => None,
    };
    let (lo, hi) = match better {
        // a/b − 1 is least at a.lo/b.hi and most at a.hi/b.lo.
        Better::Higher => (
            ratio(a.lo, b.hi).map(|r| r - 1.0),
            ratio(a.hi, b.lo).map(|r| r - 1.0),
        ),
        // 1 − a/b is least at a.hi/b.lo and most at a.lo/b.hi.
        Better::Lower => (
            ratio(a.hi, b.lo).map(|r| 1.0 - r),
            ratio(a.lo, b.hi).map(|r| 1.0 - r),
        ),
    };
    Gap {
        value: relative(a.value, b.value, better),
        lo,
        hi,
        confidence,
        eq_lo: lo,
        eq_hi: hi,
        eq_confidence: confidence,
        basis,
    }
}

/// The round-by-round log ratios of `a` over `b` (positive: `a` better), rounds where either
/// figure is not positive left out.
pub fn log_ratios(a: &[f64], b: &[f64], better: Better) -> Vec<f64> {
    a.iter()
        .zip(b)
        .filter(|(x, y)| **x > 0.0 && **y > 0.0)
        .map(|(x, y)| match better {
            Better::Higher => (x / y).ln(),
            Better::Lower => (y / x).ln(),
        })
        .collect()
}

/// The gap of `a` over `b` from paired rounds (`a[r]` and `b[r]` measured in round `r`, next
/// to each other): the t interval of the mean log ratio, so a drift of the machine that
/// touches both alike cancels; equal calls by two one-sided tests. None below two rounds.
pub fn from_rounds(a: &[f64], b: &[f64], better: Better, confidence: f64) -> Option<Gap> {
    let d = log_ratios(a, b, better);
    let e = estimate::paired_interval(&d, confidence)?;
    let q = estimate::paired_interval(&d, two_one_sided(confidence))?;
    let back = |x: f64| match better {
        Better::Higher => x.exp() - 1.0,
        Better::Lower => 1.0 - (-x).exp(),
    };
    Some(Gap {
        value: back(e.value),
        lo: e.lo.map(back),
        hi: e.hi.map(back),
        confidence,
        eq_lo: q.lo.map(back),
        eq_hi: q.hi.map(back),
        eq_confidence: two_one_sided(confidence),
        basis: Basis::Rounds(d.len()),
    })
}

/// Rounds in all that would likely settle an open gap from paired rounds: the number at which
/// the interval's half-width, at the rounds' spread so far, fits between the gap and zero or
/// between the gap and the margin, whichever is wider. None when the rounds show no spread or
/// too few are there to tell.
pub fn rounds_to_settle(d: &[f64], margin: f64, confidence: f64) -> Option<usize> {
    let r = d.len();
    if r < 2 {
        return None;
    }
    let (mean, sd) = (estimate::mean(d), estimate::variance(d).sqrt());
    // Room for the interval between the gap and zero (ahead), and for the equivalence interval
    // between the gap and the margin (equal).
    let (ahead, equal) = (mean.abs(), (1.0 + margin).ln() - mean.abs());
    if sd == 0.0 || (ahead <= 0.0 && equal <= 0.0) {
        return None;
    }
    // The fewest rounds n whose t interval (n − 1 degrees of freedom) at this spread fits.
    let half = |c: f64, n: usize| estimate::t_two_sided(c, n - 1) * sd / (n as f64).sqrt();
    let fits = |n: usize| half(confidence, n) < ahead || half(two_one_sided(confidence), n) < equal;
    (r + 1..=100_000).find(|&n| fits(n))
}

/// The standard normal distribution function (Abramowitz & Stegun 7.1.26 through erfc; absolute
/// error below 1.5e-7).
pub fn normal_cdf(x: f64) -> f64 {
    let z = x.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * z);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erfc = poly * (-z * z).exp();
    if x >= 0.0 {
        1.0 - erfc / 2.0
    } else {
        erfc / 2.0
    }
}

/// The nominal two-sided level of look `look` (1-based) of `looks` equally spaced looks at the
/// data so that all of them together keep `alpha`: O'Brien and Fleming's boundaries (Jennison &
/// Turnbull, table 2.3: the final look's constant C_B(K) at α = 0.05, the boundary at look k
/// C_B(K)·√(K/k)), strict early and close to `alpha` at the last look — a race's early looks
/// stop only for a gap the first pass should have caught, the last ones decide the close calls.
/// For another `alpha`, the constants scale with its normal quantile.
pub fn alpha_at_look(alpha: f64, look: usize, looks: usize) -> f64 {
    const C_B: [f64; 20] = [
        1.960, 1.977, 2.004, 2.024, 2.040, 2.053, 2.063, 2.072, 2.080, 2.087, 2.092, 2.098, 2.102,
        2.106, 2.110, 2.114, 2.117, 2.120, 2.123, 2.126,
    ];
    let k_all = looks.max(1);
    let k = look.clamp(1, k_all);
    // Beyond 20 looks the constant creeps up by about 0.003 a look; 2.13 + that is safe.
    let c = if k_all <= C_B.len() {
        C_B[k_all - 1]
    } else {
        2.13 + 0.003 * (k_all - C_B.len()) as f64
    };
    let scale = estimate::normal_quantile(1.0 - alpha / 2.0) / 1.96;
    let boundary = c * scale * (k_all as f64 / k as f64).sqrt();
    2.0 * (1.0 - normal_cdf(boundary))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(value: f64, lo: f64, hi: f64) -> Estimate {
        Estimate {
            value,
            lo: Some(lo),
            hi: Some(hi),
        }
    }

    #[test]
    fn calls_hold_the_interval_against_zero_and_the_margin() {
        let gap = |lo, hi| Gap {
            value: (lo + hi) / 2.0,
            lo: Some(lo),
            hi: Some(hi),
            confidence: 0.95,
            eq_lo: Some(lo),
            eq_hi: Some(hi),
            eq_confidence: 0.95,
            basis: Basis::Runs,
        };
        assert_eq!(gap(0.15, 0.27).call(MARGIN), Call::Ahead);
        assert_eq!(gap(-0.02, 0.04).call(MARGIN), Call::Equal);
        // Ahead of zero but all of it inside the margin: equal for every purpose.
        assert_eq!(gap(0.01, 0.04).call(MARGIN), Call::Equal);
        assert_eq!(gap(-0.01, 0.07).call(MARGIN), Call::Open);
        let unbounded = Gap {
            hi: None,
            eq_hi: None,
            ..gap(0.02, 0.0)
        };
        assert_eq!(unbounded.call(MARGIN), Call::Ahead);
        assert_eq!(
            gap(0.15, 0.27).words(),
            "95 % interval 15–27 %, one run each"
        );
        assert_eq!(gap(-0.031, 0.12).interval_words(), "−3.1–12 %");
    }

    #[test]
    fn intervals_that_do_not_overlap_give_a_gap_above_zero() {
        let a = e(120.0, 115.0, 125.0);
        let b = e(100.0, 95.0, 105.0);
        let g = from_intervals(&a, &b, Better::Higher, 0.95, Basis::Runs);
        assert!((g.value - 0.2).abs() < 1e-12);
        assert!((g.lo.unwrap() - (115.0 / 105.0 - 1.0)).abs() < 1e-12);
        assert_eq!(g.call(MARGIN), Call::Ahead);
        // Lower is better: a at 80 µs against b at 100 µs is 20 % lower.
        let g = from_intervals(
            &e(80.0, 78.0, 82.0),
            &e(100.0, 97.0, 103.0),
            Better::Lower,
            0.95,
            Basis::Runs,
        );
        assert!((g.value - 0.2).abs() < 1e-12);
        assert!(g.lo.unwrap() > 0.0 && g.hi.unwrap() > g.value);
        // Overlapping: open.
        let g = from_intervals(
            &e(101.0, 95.0, 107.0),
            &b,
            Better::Higher,
            0.95,
            Basis::Runs,
        );
        assert!(g.lo.unwrap() < 0.0);
    }

    #[test]
    fn paired_rounds_cancel_a_drift_both_share() {
        // The machine slows by half over the rounds; a stays 10 % ahead of b in each.
        let b: Vec<f64> = (0..6).map(|r| 1000.0 - 100.0 * r as f64).collect();
        let a: Vec<f64> = b
            .iter()
            .enumerate()
            .map(|(r, x)| x * if r % 2 == 0 { 1.11 } else { 1.09 })
            .collect();
        let g = from_rounds(&a, &b, Better::Higher, 0.95).unwrap();
        assert!(g.lo.unwrap() > 0.08 && g.hi.unwrap() < 0.12, "{g:?}");
        assert_eq!(g.basis, Basis::Rounds(6));
        // Unpaired, the same figures are hopeless.
        let ia = estimate::paired_interval(&a, 0.95).unwrap();
        let ib = estimate::paired_interval(&b, 0.95).unwrap();
        assert!(ia.overlaps(&ib));
        assert!(from_rounds(&a[..1], &b[..1], Better::Higher, 0.95).is_none());
    }

    #[test]
    fn looks_and_comparisons_are_paid_for() {
        assert!((normal_cdf(1.959964) - 0.975).abs() < 1e-6);
        assert!((normal_cdf(-1.0) - 0.158655).abs() < 1e-6);
        assert!((alpha_at_look(0.05, 1, 1) - 0.05).abs() < 1e-6);
        // Five looks: the last at 2.040 (nominal 4.1 %), the first at 2.040·√5 (0.0005 %).
        assert!((alpha_at_look(0.05, 5, 5) - 0.0413).abs() < 0.0005);
        assert!(alpha_at_look(0.05, 1, 5) < 1e-4);
        assert!(alpha_at_look(0.05, 40, 40) < alpha_at_look(0.05, 20, 20));
        assert!((each(0.95, 4) - 0.9875).abs() < 1e-12);
        assert!((together(each(0.95, 4), 4) - 0.95).abs() < 1e-12);
        assert_eq!(together(0.75, 8), 0.0);
        // A 2 % gap with 4 % spread per round: about 20 rounds to tell it from zero, but some
        // 8 to show it equal within 5 % (two one-sided tests), which settles it.
        let d: Vec<f64> = (0..4)
            .map(|i| 0.02 + if i % 2 == 0 { 0.04 } else { -0.04 })
            .collect();
        let n = rounds_to_settle(&d, 0.05, 0.95).unwrap();
        assert!((6..=12).contains(&n), "{n}");
        // Nothing settles a gap the rounds show no spread for.
        assert_eq!(rounds_to_settle(&[0.01, 0.01, 0.01], 0.05, 0.95), None);
    }

    /// Equal within the margin by two one-sided tests: the 90 % interval inside ±5 % says so
    /// at 95 %, though the 95 % interval reaches past 5 %; "ahead" still needs the 95 % interval
    /// above zero. Stated at the race's own confidence, never rounded up to 100 %.
    #[test]
    fn equal_rests_on_two_one_sided_tests() {
        let d: Vec<f64> = (0..8)
            .map(|i| 0.015 + if i % 2 == 0 { 0.04 } else { -0.04 })
            .collect();
        let b = vec![1000.0; 8];
        let a: Vec<f64> = d.iter().map(|x| 1000.0 * x.exp()).collect();
        let g = from_rounds(&a, &b, Better::Higher, 0.95).unwrap();
        assert!(g.hi.unwrap() > MARGIN && g.lo.unwrap() < 0.0, "{g:?}");
        assert!(
            g.eq_hi.unwrap() < MARGIN && g.eq_lo.unwrap() > -MARGIN,
            "{g:?}"
        );
        assert!((g.eq_confidence - 0.90).abs() < 1e-12);
        assert_eq!(g.call(MARGIN), Call::Equal);
        // The old rule (the 95 % interval inside ±5 %) would have left it open.
        let old = Gap {
            eq_lo: g.lo,
            eq_hi: g.hi,
            eq_confidence: g.confidence,
            ..g
        };
        assert_eq!(old.call(MARGIN), Call::Open);
        // Made at a corrected level (a look of a race among two comparisons), stated at the
        // race's 95 %.
        let g = from_rounds(&a, &b, Better::Higher, 0.9996)
            .unwrap()
            .stated(0.95);
        assert!(
            g.eq_words().starts_with("95 % sure: 90 % interval "),
            "{}",
            g.eq_words()
        );
        assert!(
            g.eq_words().ends_with(", 8 paired rounds"),
            "{}",
            g.eq_words()
        );
        assert_eq!(confidence_words(0.9996), "99.96 %");
        assert_eq!(confidence_words(0.99999), "≥ 99.99 %");
    }
}
