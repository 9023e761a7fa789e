//! The block a random read picks under a [`RandomDistribution`], drawn as fio draws it (lib/zipf.c,
//! lib/gauss.c, io_u.c's zoned offsets): set up once per run before the start (zipf's ζ sum,
//! capped at fio's 10 M terms, costs up to a tenth of a second), then a handful of float
//! operations per I/O. Like fio, ranks are scattered over the range so the hot blocks are spread
//! across the file: fio multiplies by the golden ratio modulo 2⁶⁴; readlab uses rank · m + a
//! modulo n with m near n / φ and prime to n, which is one-to-one (no two ranks on one block).
//! Unlike fio, the placement depends on the range alone, not on the seed: runs with other seeds
//! (`--repeat`'s seed, seed + 1, …) read other sequences of the same hot blocks, so they measure
//! the same workload and a cache warmed by one serves the next.

use crate::distribution::RandomDistribution;
use rand::RngExt;
use rand::rngs::Xoshiro256PlusPlus;

/// fio's cap on the terms of zipf's ζ sum (lib/zipf.c).
const ZETA_TERMS: u64 = 10_000_000;

/// A rank's block: `(rank · mult + add) mod n`, one-to-one since `mult` is prime to `n`.
#[derive(Debug, Clone, Copy)]
struct Scatter {
    n: u64,
    mult: u64,
    add: u64,
}

impl Scatter {
    fn new(n: u64, add: u64) -> Scatter {
        let n = n.max(1);
        let mut mult = ((n as f64) * 0.618_033_988_749_895) as u64 | 1;
        while gcd(mult, n) != 1 {
            mult += 1;
        }
        Scatter {
            n,
            mult: mult % n,
            add: add % n,
        }
    }

    #[inline]
    fn block(&self, rank: u64) -> u64 {
        ((rank as u128 * self.mult as u128 + self.add as u128) % self.n as u128) as u64
    }
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// What each draw needs, computed once.
#[derive(Debug, Clone)]
enum Kind {
    Uniform,
    /// Gray et al.'s zipf, as fio: ζ(n, θ) over at most 10 M terms, and the formula's constants.
    Zipf {
        theta_half: f64,
        zetan: f64,
        alpha: f64,
        eta: f64,
    },
    /// rank = (n − 1) · u^pow.
    Pareto {
        pow: f64,
    },
    /// The mean of 12 draws over 0..=n, plus a uniform spread `spread` wide.
    Normal {
        spread: u64,
    },
    /// Per percent of the reads (1–100), the zone's first block and its length in blocks.
    Zoned {
        by_pct: Vec<(u64, u64)>,
    },
}

/// The block picker of one run's random reads over `n` blocks; each worker clones it and draws
/// with its own generator.
#[derive(Debug, Clone)]
pub(crate) struct Sampler {
    n: u64,
    kind: Kind,
    scatter: Scatter,
}

impl Sampler {
    /// The picker of `dist` over `blocks` blocks.
    pub(crate) fn new(dist: &RandomDistribution, blocks: u64) -> Sampler {
        let n = blocks.max(1);
        let nf = n as f64;
        let kind = match dist {
            RandomDistribution::Uniform => Kind::Uniform,
            RandomDistribution::Zipf { theta } => {
                let theta = *theta;
                let zetan: f64 = (1..=n.min(ZETA_TERMS))
                    .map(|i| (1.0 / i as f64).powf(theta))
                    .sum();
                let zeta2 = 1.0 + 0.5f64.powf(theta);
                Kind::Zipf {
                    theta_half: 0.5f64.powf(theta),
                    zetan,
                    alpha: 1.0 / (1.0 - theta),
                    eta: (1.0 - (2.0 / nf).powf(1.0 - theta)) / (1.0 - zeta2 / zetan),
                }
            }
            RandomDistribution::Pareto { h } => Kind::Pareto {
                pow: h.ln() / (1.0 - h).ln(),
            },
            RandomDistribution::Normal { dev_pct } => Kind::Normal {
                spread: ((nf * dev_pct / 100.0).ceil() as u64).min(n / 2),
            },
            RandomDistribution::Zoned(zones) => {
                let mut by_pct = Vec::with_capacity(100);
                let mut range_before = 0u64;
                for z in zones {
                    let start = (range_before as u128 * n as u128 / 100) as u64;
                    let len = (n as u128 * z.range_pct as u128 / 100) as u64;
                    by_pct.extend((0..z.access_pct).map(|_| (start, len.max(1))));
                    range_before += z.range_pct as u64;
                }
                Kind::Zoned { by_pct }
            }
        };
        Sampler {
            n,
            kind,
            scatter: Scatter::new(n, n / 3),
        }
    }

