//! Racing the close ones (F-race's idea, paired): after a first pass, the configurations not
//! clearly apart from their group leader are measured again in short interleaved rounds (A B C,
//! C A B, …) and compared round by round, until each is behind the leader, equal to it within
//! the margin, or the budget is spent. Configurations out of contention are never measured
//! again. Each raced configuration's result then stands for all its measured time, and carries
//! its rounds so the verdict decides from the same pairs the race did.

use crate::config::RunConfig;
use crate::decide::{self, Better, Call};
use crate::error::Result;
use crate::estimate::{self, Estimate};
use crate::result::{Document, EndedBy, Precision, RaceRecord, RoundFigures};
use std::time::{Duration, Instant};

/// How a race is run and decided.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RaceRule {
    /// Gaps inside ±margin are "equal" (0.05 = 5 %).
    pub margin: f64,
    /// The confidence of all the race's calls together.
    pub confidence: f64,
    /// Measured time of each configuration in a round (its ramp is at most a tenth of it).
    pub round: Duration,
    /// Whether rounds verify what they read when the configuration does: yes where the user
    /// asked for it (`run --verify`); the main job, which verifies on its own account, checks
    /// its first pass and only times its rounds.
    pub verify_rounds: bool,
}

impl Default for RaceRule {
    fn default() -> RaceRule {
        RaceRule {
            margin: decide::MARGIN,
            confidence: estimate::CONFIDENCE,
            round: Duration::from_secs(1),
            verify_rounds: true,
        }
    }
}

/// The one rule for the flags that shape a race, `--budget` and `--margin` (`None`: not given):
/// the budget at most [`crate::config::MAX_LENGTH`], the margin below 100 % (wider, every gap is
/// equal), and neither given where nothing is raced (`no_race` says why, e.g. "one configuration
/// is measured"), where it would be ignored (`--budget 0`, no race, is what happens there).
pub fn check_flags(
    budget: Option<Duration>,
    margin: Option<f64>,
    no_race: Option<&str>,
) -> Result<()> {
    if let Some(b) = budget {
        crate::config::check_length("--budget", b)?;
    }
    if let Some(m) = margin
        && m >= 1.0
    {
        return Err(crate::error::Error::invalid(format!(
            "--margin {:.0} % would call every gap equal; use less than 100 % (e.g. 5%)",
            m * 100.0
        )));
    }
    if let Some(why) = no_race {
        // `--budget 0` asks for no race, which is what happens: not refused.
        for (flag, given) in [
            ("--budget", budget.is_some_and(|b| !b.is_zero())),
            ("--margin", margin.is_some()),
        ] {
            if given {
                return Err(crate::error::Error::invalid(format!(
                    "{flag} shapes the race between several configurations, and nothing is raced here ({why}); drop {flag}"
                )));
            }
        }
    }
    Ok(())
}

/// The most times a race looks at its rounds (O'Brien–Fleming's constants are tabled to 20).
const MAX_LOOKS: usize = 20;

/// What a round costs beyond its measured time and ramp: opening, set-up, the null-engine
/// self-measurement.
const ROUND_OVERHEAD: Duration = Duration::from_millis(50);

/// The configurations that compete: one target, block size, access and O_DIRECT setting, real
/// reads that did not fail.
fn group_key(d: &Document) -> Option<(String, u64, String, bool)> {
    let c = &d.config;
    let real = c.engine.capabilities().does_io && !d.result.failed() && d.result.ios > 0;
    real.then(|| (c.target.display().to_string(), c.bs, c.access(), c.direct))
}

/// The groups of `docs` with two members or more, each as indices, most IOPS first.
pub fn groups(docs: &[Document]) -> Vec<Vec<usize>> {
    let mut keys: Vec<(String, u64, String, bool)> = Vec::new();
    let mut out: Vec<Vec<usize>> = Vec::new();
    for (i, d) in docs.iter().enumerate() {
        let Some(k) = group_key(d) else { continue };
        match keys.iter().position(|x| *x == k) {
            Some(g) => out[g].push(i),
            None => {
                keys.push(k);
                out.push(vec![i]);
            }
        }
    }
    out.retain(|g| g.len() > 1);
    for g in &mut out {
        g.sort_by(|&a, &b| docs[b].result.iops.total_cmp(&docs[a].result.iops));
    }
    out
}

