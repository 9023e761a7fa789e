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
    a.out_json.check(&[&a.target])?;
    let progress = StudyProgress::new();
    let outcome = readlab::study::run(&[name], &opts, &progress)?;
    progress.finish();
    let docs = readlab::store::load(&outcome.results)?;
    let report = readlab::verdict::report_of(&docs);
    let verdict = readlab::verdict::of_report(&report);
    a.out_json.emit(&serde_json::json!({
        "schema": "readlab.study/1",
        "study": name.name(),
        "out": opts.out,
        "results": outcome.results,
        "summary_path": outcome.summary_path,
        "measured": outcome.measured,
        "skipped": outcome.skipped,
        "interrupted": outcome.interrupted,
        "verdict": readlab::verdict::render::json(&verdict, &report.points),
        "runs": docs,
    }))?;
    if !a.out_json.is_json() {
        println!("{}", outcome.summary);
        let text = readlab::verdict::text_for(&docs);
        if !text.is_empty() {
            println!("{text}");
        }
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
