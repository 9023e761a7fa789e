//! `readlab run`: measure one workload, print its table (or JSON document), exit 1 if it failed.

use crate::args::{OutputArg, RunArgs};
use crate::progress::{Progress, print_warnings};
use readlab::export::{self, Exporter, JsonExporter};
use std::process::ExitCode;

pub fn run(a: &RunArgs) -> anyhow::Result<ExitCode> {
    let cfg = a.to_config()?;
    if let Some(fleet) = crate::fleet::launch()? {
        return crate::fleet::run(fleet, a, cfg);
    }
    if let Some(p) = &a.json {
        let profile = a.profile.as_deref().into_iter();
        readlab::outpath::check_file(
            p,
            &profile.chain([cfg.target.as_path()]).collect::<Vec<_>>(),
        )?;
    }
    let progress = Progress::new(a.quiet || a.output == OutputArg::Json);
    let doc = readlab::repeat::run(&cfg, a.repeat, &progress)?;
    progress.finish();
    print_warnings(&doc);
    let docs = std::slice::from_ref(&doc);
    if let Some(path) = &a.json {
        readlab::fsio::write_file(path, &JsonExporter.render(docs)?)?;
    }
    match a.output {
        OutputArg::Json => print!("{}", JsonExporter.render(docs)?),
        OutputArg::Table => print!("{}", export::run_report(&doc)),
    }
    if let Some(lines) = doc.result.failure_summary() {
        for l in lines {
            eprintln!("readlab: {l}");
        }
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
