//! `readlab quick` (and `readlab` alone): survey the engines on a scratch file, print the table.

use crate::args::QuickArgs;
use crate::progress::{Progress, print_warnings};
use readlab::error::Error;
use std::process::ExitCode;

pub fn run(a: &QuickArgs) -> anyhow::Result<ExitCode> {
    if a.runtime.is_zero() {
        return Err(Error::InvalidArgument("--runtime must be positive".into()).into());
    }
    let plan = readlab::quick::plan(&a.dir, a.runtime)?;
    a.out_json.check(&[&plan.scratch, &plan.results])?;
    let progress = Progress::new(a.out_json.is_json());
    let docs = readlab::quick::execute(&plan, &progress)?;
    progress.finish();
    docs.iter().for_each(print_warnings);
    a.out_json.emit(&serde_json::to_value(&docs)?)?;
    if a.out_json.is_json() {
        return Ok(exit(&docs));
    }
    println!();
    print!("{}", crate::run::runs_table(&docs)?);
    println!();
    let verdict = readlab::verdict::text_for(&docs);
    if !verdict.is_empty() {
        println!("{verdict}");
    }
    println!(
        "Results (one JSON document per run): {}\nScratch file (verifiable data, reused next time): {}",
        plan.results.display(),
        plan.scratch.display()
    );
    Ok(exit(&docs))
}

/// 1 when a run failed.
fn exit(docs: &[readlab::result::Document]) -> ExitCode {
    if docs.iter().any(|d| d.result.failed()) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
