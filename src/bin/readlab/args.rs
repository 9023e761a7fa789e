//! Every argument the command line accepts, as clap types, and their conversion into the
//! library's validated config types (`RunConfig`, `StudyOptions`, `TuneOptions`,
//! `PrepareConfig`). Counts, sizes and durations are parsed by clap value parsers, so a bad value
//! is a one-line usage error (exit 2) before any command starts.

use clap::{Args, Parser, Subcommand, ValueEnum};
use readlab::config::{Arrivals, Fadvise, Rate, RunConfig, Rw};
use readlab::engine::{
    EngineKind, EngineOptions, NbdOptions, PoolOptions, Pvsync2Options, UringOptions,
};
use readlab::error::Error;
use readlab::prepare::PrepareConfig;
use readlab::stability::StopRule;
use readlab::study::{StudyName, StudyOptions};
use readlab::tune::{Goal, TuneOptions};
use std::path::PathBuf;
use std::time::Duration;

/// A count of at least 1 (threads, queue size, batch, …).
pub fn count(s: &str) -> Result<usize, String> {
    match s.trim().parse::<i64>() {
        Ok(v) if v >= 1 => usize::try_from(v).map_err(|_| format!("{v} is too large")),
        Ok(v) => Err(format!("must be at least 1, not {v}")),
        Err(_) if s.trim().bytes().all(|b| b.is_ascii_digit()) && !s.trim().is_empty() => {
            Err(format!("{} is too large", s.trim()))
        }
        Err(_) => Err(format!("'{s}' is not a whole number")),
    }
}

/// A thread count: at least 1, at most what one run may start.
pub fn thread_count(s: &str) -> Result<usize, String> {
    let n = count(s)?;
    if n > readlab::engine::MAX_THREADS {
        return Err(format!(
            "{n} is more threads than readlab starts (at most {})",
            readlab::engine::MAX_THREADS
        ));
    }
    Ok(n)
}

/// A size like `4k` or `1g` (powers of 1024, as in fio).
pub fn size(s: &str) -> Result<u64, Error> {
    readlab::size::parse_size(s)
}

/// A duration like `5s`, `500ms` or `2m`; a bare number means seconds.
pub fn duration(s: &str) -> Result<Duration, Error> {
    readlab::size::parse_duration(s)
}

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
    Serve(Box<crate::serve::ServeArgs>),
}

#[derive(Args, Debug)]
pub struct MonitorArgs {
    /// Devices to watch: names (loop0), device nodes (/dev/loop0) or files (their filesystem's
    /// device). Default: every disk with a size.
    pub devices: Vec<String>,
    /// Sample this process's threads many times a second (state, system call, kernel wait).
    #[arg(long)]
    pub pid: Option<u32>,
    /// One line (one sample) per interval.
    #[arg(long, default_value = "1s", value_parser = duration)]
    pub interval: Duration,
    /// Stop after this many samples (default: until Ctrl-C, or until the process ends).
    #[arg(long, value_parser = count)]
    pub count: Option<usize>,
    /// Thread samples per second.
    #[arg(long, default_value_t = readlab::monitor::DEFAULT_THREAD_HZ)]
    pub thread_hz: u32,
    /// Also write every sample to this JSON file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Line width (default: the terminal's, else 120).
    #[arg(long, value_parser = count)]
    pub width: Option<usize>,
}

/// A fraction written as a percentage (`10%`) or a plain fraction (`0.1`), between 0 and 1.
pub fn fraction(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let v = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|v| v / 100.0),
        None => t.parse::<f64>(),
    }
    .map_err(|_| format!("'{s}' is not a percentage like 10% (or a fraction like 0.1)"))?;
    if (0.0..=10.0).contains(&v) {
        Ok(v)
    } else {
        Err(format!("'{s}' must be between 0 % and 1000 %"))
    }
}

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// The first (older, reference) measurements: a `readlab run --json` document, a study or tune
    /// directory, a results.jsonl, or a report's JSON.
    pub a: PathBuf,
    /// The second measurements, compared with the first.
    pub b: PathBuf,
    /// Also write the comparison to this file (html, md or json by --format).
    #[arg(short = 'o', long = "out")]
    pub out: Option<PathBuf>,
    /// The format of --out: html (with bars of both sides), md or json.
    #[arg(long, default_value = "html")]
    pub format: String,
    #[command(flatten)]
    pub out_json: JsonOut,
}

