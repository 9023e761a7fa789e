//! The `readlab` binary: parse the command line, convert it into the library's config types,
//! call the library, print. One file per command; `args` holds every flag and its conversion,
//! `progress` the progress display and Ctrl-C. Exit codes: 0 ok, 1 a failed run, 2 bad input,
//! 3 a regression found by `run --check`, 130 an interrupted study.

mod args;
mod compare;
mod fleet;
mod info;
mod monitor;
mod prepare;
mod progress;
mod quick;
mod report;
mod run;
mod serve;
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
        Err(e) if e.use_stderr() => {
            // Any other mistake on the command line (an unknown flag, a missing value, a value
            // not among the choices): one line too, with clap's choices and tips kept.
            eprintln!("readlab: {}", clap_one_line(&e.render().to_string()));
            return ExitCode::from(2);
        }
        Err(e) => {
            // --help, --version: clap's own output on stdout.
            let _ = e.print();
            return ExitCode::SUCCESS;
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
        Some(Command::Monitor(a)) => monitor::run(a),
        Some(Command::Compare(a)) => compare::run(a),
        Some(Command::Serve(a)) => serve::run(a),
    };
    match res {
        Ok(code) => code,
        Err(e) => {
            let lib = e.downcast_ref::<readlab::Error>();
            eprintln!("readlab: error: {}", one_line(&e));
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

/// An error and its causes on one line, each cause once: a library error that already prints its
/// OS error ("cannot open: No such file or directory (os error 2)") is not followed by it again.
fn one_line(e: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if !line.contains(&text) {
            if !line.is_empty() {
                line.push_str(": ");
            }
            line.push_str(&text);
        }
    }
    line.lines().collect::<Vec<_>>().join(" ")
}

/// clap's error text ("error: …", choices, a tip, the usage, "For more information …") as one
/// line: the usage and the pointer to --help become "; see --help".
fn clap_one_line(text: &str) -> String {
    let parts: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| {
            !l.is_empty() && !l.starts_with("Usage:") && !l.starts_with("For more information")
        })
        .collect();
    format!("{}; see --help", parts.join(" "))
}
