//! Repetitions: the same configuration measured N times, interleaved with the others of its
//! round, summarised as a median and a distribution-free confidence interval per figure, so one
//! lucky second is never the answer.

use crate::config::RunConfig;
use crate::error::Result;
use crate::interval::{RepeatSummary, coverage, interval};
use crate::result::{Document, EndedBy, ErrorSummary, RunResult, VerifySummary};
use crate::runner::{self, Observer};

/// The most repetitions of one configuration: a confidence interval is tight long before, and
/// every repetition's document is held until they are combined.
pub const MAX_REPEAT: usize = 1000;

/// Refuse a repetition count beyond [`MAX_REPEAT`], or whose runs together would last longer
/// than readlab allows one run (bad input, before anything runs): `--repeat 1000000` is a typo,
/// not a plan.
pub fn check(cfg: &RunConfig, runs: usize) -> Result<()> {
    let each = cfg.runtime.saturating_add(cfg.ramp);
    let total = each.saturating_mul(runs.min(u32::MAX as usize) as u32);
    // One run is bounded by the config's own checks, which say so in its words.
    if runs > MAX_REPEAT || (runs > 1 && total > crate::size::MAX_DURATION) {
        return Err(crate::error::Error::invalid(format!(
            "--repeat {runs} of {:.1} s each would run for {}; readlab repeats a configuration at \
             most {MAX_REPEAT} times and for at most a year in all: use a smaller --repeat",
            each.as_secs_f64(),
            humantime::format_duration(std::time::Duration::from_secs(total.as_secs()))
        )));
    }
    Ok(())
}

/// Summarise repetitions of one configuration.
pub fn summarize(results: &[RunResult]) -> RepeatSummary {
    let of = |f: &dyn Fn(&RunResult) -> f64| interval(&results.iter().map(f).collect::<Vec<_>>());
    let depths: Option<Vec<f64>> = results.iter().map(|r| r.achieved_depth).collect();
    RepeatSummary {
        runs: results.len(),
        confidence: coverage(results.len()),
        iops: of(&|r| r.iops),
        mb_s: of(&|r| r.mb_s),
        p50_ns: of(&|r| r.latency.p50_ns as f64),
        p99_ns: of(&|r| r.latency.p99_ns as f64),
        p999_ns: of(&|r| r.latency.p999_ns as f64),
        cpu_us_per_io: of(&|r| r.cpu_us_per_io),
        achieved_depth: depths.map(|d| interval(&d)),
    }
}

/// Of several repetitions, the one whose IOPS is the median (the lower middle one for an even
/// count): a real run, with its own histogram and timeline, to stand for all of them.
pub fn median_run(results: &[RunResult]) -> usize {
    let mut idx: Vec<usize> = (0..results.len()).collect();
    idx.sort_by(|&a, &b| results[a].iops.total_cmp(&results[b].iops));
    idx[(idx.len().max(1) - 1) / 2]
}

/// Merge the repetitions of one configuration into one document: the median run, carrying the
/// summary of all of them in `result.repeat`. One repetition is returned as it is.
pub fn combine(mut docs: Vec<Document>) -> Option<Document> {
    if docs.len() <= 1 {
        return docs.pop();
    }
    let results: Vec<RunResult> = docs.iter().map(|d| d.result.clone()).collect();
    let summary = summarize(&results);
    let mut doc = docs.swap_remove(median_run(&results));
    doc.result.repeat = Some(summary);
    // Its `precision` stays the median run's own: how well that one run measured (the
    // repetitions' spread is `repeat`).
    // The median run stands for the figures, never for the failures: every repetition's errors,
    // mismatches and warnings are the combined result's.
    let r = &mut doc.result;
    r.errors = ErrorSummary::default();
    let mut verify = r.verify.as_ref().map(|_| VerifySummary::default());
    let mut warnings: Vec<String> = Vec::new();
    for o in &results {
        r.errors.count += o.errors.count;
        r.errors.eagain += o.errors.eagain;
        r.errors.first.extend(o.errors.first.iter().cloned());
        if let (Some(v), Some(ov)) = (verify.as_mut(), &o.verify) {
            v.checked_ios += ov.checked_ios;
            v.mismatches += ov.mismatches;
            v.first.extend(ov.first.iter().cloned());
        }
        for w in &o.warnings {
            if !warnings.contains(w) {
                warnings.push(w.clone());
            }
        }
    }
    r.errors.first.sort_by_key(|e| e.offset);
    r.errors.first.truncate(KEEP_FIRST);
    if let Some(v) = verify.as_mut() {
        v.first.sort_by_key(|m| m.offset);
        v.first.truncate(KEEP_FIRST);
    }
    r.verify = verify;
    r.warnings = warnings;
    Some(doc)
}

/// Errors and mismatches kept in full in a combined result, as in one run's.
const KEEP_FIRST: usize = 16;

