//! `readlab run`: measure one workload (or several, from comma-separated flags, ending with a
//! verdict) on one target or on several at once, print its table (or JSON document); with
//! `--profile P --check`, hold the result against the profile's and exit 3 on a regression. Exit 1
//! if a run (or any of its targets) failed.

use crate::args::{OutputArg, REPLAYS, count, duration, fraction, size};
use crate::engine_flags::{EngineFlags, Scope};
use crate::fio_flags::{
    FioNoops, bssplit, distribution, file_service, rw_word, switch, verify_switch,
};
use crate::progress::{Progress, print_warnings};
use crate::run_output::{FioFormat, Shown};
use clap::{Args, ValueEnum};
use readlab::config::{Arrivals, Fadvise, Rate, RunConfig, Rw};
use readlab::distribution::RandomDistribution;
use readlab::engine::{EngineKind, EngineOptions};
use readlab::error::Error;
use readlab::fileset::FileService;
use readlab::result::Document;
use readlab::stability::{StopFlags, StopRule};
use readlab::tune::Candidate;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Copy, Clone, Debug, ValueEnum)]
pub enum ArrivalsArg {
    Poisson,
    Fixed,
}

#[derive(Copy, Clone, Debug, ValueEnum)]
pub enum FadviseArg {
    Sequential,
    Random,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// File or block device to read (optional with --profile, which names one); NAME:PATH names it.
    pub target: Option<PathBuf>,
    /// More targets, read at the same time with the same workload, each with its own jobs.
    pub more_targets: Vec<PathBuf>,
    /// The target, in fio's words (--filename=PATH): the same as TARGET. Several files joined
    /// by colons (--filename=a:b, `\:` a colon in a name) are one job: its threads spread their
    /// reads over all of them as --file_service_type picks (fio's meaning; several TARGETs are
    /// read side by side instead, each with its own threads).
    #[arg(long, conflicts_with = "target")]
    pub filename: Option<String>,
    /// How a job over several files (--filename=a:b) picks the file of each read: roundrobin
    /// (fio's default: each read the next file), random, or sequential (a file read through
    /// before the next).
    #[arg(long = "file_service_type", alias = "file-service-type", value_parser = file_service, conflicts_with_all = REPLAYS)]
    pub file_service_type: Option<FileService>,
    /// Name a target in every output: TARGET=NAME (repeatable); NAME alone names the only target
    /// (fio's --name=JOB).
    #[arg(long = "name")]
    pub names: Vec<String>,
    /// Attach the monitor: devices, machine and this run's threads each second, stored in the
    /// result document and drawn by the report.
    #[arg(long)]
    pub monitor: bool,
    /// Replay a device profile written by `readlab tune` (its configuration; TARGET overrides its
    /// target, --runtime its runtime; the workload's flags are refused beside it).
    #[arg(long)]
    pub profile: Option<PathBuf>,
    /// Run a fio job file's jobs (the read subset: [global] and job sections, fio's option names
    /// and units), one after another in file order, ending with a verdict; anything readlab cannot
    /// honour is listed with its line and nothing runs (exit 2). TARGET stands in for a missing
    /// filename=, --runtime for a missing runtime=.
    #[arg(long, value_name = "FILE.fio", conflicts_with = "profile")]
    pub job: Option<PathBuf>,
    /// Also write the fio job file of what runs (one configuration), to replay it with
    /// `fio FILE` or `readlab run --job FILE`: written once the run has measured (a run that
    /// fails writes none); a file, not `-` (standard output carries the run's results).
    #[arg(long, value_name = "FILE.fio", conflicts_with = "job")]
    pub write_job: Option<PathBuf>,
    /// Read interface: psync, pvsync2, libaio, uring, pool, posixaio, null, nbd (fio's names
    /// too: io_uring, sync; --ioengine is the same flag); several, comma-separated, run one after
    /// another and end with a verdict.
    #[arg(
        long,
        alias = "ioengine",
        default_value = "psync",
        value_delimiter = ',',
        conflicts_with_all = REPLAYS
    )]
    pub engine: Vec<String>,
    /// Block size, 512 B … 64 MiB (e.g. 4k, 1m); comma-separated for several.
    #[arg(long, default_value = "4k", allow_hyphen_values = true, value_parser = size, value_delimiter = ',', conflicts_with_all = REPLAYS)]
    pub bs: Vec<u64>,
    /// Access pattern: read or randread (readlab only reads).
    #[arg(long, alias = "readwrite", default_value = "randread", value_parser = rw_word, conflicts_with_all = REPLAYS)]
    pub rw: Rw,
    /// Worker threads, each with its own descriptor (fio's numjobs).
    #[arg(
        long,
        alias = "threads",
        default_value = "1",
        allow_hyphen_values = true,
        value_parser = count,
        value_delimiter = ',',
        conflicts_with_all = REPLAYS
    )]
    pub numjobs: Vec<usize>,
    /// I/Os in flight per thread (comma-separated for several; synchronous engines take 1).
    #[arg(long, default_value = "1", allow_hyphen_values = true, value_parser = count, value_delimiter = ',', conflicts_with_all = REPLAYS)]
    pub iodepth: Vec<usize>,
    /// I/Os added to the queue per submit (comma-separated for several, up to the queue size;
    /// fio's --iodepth_batch_submit).
    #[arg(long, aliases = ["iodepth_batch_submit", "iodepth_batch"], default_value = "1", allow_hyphen_values = true, value_parser = count, value_delimiter = ',', conflicts_with_all = REPLAYS)]
    pub batch: Vec<usize>,
    /// Completions awaited per reap, at most --batch (fio's --iodepth_batch_complete_min).
    #[arg(long, aliases = ["iodepth_batch_complete_min", "iodepth_batch_complete"], default_value = "1", allow_hyphen_values = true, value_parser = count, conflicts_with_all = REPLAYS)]
    pub complete_min: usize,
    /// fio's --iodepth_batch_complete_max: readlab reaps at most one --batch, so it must equal it.
    #[arg(long = "iodepth_batch_complete_max", hide = true, value_parser = count, conflicts_with_all = REPLAYS)]
    pub complete_max: Option<usize>,
    /// Use O_DIRECT (the default); fio's --direct=1 / --direct=0 (= --buffered) too.
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "1", value_parser = switch, conflicts_with_all = REPLAYS)]
    pub direct: Option<bool>,
    /// Read through the page cache instead of O_DIRECT.
    #[arg(long, conflicts_with_all = REPLAYS)]
    pub buffered: bool,
    /// Measured time (e.g. 5s, 500ms, 2m). The run ends at most 5 s after it whatever the
    /// target does (an NBD server's reads still unanswered then fail).
    #[arg(long, default_value = "5s", allow_hyphen_values = true, value_parser = duration)]
    pub runtime: Duration,
    /// Warm-up before measuring, excluded from every figure (fio's --ramp_time).
    #[arg(long, alias = "ramp_time", default_value = "0s", allow_hyphen_values = true, value_parser = duration, conflicts_with_all = REPLAYS)]
    pub ramp: Duration,
    /// Bytes of the target to read from --offset on (default: to the end).
    #[arg(long, allow_hyphen_values = true, value_parser = size, conflicts_with_all = REPLAYS)]
    pub size: Option<u64>,
    /// nbd:// target: connect from inside this network namespace (`ip netns`, root), as
    /// ?netns=NAME in the URL does.
    #[arg(long)]
    pub netns: Option<String>,
    /// First byte of the range to read.
    #[arg(long, default_value = "0", allow_hyphen_values = true, value_parser = size, conflicts_with_all = REPLAYS)]
    pub offset: u64,
    /// How random reads pick their blocks, in fio's words: random (uniform), zipf:θ, pareto:h,
    /// normal:dev, zoned:ACCESS/RANGE:… (percent); fio's --random_distribution.
    #[arg(long, alias = "random_distribution", default_value = "random", value_parser = distribution, conflicts_with_all = REPLAYS)]
    pub random_distribution: RandomDistribution,
    /// Several block sizes, each its share of the requests, in fio's words (SIZE/PERCENT:…,
    /// e.g. 4k/60:64k/40): every request picks its size; offsets are aligned to the smallest.
    /// In place of --bs; fio's --bssplit.
    #[arg(long, value_parser = bssplit, conflicts_with = "bs", conflicts_with_all = REPLAYS)]
    pub bssplit: Option<readlab::bssplit::BsSplit>,
    /// Write the byte offset of each block read to this file, one per line (with --bssplit,
    /// its length after it; a job over several files, the file before it; at most the first
    /// million; one configuration on one target): to check the access pattern.
    #[arg(long, value_name = "FILE")]
    pub log_offsets: Option<PathBuf>,
    /// Seed of the random offsets (the same seed reads the same offsets; fio's --randseed).
    #[arg(long, alias = "randseed", default_value_t = 1)]
    pub seed: u64,
    /// Check every byte read against what `readlab prepare` wrote.
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "1", value_parser = verify_switch)]
    pub verify: Option<bool>,
    /// posix_fadvise hint for the range before reading.
    #[arg(long, value_enum, conflicts_with_all = REPLAYS)]
    pub fadvise: Option<FadviseArg>,
    /// Open loop: issue this many requests per second (all threads together); latency is measured
    /// from each request's intended issue time, and a backlog is reported when the target cannot keep up.
    #[arg(long, allow_hyphen_values = true, conflicts_with_all = REPLAYS)]
    pub rate: Option<f64>,
    /// Open loop: how requests arrive (with --rate) [default: poisson].
    #[arg(long, value_enum, conflicts_with_all = REPLAYS)]
    pub arrivals: Option<ArrivalsArg>,
    /// Stop each thread after it has read this many bytes (e.g. the whole target once; fio's --io_size).
    #[arg(long, alias = "io_size", allow_hyphen_values = true, value_parser = size, conflicts_with_all = REPLAYS)]
    pub io_limit: Option<u64>,
    /// Also record throughput every this many bytes of the target read (e.g. 16m): bandwidth
    /// against offset for a scan, in the JSON's `offset_samples`.
    #[arg(long, allow_hyphen_values = true, value_parser = size)]
    pub sample_every: Option<u64>,
    /// End the run early once per-second IOPS is stable (--runtime becomes the upper bound).
    #[arg(long)]
    pub stop_when_stable: bool,
    /// Stability (with --stop-when-stable): one-second intervals judged together [default: 5].
    #[arg(long, allow_hyphen_values = true, value_parser = count)]
    pub stable_window: Option<usize>,
    /// Stability (with --stop-when-stable): largest 95 % confidence half-width of mean IOPS,
    /// relative to the mean [default: 0.02].
    #[arg(long, allow_hyphen_values = true)]
    pub stable_band: Option<f64>,
    /// Stability (with --stop-when-stable): never stop before this much was measured [default: 3s].
    #[arg(long, allow_hyphen_values = true, value_parser = duration)]
    pub min_runtime: Option<Duration>,
    #[command(flatten)]
    pub think: crate::think_flags::ThinkFlags,
    /// Random blocks per logical request; latency is per request (report §7.2).
    #[arg(long, default_value = "1", allow_hyphen_values = true, value_parser = count, conflicts_with_all = REPLAYS)]
    pub blocks_per_request: usize,
    /// Each engine's options, from its table (`--fixed-files`, `--pool-threads N`, …).
    #[command(flatten)]
    pub engine_options: EngineFlags<RunEngines>,
    /// uring (with --sqpoll): how long the SQ poll thread spins idle before sleeping [default: 1s].
    #[arg(long, value_parser = duration, conflicts_with_all = REPLAYS)]
    pub sqpoll_idle: Option<Duration>,
    /// What to print on stdout: `table`, or `json` (the JSON document alone) [default: table].
    /// With --output-format json: the file fio's JSON goes to instead of stdout (fio's --output).
    #[arg(long, value_name = "table|json|FILE")]
    pub output: Option<PathBuf>,
    /// fio's JSON document in place of readlab's output (fio's --output-format json): one fio job
    /// per run, for fio-plot and fio's pipelines (`report --fio` reads it back); on stdout, or in
    /// the file --output names.
    #[arg(long = "output-format", value_enum, value_name = "json")]
    pub output_format: Option<FioFormat>,
    /// Also write the JSON document to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Let --json, --write-job, --output FILE and --log-offsets replace a file that is there and
    /// that readlab did not write; never a symbolic link, an input (--job, --profile, a target),
    /// a device, FIFO or directory, and never two of them the same file.
    #[arg(long)]
    pub force: bool,
    /// Measure N times (seeds seed, seed+1, …) and report the median run with a confidence
    /// interval per figure.
    #[arg(long, default_value = "1", value_parser = count)]
    pub repeat: usize,
    #[command(flatten)]
    pub race: crate::args::RaceArgs,
    /// With --profile: hold the result against the one stored in the profile; exit 3 when
    /// throughput dropped or p99.9 rose by more than --tolerance and beyond the noise (the
    /// change's interval, from the run's own and the profile's stored one, excludes zero).
    #[arg(long, requires = "profile")]
    pub check: bool,
    /// --check fails only on a fall of throughput or rise of p99.9 larger than this (e.g. 10%).
    #[arg(long, default_value = "10%", value_parser = fraction, requires = "check")]
    pub tolerance: f64,
    /// With --check: check even when the profile's stored spread is wider than --tolerance
    /// (otherwise refused, exit 2: such a profile would let a larger regression through).
    #[arg(long, requires = "check")]
    pub check_anyway: bool,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
    /// fio's options that ask for what readlab always does: accepted, with a note.
    #[command(flatten)]
    pub fio_noops: FioNoops,
}