/// A run's IOPS interval at `confidence` (its stored one is at [`estimate::CONFIDENCE`], from
/// `batches` batch means: widened by the ratio of the t multipliers); None without one.
pub fn iops_at(d: &Document, confidence: f64) -> Option<Estimate> {
    let p = d.result.precision.as_ref()?;
    Some(widen(&p.iops, p.batches, p.confidence, confidence))
}

/// A symmetric t interval from `batches` batches, made at `from`, widened to `to`.
pub fn widen(e: &Estimate, batches: usize, from: f64, to: f64) -> Estimate {
    let df = batches.max(2) - 1;
    let k = estimate::t_two_sided(to, df) / estimate::t_two_sided(from, df);
    let side = |b: Option<f64>| b.map(|b| e.value + (b - e.value) * k);
    Estimate {
        value: e.value,
        lo: side(e.lo).map(|x| x.max(0.0)),
        hi: side(e.hi),
    }
}

/// How far behind, in margins, a first-pass run must be for sure to leave the race unraced.
/// A run's own interval knows its own noise, not how the machine changed between one run and
/// the next: in A/A trials (`benches/decide.sh`: one throttled rate through psync and pvsync2,
/// a busy core beside), two runs in a row came out several percent apart with intervals that
/// did not overlap, and were called a winner. Only paired rounds tell such gaps; a first pass
/// decides gaps of another order (QD1 against QD32).
const FIRST_PASS_MARGINS: f64 = 4.0;

/// Of a group after the first pass, the members still in contention with its leader (the first):
/// all but those equal to it within the margin and those behind it for sure by more than
/// [`FIRST_PASS_MARGINS`] margins (their IOPS intervals at the confidence corrected for the
/// group's comparisons); a member without an interval is in contention.
pub fn in_contention(docs: &[Document], group: &[usize], rule: &RaceRule) -> Vec<usize> {
    let leader = &docs[group[0]];
    let each = decide::each(rule.confidence, group.len() - 1);
    group[1..]
        .iter()
        .copied()
        .filter(
            |&i| match (iops_at(leader, each), iops_at(&docs[i], each)) {
                (Some(a), Some(b)) => {
                    let gap =
                        decide::from_intervals(&a, &b, Better::Higher, each, decide::Basis::Runs);
                    match gap.call(rule.margin) {
                        Call::Equal => false,
                        Call::Ahead => gap
                            .lo
                            .is_none_or(|lo| lo <= FIRST_PASS_MARGINS * rule.margin),
                        Call::Open => true,
                    }
                }
                _ => true,
            },
        )
        .collect()
}

/// One configuration's figures in one round.
fn figures(round: usize, d: &Document) -> RoundFigures {
    let r = &d.result;
    RoundFigures {
        round,
        seconds: r.seconds,
        iops: r.iops,
        cpu_us_per_io: r.cpu_us_per_io,
        p99_ns: r.latency.p99_ns,
        p999_ns: r.latency.p999_ns,
    }
}

/// A round's ramp for rounds of `round`: a tenth of it. The first pass warmed the target up; a
/// ramp only lets the queue fill and the threads start, which takes milliseconds (a quarter
/// spent a fifth of every round's time on nothing).
fn round_ramp(round: Duration) -> Duration {
    round / 10
}

