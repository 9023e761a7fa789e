//! fio's vocabulary in readlab: its engine and pattern names, the options readlab has under
//! another name, those it refuses (and what to use instead), and fio job files — the read subset,
//! parsed into readlab's run configurations with every problem listed by section and line, and
//! written back from a configuration so that a pick of `readlab tune` replays in fio too.

mod check;
mod option;
mod parse;
mod write;

pub use check::complete_min_problem;
pub use option::filenames;
pub use parse::parse;
pub use write::{beside, write};

use crate::config::{RunConfig, Rw};
use crate::engine::EngineKind;
use crate::error::Error;
use std::fmt;
use std::path::{Path, PathBuf};

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
        "random_distribution" | "random_generator" | "percentage_random" => {
            Refused("readlab's random offsets are uniform; there is no other distribution")
        }
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

/// Read the job file at `path`; `default` gives what a job does not say (its target when it has
/// no filename=, the runtime when it has no runtime=, the seed, verify).
pub fn load(path: &Path, default: &RunConfig) -> Result<JobFile, JobError> {
    let meta = std::fs::metadata(path).map_err(|e| {
        Error::invalid(format!("{}: cannot read the job file: {e}", path.display()))
    })?;
    if !meta.is_file() || meta.len() > 1 << 20 {
        return Err(Error::invalid(format!(
            "{}: not a fio job file (a regular file of at most 1 MiB)",
            path.display()
        ))
        .into());
    }
    let text = std::fs::read_to_string(path).map_err(|e| {
        Error::invalid(format!("{}: cannot read the job file: {e}", path.display()))
    })?;
    parse(&text, default).map_err(|problems| JobError::Refused {
        path: path.into(),
        problems,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn default() -> RunConfig {
        RunConfig::new("")
    }

    fn lines_of(p: &[Problem]) -> Vec<usize> {
        p.iter().map(|p| p.line).collect()
    }

    #[test]
    fn fio_engine_names_are_readlab_engines() {
        assert_eq!(engine("io_uring").unwrap(), EngineKind::Uring);
        assert_eq!(engine("uring").unwrap(), EngineKind::Uring);
        assert_eq!(engine("sync").unwrap(), EngineKind::Psync);
        assert_eq!(engine("psync").unwrap(), EngineKind::Psync);
        assert_eq!(engine("libaio").unwrap(), EngineKind::Libaio);
        assert_eq!(engine("pvsync2").unwrap(), EngineKind::Pvsync2);
        assert_eq!(engine("posixaio").unwrap(), EngineKind::Posixaio);
        assert_eq!(engine("null").unwrap(), EngineKind::Null);
        assert_eq!(engine("nbd").unwrap().name(), "nbd");
        let e = engine("mmap").unwrap_err().to_string();
        assert!(
            e.contains("unknown engine 'mmap'") && e.contains("io_uring"),
            "{e}"
        );
    }

    #[test]
    fn writing_patterns_are_refused_as_writes() {
        assert_eq!(rw("read").unwrap(), Rw::Read);
        for w in ["write", "randwrite", "rw", "randrw", "trim", "randtrim"] {
            let e = rw(w).unwrap_err().to_string();
            assert!(e.contains("readlab only reads"), "{w}: {e}");
        }
    }

    #[test]
    fn a_file_with_global_and_two_jobs() {
        let text = "; a comment\n# another\n[global]\nioengine=io_uring\nbs=4k\ndirect=1\nruntime=10\nfilename=/tmp/x\ntime_based\n\n[qd1]\niodepth=1\n\n[qd16]\nstonewall\niodepth=16\niodepth_batch_submit=4\niodepth_batch_complete_min=2\nregisterfiles\nfixedbufs=1\nnumjobs=2\nsize=1g\nramp_time=500ms\n";
        let f = parse(text, &default()).unwrap();
        assert_eq!(f.jobs.len(), 2);
        let (a, b) = (&f.jobs[0], &f.jobs[1]);
        assert_eq!((a.name.as_str(), a.line), ("qd1", 11));
        assert_eq!(a.config.label(), "U1B1");
        assert_eq!(a.config.runtime, Duration::from_secs(10));
        assert_eq!(a.config.target, PathBuf::from("/tmp/x"));
        assert_eq!(b.config.label(), "U16B4MFT2");
        assert_eq!(b.config.complete_min, 2);
        assert_eq!(b.config.size, Some(1 << 30));
        assert_eq!(b.config.ramp, Duration::from_millis(500));
        assert!(b.waits && f.concurrent_in_fio().is_empty());
        assert_eq!(f.notes, vec!["time_based"]);
    }

    #[test]
    fn every_problem_is_listed_with_its_section_and_line() {
        let text = "[global]\nfilename=/tmp/x\n[r]\nrw=randread\n[w]\nrw=randwrite\nverify=crc32c\nbogus_option=3\n[p]\nioengine=psync\niodepth=8\n";
        let p = parse(text, &default()).unwrap_err();
        assert_eq!(lines_of(&p), vec![6, 7, 8, 11], "{p:?}");
        assert_eq!(p[0].section.as_deref(), Some("w"));
        assert!(p[0].text.contains("readlab only reads"), "{}", p[0]);
        assert!(p[1].text.contains("--verify"), "{}", p[1]);
        assert!(p[2].text.contains("'bogus_option'"), "{}", p[2]);
        assert!(p[3].text.contains("synchronous"), "{}", p[3]);
        assert!(
            p[0].to_string()
                .starts_with("line 6 [w]: readlab only reads")
        );
    }

    #[test]
    fn two_files_an_option_outside_sections_and_a_foreign_engine_option() {
        let text = "bs=4k\n[a]\nfilename=/a:/b\n[b]\nfilename=/c\\:d\nioengine=libaio\nfixedbufs\n";
        let p = parse(text, &default()).unwrap_err();
        assert_eq!(lines_of(&p), vec![1, 3, 7], "{p:?}");
        assert!(p[2].text.contains("io_uring"), "{}", p[2]);
        let ok = parse("[b]\nfilename=/c\\:d\n", &default()).unwrap();
        assert_eq!(ok.jobs[0].config.target, PathBuf::from("/c:d"));
    }

    #[test]
    fn no_filename_takes_the_default_target_or_says_so() {
        let p = parse("[a]\nrw=read\n", &default()).unwrap_err();
        assert!(p[0].text.contains("no filename="), "{}", p[0]);
        let f = parse("[a]\nrw=read\n", &RunConfig::new("/t")).unwrap();
        assert_eq!(f.jobs[0].config.target, PathBuf::from("/t"));
        assert_eq!(f.jobs[0].config.rw, Rw::Read);
        assert_eq!(f.concurrent_in_fio(), Vec::<&str>::new());
        let two = parse("[a]\n[b]\n", &RunConfig::new("/t")).unwrap();
        assert_eq!(two.concurrent_in_fio(), vec!["b"]);
    }

    #[test]
    fn complete_min_above_batch_is_refused() {
        let p = parse(
            "[a]\nfilename=/x\nioengine=libaio\niodepth=8\niodepth_batch_complete_min=4\n",
            &default(),
        )
        .unwrap_err();
        assert_eq!(lines_of(&p), vec![5]);
    }

    #[test]
    fn a_written_job_reads_back_as_the_same_configuration() {
        let mut c = RunConfig::new("/dev/x");
        c.engine = EngineKind::Uring;
        c.iodepth = 32;
        c.batch = 8;
        c.complete_min = 4;
        c.threads = 2;
        c.options.uring.fixed_files = true;
        c.options.uring.sqpoll = true;
        c.runtime = Duration::from_millis(1500);
        c.ramp = Duration::from_secs(1);
        c.seed = 7;
        let text = write(&c, "U32B8FST2", "written by a test").unwrap();
        let back = parse(&text, &default()).unwrap();
        assert_eq!(back.jobs[0].config, c, "{text}");
        let mut pool = c.clone();
        pool.engine = EngineKind::Pool;
        assert!(write(&pool, "x", "").is_err());
    }

    #[test]
    fn the_job_file_beside_a_profile() {
        assert_eq!(
            beside(Path::new("/o/profile-4k.json")),
            PathBuf::from("/o/job-4k.fio")
        );
    }
}
