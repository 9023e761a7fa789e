//! `readlab run`: measure one workload (or several, from comma-separated flags, ending with a
//! verdict) on one target or on several at once, print its table (or JSON document); with
//! `--profile P --check`, hold the result against the profile's and exit 3 on a regression. Exit 1
//! if a run (or any of its targets) failed.

use crate::args::{OutputArg, RunArgs};
use crate::progress::{Progress, print_warnings};
use readlab::export::{self, Exporter, JsonExporter, TableExporter};
use readlab::result::Document;
use std::path::PathBuf;
use std::process::ExitCode;

/// Exit code of a `--check` that found a regression.
pub const REGRESSION: u8 = 3;

pub fn run(a: &RunArgs) -> anyhow::Result<ExitCode> {
    let mut cfgs = a.to_configs()?;
    if let Some(fleet) = crate::fleet::launch()? {
        if cfgs.len() != 1 {
            return Err(readlab::Error::InvalidArgument(
                "under mpirun, run measures one configuration; give each flag one value".into(),
            )
            .into());
        }
        return crate::fleet::run(fleet, a, cfgs.remove(0));
    }
    let words: Vec<PathBuf> = std::iter::once(cfgs[0].target.clone())
        .chain(a.more_targets.iter().cloned())
        .collect();
    let specs = readlab::targets::parse(&words, &a.names)?;
    // One target named by its path alone runs exactly as it always has.
    let single = specs.len() == 1 && a.names.is_empty() && specs[0].path == cfgs[0].target;
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
    let expected = match (&a.profile, a.check) {
        (Some(p), true) => Some(readlab::tune::load_profile(p)?.expected),
        _ => None,
    };
    let progress = Progress::new(a.quiet || a.output == OutputArg::Json).with_monitor(a.monitor);
    let mut docs = Vec::new();
    for cfg in &cfgs {
        let doc = if single {
            readlab::repeat::run(cfg, a.repeat, &progress)?
        } else {
            readlab::runner::run_targets(cfg, &specs, &progress)?
        };
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
        OutputArg::Table if docs.len() == 1 => print_one(&docs[0]),
        OutputArg::Table => {
            print!("{}", runs_table(&docs)?);
            let verdict = readlab::verdict::text_for(&docs);
            if !verdict.is_empty() {
                println!("\n{verdict}");
            }
        }
    }
    let mut failed = false;
    for doc in &docs {
        failed |= report_failures(doc);
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
    if failed || docs.iter().any(|d| d.result.requests == 0) {
        // A run that measured nothing already said so in its warning ("nothing was measured …").
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// One run's table: per target when it read several, then what the monitor saw.
fn print_one(doc: &Document) {
    if doc.targets.is_empty() {
        print!("{}", export::run_report(doc));
    } else {
        print!("{}", export::targets_report(doc));
    }
    print!("{}", export::monitor_summary(doc));
}

/// Print a run's failures (each failed target, then the run's totals and first offsets); true
/// when there were any.
pub fn report_failures(doc: &Document) -> bool {
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
    failed
}

/// The table of several runs, readlab's measurements of itself (engines that read nothing, such
/// as `null`) apart below the reads, so they are never read as a ranking.
pub fn runs_table(docs: &[readlab::result::Document]) -> anyhow::Result<String> {
    let (reads, own): (Vec<_>, Vec<_>) = docs
        .iter()
        .cloned()
        .partition(|d| d.config.engine.capabilities().does_io);
    let mut s = if reads.is_empty() {
        String::new()
    } else {
        TableExporter.render(&reads)?
    };
    if !own.is_empty() {
        s.push_str(
            "
readlab measuring itself (no I/O; its own cost per I/O, not ranked):
",
        );
        s.push_str(&TableExporter.render(&own)?);
    }
    Ok(s)
}
