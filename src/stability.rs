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

/// The stability flags as given (`None`: not on the command line).
#[derive(Debug, Clone, Copy, Default)]
pub struct StopFlags {
    pub window: Option<usize>,
    pub band: Option<f64>,
    pub min_runtime: Option<Duration>,
}

impl StopRule {
    /// The defaults of `--stop-when-stable`: 5 one-second intervals, a band of 2 %, at least 3 s.
    pub const DEFAULT: StopRule = StopRule {
        window: 5,
        band: 0.02,
        min_runtime: Duration::from_secs(3),
    };

    /// The rule `--stop-when-stable` (`on`) asks for with its tuning flags; a tuning flag without
    /// `--stop-when-stable` would change nothing, so it is refused rather than ignored.
    pub fn from_flags(on: bool, f: StopFlags) -> crate::error::Result<Option<StopRule>> {
        if !on {
            let given = [
                ("--stable-window", f.window.is_some()),
                ("--stable-band", f.band.is_some()),
                ("--min-runtime", f.min_runtime.is_some()),
            ];
            if let Some((flag, _)) = given.iter().find(|(_, g)| *g) {
                return Err(crate::error::Error::invalid(format!(
                    "{flag} tunes --stop-when-stable; add --stop-when-stable or drop {flag}"
                )));
            }
            return Ok(None);
        }
        Ok(Some(StopRule {
            window: f.window.unwrap_or(Self::DEFAULT.window),
            band: f.band.unwrap_or(Self::DEFAULT.band),
            min_runtime: f.min_runtime.unwrap_or(Self::DEFAULT.min_runtime),
        }))
    }
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