/// The configuration a round measures: `cfg` for `rule.round`, its ramp at most
/// [`round_ramp`] (the first pass warmed the target up), another seed each round, verifying only when
/// `rule.verify_rounds` (checking every block costs CPU beside the I/O loop: on a busy machine
/// that CPU made a round's rate vary three times as much, so a race needed nine times the
/// rounds).
pub fn round_config(cfg: &RunConfig, rule: &RaceRule, round: usize) -> RunConfig {
    let mut c = cfg.clone();
    c.runtime = rule.round.min(cfg.runtime);
    c.ramp = cfg.ramp.min(round_ramp(rule.round));
    c.seed = cfg.seed.wrapping_add(1000 + round as u64);
    c.verify = cfg.verify && rule.verify_rounds;
    c
}

/// A configuration's figures in the race's rounds, the first pass left out: it was measured
/// alone (not interleaved), longer, and perhaps verified, so only rounds are compared in pairs.
pub fn raced<T>(runs: &[T]) -> &[T] {
    runs.get(1..).unwrap_or(&[])
}

/// A group's race in progress: who is still in it, how many comparisons its confidence is
/// shared among, and the confidence of its latest look (the race's, spent over its planned
/// looks by O'Brien–Fleming's boundaries and shared among its contenders).
struct Heat {
    alive: Vec<usize>,
    comparisons: usize,
    level: f64,
}

/// How many rounds fit in what is left of the budget, and how many of them the race looks at:
/// made before the first round, and made again when a contender leaves (the rounds get cheaper,
/// so more of them fit: the budget is spent, not left over).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Plan {
    /// The last round that fits.
    fit: usize,
    /// The looks spread evenly over the rounds up to `fit`, at most [`MAX_LOOKS`].
    looks: usize,
}

impl Plan {
    /// The plan after `done` rounds, `left` of the budget, with rounds costing `cost` each.
    fn after(done: usize, left: Duration, cost: Duration) -> Plan {
        let more = if cost.is_zero() {
            1
        } else {
            (left.as_secs_f64() / cost.as_secs_f64()).floor() as usize
        };
        let fit = (done + more).max(1);
        Plan {
            fit,
            looks: fit.min(MAX_LOOKS),
        }
    }

    /// The look `round` falls on, when its share of the plan's looks passes `last` (the latest
    /// look made): a generous budget does not make every look stricter.
    fn look_at(&self, round: usize, last: usize) -> Option<usize> {
        let j = round * self.looks / self.fit;
        (j > last).then_some(j)
    }

    /// The error a look may spend: O'Brien–Fleming's boundary at the fraction of the planned
    /// rounds measured. A plan made again for more rounds raises the boundary of every later
    /// look (its fraction is smaller than under the old plan), never lowers it.
    fn alpha(&self, alpha: f64, look: usize) -> f64 {
        decide::alpha_at_look(alpha, look, self.looks)
    }
}

