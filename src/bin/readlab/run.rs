//! `readlab run`: measure one workload on one target (or on several at once), print its table
//! (or JSON document), exit 1 if it (or any target) failed.

use crate::args::{OutputArg, RunArgs};
use crate::progress::{Progress, print_warnings};
use readlab::export::{self, Exporter, JsonExporter};
use std::path::PathBuf;
use std::process::ExitCode;

pub fn run(a: &RunArgs) -> anyhow::Result<ExitCode> {
    let cfg = a.to_config()?;
    if let Some(fleet) = crate::fleet::launch()? {
        return crate::fleet::run(fleet, a, cfg);
    }
    let words: Vec<PathBuf> = std::iter::once(cfg.target.clone())
        .chain(a.more_targets.iter().cloned())
        .collect();
    let specs = readlab::targets::parse(&words, &a.names)?;
    // One target named by its path alone runs exactly as it always has.
    let single = specs.len() == 1 && a.names.is_empty() && specs[0].path == cfg.target;
    if !single && a.repeat > 1 {
        return Err(readlab::Error::InvalidArgument(
            "--repeat takes one target; run the targets apart to repeat them".into(),
        )
        .into());
    }
    if let Some(p) = &a.json {
        let profile = a.profile.as_deref().into_iter();
        let paths: Vec<_> = specs.iter().map(|t| t.path.as_path()).collect();
        readlab::outpath::check_file(p, &profile.chain(paths).collect::<Vec<_>>())?;
    }
    let progress = Progress::new(a.quiet || a.output == OutputArg::Json).with_monitor(a.monitor);
    let doc = if single {
        readlab::repeat::run(&cfg, a.repeat, &progress)?
    } else {
        readlab::runner::run_targets(&cfg, &specs, &progress)?
    };
    progress.finish();
    print_warnings(&doc);
    let docs = std::slice::from_ref(&doc);
    if let Some(path) = &a.json {
        readlab::fsio::write_file(path, &JsonExporter.render(docs)?)?;
    }
    match a.output {
        OutputArg::Json => print!("{}", JsonExporter.render(docs)?),
        OutputArg::Table if doc.targets.is_empty() => {
            print!("{}", export::run_report(&doc));
            print!("{}", export::monitor_summary(&doc));
        }
        OutputArg::Table => {
            print!("{}", export::targets_report(&doc));
            print!("{}", export::monitor_summary(&doc));
        }
    }
    let mut failed = false;
    for t in doc.targets.iter().filter(|t| t.failed()) {
        failed = true;
        let why = t.error.clone().unwrap_or_else(|| {
            t.result
                .as_ref()
                .and_then(|r| r.failure_summary())
                .map(|l| l.join("; "))
                .unwrap_or_default()
        });
        eprintln!("readlab: target {} failed: {why}", t.name);
    }
    if let Some(lines) = doc.result.failure_summary() {
        for l in lines {
            eprintln!("readlab: {l}");
        }
        failed = true;
    }
    if failed {
        return Ok(ExitCode::from(1));
    }
    if doc.result.ended_by == readlab::result::EndedBy::Interrupted {
        eprintln!("readlab: interrupted; the figures cover only the part of the run measured");
        return Ok(crate::progress::interrupted_exit());
    }
    if doc.result.requests == 0 {
        // Already said by the result's warning ("nothing was measured …").
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}