/// Every engine's options are flags of `run`, refused beside `--profile` and `--job`.
#[derive(Debug)]
pub struct RunEngines;

impl Scope for RunEngines {
    fn takes(_: EngineKind) -> bool {
        true
    }

    fn prefix(kind: EngineKind) -> String {
        format!("{}: ", kind.name())
    }

    const REFUSED_BESIDE: &'static [&'static str] = REPLAYS;
}

impl RunArgs {
    /// Whether more than one configuration was asked for (comma-separated lists).
    pub fn several(&self) -> bool {
        self.profile.is_none()
            && [
                self.engine.len(),
                self.bs.len(),
                self.numjobs.len(),
                self.iodepth.len(),
                self.batch.len(),
            ]
            .iter()
            .any(|&n| n > 1)
    }

    /// Every configuration the flags ask for: each engine × block size × threads × queue size ×
    /// batch, in that order, leaving out the combinations that cannot be (a queue on a
    /// synchronous engine, a batch larger than the queue) when lists were given. With `--profile`,
    /// the profile's configuration, which wins over every flag but TARGET, --runtime and --verify.
    pub fn to_configs(&self) -> Result<Vec<RunConfig>, Error> {
        let target = self.target_given()?;
        if let Some(p) = &self.profile {
            let mut cfg = readlab::tune::load_profile(p)?.config;
            if let Some(t) = &target {
                cfg.target = t.clone();
                cfg.files = self.more_files()?.0;
            }
            if let Some(ns) = &self.netns {
                cfg.target = with_netns(&cfg.target, ns, !self.more_targets.is_empty())?;
            }
            cfg.runtime = self.runtime;
            cfg.verify = self.verify();
            return Ok(vec![cfg]);
        }
        let mut target = target.ok_or_else(|| {
            Error::InvalidArgument(
                "give a TARGET to read (or --profile FILE from `readlab tune`)".into(),
            )
        })?;
        if let Some(ns) = &self.netns {
            target = with_netns(&target, ns, !self.more_targets.is_empty())?;
        }
        readlab::config::check_runtime(self.runtime)?;
        self.stop_rule()?;
        self.open_loop()?;
        self.think.think()?;
        let uring = self
            .engine_options
            .options_for(EngineKind::Uring, self.engine.len() == 1);
        readlab::engine::sqpoll_idle_ms(self.sqpoll_idle, &uring)?;
        let several = self.several();
        if let Some(max) = self.complete_max
            && self.batch.iter().any(|&b| b != max)
        {
            return Err(Error::InvalidArgument(format!(
                "--iodepth_batch_complete_max={max}: readlab reaps at most one --batch of completions; drop it or make it equal to --batch"
            )));
        }
        if !several && self.complete_min > self.batch[0] {
            return Err(Error::InvalidArgument(
                readlab::fiojob::complete_min_problem(
                    self.complete_min,
                    self.batch[0],
                    "--complete-min",
                    "--batch",
                ),
            ));
        }
        self.direct()?;
        let mut out = Vec::new();
        for name in &self.engine {
            let engine = readlab::fiojob::engine(name)?;
            for &bs in &self.bs {
                for &threads in &self.numjobs {
                    for &iodepth in &self.iodepth {
                        for &batch in &self.batch {
                            let sync = !engine.capabilities().asynchronous;
                            if several
                                && ((sync && iodepth > 1)
                                    || batch > iodepth
                                    || (!sync && self.complete_min > batch))
                            {
                                continue;
                            }
                            out.push(self.one(target.clone(), engine, bs, threads, iodepth, batch));
                        }
                    }
                }
            }
        }
        if let Some(problem) = out.first().and_then(RunConfig::think_problem) {
            return Err(Error::InvalidArgument(problem));
        }
        let (files, service) = self.more_files()?;
        for c in &mut out {
            (c.files, c.file_service) = (files.clone(), service);
        }
        if out.is_empty() {
            return Err(Error::InvalidArgument(
                "no configuration left: synchronous engines take --iodepth 1, --batch must not exceed --iodepth, nor --complete-min --batch".into(),
            ));
        }
        Ok(out)
    }