/// Measure one configuration `runs` times (seeds `seed`, `seed + 1`, …) and combine them; an
/// interrupted repetition ends the series and is kept, marked, as the result.
pub fn run(cfg: &RunConfig, runs: usize, observer: &dyn Observer) -> Result<Document> {
    run_counted(cfg, runs, observer, &mut |_| {})
}

/// [`run`], calling `each(i)` before repetition `i` starts (progress). A stop asked for between
/// repetitions (Ctrl-C after a short run ended) ends the series too: what was measured is kept,
/// marked interrupted.
pub fn run_counted(
    cfg: &RunConfig,
    runs: usize,
    observer: &dyn Observer,
    each: &mut dyn FnMut(usize),
) -> Result<Document> {
    check(cfg, runs)?;
    let mut docs = Vec::with_capacity(runs);
    for i in 0..runs.max(1) {
        if !docs.is_empty() && observer.cancelled() {
            let mut doc = combine(docs).expect("at least one run");
            doc.result.ended_by = EndedBy::Interrupted;
            return Ok(doc);
        }
        each(i);
        let mut c = cfg.clone();
        c.seed = cfg.seed.wrapping_add(i as u64);
        let doc = runner::run(&c, observer)?;
        if doc.result.ended_by == EndedBy::Interrupted {
            return Ok(doc);
        }
        docs.push(doc);
    }
    Ok(combine(docs).expect("at least one run"))
}

/// Measure every configuration `runs` times, interleaved (round 1: A B C, round 2: A B C, …), so
/// a slow drift of the machine touches them all alike; then one combined document per
/// configuration, in order. `measure(i, round)` runs configuration `i` once.
pub fn interleaved<F>(count: usize, runs: usize, mut measure: F) -> Result<Vec<Document>>
where
    F: FnMut(usize, usize) -> Result<Document>,
{
    if runs > MAX_REPEAT {
        return Err(crate::error::Error::invalid(format!(
            "--repeat {runs}: readlab repeats a configuration at most {MAX_REPEAT} times"
        )));
    }
    let mut per: Vec<Vec<Document>> = (0..count).map(|_| Vec::with_capacity(runs)).collect();
    for round in 0..runs.max(1) {
        for (i, docs) in per.iter_mut().enumerate() {
            docs.push(measure(i, round)?);
        }
    }
    Ok(per
        .into_iter()
        .map(|d| combine(d).expect("at least one run per configuration"))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_fluke_does_not_move_the_median() {
        let i = interval(&[850.0, 1875.0, 1160.0, 900.0, 1000.0]);
        assert_eq!(i.median, 1000.0);
        assert_eq!((i.lo, i.hi), (850.0, 1875.0));
    }

    fn fixture() -> Vec<Document> {
        let text = include_str!("../tests/fixtures/results-small.jsonl");
        text.lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[test]
    fn rounds_interleave_configurations_and_keep_the_median_run() {
        let docs = fixture();
        let mut order = Vec::new();
        let out = interleaved(2, 3, |i, r| {
            order.push((i, r));
            Ok(docs[i * 3 + r].clone())
        })
        .unwrap();
        assert_eq!(order, [(0, 0), (1, 0), (0, 1), (1, 1), (0, 2), (1, 2)]);
        assert_eq!(out.len(), 2);
        let rep = out[0].result.repeat.as_ref().expect("summary");
        assert_eq!(rep.runs, 3);
        let iops: Vec<f64> = docs[..3].iter().map(|d| d.result.iops).collect();
        assert_eq!(rep.iops, interval(&iops));
        assert_eq!(
            out[0].result.iops, rep.iops.median,
            "the median run stands for all"
        );
        // A failure in any repetition is the combined result's, whichever run is the median.
        let mut reps = docs[..3].to_vec();
        let fastest = (0..3)
            .max_by(|&a, &b| reps[a].result.iops.total_cmp(&reps[b].result.iops))
            .unwrap();
        assert_ne!(
            fastest,
            median_run(
                &docs[..3]
                    .iter()
                    .map(|d| d.result.clone())
                    .collect::<Vec<_>>()
            )
        );
        reps[fastest].result.verify = Some(VerifySummary {
            checked_ios: 5,
            mismatches: 7,
            first: vec![crate::data::Mismatch {
                offset: 4100,
                sector: 4096,
                expected: 0,
                found: 1,
            }],
        });
        reps[fastest].result.warnings.push("odd".into());
        let c = combine(reps).unwrap();
        assert!(
            c.result.failed(),
            "the median run hid another run's mismatches"
        );
        assert_eq!(c.result.verify.as_ref().unwrap().mismatches, 7);
        assert_eq!(c.result.verify.as_ref().unwrap().first[0].offset, 4100);
        assert!(c.result.warnings.contains(&"odd".to_string()));
        let failed = interleaved(2, 2, |_, _| {
            Err::<Document, _>(crate::error::Error::InvalidArgument("x".into()))
        });
        assert!(failed.is_err());
    }
}
