//! fio's `bssplit` as a validated value: a run whose reads take several block sizes, each its
//! share of the requests (`4k/60:64k/40`), parsed from and written as fio's words. Every request
//! picks its size from the shares; offsets stay aligned to the smallest size (fio's default
//! `blockalign`), which is the run's `bs`; a request that would run past the end of the range
//! is moved back to end there. A run keeps figures per size beside its overall ones.

use crate::error::{Error, Result};
use std::fmt;
use std::str::FromStr;

/// One size of a mix and its share of the requests, in percent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SizeShare {
    pub bs: u64,
    pub percent: u32,
}

/// The block sizes of a run's requests with their shares; empty: every request is `bs`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BsSplit(Vec<SizeShare>);

/// fio's limit on a split's sizes (`BSSPLIT_MAX`).
const MAX_SIZES: usize = 64;

fn bad(s: &str, why: &str) -> Error {
    Error::InvalidArgument(format!("bssplit {s}: {why}"))
}

impl BsSplit {
    /// One size for every request (no mix).
    pub fn is_single(&self) -> bool {
        self.0.is_empty()
    }

    /// The sizes with their shares, in the order given (shares of 0 % kept: fio skips them).
    pub fn shares(&self) -> &[SizeShare] {
        &self.0
    }

    /// The smallest size: the alignment of every offset, the run's `bs`.
    pub fn min(&self) -> Option<u64> {
        self.0.iter().filter(|s| s.percent > 0).map(|s| s.bs).min()
    }

    /// The largest size: what one request's buffer must hold.
    pub fn max(&self) -> Option<u64> {
        self.0.iter().filter(|s| s.percent > 0).map(|s| s.bs).max()
    }

    /// The size of a request for a uniform draw `u` in [0, 1): the index into
    /// [`shares`](BsSplit::shares) whose cumulative share first passes it.
    pub fn pick(&self, u: f64) -> usize {
        let target = u * 100.0;
        let mut cum = 0.0;
        let mut last = 0;
        for (i, s) in self.0.iter().enumerate() {
            if s.percent == 0 {
                continue;
            }
            cum += s.percent as f64;
            last = i;
            if target < cum {
                return i;
            }
        }
        last
    }

    /// The mix in words for a workload's description: `4K 60 % + 64K 40 %`.
    pub fn words(&self) -> String {
        self.0
            .iter()
            .filter(|s| s.percent > 0)
            .map(|s| format!("{} {} %", crate::size::format_size(s.bs), s.percent))
            .collect::<Vec<_>>()
            .join(" + ")
    }
}

/// A size in fio's words: `4k`, `64k`, `1m`, `1536`.
fn size_words(b: u64) -> String {
    if b >= 1 << 20 && b.is_multiple_of(1 << 20) {
        format!("{}m", b >> 20)
    } else if b >= 1 << 10 && b.is_multiple_of(1 << 10) {
        format!("{}k", b >> 10)
    } else {
        b.to_string()
    }
}

impl FromStr for BsSplit {
    type Err = Error;

    /// fio's words: `SIZE/PERCENT:SIZE/PERCENT…` (the read part, before any `,`); sizes
    /// without a percentage share what the others leave, equally, as fio does; the shares must
    /// then add up to 100. One size alone (`4k/100`, `4k`) is no mix.
    fn from_str(s: &str) -> Result<Self> {
        let read = s.split(',').next().unwrap_or(s).trim();
        let entries: Vec<&str> = read.split(':').map(str::trim).collect();
        if read.is_empty() || entries.iter().any(|e| e.is_empty()) {
            return Err(bad(s, "give SIZE/PERCENT entries, e.g. 4k/60:64k/40"));
        }
        if entries.len() > MAX_SIZES {
            return Err(bad(s, &format!("at most {MAX_SIZES} sizes, as fio allows")));
        }
        let mut out: Vec<(u64, Option<u32>)> = Vec::new();
        for e in &entries {
            let (size, pct) = match e.split_once('/') {
                Some((a, b)) => (a.trim(), Some(b.trim())),
                None => (*e, None),
            };
            let bs = crate::size::parse_size(size).map_err(|e| bad(s, &e.to_string()))?;
            if !crate::size::BLOCK_SIZES.contains(&bs) {
                return Err(bad(s, &format!("{size} is outside 512 B … 64 MiB")));
            }
            let pct = match pct {
                None | Some("") => None,
                Some(p) => Some(
                    p.parse::<u32>()
                        .ok()
                        .filter(|&p| p <= 100)
                        .ok_or_else(|| bad(s, &format!("{p}: a share is a whole percent 0…100")))?,
                ),
            };
            out.push((bs, pct));
        }
        let given: u32 = out.iter().filter_map(|e| e.1).sum();
        let missing = out.iter().filter(|e| e.1.is_none()).count() as u32;
        if given > 100 || (missing == 0 && given != 100) {
            return Err(bad(
                s,
                &format!("the shares add up to {given} %; make them 100"),
            ));
        }
        // What the given shares leave, equally among the others; the rounding's remainder to
        // the first of them, so the shares always add up to 100.
        let left = 100 - given;
        let mut extra = if missing > 0 { left % missing } else { 0 };
        let shares: Vec<SizeShare> = out
            .into_iter()
            .map(|(bs, p)| SizeShare {
                bs,
                percent: p.unwrap_or_else(|| left / missing + std::mem::take(&mut extra)),
            })
            .collect();
        let split = BsSplit(shares);
        Ok(if split.min() == split.max() {
            BsSplit::default()
        } else {
            split
        })
    }
}

