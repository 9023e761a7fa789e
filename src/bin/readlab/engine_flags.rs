//! The engines' options on the command line, made from the engines' own tables
//! ([`readlab::engine::option`]): one flag per row, with the row's help, its kind of value and
//! fio's name as another name, so an option an engine adds to its table is a flag of `run` and
//! `serve` (and refused beside `--profile` and `--job`) without a line here. clap stays in the
//! binary: the library's rows say what each option is, this file makes each a [`clap::Arg`].

use crate::args::{count, duration};
use clap::builder::TypedValueParser;
use clap::{Arg, ArgAction, ArgMatches, Args, Command, FromArgMatches};
use readlab::engine::option::{self, EngineOption, Value};
use readlab::engine::{EngineKind, EngineOptions};
use std::marker::PhantomData;

/// Which engines' options a command takes and how its help names an engine.
pub trait Scope {
    /// Whether the command reads through `kind` (its options are flags of the command).
    fn takes(kind: EngineKind) -> bool;
    /// What the help writes before an option of `kind` (`uring: `).
    fn prefix(kind: EngineKind) -> String;
    /// The command's flags an engine option is refused beside (they say the whole workload).
    const REFUSED_BESIDE: &'static [&'static str];
}

/// The engine options given on a command line, each as its row's flag and the value it carries
/// (1 for a switch): a struct clap flattens into a command's derived flags.
#[derive(Debug)]
pub struct EngineFlags<S> {
    given: Vec<(&'static str, u64)>,
    scope: PhantomData<S>,
}

/// The rows whose flags `S`'s command takes, in the registry's order.
fn rows<S: Scope>() -> impl Iterator<Item = (EngineKind, &'static EngineOption)> {
    option::all().filter(|(k, _)| S::takes(*k))
}

/// The row whose flag is `flag`.
fn row(flag: &str) -> &'static EngineOption {
    option::all()
        .find(|(_, d)| d.flag == flag)
        .map(|(_, d)| d)
        .expect("a flag made from the table")
}

/// `s` for the program's life: clap keeps value names and defaults as `&'static str`. Each text
/// is kept once however often the command line is built.
fn kept(s: String) -> &'static str {
    use std::collections::BTreeSet;
    use std::sync::Mutex;
    static KEPT: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());
    let mut kept = KEPT.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(&t) = kept.get(s.as_str()) {
        return t;
    }
    let t: &'static str = Box::leak(s.into_boxed_str());
    kept.insert(t);
    t
}

/// A duration on the command line in `unit` (`us`), as the whole number of them it holds.
fn in_unit(s: &str, unit: &'static str) -> Result<u64, readlab::Error> {
    let d = duration(s)?;
    let n = match unit {
        "ns" => d.as_nanos(),
        "us" => d.as_micros(),
        "ms" => d.as_millis(),
        "s" => d.as_secs().into(),
        _ => unreachable!("a setting's unit is a unit of time"),
    };
    Ok(n.min(u32::MAX as u128) as u64)
}

/// The help of `d`'s flag: its engine's row, then each other engine the flag stands for a row of
/// by fio's name (`pvsync2: RWF_HIPRI …; uring: --iopoll, as fio's hipri means there`).
fn help<S: Scope>(kind: EngineKind, d: &'static EngineOption) -> String {
    let mut h = format!("{}{}", S::prefix(kind), d.help);
    for other in EngineKind::all().filter(|&o| o != kind && S::takes(o)) {
        if let Some(e) = option::on_command_line(other, d) {
            let fio = e.fio.unwrap_or(d.flag);
            h.push_str(&format!(
                "; {}--{}, as fio's {fio} means there",
                S::prefix(other),
                e.flag
            ));
        }
    }
    h
}

/// The flag of row `d` of `kind`.
fn arg<S: Scope>(kind: EngineKind, d: &'static EngineOption) -> Arg {
    let mut a = Arg::new(d.flag)
        .long(d.flag)
        .help(help::<S>(kind, d))
        .conflicts_with_all(S::REFUSED_BESIDE);
    for alias in option::flag_names(d).skip(1) {
        a = a.alias(alias);
    }
    if d.value == Value::Switch {
        return a.action(ArgAction::SetTrue);
    }
    a = a.value_name(kept(d.flag.to_uppercase().replace('-', "_")));
    match d.value {
        Value::Switch => unreachable!(),
        Value::Count => a
            .allow_hyphen_values(true)
            .value_parser(|s: &str| count(s).map(|n| n as u64)),
        Value::Setting { unit, bare, .. } => {
            a = match unit {
                "" => a.value_parser(clap::value_parser!(u32).map(u64::from)),
                unit => a.value_parser(move |s: &str| in_unit(s, unit)),
            };
            match bare {
                Some(b) => a
                    .num_args(0..=1)
                    .require_equals(true)
                    .default_missing_value(kept(format!("{b}{unit}"))),
                None => a,
            }
        }
    }
}

impl<S: Scope> Args for EngineFlags<S> {
    fn augment_args(mut cmd: Command) -> Command {
        for (kind, d) in rows::<S>() {
            cmd = cmd.arg(arg::<S>(kind, d));
        }
        cmd
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

impl<S: Scope> FromArgMatches for EngineFlags<S> {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let given = rows::<S>()
            .filter_map(|(_, d)| {
                let n = match d.value {
                    Value::Switch => m.get_flag(d.flag).then_some(1),
                    _ => m.get_one::<u64>(d.flag).copied(),
                };
                Some((d.flag, n?))
            })
            .collect();
        Ok(EngineFlags {
            given,
            scope: PhantomData,
        })
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        let now = Self::from_arg_matches(m)?;
        for (flag, n) in now.given {
            self.given.retain(|(f, _)| *f != flag);
            self.given.push((flag, n));
        }
        Ok(())
    }
}

impl<S> EngineFlags<S> {
    /// The options the flags set for `engine`, each flag as the row it stands for with that
    /// engine (`--hipri` is io_uring's `--iopoll` with `--engine uring`). A flag that stands for
    /// none of `engine`'s rows is kept as its own engine's option when `keep_foreign` (the
    /// configuration's check then refuses it, naming the engine it needs), left out otherwise
    /// (with several engines each keeps only its own: `--engine psync,uring --fixed-files`).
    pub fn options_for(&self, engine: EngineKind, keep_foreign: bool) -> EngineOptions {
        let mut o = EngineOptions::default();
        for &(flag, n) in &self.given {
            let owner = row(flag);
            match option::on_command_line(engine, owner) {
                Some(d) => d.set(&mut o, n),
                None if keep_foreign => owner.set(&mut o, n),
                None => {}
            }
        }
        o
    }
}
