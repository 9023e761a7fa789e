//! fio's words and a job file's results, shared by the parser, the option mapping, the checks and
//! the writer: engine and pattern names, the options readlab has under another name or refuses, a
//! problem with its line, and the jobs a file holds. A leaf of `fiojob`, so its parts name it and
//! not their parent.

use crate::config::{RunConfig, Rw};
use crate::engine::EngineKind;
use crate::error::Error;
use std::fmt;
use std::path::PathBuf;

/// An engine by readlab's name (`uring`) or fio's (`io_uring`, `sync` for `psync`).
pub fn engine(word: &str) -> Result<EngineKind, Error> {
    let w = word.trim();
    if let Ok(k) = EngineKind::parse(w) {
        return Ok(k);
    }
    let fio = match w {
        "io_uring" => Some(EngineKind::Uring),
        "sync" => Some(EngineKind::Psync),
        _ => {
            // fio's name of exactly one engine (libaio, pvsync2, posixaio, nbd).
            let mut hits = EngineKind::all().filter(|k| k.fio_name() == w);
            match (hits.next(), hits.next()) {
                (Some(k), None) => Some(k),
                _ => None,
            }
        }
    };
    fio.ok_or_else(|| Error::UnknownEngine {
        name: w.into(),
        known: format!(
            "{} (or fio's io_uring, sync)",
            EngineKind::all()
                .map(|k| k.name())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    })
}

/// A switch's value, in a job file or on the command line: 1/0 (also true/false, yes/no,
/// on/off).
pub fn switch_word(value: &str) -> Result<bool, Error> {
    match value.trim() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        v => Err(Error::invalid(format!("'{v}' is not 0 or 1"))),
    }
}

/// fio's `rw`: the two reading patterns; anything that writes or trims is refused by name.
pub fn rw(word: &str) -> Result<Rw, Error> {
    match word.trim() {
        "read" => Ok(Rw::Read),
        "randread" => Ok(Rw::Randread),
        w @ ("write" | "randwrite" | "rw" | "readwrite" | "randrw" | "trim" | "randtrim"
        | "trimwrite" | "randtrimwrite") => Err(Error::invalid(format!(
            "readlab only reads: rw={w} writes or trims; use read or randread"
        ))),
        w if w.contains(':') => Err(Error::invalid(format!(
            "rw={w}: fio's offset modifier (:N) has no readlab equivalent; use read or randread"
        ))),
        w => Err(Error::invalid(format!(
            "'{w}' is not a read pattern; use read or randread"
        ))),
    }
}

/// One thing in a job file readlab cannot honour, with where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The section it was found in (`global` included); none before the first section.
    pub section: Option<String>,
    /// 1-based line in the file.
    pub line: usize,
    pub text: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.section {
            Some(s) => write!(f, "line {} [{s}]: {}", self.line, self.text),
            None => write!(f, "line {}: {}", self.line, self.text),
        }
    }
}

/// Why a job file was not run.
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    /// It could not be read.
    #[error(transparent)]
    Read(#[from] Error),
    /// It asks for things readlab cannot do: every one, in file order.
    #[error(
        "{path}: {n} thing{s} readlab cannot honour; nothing ran (fix or remove {them}, then run again)",
        n = problems.len(),
        s = if problems.len() == 1 { "" } else { "s" },
        them = if problems.len() == 1 { "it" } else { "them" }
    )]
    Refused {
        path: PathBuf,
        problems: Vec<Problem>,
    },
}

/// One job section as a readlab configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    /// The section's name (`[name]`).
    pub name: String,
    /// The line of its `[name]`.
    pub line: usize,
    pub config: RunConfig,
    /// Whether fio would wait for the jobs before it (stonewall / new_group / wait_for_previous):
    /// readlab always does; a job without it runs alongside the previous ones in fio.
    pub waits: bool,
}

/// An option of a job file that readlab ignored, or read in a way a fio user should know of,
/// and what readlab does instead: said once per option, however many jobs give it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    /// The option as fio names it.
    pub option: String,
    pub text: String,
}

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.option, self.text)
    }
}

/// The notes so far: `note` added unless its option has one already.
pub fn add_note(notes: &mut Vec<Note>, option: &str, text: String) {
    if !notes.iter().any(|n| n.option == option) {
        notes.push(Note {
            option: option.into(),
            text,
        });
    }
}

/// A job file read into readlab: its jobs in file order, and the notes on what readlab ignored
/// or read its own way.
#[derive(Debug, Clone, PartialEq)]
pub struct JobFile {
    pub jobs: Vec<Job>,
    /// One per option (the table of `vocabulary` says why), in the order first met.
    pub notes: Vec<Note>,
}

impl JobFile {
    /// The jobs fio would run alongside the ones before them (no stonewall), which readlab runs
    /// one after another.
    pub fn concurrent_in_fio(&self) -> Vec<&str> {
        self.jobs
            .iter()
            .skip(1)
            .filter(|j| !j.waits)
            .map(|j| j.name.as_str())
            .collect()
    }
}