impl BsSplit {
    /// The one size of a split that is no mix (`4k/100`): what `bs` becomes.
    pub fn one_size(s: &str) -> Option<u64> {
        let read = s.split(',').next().unwrap_or(s);
        let first = read.split(':').next()?.split('/').next()?.trim();
        crate::size::parse_size(first).ok()
    }
}

impl fmt::Display for BsSplit {
    /// fio's words, as a job file takes them: `4k/60:64k/40`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self
            .0
            .iter()
            .map(|s| format!("{}/{}", size_words(s.bs), s.percent))
            .collect();
        write!(f, "{}", parts.join(":"))
    }
}

impl serde::Serialize for BsSplit {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for BsSplit {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fio_words_both_ways() {
        let b: BsSplit = "4k/60:64k/40".parse().unwrap();
        assert_eq!(b.shares().len(), 2);
        assert_eq!((b.min(), b.max()), (Some(4096), Some(65536)));
        assert_eq!(b.to_string(), "4k/60:64k/40");
        assert_eq!(b.words(), "4K 60 % + 64K 40 %");
        // The write part after the comma is not the reads'.
        let b: BsSplit = "4k/50:1m/50,128k/100".parse().unwrap();
        assert_eq!(b.to_string(), "4k/50:1m/50");
    }

    #[test]
    fn missing_shares_take_what_is_left_as_fio_does() {
        let b: BsSplit = "4k/40:8k/:16k".parse().unwrap();
        let p: Vec<u32> = b.shares().iter().map(|s| s.percent).collect();
        assert_eq!(p, vec![40, 30, 30]);
        let b: BsSplit = "4k:8k:16k".parse().unwrap();
        let p: Vec<u32> = b.shares().iter().map(|s| s.percent).collect();
        assert_eq!(p, vec![34, 33, 33], "the remainder to the first");
    }

    #[test]
    fn one_size_is_no_mix() {
        assert!("4k/100".parse::<BsSplit>().unwrap().is_single());
        assert!("4k/50:4k/50".parse::<BsSplit>().unwrap().is_single());
        assert!("4k/100:64k/0".parse::<BsSplit>().unwrap().is_single());
        assert_eq!(BsSplit::one_size("16k/100"), Some(16384));
    }

    #[test]
    fn refusals_say_what_to_type() {
        for s in [
            "",
            "4k/60:64k/60",
            "4k/60:64k/30",
            "4k/x:8k/",
            "3/50:4k/50",
            "4k/50::8k",
        ] {
            let e = s.parse::<BsSplit>().unwrap_err().to_string();
            assert!(e.starts_with("bssplit "), "{s}: {e}");
        }
        let e = "4k/60:64k/30".parse::<BsSplit>().unwrap_err().to_string();
        assert!(e.contains("add up to 90 %"), "{e}");
    }

    #[test]
    fn draws_follow_the_shares() {
        let b: BsSplit = "4k/25:8k/0:64k/75".parse().unwrap();
        let n = 10_000;
        let picks: Vec<usize> = (0..n).map(|i| b.pick(i as f64 / n as f64)).collect();
        let small = picks.iter().filter(|&&i| i == 0).count();
        assert_eq!(small, 2500);
        assert!(!picks.contains(&1), "a 0 % size is never read");
        assert_eq!(picks.iter().filter(|&&i| i == 2).count(), 7500);
    }
}
