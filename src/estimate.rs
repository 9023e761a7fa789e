//! How well a run measured, as arithmetic: an interval for a rate from fine-grained windows (batch
//! means, with neighbouring windows' correlation accounted for), for a ratio such as CPU per I/O,
//! for a percentile from a histogram's counts (order statistics, no assumption on the
//! distribution), and for the mean of paired differences (racing rounds). Plain functions on
//! numbers: the runner, the verdict and `compare` all call these, so every interval readlab prints
//! comes from one computation.

use serde::{Deserialize, Serialize};

/// The confidence readlab's intervals aim for, before any correction for the number of
/// comparisons.
pub const CONFIDENCE: f64 = 0.95;

/// A figure with the interval that holds its true value with the stated confidence. `lo`/`hi`
/// are none where the data bound nothing on that side (p99.9 of 500 requests has no upper
/// bound: the interval's upper rank is past the last request).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Estimate {
    pub value: f64,
    pub lo: Option<f64>,
    pub hi: Option<f64>,
}

impl Estimate {
    /// A figure known exactly (no interval to draw).
    pub fn exact(value: f64) -> Estimate {
        Estimate {
            value,
            lo: Some(value),
            hi: Some(value),
        }
    }

    /// Half the interval's width relative to the value (0.05 = ±5 %); infinite when a side is
    /// unbounded.
    pub fn relative_half_width(&self) -> f64 {
        match (self.lo, self.hi) {
            (Some(lo), Some(hi)) if self.value != 0.0 => (hi - lo) / 2.0 / self.value.abs(),
            (Some(_), Some(_)) => 0.0,
            _ => f64::INFINITY,
        }
    }

    /// Whether the two intervals share a value (an unbounded side reaches everything).
    pub fn overlaps(&self, other: &Estimate) -> bool {
        let below = |a: &Estimate, b: &Estimate| match (a.hi, b.lo) {
            (Some(hi), Some(lo)) => hi < lo,
            _ => false,
        };
        !below(self, other) && !below(other, self)
    }
}

/// The standard normal quantile (Acklam's rational approximation, relative error < 1.2e-9).
pub fn normal_quantile(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969683028665376e1,
        2.209460984245205e2,
        -2.759285104469687e2,
        1.38357751867269e2,
        -3.066479806614716e1,
        2.506628277459239,
    ];
    const B: [f64; 5] = [
        -5.447609879822406e1,
        1.615858368580409e2,
        -1.556989798598866e2,
        6.680131188771972e1,
        -1.328068155288572e1,
    ];
    const C: [f64; 6] = [
        -7.784894002430293e-3,
        -3.223964580411365e-1,
        -2.400758277161838,
        -2.549732539343734,
        4.374664141464968,
        2.938163982698783,
    ];
    const D: [f64; 4] = [
        7.784695709041462e-3,
        3.224671290700398e-1,
        2.445134137142996,
        3.754408661907416,
    ];
    let p = p.clamp(1e-300, 1.0 - 1e-16);
    let tail = |q: f64| {
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    if p < 0.02425 {
        tail((-2.0 * p.ln()).sqrt())
    } else if p > 1.0 - 0.02425 {
        -tail((-2.0 * (1.0 - p).ln()).sqrt())
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    }
}

/// Student's t quantile with `df` degrees of freedom: exact for 1 and 2, the Cornish–Fisher
/// expansion (Abramowitz & Stegun 26.7.5) above, within 0.2 % of the tables from 3 on.
pub fn t_quantile(p: f64, df: usize) -> f64 {
    match df {
        0 => f64::INFINITY,
        1 => (std::f64::consts::PI * (p - 0.5)).tan(),
        2 => (2.0 * p - 1.0) / (2.0 * p * (1.0 - p)).sqrt(),
        _ => {
            let z = normal_quantile(p);
            let n = df as f64;
            let (z3, z5, z7, z9) = (z.powi(3), z.powi(5), z.powi(7), z.powi(9));
            z + (z3 + z) / (4.0 * n)
                + (5.0 * z5 + 16.0 * z3 + 3.0 * z) / (96.0 * n * n)
                + (3.0 * z7 + 19.0 * z5 + 17.0 * z3 - 15.0 * z) / (384.0 * n.powi(3))
                + (79.0 * z9 + 776.0 * z7 + 1482.0 * z5 - 1920.0 * z3 - 945.0 * z)
                    / (92160.0 * n.powi(4))
        }
    }
}

