//! The `readlab` binary: parse the command line, convert it into the library's config types,
//! call the library, print. One file per command; `args` holds every flag and its conversion,
//! `progress` the progress display and Ctrl-C. Exit codes: 0 ok, 1 a failed run, 2 bad input,
//! 3 a regression found by `run --check`, 130 an interrupted study.

mod args;
mod compare;
mod info;
mod prepare;
mod progress;
mod quick;
mod report;
mod run;
mod study;
mod tune;

use args::{Cli, Command, QuickArgs};
use clap::Parser;
use clap::error::ErrorKind;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) if e.kind() == ErrorKind::ValueValidation => {
            // A value our parsers refused (a count, size or duration): one line, like the
            // library's errors.
            let text = e.to_string();
            let line = text.lines().next().unwrap_or_default();
            eprintln!("readlab: {line}");
            return ExitCode::from(2);
        }
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    let res = match &cli.command {
        None => quick::run(&QuickArgs::defaults()),
        Some(Command::Quick(a)) => quick::run(a),
        Some(Command::Prepare(a)) => prepare::run(a),
        Some(Command::Run(a)) => run::run(a),
        Some(Command::Info(a)) => info::run(a),
        Some(Command::Study(a)) => study::run(a),
        Some(Command::Tune(a)) => tune::run(a),
        Some(Command::Report(a)) => report::run(a),
        Some(Command::Compare(a)) => compare::run(a),
    };
    match res {
        Ok(code) => code,
        Err(e) => {
            let lib = e.downcast_ref::<readlab::Error>();
            eprintln!("readlab: error: {e:#}");
            if lib.is_some_and(readlab::Error::is_bad_input) {
                ExitCode::from(2)
            } else if matches!(lib, Some(readlab::Error::Interrupted { .. })) {
                progress::interrupted_exit()
            } else {
                ExitCode::from(1)
            }
        }
    }
}
