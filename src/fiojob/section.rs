//! The state the parts of a job file's reading share: one `key[=value]` line, a job section being
//! read, and the lines its options were set on. A leaf of `fiojob`, so the parser, the option
//! mapping and the checks name it instead of each other.

use super::words::Problem;
use crate::config::RunConfig;
use std::path::PathBuf;

/// One `key[=value]` line.
#[derive(Debug, Clone)]
pub(super) struct Opt {
    pub(super) key: String,
    pub(super) value: Option<String>,
    pub(super) line: usize,
}

/// A job section being read: its configuration so far, what is decided once every option has
/// been seen, and the problems found.
pub(super) struct Section<'a> {
    pub(super) name: &'a str,
    pub(super) problems: Vec<Problem>,
    pub(super) cfg: RunConfig,
    /// The files filename= named (the first is the job's target; several are one job's files).
    pub(super) target: Option<Vec<PathBuf>>,
    /// A filename= was given (a refused one is its own problem, not a missing one).
    pub(super) named: bool,
    /// `directory=` and `nrfiles=`, each with its line: fio's `JOB.0.N` files in the directory
    /// (or the filename= files under it).
    pub(super) directory: Option<(String, usize)>,
    pub(super) nrfiles: Option<(usize, usize)>,
    pub(super) waits: bool,
    pub(super) engine_opts: Vec<(&'a Opt, &'a str)>,
    pub(super) complete_max: Option<(usize, usize)>,
    pub(super) fadvise: Option<(String, usize)>,
    /// `filesize=`: the size read when `size=` is not given.
    pub(super) filesize: Option<u64>,
    /// `rate_iops=` or `rate=`, per job as fio means it (each of `numjobs` threads).
    pub(super) rate: Option<JobRate>,
    /// `rate_process=`.
    pub(super) arrivals: Option<crate::config::Arrivals>,
    /// `thinktime=`, `thinktime_spin=`, `thinktime_blocks=`, `thinktime_iotime=`, settled
    /// together once the section is read.
    pub(super) think: ThinkParts,
    /// `loops=`, and `time_based` (with which the runtime ends the job and loops are moot).
    pub(super) loops: Option<u64>,
    pub(super) time_based: bool,
    pub(super) lines: Lines,
}

/// The think-time options of a section as given.
#[derive(Default)]
pub(super) struct ThinkParts {
    pub(super) think: Option<std::time::Duration>,
    pub(super) spin: Option<std::time::Duration>,
    pub(super) blocks: Option<u64>,
    pub(super) iotime: Option<std::time::Duration>,
}

/// fio's rate of one job (one thread of `numjobs`): I/Os or bytes per second.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum JobRate {
    Iops(u64),
    Bytes(u64),
}

/// The lines options were set on, for problems found once the whole section is read (0: the
/// section's header).
#[derive(Default)]
pub(super) struct Lines {
    pub(super) engine: usize,
    pub(super) bs: usize,
    pub(super) batch: usize,
    pub(super) complete_min: usize,
    pub(super) distribution: usize,
    pub(super) think: usize,
}