    /// The next block, 0 ≤ block < n.
    #[inline]
    pub(crate) fn next(&self, rng: &mut Xoshiro256PlusPlus) -> u64 {
        let n = self.n;
        match &self.kind {
            Kind::Uniform => rng.random_range(0..n),
            Kind::Zipf {
                theta_half,
                zetan,
                alpha,
                eta,
            } => {
                let u: f64 = rng.random();
                let z = u * zetan;
                let rank = if z < 1.0 {
                    0
                } else if z < 1.0 + theta_half {
                    1
                } else {
                    (n as f64 * (eta * u - eta + 1.0).powf(*alpha)) as u64
                };
                self.scatter.block(rank.min(n - 1))
            }
            Kind::Pareto { pow } => {
                let u: f64 = rng.random();
                let rank = ((n - 1) as f64 * u.powf(*pow)) as u64;
                self.scatter.block(rank.min(n - 1))
            }
            Kind::Normal { spread } => {
                let sum: u64 = (0..12).map(|_| rng.random_range(0..=n)).sum();
                let mut at = sum.div_ceil(12) as i64;
                if *spread > 0 {
                    let mut dev = rng.random_range(0..*spread) as i64 - (*spread / 2) as i64;
                    while dev != 0 && (at + dev < 0 || at + dev >= n as i64) {
                        dev /= 2;
                    }
                    at += dev;
                }
                self.scatter.block((at as u64).min(n - 1))
            }
            Kind::Zoned { by_pct } => {
                let (start, len) = by_pct[rng.random_range(0..by_pct.len())];
                (start + rng.random_range(0..len)).min(n - 1)
            }
        }
    }

    /// Each block's rank in the distribution (0 = hottest), for checking a sample's shares
    /// against the model: the inverse of the scatter (zoned blocks stay in file order, ranked by
    /// their zone's density).
    #[cfg(test)]
    pub(crate) fn rank_of(&self, block: u64) -> u64 {
        match &self.kind {
            Kind::Zoned { .. } | Kind::Uniform => block,
            _ => {
                let s = self.scatter;
                // Solve rank · mult ≡ block − add (mod n).
                let inv = mod_inverse(s.mult, s.n);
                let d = (block + s.n - s.add) % s.n;
                ((d as u128 * inv as u128) % s.n as u128) as u64
            }
        }
    }
}

#[cfg(test)]
fn mod_inverse(a: u64, n: u64) -> u64 {
    let (mut t, mut new_t, mut r, mut new_r) = (0i128, 1i128, n as i128, a as i128);
    while new_r != 0 {
        let q = r / new_r;
        (t, new_t) = (new_t, t - q * new_t);
        (r, new_r) = (new_r, r - q * new_r);
    }
    t.rem_euclid(n as i128) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn draws(dist: &str, n: u64, count: usize, seed: u64) -> (Sampler, Vec<u64>) {
        let s = Sampler::new(&dist.parse().unwrap(), n);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let v = (0..count).map(|_| s.next(&mut rng)).collect();
        (s, v)
    }

    /// The share of draws whose rank is below `k`.
    fn share_below(s: &Sampler, v: &[u64], k: u64) -> f64 {
        v.iter().filter(|&&b| s.rank_of(b) < k).count() as f64 / v.len() as f64
    }

    #[test]
    fn zipf_and_pareto_shares_match_the_model() {
        let n = 1 << 18;
        // 200,000 draws: a share's standard error is below 0.0012; fio's zipf approximation is
        // within 0.011 of the exact share on the hottest 0.1 %; so the margin is 0.02.
        for dist in ["zipf:1.2", "zipf:0.8", "pareto:0.2", "pareto:0.1"] {
            let (s, v) = draws(dist, n, 200_000, 7);
            let model: RandomDistribution = dist.parse().unwrap();
            for frac in [0.001, 0.01, 0.1, 0.5] {
                let k = (n as f64 * frac) as u64;
                let (got, want) = (share_below(&s, &v, k), model.hot_share(n, k));
                assert!(
                    (got - want).abs() < 0.02,
                    "{dist}: hottest {frac}: {got} drawn, {want} modelled"
                );
            }
            assert!(v.iter().all(|&b| b < n));
        }
    }

    #[test]
    fn zoned_shares_are_the_zones() {
        let n = 1000;
        let (_, v) = draws("zoned:60/10:30/20:8/30:2/40", n, 100_000, 3);
        let in_zone = |lo: u64, hi: u64| {
            v.iter().filter(|&&b| (lo..hi).contains(&b)).count() as f64 / v.len() as f64
        };
        for (lo, hi, want) in [
            (0, 100, 0.6),
            (100, 300, 0.3),
            (300, 600, 0.08),
            (600, 1000, 0.02),
        ] {
            let got = in_zone(lo, hi);
            assert!((got - want).abs() < 0.01, "[{lo}, {hi}): {got} ≠ {want}");
        }
    }

    #[test]
    fn normal_follows_fios_bell() {
        let n = 1 << 16;
        let (s, v) = draws("normal:5", n, 100_000, 5);
        // Within one standard deviation of the middle: 68 %.
        let sd = crate::distribution::normal_sd(n, 5.0);
        let mid = n as f64 / 2.0;
        let within = v
            .iter()
            .filter(|&&b| (s.rank_of(b) as f64 - mid).abs() <= sd)
            .count() as f64
            / v.len() as f64;
        assert!((within - 0.6827).abs() < 0.02, "{within}");
    }

    #[test]
    fn the_scatter_is_one_to_one_and_the_seed_repeats() {
        for n in [1, 2, 10, 1000, 1 << 16, 999_983] {
            let s = Scatter::new(n, 12345);
            let mut seen = vec![false; n as usize];
            for r in 0..n {
                let b = s.block(r) as usize;
                assert!(!seen[b], "n={n}: two ranks on block {b}");
                seen[b] = true;
            }
        }
        assert_eq!(
            draws("zipf:1.2", 5000, 100, 9).1,
            draws("zipf:1.2", 5000, 100, 9).1
        );
        assert_ne!(
            draws("zipf:1.2", 5000, 100, 9).1,
            draws("zipf:1.2", 5000, 100, 10).1
        );
    }
}
