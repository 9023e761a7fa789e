//! The tuner: the report's "selected parameters" table for any device, found by an adaptive search
//! (grow queue size and threads until throughput stops rising, refine, then batch and io_uring
//! features), a Pareto frontier over throughput, p99.9 and CPU, and finalists re-measured
//! interleaved so noise cannot pick the winner.

pub mod answer;
mod commands;
mod profile;
mod text;

pub use answer::{Candidate, Goal, REPORT_FILE, Recommendation, Spread, TuneReport};
pub use commands::{fio_command, readlab_command};
pub use profile::{MAX_PROFILE_BYTES, PROFILE_SCHEMA, Profile, load_profile};
pub use text::recommendation_text;

use crate::config::{RunConfig, Rw, Timing};
use crate::engine::{EngineKind, UringOptions};
use crate::error::{Error, Result};
use crate::result::{Document, StudyTag};
use crate::runner::{self, Observer};
use crate::source::Target;
use crate::stability::StopRule;
use crate::store::Store;
use crate::units::{Style, format_ns};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// What the user asked the tuner for.
#[derive(Debug, Clone)]
pub struct TuneOptions {
    pub target: PathBuf,
    pub block_sizes: Vec<u64>,
    pub goal: Goal,
    /// Largest acceptable p99.9 latency.
    pub p999_max: Option<Duration>,
    /// Largest acceptable CPU, in cores (kernel helper threads included).
    pub cpu_max: Option<f64>,
    pub engines: Vec<EngineKind>,
    pub budget: Duration,
    /// Directory for results.jsonl and the profiles (see [`default_out`]).
    pub out: PathBuf,
    /// Verify every read (default: when the target was prepared by readlab).
    pub verify: Option<bool>,
    /// Runs of each finalist, interleaved, whose medians the table and the trade-offs show (the
    /// first measurement counts as one).
    pub repeat: usize,
}

/// The directory the tuner writes to by default: `readlab-tune-<target name>`.
pub fn default_out(target: &std::path::Path) -> PathBuf {
    crate::outdir::for_target("tune", target)
}

/// Runs of each finalist when the user does not say (`--repeat`).
pub const DEFAULT_REPEAT: usize = 3;

/// The points no other point beats on throughput, p99.9 and CPU at once.
pub fn pareto(points: &[Candidate]) -> Vec<Candidate> {
    use crate::pareto::Better::{Higher, Lower};
    let objectives: Vec<[f64; 3]> = points.iter().map(Candidate::objectives).collect();
    let mut front: Vec<Candidate> = crate::pareto::frontier(&objectives, &[Higher, Lower, Lower])
        .into_iter()
        .map(|i| points[i].clone())
        .collect();
    front.sort_by(|a, b| b.iops.total_cmp(&a.iops));
    front
}

/// The best point for `goal` among `points` (all of which meet the constraints): the rule of
/// [`crate::pareto::pick`] on IOPS and p99.9, which the verdicts share.
pub fn choose(points: &[Candidate], goal: Goal) -> Option<Candidate> {
    let xy: Vec<(f64, f64)> = points.iter().map(|p| (p.iops, p.p999_ns as f64)).collect();
    crate::pareto::pick(&xy, goal.floor()).map(|i| points[i].clone())
}

/// "+6 % IOPS for 2.0× p99.9" — what moving from `from` to `to` buys and costs.
pub fn trade_off(from: &Candidate, to: &Candidate) -> String {
    let d_iops = 100.0 * (to.iops / from.iops.max(1e-9) - 1.0);
    let lat = to.p999_ns as f64 / (from.p999_ns.max(1)) as f64;
    let cpu = to.cpu_cores / from.cpu_cores.max(1e-9);
    format!(
        "{} {}: {:+.0} % IOPS for {:.2}× p99.9 and {:.2}× CPU",
        to.config.engine.name(),
        to.label,
        d_iops,
        lat,
        cpu
    )
}

fn double(v: usize) -> usize {
    v * 2
}

