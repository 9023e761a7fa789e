//! Labels read back: the report's label (`U64B1MFT2`, `VH`, `U1B1×4`) names a configuration, and
//! this module turns one back into the configuration it names, so a label in a table, a chart or
//! a comparison can always be traced to what ran. Labels are written by `RunConfig::label`.
//!
//! Grammar: `<engine letter>[<queue size>B<batch>]<engine letters>[×<blocks per request>][T<threads>]`.
//! The engine letter and the letters of its options come from each engine's `EngineSpec`;
//! asynchronous engines always carry the queue part, synchronous ones never. fio points carry a
//! `fio:` prefix, which is ignored here.

use crate::config::RunConfig;
use crate::engine::{EngineKind, EngineOptions};
use crate::error::{Error, Result};

/// What a label says about a configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Labelled {
    pub engine: EngineKind,
    pub iodepth: usize,
    pub batch: usize,
    pub threads: usize,
    pub blocks_per_request: usize,
    /// The options the label's letters stand for (others at their defaults).
    pub options: EngineOptions,
}

impl Labelled {
    /// `cfg` with everything the label says set on it.
    pub fn apply(&self, cfg: &mut RunConfig) {
        cfg.engine = self.engine;
        cfg.iodepth = self.iodepth;
        cfg.batch = self.batch;
        cfg.threads = self.threads;
        cfg.blocks_per_request = self.blocks_per_request;
        cfg.options = self.options.clone();
    }
}

fn bad(label: &str, why: &str) -> Error {
    let letters: Vec<String> = EngineKind::all()
        .map(|k| format!("{} {}", k.label_prefix(), k.name()))
        .collect();
    Error::invalid(format!(
        "'{label}' is not a readlab label: {why} (labels look like P, PT4, A16B1T3, U64B1MFT2, U1B1×4; engine letters: {})",
        letters.join(", ")
    ))
}

/// A whole number written without sign or leading zeros, at least 1.
fn count(s: &str) -> Option<usize> {
    let n: usize = s.parse().ok()?;
    (n >= 1 && n.to_string() == s).then_some(n)
}

/// The configuration a label names.
pub fn parse(label: &str) -> Result<Labelled> {
    let l = label.trim();
    let l = l.strip_prefix("fio:").unwrap_or(l);
    let mut chars = l.char_indices();
    let Some((_, first)) = chars.next() else {
        return Err(bad(label, "it is empty"));
    };
    let engine = EngineKind::all()
        .find(|k| k.label_prefix().starts_with(first) && k.label_prefix().len() == 1)
        .ok_or_else(|| bad(label, &format!("no engine has the letter '{first}'")))?;
    let mut rest = &l[first.len_utf8()..];
    // Threads: `T<n>` at the very end (no engine letter is T).
    let mut threads = 1;
    if let Some(t) = rest.rfind('T') {
        threads = count(&rest[t + 1..]).ok_or_else(|| bad(label, "T must end it with a count"))?;
        if threads == 1 {
            return Err(bad(label, "one thread is written without T1"));
        }
        rest = &rest[..t];
    }
    // Blocks per request: `×<n>` (or `x<n>`) before the threads.
    let mut blocks_per_request = 1;
    if let Some(x) = rest.rfind(['×', 'x']) {
        let sign = rest[x..].chars().next().map_or(1, char::len_utf8);
        blocks_per_request = count(&rest[x + sign..])
            .filter(|&n| n > 1)
            .ok_or_else(|| bad(label, "× must be followed by a count above 1"))?;
        rest = &rest[..x];
    }
    let (mut iodepth, mut batch) = (1, 1);
    if engine.capabilities().asynchronous {
        let digits = |s: &str| s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
        let q = digits(rest);
        iodepth = count(&rest[..q]).ok_or_else(|| bad(label, "the queue size is missing"))?;
        rest = rest[q..]
            .strip_prefix('B')
            .ok_or_else(|| bad(label, "B<batch> must follow the queue size"))?;
        let b = digits(rest);
        batch = count(&rest[..b]).ok_or_else(|| bad(label, "the batch size is missing"))?;
        rest = &rest[b..];
    }
    let options = (engine.spec().parse_suffix)(rest).ok_or_else(|| {
        bad(
            label,
            &format!("'{rest}' are not letters {} writes", engine.name()),
        )
    })?;
    Ok(Labelled {
        engine,
        iodepth,
        batch,
        threads,
        blocks_per_request,
        options,
    })
}

