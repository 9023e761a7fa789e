//! Studies under MPI: the same points as a lone study, each measured by every rank at once.
//! Rank 0 alone opens the results store (so resume works as always) and plans each study from
//! what it holds; it tells the other ranks the points still to run, and every point is one fleet
//! run whose document rank 0 appends. The scheduler study is left out: each rank would switch its
//! own device's scheduler. Given a server's URL (`nbd://…`), the clients study reads that one
//! server from every rank: each point's clients are spread over the ranks, and its document is
//! the whole point (all its clients) with each rank's share in the fleet record.

use super::{Fleet, MEET_WITHIN, run};
use crate::config::RunConfig;
use crate::error::{Error, Result};
use crate::result::{Document, StudyTag};
use crate::source::{Target, TargetKind};
use crate::store::Store;
use crate::study::{
    Context, Exec, Outcome, Point, StudyName, StudyObserver, StudyOptions, Timing, summarize,
};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// What rank 0 tells every rank before a study: its points still to run, and how many there are.
#[derive(Debug, Serialize, Deserialize)]
struct Plan {
    total: usize,
    todo: Vec<(StudyTag, RunConfig)>,
}

/// Refuse, before anything runs, a selection of which no study runs across ranks: the
/// scheduler study (each rank would switch its own device's I/O scheduler, settings a study must
/// hold alone), the cache and devices studies and the networked ones (executors of their own).
/// A selection with some that do (`all`) runs those and notes the others.
pub fn check(names: &[StudyName]) -> Result<()> {
    let runs =
        |n: &StudyName| matches!(n.spec().exec, Exec::Plan(_)) || crate::study::reads_a_server(*n);
    if names.iter().any(runs) {
        return Ok(());
    }
    let list = names
        .iter()
        .map(|n| n.name())
        .collect::<Vec<_>>()
        .join(", ");
    Err(Error::invalid(format!(
        "the {list} study does not run across MPI ranks (it needs the device's settings to \
         itself, or runs servers of its own): run it on one host without mpirun"
    )))
}

/// Run studies `names` on every rank's target (`opts.target` may name `{rank}`, `{local_rank}`,
/// `{host}`); rank 0 stores every point in `opts.out/results.jsonl` and gets the outcome (None
/// on the others). Collective.
pub fn run(
    fleet: &Fleet,
    names: &[StudyName],
    opts: &StudyOptions,
    obs: &dyn StudyObserver,
) -> Result<Option<Outcome>> {
    check(names)?;
    let Some(template) = &opts.target else {
        return Err(Error::invalid(
            "under mpirun a study reads each rank's own file or device: give it as TARGET \
             (it may name {rank}, {local_rank}, {host})",
        ));
    };
    let (target, timing, verify) = set_up(fleet, names, opts, template)?;
    let opened = if fleet.is_root() {
        Store::open(&opts.out, opts.resume).map(Some)
    } else {
        Ok(None)
    };
    let mut store = fleet.agree(opened, "results store")?;
    let ctx = Context {
        target: &target,
        timing,
        quick: opts.quick,
        verify,
        max_threads: opts.max_threads,
        repeat: 1,
        targets: &[],
        allow_device_changes: false,
        network: None,
    };
    let across = Across {
        fleet,
        obs,
        template,
        server: target.kind == TargetKind::Nbd,
    };
    let mut tally = Tally::default();
    for &name in names {
        if across.server {
            obs.note(&format!(
                "{name} study against {}: the clients of each point spread over the {} ranks (rank r runs N/{}, one more when r < N mod {}); {}",
                target.path.display(),
                fleet.size(),
                fleet.size(),
                fleet.size(),
                crate::study::GIVEN_SERVER
            ));
        }
        let plan = match name.spec().exec {
            _ if across.server => None,
            Exec::Plan(plan) => Some(plan),
            _ => {
                // The scheduler study would switch each rank's own device's I/O scheduler; the
                // networked studies start servers of their own.
                obs.note(&format!(
                    "{name} study skipped: it has its own executor, which does not run across MPI ranks; run it on one host without mpirun"
                ));
                continue;
            }
        };
        let plan = across.plan(name, plan, &ctx, store.as_ref())?;
        across.study(name, plan, store.as_mut(), &mut tally)?;
        if tally.interrupted {
            break;
        }
    }
    let Some(store) = store else {
        return Ok(None);
    };
    let summary = summarize(names, store.docs());
    let summary_path = opts.out.join("summary.md");
    crate::fsio::write_file(&summary_path, &summary)?;
    Ok(Some(Outcome {
        results: store.path().to_path_buf(),
        summary_path,
        summary,
        interrupted: tally.interrupted,
        measured: tally.measured,
        skipped: tally.skipped,
    }))
}

