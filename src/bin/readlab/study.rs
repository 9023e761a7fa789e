//! `readlab study`: run one of the report's experiments (or all), print its summary table; exit 1
//! when a point failed (I/O errors, verification mismatches: totals and first offsets printed) or
//! none could run, 130 when interrupted (the same command with --resume continues).

use crate::args::StudyArgs;
use crate::progress::StudyProgress;
use std::process::ExitCode;

pub fn run(a: &StudyArgs) -> anyhow::Result<ExitCode> {
    let (names, opts) = a.to_options()?;
    if let Some(fleet) = crate::fleet::launch()? {
        return crate::fleet::study(fleet, &a.target, names, opts);
    }
    let inputs: Vec<&std::path::Path> = opts
        .target
        .iter()
        .map(|t| t.as_path())
        .chain(opts.targets.iter().map(|t| t.path.as_path()))
        .collect();
    readlab::outpath::check_dir(&opts.out, &inputs, &[readlab::store::RESULTS, "summary.md"])?;
    a.out_json.check(&inputs)?;
    if let (false, Some(path)) = (a.no_verify, &opts.target)
        && !readlab::study::is_server(path)
    {
        let target = readlab::source::Target::inspect(path)?;
        readlab::runner::check_prepared_throughout(&target, "--no-verify")?;
    }
    let progress = StudyProgress::new().with_monitor(a.monitor);
    let outcome = readlab::study::run(&names, &opts, &progress)?;
    progress.finish();
    let docs = readlab::store::load(&outcome.results)?;
    let report = readlab::verdict::report_of(&docs);
    let verdict = readlab::verdict::of_report(&report);
    a.out_json.emit(&serde_json::json!({
        "schema": "readlab.study/1",
        "studies": names.iter().map(|n| n.name()).collect::<Vec<_>>(),
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
    let failures = progress.failures();
    if failures.any() {
        for l in failures.lines() {
            eprintln!("readlab: {l}");
        }
        return Ok(ExitCode::from(1));
    }
    if outcome.measured + outcome.skipped == 0 && progress.points_not_run() > 0 {
        eprintln!(
            "readlab: no point of the study could run on this target ({} skipped, reasons above)",
            progress.points_not_run()
        );
        return Ok(ExitCode::from(1));
    }
    if outcome.interrupted {
        eprintln!("readlab: interrupted; run the same command with --resume to continue");
        return Ok(crate::progress::interrupted_exit());
    }
    Ok(ExitCode::SUCCESS)
}
