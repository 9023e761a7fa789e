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

/// What readlab does with a fio option it does not have under that name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Foreign {
    /// Accepted and ignored: it asks for what readlab always does (the why says so).
    NoOp(&'static str),
    /// Refused: the text says what to use instead.
    Refused(&'static str),
}

const WRITES: &str =
    "readlab only reads; it never writes to a target (prepare data with `readlab prepare`)";

/// fio options readlab does not have, by fio's name (`-` and `_` alike).
pub fn foreign(option: &str) -> Option<Foreign> {
    use Foreign::{NoOp, Refused};
    let o = option.trim().trim_start_matches('-').replace('-', "_");
    Some(match o.as_str() {
        "time_based" => NoOp("readlab always runs for the whole runtime"),
        "group_reporting" => NoOp("readlab always reports a run's threads together"),
        "thread" => NoOp("readlab's jobs are always threads"),
        "norandommap" => NoOp("readlab's random offsets never keep a map"),
        "randrepeat" => NoOp("readlab's offsets come from its seed (--seed, randseed=)"),
        "invalidate" => NoOp("readlab reads with O_DIRECT unless buffered; fadvise with --fadvise"),
        "new_group" | "stonewall" | "wait_for_previous" => {
            NoOp("readlab runs jobs one after another, in file order")
        }
        "lat_percentiles" | "clat_percentiles" | "slat_percentiles" | "percentile_list" => {
            NoOp("readlab reports exact latency percentiles of every run")
        }
        "ioscheduler" => Refused(
            "readlab does not change the device's I/O scheduler; set /sys/block/DEV/queue/scheduler before the run",
        ),
        "verify" | "do_verify" | "verify_pattern" | "verify_interval" | "verify_backlog"
        | "verify_fatal" | "verify_async" | "verify_only" => Refused(
            "fio's verify checks data fio wrote; readlab checks every byte of data `readlab prepare` wrote: use --verify (no value)",
        ),
        "rwmixread"
        | "rwmixwrite"
        | "fsync"
        | "fdatasync"
        | "end_fsync"
        | "fsync_on_close"
        | "sync"
        | "overwrite"
        | "fill_device"
        | "fill_fs"
        | "buffer_pattern"
        | "zero_buffers"
        | "refill_buffers"
        | "scramble_buffers"
        | "buffer_compress_percentage"
        | "dedupe_percentage"
        | "create_on_open"
        | "create_only"
        | "fallocate"
        | "unlink"
        | "unlink_each_loop"
        | "trim_percentage"
        | "write_barrier" => Refused(WRITES),
        "loops" => Refused("use readlab run --repeat N to measure N times"),
        "rate" | "rate_iops" | "rate_min" | "rate_iops_min" | "rate_process" => Refused(
            "readlab's open loop is --rate IOPS (all threads together) with --arrivals poisson|fixed",
        ),
        "bsrange" | "bssplit" | "blocksize_range" | "blockalign" | "ba" => {
            Refused("readlab reads one block size per run; give --bs (several, comma-separated)")
        }
        "directory" | "filename_format" | "nrfiles" | "opendir" | "file_service_type" => {
            Refused("readlab reads one named file or device per job; give filename=PATH")
        }
        "cpus_allowed"
        | "cpumask"
        | "cpus_allowed_policy"
        | "numa_cpu_nodes"
        | "numa_mem_policy" => Refused("run readlab under taskset or numactl instead"),
        "random_generator" | "percentage_random" => Refused(
            "readlab's random reads are all random, from its own generator; a skew is random_distribution=",
        ),
        "startdelay" | "thinktime" | "thinktime_blocks" | "thinktime_spin" => {
            Refused("readlab issues without pauses; an open loop is --rate IOPS")
        }
        "include" => Refused("readlab reads one job file; put the included options in it"),
        "exitall" | "exitall_on_error" | "continue_on_error" => {
            Refused("readlab ends a run on its first error and reports it")
        }
        _ => return None,
    })
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

/// A job file read into readlab: its jobs in file order, and the notes on what readlab ignored.
#[derive(Debug, Clone, PartialEq)]
pub struct JobFile {
    pub jobs: Vec<Job>,
    /// Options accepted as meaning what readlab always does ([`foreign`] says why), once each.
    pub notes: Vec<String>,
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