/// Race the first pass `first` (configuration `i`'s document at `i`): `measure(i, round)` runs
/// configuration `i` once as a round ([`round_config`]). Stops when every group is decided, at
/// `deadline`, or when `cancelled()`. Returns a document per configuration: the first pass's
/// where it was not raced, else the pooled result of all its runs with its race record.
pub fn race<F>(
    first: Vec<Document>,
    rule: &RaceRule,
    deadline: Instant,
    cancelled: &dyn Fn() -> bool,
    mut measure: F,
) -> Result<Vec<Document>>
where
    F: FnMut(usize, usize) -> Result<Document>,
{
    let started = Instant::now();
    let round_cost = |alive: usize| {
        (rule.round + round_ramp(rule.round) + ROUND_OVERHEAD) * alive.min(u32::MAX as usize) as u32
    };
    let contests: Vec<(usize, Vec<usize>)> = groups(&first)
        .into_iter()
        .map(|g| (g[0], in_contention(&first, &g, rule)))
        .filter(|(_, c)| !c.is_empty())
        .collect();
    // Each call is made at the race's confidence spent over the planned looks (O'Brien–Fleming)
    // and shared among the group's contenders (Bonferroni), so looking after every round costs
    // no confidence.
    let members = |heats: &[Heat]| heats.iter().map(|h| h.alive.len()).sum::<usize>();
    let mut heats: Vec<Heat> = contests
        .into_iter()
        .map(|(leader, c)| Heat {
            comparisons: c.len(),
            level: rule.confidence,
            alive: std::iter::once(leader).chain(c).collect(),
        })
        .collect();
    let left = || deadline.saturating_duration_since(Instant::now());
    let mut plan = Plan::after(0, left(), round_cost(members(&heats)));
    let mut last_look = 0;
    let mut runs: Vec<Vec<Document>> = first.iter().map(|d| vec![d.clone()]).collect();
    // Each raced configuration's group's latest level: what the verdict decides it at.
    let mut levels: Vec<(usize, f64)> = Vec::new();
    let mut round = 1;
    let mut round_wall = Duration::ZERO;
    while !heats.is_empty() && !cancelled() && round <= plan.fit {
        let order: Vec<usize> = heats.iter().flat_map(|h| h.alive.clone()).collect();
        let cost = round_wall.max(round_cost(order.len()) / 2);
        if Instant::now() + cost > deadline {
            break;
        }
        let t0 = Instant::now();
        let k = order.len();
        for j in 0..k {
            // Rotated each round: A B C, C A B, B C A.
            let i = order[(j + k - (round - 1) % k) % k];
            let d = measure(i, round)?;
            if d.result.ended_by == EndedBy::Interrupted {
                return Ok(finish(first, runs, &levels, rule, started, round_wall));
            }
            runs[i].push(d);
        }
        round_wall = t0.elapsed();
        let Some(look) = plan.look_at(round, last_look) else {
            round += 1;
            continue;
        };
        last_look = look;
        for h in &mut heats {
            h.level = 1.0 - plan.alpha(1.0 - rule.confidence, look) / h.comparisons as f64;
            levels.retain(|(i, _)| !h.alive.contains(i));
            levels.extend(h.alive.iter().map(|&i| (i, h.level)));
            h.decide(&runs, rule);
        }
        heats.retain(|h| h.alive.len() > 1);
        if members(&heats) < k && members(&heats) > 0 {
            let cheaper = Plan::after(round, left(), round_cost(members(&heats)));
            if cheaper.fit > plan.fit {
                // The looks made stay made: the new plan looks next where its share of looks
                // passes this round's.
                last_look = cheaper.look_at(round, 0).unwrap_or(0);
                plan = cheaper;
            }
        }
        round += 1;
    }
    Ok(finish(first, runs, &levels, rule, started, round_wall))
}

impl Heat {
    /// After a round: the leader is the member with the highest mean log IOPS over the rounds;
    /// each other member leaves once it is behind the leader or equal to it within the margin.
    fn decide(&mut self, runs: &[Vec<Document>], rule: &RaceRule) {
        let iops =
            |i: usize| -> Vec<f64> { raced(&runs[i]).iter().map(|d| d.result.iops).collect() };
        let mean_log = |i: usize| {
            let v = iops(i);
            v.iter().map(|x| x.max(f64::MIN_POSITIVE).ln()).sum::<f64>() / v.len() as f64
        };
        let leader = *self
            .alive
            .iter()
            .max_by(|&&a, &&b| mean_log(a).total_cmp(&mean_log(b)))
            .expect("a heat has members");
        let lead = iops(leader);
        self.alive.retain(|&i| {
            i == leader
                || decide::from_rounds(&lead, &iops(i), Better::Higher, self.level)
                    .is_none_or(|g| g.call(rule.margin) == Call::Open)
        });
    }
}