/// Progress of the tuner, for the CLI.
pub trait TuneObserver: Observer {
    fn phase(&self, _what: &str) {}
    fn measured(&self, _c: &Candidate, _doc: &Document) {}
}

struct Search<'a> {
    opts: &'a TuneOptions,
    target: &'a Target,
    store: Store,
    obs: &'a dyn TuneObserver,
    verify: bool,
    deadline: Instant,
    point_runtime: Duration,
    all: Vec<Candidate>,
    failures: crate::failures::Failures,
    /// Every run's warnings, run by run.
    warned: Vec<Vec<String>>,
}

impl Search<'_> {
    fn time_left(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }

    fn base(&self, engine: EngineKind, bs: u64) -> RunConfig {
        let timing = Timing {
            runtime: self.point_runtime,
            ramp: Duration::from_millis(300),
            stable: Some(StopRule {
                window: 3,
                band: 0.03,
                min_runtime: Duration::from_secs(1).min(self.point_runtime),
            }),
        };
        RunConfig::point(self.target, engine, Rw::Randread, bs, self.verify, timing)
    }

    /// Measure one configuration (or reuse it if already measured); None when out of budget or
    /// the configuration cannot run here.
    fn measure(&mut self, cfg: RunConfig) -> Option<Candidate> {
        if let Some(c) = self.all.iter().find(|c| c.config == cfg) {
            return Some(c.clone());
        }
        // Keep a fifth of the budget for re-measuring the finalists.
        let reserve = self.opts.budget / 5;
        if self.time_left() < reserve + cfg.ramp + cfg.runtime || self.obs.cancelled() {
            return None;
        }
        let mut doc = match runner::run(&cfg, self.obs) {
            Ok(d) => d,
            Err(e @ Error::ReadsFailed { .. }) => {
                let what = format!("{} {}", cfg.engine.name(), cfg.label());
                self.obs.phase(&format!("{what}: {e}"));
                self.failures.add_error(&what, &e);
                return None;
            }
            Err(e) => {
                self.obs
                    .phase(&format!("{}: cannot run here: {e}", cfg.label()));
                return None;
            }
        };
        if doc.result.ended_by == crate::result::EndedBy::Interrupted || doc.result.ios == 0 {
            return None;
        }
        doc.study = Some(StudyTag {
            study: crate::study::TUNE.study_name(),
            scheduler: None,
            net: None,
            setting: None,
        });
        self.failures.add(&doc);
        self.warned.push(doc.result.warnings.clone());
        if doc.result.failed() {
            // Stored (the report shows it, marked), never a candidate.
            self.obs.phase(&format!(
                "{}: the run failed (I/O errors or wrong data); not a candidate",
                cfg.label()
            ));
            let _ = self.store.append(doc);
            return None;
        }
        let c = Candidate::of(&doc);
        self.obs.measured(&c, &doc);
        let _ = self.store.append(doc);
        self.all.push(c.clone());
        Some(c)
    }

    fn ok(&self, c: &Candidate) -> bool {
        self.opts
            .p999_max
            .is_none_or(|m| c.p999_ns as u128 <= m.as_nanos())
            && self.opts.cpu_max.is_none_or(|m| c.cpu_cores <= m)
    }

    /// Grow `knob` geometrically from `start` while throughput rises by more than 5 % over the
    /// best so far (starting from `baseline`, the point the knob is grown from) and the latency
    /// constraint holds. One flat step is forgiven, since a single short point is noisy; two in
    /// a row end the climb. Returns the best point seen.
    fn grow(
        &mut self,
        base: &RunConfig,
        set: fn(&mut RunConfig, usize),
        start: usize,
        max: usize,
        next: fn(usize) -> usize,
        baseline: Option<Candidate>,
    ) -> Option<Candidate> {
        let mut best = baseline;
        let mut flat = 0;
        let mut v = start;
        while v <= max {
            let mut cfg = base.clone();
            set(&mut cfg, v);
            let Some(c) = self.measure(cfg) else { break };
            let rising = best.as_ref().is_none_or(|b| c.iops > b.iops * 1.05);
            let over_latency = self
                .opts
                .p999_max
                .is_some_and(|m| c.p999_ns as u128 > 2 * m.as_nanos());
            if best.as_ref().is_none_or(|b| c.iops > b.iops) {
                best = Some(c.clone());
            }
            flat = if rising { 0 } else { flat + 1 };
            if flat >= 2 || over_latency {
                break;
            }
            v = next(v);
        }
        best
    }

    fn tune_engine(&mut self, engine: EngineKind, bs: u64) {
        let cores = crate::env::cpus();
        let base = self.base(engine, bs);
        if !engine.capabilities().asynchronous {
            self.obs.phase(&format!("{}: threads", engine.name()));
            self.grow(
                &base,
                |c, v| c.threads = v,
                1,
                (4 * cores).min(256),
                double,
                None,
            );
            return;
        }
        self.obs.phase(&format!("{}: queue size", engine.name()));
        let Some(best) = self.grow(&base, |c, v| c.iodepth = v, 1, 256, double, None) else {
            return;
        };
        // Refine between the powers of two around the best queue size.
        let qs = best.config.iodepth;
        for q in [qs * 3 / 4, qs * 3 / 2] {
            if q > 1 && q != qs && q <= 256 {
                let mut c = best.config.clone();
                c.iodepth = q;
                self.measure(c);
            }
        }
        let best = self.best_of(engine, bs).unwrap_or(best);
        // A few submitting threads, one at a time as the report did (T2, T3), from T1.
        self.obs.phase(&format!("{}: threads", engine.name()));
        let b = best.config.clone();
        let best = self
            .grow(
                &b,
                |c, v| c.threads = v,
                2,
                cores.max(2) + 1,
                |t| t + 1,
                Some(best.clone()),
            )
            .unwrap_or(best);
        self.obs.phase(&format!("{}: batch", engine.name()));
        let b = best.config.clone();
        let qs = b.iodepth;
        self.grow(&b, |c, v| c.batch = v, 2, qs, double, Some(best.clone()));
        if engine == EngineKind::Uring {
            self.obs.phase("uring: fixed files, fixed buffers, SQ poll");
            let best = self.best_of(engine, bs).unwrap_or(best);
            for (files, bufs, sqpoll) in [
                (true, false, false),
                (false, true, false),
                (true, true, false),
                (true, true, true),
            ] {
                let mut c = best.config.clone();
                UringOptions::edit(&mut c.options, |u| {
                    (u.fixed_files, u.fixed_bufs, u.sqpoll) = (files, bufs, sqpoll)
                });
                if sqpoll && c.threads > 1 {
                    // One SQ poll thread per ring eats a core each: try it with one thread only.
                    c.threads = 1;
                }
                self.measure(c);
            }
        }
    }

    fn best_of(&self, engine: EngineKind, bs: u64) -> Option<Candidate> {
        self.all
            .iter()
            .filter(|c| c.config.engine == engine && c.config.bs == bs && self.ok(c))
            .max_by(|a, b| a.iops.total_cmp(&b.iops))
            .cloned()
    }

    /// Re-measure the finalists interleaved (A B C A B C) and replace their figures with the
    /// medians, so one lucky run cannot win.
    fn remeasure(&mut self, finalists: &[Candidate]) -> Vec<Candidate> {
        if finalists.is_empty() || self.opts.repeat <= 1 {
            return finalists.to_vec();
        }
        self.obs.phase("re-measuring the finalists, interleaved");
        let mut runs: Vec<Vec<Candidate>> = vec![Vec::new(); finalists.len()];
        for _round in 1..self.opts.repeat {
            for (i, f) in finalists.iter().enumerate() {
                let mut cfg = f.config.clone();
                cfg.seed = cfg.seed.wrapping_add(1 + runs[i].len() as u64);
                let cost = cfg.ramp + cfg.runtime;
                if self.time_left() < cost || self.obs.cancelled() {
                    break;
                }
                match runner::run(&cfg, self.obs) {
                    Ok(doc) if doc.result.ended_by != crate::result::EndedBy::Interrupted => {
                        self.failures.add(&doc);
                        self.warned.push(doc.result.warnings.clone());
                        if !doc.result.failed() {
                            runs[i].push(Candidate::of(&doc));
                        }
                    }
                    Err(e) => self.failures.add_error(&f.label, &e),
                    Ok(_) => {}
                }
            }
        }
        finalists
            .iter()
            .zip(runs)
            .map(|(f, mut rs)| {
                rs.push(f.clone());
                let of = |g: fn(&Candidate) -> f64| {
                    crate::interval::interval(&rs.iter().map(g).collect::<Vec<_>>())
                };
                let (iops, p999, cpu) = (
                    of(|r| r.iops),
                    of(|r| r.p999_ns as f64),
                    of(|r| r.cpu_cores),
                );
                let mut c = f.clone();
                c.iops = iops.median;
                c.mb_s = of(|r| r.mb_s).median;
                c.p999_ns = p999.median as u64;
                c.p50_ns = of(|r| r.p50_ns as f64).median as u64;
                c.cpu_cores = cpu.median;
                c.spread = Some(Spread {
                    runs: rs.len(),
                    confidence: crate::interval::coverage(rs.len()),
                    iops,
                    p999_ns: p999,
                    cpu_cores: cpu,
                });
                c
            })
            .collect()
    }
}