/// What every rank agrees on before its studies: its target (inspected), the timing, and
/// whether the reads are verified (rank 0's decision; every rank's target must then be
/// prepared).
fn set_up(
    fleet: &Fleet,
    names: &[StudyName],
    opts: &StudyOptions,
    template: &Path,
) -> Result<(Target, Timing, bool)> {
    let target = fleet.agree(
        crate::study::inspect(&fleet.expand(template), names),
        "study set-up",
    )?;
    let timing = fleet.agree(crate::study::timing(opts), "study set-up")?;
    let said = fleet.broadcast(
        &[opts.verify.unwrap_or(target.prepared_id.is_some()) as u8],
        MEET_WITHIN,
        "study set-up",
    )?;
    let verify = said.first() == Some(&1);
    let prepared = if verify && target.prepared_id.is_none() {
        Err(Error::NotPrepared {
            path: target.path.clone(),
        })
    } else {
        Ok(())
    };
    fleet.agree(prepared, "study set-up")?;
    Ok((target, timing, verify))
}

/// A study's plan (its [`Exec::Plan`]).
type PlanFn = fn(&Context, &[Document]) -> Vec<RunConfig>;

/// The points measured, found stored already, and whether the studies were interrupted.
#[derive(Default)]
struct Tally {
    measured: usize,
    skipped: usize,
    interrupted: bool,
}

/// The ranks measuring the studies together.
struct Across<'a> {
    fleet: &'a Fleet,
    obs: &'a dyn StudyObserver,
    /// Each rank's target as given (it may name `{rank}`, `{local_rank}`, `{host}`).
    template: &'a Path,
    /// The target is one server that every rank reads: each point's clients spread over them.
    server: bool,
}

impl Across<'_> {
    /// Study `name`'s points still to run, as rank 0 planned them from its store (`plan`, or the
    /// server's points when the ranks read one server) and told every rank.
    fn plan(
        &self,
        name: StudyName,
        plan: Option<PlanFn>,
        ctx: &Context,
        store: Option<&Store>,
    ) -> Result<Plan> {
        let fleet = self.fleet;
        let planned: Result<Plan> = match store {
            Some(s) => {
                let points: Vec<Point> = match plan {
                    Some(plan) => plan(ctx, s.docs())
                        .into_iter()
                        .map(|cfg| Point::of(name, cfg))
                        .collect(),
                    None => crate::study::server_points(name, ctx, Some(fleet.size()))
                        .unwrap_or_default(),
                };
                let total = points.len();
                let todo = points
                    .into_iter()
                    .map(|p| Point {
                        tag: p.tag,
                        cfg: fleet_config(p.cfg),
                    })
                    .filter(|p| !crate::study::is_stored(s, p))
                    .map(|p| (p.tag, p.cfg))
                    .collect();
                Ok(Plan { total, todo })
            }
            None => Ok(Plan {
                total: 0,
                todo: Vec::new(),
            }),
        };
        let planned = fleet.agree(planned, "study plan")?;
        let said = fleet.broadcast(
            &serde_json::to_vec(&planned).expect("plans serialise"),
            MEET_WITHIN,
            "study plan",
        )?;
        serde_json::from_slice(&said)
            .map_err(|e| Error::Mpi(format!("fleet: rank 0 sent an unreadable plan ({e})")))
    }

    /// Measure study `name`'s points still to run, each a fleet run on every rank, stopping when
    /// any rank was cancelled; rank 0 appends each point's document to `store`.
    fn study(
        &self,
        name: StudyName,
        plan: Plan,
        mut store: Option<&mut Store>,
        tally: &mut Tally,
    ) -> Result<()> {
        let (fleet, obs) = (self.fleet, self.obs);
        let done = plan.total - plan.todo.len();
        tally.skipped += done;
        obs.study_start(name, plan.total, done);
        let planned = crate::eta::planned_series(plan.todo.iter().map(|(_, c)| c));
        obs.points_planned(&planned);
        for (i, (tag, cfg)) in plan.todo.into_iter().enumerate() {
            let cancelled =
                fleet.all_gather(&[obs.cancelled() as u8], MEET_WITHIN, "next point")?;
            if cancelled.iter().any(|c| c.first() == Some(&1)) {
                tally.interrupted = true;
                break;
            }
            let point = crate::study::Point {
                tag: tag.clone(),
                cfg: cfg.clone(),
            };
            obs.point_start(done + i, plan.total, &point);
            let mut each = cfg;
            each.target = self.template.to_path_buf();
            let outcome = if self.server {
                run::spread(fleet, &each, obs)
            } else {
                run::once(fleet, &each, obs)
            };
            let o = match outcome {
                Ok(o) => o,
                // A point that cannot run on some rank's target is noted; the next one runs.
                Err(e @ Error::Fleet { .. }) => {
                    obs.point_skipped(&point, &e);
                    continue;
                }
                Err(e) => return Err(e),
            };
            if o.interrupted {
                tally.interrupted = true;
                break;
            }
            let appended = match (o.doc, store.as_deref_mut()) {
                (Some(mut doc), Some(s)) => {
                    doc.study = Some(tag);
                    obs.point_done(&doc);
                    s.append(doc)
                }
                _ => Ok(()),
            };
            fleet.agree(appended, "results store")?;
            tally.measured += 1;
        }
        Ok(())
    }
}

/// A study point as a fleet measures it: a fixed runtime (stopping once stable is each rank's
/// own decision, and the ranks measure one common window).
fn fleet_config(mut cfg: RunConfig) -> RunConfig {
    cfg.stop_when_stable = None;
    cfg
}
