//! Median and distribution-free confidence interval of a figure measured several times, and the
//! summary a repeated result carries; plain data and arithmetic, shared by the runner's results,
//! the repetition driver and the tuner.

use serde::{Deserialize, Serialize};

/// Coverage the interval aims for when there are enough repetitions (six or more).
pub const CONFIDENCE: f64 = 0.95;

/// A figure over repetitions: its median and an interval that holds the true median with
/// probability `confidence` (order statistics: no assumption on the distribution).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Interval {
    pub median: f64,
    pub lo: f64,
    pub hi: f64,
}

impl Interval {
    /// Half the interval's width relative to the median (0.05 = ±5 %).
    pub fn relative_half_width(&self) -> f64 {
        if self.median == 0.0 {
            0.0
        } else {
            (self.hi - self.lo) / 2.0 / self.median.abs()
        }
    }
}

/// The headline figures of a repeated configuration.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RepeatSummary {
    /// Repetitions measured.
    pub runs: usize,
    /// Probability that each interval holds the true median (1 − 2·0.5ⁿ below six runs, where
    /// the interval is the whole range).
    pub confidence: f64,
    pub iops: Interval,
    pub mb_s: Interval,
    pub p50_ns: Interval,
    pub p99_ns: Interval,
    pub p999_ns: Interval,
    pub cpu_us_per_io: Interval,
    /// Achieved depth, when every repetition measured it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub achieved_depth: Option<Interval>,
}

/// P(X ≤ k) for X ~ Binomial(n, ½).
fn binomial_half_cdf(n: usize, k: usize) -> f64 {
    let mut c = 1.0f64; // C(n, 0)
    let mut sum = 0.0;
    for i in 0..=k.min(n) {
        if i > 0 {
            c = c * (n + 1 - i) as f64 / i as f64;
        }
        sum += c;
    }
    sum / 2f64.powi(n as i32)
}

/// The ranks (1-based, from each end) of the interval for `n` samples and its coverage.
fn interval_rank(n: usize) -> (usize, f64) {
    let coverage = |k: usize| 1.0 - 2.0 * binomial_half_cdf(n, k - 1);
    let mut k = 1;
    while k < n / 2 && coverage(k + 1) >= CONFIDENCE {
        k += 1;
    }
    (k, coverage(k))
}

/// Probability that the interval of `n` runs holds the true median.
pub fn coverage(n: usize) -> f64 {
    interval_rank(n.max(1)).1
}

/// Median and confidence interval of `xs` (NaNs ignored).
pub fn interval(xs: &[f64]) -> Interval {
    let mut v: Vec<f64> = xs.iter().copied().filter(|x| !x.is_nan()).collect();
    if v.is_empty() {
        return Interval::default();
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    let (k, _) = interval_rank(n);
    Interval {
        median,
        lo: v[k - 1],
        hi: v[n - k],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_interval_is_the_range_below_six_runs_and_narrows_after() {
        let i = interval(&[3.0, 1.0, 2.0]);
        assert_eq!((i.median, i.lo, i.hi), (2.0, 1.0, 3.0));
        assert!((interval_rank(3).1 - 0.75).abs() < 1e-12);
        assert!((interval_rank(5).1 - 0.9375).abs() < 1e-12);
        // Six runs: the whole range covers 96.9 %.
        assert_eq!(interval_rank(6).0, 1);
        // Twenty runs: the 6th and 15th values (coverage 95.9 %).
        let (k, c) = interval_rank(20);
        assert_eq!(k, 6);
        assert!((CONFIDENCE..0.97).contains(&c), "{c}");
        let xs: Vec<f64> = (1..=20).map(f64::from).collect();
        let i = interval(&xs);
        assert_eq!((i.median, i.lo, i.hi), (10.5, 6.0, 15.0));
    }
}
