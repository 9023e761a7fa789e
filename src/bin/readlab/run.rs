//! `readlab run`: measure one workload (or several, from comma-separated flags, ending with a
//! verdict), print its table (or JSON document); with `--profile P --check`, hold the result
//! against the profile's and exit 3 on a regression. Exit 1 if a run failed.

use crate::args::{OutputArg, RunArgs};
use crate::progress::{Progress, print_warnings};
use readlab::export::{self, Exporter, JsonExporter, TableExporter};
use std::process::ExitCode;

/// Exit code of a `--check` that found a regression.
pub const REGRESSION: u8 = 3;

pub fn run(a: &RunArgs) -> anyhow::Result<ExitCode> {
    let cfgs = a.to_configs()?;
    if let Some(p) = &a.json {
        let profile = a.profile.as_deref().into_iter();
        let targets: Vec<&std::path::Path> = cfgs.iter().map(|c| c.target.as_path()).collect();
        readlab::outpath::check_file(p, &profile.chain(targets).collect::<Vec<_>>())?;
    }
    let expected = match (&a.profile, a.check) {
        (Some(p), true) => Some(readlab::tune::load_profile(p)?.expected),
        _ => None,
    };
    let progress = Progress::new(a.quiet || a.output == OutputArg::Json);
    let mut docs = Vec::new();
    for cfg in &cfgs {
        let doc = readlab::repeat::run(cfg, a.repeat, &progress)?;
        let interrupted = doc.result.ended_by == readlab::result::EndedBy::Interrupted;
        docs.push(doc);
        if interrupted {
            break;
        }
    }
    progress.finish();
    docs.iter().for_each(print_warnings);
    if let Some(path) = &a.json {
        readlab::fsio::write_file(path, &JsonExporter.render(&docs)?)?;
    }
    match a.output {
        OutputArg::Json => print!("{}", JsonExporter.render(&docs)?),
        OutputArg::Table if docs.len() == 1 => print!("{}", export::run_report(&docs[0])),
        OutputArg::Table => {
            print!("{}", TableExporter.render(&docs)?);
            let verdict = readlab::verdict::text_for(&docs);
            if !verdict.is_empty() {
                println!("\n{verdict}");
            }
        }
    }
    let mut code = ExitCode::SUCCESS;
    for doc in &docs {
        if let Some(lines) = doc.result.failure_summary() {
            for l in lines {
                eprintln!("readlab: {l}");
            }
            code = ExitCode::from(1);
        }
    }
    if docs
        .iter()
        .any(|d| d.result.ended_by == readlab::result::EndedBy::Interrupted)
    {
        eprintln!("readlab: interrupted; the figures cover only the part of the run measured");
        return Ok(crate::progress::interrupted_exit());
    }
    if let (Some(expected), Some(doc)) = (&expected, docs.first()) {
        let check = readlab::compare::check::check(expected, &doc.result, a.tolerance);
        for l in &check.lines {
            eprintln!("readlab: check: {l}");
        }
        if !check.passed {
            eprintln!(
                "readlab: check FAILED: {} on {} is slower than its profile",
                doc.result.label,
                doc.config.target.display()
            );
            return Ok(ExitCode::from(REGRESSION));
        }
        eprintln!("readlab: check passed");
    }
    if docs.iter().any(|d| d.result.requests == 0) {
        // Already said by the result's warning ("nothing was measured …").
        return Ok(ExitCode::from(1));
    }
    Ok(code)
}
