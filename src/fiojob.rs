//! fio's vocabulary in readlab: its engine and pattern names, the options readlab has under
//! another name, those it refuses (and what to use instead), and fio job files — the read subset,
//! parsed into readlab's run configurations with every problem listed by section and line, and
//! written back from a configuration so that a pick of `readlab tune` replays in fio too.

use crate::config::{Arrivals, Fadvise, Rate, RunConfig, Rw};
use crate::engine::{EngineKind, MAX_THREADS};
use crate::error::Error;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

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

/// One `key[=value]` line.
#[derive(Debug, Clone)]
struct Opt {
    key: String,
    value: Option<String>,
    line: usize,
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

/// Parse a job file's text (see [`load`]); every problem found, in file order.
pub fn parse(text: &str, default: &RunConfig) -> Result<JobFile, Vec<Problem>> {
    let mut problems = Vec::new();
    let mut global: Vec<Opt> = Vec::new();
    // (name, line, options)
    let mut sections: Vec<(String, usize, Vec<Opt>)> = Vec::new();
    let mut current: Option<usize> = None; // None: before any section; Some(usize::MAX): global
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let l = raw.trim();
        if l.is_empty() || l.starts_with(';') || l.starts_with('#') {
            continue;
        }
        if let Some(rest) = l.strip_prefix('[') {
            let Some(name) = rest.strip_suffix(']').map(str::trim) else {
                problems.push(Problem {
                    section: None,
                    line,
                    text: format!("'{l}' is not a section header; write [name]"),
                });
                continue;
            };
            if name.is_empty() {
                problems.push(Problem {
                    section: None,
                    line,
                    text: "a section needs a name: [name]".into(),
                });
                continue;
            }
            if name == "global" {
                current = Some(usize::MAX);
            } else {
                if sections.iter().any(|(n, ..)| n == name) {
                    problems.push(Problem {
                        section: Some(name.into()),
                        line,
                        text: format!("a second job named [{name}]; give each job its own name"),
                    });
                }
                sections.push((name.to_string(), line, global.clone()));
                current = Some(sections.len() - 1);
            }
            continue;
        }
        let (key, value) = match l.split_once('=') {
            Some((k, v)) => (k.trim(), Some(v.trim().to_string())),
            None => (l, None),
        };
        let opt = Opt {
            key: key.to_string(),
            value,
            line,
        };
        match current {
            None => problems.push(Problem {
                section: None,
                line,
                text: format!(
                    "'{key}' comes before any section; put it under [global] or a job's [name]"
                ),
            }),
            Some(usize::MAX) => global.push(opt),
            Some(k) => sections[k].2.push(opt),
        }
    }
    // fio applies a later [global] to the jobs after it only; so does this: each job copied the
    // global options when its section began.
    if sections.is_empty() && problems.is_empty() {
        problems.push(Problem {
            section: None,
            line: text.lines().count().max(1),
            text: "no job section ([name] with its options); [global] alone runs nothing".into(),
        });
    }
    let mut notes: Vec<String> = Vec::new();
    let mut jobs = Vec::new();
    for (name, line, opts) in sections {
        match job(&name, line, &opts, default, &mut notes) {
            Ok(j) => jobs.push(j),
            Err(mut p) => problems.append(&mut p),
        }
    }
    if !problems.is_empty() {
        problems.sort_by_key(|p| p.line);
        problems.dedup();
        return Err(problems);
    }
    Ok(JobFile { jobs, notes })
}

/// An option's value, when it has a non-empty one.
fn need(v: Option<&str>) -> Result<&str, ()> {
    v.filter(|s| !s.is_empty()).ok_or(())
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

/// A switch in a job file: bare, or `=` a [`switch_word`]; a refusal is the text of a problem.
fn switch(value: Option<&str>) -> Result<bool, String> {
    value.map_or(Ok(true), |v| switch_word(v).map_err(|e| e.to_string()))
}

/// fio's `a:b` names two files (`\:` is a colon in a name).
pub fn filenames(value: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut chars = value.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&':') => {
                out.last_mut().expect("one").push(':');
                chars.next();
            }
            ':' => out.push(String::new()),
            c => out.last_mut().expect("one").push(c),
        }
    }
    out
}