    /// What a job of `--job FILE` does not say: TARGET, --runtime, --seed, --verify (refused
    /// beside the flags a job file cannot take).
    fn job_default(&self) -> Result<RunConfig, Error> {
        if !self.more_targets.is_empty() || !self.names.is_empty() {
            return Err(Error::InvalidArgument(
                "--job reads each job's filename=; give at most one TARGET (for jobs without one) and no --name".into(),
            ));
        }
        if self.check {
            return Err(Error::InvalidArgument(
                "--check holds a replay to its profile's result (--profile P --check); a job file has no result to hold to: leave out --check".into(),
            ));
        }
        let files = self.files_given()?;
        let mut default = RunConfig::new(files.first().cloned().unwrap_or_default());
        default.files = files.into_iter().skip(1).collect();
        default.runtime = self.runtime;
        default.seed = self.seed;
        default.verify = self.verify();
        readlab::config::check_runtime(self.runtime)?;
        Ok(default)
    }

    /// TARGET, or the first file of fio's --filename=a:b (`\:` is a colon in a name).
    fn target_given(&self) -> Result<Option<PathBuf>, Error> {
        Ok(self.files_given()?.into_iter().next())
    }

    /// Every file the job reads: TARGET, or each of fio's --filename=a:b; none when neither is
    /// given.
    fn files_given(&self) -> Result<Vec<PathBuf>, Error> {
        match &self.filename {
            None => Ok(self.target.iter().cloned().collect()),
            Some(f) => readlab::fileset::parse(f)
                .map_err(|e| Error::InvalidArgument(format!("--filename={e}"))),
        }
    }