#[derive(Copy, Clone, Debug, ValueEnum)]
pub enum GoalArg {
    Throughput,
    Latency,
    Balanced,
}

#[derive(Args, Debug)]
pub struct TuneArgs {
    /// File or block device to tune for.
    pub target: PathBuf,
    /// Block size(s), comma-separated (e.g. 4k,1m): one recommendation each.
    #[arg(long, default_value = "4k", value_delimiter = ',', value_parser = size)]
    pub bs: Vec<u64>,
    /// What the recommendation optimises.
    #[arg(long, value_enum, default_value = "balanced")]
    pub goal: GoalArg,
    /// Largest acceptable p99.9 latency (e.g. 500us, 2ms).
    #[arg(long, value_parser = duration)]
    pub p999_max: Option<Duration>,
    /// Largest acceptable CPU, in cores (kernel helper threads included).
    #[arg(long)]
    pub cpu_max: Option<f64>,
    /// Engines to search, comma-separated.
    #[arg(long, default_value = "psync,libaio,uring")]
    pub engines: String,
    /// Wall-clock budget for the whole search.
    #[arg(long, default_value = "5m", value_parser = duration)]
    pub budget: Duration,
    /// Directory for results.jsonl and the device profile(s) (default: readlab-tune-<target name>).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Do not verify the data read.
    #[arg(long)]
    pub no_verify: bool,
    /// Runs of each finalist, interleaved; the table and the trade-offs show their medians.
    #[arg(long, default_value_t = readlab::tune::DEFAULT_REPEAT, value_parser = count)]
    pub repeat: usize,
    #[command(flatten)]
    pub out_json: JsonOut,
}

