//! Studies: the report's experiments as one command each. A study is a declarative list of runs
//! (data, not code paths); the executor runs the points not yet in the results store, appending
//! each as it finishes, and ends with the summary table the report would print.

mod plan;
mod scheduler;
mod summary;

/// For `crate::fleet::study`, which runs the same plans across MPI ranks.
pub(crate) use plan::{Context, plan};
pub use plan::{Point, StudyName, Timing};
pub use scheduler::SchedulerGuard;
pub use summary::summarize;

use crate::error::{Error, Result};
use crate::result::Document;
use crate::runner::{self, Observer};
use crate::source::Target;
use crate::store::Store;
use std::path::{Path, PathBuf};

/// What the user asked for.
#[derive(Debug, Clone)]
pub struct StudyOptions {
    pub target: PathBuf,
    pub quick: bool,
    pub out: PathBuf,
    pub resume: bool,
    /// Largest thread count of the `threads` study (default 4 × cores, at most 256).
    pub max_threads: Option<usize>,
    /// Verify every read (default: when the target was prepared by readlab).
    pub verify: Option<bool>,
}

/// Progress of a study, for the CLI. The executor itself never prints.
pub trait StudyObserver: Observer {
    /// A study starts with `total` points, `skipped` of them already in the store.
    fn study_start(&self, _name: StudyName, _total: usize, _skipped: usize) {}
    fn point_start(&self, _index: usize, _total: usize, _point: &Point) {}
    fn point_done(&self, _doc: &Document) {}
    fn note(&self, _message: &str) {}
}

/// What a finished (or interrupted) set of studies left behind.
#[derive(Debug)]
pub struct Outcome {
    pub results: PathBuf,
    pub summary_path: PathBuf,
    pub summary: String,
    pub interrupted: bool,
    pub measured: usize,
    pub skipped: usize,
}

/// Run studies `names` on the target, storing every point in `opts.out/results.jsonl`.
pub fn run(names: &[StudyName], opts: &StudyOptions, obs: &dyn StudyObserver) -> Result<Outcome> {
    let target = Target::inspect(&opts.target)?;
    let mut store = Store::open(&opts.out, opts.resume)?;
    let timing = if opts.quick {
        Timing::quick()
    } else {
        Timing::full()
    };
    let verify = opts.verify.unwrap_or(target.prepared_id.is_some());
    if verify && target.prepared_id.is_none() {
        return Err(Error::NotPrepared {
            path: target.path.clone(),
        });
    }
    let ctx = plan::Context {
        target: &target,
        timing,
        quick: opts.quick,
        verify,
        max_threads: opts.max_threads,
    };
    let expanded: Vec<StudyName> = names.iter().flat_map(|n| n.expand()).collect();
    let (mut measured, mut skipped, mut interrupted) = (0, 0, false);
    for name in &expanded {
        // Later studies read what earlier ones found (e.g. batch uses the best queue sizes), so
        // each plan is made when its study starts.
        if *name == StudyName::Scheduler {
            let s = scheduler::run_scheduler_study(&ctx, &mut store, obs)?;
            measured += s.0;
            skipped += s.1;
            interrupted = s.2;
        } else {
            let points = plan::plan(*name, &ctx, store.docs())?;
            let (m, s, i) = run_points(*name, &points, &mut store, obs)?;
            measured += m;
            skipped += s;
            interrupted = i;
        }
        if interrupted {
            break;
        }
    }
    let summary = summarize(&expanded, store.docs());
    let summary_path = opts.out.join("summary.md");
    crate::fsio::write_file(&summary_path, &summary)?;
    Ok(Outcome {
        results: store.path().to_path_buf(),
        summary_path,
        summary,
        interrupted,
        measured,
        skipped,
    })
}

/// Run the points not yet stored; returns (measured, skipped, interrupted).
pub(crate) fn run_points(
    name: StudyName,
    points: &[Point],
    store: &mut Store,
    obs: &dyn StudyObserver,
) -> Result<(usize, usize, bool)> {
    let todo: Vec<&Point> = points
        .iter()
        .filter(|p| !store.contains(Some(&p.tag), &p.cfg))
        .collect();
    let skipped = points.len() - todo.len();
    obs.study_start(name, points.len(), skipped);
    let mut measured = 0;
    for (i, p) in todo.iter().enumerate() {
        if obs.cancelled() {
            return Ok((measured, skipped, true));
        }
        obs.point_start(skipped + i, points.len(), p);
        let mut doc = match runner::run(&p.cfg, obs) {
            Ok(d) => d,
            // A point that cannot run on this target (an engine or feature it lacks) does not
            // end the study; it is noted and the next point runs.
            Err(e) => {
                obs.note(&format!("{}: skipped: {e}", p.cfg.label()));
                continue;
            }
        };
        if doc.result.ended_by == crate::result::EndedBy::Interrupted {
            // The point in flight is the only thing lost.
            return Ok((measured, skipped, true));
        }
        doc.study = Some(p.tag.clone());
        obs.point_done(&doc);
        store.append(doc)?;
        measured += 1;
    }
    Ok((measured, skipped, false))
}

/// The directory studies write to by default: `readlab-study-<target name>`.
pub fn default_out(target: &Path) -> PathBuf {
    crate::outdir::for_target("study", target)
}
