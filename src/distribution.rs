//! fio's `random_distribution` as a validated value: which blocks a random read picks (uniform,
//! zipf, pareto, normal, zoned), parsed from and written as fio's words, and the hot set each
//! makes — the share of reads the hottest blocks take — for the run's description and for
//! anyone who wants to predict a cache's hit ratio.
//!
//! The hot-set model is the distribution itself, not fio's sampler of it: for zipf the exact
//! probabilities 1/k^θ / ζ(n, θ) (fio draws with Gray et al.'s approximation, which puts within
//! about a point of the same share on the hottest 0.1 %…50 %), for pareto the closed form of
//! fio's power law, for normal the bell fio's sum of twelve draws makes, for zoned the zones
//! themselves. A cache of C blocks that holds the C hottest blocks hits `hot_share(n, C)` of the
//! reads (the ideal static cache; an LRU cache hits somewhat less).

use crate::error::{Error, Result};
use std::fmt;
use std::str::FromStr;

/// One zone of `zoned:`: `access_pct` % of the reads land, uniformly, in the next `range_pct` %
/// of the blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Zone {
    pub access_pct: u32,
    pub range_pct: u32,
}

/// How random reads pick their blocks (fio's `random_distribution`); `Uniform` is fio's
/// `random`, the default. Only `rw=randread` takes another.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum RandomDistribution {
    #[default]
    Uniform,
    /// Zipf with exponent θ (θ > 0, θ ≠ 1): block of rank k is read ∝ 1/k^θ.
    Zipf { theta: f64 },
    /// Pareto with h in (0, 1): the hottest h of the blocks take 1 − h of the reads (0.2: 80/20).
    Pareto { h: f64 },
    /// fio's normal (`gauss`): a bell around the range's middle, scattered over the file; the
    /// deviation in % of the blocks (0 ≤ dev < 100) widens fio's bell by a uniform spread.
    Normal { dev_pct: f64 },
    /// Zones in file order, each taking a share of the reads over a share of the blocks; both
    /// shares sum to 100.
    Zoned(Vec<Zone>),
}

/// What to type, for every refusal.
const FORMS: &str = "give random, zipf:θ (e.g. zipf:1.2), pareto:h (e.g. pareto:0.2), normal:dev% (e.g. normal:5) or zoned:ACCESS/RANGE:… (e.g. zoned:60/10:30/20:8/30:2/40)";

fn bad(s: &str, why: &str) -> Error {
    Error::InvalidArgument(format!("random_distribution {s}: {why}"))
}

impl RandomDistribution {
    /// Whether this is fio's default, uniform random.
    pub fn is_uniform(&self) -> bool {
        *self == RandomDistribution::Uniform
    }

    /// Share of the reads (0–1) that land on the `hot` hottest of `blocks` blocks.
    pub fn hot_share(&self, blocks: u64, hot: u64) -> f64 {
        if blocks == 0 {
            return 0.0;
        }
        let hot = hot.min(blocks);
        let n = blocks as f64;
        let share = match self {
            RandomDistribution::Uniform => hot as f64 / n,
            RandomDistribution::Zipf { theta } => zeta(hot, *theta) / zeta(blocks, *theta),
            RandomDistribution::Pareto { h } => {
                // fio: rank = (n − 1)·u^p, so rank < k when u < (k / (n − 1))^(1/p).
                let p = h.ln() / (1.0 - h).ln();
                (hot as f64 / (n - 1.0).max(1.0)).powf(1.0 / p)
            }
            RandomDistribution::Normal { dev_pct } => {
                let sd = normal_sd(blocks, *dev_pct);
                erf(hot as f64 / 2.0 / (sd * std::f64::consts::SQRT_2))
            }
            RandomDistribution::Zoned(zones) => zoned_share(zones, hot as f64 / n),
        };
        share.clamp(0.0, 1.0)
    }