/// The documents after a race: the first pass's where a configuration was not raced, else its
/// runs pooled, carrying the race's record.
fn finish(
    first: Vec<Document>,
    runs: Vec<Vec<Document>>,
    levels: &[(usize, f64)],
    rule: &RaceRule,
    started: Instant,
    round_wall: Duration,
) -> Vec<Document> {
    let id = format!(
        "{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    );
    let record = |docs: &[Document], level: f64| RaceRecord {
        id: id.clone(),
        rounds: docs
            .iter()
            .enumerate()
            .map(|(r, d)| figures(r, d))
            .collect(),
        confidence: level,
        race_confidence: rule.confidence,
        margin: rule.margin,
        seconds: started.elapsed().as_secs_f64(),
        round_s: round_wall.as_secs_f64(),
    };
    first
        .into_iter()
        .zip(runs)
        .enumerate()
        .map(|(i, (d, all))| {
            let Some(&(_, level)) = levels.iter().find(|(j, _)| *j == i) else {
                return d;
            };
            let mut pooled = pool(&all);
            pooled.result.race = Some(record(&all, level));
            pooled
        })
        .collect()
}

/// One configuration's runs as one result: the first run's document with the figures of all its
/// measured time (I/Os over seconds, CPU per I/O over I/Os, latency from the merged histograms),
/// and intervals from the runs as batches (each run one batch mean).
pub fn pool(runs: &[Document]) -> Document {
    let mut doc = runs[0].clone();
    if runs.len() < 2 {
        return doc;
    }
    let sum = |f: &dyn Fn(&crate::result::RunResult) -> f64| -> f64 {
        runs.iter().map(|d| f(&d.result)).sum()
    };
    let seconds = sum(&|r| r.seconds);
    let ios = sum(&|r| r.ios as f64);
    let r = &mut doc.result;
    r.seconds = seconds;
    r.ios = ios as u64;
    r.requests = sum(&|r| r.requests as f64) as u64;
    r.bytes = sum(&|r| r.bytes as f64) as u64;
    r.iops = ios / seconds.max(f64::MIN_POSITIVE);
    r.requests_per_s = r.requests as f64 / seconds.max(f64::MIN_POSITIVE);
    r.mb_s = r.bytes as f64 / seconds.max(f64::MIN_POSITIVE) / 1e6;
    r.mib_s = r.bytes as f64 / seconds.max(f64::MIN_POSITIVE) / (1u64 << 20) as f64;
    r.cpu_us_per_io = sum(&|r| r.cpu_us_per_io * r.ios as f64) / ios.max(1.0);
    let (latency, histogram, bins) = merged_latency(runs);
    r.latency = latency;
    r.histogram = histogram;
    r.precision = pooled_precision(runs, r.iops, r.cpu_us_per_io, &r.latency, &bins);
    r.repeat = None;
    doc
}

/// The runs' latency summaries merged: percentiles and spread from the merged histograms, the
/// mean weighted by count, the extremes of all.
fn merged_latency(runs: &[Document]) -> (crate::stats::LatencySummary, String, Vec<(u64, u64)>) {
    let mut rec = crate::stats::Recorder::default();
    for d in runs {
        let l = &d.result.latency;
        let Some(h) = crate::stats::decode_histogram(&d.result.histogram) else {
            continue;
        };
        // A histogram that does not fit (another precision) is left out, never a panic.
        if l.count == 0 || rec.hist.add(&h).is_err() {
            continue;
        }
        rec.min = rec.min.min(l.min_ns);
        rec.max = rec.max.max(l.max_ns);
        rec.sum += (l.mean_ns * l.count as f64) as u128;
        rec.count += l.count;
    }
    let bins = rec
        .hist
        .iter_recorded()
        .map(|v| (v.value_iterated_to(), v.count_at_value()))
        .collect();
    (
        rec.summary(),
        crate::stats::encode_histogram(&rec.hist),
        bins,
    )
}

/// Intervals for pooled runs, each run one batch: IOPS and CPU per I/O from the runs' figures
/// (t intervals around the pooled figures), percentiles from the merged histogram.
fn pooled_precision(
    runs: &[Document],
    iops: f64,
    cpu: f64,
    l: &crate::stats::LatencySummary,
    bins: &[(u64, u64)],
) -> Option<Precision> {
    let c = estimate::CONFIDENCE;
    let around = |value: f64, xs: Vec<f64>| {
        estimate::paired_interval(&xs, c).map(|e| {
            let h = e.hi.unwrap_or(e.value) - e.value;
            Estimate {
                value,
                lo: Some((value - h).max(0.0)),
                hi: Some(value + h),
            }
        })
    };
    let n = runs.len();
    Some(Precision {
        confidence: c,
        window_s: runs.iter().map(|d| d.result.seconds).sum::<f64>() / n as f64,
        windows: n,
        batches: n,
        iops: around(iops, runs.iter().map(|d| d.result.iops).collect())?,
        cpu_us_per_io: around(cpu, runs.iter().map(|d| d.result.cpu_us_per_io).collect()),
        p50_ns: estimate::percentile_interval(bins, 50.0, l.p50_ns, c),
        p99_ns: estimate::percentile_interval(bins, 99.0, l.p99_ns, c),
        p999_ns: estimate::percentile_interval(bins, 99.9, l.p999_ns, c),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    /// A run of iodepth `qd` at `iops`, with its own interval of ±`rel` from 10 batches.
    fn doc(qd: usize, iops: f64, rel: f64) -> Document {
        let mut d = crate::fixture::first::<Document>();
        d.config.iodepth = qd;
        d.config.runtime = Duration::from_secs(4);
        let r = &mut d.result;
        r.errors = Default::default();
        r.verify = None;
        (r.iops, r.seconds, r.ios) = (iops, 1.0, iops as u64);
        let e = |v: f64| Estimate {
            value: v,
            lo: Some(v * (1.0 - rel)),
            hi: Some(v * (1.0 + rel)),
        };
        r.precision = Some(Precision {
            confidence: 0.95,
            window_s: 0.1,
            windows: 40,
            batches: 10,
            iops: e(iops),
            cpu_us_per_io: None,
            p50_ns: e(1000.0),
            p99_ns: e(2000.0),
            p999_ns: e(3000.0),
        });
        d
    }

    #[test]
    fn only_the_close_ones_contend() {
        let docs = vec![
            doc(32, 100_000.0, 0.03),
            doc(4, 97_000.0, 0.03),
            doc(1, 30_000.0, 0.03),
        ];
        let g = groups(&docs);
        assert_eq!(g, [vec![0, 1, 2]]);
        assert_eq!(in_contention(&docs, &g[0], &RaceRule::default()), [1]);
        // Intervals apart, the gap beyond the margin but not by four of them: raced (two runs'
        // own intervals do not know how the machine changed between them).
        let docs = vec![doc(32, 100_000.0, 0.005), doc(4, 90_000.0, 0.005)];
        assert_eq!(in_contention(&docs, &[0, 1], &RaceRule::default()), [1]);
        let docs = vec![doc(32, 100_000.0, 0.005), doc(4, 70_000.0, 0.005)];
        assert!(in_contention(&docs, &[0, 1], &RaceRule::default()).is_empty());
        // Equal within the margin already: no race.
        let docs = vec![doc(32, 100_000.0, 0.005), doc(4, 99_500.0, 0.005)];
        assert!(in_contention(&docs, &[0, 1], &RaceRule::default()).is_empty());
        // Widening to a higher confidence moves both sides out by the t ratio.
        let w = widen(
            &docs[0].result.precision.as_ref().unwrap().iops,
            10,
            0.95,
            0.99,
        );
        assert!(w.lo.unwrap() < 99_500.0 && w.hi.unwrap() > 100_500.0);
    }

    /// The race measures only the contenders and the leader, interleaved and rotated, stops
    /// once the gap is called, and pools each raced configuration's runs.
    #[test]
    fn the_race_measures_the_close_ones_until_called() {
        let first = vec![
            doc(32, 100_000.0, 0.2),
            doc(4, 96_000.0, 0.2),
            doc(1, 10_000.0, 0.01),
        ];
        let order = RefCell::new(Vec::new());
        let out = race(
            first,
            &RaceRule::default(),
            Instant::now() + Duration::from_secs(600),
            &|| false,
            |i, round| {
                order.borrow_mut().push((i, round));
                // Configuration 0 is 10 % ahead, the machine drifts by round.
                let base = 50_000.0 + 10_000.0 * (round % 3) as f64;
                let iops = if i == 0 { base * 1.1 } else { base };
                Ok(doc(if i == 0 { 32 } else { 4 }, iops, 0.2))
            },
        )
        .unwrap();
        let order = order.into_inner();
        assert!(
            order.iter().all(|(i, _)| *i != 2),
            "the far one is never raced"
        );
        assert_eq!(&order[..4], &[(0, 1), (1, 1), (1, 2), (0, 2)], "rotated");
        let rounds = order.len() / 2;
        assert!((2..=15).contains(&rounds), "{rounds} rounds");
        let rec = out[0].result.race.as_ref().unwrap();
        assert_eq!(rec.rounds.len(), rounds + 1, "the first pass is round 0");
        assert_eq!(out[1].result.race.as_ref().unwrap().id, rec.id);
        assert!(out[2].result.race.is_none());
        assert!(rec.confidence > 0.95 && rec.confidence <= 1.0);
        // Pooled: I/Os over seconds of every run.
        let ios: f64 = 100_000.0 + order.iter().filter(|(i, _)| *i == 0).count() as f64;
        assert!(out[0].result.seconds > 1.0 && out[0].result.ios as f64 > ios);
        assert_eq!(
            out[0].result.iops,
            out[0].result.ios as f64 / out[0].result.seconds
        );
    }

    #[test]
    fn a_contender_that_leaves_makes_room_for_more_rounds() {
        // Three rounds of three fit the budget; the third leaves once behind, and the two
        // left, never apart, race on in the time it would have taken.
        let three =
            (RaceRule::default().round + round_ramp(RaceRule::default().round) + ROUND_OVERHEAD)
                * 3;
        let first = vec![
            doc(32, 100_000.0, 0.2),
            doc(4, 99_000.0, 0.2),
            doc(8, 85_000.0, 0.2),
        ];
        let order = RefCell::new(Vec::new());
        race(
            first,
            &RaceRule::default(),
            Instant::now() + three * 3 + Duration::from_millis(100),
            &|| false,
            |i, round| {
                order.borrow_mut().push((i, round));
                let odd = round % 2 == 1;
                let iops = match i {
                    0 if odd => 120_000.0,
                    1 if !odd => 120_000.0,
                    2 => 50_000.0 * (1.0 + 0.001 * round as f64),
                    _ => 100_000.0,
                };
                Ok(doc(32, iops, 0.2))
            },
        )
        .unwrap();
        let order = order.into_inner();
        let of = |c: usize| order.iter().filter(|(i, _)| *i == c).count();
        assert!(of(2) <= 3, "the third leaves within the plan: {order:?}");
        assert!(
            of(0) > 3 && of(0) == of(1),
            "the two race past the plan: {order:?}"
        );
    }

    #[test]
    fn no_time_or_a_stop_ends_the_race_at_once() {
        let first = || vec![doc(32, 100_000.0, 0.2), doc(4, 96_000.0, 0.2)];
        let never = |_: usize, _: usize| -> Result<Document> { panic!("not to be measured") };
        let out = race(
            first(),
            &RaceRule::default(),
            Instant::now(),
            &|| false,
            never,
        )
        .unwrap();
        assert_eq!(out[0].result.iops, 100_000.0);
        let far = Instant::now() + Duration::from_secs(600);
        race(first(), &RaceRule::default(), far, &|| true, never).unwrap();
        // An interrupted round ends it, keeping what was measured.
        let out = race(first(), &RaceRule::default(), far, &|| false, |i, _| {
            let mut d = doc(32, 1.0, 0.2);
            if i == 1 {
                d.result.ended_by = EndedBy::Interrupted;
            }
            Ok(d)
        })
        .unwrap();
        assert_eq!(out.len(), 2);
    }
}
