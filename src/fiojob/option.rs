//! The option mapping of a job section: each fio `key[=value]` onto the readlab configuration it
//! means, or the problem's text when readlab cannot honour it; the engine's options and the
//! fadvise hint once the section's engine is known.

use super::section::{Lines, Opt, Section};
use super::vocabulary::{Foreign, foreign, read_names};
use super::words::{Note, Problem, add_note, engine, rw, switch_word};
use crate::config::{Fadvise, RunConfig, Rw};
use crate::engine::MAX_THREADS;
use std::path::PathBuf;

/// An option's value, when it has a non-empty one.
fn need(v: Option<&str>) -> Result<&str, ()> {
    v.filter(|s| !s.is_empty()).ok_or(())
}

/// A switch in a job file: bare, or `=` a [`switch_word`]; a refusal is the text of a problem.
fn switch(value: Option<&str>) -> Result<bool, String> {
    value.map_or(Ok(true), |v| switch_word(v).map_err(|e| e.to_string()))
}

/// `bsrange=` naming one block size (`4k-4k`): that size; a range of sizes is refused (fio
/// draws any size in it; readlab reads the sizes a `bssplit=` names). Only the read part
/// (before `,`) counts.
fn one_size(key: &str, v: Option<&str>) -> Result<u64, String> {
    let v = need(v).map_err(|_| format!("{key}= needs sizes, e.g. 4k-4k"))?;
    let read = v.split(',').next().unwrap_or(v).trim();
    let parts: Vec<&str> = read.split('-').map(str::trim).collect();
    let sizes = parts
        .iter()
        .map(|p| crate::size::parse_size(p).map_err(|e| format!("{key}={v}: {e}")))
        .collect::<Result<Vec<u64>, String>>()?;
    match sizes.split_first() {
        Some((&first, rest)) if rest.iter().all(|&b| b == first) => Ok(first),
        Some(_) => Err(format!(
            "{key}={v} draws sizes at random from a range, which readlab does not; name the sizes and their shares with bssplit= (e.g. bssplit=4k/50:64k/50)"
        )),
        None => Err(format!("{key}= needs sizes, e.g. 4k-4k")),
    }
}

/// Whether some engine has an option of this fio name.
fn known_engine_opt(k: &str) -> bool {
    crate::engine::option::all().any(|(_, d)| d.fio == Some(k))
}

impl<'a> Section<'a> {
    /// The section `[name]` before its options: `default`'s configuration.
    pub(super) fn new(name: &'a str, default: &RunConfig) -> Self {
        Section {
            name,
            problems: Vec::new(),
            cfg: default.clone(),
            target: None,
            named: false,
            directory: None,
            nrfiles: None,
            waits: false,
            engine_opts: Vec::new(),
            complete_max: None,
            fadvise: None,
            filesize: None,
            rate: None,
            arrivals: None,
            think: Default::default(),
            loops: None,
            time_based: false,
            lines: Lines::default(),
        }
    }

    /// A problem in this section, on `line`.
    pub(super) fn problem(&mut self, line: usize, text: String) {
        self.problems.push(Problem {
            section: Some(self.name.into()),
            line,
            text,
        })
    }