/// The two-sided t multiplier for `confidence` with `df` degrees of freedom. Beyond 99.9 % (a
/// race's strict early looks) the expansion no longer holds: there it is the normal multiplier
/// scaled by the t/normal ratio at 99.9 %.
pub fn t_two_sided(confidence: f64, df: usize) -> f64 {
    const EDGE: f64 = 0.999;
    if confidence <= EDGE || df == 0 {
        return t_quantile(1.0 - (1.0 - confidence) / 2.0, df);
    }
    let at_edge = |q: fn(f64) -> f64| q(1.0 - (1.0 - EDGE) / 2.0);
    let ratio = t_quantile(1.0 - (1.0 - EDGE) / 2.0, df) / at_edge(normal_quantile);
    normal_quantile(1.0 - (1.0 - confidence) / 2.0) * ratio
}

/// The fewest batches a batch-means interval is made of.
pub const MIN_BATCHES: usize = 4;

/// The most batches a batch-means interval is made of (Schmeiser's 10–30).
pub const MAX_BATCHES: usize = 30;

/// Consecutive windows grouped into batches whose means are close to independent: about √n
/// batches (between [`MIN_BATCHES`] and [`MAX_BATCHES`]), and the batch doubled while the batch
/// means' lag-1 autocorrelation is significant (beyond 2/√b) and enough batches would remain.
/// Returns the batch size.
pub fn batch_size(xs: &[f64]) -> usize {
    let n = xs.len();
    let b = ((n as f64).sqrt() as usize).clamp(MIN_BATCHES, MAX_BATCHES);
    let mut m = (n / b).max(1);
    loop {
        let means = batch_means(xs, m);
        if means.len() < 8 || lag1(&means) <= 2.0 / (means.len() as f64).sqrt() {
            return m;
        }
        if xs.len() / (2 * m) < MIN_BATCHES {
            return m;
        }
        m *= 2;
    }
}

/// The means of consecutive batches of `m` values (a last, incomplete batch left out).
fn batch_means(xs: &[f64], m: usize) -> Vec<f64> {
    xs.chunks_exact(m)
        .map(|c| c.iter().sum::<f64>() / m as f64)
        .collect()
}

/// The mean (0 for none).
pub fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len().max(1) as f64
}

/// Sample variance (n − 1).
pub fn variance(xs: &[f64]) -> f64 {
    let m = mean(xs);
    xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (xs.len().max(2) - 1) as f64
}

/// Lag-1 autocorrelation.
fn lag1(xs: &[f64]) -> f64 {
    let m = mean(xs);
    let den: f64 = xs.iter().map(|x| (x - m).powi(2)).sum();
    if den == 0.0 {
        return 0.0;
    }
    xs.windows(2).map(|w| (w[0] - m) * (w[1] - m)).sum::<f64>() / den
}

/// The interval of a rate measured over equal windows: `per_window[i]` is the rate of window
/// `i`, `value` the run's own figure (its I/Os over its seconds), which the interval is centred
/// on. None with fewer than [`MIN_BATCHES`] batches.
pub fn rate_interval(value: f64, per_window: &[f64], confidence: f64) -> Option<(Estimate, usize)> {
    let m = batch_size(per_window);
    let means = batch_means(per_window, m);
    let b = means.len();
    if b < MIN_BATCHES {
        return None;
    }
    let h = t_two_sided(confidence, b - 1) * (variance(&means) / b as f64).sqrt();
    Some((
        Estimate {
            value,
            lo: Some((value - h).max(0.0)),
            hi: Some(value + h),
        },
        b,
    ))
}