    /// The job's files after its first (--filename=a:b), and how it picks among them.
    fn more_files(&self) -> Result<(Vec<PathBuf>, FileService), Error> {
        let files: Vec<PathBuf> = self.files_given()?.into_iter().skip(1).collect();
        Ok((files, self.file_service_type.unwrap_or_default()))
    }

    /// Whether to read with O_DIRECT: --direct / --direct=1 (the default), --direct=0 or
    /// --buffered not.
    fn direct(&self) -> Result<bool, Error> {
        match (self.direct, self.buffered) {
            (Some(true), true) => Err(Error::InvalidArgument(
                "--direct and --buffered contradict each other; give one".into(),
            )),
            (Some(d), _) => Ok(d),
            (None, b) => Ok(!b),
        }
    }

    fn verify(&self) -> bool {
        self.verify.unwrap_or(false)
    }

    fn one(
        &self,
        target: PathBuf,
        engine: EngineKind,
        bs: u64,
        threads: usize,
        iodepth: usize,
        batch: usize,
    ) -> RunConfig {
        RunConfig {
            target,
            // The job's further files, set by `to_configs`.
            files: Vec::new(),
            file_service: FileService::Roundrobin,
            engine,
            // A mix's offsets are aligned to its smallest size, its `bs`.
            bs: self.bssplit.as_ref().and_then(|b| b.min()).unwrap_or(bs),
            rw: self.rw,
            threads,
            iodepth,
            batch,
            complete_min: self.complete_min,
            // A contradiction (--direct=1 --buffered) was refused before any configuration.
            direct: self.direct().unwrap_or(!self.buffered),
            runtime: self.runtime,
            ramp: self.ramp,
            size: self.size,
            offset: self.offset,
            seed: self.seed,
            random_distribution: self.random_distribution.clone(),
            bssplit: self.bssplit.clone().unwrap_or_default(),
            verify: self.verify(),
            fadvise: self.fadvise.map(|f| match f {
                FadviseArg::Sequential => Fadvise::Sequential,
                FadviseArg::Random => Fadvise::Random,
            }),
            blocks_per_request: self.blocks_per_request,
            io_limit: self.io_limit,
            loops: self.think.loops.map(|n| n as u64),
            // Refused before any configuration when the flags do not fit together.
            thinktime: self.think.think().unwrap_or(None),
            sample_bytes: self.sample_every,
            // Both refused before any configuration when the flags do not fit together.
            stop_when_stable: self.stop_rule().unwrap_or(None),
            rate: self.open_loop().unwrap_or(None),
            options: self.options_for(engine),
            log_offsets: None,
        }
    }