    /// The share of reads that hit a least-recently-used cache of `cached` of the `blocks`
    /// blocks, by Che's approximation (each block stays for one characteristic time T, with
    /// Σ (1 − e^(−p_i·T)) = cached; the hit ratio is Σ p_i·(1 − e^(−p_i·T))): the model of a
    /// page cache, which keeps recently read pages rather than the hottest. Uniform gives
    /// cached/blocks; a skew gives less than [`Self::hot_share`], the ideal cache's.
    pub fn lru_hit_ratio(&self, blocks: u64, cached: u64) -> f64 {
        if blocks == 0 || cached == 0 {
            return 0.0;
        }
        if cached >= blocks {
            return 1.0;
        }
        let p = self.rank_probabilities(blocks);
        let held = |t: f64| p.iter().map(|&q| 1.0 - (-q * t).exp()).sum::<f64>();
        // T between 1 and 2^80 reads: bisect on its logarithm.
        let (mut lo, mut hi) = (0.0f64, 80.0 * std::f64::consts::LN_2);
        for _ in 0..100 {
            let mid = (lo + hi) / 2.0;
            if held(mid.exp()) < cached as f64 {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let t = ((lo + hi) / 2.0).exp();
        p.iter()
            .map(|&q| q * (1.0 - (-q * t).exp()))
            .sum::<f64>()
            .clamp(0.0, 1.0)
    }

    /// Each block's share of the reads, hottest first.
    fn rank_probabilities(&self, blocks: u64) -> Vec<f64> {
        match self {
            RandomDistribution::Zipf { theta } => {
                let z = zeta(blocks, *theta);
                (1..=blocks).map(|i| (i as f64).powf(-theta) / z).collect()
            }
            _ => {
                let mut last = 0.0;
                (1..=blocks)
                    .map(|k| {
                        let c = self.hot_share(blocks, k);
                        let q = (c - last).max(0.0);
                        last = c;
                        q
                    })
                    .collect()
            }
        }
    }

    /// The fewest of `blocks` blocks that take at least `share` of the reads (the hottest).
    pub fn hot_blocks(&self, blocks: u64, share: f64) -> u64 {
        let (mut lo, mut hi) = (0u64, blocks);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.hot_share(blocks, mid) >= share {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        lo
    }

    /// The hot set in words: `zipf:1.2 over 262,144 blocks: 90 % of reads hit 1.2 % of them`.
    pub fn hot_set(&self, blocks: u64) -> String {
        let k = self.hot_blocks(blocks, 0.9);
        let pct = 100.0 * k as f64 / blocks.max(1) as f64;
        format!(
            "{self} over {} blocks: 90 % of reads hit {} % of them",
            crate::units::grouped(blocks),
            crate::units::sig(pct)
        )
    }
}

/// Σ_{i=1..k} i^−θ: exact over the first 10,000 terms, the midpoint integral beyond (its error
/// there is below 10⁻⁹ of the sum).
pub fn zeta(k: u64, theta: f64) -> f64 {
    const EXACT: u64 = 10_000;
    let m = k.min(EXACT);
    let mut s: f64 = (1..=m).map(|i| (i as f64).powf(-theta)).sum();
    if k > m {
        let f = |x: f64| x.powf(1.0 - theta) / (1.0 - theta);
        s += f(k as f64 + 0.5) - f(m as f64 + 0.5);
    }
    s
}

/// The standard deviation, in blocks, of fio's normal: the mean of twelve uniform draws over the
/// range (n/12) plus a uniform spread `dev_pct` % of the blocks wide.
pub fn normal_sd(blocks: u64, dev_pct: f64) -> f64 {
    let n = blocks as f64;
    let spread = ((n * dev_pct) / 100.0).ceil().min((blocks / 2) as f64);
    (n * n / 144.0 + spread * spread / 12.0).sqrt()
}

/// The error function (Abramowitz and Stegun 7.1.26, error below 1.5·10⁻⁷).
fn erf(x: f64) -> f64 {
    let t = 1.0 / (1.0 + 0.327_591_1 * x.abs());
    let y = 1.0
        - (((((1.061_405_429 * t - 1.453_152_027) * t) + 1.421_413_741) * t - 0.284_496_736) * t
            + 0.254_829_592)
            * t
            * (-x * x).exp();
    y.copysign(x)
}

/// Share of the reads in the hottest `frac` of the blocks: zones densest first.
fn zoned_share(zones: &[Zone], frac: f64) -> f64 {
    let mut z: Vec<Zone> = zones.iter().copied().filter(|z| z.range_pct > 0).collect();
    z.sort_by(|a, b| {
        let (da, db) = (
            a.access_pct as f64 / a.range_pct as f64,
            b.access_pct as f64 / b.range_pct as f64,
        );
        db.total_cmp(&da)
    });
    let (mut left, mut share) = (frac * 100.0, 0.0);
    for z in z {
        let take = left.min(z.range_pct as f64);
        share += z.access_pct as f64 * take / z.range_pct as f64;
        left -= take;
        if left <= 0.0 {
            break;
        }
    }
    share / 100.0
}

/// A number of fio's, or the refusal in the words given.
fn number(s: &str, v: &str) -> Result<f64> {
    v.parse::<f64>()
        .ok()
        .filter(|x| x.is_finite())
        .ok_or_else(|| bad(s, &format!("'{v}' is not a number; {FORMS}")))
}

fn zones(s: &str, spec: &str) -> Result<Vec<Zone>> {
    let mut out = Vec::new();
    for part in spec.split(':') {
        let pct = |v: &str| {
            v.trim_end_matches('%')
                .parse::<u32>()
                .ok()
                .filter(|&p| p <= 100)
                .ok_or_else(|| {
                    bad(
                        s,
                        &format!("zone '{part}': give ACCESS/RANGE in whole percent, e.g. 60/10"),
                    )
                })
        };
        let (a, r) = part.split_once('/').ok_or_else(|| {
            bad(
                s,
                &format!("zone '{part}': give ACCESS/RANGE in percent, e.g. 60/10"),
            )
        })?;
        let zone = Zone {
            access_pct: pct(a)?,
            range_pct: pct(r)?,
        };
        if zone.range_pct == 0 && zone.access_pct > 0 {
            return Err(bad(s, &format!("zone '{part}' has reads but no blocks")));
        }
        out.push(zone);
    }
    for (what, sum) in [
        ("reads", out.iter().map(|z| z.access_pct).sum::<u32>()),
        ("ranges", out.iter().map(|z| z.range_pct).sum::<u32>()),
    ] {
        if sum != 100 {
            return Err(bad(
                s,
                &format!("the zones' {what} add up to {sum} %, not 100 %"),
            ));
        }
    }
    Ok(out)
}

impl FromStr for RandomDistribution {
    type Err = Error;

    /// fio's words: `random`, `zipf[:θ]` (1.1 alone, as fio), `pareto[:h]` (0.2), `normal[:dev]`
    /// or `gauss[:dev]` (0), `zoned:A/R:A/R…`.
    fn from_str(s: &str) -> Result<Self> {
        let t = s.trim();
        let (kind, value) = match t.split_once(':') {
            Some((k, v)) => (k, Some(v)),
            None => (t, None),
        };
        let one = |default: f64| -> Result<f64> {
            match value {
                None => Ok(default),
                Some(v) if v.contains(':') => Err(bad(
                    s,
                    "readlab takes no center (fio's third field); drop it",
                )),
                Some(v) => number(s, v),
            }
        };
        Ok(match kind {
            "random" if value.is_none() => RandomDistribution::Uniform,
            "zipf" => {
                let theta = one(1.1)?;
                if theta <= 0.0 || theta == 1.0 {
                    return Err(bad(s, "zipf's θ must be above 0 and not 1, e.g. zipf:1.2"));
                }
                RandomDistribution::Zipf { theta }
            }
            "pareto" => {
                let h = one(0.2)?;
                if !(h > 0.0 && h < 1.0) {
                    return Err(bad(
                        s,
                        "pareto's h must be between 0 and 1, e.g. pareto:0.2",
                    ));
                }
                RandomDistribution::Pareto { h }
            }
            "normal" | "gauss" => {
                let dev_pct = one(0.0)?;
                if !(0.0..100.0).contains(&dev_pct) {
                    return Err(bad(
                        s,
                        "normal's deviation is 0 ≤ dev < 100 (% of the blocks)",
                    ));
                }
                RandomDistribution::Normal { dev_pct }
            }
            "zoned" => match value {
                Some(v) if !v.is_empty() => RandomDistribution::Zoned(zones(s, v)?),
                _ => {
                    return Err(bad(
                        s,
                        "zoned needs its zones, e.g. zoned:60/10:30/20:8/30:2/40",
                    ));
                }
            },
            "zoned_abs" | "sequence" => {
                return Err(bad(
                    s,
                    &format!("readlab does not have fio's {kind}; {FORMS}"),
                ));
            }
            _ => return Err(bad(s, FORMS)),
        })
    }
}

impl fmt::Display for RandomDistribution {
    /// fio's words, as a job file takes them: `random`, `zipf:1.2`, `zoned:60/10:40/90`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RandomDistribution::Uniform => write!(f, "random"),
            RandomDistribution::Zipf { theta } => write!(f, "zipf:{theta}"),
            RandomDistribution::Pareto { h } => write!(f, "pareto:{h}"),
            RandomDistribution::Normal { dev_pct } => write!(f, "normal:{dev_pct}"),
            RandomDistribution::Zoned(zones) => {
                write!(f, "zoned")?;
                for z in zones {
                    write!(f, ":{}/{}", z.access_pct, z.range_pct)?;
                }
                Ok(())
            }
        }
    }
}

impl serde::Serialize for RandomDistribution {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for RandomDistribution {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> RandomDistribution {
        s.parse().unwrap()
    }