    /// Read one option into the section; the problem's text when readlab cannot honour it.
    pub(super) fn apply(&mut self, o: &'a Opt, notes: &mut Vec<Note>) -> Result<(), String> {
        let v = o.value.as_deref();
        let key = o.key.as_str();
        let cfg = &mut self.cfg;
        match key {
            "name" | "description" => {}
            // A leftover include (before any section, or without a file): the rest are read in
            // place by `include`.
            "include" => {
                return Err("include names no file; write include FILE in a section".into());
            }
            "filename" | "uri" => self.filename(key, v)?,
            "directory" | "nrfiles" | "file_service_type" => self.files(key, v, o.line)?,
            "ioengine" => {
                let v = need(v).map_err(|_| "ioengine= needs an engine".to_string())?;
                cfg.engine = engine(v).map_err(|e| e.to_string())?;
                self.lines.engine = o.line;
            }
            "rw" | "readwrite" => {
                let v = need(v).map_err(|_| format!("{key}= needs read or randread"))?;
                cfg.rw = rw(v).map_err(|e| e.to_string())?;
            }
            "bs" | "blocksize" | "bsrange" | "blocksize_range" | "bssplit" => {
                self.block_size(key, v, o.line)?
            }
            "size" | "offset" | "io_size" | "io_limit" | "filesize" => self.size(key, v)?,
            "rate_iops" | "rate" => self.rate(key, v, notes)?,
            "rate_process" => {
                self.arrivals = Some(match v.map(str::trim) {
                    Some("linear") | None => crate::config::Arrivals::Fixed,
                    Some("poisson") => crate::config::Arrivals::Poisson,
                    Some(other) => {
                        return Err(format!("rate_process={other}: give linear or poisson"));
                    }
                });
            }
            "runtime" | "ramp_time" => self.time(key, v)?,
            "iodepth"
            | "numjobs"
            | "iodepth_batch"
            | "iodepth_batch_submit"
            | "iodepth_batch_complete"
            | "iodepth_batch_complete_min"
            | "iodepth_batch_complete_max" => self.count(key, v, o.line)?,
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
            "random_distribution" => {
                let v = need(v).map_err(|_| {
                    "random_distribution= needs a distribution, e.g. zipf:1.2".to_string()
                })?;
                cfg.random_distribution =
                    v.parse().map_err(|e: crate::error::Error| e.to_string())?;
                self.lines.distribution = o.line;
            }
            "thinktime"
            | "thinktime_spin"
            | "thinktime_iotime"
            | "thinktime_blocks"
            | "thinktime_blocks_type"
            | "loops" => self.think(key, v, o.line)?,
            "time_based" => {
                self.time_based = switch(v)?;
                self.foreign(key, v, notes)?;
            }
            "fadvise_hint" => {
                self.fadvise = Some((v.unwrap_or("1").to_string(), o.line));
            }
            k if known_engine_opt(k) => self.engine_opts.push((o, k)),
            k => self.foreign(k, v, notes)?,
        }
        Ok(())
    }

    /// `directory=`, `nrfiles=` and `file_service_type=`: where a job's several files are and
    /// how its reads go round them.
    fn files(&mut self, key: &str, v: Option<&str>, line: usize) -> Result<(), String> {
        let cfg = &mut self.cfg;
        match key {
            "directory" => {
                let v = need(v).map_err(|_| "directory= needs a path".to_string())?;
                let mut dirs = crate::fileset::split(v);
                if dirs.len() > 1 {
                    return Err(format!(
                        "directory={v} names several directories; readlab reads a job's files from one"
                    ));
                }
                self.directory = Some((dirs.remove(0), line));
            }
            "nrfiles" => {
                let v = need(v).map_err(|_| "nrfiles= needs a number".to_string())?;
                let n = v.parse::<usize>().ok().filter(|&n| n >= 1).ok_or_else(|| {
                    format!("nrfiles={v}: give a whole number of files, 1 or more")
                })?;
                crate::fileset::check_count(n, &format!("nrfiles={v}"))
                    .map_err(|e| e.to_string())?;
                self.nrfiles = Some((n, line));
            }
            "file_service_type" => {
                let v = need(v).map_err(|_| {
                    "file_service_type= needs roundrobin, random or sequential".to_string()
                })?;
                cfg.file_service = v.parse().map_err(|e: crate::Error| e.to_string())?;
            }
            _ => unreachable!("apply sends only these"),
        }
        Ok(())
    }

    /// `bs=`, `bsrange=` (one size) and `bssplit=` (a mix, which takes precedence over bs=).
    fn block_size(&mut self, key: &str, v: Option<&str>, line: usize) -> Result<(), String> {
        let cfg = &mut self.cfg;
        match key {
            "bs" | "blocksize" => {
                let v = need(v).map_err(|_| "bs= needs a size, e.g. 4k".to_string())?;
                let read = v.split(',').next().unwrap_or(v).trim();
                let bs = crate::size::parse_size(read).map_err(|e| e.to_string())?;
                // A mix (bssplit=) takes precedence over bs=, as in fio.
                if cfg.bssplit.is_single() {
                    cfg.bs = bs;
                    self.lines.bs = line;
                }
            }
            "bsrange" | "blocksize_range" => {
                cfg.bs = one_size(key, v)?;
                cfg.bssplit = Default::default();
                self.lines.bs = line;
            }
            "bssplit" => {
                let v =
                    need(v).map_err(|_| "bssplit= needs sizes, e.g. 4k/60:64k/40".to_string())?;
                let split: crate::bssplit::BsSplit =
                    v.parse().map_err(|e: crate::Error| e.to_string())?;
                // One size alone (`4k/100`) is that size; a mix's offsets align to its smallest.
                cfg.bs = match split.min() {
                    Some(min) => min,
                    None => crate::bssplit::BsSplit::one_size(v).unwrap_or(cfg.bs),
                };
                cfg.bssplit = split;
                self.lines.bs = line;
            }
            _ => unreachable!("apply sends only these"),
        }
        Ok(())
    }

