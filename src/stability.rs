//! Stop-on-stability: a point may end early once its per-second IOPS has settled, judged by the
//! 95 % confidence interval of the mean over the last k one-second intervals.

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// When a run may stop before its runtime: the last `window` one-second IOPS samples have a 95 %
/// confidence half-width within `band` of their mean, and at least `min_runtime` was measured.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StopRule {
    pub window: usize,
    pub band: f64,
    #[serde(with = "crate::secs")]
    #[schemars(with = "f64")]
    pub min_runtime: Duration,
}

/// Student's t quantile (two-sided 95 %) for `df` degrees of freedom.
fn t95(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        d if d <= 30 => T[d - 1],
        _ => 1.96,
    }
}

/// Relative 95 % confidence half-width of the mean of `xs` (infinite when it cannot be judged).
pub fn relative_ci(xs: &[f64]) -> f64 {
    let n = xs.len();
    if n < 2 {
        return f64::INFINITY;
    }
    let mean = xs.iter().sum::<f64>() / n as f64;
    if mean <= 0.0 {
        return f64::INFINITY;
    }
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    t95(n - 1) * (var / n as f64).sqrt() / mean
}

/// Per-second IOPS samples of one run and the rule that judges them.
#[derive(Debug)]
pub struct Tracker {
    rule: StopRule,
    samples: Vec<f64>,
}

impl Tracker {
    pub fn new(rule: StopRule) -> Tracker {
        Tracker {
            rule,
            samples: Vec::new(),
        }
    }

    pub fn push(&mut self, iops: f64) {
        self.samples.push(iops);
    }

    /// True once the last `window` samples are stable and `measured` ≥ the minimum runtime.
    pub fn stable(&self, measured: Duration) -> bool {
        let k = self.rule.window.max(2);
        measured >= self.rule.min_runtime
            && self.samples.len() >= k
            && relative_ci(&self.samples[self.samples.len() - k..]) <= self.rule.band
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule() -> StopRule {
        StopRule {
            window: 5,
            band: 0.02,
            min_runtime: Duration::from_secs(3),
        }
    }

    #[test]
    fn steady_samples_are_stable_noisy_ones_are_not() {
        let mut t = Tracker::new(rule());
        for x in [100.0, 101.0, 99.0, 100.5, 99.5] {
            t.push(x);
        }
        assert!(t.stable(Duration::from_secs(5)));
        assert!(!t.stable(Duration::from_secs(2)), "min runtime not reached");
        let mut n = Tracker::new(rule());
        for x in [100.0, 150.0, 60.0, 120.0, 80.0] {
            n.push(x);
        }
        assert!(!n.stable(Duration::from_secs(10)));
    }

    #[test]
    fn too_few_samples_are_never_stable() {
        let mut t = Tracker::new(rule());
        t.push(100.0);
        t.push(100.0);
        assert!(!t.stable(Duration::from_secs(10)));
        assert!(relative_ci(&[5.0]).is_infinite());
    }
}