impl TuneArgs {
    pub fn to_options(&self) -> Result<TuneOptions, Error> {
        let engines = self
            .engines
            .split(',')
            .map(|e| EngineKind::parse(e.trim()))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(TuneOptions {
            target: self.target.clone(),
            block_sizes: self.bs.clone(),
            goal: match self.goal {
                GoalArg::Throughput => Goal::Throughput,
                GoalArg::Latency => Goal::Latency,
                GoalArg::Balanced => Goal::Balanced,
            },
            p999_max: self.p999_max,
            cpu_max: self.cpu_max,
            engines,
            budget: self.budget,
            out: self
                .out
                .clone()
                .unwrap_or_else(|| readlab::tune::default_out(&self.target)),
            verify: self.no_verify.then_some(false),
            repeat: self.repeat,
        })
    }
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Results directories (a study's --out), results.jsonl files or `readlab run --json` documents.
    pub inputs: Vec<PathBuf>,
    /// fio output (--output-format=json or json+) to put beside readlab's points; repeatable.
    #[arg(long)]
    pub fio: Vec<PathBuf>,
    /// Output file, or - for standard output (default: report.<format>).
    #[arg(short = 'o', long = "out")]
    pub out: Option<PathBuf>,
    /// html (self-contained page with charts), csv, md or json (the tables).
    #[arg(long, default_value = "html")]
    pub format: String,
    /// Also write every chart as PNG into this directory.
    #[arg(long)]
    pub png: Option<PathBuf>,
    /// Earlier measurements to hold the inputs against (repeatable): the report opens with the
    /// change of every configuration measured in both.
    #[arg(long)]
    pub baseline: Vec<PathBuf>,
    #[command(flatten)]
    pub out_json: JsonOut,
}

#[derive(Args, Debug)]
pub struct StudyArgs {
    /// latency, scan, stream, threads, queue, batch, multiblock, uring-features, scheduler, cache,
    /// devices or all.
    pub name: String,
    /// File or block device to study (not needed by `delay`, which serves zeros; NAME:PATH names
    /// it), or for `clients` a server's export (nbd://HOST:PORT/EXPORT) to read instead of one
    /// readlab serve per point (under mpirun the clients are spread over the ranks).
    pub target: Option<PathBuf>,
    /// More targets, for the devices study (1, 2 … N of them read at once).
    pub more_targets: Vec<PathBuf>,
    /// Name a target in every output: TARGET=NAME (repeatable).
    #[arg(long = "name")]
    pub names: Vec<String>,
    /// Let the study change device settings (the cache study's readahead), restored at the end.
    #[arg(long)]
    pub allow_device_changes: bool,
    /// Shrink durations and grids so a study takes about two minutes.
    #[arg(long)]
    pub quick: bool,
    /// Directory for results.jsonl and summary.md (default: readlab-study-<target name>).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Continue a study: skip the points already in results.jsonl.
    #[arg(long)]
    pub resume: bool,
    /// Largest thread count of the threads and scheduler studies (default 4 × cores).
    #[arg(long, allow_hyphen_values = true, value_parser = thread_count)]
    pub max_threads: Option<usize>,
    /// Do not verify the data read (verification is on when readlab prepared the target).
    #[arg(long)]
    pub no_verify: bool,
    /// Measure every point N times (seeds seed, seed+1, …, back to back) and store the median run
    /// with a confidence interval per figure.
    #[arg(long, default_value = "1", value_parser = count)]
    pub repeat: usize,
    /// Attach the monitor to every run: devices, machine and threads stored with each point.
    #[arg(long)]
    pub monitor: bool,
    /// Measured time of each point (default: 1 s with --quick, else up to 30 s, ended once
    /// stable); scans and their I/O limits are not shortened.
    #[arg(long, value_parser = duration)]
    pub runtime: Option<Duration>,
    /// How the networked studies' (clients, delay, latency-breakdown, server-model) clients reach
    /// their servers: veth (server and clients in two network namespaces joined by a veth pair;
    /// root and iproute2) or loopback (127.0.0.1). Default: veth when it can be made, else loopback.
    #[arg(long, value_enum)]
    pub network: Option<NetworkArg>,
    #[command(flatten)]
    pub out_json: JsonOut,
}

#[derive(Copy, Clone, Debug, ValueEnum)]
pub enum NetworkArg {
    Veth,
    Loopback,
}

impl StudyArgs {
    pub fn to_options(&self) -> Result<(Vec<StudyName>, StudyOptions), Error> {
        let names = readlab::study::select(&self.name)?;
        let mut target = self.target.clone();
        let mut targets = Vec::new();
        if let Some(first) = &self.target
            && (!self.more_targets.is_empty() || !self.names.is_empty())
        {
            let words: Vec<PathBuf> = std::iter::once(first.clone())
                .chain(self.more_targets.iter().cloned())
                .collect();
            targets = readlab::targets::parse(&words, &self.names)?;
            target = Some(targets[0].path.clone());
        }
        let opts = StudyOptions {
            target: target.clone(),
            quick: self.quick,
            out: self.out.clone().unwrap_or_else(|| {
                readlab::study::default_out(
                    target.as_deref().unwrap_or(std::path::Path::new("null")),
                )
            }),
            resume: self.resume,
            max_threads: self.max_threads,
            verify: self.no_verify.then_some(false),
            repeat: self.repeat,
            targets,
            allow_device_changes: self.allow_device_changes,
            runtime: self.runtime,
            network: self.network.map(|n| match n {
                NetworkArg::Veth => readlab::netns::Network::Veth,
                NetworkArg::Loopback => readlab::netns::Network::Loopback,
            }),
        };
        Ok((names, opts))
    }
}

#[derive(Args, Debug)]
pub struct InfoArgs {
    /// File or block device to probe (one small read per interface).
    pub target: PathBuf,
    #[command(flatten)]
    pub out_json: JsonOut,
}

#[derive(Args, Debug)]
pub struct QuickArgs {
    /// Measured time per run.
    #[arg(long, default_value = "4s", value_parser = duration)]
    pub runtime: Duration,
    /// Directory for the scratch file and results (`--out` is the same flag, as on study and tune).
    #[arg(long, alias = "out", default_value = ".")]
    pub dir: PathBuf,
    #[command(flatten)]
    pub out_json: JsonOut,
}

impl QuickArgs {
    /// What `readlab` with no command runs: `readlab quick` with its defaults.
    pub fn defaults() -> QuickArgs {
        match Cli::parse_from(["readlab", "quick"]).command {
            Some(Command::Quick(q)) => q,
            _ => unreachable!("`readlab quick` parses as the quick command"),
        }
    }
}

#[derive(Args, Debug)]
pub struct PrepareArgs {
    /// File or block device to fill.
    pub path: PathBuf,
    /// Bytes to write (e.g. 256M, 1G); default for a block device: all of it.
    #[arg(long, allow_hyphen_values = true, value_parser = size)]
    pub size: Option<u64>,
    /// Destroy data readlab did not write (any block device, any foreign file).
    #[arg(long)]
    pub overwrite: bool,
    #[command(flatten)]
    pub out_json: JsonOut,
}

impl PrepareArgs {
    pub fn to_config(&self) -> PrepareConfig {
        PrepareConfig {
            path: self.path.clone(),
            size: self.size,
            overwrite: self.overwrite,
        }
    }
}

#[derive(Copy, Clone, Debug, ValueEnum)]
pub enum RwArg {
    Read,
    Randread,
}

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

#[derive(Copy, Clone, Debug, ValueEnum, PartialEq, Eq)]
pub enum OutputArg {
    Table,
    Json,
}

/// The same two flags on every command: `--output json` prints the command's result as JSON
/// alone on stdout, `--json FILE` also writes it to a file.
#[derive(Args, Debug)]
pub struct JsonOut {
    /// What to print on stdout: the usual text, or the result as JSON alone.
    #[arg(long, value_enum, default_value = "table")]
    pub output: OutputArg,
    /// Also write the result as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

impl JsonOut {
    /// Whether stdout gets JSON instead of text.
    pub fn is_json(&self) -> bool {
        self.output == OutputArg::Json
    }