    /// The engine options the flags set (from the engines' tables); with several engines, each
    /// engine keeps only the options it owns, so `--engine psync,uring --fixed-files` gives
    /// io_uring fixed files. The SQ poll thread's idle time is a setting every configuration
    /// carries.
    fn options_for(&self, engine: EngineKind) -> EngineOptions {
        let mut o = self
            .engine_options
            .options_for(engine, self.engine.len() == 1);
        // Refused before any configuration when given without --sqpoll.
        o.sqpoll_idle_ms = readlab::engine::sqpoll_idle_ms(self.sqpoll_idle, &o).unwrap_or(0);
        o
    }

    /// `--stop-when-stable` with its tuning flags (each refused without it).
    fn stop_rule(&self) -> Result<Option<StopRule>, Error> {
        let flags = StopFlags {
            window: self.stable_window,
            band: self.stable_band,
            min_runtime: self.min_runtime,
        };
        StopRule::from_flags(self.stop_when_stable, flags)
    }

    /// `--rate` with its `--arrivals` (refused alone).
    fn open_loop(&self) -> Result<Option<Rate>, Error> {
        let arrivals = self.arrivals.map(|a| match a {
            ArrivalsArg::Poisson => Arrivals::Poisson,
            ArrivalsArg::Fixed => Arrivals::Fixed,
        });
        readlab::config::open_loop(self.rate, arrivals)
    }
}