/// Search every engine for each block size and recommend a configuration per goal.
pub fn tune(opts: &TuneOptions, obs: &dyn TuneObserver) -> Result<TuneReport> {
    let started = Instant::now();
    let target = Target::inspect(&opts.target)?;
    check(opts)?;
    let verify = opts.verify.unwrap_or(target.prepared_id.is_some());
    if verify {
        runner::check_prepared_throughout(&target, "--no-verify")?;
    }
    // Check every block size against the target before spending any time.
    for &bs in &opts.block_sizes {
        let mut c = RunConfig::new(&opts.target);
        c.bs = bs;
        c.direct = target.direct_supported;
        c.verify = verify;
        runner::prepare_run(&c)?;
    }
    let store = Store::open(&opts.out, true)?;
    // Spread the exploration budget over roughly a dozen points per engine and block size.
    let planned = (opts.engines.len() * opts.block_sizes.len() * 12).max(1) as u32;
    let explore = opts.budget * 4 / 5;
    let point_runtime = (explore / planned)
        .saturating_sub(Duration::from_millis(300))
        .clamp(Duration::from_millis(700), Duration::from_secs(10));
    let mut s = Search {
        opts,
        target: &target,
        store,
        obs,
        verify,
        deadline: started + opts.budget,
        point_runtime,
        all: Vec::new(),
        failures: Default::default(),
        warned: Vec::new(),
    };
    let mut recs = Vec::new();
    for (i, &bs) in opts.block_sizes.iter().enumerate() {
        // Each block size gets its share of what is left.
        let share = s.time_left() / (opts.block_sizes.len() - i) as u32;
        recs.push(s.recommend(bs, share));
    }
    Ok(TuneReport {
        target: opts.target.clone(),
        recommendations: recs,
        seconds: started.elapsed().as_secs_f64(),
        budget_s: opts.budget.as_secs_f64(),
        results: s.store.path().to_path_buf(),
        failures: s.failures,
        warnings: crate::warnings::group(&s.warned).banners,
    })
}