    /// `rate_iops=` or `rate=` (bytes a second): readlab's open loop, with its note.
    fn rate(&mut self, key: &str, v: Option<&str>, notes: &mut Vec<Note>) -> Result<(), String> {
        let v = need(v).map_err(|_| format!("{key}= needs a number"))?;
        let read = v.split(',').next().unwrap_or(v).trim();
        let n = crate::size::parse_size(read).map_err(|e| e.to_string())?;
        if n == 0 {
            return Err(format!("{key}={v}: give a positive rate"));
        }
        self.rate = Some(if key == "rate" {
            super::section::JobRate::Bytes(n)
        } else {
            super::section::JobRate::Iops(n)
        });
        add_note(
            notes,
            key,
            "read as readlab's open loop (--rate): latency is measured from each request's due time, fio's from its issue, so under load readlab's includes the wait behind schedule".into(),
        );
        Ok(())
    }

    /// `filename=` or `uri=`: the job's target, or its several files (`a:b`, one job reading
    /// them all as fio does).
    fn filename(&mut self, key: &str, v: Option<&str>) -> Result<(), String> {
        self.named = true;
        let v = need(v).map_err(|_| format!("{key}= needs a path"))?;
        let files = if key == "uri" {
            vec![PathBuf::from(v)]
        } else {
            crate::fileset::parse(v).map_err(|e| format!("{key}={e}"))?
        };
        self.target = Some(files);
        Ok(())
    }

    /// `size=`, `offset=`, `io_size=` (`io_limit=`), `filesize=` (the size when `size=` is not
    /// given): bytes.
    fn size(&mut self, key: &str, v: Option<&str>) -> Result<(), String> {
        let v = need(v).map_err(|_| format!("{key}= needs a size, e.g. 1g"))?;
        if v.ends_with('%') {
            return Err(format!(
                "{key}={v}: a percentage of the file; readlab takes bytes (e.g. 1g)"
            ));
        }
        if key == "filesize" && v.contains('-') {
            return Err(format!(
                "filesize={v}: a range of file sizes; readlab reads one file per job: give one size"
            ));
        }
        let n = crate::size::parse_size(v).map_err(|e| e.to_string())?;
        match key {
            "size" => self.cfg.size = Some(n),
            "filesize" => self.filesize = Some(n),
            "offset" => self.cfg.offset = n,
            _ => self.cfg.io_limit = Some(n),
        }
        Ok(())
    }

    /// `runtime=` and `ramp_time=`.
    fn time(&mut self, key: &str, v: Option<&str>) -> Result<(), String> {
        let v = need(v).map_err(|_| format!("{key}= needs a time, e.g. 10s"))?;
        let d = crate::size::parse_duration(v).map_err(|e| e.to_string())?;
        if key == "runtime" {
            if d.is_zero() {
                return Err("runtime=0: give a positive time, e.g. 10s".into());
            }
            self.cfg.runtime = d;
        } else {
            self.cfg.ramp = d;
        }
        Ok(())
    }

    /// fio's think time (`thinktime=` … µs when bare, `thinktime_iotime=` s) and `loops=`, set
    /// on `line`.
    fn think(&mut self, key: &str, v: Option<&str>, line: usize) -> Result<(), String> {
        let v = need(v).map_err(|_| format!("{key}= needs a value"))?;
        let time =
            |seconds| crate::think::fio_time(v, seconds).map_err(|e| format!("{key}={v}: {e}"));
        let n = || {
            v.parse::<u64>()
                .ok()
                .filter(|&n| n >= 1)
                .ok_or_else(|| format!("{key}={v}: give a whole number of at least 1"))
        };
        let t = &mut self.think;
        match key {
            "thinktime" => t.think = Some(time(false)?),
            "thinktime_spin" => t.spin = Some(time(false)?),
            "thinktime_iotime" => t.iotime = Some(time(true)?),
            "thinktime_blocks" => t.blocks = Some(n()?),
            "thinktime_blocks_type" if v == "complete" => {}
            "thinktime_blocks_type" => {
                return Err(format!(
                    "{key}={v}: readlab counts completed I/Os towards a pause (fio's default, complete); drop it"
                ));
            }
            _ => self.loops = Some(n()?),
        }
        self.lines.think = line;
        Ok(())
    }