/// An nbd:// TARGET connecting from inside network namespace `ns` (`--netns`).
fn with_netns(target: &std::path::Path, ns: &str, several: bool) -> Result<PathBuf, Error> {
    let t = target.to_string_lossy();
    if several || !readlab::nbd::NbdUrl::is_url(&t) {
        return Err(Error::InvalidArgument(format!(
            "--netns applies to one NBD target (nbd://HOST:PORT/EXPORT), not '{t}'{}",
            if several {
                " among several; write ?netns=NAME in each URL"
            } else {
                ""
            }
        )));
    }
    let url = readlab::nbd::NbdUrl::parse(&t).and_then(|u| u.with_netns(ns))?;
    Ok(url.to_string().into())
}

/// Exit code of a `--check` that found a regression.
pub const REGRESSION: u8 = 3;

pub fn run(a: &RunArgs) -> anyhow::Result<ExitCode> {
    for note in a.fio_noops.notes() {
        errln!("readlab: note: {note}");
    }
    let mut cfgs = match &a.job {
        Some(path) => match crate::run_job::job_configs(path, &a.job_default()?)? {
            Ok(cfgs) => cfgs,
            Err(code) => return Ok(code),
        },
        None => a.to_configs()?,
    };
    let shown = Shown::of(a.output.as_deref(), a.output_format)?;
    let job_text = match &a.write_job {
        Some(path) => Some(crate::run_files::job_text(
            a.profile.as_deref(),
            path,
            &cfgs,
        )?),
        None => None,
    };
    if let Some(path) = &a.log_offsets {
        let alone = a.more_targets.is_empty() && a.repeat == 1;
        crate::run_files::log_offsets(path, &mut cfgs, alone)?;
    }
    let outputs = [
        ("--json", a.json.as_deref()),
        ("--write-job", a.write_job.as_deref()),
        ("--output", shown.file()),
        ("--log-offsets", a.log_offsets.as_deref()),
    ];
    let read: Vec<&std::path::Path> = (a.profile.iter().chain(&a.job))
        .chain(
            cfgs.iter()
                .flat_map(|c| std::iter::once(&c.target).chain(&c.files)),
        )
        .chain(&a.more_targets)
        .map(PathBuf::as_path)
        .collect();
    crate::run_files::check_outputs(&outputs, &read, a.force)?;
    if let Some(fleet) = crate::fleet::launch()? {
        return under_mpirun(a, fleet, &shown, job_text.as_deref(), cfgs);
    }
    let words: Vec<PathBuf> = std::iter::once(cfgs[0].target.clone())
        .chain(a.more_targets.iter().cloned())
        .collect();
    let specs = readlab::targets::parse(&words, &a.names)?;
    // One target named by its path alone runs exactly as it always has.
    let single = specs.len() == 1 && a.names.is_empty() && specs[0].path == cfgs[0].target;
    a.race.check(if cfgs.len() == 1 {
        Some("one configuration is measured")
    } else if !single {
        Some("several targets are read at once")
    } else if a.repeat > 1 {
        Some("--repeat measures each configuration on its own")
    } else {
        None
    })?;
    if !single && a.repeat > 1 {
        return Err(readlab::Error::InvalidArgument(
            "--repeat takes one target; run the targets apart to repeat them".into(),
        )
        .into());
    }
    let read: Vec<&std::path::Path> = (a.profile.iter().chain(&a.job))
        .chain(specs.iter().map(|t| &t.path))
        .map(PathBuf::as_path)
        .collect();
    crate::run_files::check_outputs(&outputs, &read, a.force)?;
    let expected = expected(a)?;
    let progress = Progress::new(a.quiet || shown.document_on_stdout()).with_monitor(a.monitor);
    if single && cfgs.len() > 1 {
        // Every configuration against the target before the first runs (--bs 4k,64k,48m
        // against a server whose maximum is 32 MiB runs nothing).
        readlab::runner::check_all(&cfgs)?;
    }
    let docs = measure(a, &cfgs, &specs, single, &progress)?;
    print_warnings(&docs);
    crate::run_output::print_docs(a.json.as_deref(), &shown, &docs)?;
    if let (Some(path), Some(text)) = (&a.write_job, &job_text) {
        crate::run_files::write_job(path, text)?;
    }
    let mut failed = false;
    for doc in &docs {
        failed |= crate::run_output::report_failures(doc);
    }
    if progress.interrupted()
        || docs
            .iter()
            .any(|d| d.result.ended_by == readlab::result::EndedBy::Interrupted)
    {
        errln!("readlab: interrupted; the figures cover only the part of the run measured");
        return Ok(crate::progress::interrupted_exit());
    }
    if let (Some((expected, too_wide)), Some(doc)) = (&expected, docs.first())
        && !holds(expected, too_wide.as_deref(), doc, a.tolerance)
    {
        return Ok(ExitCode::from(REGRESSION));
    }
    if failed || docs.iter().any(|d| d.result.requests == 0) {
        // A run that measured nothing already said so in its warning ("nothing was measured …").
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// `run` as one rank of an MPI job: one configuration, readlab's own JSON, the job file written
/// by rank 0 alone.
fn under_mpirun(
    a: &RunArgs,
    fleet: readlab::fleet::Fleet,
    shown: &Shown,
    job_text: Option<&str>,
    mut cfgs: Vec<RunConfig>,
) -> anyhow::Result<ExitCode> {
    if cfgs.len() != 1 {
        return Err(readlab::Error::InvalidArgument(
            "under mpirun, run measures one configuration; give each flag one value".into(),
        )
        .into());
    }
    let outputs = crate::fleet::RunOutputs {
        json: a.json.clone(),
        profile: a.profile.clone(),
        output: match *shown {
            Shown::Table => OutputArg::Table,
            Shown::Json => OutputArg::Json,
            Shown::Fio(_) => {
                return Err(readlab::Error::InvalidArgument(
                    "--output-format json is not written under mpirun; write readlab's \
                     JSON with --json FILE"
                        .into(),
                )
                .into());
            }
        },
        quiet: a.quiet,
        repeat: a.repeat,
        force: a.force,
    };
    if let (Some(path), Some(text), true) = (&a.write_job, job_text, fleet.is_root()) {
        crate::run_files::write_job(path, text)?;
    }
    crate::fleet::run(fleet, &outputs, cfgs.remove(0))
}

/// What `--check` holds the result to: the profile's expected result, and why its stored spread
/// is wider than `--tolerance` when it is (a profile too noisy to hold the replay to the
/// tolerance is refused before anything runs, unless `--check-anyway`).
fn expected(a: &RunArgs) -> anyhow::Result<Option<(Candidate, Option<String>)>> {
    let (Some(p), true) = (&a.profile, a.check) else {
        return Ok(None);
    };
    let expected = readlab::tune::load_profile(p)?.expected;
    let too_wide = readlab::compare::check::too_wide(&expected, a.tolerance);
    if let Some(why) = &too_wide
        && !a.check_anyway
    {
        return Err(Error::InvalidArgument(format!("{}: {why}", p.display())).into());
    }
    Ok(Some((expected, too_wide)))
}

/// Run each configuration in turn (on every target, or repeated on the one), until the last or
/// an interruption; then, with several configurations on one target and no `--repeat`, race the
/// close ones within the budget.
fn measure(
    a: &RunArgs,
    cfgs: &[RunConfig],
    specs: &[readlab::targets::TargetSpec],
    single: bool,
    progress: &Progress,
) -> anyhow::Result<Vec<Document>> {
    let start = std::time::Instant::now();
    let mut docs = Vec::new();
    progress.series(cfgs, if single { a.repeat } else { 1 });
    for cfg in cfgs {
        if progress.interrupted() {
            break;
        }
        let doc = if single {
            let step = &mut |_| progress.step(&cfg.label());
            readlab::repeat::run_counted(cfg, a.repeat, progress, step)?
        } else {
            progress.step(&cfg.label());
            readlab::runner::run_targets(cfg, specs, progress)?
        };
        let interrupted = doc.result.ended_by == readlab::result::EndedBy::Interrupted;
        docs.push(doc);
        if interrupted {
            break;
        }
    }
    let raced = single && a.repeat <= 1 && docs.len() == cfgs.len() && cfgs.len() > 1;
    if raced && !progress.interrupted() {
        // By default racing may take as long again as the first pass, and at least 30 s (a few
        // rounds of the close ones); runs shorter than half a second (smoke tests, not
        // measurements) are not raced unless a budget is given.
        let short = cfgs
            .iter()
            .any(|c| c.runtime < std::time::Duration::from_millis(500));
        let deadline = a.race.deadline(start, start.elapsed(), |first| {
            if short {
                first
            } else {
                first
                    .saturating_mul(2)
                    .max(first + std::time::Duration::from_secs(30))
            }
        });
        docs = race(docs, cfgs, &a.race.rule(), deadline, progress)?;
    }
    progress.finish();
    Ok(docs)
}

/// Race the close configurations of a first pass (`docs[i]` measured `cfgs[i]`) until
/// `deadline`, each round's runs shown on the progress bar.
pub fn race(
    docs: Vec<Document>,
    cfgs: &[RunConfig],
    rule: &readlab::race::RaceRule,
    deadline: std::time::Instant,
    progress: &Progress,
) -> anyhow::Result<Vec<Document>> {
    let mut said = false;
    Ok(readlab::race::race(
        docs,
        rule,
        deadline,
        &|| progress.interrupted(),
        |i, round| {
            if !said {
                said = true;
                progress.note("racing the close configurations in interleaved rounds");
            }
            let c = readlab::race::round_config(&cfgs[i], rule, round);
            readlab::runner::run(&c, progress)
        },
    )?)
}

/// Write `--json FILE` and print the documents: as JSON, as fio's JSON (or write it to its file),
/// one run's table, or the answer, the table of several runs and their verdict.
/// `--check`: whether the run holds to its profile's expected result, each line of the
/// comparison said on stderr.
fn holds(expected: &Candidate, too_wide: Option<&str>, doc: &Document, tolerance: f64) -> bool {
    let check = readlab::compare::check::check(expected, doc, tolerance);
    if let Some(why) = too_wide {
        eprintln!("readlab: check: {why} (checking anyway, as asked)");
    }
    for l in &check.lines {
        errln!("readlab: check: {l}");
    }
    if !check.passed {
        errln!(
            "readlab: check FAILED: {} on {} is slower than its profile",
            doc.result.label,
            doc.config.target.display()
        );
        return false;
    }
    errln!("readlab: check passed");
    true
}
