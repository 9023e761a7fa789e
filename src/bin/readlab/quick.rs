//! `readlab quick` (and `readlab` alone): survey the engines on a scratch file, print the table;
//! exit 1 when a run failed, 130 (143 for SIGTERM) when interrupted.

use crate::args::{JsonOut, duration};
use crate::progress::{Progress, print_warnings};
use clap::{Args, FromArgMatches};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct QuickArgs {
    /// Measured time per run in the first pass (the close ones are raced after it).
    #[arg(long, default_value = "2s", value_parser = duration)]
    pub runtime: Duration,
    /// Directory for the scratch file and results (`--out` is the same flag, as on study and tune).
    #[arg(long, alias = "out", default_value = ".")]
    pub dir: PathBuf,
    #[command(flatten)]
    pub out_json: JsonOut,
    #[command(flatten)]
    pub race: crate::args::RaceArgs,
}

impl QuickArgs {
    /// What `readlab` with no command runs: `readlab quick` with its defaults.
    pub fn defaults() -> QuickArgs {
        let matches =
            QuickArgs::augment_args(clap::Command::new("quick")).get_matches_from(["quick"]);
        QuickArgs::from_arg_matches(&matches).expect("`readlab quick` parses with its defaults")
    }
}

pub fn run(a: &QuickArgs) -> anyhow::Result<ExitCode> {
    a.race.check(None)?;
    let mut plan = readlab::quick::plan(&a.dir, a.runtime)?;
    // The main job's own rounds (readlab::quick::ROUND), the user's margin.
    plan.race.margin = a.race.rule().margin;
    // Runs shorter than half a second are smoke tests: not raced unless a budget is given.
    let short = a.runtime < Duration::from_millis(500);
    plan.budget = a.race.budget.unwrap_or(if short {
        Duration::ZERO
    } else {
        readlab::quick::BUDGET
    });
    readlab::outpath::check_dir(
        &a.dir,
        &[&plan.scratch],
        &[readlab::quick::RESULTS_NAME],
        a.out_json.force,
    )?;
    a.out_json.check(&[&plan.scratch, &plan.results])?;
    let progress = Progress::new(a.out_json.is_json());
    let docs = readlab::quick::execute(&plan, &progress)?;
    progress.finish();
    print_warnings(&docs);
    let interrupted = progress.interrupted()
        || docs
            .iter()
            .any(|d| d.result.ended_by == readlab::result::EndedBy::Interrupted);
    let exit = |docs: &[readlab::result::Document]| {
        if interrupted {
            errln!("readlab: interrupted; the table covers only the runs measured");
            crate::progress::interrupted_exit()
        } else {
            exit(docs)
        }
    };
    a.out_json.emit(&serde_json::to_value(&docs)?)?;
    if a.out_json.is_json() {
        return Ok(exit(&docs));
    }
    outln!();
    outp!("{}", crate::run_output::runs_table(&docs)?);
    outln!();
    let verdict = readlab::verdict::text_for_within(&docs, crate::out().width);
    if !verdict.is_empty() {
        outln!("{}", crate::out().fit(&verdict));
    }
    outln!(
        "{}",
        crate::out().fit(&format!(
            "Results (one JSON document per run): {}\nScratch file (verifiable data, reused next time): {}",
            plan.results.display(),
            plan.scratch.display()
        ))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quick_default_args_match_clap_defaults() {
        let q = QuickArgs::defaults();
        assert_eq!(q.runtime, Duration::from_secs(2));
        assert_eq!(q.dir, PathBuf::from("."));
    }
}