    /// Check `--json FILE` against the command's inputs before any work.
    pub fn check(&self, inputs: &[&std::path::Path]) -> Result<(), Error> {
        match &self.json {
            Some(p) => readlab::outpath::check_file(p, inputs),
            None => Ok(()),
        }
    }

    /// Write the result to `--json FILE` and print it with `--output json`.
    pub fn emit(&self, value: &serde_json::Value) -> anyhow::Result<()> {
        let mut text = serde_json::to_string_pretty(value)?;
        text.push('\n');
        if let Some(p) = &self.json {
            readlab::fsio::write_file(p, &text)?;
        }
        if self.is_json() {
            print!("{text}");
        }
        Ok(())
    }
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// File or block device to read (optional with --profile, which names one); NAME:PATH names it.
    pub target: Option<PathBuf>,
    /// More targets, read at the same time with the same workload, each with its own jobs.
    pub more_targets: Vec<PathBuf>,
    /// Name a target in every output: TARGET=NAME (repeatable).
    #[arg(long = "name")]
    pub names: Vec<String>,
    /// Attach the monitor: devices, machine and this run's threads each second, stored in the
    /// result document and drawn by the report.
    #[arg(long)]
    pub monitor: bool,
    /// Replay a device profile written by `readlab tune` (its configuration; TARGET overrides its target).
    #[arg(long)]
    pub profile: Option<PathBuf>,
    /// Read interface: psync, pvsync2, libaio, uring, pool, posixaio, null; several,
    /// comma-separated, run one after another and end with a verdict.
    #[arg(long, default_value = "psync", value_delimiter = ',')]
    pub engine: Vec<String>,
    /// Block size, 512 B … 64 MiB (e.g. 4k, 1m); comma-separated for several.
    #[arg(long, default_value = "4k", allow_hyphen_values = true, value_parser = size, value_delimiter = ',')]
    pub bs: Vec<u64>,
    /// Access pattern.
    #[arg(long, value_enum, default_value = "randread")]
    pub rw: RwArg,
    /// Worker threads, each with its own descriptor (fio's numjobs).
    #[arg(
        long,
        alias = "threads",
        default_value = "1",
        allow_hyphen_values = true,
        value_parser = count,
        value_delimiter = ','
    )]
    pub numjobs: Vec<usize>,
    /// I/Os in flight per thread (comma-separated for several; synchronous engines take 1).
    #[arg(long, default_value = "1", allow_hyphen_values = true, value_parser = count, value_delimiter = ',')]
    pub iodepth: Vec<usize>,
    /// I/Os added to the queue per submit (comma-separated for several, up to the queue size).
    #[arg(long, default_value = "1", allow_hyphen_values = true, value_parser = count, value_delimiter = ',')]
    pub batch: Vec<usize>,
    /// Completions awaited per reap.
    #[arg(long, default_value = "1", allow_hyphen_values = true, value_parser = count)]
    pub complete_min: usize,
    /// Use O_DIRECT (the default).
    #[arg(long, conflicts_with = "buffered")]
    pub direct: bool,
    /// Read through the page cache instead of O_DIRECT.
    #[arg(long)]
    pub buffered: bool,
    /// Measured time (e.g. 5s, 500ms, 2m).
    #[arg(long, default_value = "5s", allow_hyphen_values = true, value_parser = duration)]
    pub runtime: Duration,
    /// Warm-up before measuring, excluded from every figure.
    #[arg(long, default_value = "0s", allow_hyphen_values = true, value_parser = duration)]
    pub ramp: Duration,
    /// Bytes of the target to read from --offset on (default: to the end).
    #[arg(long, allow_hyphen_values = true, value_parser = size)]
    pub size: Option<u64>,
    /// nbd:// target: connect from inside this network namespace (`ip netns`, root), as
    /// ?netns=NAME in the URL does.
    #[arg(long)]
    pub netns: Option<String>,
    /// First byte of the range to read.
    #[arg(long, default_value = "0", allow_hyphen_values = true, value_parser = size)]
    pub offset: u64,
    /// Seed of the random offsets (the same seed reads the same offsets).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Check every byte read against what `readlab prepare` wrote.
    #[arg(long)]
    pub verify: bool,
    /// posix_fadvise hint for the range before reading.
    #[arg(long, value_enum)]
    pub fadvise: Option<FadviseArg>,
    /// pvsync2: RWF_HIPRI (polled completion).
    #[arg(long)]
    pub hipri: bool,
    /// pvsync2: RWF_NOWAIT (EAGAIN instead of blocking; counted apart from errors).
    #[arg(long)]
    pub nowait: bool,
    /// nbd: spin on the socket for a reply for up to this long (default 200us; `--busy-poll=300us`) before sleeping
    /// for it: QD1 latency without the wake-up of an idle CPU, at the cost of a spinning core.
    #[arg(long, value_parser = duration, num_args = 0..=1, require_equals = true, default_missing_value = "200us")]
    pub busy_poll: Option<Duration>,
    /// Open loop: issue this many requests per second (all threads together); latency is measured
    /// from each request's intended issue time, and a backlog is reported when the target cannot keep up.
    #[arg(long, allow_hyphen_values = true)]
    pub rate: Option<f64>,
    /// Open loop: how requests arrive.
    #[arg(long, value_enum, default_value = "poisson")]
    pub arrivals: ArrivalsArg,
    /// Stop each thread after it has read this many bytes (e.g. the whole target once).
    #[arg(long, allow_hyphen_values = true, value_parser = size)]
    pub io_limit: Option<u64>,
    /// Also record throughput every this many bytes of the target read (e.g. 16m): bandwidth
    /// against offset for a scan, in the JSON's `offset_samples`.
    #[arg(long, allow_hyphen_values = true, value_parser = size)]
    pub sample_every: Option<u64>,
    /// End the run early once per-second IOPS is stable (--runtime becomes the upper bound).
    #[arg(long)]
    pub stop_when_stable: bool,
    /// Stability: one-second intervals judged together.
    #[arg(long, default_value = "5", allow_hyphen_values = true, value_parser = count)]
    pub stable_window: usize,
    /// Stability: largest 95 % confidence half-width of mean IOPS, relative to the mean.
    #[arg(long, default_value_t = 0.02, allow_hyphen_values = true)]
    pub stable_band: f64,
    /// Stability: never stop before this much was measured.
    #[arg(long, default_value = "3s", allow_hyphen_values = true, value_parser = duration)]
    pub min_runtime: Duration,
    /// Random blocks per logical request; latency is per request (report §7.2).
    #[arg(long, default_value = "1", allow_hyphen_values = true, value_parser = count)]
    pub blocks_per_request: usize,
    /// uring: registered file (fixed-file SQEs).
    #[arg(long)]
    pub fixed_files: bool,
    /// uring: registered buffers (READ_FIXED).
    #[arg(long)]
    pub fixed_bufs: bool,
    /// uring: kernel SQ poll thread (IORING_SETUP_SQPOLL); its CPU is reported.
    #[arg(long)]
    pub sqpoll: bool,
    /// uring: pin the SQ poll thread to this CPU.
    #[arg(long)]
    pub sqpoll_cpu: Option<u32>,
    /// uring: how long the SQ poll thread spins idle before sleeping.
    #[arg(long, default_value = "1s", value_parser = duration)]
    pub sqpoll_idle: Duration,
    /// uring: polled completions (IORING_SETUP_IOPOLL; needs device poll queues).
    #[arg(long)]
    pub iopoll: bool,
    /// uring: skip COOP_TASKRUN / SINGLE_ISSUER / DEFER_TASKRUN / registered ring fd.
    #[arg(long)]
    pub plain_setup: bool,
    /// pool: reader threads behind the submitting thread (default: iodepth).
    #[arg(long, allow_hyphen_values = true, value_parser = count)]
    pub pool_threads: Option<usize>,
    /// What to print on stdout: a table, or the JSON document alone.
    #[arg(long, value_enum, default_value = "table")]
    pub output: OutputArg,
    /// Also write the JSON document to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Measure N times (seeds seed, seed+1, …) and report the median run with a confidence
    /// interval per figure.
    #[arg(long, default_value = "1", value_parser = count)]
    pub repeat: usize,
    /// With --profile: hold the result against the one stored in the profile; exit 3 when
    /// throughput dropped or p99.9 rose beyond --tolerance (and the stored spread).
    #[arg(long, requires = "profile")]
    pub check: bool,
    /// How far --check lets throughput fall and p99.9 rise beyond the stored spread (e.g. 10%).
    #[arg(long, default_value = "10%", value_parser = fraction)]
    pub tolerance: f64,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
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
        if let Some(p) = &self.profile {
            let mut cfg = readlab::tune::load_profile(p)?.config;
            if let Some(t) = &self.target {
                cfg.target = t.clone();
            }
            if let Some(ns) = &self.netns {
                cfg.target = with_netns(&cfg.target, ns, !self.more_targets.is_empty())?;
            }
            cfg.runtime = self.runtime;
            cfg.verify = self.verify;
            return Ok(vec![cfg]);
        }
        let mut target = self.target.clone().ok_or_else(|| {
            Error::InvalidArgument(
                "give a TARGET to read (or --profile FILE from `readlab tune`)".into(),
            )
        })?;
        if let Some(ns) = &self.netns {
            target = with_netns(&target, ns, !self.more_targets.is_empty())?;
        }
        if self.runtime.is_zero() {
            return Err(Error::InvalidArgument(
                "--runtime must be positive, e.g. 5s".into(),
            ));
        }
        let several = self.several();
        let mut out = Vec::new();
        for name in &self.engine {
            let engine = EngineKind::parse(name.trim())?;
            for &bs in &self.bs {
                for &threads in &self.numjobs {
                    for &iodepth in &self.iodepth {
                        for &batch in &self.batch {
                            let sync = !engine.capabilities().asynchronous;
                            if several && ((sync && iodepth > 1) || batch > iodepth) {
                                continue;
                            }
                            out.push(self.one(target.clone(), engine, bs, threads, iodepth, batch));
                        }
                    }
                }
            }
        }
        if out.is_empty() {
            return Err(Error::InvalidArgument(
                "no configuration left: synchronous engines take --iodepth 1, and --batch must not exceed --iodepth".into(),
            ));
        }
        Ok(out)
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
            engine,
            bs,
            rw: match self.rw {
                RwArg::Read => Rw::Read,
                RwArg::Randread => Rw::Randread,
            },
            threads,
            iodepth,
            batch,
            complete_min: self.complete_min,
            direct: !self.buffered,
            runtime: self.runtime,
            ramp: self.ramp,
            size: self.size,
            offset: self.offset,
            seed: self.seed,
            verify: self.verify,
            fadvise: self.fadvise.map(|f| match f {
                FadviseArg::Sequential => Fadvise::Sequential,
                FadviseArg::Random => Fadvise::Random,
            }),
            blocks_per_request: self.blocks_per_request,
            io_limit: self.io_limit,
            sample_bytes: self.sample_every,
            stop_when_stable: self.stop_when_stable.then_some(StopRule {
                window: self.stable_window,
                band: self.stable_band,
                min_runtime: self.min_runtime,
            }),
            rate: self.rate.map(|iops| Rate {
                iops,
                arrivals: match self.arrivals {
                    ArrivalsArg::Poisson => Arrivals::Poisson,
                    ArrivalsArg::Fixed => Arrivals::Fixed,
                },
            }),
            options: self.options_for(engine),
        }
    }

    /// The engine options the flags set; with several engines, each engine keeps only the
    /// options it owns, so `--engine psync,uring --fixed-files` gives io_uring fixed files.
    fn options_for(&self, engine: EngineKind) -> EngineOptions {
        let all = EngineOptions {
            pvsync2: Pvsync2Options {
                hipri: self.hipri,
                nowait: self.nowait,
            },
            uring: UringOptions {
                fixed_files: self.fixed_files,
                fixed_bufs: self.fixed_bufs,
                sqpoll: self.sqpoll,
                sqpoll_cpu: self.sqpoll_cpu,
                sqpoll_idle_ms: self.sqpoll_idle.as_millis().min(u32::MAX as u128) as u32,
                iopoll: self.iopoll,
                plain_setup: self.plain_setup,
            },
            pool: PoolOptions {
                pool_threads: self.pool_threads,
            },
            nbd: NbdOptions {
                busy_poll_us: self
                    .busy_poll
                    .map_or(0, |d| d.as_micros().min(u32::MAX as u128) as u32),
            },
        };
        if self.engine.len() == 1 {
            return all;
        }
        EngineOptions {
            pvsync2: if engine == EngineKind::Pvsync2 {
                all.pvsync2
            } else {
                Default::default()
            },
            uring: if engine == EngineKind::Uring {
                all.uring
            } else {
                UringOptions {
                    sqpoll_idle_ms: all.uring.sqpoll_idle_ms,
                    ..Default::default()
                }
            },
            pool: if engine == EngineKind::Pool {
                all.pool
            } else {
                Default::default()
            },
            nbd: if engine.name() == "nbd" {
                all.nbd
            } else {
                Default::default()
            },
        }
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
    let url = readlab::nbd::NbdUrl::parse(&t)
        .and_then(|u| u.with_netns(ns))
        .map_err(Error::InvalidArgument)?;
    Ok(url.to_string().into())
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
    fn negative_counts_are_rejected() {
        assert!(count("-1").is_err());
        assert!(count("0").is_err());
        assert_eq!(count("32").unwrap(), 32);
    }

    #[test]
    fn quick_default_args_match_clap_defaults() {
        let q = QuickArgs::defaults();
        assert_eq!(q.runtime, Duration::from_secs(4));
        assert_eq!(q.dir, PathBuf::from("."));
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