/// A label in words, for people: `U32B1MFT2` → `uring, queue depth 32, batch 1, 2 threads,
/// fixed bufs, fixed files`. The label itself when it is not one readlab writes. (The one place
/// labels are expanded: the table of engine options may give it better words.)
pub fn words(label: &str) -> String {
    let Ok(l) = parse(label) else {
        return label.to_string();
    };
    let mut parts = vec![l.engine.name().to_string()];
    if l.engine.capabilities().asynchronous {
        parts.push(format!("queue depth {}", l.iodepth));
        parts.push(format!("batch {}", l.batch));
    }
    parts.push(match l.threads {
        1 => "1 thread".to_string(),
        n => format!("{n} threads"),
    });
    if l.blocks_per_request > 1 {
        parts.push(format!("{} blocks per request", l.blocks_per_request));
    }
    for flag in (l.engine.spec().options_set)(&l.options) {
        parts.push(flag.replace('-', " "));
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::registry;

    /// The options a label cannot carry, at their defaults: what a label is compared on.
    fn in_label(o: &EngineOptions) -> EngineOptions {
        let mut o = o.clone();
        o.uring.sqpoll_cpu = None;
        o.uring.sqpoll_idle_ms = 0;
        o
    }

    /// Every registered engine and feature variant, with threads, queue, batch and blocks per
    /// request varied, reads back as the configuration that wrote the label.
    #[test]
    fn every_engine_and_variant_round_trips() {
        let mut seen = std::collections::BTreeSet::new();
        for spec in registry() {
            let kind = EngineKind::parse(spec.name).unwrap();
            let mut variants = (spec.variants)();
            if variants.is_empty() {
                // Engines without local variants (nbd) still have their plain label.
                variants.push(("", EngineOptions::default()));
            }
            if spec.name == "pool" {
                variants.push((
                    "--pool-threads",
                    crate::engine::with(|o| o.pool.pool_threads = Some(8)),
                ));
            }
            if spec.name == "pvsync2" {
                variants.push((
                    "--hipri --nowait",
                    crate::engine::with(|o| {
                        o.pvsync2.hipri = true;
                        o.pvsync2.nowait = true;
                    }),
                ));
            }
            if spec.name == "uring" {
                variants.push((
                    "all",
                    crate::engine::with(|o| {
                        o.uring.fixed_bufs = true;
                        o.uring.fixed_files = true;
                        o.uring.sqpoll = true;
                        o.uring.sqpoll_cpu = Some(1);
                    }),
                ));
            }
            let asynchronous = kind.capabilities().asynchronous;
            for (flags, options) in variants {
                for threads in [1, 3] {
                    for bpr in [1, 4] {
                        let shapes: &[(usize, usize)] = if asynchronous {
                            &[(1, 1), (32, 4), (128, 128)]
                        } else {
                            &[(1, 1)]
                        };
                        for &(iodepth, batch) in shapes {
                            let cfg = RunConfig {
                                engine: kind,
                                threads,
                                iodepth,
                                batch,
                                blocks_per_request: bpr,
                                options: options.clone(),
                                ..RunConfig::new("/x")
                            };
                            let label = cfg.label();
                            let back = parse(&label)
                                .unwrap_or_else(|e| panic!("{} {flags}: {label}: {e}", spec.name));
                            assert_eq!(back.engine, kind, "{label}");
                            assert_eq!(
                                (
                                    back.threads,
                                    back.iodepth,
                                    back.batch,
                                    back.blocks_per_request
                                ),
                                (threads, iodepth, batch, bpr),
                                "{label}"
                            );
                            assert_eq!(
                                back.options,
                                in_label(&options),
                                "{} {flags}: {label}",
                                spec.name
                            );
                            let mut again = RunConfig::new("/x");
                            back.apply(&mut again);
                            assert_eq!(again.label(), label);
                            assert!(
                                seen.insert(label.clone()),
                                "{label} names two configurations"
                            );
                            assert_eq!(parse(&format!("fio:{label}")).unwrap(), back);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn engine_letters_are_unique() {
        let mut letters: Vec<&str> = registry().iter().map(|s| s.label).collect();
        letters.sort();
        let n = letters.len();
        letters.dedup();
        assert_eq!(letters.len(), n, "{letters:?}");
        assert!(letters.iter().all(|l| l.len() == 1 && *l != "T"));
    }

    #[test]
    fn the_reports_labels_read_back() {
        let p = parse("A16B1T3").unwrap();
        assert_eq!(
            (p.engine, p.iodepth, p.batch, p.threads),
            (EngineKind::Libaio, 16, 1, 3)
        );
        let u = parse("U64B1MFT2").unwrap();
        assert!(
            u.options.uring.fixed_bufs && u.options.uring.fixed_files && !u.options.uring.sqpoll
        );
        assert_eq!(parse("U1B1x4").unwrap().blocks_per_request, 4);
        assert_eq!(parse("PT8").unwrap().threads, 8);
        assert!(parse("VH").unwrap().options.pvsync2.hipri);
    }

    #[test]
    fn labels_read_in_words() {
        assert_eq!(words("P"), "psync, 1 thread");
        assert_eq!(
            words("U32B4MFT2"),
            "uring, queue depth 32, batch 4, 2 threads, fixed files, fixed bufs"
        );
        assert_eq!(
            words("fio:A16B1×4"),
            "libaio, queue depth 16, batch 1, 1 thread, 4 blocks per request"
        );
        assert_eq!(words("not a label"), "not a label");
    }

    #[test]
    fn what_is_not_a_label_says_so() {
        for bad in [
            "", "Q", "P4", "PT", "PT1", "PT01", "U", "U32", "U32B", "U32B0", "UB1", "U32B1Q",
            "U32B1FM", "U32B1MM", "V×1", "P×", "WR0", "W4B1R", "VNH",
        ] {
            let e = parse(bad).unwrap_err();
            assert!(
                e.is_bad_input() && e.to_string().contains("not a readlab label"),
                "{bad}: {e}"
            );
        }
    }
}
