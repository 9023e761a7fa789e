//! `readlab completions SHELL` and `readlab man [DIR]`: the shell completions and the man pages,
//! generated from the command line's own definition (clap_complete, clap_mangen) so they cannot
//! drift from it; and the study name's parser, which offers the library's registered studies as
//! the argument's possible values, so `study --help` and the completions list every study.

use clap::Args;
use clap::builder::{PossibleValue, TypedValueParser};
use clap::error::ErrorKind;
use clap_complete::Shell;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to complete in: bash, zsh, fish, elvish or powershell. Install for bash with
    /// `readlab completions bash > /etc/bash_completion.d/readlab` (or source it from ~/.bashrc).
    #[arg(value_enum)]
    pub shell: Shell,
}

#[derive(Args, Debug)]
pub struct ManArgs {
    /// Write one page per command into this directory (readlab.1, readlab-run.1, …), e.g.
    /// /usr/local/share/man/man1; without it, print one page to standard output.
    pub dir: Option<PathBuf>,
    /// The command whose page to print (run, study, …; default: readlab's own page).
    #[arg(long, value_name = "COMMAND")]
    pub page: Option<String>,
    /// Replace pages in DIR that readlab did not write (a hand-written readlab.1); never a
    /// symbolic link, a device, FIFO or directory.
    #[arg(long)]
    pub force: bool,
}

/// The command line's definition (main's), named as installed.
fn built(cli: clap::Command) -> clap::Command {
    let mut cmd = cli.bin_name("readlab");
    cmd.build();
    cmd
}

/// Standard output gets `bytes` (through [`crate::term::print`]: a reader that went away (`|
/// head`) ends the command quietly, a closed or failing stdout fails it in `main`).
fn print(bytes: &[u8]) -> anyhow::Result<ExitCode> {
    outp!("{}", String::from_utf8_lossy(bytes));
    Ok(ExitCode::SUCCESS)
}

pub fn completions(a: &CompletionsArgs, cli: clap::Command) -> anyhow::Result<ExitCode> {
    let mut cmd = built(cli);
    let mut script = Vec::new();
    clap_complete::generate(a.shell, &mut cmd, "readlab", &mut script);
    if a.shell == Shell::Fish {
        script.extend(fish_positionals(&cmd).bytes());
    }
    print(&script)
}

/// clap_complete's fish script completes options only: the values of a command's positional
/// arguments (the study names) are added here, one `complete` line each.
fn fish_positionals(cmd: &clap::Command) -> String {
    let quote = |s: &str| format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"));
    let mut out = String::new();
    for sub in cmd.get_subcommands() {
        for arg in sub.get_positionals() {
            for v in arg
                .get_possible_values()
                .iter()
                .filter(|v| !v.is_hide_set())
            {
                let help = v.get_help().map(|h| h.to_string()).unwrap_or_default();
                out.push_str(&format!(
                    "complete -c readlab -n \"__fish_readlab_using_subcommand {}\" -a {} -d {}\n",
                    sub.get_name(),
                    quote(v.get_name()),
                    quote(&help)
                ));
            }
        }
    }
    out
}

pub fn man(a: &ManArgs, cli: clap::Command) -> anyhow::Result<ExitCode> {
    let cmd = built(cli.disable_help_subcommand(true));
    match (&a.dir, &a.page) {
        (Some(_), Some(_)) => Err(readlab::Error::InvalidArgument(
            "readlab man: give a directory (every page written there) or --page (one page printed), not both".into(),
        )
        .into()),
        (Some(dir), None) => {
            if dir.exists() && !dir.is_dir() {
                return Err(readlab::Error::InvalidArgument(format!(
                    "{}: not a directory; give the directory of the man pages (e.g. /usr/local/share/man/man1)",
                    dir.display()
                ))
                .into());
            }
            write_pages(&cmd, dir, a.force)?;
            Ok(ExitCode::SUCCESS)
        }
        (None, page) => {
            let cmd = match page {
                None => cmd,
                Some(name) => cmd
                    .get_subcommands()
                    .find(|c| c.get_name() == name)
                    .cloned()
                    .ok_or_else(|| {
                        readlab::Error::InvalidArgument(format!(
                            "readlab man --page: no command '{name}'; commands: {}",
                            cmd.get_subcommands()
                                .map(|c| c.get_name())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ))
                    })?,
            };
            let mut text = Vec::new();
            man_page(cmd).render(&mut text)?;
            print(&text)
        }
    }
}

/// Every page (readlab.1, readlab-run.1, …) into `dir`, made if needed: all of them checked
/// first by the rule of every output (none through a link, none over a page readlab did not
/// write unless `force`), then each written whole.
fn write_pages(cmd: &clap::Command, dir: &std::path::Path, force: bool) -> anyhow::Result<()> {
    let pages: Vec<clap_mangen::Man> = std::iter::once(cmd.clone())
        .chain(cmd.get_subcommands().cloned())
        .map(man_page)
        .collect();
    let names: Vec<String> = pages.iter().map(|p| p.get_filename()).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    readlab::outpath::check_dir(dir, &[], &names, force)?;
    let cannot = |e: &dyn std::fmt::Display| {
        readlab::Error::InvalidArgument(format!(
            "cannot write man pages to {}: {e}; give a directory you can write (as root for /usr/local/share/man/man1)",
            dir.display()
        ))
    };
    std::fs::create_dir_all(dir).map_err(|e| cannot(&e))?;
    for (page, name) in pages.iter().zip(names) {
        let mut text = Vec::new();
        page.render(&mut text).map_err(|e| cannot(&e))?;
        readlab::fsio::write_file(&dir.join(name), &String::from_utf8_lossy(&text))?;
    }
    Ok(())
}

/// A command's page (readlab.1, readlab-run.1, …), its footer naming readlab and its version.
fn man_page(cmd: clap::Command) -> clap_mangen::Man {
    clap_mangen::Man::new(cmd)
        .source(format!("readlab {}", env!("CARGO_PKG_VERSION")))
        .manual("readlab manual")
}

/// `readlab study NAME`: a registered study the command can run, or `all`. Its possible values
/// come from the library's registry (with each study's description), and a refused name gets the
/// library's own message.
#[derive(Clone, Debug)]
pub struct StudyNameParser;

impl TypedValueParser for StudyNameParser {
    type Value = String;

    fn parse_ref(
        &self,
        _cmd: &clap::Command,
        _arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        let s = value.to_string_lossy();
        readlab::study::select(&s)
            .map_err(|e| clap::Error::raw(ErrorKind::ValueValidation, format!("{e}\n")))?;
        Ok(s.into_owned())
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        let all: Vec<&str> = readlab::study::runnable()
            .filter(|s| s.in_all)
            .map(|s| s.name)
            .collect();
        let all = format!("one after another: {}", all.join(", "));
        Some(Box::new(
            readlab::study::runnable()
                .map(|s| PossibleValue::new(s.name).help(s.describe))
                .chain(std::iter::once(PossibleValue::new("all").help(all))),
        ))
    }
}
