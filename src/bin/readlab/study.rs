//! `readlab study`: run one of the report's experiments (or all), print its summary table; exit
//! 130 when interrupted (the same command with --resume continues).

use crate::args::StudyArgs;
use crate::progress::StudyProgress;
use std::process::ExitCode;

pub fn run(a: &StudyArgs) -> anyhow::Result<ExitCode> {
    let (name, opts) = a.to_options()?;
    readlab::outpath::check_dir(
        &opts.out,
        &[&a.target],
        &[readlab::store::RESULTS, "summary.md"],
    )?;
    let progress = StudyProgress::new();
    let outcome = readlab::study::run(&[name], &opts, &progress)?;
    progress.finish();
    println!("{}", outcome.summary);
    let docs = readlab::store::load(&outcome.results)?;
    let verdict = readlab::verdict::text_for(&docs);
    if !verdict.is_empty() {
        println!("{verdict}");
    }
    eprintln!(
        "readlab: {} points measured, {} already done; results: {}; summary: {}",
        outcome.measured,
        outcome.skipped,
        outcome.results.display(),
        outcome.summary_path.display()
    );
    if outcome.interrupted {
        eprintln!("readlab: interrupted; run the same command with --resume to continue");
        return Ok(crate::progress::interrupted_exit());
    }
    Ok(ExitCode::SUCCESS)
}