fn job(
    name: &str,
    line: usize,
    opts: &[Opt],
    default: &RunConfig,
    notes: &mut Vec<String>,
) -> Result<Job, Vec<Problem>> {
    let mut problems = Vec::new();
    let mut cfg = default.clone();
    let mut target: Option<PathBuf> = None;
    // A filename= was given (a refused one is its own problem, not a missing one).
    let mut named = false;
    let mut waits = false;
    let mut engine_opts: Vec<(&Opt, &str)> = Vec::new();
    let mut complete_max: Option<(usize, usize)> = None;
    let mut fadvise: Option<(String, usize)> = None;
    let mut lines = Lines::default();
    let known_engine_opt = |k: &str| crate::engine::option::all().any(|(_, d)| d.fio == Some(k));
    for o in opts {
        let v = o.value.as_deref();
        let mut bad = |text: String| {
            problems.push(Problem {
                section: Some(name.into()),
                line: o.line,
                text,
            })
        };
        let key = o.key.as_str();
        let res: Result<(), String> = (|| {
            match key {
                "name" | "description" => {}
                "filename" | "uri" => {
                    named = true;
                    let v = need(v).map_err(|_| format!("{key}= needs a path"))?;
                    let files = if key == "uri" {
                        vec![v.to_string()]
                    } else {
                        filenames(v)
                    };
                    if files.len() > 1 || files[0].is_empty() {
                        return Err(format!(
                            "{key}={v} names {} files; readlab reads one per job (give each its own [job], or several TARGETs to `readlab run` to read them at once)",
                            files.len()
                        ));
                    }
                    target = Some(PathBuf::from(&files[0]));
                }
                "ioengine" => {
                    let v = need(v).map_err(|_| "ioengine= needs an engine".to_string())?;
                    cfg.engine = engine(v).map_err(|e| e.to_string())?;
                    lines.engine = o.line;
                }
                "rw" | "readwrite" => {
                    let v = need(v).map_err(|_| format!("{key}= needs read or randread"))?;
                    cfg.rw = rw(v).map_err(|e| e.to_string())?;
                }
                "bs" | "blocksize" => {
                    let v = need(v).map_err(|_| "bs= needs a size, e.g. 4k".to_string())?;
                    let read = v.split(',').next().unwrap_or(v).trim();
                    cfg.bs = crate::size::parse_size(read).map_err(|e| e.to_string())?;
                    lines.bs = o.line;
                }
                "size" | "offset" | "io_size" | "io_limit" => {
                    let v = need(v).map_err(|_| format!("{key}= needs a size, e.g. 1g"))?;
                    if v.ends_with('%') {
                        return Err(format!(
                            "{key}={v}: a percentage of the file; readlab takes bytes (e.g. 1g)"
                        ));
                    }
                    let n = crate::size::parse_size(v).map_err(|e| e.to_string())?;
                    match key {
                        "size" => cfg.size = Some(n),
                        "offset" => cfg.offset = n,
                        _ => cfg.io_limit = Some(n),
                    }
                }
                "runtime" | "ramp_time" => {
                    let v = need(v).map_err(|_| format!("{key}= needs a time, e.g. 10s"))?;
                    let d = crate::size::parse_duration(v).map_err(|e| e.to_string())?;
                    if key == "runtime" {
                        if d.is_zero() {
                            return Err("runtime=0: give a positive time, e.g. 10s".into());
                        }
                        cfg.runtime = d;
                    } else {
                        cfg.ramp = d;
                    }
                }
                "iodepth"
                | "numjobs"
                | "iodepth_batch"
                | "iodepth_batch_submit"
                | "iodepth_batch_complete"
                | "iodepth_batch_complete_min"
                | "iodepth_batch_complete_max" => {
                    let v = need(v).map_err(|_| format!("{key}= needs a number"))?;
                    let n: usize =
                        v.parse().ok().filter(|&n| n >= 1).ok_or_else(|| {
                            format!("{key}={v}: give a whole number of at least 1")
                        })?;
                    match key {
                        "iodepth" => (cfg.iodepth, lines.iodepth) = (n, o.line),
                        "numjobs" => {
                            if n > MAX_THREADS {
                                return Err(format!(
                                    "numjobs={n} is more threads than readlab starts (at most {MAX_THREADS})"
                                ));
                            }
                            cfg.threads = n;
                        }
                        "iodepth_batch" | "iodepth_batch_submit" => {
                            (cfg.batch, lines.batch) = (n, o.line)
                        }
                        "iodepth_batch_complete_max" => complete_max = Some((n, o.line)),
                        _ => (cfg.complete_min, lines.complete_min) = (n, o.line),
                    }
                }
                "direct" => cfg.direct = switch(v)?,
                "buffered" => {
                    cfg.direct = !switch(v)?;
                }
                "randseed" => {
                    let v = need(v).map_err(|_| "randseed= needs a number".to_string())?;
                    cfg.seed = v
                        .parse()
                        .map_err(|_| format!("randseed={v}: give a whole number"))?;
                }
                "fadvise_hint" => {
                    fadvise = Some((v.unwrap_or("1").to_string(), o.line));
                }
                k if known_engine_opt(k) => engine_opts.push((o, k)),
                k => match foreign(k) {
                    Some(Foreign::NoOp(_)) => {
                        if matches!(k, "stonewall" | "new_group" | "wait_for_previous") {
                            waits = true;
                        } else if !notes.iter().any(|n| n == k) {
                            notes.push(k.to_string());
                        }
                    }
                    Some(Foreign::Refused(what)) => {
                        let shown = match v {
                            Some(v) => format!("{k}={v}"),
                            None => k.to_string(),
                        };
                        return Err(format!("{shown}: {what}"));
                    }
                    None => {
                        return Err(format!(
                            "'{k}' is not a fio option readlab knows; remove it (readlab's job files take ioengine, rw, bs, size, offset, runtime, ramp_time, iodepth, iodepth_batch_submit, iodepth_batch_complete_min, numjobs, direct, filename, randseed, and the engines' registerfiles, fixedbufs, sqthread_poll, sqthread_poll_cpu, hipri, nowait)"
                        ));
                    }
                },
            }
            Ok(())
        })();
        if let Err(text) = res {
            bad(text);
        }
    }
    // Engine options belong to the job's engine, whatever order they came in.
    let mut values: Vec<(&str, String)> = Vec::new();
    for (o, k) in &engine_opts {
        let owns = cfg.engine.spec().options.iter().any(|d| d.fio == Some(k));
        if !owns {
            let owners: Vec<&str> = crate::engine::option::all()
                .filter(|(_, d)| d.fio == Some(k))
                .map(|(e, _)| e.fio_name())
                .collect();
            problems.push(Problem {
                section: Some(name.into()),
                line: o.line,
                text: format!(
                    "{k} is an option of ioengine={} (this job's is {})",
                    owners.join(" or "),
                    cfg.engine.fio_name()
                ),
            });
            continue;
        }
        let value = match o.value.as_deref() {
            None => "1".to_string(),
            Some(v) => v.to_string(),
        };
        if value.parse::<u64>().is_err() && !matches!(value.as_str(), "true" | "false") {
            problems.push(Problem {
                section: Some(name.into()),
                line: o.line,
                text: format!("{k}={value}: give a number (1 or 0 for a switch)"),
            });
            continue;
        }
        values.push((k, value));
    }
    cfg.options = crate::engine::option::from_fio(cfg.engine, |k| {
        values
            .iter()
            .rev()
            .find(|(n, _)| *n == k)
            .map(|(_, v)| v.clone())
    });
    cfg.options.uring.sqpoll_idle_ms = default.options.uring.sqpoll_idle_ms;
    if let Some((v, l)) = fadvise {
        cfg.fadvise = match v.as_str() {
            "0" | "none" => None,
            "1" => Some(match cfg.rw {
                Rw::Read => Fadvise::Sequential,
                Rw::Randread => Fadvise::Random,
            }),
            "sequential" => Some(Fadvise::Sequential),
            "random" => Some(Fadvise::Random),
            other => {
                problems.push(Problem {
                    section: Some(name.into()),
                    line: l,
                    text: format!("fadvise_hint={other}: readlab gives 0, 1, sequential or random"),
                });
                None
            }
        };
    }
    let mut at = |l: usize, text: String| {
        problems.push(Problem {
            section: Some(name.into()),
            line: if l == 0 { line } else { l },
            text,
        })
    };
    let asynchronous = cfg.engine.capabilities().asynchronous;
    if !asynchronous && cfg.iodepth > 1 {
        at(
            lines.iodepth.max(lines.engine),
            format!(
                "ioengine={} is synchronous (one I/O in flight): drop iodepth={} or use numjobs= or an asynchronous engine (io_uring, libaio)",
                cfg.engine.fio_name(),
                cfg.iodepth
            ),
        );
    }
    if asynchronous && cfg.batch > cfg.iodepth {
        at(
            lines.batch,
            format!(
                "iodepth_batch_submit={} is more than iodepth={}",
                cfg.batch, cfg.iodepth
            ),
        );
    }
    if asynchronous && cfg.complete_min > cfg.batch {
        at(
            lines.complete_min,
            complete_min_problem(
                cfg.complete_min,
                cfg.batch,
                "iodepth_batch_complete_min",
                "iodepth_batch_submit",
            ),
        );
    }
    if let Some((n, l)) = complete_max
        && n != cfg.batch
    {
        at(
            l,
            format!(
                "iodepth_batch_complete_max={n}: readlab reaps at most one batch (iodepth_batch_submit={}); drop it or make them equal",
                cfg.batch
            ),
        );
    }
    if !crate::config::BLOCK_SIZES.contains(&cfg.bs) {
        at(
            lines.bs,
            format!("bs={} B is outside 512 B … 64 MiB", cfg.bs),
        );
    }
    match target {
        Some(t) => cfg.target = t,
        None if named || !cfg.target.as_os_str().is_empty() => {}
        None => at(
            line,
            "no filename=: add filename=PATH to the job (or [global]), or give the TARGET to `readlab run --job FILE TARGET`".into(),
        ),
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(Job {
        name: name.into(),
        line,
        config: cfg,
        waits,
    })
}

/// The lines options were set on, for problems found once the whole section is read (0: the
/// section's header).
#[derive(Default)]
struct Lines {
    engine: usize,
    iodepth: usize,
    bs: usize,
    batch: usize,
    complete_min: usize,
}

/// Why a completion minimum above the batch is refused, in the words of the flags given.
pub fn complete_min_problem(min: usize, batch: usize, min_flag: &str, batch_flag: &str) -> String {
    format!(
        "{min_flag}={min} is more than {batch_flag}={batch}: each reap would wait for more completions than a submit adds, draining the queue below its depth; use {min_flag} ≤ {batch_flag}"
    )
}

/// fio's time: whole seconds when it is, else milliseconds (fio reads both).
fn fio_time(d: Duration) -> String {
    if d.subsec_nanos() == 0 {
        format!("{}s", d.as_secs())
    } else {
        format!("{}ms", d.as_millis().max(1))
    }
}

/// The fio job file that runs `cfg` (one job, named `name`), for fio and for `readlab run
/// --job`. Refused for what fio has no words for (readlab's thread pool, blocks per request, an
/// open-loop rate); readlab's byte verification and its stop once stable are left out, each with
/// a comment (the job runs its whole runtime).
pub fn write(cfg: &RunConfig, name: &str, origin: &str) -> Result<String, Error> {
    let no = |what: &str| {
        Err(Error::invalid(format!(
            "{}: {what} has no fio equivalent, so no job file can replay it",
            cfg.label()
        )))
    };
    if cfg.engine == EngineKind::Pool {
        return no("the thread pool engine");
    }
    if cfg.blocks_per_request > 1 {
        return no("several blocks per request");
    }
    let name: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let target = cfg.target.to_string_lossy();
    let nbd = cfg.engine.name() == "nbd";
    let mut s =
        format!("; {origin}\n; replay with `fio FILE` or `readlab run --job FILE`\n[{name}]\n");
    let mut put = |k: &str, v: String| s.push_str(&format!("{k}={v}\n"));
    if nbd {
        put("uri", target.into_owned());
    } else {
        put("filename", target.replace(':', "\\:"));
    }
    put(
        "ioengine",
        if cfg.engine == EngineKind::Null {
            "null".into()
        } else {
            cfg.engine.fio_name().into()
        },
    );
    put(
        "rw",
        match cfg.rw {
            Rw::Read => "read",
            Rw::Randread => "randread",
        }
        .into(),
    );
    put("bs", cfg.bs.to_string());
    put("direct", u8::from(cfg.direct).to_string());
    put("numjobs", cfg.threads.to_string());
    if cfg.engine.capabilities().asynchronous {
        put("iodepth", cfg.iodepth.to_string());
        put("iodepth_batch_submit", cfg.batch.to_string());
        put("iodepth_batch_complete_min", cfg.complete_min.to_string());
        put("iodepth_batch_complete_max", cfg.batch.to_string());
    }
    if cfg.offset > 0 {
        put("offset", cfg.offset.to_string());
    }
    if let Some(n) = cfg.size {
        put("size", n.to_string());
    }
    if let Some(n) = cfg.io_limit {
        put("io_size", n.to_string());
    }
    put("runtime", fio_time(cfg.runtime));
    if !cfg.ramp.is_zero() {
        put("ramp_time", fio_time(cfg.ramp));
    }
    put("randseed", cfg.seed.to_string());
    if let Some(f) = cfg.fadvise {
        put(
            "fadvise_hint",
            match f {
                Fadvise::Sequential => "sequential",
                Fadvise::Random => "random",
            }
            .into(),
        );
    }
    for d in crate::engine::option::set_in(cfg.engine, &cfg.options) {
        if let (Some(k), Some(n)) = (d.fio, (d.get)(&cfg.options)) {
            put(k, n.to_string());
        }
    }
    if let Some(Rate { iops, arrivals }) = cfg.rate {
        s.push_str(&format!(
            "; readlab's open loop: {iops} IOPS over all threads, {} arrivals (fio: rate_iops per job, rate_process)\n",
            match arrivals {
                Arrivals::Poisson => "poisson",
                Arrivals::Fixed => "fixed",
            }
        ));
        return no("an open-loop rate");
    }
    s.push_str("time_based\nnorandommap\nthread\ngroup_reporting\n");
    if cfg.stop_when_stable.is_some() {
        s.push_str("; readlab stopped once IOPS was stable; this job runs the whole runtime\n");
    }
    if cfg.verify {
        s.push_str("; readlab also checked every byte read against `readlab prepare`'s data (readlab run --verify)\n");
    }
    Ok(s)
}

/// The job file's path beside a profile: `job-4k.fio` for `profile-4k.json`.
pub fn beside(profile: &Path) -> PathBuf {
    let stem = profile
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let rest = stem.strip_prefix("profile").unwrap_or(&stem);
    profile.with_file_name(format!("job{rest}.fio"))
}

#[cfg(test)]
mod tests {
    use super::*;

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