/// The interval of a ratio of totals (CPU seconds per I/O) from per-window numerators and
/// denominators, batched as the denominators' rate is: the ratio's linearised standard error
/// over the batches' residuals. None with fewer than [`MIN_BATCHES`] batches or no
/// denominator.
pub fn ratio_interval(num: &[f64], den: &[f64], confidence: f64) -> Option<Estimate> {
    let n = num.len().min(den.len());
    let m = batch_size(&den[..n]);
    let sums =
        |xs: &[f64]| -> Vec<f64> { xs[..n].chunks_exact(m).map(|c| c.iter().sum()).collect() };
    let (a, d) = (sums(num), sums(den));
    let b = a.len();
    let total_d: f64 = d.iter().sum();
    if b < MIN_BATCHES || total_d <= 0.0 {
        return None;
    }
    let r = a.iter().sum::<f64>() / total_d;
    let ss: f64 = a.iter().zip(&d).map(|(x, y)| (x - r * y).powi(2)).sum();
    let se = (ss / (b * (b - 1)) as f64).sqrt() / (total_d / b as f64);
    let h = t_two_sided(confidence, b - 1) * se;
    Some(Estimate {
        value: r,
        lo: Some((r - h).max(0.0)),
        hi: Some(r + h),
    })
}

/// ln of the binomial probability P(X = k), X ~ Binomial(n, q).
fn ln_binomial_pmf(n: u64, k: u64, q: f64) -> f64 {
    ln_factorial(n) - ln_factorial(k) - ln_factorial(n - k)
        + k as f64 * q.ln()
        + (n - k) as f64 * (1.0 - q).ln()
}

/// ln(n!) (exact sums below 64, Stirling's series above: error below 1e-12).
fn ln_factorial(n: u64) -> f64 {
    if n < 64 {
        return (2..=n).map(|i| (i as f64).ln()).sum();
    }
    let x = n as f64 + 1.0;
    (x - 0.5) * x.ln() - x + 0.5 * (2.0 * std::f64::consts::PI).ln() + 1.0 / (12.0 * x)
        - 1.0 / (360.0 * x.powi(3))
        + 1.0 / (1260.0 * x.powi(5))
}

/// The order statistics that bound the `q` quantile (0–1) of `n` samples with at least
/// `confidence`: ranks `(lo, hi)`, 1-based, such that the `lo`-th and `hi`-th smallest samples
/// hold the true quantile with that probability. A rank of 0 means no lower bound and one past
/// `n` no upper bound: too few samples to bound that side. The shortest such run of ranks,
/// from the binomial distribution itself (exact, not its normal approximation).
pub fn quantile_ranks(n: u64, q: f64, confidence: f64) -> (u64, u64) {
    if n == 0 {
        return (0, 1);
    }
    // X, the samples below the quantile, is Binomial(n, q); x_(l) ≤ ξ < x_(u) when l ≤ X < u.
    let pmf = |k: u64| ln_binomial_pmf(n, k, q).exp();
    let mode = ((n as f64 + 1.0) * q).floor().min(n as f64) as u64;
    let (mut a, mut b) = (mode, mode); // X in [a, b]
    let mut mass = pmf(mode);
    while mass < confidence && (a > 0 || b < n) {
        let left = if a > 0 { pmf(a - 1) } else { -1.0 };
        let right = if b < n { pmf(b + 1) } else { -1.0 };
        if left >= right {
            a -= 1;
            mass += left;
        } else {
            b += 1;
            mass += right;
        }
    }
    // l = a (x_(a) with a = 0 is no bound), u = b + 1 (past n is no bound).
    (a, b + 1)
}

