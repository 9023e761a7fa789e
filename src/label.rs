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
    let options = crate::engine::option::parse_suffix(engine, rest).ok_or_else(|| {
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

impl Labelled {
    /// The configuration in words, from the engine's table of options: `libaio, queue depth 48,
    /// batch 8, 3 threads` for `A48B8T3`.
    pub fn words(&self) -> String {
        let mut w = vec![self.engine.words().to_string()];
        if self.engine.capabilities().asynchronous {
            w.push(format!("queue depth {}", self.iodepth));
            w.push(format!("batch {}", self.batch));
        }
        w.extend(crate::engine::option::words(self.engine, &self.options));
        if self.blocks_per_request > 1 {
            w.push(format!("{} blocks per request", self.blocks_per_request));
        }
        if self.threads > 1 {
            w.push(format!("{} threads", self.threads));
        }
        w.join(", ")
    }
}

/// A label in words (`A48B8T3`: `libaio, queue depth 48, batch 8, 3 threads`; a `fio:` label
/// adds `measured by fio`), none when it is not a readlab label.
pub fn try_words(label: &str) -> Option<String> {
    let l = parse(label).ok()?;
    let mut w = l.words();
    if label.trim().starts_with("fio:") {
        w.push_str(", measured by fio");
    }
    Some(w)
}

/// A label in words, for a key or a tooltip beside it; a text that is not a label comes back
/// as it is.
pub fn words(label: &str) -> String {
    try_words(label).unwrap_or_else(|| label.to_string())
}

/// The label that words written by [`Labelled::words`] name (the inverse of [`words`]), none
/// when they are not such words.
pub fn from_words(words: &str) -> Option<String> {
    let mut parts = words.split(", ");
    let first = parts.next()?;
    let engine = EngineKind::all().find(|k| k.words() == first)?;
    let mut cfg = RunConfig {
        engine,
        ..RunConfig::new("/x")
    };
    let number = |p: &str, before: &str, after: &str| -> Option<usize> {
        count(p.strip_prefix(before)?.strip_suffix(after)?)
    };
    let mut next = 0;
    let table = engine.spec().options;
    'parts: for p in parts {
        if let Some(n) = number(p, "queue depth ", "") {
            cfg.iodepth = n;
        } else if let Some(n) = number(p, "batch ", "") {
            cfg.batch = n;
        } else if let Some(n) = number(p, "", " blocks per request") {
            cfg.blocks_per_request = n;
        } else if let Some(n) = number(p, "", " threads") {
            cfg.threads = n;
        } else {
            for (k, d) in table.iter().enumerate().skip(next) {
                let n = match d.words.split_once("{n}") {
                    Some((before, after)) => number(p, before, after),
                    None => (p == d.words).then_some(1),
                };
                if let Some(n) = n {
                    d.set(&mut cfg.options, n as u64);
                    next = k + 1;
                    continue 'parts;
                }
            }
            return None;
        }
    }
    Some(cfg.label())
}

/// The key of a table whose rows carry `labels`: each distinct label once, in the order first
/// seen, with its words (`A48B8T3  libaio, queue depth 48, batch 8, 3 threads`). Texts that are
/// not labels are left out; empty when none is one.
pub fn key<'a>(labels: impl IntoIterator<Item = &'a str>) -> Vec<(String, String)> {
    let mut seen = std::collections::BTreeSet::new();
    labels
        .into_iter()
        .filter(|l| seen.insert(l.to_string()))
        .filter_map(|l| Some((l.to_string(), try_words(l)?)))
        .collect()
}

