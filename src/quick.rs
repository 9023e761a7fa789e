//! The default job (`readlab` with no arguments): prepare a scratch file here, survey the engines
//! that exist on it, and keep the results next to it.

use crate::config::{RunConfig, Rw};
use crate::engine::EngineKind;
use crate::error::{Error, Result};
use crate::export::{Exporter, JsonLinesExporter};
use crate::prepare::{self, PrepareConfig, PrepareObserver, Prepared};
use crate::result::Document;
use crate::runner::{self, Observer};
use std::path::{Path, PathBuf};
use std::time::Duration;

pub const SCRATCH_NAME: &str = "readlab-scratch.dat";
pub const RESULTS_NAME: &str = "readlab-quick.jsonl";
const DEFAULT_SIZE: u64 = 1 << 30;
const MIN_SIZE: u64 = 64 << 20;

/// What the default job will do.
#[derive(Debug, Clone)]
pub struct QuickPlan {
    pub scratch: PathBuf,
    pub results: PathBuf,
    pub size: u64,
    pub runs: Vec<RunConfig>,
    /// How the close configurations are raced after the first pass.
    pub race: crate::race::RaceRule,
    /// The longest the runs and the race may take together (the scratch file's preparation
    /// apart): [`BUDGET`] by default.
    pub budget: Duration,
}

/// The main job's time for its runs and its race: about a minute on a 2-core machine (the
/// first pass takes some 20 s of it; the rest goes to the race).
pub const BUDGET: Duration = Duration::from_secs(70);

/// The main job's rounds: half a second each. Its close pair (libaio and io_uring at depth 32 on
/// one disk) is a few percent apart, and on this kind of machine a paired half-second round
/// varies less per second measured than a paired second (8.6 % against 12.7 % times
/// 1/√seconds, 30–60 pairs each): in the same minute, more and shorter rounds know the gap
/// better.
pub const ROUND: Duration = Duration::from_millis(500);

/// Progress of the default job.
pub trait QuickObserver: Observer + PrepareObserver {
    fn preparing(&self, _path: &Path, _size: u64) {}
    fn reused(&self, _path: &Path) {}
    fn prepared(&self, _p: &Prepared) {}
    fn starting(&self, _index: usize, _total: usize, _cfg: &RunConfig) {}
    fn finished(&self, _doc: &Document) {}
    /// The first pass is over and the close configurations are being raced in rounds of
    /// `round` each.
    fn racing(&self, _round: Duration) {}
}

/// Plan the survey in directory `dir`: a scratch file of 1 GiB, or less when free space is short.
pub fn plan(dir: &Path, runtime: Duration) -> Result<QuickPlan> {
    crate::config::check_runtime(runtime)?;
    let scratch = dir.join(SCRATCH_NAME);
    let existing = std::fs::metadata(&scratch).map(|m| m.len()).unwrap_or(0);
    let st = rustix::fs::statvfs(dir).map_err(|e| match e {
        // A directory that is not there is bad input (exit 2), like any missing output directory.
        rustix::io::Errno::NOENT | rustix::io::Errno::NOTDIR => Error::invalid(format!(
            "{}: no such directory; create it first or choose another --dir",
            dir.display()
        )),
        e => Error::io(dir, "cannot read free space", e.into()),
    })?;
    let free = st.f_bavail * st.f_frsize + existing;
    let size = (DEFAULT_SIZE.min(free / 4) >> 20) << 20;
    if size < MIN_SIZE {
        return Err(Error::invalid(format!(
            "{}: only {} MiB free; the default job needs at least {} MiB (4x a 64 MiB scratch file)",
            dir.display(),
            free >> 20,
            (MIN_SIZE * 4) >> 20
        )));
    }
    let base = |engine, rw, bs, threads, iodepth| RunConfig {
        engine,
        rw,
        bs,
        threads,
        iodepth,
        runtime,
        ramp: Duration::from_millis(500),
        verify: engine != EngineKind::Null,
        ..RunConfig::new(&scratch)
    };
    let many = (crate::env::cpus() * 2).max(2);
    let runs = vec![
        base(EngineKind::Psync, Rw::Randread, 4096, 1, 1),
        base(EngineKind::Pvsync2, Rw::Randread, 4096, 1, 1),
        base(EngineKind::Psync, Rw::Randread, 4096, many, 1),
        base(EngineKind::Libaio, Rw::Randread, 4096, 1, 32),
        base(EngineKind::Uring, Rw::Randread, 4096, 1, 32),
        base(EngineKind::Psync, Rw::Read, 1 << 20, 1, 1),
        base(EngineKind::Null, Rw::Randread, 4096, 1, 1),
    ];
    Ok(QuickPlan {
        scratch,
        results: dir.join(RESULTS_NAME),
        size,
        runs,
        race: crate::race::RaceRule {
            round: ROUND,
            ..Default::default()
        },
        budget: BUDGET,
    })
}

/// Run the plan: prepare (or reuse) the scratch file, then each run, re-writing the results file
/// after every one so an interruption keeps what was measured.
pub fn execute(plan: &QuickPlan, obs: &dyn QuickObserver) -> Result<Vec<Document>> {
    if prepare::is_prepared(&plan.scratch, plan.size) {
        obs.reused(&plan.scratch);
    } else {
        obs.preparing(&plan.scratch, plan.size);
        let p = prepare::prepare(
            &PrepareConfig {
                path: plan.scratch.clone(),
                size: Some(plan.size),
                overwrite: false,
            },
            obs,
        )?;
        obs.prepared(&p);
    }
    let start = std::time::Instant::now();
    let mut docs = Vec::new();
    for (i, cfg) in plan.runs.iter().enumerate() {
        obs.starting(i, plan.runs.len(), cfg);
        let doc = runner::run(cfg, obs)?;
        obs.finished(&doc);
        docs.push(doc);
        crate::fsio::write_file(&plan.results, &JsonLinesExporter.render(&docs)?)?;
        if obs.cancelled() {
            return Ok(docs);
        }
    }
    let mut said = false;
    // The main job verifies on its own account: its first pass checked every block it read,
    // its rounds only time the reads.
    let rule = crate::race::RaceRule {
        verify_rounds: false,
        ..plan.race
    };
    let docs = crate::race::race(
        docs,
        &rule,
        start + plan.budget,
        &|| obs.cancelled(),
        |i, round| {
            if !said {
                said = true;
                obs.racing(rule.round);
            }
            runner::run(&crate::race::round_config(&plan.runs[i], &rule, round), obs)
        },
    )?;
    crate::fsio::write_file(&plan.results, &JsonLinesExporter.render(&docs)?)?;
    Ok(docs)
}
