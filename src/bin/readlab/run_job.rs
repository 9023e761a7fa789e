//! `readlab run --job FILE`: the job file's configurations, one per job section; every problem it
//! has listed with its line (the first few, then how many more) and every job's target checked,
//! before anything runs. Apart from `run.rs`, which runs what this returns.

use readlab::config::RunConfig;
use std::process::ExitCode;

/// The configurations of `--job FILE`, one per job section in file order (`default` gives what
/// a job does not say); every problem the file has printed with its line, and exit 2, before
/// anything runs.
pub fn job_configs(
    path: &std::path::Path,
    default: &RunConfig,
) -> anyhow::Result<Result<Vec<RunConfig>, ExitCode>> {
    let file = match readlab::fiojob::load(path, default) {
        Ok(f) => f,
        Err(readlab::fiojob::JobError::Read(e)) => return Err(e.into()),
        Err(e @ readlab::fiojob::JobError::Refused { .. }) => {
            if let readlab::fiojob::JobError::Refused { path, problems } = &e {
                // The first few, then how many more: a file of a thousand unknown options is
                // not a thousand lines.
                for p in problems.iter().take(PROBLEMS_SHOWN) {
                    eprintln!("readlab: {}: {p}", path.display());
                }
                if problems.len() > PROBLEMS_SHOWN {
                    eprintln!(
                        "readlab: {}: … and {} more",
                        path.display(),
                        problems.len() - PROBLEMS_SHOWN
                    );
                }
            }
            eprintln!("readlab: error: {e}");
            return Ok(Err(ExitCode::from(2)));
        }
    };
    // Every job's target is checked before the first runs: a missing one is said now, not
    // after the jobs before it ran for their whole runtime. (An NBD export is checked when its
    // job connects.)
    for j in &file.jobs {
        let t = &j.config.target;
        if t.to_str().is_some_and(readlab::nbd::NbdUrl::is_url) {
            continue;
        }
        if let Err(e) = readlab::source::Target::inspect(t) {
            eprintln!(
                "readlab: error: {}: line {} [{}]: {e}; nothing ran",
                path.display(),
                j.line,
                j.name
            );
            return Ok(Err(ExitCode::from(2)));
        }
    }
    for n in &file.notes {
        errln!("readlab: note: {}: {n}", path.display());
    }
    let alongside = file.concurrent_in_fio();
    if !alongside.is_empty() {
        errln!(
            "readlab: note: fio would run [{}] alongside the jobs before (no stonewall); readlab runs every job alone, one after another",
            alongside.join("], [")
        );
    }
    Ok(Ok(file.jobs.into_iter().map(|j| j.config).collect()))
}

/// How many of a job file's problems are listed (then how many more there are).
const PROBLEMS_SHOWN: usize = 10;