/// [`key`] as lines of text under a terminal table: `key: A48B8T3 = libaio, …`, one label a line,
/// labels aligned.
pub fn key_lines<'a>(labels: impl IntoIterator<Item = &'a str>) -> String {
    let k = key(labels);
    let width = k.iter().map(|(l, _)| l.chars().count()).max().unwrap_or(0);
    k.iter()
        .enumerate()
        .map(|(i, (l, w))| {
            format!(
                "{} {l:<width$}  {w}\n",
                if i == 0 { "key:" } else { "    " }
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{PoolOptions, Pvsync2Options, UringOptions, registry};

    /// The options a label cannot carry, at their defaults: what a label is compared on.
    fn in_label(o: &EngineOptions) -> EngineOptions {
        let mut o = o.clone();
        UringOptions::edit(&mut o, |u| (u.sqpoll_cpu, u.sqpoll_idle_ms) = (None, 0));
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
                    crate::engine::with(|o| PoolOptions::edit(o, |p| p.pool_threads = Some(8))),
                ));
            }
            if spec.name == "pvsync2" {
                variants.push((
                    "--hipri --nowait",
                    crate::engine::with(|o| {
                        Pvsync2Options::edit(o, |v| (v.hipri, v.nowait) = (true, true))
                    }),
                ));
            }
            if spec.name == "uring" {
                variants.push((
                    "all",
                    crate::engine::with(|o| {
                        UringOptions::edit(o, |u| {
                            (u.fixed_bufs, u.fixed_files, u.sqpoll) = (true, true, true);
                            u.sqpoll_cpu = Some(1);
                        })
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
    fn labels_in_words() {
        assert_eq!(
            words("A48B8T3"),
            "libaio, queue depth 48, batch 8, 3 threads"
        );
        assert_eq!(
            words("U64B4MFS"),
            "io_uring, queue depth 64, batch 4, fixed buffers, fixed files, SQ poll"
        );
        assert_eq!(
            words("R1B1P"),
            "NBD, queue depth 1, batch 1, busy-polling its socket"
        );
        assert_eq!(words("PT8"), "pread, 8 threads");
        assert_eq!(
            words("W16B1R4×2"),
            "thread pool, queue depth 16, batch 1, 4 reader threads, 2 blocks per request"
        );
        assert_eq!(
            words("fio:VH"),
            "preadv2, polled completions (RWF_HIPRI), measured by fio"
        );
        assert_eq!(words("not a label"), "not a label");
        for l in [
            "A48B8T3",
            "U64B4MFS",
            "R1B1P",
            "PT8",
            "W16B1R4×2",
            "VHN",
            "N",
            "X8B2T2",
        ] {
            assert_eq!(from_words(&words(l)).as_deref(), Some(l), "{}", words(l));
        }
        assert_eq!(from_words("libaio, warp speed"), None);
        assert_eq!(try_words("Q"), None);
        let k = key_lines(["PT8", "-", "PT8", "A1B1"]);
        assert_eq!(
            k,
            "key: PT8   pread, 8 threads\n     A1B1  libaio, queue depth 1, batch 1\n"
        );
    }

    /// Label → words → label: every option's words name it, so the words of a label carrying
    /// options say each of them, and the label written from what it was read as is the same.
    #[test]
    fn label_words_label_round_trips() {
        for (kind, d) in crate::engine::option::all() {
            if d.letter.is_none() {
                continue;
            }
            let mut cfg = RunConfig {
                engine: kind,
                iodepth: 4,
                batch: 2,
                threads: 3,
                ..RunConfig::new("/x")
            };
            d.set(&mut cfg.options, 5);
            let label = cfg.label();
            let w = words(&label);
            assert!(w.starts_with(kind.words()), "{label}: {w}");
            assert!(
                w.contains(&d.words_in(&cfg.options).unwrap()),
                "{label}: {w}"
            );
            assert!(w.ends_with("3 threads"), "{label}: {w}");
            let mut again = RunConfig::new("/x");
            parse(&label).unwrap().apply(&mut again);
            assert_eq!(again.label(), label);
            assert_eq!(words(&again.label()), w);
            assert_eq!(from_words(&w).as_deref(), Some(label.as_str()), "{w}");
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
        let u = UringOptions::of(&parse("U64B1MFT2").unwrap().options);
        assert!(u.fixed_bufs && u.fixed_files && !u.sqpoll);
        assert_eq!(parse("U1B1x4").unwrap().blocks_per_request, 4);
        assert_eq!(parse("PT8").unwrap().threads, 8);
        assert!(Pvsync2Options::of(&parse("VH").unwrap().options).hipri);
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
