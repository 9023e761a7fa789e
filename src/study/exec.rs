//! The executor every study shares: run the points not yet stored, each measured `repeat` times,
//! appending each as it finishes. Apart from the registry in `study/mod.rs` so that the studies
//! with executors of their own (cache, scheduler, devices) and the registry listing them do not
//! name each other.

use super::{Counts, Point, StudyName, StudyObserver};
use crate::config::RunConfig;
use crate::error::{Error, Result};
use crate::result::Document;
use crate::runner;
use crate::store::Store;

/// Run the points not yet stored.
pub fn run_points(
    name: StudyName,
    points: &[Point],
    repeat: usize,
    store: &mut Store,
    obs: &dyn StudyObserver,
) -> Result<Counts> {
    run_each(
        name,
        points,
        |p| p,
        |p| measure(&p.cfg, repeat, obs),
        store,
        obs,
    )
}

/// Run the items not yet stored, each measured by `run` (its point is `point(item)`), appending
/// each as it finishes: the executor every study shares.
pub fn run_each<T>(
    name: StudyName,
    items: &[T],
    point: impl Fn(&T) -> &Point,
    run: impl Fn(&T) -> Result<Document>,
    store: &mut Store,
    obs: &dyn StudyObserver,
) -> Result<Counts> {
    let todo: Vec<&T> = items
        .iter()
        .filter(|i| {
            let p = point(i);
            !store.contains(Some(&p.tag), &p.cfg)
        })
        .collect();
    let skipped = items.len() - todo.len();
    obs.study_start(name, items.len(), skipped);
    let planned = crate::eta::planned_series(todo.iter().map(|i| &point(i).cfg));
    obs.points_planned(&planned);
    let mut measured = 0;
    let sizes = Sizes::of(todo.iter().map(|i| point(i).cfg.target.as_path()));
    for (i, item) in todo.iter().enumerate() {
        if obs.cancelled() {
            return Ok(Counts {
                measured,
                skipped,
                interrupted: true,
            });
        }
        let p = point(item);
        obs.point_start(skipped + i, items.len(), p);
        let mut doc = match run(item) {
            Ok(d) => d,
            Err(e @ Error::ReadsFailed { .. }) => {
                obs.point_failed(p, &e);
                continue;
            }
            // A point that cannot run on this target (an engine or feature it lacks) does not
            // end the study; it is noted and the next point runs.
            Err(e) => {
                obs.point_skipped(p, &e);
                continue;
            }
        };
        if doc.result.ended_by == crate::result::EndedBy::Interrupted {
            // The point in flight is the only thing lost.
            return Ok(Counts {
                measured,
                skipped,
                interrupted: true,
            });
        }
        // A target that changed size under the study (truncated, grown) makes its points
        // incomparable: this one is not stored and the study ends, saying so.
        sizes.check(skipped + i + 1, items.len())?;
        doc.study = Some(p.tag.clone());
        obs.point_done(&doc);
        store.append(doc)?;
        measured += 1;
    }
    Ok(Counts {
        measured,
        skipped,
        interrupted: false,
    })
}

/// One point measured `repeat` times back to back (seeds seed, seed+1, …) and combined into its
/// median run with an interval per figure; an interrupted repetition is returned as it is.
fn measure(cfg: &RunConfig, repeat: usize, obs: &dyn StudyObserver) -> Result<Document> {
    let mut docs = Vec::with_capacity(repeat.max(1));
    for round in 0..repeat.max(1) {
        let mut c = cfg.clone();
        c.seed = c.seed.wrapping_add(round as u64);
        let doc = runner::run(&c, obs)?;
        if doc.result.ended_by == crate::result::EndedBy::Interrupted {
            return Ok(doc);
        }
        docs.push(doc);
    }
    let mut doc = crate::repeat::combine(docs).expect("at least one run");
    // The point is stored under the configuration the plan asked for.
    doc.config.seed = cfg.seed;
    Ok(doc)
}

/// The sizes of a study's regular-file targets when it began, to find one that changed mid-study.
struct Sizes(Vec<(std::path::PathBuf, u64)>);

impl Sizes {
    fn size(p: &std::path::Path) -> Option<u64> {
        std::fs::metadata(p)
            .ok()
            .filter(|m| m.is_file())
            .map(|m| m.len())
    }

    fn of<'a>(targets: impl Iterator<Item = &'a std::path::Path>) -> Sizes {
        let mut v: Vec<(std::path::PathBuf, u64)> = Vec::new();
        for t in targets {
            if !v.iter().any(|(p, _)| p == t)
                && let Some(n) = Sizes::size(t)
            {
                v.push((t.to_path_buf(), n));
            }
        }
        Sizes(v)
    }

    /// Refuse to go on when a target's size is not what it was (point `n` of `of` just ran).
    fn check(&self, n: usize, of: usize) -> Result<()> {
        for (p, was) in &self.0 {
            let now = Sizes::size(p);
            if now != Some(*was) {
                let bytes =
                    |b: u64| crate::units::format_bytes(b as f64, crate::units::Style::Table);
                return Err(Error::invalid(format!(
                    "{}: the target changed under the study (it was {}, it is {} at point {n} of {of}); that point was not kept and the study stopped: prepare the target again and run the study with --resume",
                    p.display(),
                    bytes(*was),
                    now.map_or_else(|| "gone".to_string(), bytes),
                )));
            }
        }
        Ok(())
    }
}