/// The value of the `rank`-th smallest sample (1-based) in histogram bins (value, count) sorted
/// by value; none for rank 0 or past the last sample.
pub fn value_at_rank(bins: &[(u64, u64)], rank: u64) -> Option<u64> {
    if rank == 0 {
        return None;
    }
    let mut seen = 0;
    for &(v, c) in bins {
        seen += c;
        if seen >= rank {
            return Some(v);
        }
    }
    None
}

/// A percentile (`pct` in percent) with its distribution-free interval from histogram bins.
pub fn percentile_interval(bins: &[(u64, u64)], pct: f64, value: u64, confidence: f64) -> Estimate {
    let n: u64 = bins.iter().map(|b| b.1).sum();
    let (l, u) = quantile_ranks(n, pct / 100.0, confidence);
    // The reported value is the histogram's; keep the interval around it (bucketing can put
    // the two a bucket apart).
    let lo = value_at_rank(bins, l).map(|v| v.min(value) as f64);
    let hi = value_at_rank(bins, u).map(|v| v.max(value) as f64);
    Estimate {
        value: value as f64,
        lo,
        hi,
    }
}

/// The mean of paired differences (one per round) with its t interval; None below two rounds.
pub fn paired_interval(diffs: &[f64], confidence: f64) -> Option<Estimate> {
    let r = diffs.len();
    if r < 2 {
        return None;
    }
    let m = mean(diffs);
    let h = t_two_sided(confidence, r - 1) * (variance(diffs) / r as f64).sqrt();
    Some(Estimate {
        value: m,
        lo: Some(m - h),
        hi: Some(m + h),
    })
}