    fn err(s: &str) -> String {
        s.parse::<RandomDistribution>().unwrap_err().to_string()
    }

    #[test]
    fn fio_words_read_and_write_back() {
        for s in [
            "random",
            "zipf:1.2",
            "zipf:0.8",
            "pareto:0.2",
            "normal:5",
            "zoned:60/10:30/20:8/30:2/40",
        ] {
            assert_eq!(p(s).to_string(), s);
        }
        assert_eq!(p("gauss:5"), p("normal:5"));
        assert_eq!(p("zipf"), RandomDistribution::Zipf { theta: 1.1 });
        assert_eq!(p("pareto"), RandomDistribution::Pareto { h: 0.2 });
        assert!(p("random").is_uniform());
    }

    #[test]
    fn fio_limits_are_refused_with_what_to_type() {
        assert!(err("zipf:1").contains("not 1"), "{}", err("zipf:1"));
        assert!(err("zipf:0").contains("above 0"));
        assert!(err("pareto:1").contains("between 0 and 1"));
        assert!(err("normal:100").contains("dev < 100"));
        assert!(err("zoned:60/10:30/20").contains("add up to 90 %"));
        assert!(err("zoned:50/0:50/100").contains("no blocks"));
        assert!(err("zipf:x").contains("not a number"));
        assert!(err("zipf:1.2:0.5").contains("center"));
        assert!(err("lognormal").contains("zipf:θ"));
        assert!(err("zoned_abs:1/10M").contains("zoned_abs"));
    }

