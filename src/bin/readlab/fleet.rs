//! `readlab run` and `readlab study` under an MPI launcher (mpirun, srun, the MPI Operator): every
//! rank measures, rank 0 alone prints, writes the JSON document or the results store, and says
//! what failed; the other ranks stay quiet and exit with the same code. A rank stuck at a meeting
//! point aborts the whole job rather than leaving it hanging.

use crate::args::OutputArg;
use crate::progress::{Progress, StudyProgress, print_warnings};
use readlab::export::{self, Exporter, JsonExporter};
use readlab::fleet::Fleet;
use readlab::runner::{Observer, Tick};
use readlab::study::{Point, StudyName, StudyObserver, StudyOptions};
use std::path::PathBuf;
use std::process::ExitCode;

/// The fleet this process belongs to, if an MPI launcher started it.
pub fn launch() -> anyhow::Result<Option<Fleet>> {
    Ok(Fleet::launch()?)
}

/// Run `f` as one rank of `fleet`; the fleet is finalised before returning (every rank reaches
/// the end together), except after a stuck rank, when the job is aborted. An error is said
/// before MPI is finalised — by rank 0 alone when every rank has it — and the ranks meet once
/// more after that, so no rank exits (which makes mpirun end the job) before it was said.
fn as_rank(
    fleet: Fleet,
    f: impl FnOnce(&Fleet) -> anyhow::Result<ExitCode>,
) -> anyhow::Result<ExitCode> {
    let e = match f(&fleet) {
        Ok(code) => {
            drop(fleet);
            return Ok(code);
        }
        Err(e) => e,
    };
    let lib = e.downcast_ref::<readlab::Error>();
    if let Some(readlab::Error::FleetStuck(m)) = lib {
        eprintln!("readlab: error: {m}");
        fleet.abort(1)
    }
    let code = match lib {
        Some(l) if l.is_bad_input() => ExitCode::from(2),
        Some(readlab::Error::Interrupted { .. }) => crate::progress::interrupted_exit(),
        _ => ExitCode::from(1),
    };
    // Every rank has an agreed error; rank 0 says it.
    let agreed = matches!(lib, Some(readlab::Error::Fleet { .. }));
    if fleet.is_root() || !agreed {
        eprintln!("readlab: error: {}", crate::one_line(&e));
    }
    if agreed {
        let _ = fleet.all_gather(&[0], readlab::fleet::MEET_WITHIN, "the end");
    }
    drop(fleet);
    Ok(code)
}

/// Refuse, before anything runs, what cannot work across ranks: rank 0 says why, every rank
/// exits 2 once it has been said.
fn refuse(fleet: Fleet, why: &str) -> anyhow::Result<ExitCode> {
    if fleet.is_root() {
        eprintln!("readlab: error: {why}");
    }
    let _ = fleet.all_gather(&[0], readlab::fleet::MEET_WITHIN, "the end");
    drop(fleet);
    Ok(ExitCode::from(2))
}

/// Quiet progress for ranks other than 0: nothing shown, signals still stop the run.
struct Quiet(Progress);

impl Observer for Quiet {
    fn tick(&self, _: &Tick) {}
    fn cancelled(&self) -> bool {
        self.0.cancelled()
    }
}

impl StudyObserver for Quiet {
    fn study_start(&self, _: StudyName, _: usize, _: usize) {}
    fn point_start(&self, _: usize, _: usize, _: &Point) {}
}

/// What of `readlab run`'s arguments a rank's run uses, handed over as data so that this module
/// and the `run` command do not name each other.
pub struct RunOutputs {
    pub json: Option<PathBuf>,
    pub profile: Option<PathBuf>,
    pub output: OutputArg,
    pub quiet: bool,
    pub repeat: usize,
    /// `--force`: the JSON file may replace one readlab did not write.
    pub force: bool,
}

