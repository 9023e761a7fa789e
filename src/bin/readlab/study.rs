//! `readlab study`: run one of the report's experiments (or all), print its summary table; exit
//! 130 when interrupted (the same command with --resume continues).

use crate::args::StudyArgs;
use crate::progress::StudyProgress;
use std::process::ExitCode;

pub fn run(a: &StudyArgs) -> anyhow::Result<ExitCode> {
    let (names, opts) = a.to_options()?;
    let inputs: Vec<&std::path::Path> = std::iter::once(opts.target.as_path())
        .chain(opts.targets.iter().map(|t| t.path.as_path()))
        .collect();
    readlab::outpath::check_dir(&opts.out, &inputs, &[readlab::store::RESULTS, "summary.md"])?;
    let progress = StudyProgress::new().with_monitor(a.monitor);
    let outcome = readlab::study::run(&names, &opts, &progress)?;
    progress.finish();
    println!("{}", outcome.summary);
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