    /// The queue's counts: `iodepth=`, `numjobs=` and the batch sizes (set on `line`).
    fn count(&mut self, key: &str, v: Option<&str>, line: usize) -> Result<(), String> {
        let (cfg, lines) = (&mut self.cfg, &mut self.lines);
        let v = need(v).map_err(|_| format!("{key}= needs a number"))?;
        let n: usize = v
            .parse()
            .ok()
            .filter(|&n| n >= 1)
            .ok_or_else(|| format!("{key}={v}: give a whole number of at least 1"))?;
        match key {
            "iodepth" => cfg.iodepth = n,
            "numjobs" => {
                if n > MAX_THREADS {
                    return Err(format!(
                        "numjobs={n} is more threads than readlab starts (at most {MAX_THREADS})"
                    ));
                }
                cfg.threads = n;
            }
            "iodepth_batch" | "iodepth_batch_submit" => (cfg.batch, lines.batch) = (n, line),
            "iodepth_batch_complete_max" => self.complete_max = Some((n, line)),
            _ => (cfg.complete_min, lines.complete_min) = (n, line),
        }
        Ok(())
    }

    /// An option readlab has not under fio's name: noted when it asks for what readlab always
    /// does, else refused with what to use instead.
    fn foreign(&mut self, k: &str, v: Option<&str>, notes: &mut Vec<Note>) -> Result<(), String> {
        match foreign(k) {
            Some(Foreign::NoOp(why)) => {
                if matches!(k, "stonewall" | "new_group" | "wait_for_previous") {
                    self.waits = true;
                } else {
                    add_note(notes, k, format!("ignored: {why}"));
                }
                Ok(())
            }
            Some(Foreign::Refused(what)) => {
                let shown = match v {
                    Some(v) => format!("{k}={v}"),
                    None => k.to_string(),
                };
                Err(format!("{shown}: {what}"))
            }
            None => Err(format!(
                "'{k}' is not a fio option readlab knows; remove it (readlab's job files take {})",
                read_names().join(", ")
            )),
        }
    }

    /// Engine options belong to the job's engine, whatever order they came in.
    pub(super) fn engine_options(&mut self, default: &RunConfig) {
        let mut values: Vec<(&str, String)> = Vec::new();
        for (o, k) in std::mem::take(&mut self.engine_opts) {
            let owns = self
                .cfg
                .engine
                .spec()
                .options
                .iter()
                .any(|d| d.fio == Some(k));
            if !owns {
                let owners: Vec<&str> = crate::engine::option::all()
                    .filter(|(_, d)| d.fio == Some(k))
                    .map(|(e, _)| e.fio_name())
                    .collect();
                let text = format!(
                    "{k} is an option of ioengine={} (this job's is {})",
                    owners.join(" or "),
                    self.cfg.engine.fio_name()
                );
                self.problem(o.line, text);
                continue;
            }
            let value = match o.value.as_deref() {
                None => "1".to_string(),
                Some(v) => v.to_string(),
            };
            if value.parse::<u64>().is_err() && !matches!(value.as_str(), "true" | "false") {
                self.problem(
                    o.line,
                    format!("{k}={value}: give a number (1 or 0 for a switch)"),
                );
                continue;
            }
            values.push((k, value));
        }
        self.cfg.options = crate::engine::option::from_fio(self.cfg.engine, |k| {
            values
                .iter()
                .rev()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.clone())
        });
        self.cfg.options.sqpoll_idle_ms = default.options.sqpoll_idle_ms;
    }

    /// `fadvise_hint=`, read once the pattern is known (`1` follows it).
    pub(super) fn fadvise(&mut self) {
        let Some((v, l)) = self.fadvise.take() else {
            return;
        };
        self.cfg.fadvise = match v.as_str() {
            "0" | "none" => None,
            "1" => Some(match self.cfg.rw {
                Rw::Read => Fadvise::Sequential,
                Rw::Randread => Fadvise::Random,
            }),
            "sequential" => Some(Fadvise::Sequential),
            "random" => Some(Fadvise::Random),
            other => {
                self.problem(
                    l,
                    format!("fadvise_hint={other}: readlab gives 0, 1, sequential or random"),
                );
                None
            }
        };
    }
}