/// `readlab run` on every rank.
pub fn run(
    fleet: Fleet,
    a: &RunOutputs,
    cfg: readlab::config::RunConfig,
) -> anyhow::Result<ExitCode> {
    as_rank(fleet, |fleet| {
        let root = fleet.is_root();
        let checked = match (&a.json, root) {
            (Some(p), true) => {
                let profile = a.profile.as_deref().into_iter();
                readlab::outpath::check_file(
                    p,
                    &profile.chain([cfg.target.as_path()]).collect::<Vec<_>>(),
                    a.force,
                )
            }
            _ => Ok(()),
        };
        fleet.agree(checked, "output check")?;
        let progress = Progress::new(!root || a.quiet || a.output == OutputArg::Json);
        let doc = readlab::fleet::run::repeated(fleet, &cfg, a.repeat, &progress)?;
        progress.finish();
        let Some(doc) = doc else {
            return Ok(ExitCode::SUCCESS);
        };
        print_warnings(std::slice::from_ref(&doc));
        let docs = std::slice::from_ref(&doc);
        if let Some(path) = &a.json {
            readlab::fsio::write_file(path, &JsonExporter.render(docs)?)?;
        }
        match a.output {
            OutputArg::Json => outp!("{}", JsonExporter.render(docs)?),
            OutputArg::Table => outp!(
                "{}{}",
                crate::out().fit(&export::run_report(&doc)),
                crate::out().fit(&readlab::fleet::table::fleet_report(&doc))
            ),
        }
        if let Some(lines) = doc.result.failure_summary() {
            for l in lines {
                errln!("readlab: {l}");
            }
            return Ok(ExitCode::from(1));
        }
        if doc.result.ended_by == readlab::result::EndedBy::Interrupted {
            errln!("readlab: interrupted; the figures cover only the part of the run measured");
            return Ok(crate::progress::interrupted_exit());
        }
        Ok(ExitCode::SUCCESS)
    })
}

/// `readlab study` on every rank; rank 0 keeps the results store.
pub fn study(
    fleet: Fleet,
    target: &Option<std::path::PathBuf>,
    names: Vec<StudyName>,
    opts: StudyOptions,
    json: bool,
    force: bool,
) -> anyhow::Result<ExitCode> {
    if json {
        return refuse(
            fleet,
            "under mpirun a study's results are rank 0's store (--out DIR, results.jsonl): \
             --json and --output json are not written by a study across ranks; leave them out \
             and read the store (readlab report DIR)",
        );
    }
    if let Err(e) = readlab::fleet::study::check(&names) {
        return refuse(fleet, &e.to_string());
    }
    as_rank(fleet, |fleet| {
        let root = fleet.is_root();
        let checked = if root {
            readlab::outpath::check_dir(
                &opts.out,
                &target.iter().map(|t| t.as_path()).collect::<Vec<_>>(),
                &[readlab::store::RESULTS, "summary.md"],
                force,
            )
        } else {
            Ok(())
        };
        fleet.agree(checked, "output check")?;
        let outcome = if root {
            let progress = StudyProgress::new();
            let o = readlab::fleet::study::run(fleet, &names, &opts, &progress)?;
            progress.finish();
            o
        } else {
            readlab::fleet::study::run(fleet, &names, &opts, &Quiet(Progress::new(true)))?
        };
        let Some(outcome) = outcome else {
            return Ok(ExitCode::SUCCESS);
        };
        let docs = readlab::store::load(&outcome.results)?;
        outp!(
            "{}",
            crate::progress::where_it_is(&docs, &outcome.summary_path, &opts.out)
        );
        errln!(
            "readlab: {} points measured by {} ranks, {} already done; results: {}; summary: {}",
            outcome.measured,
            fleet.size(),
            outcome.skipped,
            outcome.results.display(),
            outcome.summary_path.display()
        );
        if outcome.interrupted {
            errln!("readlab: interrupted; run the same command with --resume to continue");
            return Ok(crate::progress::interrupted_exit());
        }
        Ok(ExitCode::SUCCESS)
    })
}