    #[test]
    fn hot_shares_follow_the_distribution() {
        let n = 1 << 18;
        assert_eq!(RandomDistribution::Uniform.hot_share(n, n / 4), 0.25);
        // Pareto 0.2 is the 80/20 rule.
        let pareto = p("pareto:0.2").hot_share(n, n / 5);
        assert!((pareto - 0.8).abs() < 1e-3, "{pareto}");
        // Zoned: the densest zone first (60 % on 10 %), then 30 % on 20 %.
        let z = p("zoned:60/10:30/20:8/30:2/40");
        assert!((z.hot_share(100, 10) - 0.6).abs() < 1e-9);
        assert!((z.hot_share(100, 20) - 0.75).abs() < 1e-9);
        // zipf: the sum's tail integral agrees with the exact sum.
        let exact: f64 = (1..=50_000u64).map(|i| (i as f64).powf(-1.2)).sum();
        assert!((zeta(50_000, 1.2) / exact - 1.0).abs() < 1e-9);
        let zipf = p("zipf:1.2");
        assert!(zipf.hot_share(n, n / 100) > 0.85 && zipf.hot_share(n, n / 100) < 0.9);
        // fio's normal: ±1 sd holds 68 %.
        let sd = normal_sd(n, 0.0);
        let one_sd = p("normal:0").hot_share(n, (2.0 * sd) as u64);
        assert!((one_sd - 0.6827).abs() < 1e-3, "{one_sd}");
    }

    #[test]
    fn an_lru_cache_holds_less_than_the_hottest_blocks() {
        let n = 32_768;
        let uniform = p("random").lru_hit_ratio(n, n / 2);
        assert!((uniform - 0.5).abs() < 1e-6, "{uniform}");
        let zipf = p("zipf:1.2");
        let (lru, ideal) = (zipf.lru_hit_ratio(n, n / 2), zipf.hot_share(n, n / 2));
        assert!(lru < ideal && lru > 0.9, "lru {lru}, ideal {ideal}");
        assert_eq!(zipf.lru_hit_ratio(n, 0), 0.0);
        assert_eq!(zipf.lru_hit_ratio(n, n), 1.0);
        let more = zipf.lru_hit_ratio(n, n / 4);
        assert!(more < lru, "a smaller cache hits less: {more} vs {lru}");
    }

    #[test]
    fn the_hot_set_in_words() {
        assert_eq!(
            p("pareto:0.2").hot_set(262_144),
            format!(
                "pareto:0.2 over 262,144 blocks: 90 % of reads hit {} % of them",
                crate::units::sig(100.0 * 0.9f64.powf(0.2f64.ln() / 0.8f64.ln()))
            )
        );
        let uniform = RandomDistribution::Uniform.hot_set(1000);
        assert!(
            uniform.ends_with("90 % of reads hit 90 % of them"),
            "{uniform}"
        );
    }
}
