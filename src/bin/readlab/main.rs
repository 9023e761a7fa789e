//! The `readlab` binary: parse the command line, convert it into the library's config types,
//! call the library, print. One file per command, with its flags and their conversion; `args`
//! holds the value parsers and flags they share, `engine_flags` the engines' options (each
//! engine's table made flags of `run` and `serve`), `progress` the progress display and Ctrl-C.
//! Exit codes: 0 ok, 1 a failed run, 2 bad input, 3 a regression found by `run --check`, 130 an
//! interrupted study. Every line for people goes through the [`Terminal`] made once here from
//! `--color`, `NO_COLOR`, `COLUMNS` and whether stdout and stderr are terminals.

/// `eprintln!` for people: the line fitted to the width of stderr's terminal. (An error that
/// ends the command stays one line, as scripts expect: `eprintln!`.)
pub use term::{err, one_line, out};

/// `print!` and `println!` for stdout that never panic on a closed or full stdout
/// ([`term::print`]).
macro_rules! outp {
    ($($arg:tt)*) => {
        crate::term::print(format_args!($($arg)*))
    };
}

macro_rules! outln {
    () => {
        crate::term::print(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        crate::term::print(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// std's `eprint!`/`eprintln!` panic when stderr is a closed pipe (`readlab study … 2>&1 |
/// head`); in this binary they are these, which stop printing instead ([`term::eprint`]).
#[allow(unused_macros)]
macro_rules! eprint {
    ($($arg:tt)*) => {
        crate::term::eprint(format_args!($($arg)*))
    };
}

macro_rules! eprintln {
    () => {
        crate::term::eprint(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        crate::term::eprint(format_args!("{}\n", format_args!($($arg)*)))
    };
}

macro_rules! errln {
    ($($arg:tt)*) => {
        eprintln!("{}", crate::err().fit(&format!($($arg)*)))
    };
}

mod args;
mod compare;
mod completions;
mod engine_flags;
mod fio_flags;
mod fleet;
mod info;
mod lines;
mod monitor;
mod prepare;
mod progress;
mod quick;
mod report;
mod run;
mod run_files;
mod run_job;
mod run_output;
mod serve;
mod study;
mod term;
mod think_flags;
mod tune;

use clap::error::ErrorKind;
use clap::{CommandFactory, Parser, Subcommand};
use compare::CompareArgs;
use info::InfoArgs;
use monitor::MonitorArgs;
use prepare::PrepareArgs;
use quick::QuickArgs;
use readlab::terminal::ColorWhen;
use report::ReportArgs;
use run::RunArgs;
use serve::ServeArgs;
use std::process::ExitCode;
use study::StudyArgs;
use tune::TuneArgs;

#[derive(Parser, Debug)]
#[command(
    name = "readlab",
    version,
    about = "What is the fastest way to read from this device, at what latency, and at what CPU cost?",
    long_about = "readlab measures read interfaces (pread, preadv2, ...) on files and block devices: \
                  throughput, IOPS, exact latency percentiles and CPU, verifying every byte it reads.\n\n\
                  With no command it runs a short survey on a scratch file in the current directory."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Colour the answer and the warnings: auto (on a terminal, unless NO_COLOR is set),
    /// always or never.
    #[arg(long, global = true, value_enum, default_value = "auto")]
    pub color: ColorArg,
}

#[derive(Copy, Clone, Debug, clap::ValueEnum, PartialEq, Eq)]
pub enum ColorArg {
    Auto,
    Always,
    Never,
}

fn set_terminals(color: ColorArg) {
    term::set(match color {
        ColorArg::Auto => ColorWhen::Auto,
        ColorArg::Always => ColorWhen::Always,
        ColorArg::Never => ColorWhen::Never,
    });
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Survey the engines on a scratch file in the current directory (the default job).
    Quick(QuickArgs),
    /// Write verifiable data to a file or block device.
    Prepare(PrepareArgs),
    /// Measure one read workload against a file or block device.
    Run(Box<RunArgs>),
    /// Show what a target is and which read interfaces and io_uring features work on it, and why not.
    Info(InfoArgs),
    /// Run one of the report's experiments (or all) on a target; resumable, with a summary table.
    Study(StudyArgs),
    /// Find the best interface, threads, queue size, batch and features for a target, within a budget.
    Tune(TuneArgs),
    /// Turn study results, run documents and fio JSON into one HTML page of charts (or CSV/Markdown/JSON tables).
    Report(ReportArgs),
    /// Watch devices, the machine and a process's threads, one line per second (dstat and psn in one).
    Monitor(MonitorArgs),
    /// Compare two sets of measurements (runs, study directories or reports' JSON), configuration by configuration.
    Compare(CompareArgs),
    /// Serve a file, a device or zeros read-only over NBD (the networked-flash experiments' server).
    Serve(Box<ServeArgs>),
    /// Print the shell completions (bash, zsh, fish, …): `readlab completions bash > /etc/bash_completion.d/readlab`.
    Completions(completions::CompletionsArgs),
    /// Write the man pages, one per command (`readlab man /usr/local/share/man/man1`), or print one.
    Man(completions::ManArgs),
}

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
            // not among the choices): one line too, with clap's choices and tips kept; a fio
            // option readlab does not have, by name with what to use instead.
            let line = fio_flags::fio_refusal(&e)
                .unwrap_or_else(|| clap_one_line(&e.render().to_string()));
            eprintln!("readlab: {line}");
            return ExitCode::from(2);
        }
        Err(e) => {
            // --help, --version: clap's own output on stdout.
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
    };
    set_terminals(cli.color);
    if let Some(name) = alone_only(&cli.command)
        && readlab::fleet::launcher().is_some_and(|n| n != Some(1))
    {
        eprintln!(
            "readlab: error: readlab {name} does not run across MPI ranks (each rank would work alone and write the same files): run it on one host without mpirun; `readlab run` and `readlab study` are the commands that run across ranks"
        );
        return ExitCode::from(2);
    }
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
        Some(Command::Completions(a)) => completions::completions(a, Cli::command()),
        Some(Command::Man(a)) => completions::man(a, Cli::command()),
    };
    let stdout_failed = term::stdout_failure();
    match res {
        Ok(code) => match stdout_failed {
            Some(why) => {
                eprintln!("readlab: error: {why}");
                ExitCode::from(1)
            }
            None => code,
        },
        Err(e) => {
            let lib = e.downcast_ref::<readlab::Error>();
            if let Some(readlab::Error::InterruptedWhile(_)) = lib {
                // Not an error: where the signal found readlab.
                eprintln!("readlab: {}", one_line(&e));
                return progress::interrupted_exit();
            }
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

/// The commands that write a result of their own and have no way to work across MPI ranks (run
/// and study have; info, monitor and serve look at or serve one host and may run on each).
fn alone_only(c: &Option<Command>) -> Option<&'static str> {
    match c {
        None | Some(Command::Quick(_)) => Some("quick"),
        Some(Command::Prepare(_)) => Some("prepare"),
        Some(Command::Tune(_)) => Some("tune"),
        Some(Command::Report(_)) => Some("report"),
        Some(Command::Compare(_)) => Some("compare"),
        // Every command by name, no `_`: a new command must say which it is.
        Some(
            Command::Run(_)
            | Command::Study(_)
            | Command::Info(_)
            | Command::Monitor(_)
            | Command::Serve(_)
            | Command::Completions(_)
            | Command::Man(_),
        ) => None,
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn a_bad_count_is_one_line_naming_the_flag() {
        let e = Cli::try_parse_from(["readlab", "run", "--iodepth", "0", "f"]).unwrap_err();
        assert_eq!(e.kind(), clap::error::ErrorKind::ValueValidation);
        let first = e.to_string().lines().next().unwrap().to_string();
        assert!(
            first.contains("--iodepth") && first.contains("at least 1"),
            "{first}"
        );
    }
}