/// Refuse what the tuner cannot search: no engine or block size, a CPU limit that is not a
/// positive number of cores, a budget under 10 s.
fn check(opts: &TuneOptions) -> Result<()> {
    if opts.engines.is_empty() || opts.block_sizes.is_empty() {
        return Err(Error::invalid(
            "give at least one engine and one block size",
        ));
    }
    if opts.cpu_max.is_some_and(|c| c.is_nan() || c <= 0.0) {
        return Err(Error::invalid(
            "--cpu-max must be a positive number of cores",
        ));
    }
    if opts.budget < Duration::from_secs(10) {
        return Err(Error::invalid("--budget must be at least 10s"));
    }
    crate::config::check_length("--budget", opts.budget)?;
    if opts.p999_max.is_some_and(|d| d.is_zero()) {
        return Err(Error::invalid(
            "--p999-max 0 admits no configuration (every read takes time); give a latency such as 500us",
        ));
    }
    if let Some(e) = opts.engines.iter().find(|e| !e.capabilities().does_io) {
        return Err(Error::invalid(format!(
            "--engines {}: engine {0} reads nothing, so there is nothing to tune; give engines that read (e.g. psync,libaio,uring)",
            e.name()
        )));
    }
    Ok(())
}

impl Search<'_> {
    /// Search every engine at block size `bs` within `share` of the time left, re-measure the
    /// finalists, and recommend a configuration per goal.
    fn recommend(&mut self, bs: u64, share: Duration) -> Recommendation {
        let opts = self.opts;
        let bs_deadline = Instant::now() + share;
        let saved = self.deadline;
        self.deadline = bs_deadline.min(saved);
        for &engine in &opts.engines {
            if self.obs.cancelled() {
                break;
            }
            self.tune_engine(engine, bs);
        }
        let mine: Vec<Candidate> = self
            .all
            .iter()
            .filter(|c| c.config.bs == bs)
            .cloned()
            .collect();
        let feasible: Vec<Candidate> = mine.iter().filter(|c| self.ok(c)).cloned().collect();
        let frontier = pareto(&feasible);
        // Finalists: the best point of each goal and the next-fastest frontier points (a single
        // short measurement may have flattered or wronged them), re-measured together.
        let mut finalists: Vec<Candidate> = Vec::new();
        let by_goal = Goal::ALL.iter().filter_map(|&g| choose(&frontier, g));
        for c in by_goal.chain(frontier.iter().take(3).cloned()) {
            if finalists.len() < 5 && !finalists.iter().any(|f| f.config == c.config) {
                finalists.push(c);
            }
        }
        self.deadline = saved;
        let finals = self.remeasure(&finalists);
        let per_goal: Vec<(Goal, Candidate)> = Goal::ALL
            .iter()
            .filter_map(|&g| choose(&finals, g).map(|c| (g, c)))
            .collect();
        let pick = per_goal
            .iter()
            .find(|(g, _)| *g == opts.goal)
            .map(|(_, c)| c.clone());
        // Trade-offs come from the same re-measured medians as the table: the pick against the
        // other finalists on their frontier (first measurements are never mixed in).
        let trade_offs = match &pick {
            Some(p) => pareto(&finals)
                .iter()
                .filter(|c| c.config != p.config)
                .take(4)
                .map(|c| trade_off(p, c))
                .collect(),
            None => Vec::new(),
        };
        let closest = if pick.is_none() {
            closest(&mine, opts)
        } else {
            Vec::new()
        };
        Recommendation {
            bs,
            goal: opts.goal,
            pick,
            per_goal,
            frontier,
            trade_offs,
            closest,
            points_measured: mine.len(),
            finalists: finals,
        }
    }
}

/// With no point within the limits: the three of `mine` with the lowest p99.9, each with the
/// limits it misses.
fn closest(mine: &[Candidate], opts: &TuneOptions) -> Vec<(Candidate, String)> {
    let mut m = mine.to_vec();
    m.sort_by_key(|c| c.p999_ns);
    m.into_iter()
        .take(3)
        .map(|c| {
            let mut why = Vec::new();
            if let Some(max) = opts.p999_max
                && c.p999_ns as u128 > max.as_nanos()
            {
                why.push(format!(
                    "p99.9 {} > {}",
                    format_ns(c.p999_ns as f64, Style::Table),
                    format_ns(max.as_nanos() as f64, Style::Table)
                ));
            }
            if let Some(max) = opts.cpu_max
                && c.cpu_cores > max
            {
                why.push(format!("CPU {:.2} cores > {max}", c.cpu_cores));
            }
            (c, why.join(", "))
        })
        .collect()
}

#[cfg(test)]
mod tests;