/// The error rate one look of a sequential test may spend so that all looks together spend at
/// most `alpha`: look `k` (1-based) gets `alpha · 6/(π² k²)` (the series sums to `alpha`), so
/// racing may look after every round and still keep its stated confidence.
pub fn alpha_for_look(alpha: f64, look: usize) -> f64 {
    let k = look.max(1) as f64;
    alpha * 6.0 / (std::f64::consts::PI.powi(2) * k * k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_match_the_tables() {
        assert!((normal_quantile(0.975) - 1.959964).abs() < 1e-5);
        assert!((normal_quantile(0.5)).abs() < 1e-12);
        assert!((normal_quantile(0.001) + 3.090232).abs() < 1e-5);
        // t tables: 12.706 (1), 4.303 (2), 3.182 (3), 2.262 (9), 2.042 (30).
        for (df, t) in [(1, 12.706), (2, 4.303), (3, 3.182), (9, 2.262), (30, 2.042)] {
            let got = t_two_sided(0.95, df);
            assert!((got - t).abs() / t < 0.002, "df {df}: {got}");
        }
        assert!((t_two_sided(0.99, 4) - 4.604).abs() / 4.604 < 0.005);
    }

    /// A deterministic generator for the coverage tests (no dependency on the rand crate's
    /// streams).
    struct Lcg(u64);
    impl Lcg {
        fn uniform(&mut self) -> f64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((self.0 >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        }
        fn normal(&mut self) -> f64 {
            normal_quantile(self.uniform())
        }
    }

    /// Correlated windows (AR(1), φ = 0.6): the batch-means interval still holds the true mean
    /// about 95 % of the time, where treating windows as independent would not.
    #[test]
    fn batch_means_cover_the_mean_of_correlated_windows() {
        let mut g = Lcg(7);
        let (trials, mut covered, mut naive_covered) = (2000, 0, 0);
        for _ in 0..trials {
            let mut x = 0.0;
            let xs: Vec<f64> = (0..64)
                .map(|_| {
                    x = 0.6 * x + g.normal();
                    100.0 + x
                })
                .collect();
            let m = mean(&xs);
            let (e, _) = rate_interval(m, &xs, 0.95).unwrap();
            covered += (e.lo.unwrap() <= 100.0 && 100.0 <= e.hi.unwrap()) as usize;
            let h = t_two_sided(0.95, 63) * (variance(&xs) / 64.0).sqrt();
            naive_covered += ((m - h) <= 100.0 && 100.0 <= m + h) as usize;
        }
        let rate = covered as f64 / trials as f64;
        assert!((0.90..=0.99).contains(&rate), "coverage {rate}");
        assert!((naive_covered as f64 / trials as f64) < 0.85);
    }

    #[test]
    fn too_few_windows_give_no_interval() {
        assert!(rate_interval(1.0, &[1.0, 2.0, 3.0], 0.95).is_none());
        assert!(rate_interval(2.0, &[1.0, 2.0, 3.0, 2.0], 0.95).is_some());
    }

    #[test]
    fn ratio_interval_centres_on_the_ratio_of_totals() {
        let den = [100.0, 120.0, 80.0, 100.0, 110.0, 90.0];
        let num = [10.0, 12.5, 7.5, 10.0, 11.0, 9.2];
        let e = ratio_interval(&num, &den, 0.95).unwrap();
        assert!((e.value - 60.2 / 600.0).abs() < 1e-12);
        assert!(e.lo.unwrap() < e.value && e.value < e.hi.unwrap());
        assert!(e.relative_half_width() < 0.05);
    }

    /// The order-statistic interval of a percentile holds the true quantile at least as often
    /// as it says, and has no upper bound when too few samples reach that far.
    #[test]
    fn percentile_ranks_cover_and_know_their_limits() {
        // p99.9 of 500 requests: the upper rank is past the last one.
        let (_, u) = quantile_ranks(500, 0.999, 0.95);
        assert!(u > 500);
        // p99.9 of 3,000: no request above it at all happens 5 % of the time (Poisson(3) at 0),
        // so no upper bound at 95 %; from 10,000 on there is one.
        assert!(quantile_ranks(3000, 0.999, 0.95).1 > 3000);
        let (l, u) = quantile_ranks(10_000, 0.999, 0.95);
        assert!(l < 9990 && u > 9990 && u <= 10_000, "{l} {u}");
        // Coverage, by simulation: uniform samples, the true median is 0.5.
        let mut g = Lcg(3);
        let (trials, mut covered) = (2000, 0);
        for _ in 0..trials {
            let mut xs: Vec<f64> = (0..200).map(|_| g.uniform()).collect();
            xs.sort_by(f64::total_cmp);
            let (l, u) = quantile_ranks(200, 0.9, 0.95);
            covered += (xs[l as usize - 1] <= 0.9 && 0.9 <= xs[u as usize - 1]) as usize;
        }
        assert!(covered as f64 / trials as f64 >= 0.94, "{covered}");
        let bins = [(10, 50), (20, 40), (30, 9), (40, 1)];
        assert_eq!(value_at_rank(&bins, 90), Some(20));
        assert_eq!(value_at_rank(&bins, 91), Some(30));
        assert_eq!(value_at_rank(&bins, 101), None);
        let e = percentile_interval(&bins, 99.9, 40, 0.95);
        assert_eq!(e.hi, None);
    }

    #[test]
    fn paired_rounds_and_spending() {
        assert!(paired_interval(&[0.1], 0.95).is_none());
        let e = paired_interval(&[0.10, 0.12, 0.08, 0.11], 0.95).unwrap();
        assert!(e.lo.unwrap() > 0.05 && e.hi.unwrap() < 0.15);
        let total: f64 = (1..100_000).map(|k| alpha_for_look(0.05, k)).sum();
        assert!(total < 0.05 && total > 0.0499);
        let a = Estimate {
            value: 1.0,
            lo: Some(0.9),
            hi: Some(1.1),
        };
        let b = Estimate {
            value: 1.3,
            lo: Some(1.15),
            hi: None,
        };
        assert!(!a.overlaps(&b) && !b.overlaps(&a));
        assert!(a.overlaps(&Estimate {
            value: 1.2,
            lo: Some(1.05),
            hi: None
        }));
    }
}
