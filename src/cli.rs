//! The command line: the only module that knows clap. It turns arguments into validated config
//! types, shows progress by observing the runner, prints results, and maps errors to exit codes
//! (2 for bad input, 1 for failed runs).

use crate::config::{Fadvise, RunConfig, Rw};
use crate::engine::{EngineKind, EngineOptions};
use crate::error::Error;
use crate::export::{self, Exporter, JsonExporter, TableExporter};
use crate::prepare::{self, PrepareConfig, PrepareObserver, Prepared};
use crate::quick::{self, QuickObserver};
use crate::result::Document;
use crate::runner::{self, Observer, Phase, Tick};
use crate::size::{format_size, parse_duration, parse_size};
use clap::{Args, Parser, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

#[derive(Parser, Debug)]
#[command(
    name = "readlab",
    version,
    about = "What is the fastest way to read from this device, at what latency, and at what CPU cost?",
    long_about = "readlab measures read interfaces (pread, preadv2, ...) on files and block devices: \
                  throughput, IOPS, exact latency percentiles and CPU, verifying every byte it reads.\n\n\
                  With no command it runs a short survey on a scratch file in the current directory."
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand, Debug)]
enum Command {
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
}

#[derive(Copy, Clone, Debug, ValueEnum)]
enum GoalArg {
    Throughput,
    Latency,
    Balanced,
}

#[derive(Args, Debug)]
struct TuneArgs {
    /// File or block device to tune for.
    target: PathBuf,
    /// Block size(s), comma-separated (e.g. 4k,1m): one recommendation each.
    #[arg(long, default_value = "4k")]
    bs: String,
    /// What the recommendation optimises.
    #[arg(long, value_enum, default_value = "balanced")]
    goal: GoalArg,
    /// Largest acceptable p99.9 latency (e.g. 500us, 2ms).
    #[arg(long)]
    p999_max: Option<String>,
    /// Largest acceptable CPU, in cores (kernel helper threads included).
    #[arg(long)]
    cpu_max: Option<f64>,
    /// Engines to search, comma-separated.
    #[arg(long, default_value = "psync,libaio,uring")]
    engines: String,
    /// Wall-clock budget for the whole search.
    #[arg(long, default_value = "5m")]
    budget: String,
    /// Directory for results.jsonl and the device profile(s) (default: readlab-tune-<target name>).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Do not verify the data read.
    #[arg(long)]
    no_verify: bool,
}

#[derive(Args, Debug)]
struct ReportArgs {
    /// Results directories (a study's --out), results.jsonl files or `readlab run --json` documents.
    inputs: Vec<PathBuf>,
    /// fio output (--output-format=json or json+) to put beside readlab's points; repeatable.
    #[arg(long)]
    fio: Vec<PathBuf>,
    /// Output file, or - for standard output (default: report.<format>).
    #[arg(short = 'o', long = "out")]
    out: Option<PathBuf>,
    /// html (self-contained page with charts), csv, md or json (the tables).
    #[arg(long, default_value = "html")]
    format: String,
    /// Also write every chart as PNG into this directory.
    #[arg(long)]
    png: Option<PathBuf>,
}

#[derive(Args, Debug)]
struct StudyArgs {
    /// latency, scan, stream, threads, queue, batch, multiblock, uring-features, scheduler or all.
    name: String,
    /// File or block device to study.
    target: PathBuf,
    /// Shrink durations and grids so a study takes about two minutes.
    #[arg(long)]
    quick: bool,
    /// Directory for results.jsonl and summary.md (default: readlab-study-<target name>).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Continue a study: skip the points already in results.jsonl.
    #[arg(long)]
    resume: bool,
    /// Largest thread count of the threads and scheduler studies (default 4 × cores).
    #[arg(long, allow_hyphen_values = true)]
    max_threads: Option<String>,
    /// Do not verify the data read (verification is on when readlab prepared the target).
    #[arg(long)]
    no_verify: bool,
}

#[derive(Args, Debug)]
struct InfoArgs {
    /// File or block device to probe (one small read per interface).
    target: PathBuf,
    /// What to print: the capability table, or JSON.
    #[arg(long, value_enum, default_value = "table")]
    output: OutputArg,
}

#[derive(Args, Debug, Default)]
struct QuickArgs {
    /// Measured time per run.
    #[arg(long, default_value = "4s")]
    runtime: String,
    /// Directory for the scratch file and results.
    #[arg(long, default_value = ".")]
    dir: PathBuf,
}

#[derive(Args, Debug)]
struct PrepareArgs {
    /// File or block device to fill.
    path: PathBuf,
    /// Bytes to write (e.g. 256M, 1G); default for a block device: all of it.
    #[arg(long, allow_hyphen_values = true)]
    size: Option<String>,
    /// Destroy data readlab did not write (any block device, any foreign file).
    #[arg(long)]
    overwrite: bool,
}

#[derive(Copy, Clone, Debug, ValueEnum)]
enum RwArg {
    Read,
    Randread,
}

#[derive(Copy, Clone, Debug, ValueEnum)]
enum ArrivalsArg {
    Poisson,
    Fixed,
}

#[derive(Copy, Clone, Debug, ValueEnum)]
enum FadviseArg {
    Sequential,
    Random,
}

#[derive(Copy, Clone, Debug, ValueEnum, PartialEq, Eq)]
enum OutputArg {
    Table,
    Json,
}

#[derive(Args, Debug)]
struct RunArgs {
    /// File or block device to read (optional with --profile, which names one).
    target: Option<PathBuf>,
    /// Replay a device profile written by `readlab tune` (its configuration; TARGET overrides its target).
    #[arg(long)]
    profile: Option<PathBuf>,
    /// Read interface: psync, pvsync2, libaio, uring, pool, posixaio, null.
    #[arg(long, default_value = "psync")]
    engine: String,
    /// Block size, 512 B … 64 MiB (e.g. 4k, 1m).
    #[arg(long, default_value = "4k", allow_hyphen_values = true)]
    bs: String,
    /// Access pattern.
    #[arg(long, value_enum, default_value = "randread")]
    rw: RwArg,
    /// Worker threads, each with its own descriptor (fio's numjobs).
    #[arg(
        long,
        alias = "threads",
        default_value = "1",
        allow_hyphen_values = true
    )]
    numjobs: String,
    /// I/Os in flight per thread.
    #[arg(long, default_value = "1", allow_hyphen_values = true)]
    iodepth: String,
    /// I/Os added to the queue per submit.
    #[arg(long, default_value = "1", allow_hyphen_values = true)]
    batch: String,
    /// Completions awaited per reap.
    #[arg(long, default_value = "1", allow_hyphen_values = true)]
    complete_min: String,
    /// Use O_DIRECT (the default).
    #[arg(long, conflicts_with = "buffered")]
    direct: bool,
    /// Read through the page cache instead of O_DIRECT.
    #[arg(long)]
    buffered: bool,
    /// Measured time (e.g. 5s, 500ms, 2m).
    #[arg(long, default_value = "5s", allow_hyphen_values = true)]
    runtime: String,
    /// Warm-up before measuring, excluded from every figure.
    #[arg(long, default_value = "0s", allow_hyphen_values = true)]
    ramp: String,
    /// Bytes of the target to read from --offset on (default: to the end).
    #[arg(long, allow_hyphen_values = true)]
    size: Option<String>,
    /// First byte of the range to read.
    #[arg(long, default_value = "0", allow_hyphen_values = true)]
    offset: String,
    /// Seed of the random offsets (the same seed reads the same offsets).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Check every byte read against what `readlab prepare` wrote.
    #[arg(long)]
    verify: bool,
    /// posix_fadvise hint for the range before reading.
    #[arg(long, value_enum)]
    fadvise: Option<FadviseArg>,
    /// pvsync2: RWF_HIPRI (polled completion).
    #[arg(long)]
    hipri: bool,
    /// pvsync2: RWF_NOWAIT (EAGAIN instead of blocking; counted apart from errors).
    #[arg(long)]
    nowait: bool,
    /// Open loop: issue this many requests per second (all threads together); latency is measured
    /// from each request's intended issue time, and a backlog is reported when the target cannot keep up.
    #[arg(long, allow_hyphen_values = true)]
    rate: Option<f64>,
    /// Open loop: how requests arrive.
    #[arg(long, value_enum, default_value = "poisson")]
    arrivals: ArrivalsArg,
    /// Stop each thread after it has read this many bytes (e.g. the whole target once).
    #[arg(long, allow_hyphen_values = true)]
    io_limit: Option<String>,
    /// End the run early once per-second IOPS is stable (--runtime becomes the upper bound).
    #[arg(long)]
    stop_when_stable: bool,
    /// Stability: one-second intervals judged together.
    #[arg(long, default_value = "5", allow_hyphen_values = true)]
    stable_window: String,
    /// Stability: largest 95 % confidence half-width of mean IOPS, relative to the mean.
    #[arg(long, default_value_t = 0.02, allow_hyphen_values = true)]
    stable_band: f64,
    /// Stability: never stop before this much was measured.
    #[arg(long, default_value = "3s", allow_hyphen_values = true)]
    min_runtime: String,
    /// Random blocks per logical request; latency is per request (report §7.2).
    #[arg(long, default_value = "1", allow_hyphen_values = true)]
    blocks_per_request: String,
    /// uring: registered file (fixed-file SQEs).
    #[arg(long)]
    fixed_files: bool,
    /// uring: registered buffers (READ_FIXED).
    #[arg(long)]
    fixed_bufs: bool,
    /// uring: kernel SQ poll thread (IORING_SETUP_SQPOLL); its CPU is reported.
    #[arg(long)]
    sqpoll: bool,
    /// uring: pin the SQ poll thread to this CPU.
    #[arg(long)]
    sqpoll_cpu: Option<u32>,
    /// uring: how long the SQ poll thread spins idle before sleeping.
    #[arg(long, default_value = "1s")]
    sqpoll_idle: String,
    /// uring: polled completions (IORING_SETUP_IOPOLL; needs device poll queues).
    #[arg(long)]
    iopoll: bool,
    /// uring: skip COOP_TASKRUN / SINGLE_ISSUER / DEFER_TASKRUN / registered ring fd.
    #[arg(long)]
    plain_setup: bool,
    /// pool: reader threads behind the submitting thread (default: iodepth).
    #[arg(long, allow_hyphen_values = true)]
    pool_threads: Option<String>,
    /// What to print on stdout: a table, or the JSON document alone.
    #[arg(long, value_enum, default_value = "table")]
    output: OutputArg,
    /// Also write the JSON document to this file.
    #[arg(long)]
    json: Option<PathBuf>,
    /// No progress bar.
    #[arg(long, short)]
    quiet: bool,
}

fn count(name: &str, s: &str) -> Result<usize, Error> {
    match s.trim().parse::<i64>() {
        Ok(v) if v >= 1 => Ok(v as usize),
        Ok(v) => Err(Error::invalid(format!(
            "--{name} must be at least 1, not {v}"
        ))),
        Err(_) => Err(Error::invalid(format!(
            "--{name} '{s}' is not a whole number"
        ))),
    }
}

impl RunArgs {
    fn to_config(&self) -> Result<RunConfig, Error> {
        if let Some(p) = &self.profile {
            let mut cfg = crate::tune::load_profile(p)?.config;
            if let Some(t) = &self.target {
                cfg.target = t.clone();
            }
            cfg.runtime = parse_duration(&self.runtime)?;
            cfg.verify = self.verify;
            return Ok(cfg);
        }
        let target = self.target.clone().ok_or_else(|| {
            Error::invalid("give a TARGET to read (or --profile FILE from `readlab tune`)")
        })?;
        let runtime = parse_duration(&self.runtime)?;
        if runtime.is_zero() {
            return Err(Error::invalid("--runtime must be positive, e.g. 5s"));
        }
        Ok(RunConfig {
            target,
            engine: EngineKind::parse(&self.engine)?,
            bs: parse_size(&self.bs)?,
            rw: match self.rw {
                RwArg::Read => Rw::Read,
                RwArg::Randread => Rw::Randread,
            },
            threads: count("numjobs", &self.numjobs)?,
            iodepth: count("iodepth", &self.iodepth)?,
            batch: count("batch", &self.batch)?,
            complete_min: count("complete-min", &self.complete_min)?,
            direct: !self.buffered,
            runtime,
            ramp: parse_duration(&self.ramp)?,
            size: self.size.as_deref().map(parse_size).transpose()?,
            offset: parse_size(&self.offset)?,
            seed: self.seed,
            verify: self.verify,
            fadvise: self.fadvise.map(|f| match f {
                FadviseArg::Sequential => Fadvise::Sequential,
                FadviseArg::Random => Fadvise::Random,
            }),
            blocks_per_request: count("blocks-per-request", &self.blocks_per_request)?,
            io_limit: self.io_limit.as_deref().map(parse_size).transpose()?,
            stop_when_stable: if self.stop_when_stable {
                Some(crate::stability::StopRule {
                    window: count("stable-window", &self.stable_window)?,
                    band: self.stable_band,
                    min_runtime: parse_duration(&self.min_runtime)?,
                })
            } else {
                None
            },
            rate: self.rate.map(|iops| crate::config::Rate {
                iops,
                arrivals: match self.arrivals {
                    ArrivalsArg::Poisson => crate::config::Arrivals::Poisson,
                    ArrivalsArg::Fixed => crate::config::Arrivals::Fixed,
                },
            }),
            options: EngineOptions {
                hipri: self.hipri,
                nowait: self.nowait,
                fixed_files: self.fixed_files,
                fixed_bufs: self.fixed_bufs,
                sqpoll: self.sqpoll,
                sqpoll_cpu: self.sqpoll_cpu,
                sqpoll_idle_ms: parse_duration(&self.sqpoll_idle)?
                    .as_millis()
                    .min(u32::MAX as u128) as u32,
                iopoll: self.iopoll,
                plain_setup: self.plain_setup,
                pool_threads: self
                    .pool_threads
                    .as_deref()
                    .map(|s| count("pool-threads", s))
                    .transpose()?,
            },
        })
    }
}

/// Progress on stderr: a bar per run, hidden when stderr is not a terminal.
struct Progress {
    bar: std::sync::Mutex<Option<ProgressBar>>,
    quiet: bool,
    interrupted: Arc<AtomicBool>,
}

impl Progress {
    fn new(quiet: bool) -> Progress {
        let interrupted = Arc::new(AtomicBool::new(false));
        let _ = signal_hook::flag::register(signal_hook::consts::SIGINT, interrupted.clone());
        Progress {
            bar: std::sync::Mutex::new(None),
            quiet,
            interrupted,
        }
    }

    fn finish(&self) {
        if let Some(b) = self.bar.lock().unwrap().take() {
            b.finish_and_clear();
        }
    }

    fn bar(&self, len: u64, template: &str) -> Option<ProgressBar> {
        if self.quiet {
            return None;
        }
        let mut slot = self.bar.lock().unwrap();
        if slot.is_none() {
            let b = ProgressBar::new(len);
            b.set_style(
                ProgressStyle::with_template(template)
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            *slot = Some(b);
        }
        slot.clone()
    }
}

impl Observer for Progress {
    fn tick(&self, t: &Tick) {
        let Some(b) = self.bar(
            t.planned.as_millis() as u64,
            "{spinner} [{bar:30}] {elapsed}/{duration} {msg}",
        ) else {
            return;
        };
        b.set_position((t.elapsed.as_millis() as u64).min(t.planned.as_millis() as u64));
        let phase = match t.phase {
            Phase::Ramp => "ramp",
            Phase::Measure => "measure",
            Phase::Drain => "drain",
        };
        b.set_message(format!("{phase} {:.0} IOPS", t.recent_iops));
        if t.phase == Phase::Drain {
            self.finish();
        }
    }

    fn cancelled(&self) -> bool {
        self.interrupted.load(Ordering::Relaxed)
    }
}

impl PrepareObserver for Progress {
    fn progress(&self, written: u64, total: u64) {
        if let Some(b) = self.bar(
            total,
            "{spinner} prepare [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec}",
        ) {
            b.set_position(written);
            if written >= total {
                self.finish();
            }
        }
    }
    fn should_stop(&self) -> bool {
        self.interrupted.load(Ordering::Relaxed)
    }
}

impl QuickObserver for Progress {
    fn preparing(&self, path: &Path, size: u64) {
        eprintln!(
            "readlab: preparing {} ({}) with verifiable data",
            path.display(),
            format_size(size)
        );
    }
    fn reused(&self, path: &Path) {
        eprintln!("readlab: reusing prepared {}", path.display());
    }
    fn prepared(&self, p: &Prepared) {
        eprintln!(
            "readlab: wrote {} in {:.1} s ({:.0} MiB/s{})",
            format_size(p.size),
            p.seconds,
            p.size as f64 / p.seconds.max(1e-9) / (1u64 << 20) as f64,
            if p.direct { ", O_DIRECT" } else { ", buffered" }
        );
    }
    fn starting(&self, i: usize, n: usize, cfg: &RunConfig) {
        eprintln!(
            "readlab: [{}/{}] {} {:?} {} x{} threads",
            i + 1,
            n,
            cfg.engine.name(),
            cfg.rw,
            format_size(cfg.bs),
            cfg.threads
        );
    }
}

fn print_warnings(doc: &Document) {
    for w in &doc.result.warnings {
        eprintln!("readlab: warning: {w}");
    }
}

fn cmd_run(a: &RunArgs) -> anyhow::Result<ExitCode> {
    let cfg = a.to_config()?;
    if let Some(p) = &a.json {
        let profile = a.profile.as_deref().into_iter();
        crate::outpath::check_file(
            p,
            &profile.chain([cfg.target.as_path()]).collect::<Vec<_>>(),
        )?;
    }
    let progress = Progress::new(a.quiet || a.output == OutputArg::Json);
    let doc = runner::run(&cfg, &progress)?;
    progress.finish();
    print_warnings(&doc);
    let docs = std::slice::from_ref(&doc);
    if let Some(path) = &a.json {
        crate::fsio::write_file(path, &JsonExporter.render(docs)?)?;
    }
    match a.output {
        OutputArg::Json => print!("{}", JsonExporter.render(docs)?),
        OutputArg::Table => print!("{}", export::run_report(&doc)),
    }
    if doc.result.failed() {
        let r = &doc.result;
        let mism = r.verify.as_ref().map_or(0, |v| v.mismatches);
        eprintln!(
            "readlab: run failed: {} I/O error(s), {} verification mismatch(es)",
            r.errors.count, mism
        );
        if let Some(m) = r.verify.as_ref().and_then(|v| v.first.first()) {
            eprintln!(
                "readlab: first mismatch at offset {} (sector {})",
                m.offset, m.sector
            );
        }
        if let Some(e) = r.errors.first.first() {
            eprintln!("readlab: first error at offset {}: {}", e.offset, e.message);
        }
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// Progress of a study: a bar over its points, and a line per second for long points.
struct StudyProgress {
    inner: Progress,
    points: std::sync::Mutex<Option<ProgressBar>>,
    last_line: std::sync::Mutex<Duration>,
}

impl StudyProgress {
    fn println(&self, msg: &str) {
        match self.points.lock().unwrap().as_ref() {
            Some(b) => b.println(msg),
            None => eprintln!("{msg}"),
        }
    }
}

impl Observer for StudyProgress {
    fn tick(&self, t: &Tick) {
        if t.planned > Duration::from_secs(5) && t.phase == Phase::Measure {
            let mut last = self.last_line.lock().unwrap();
            if t.elapsed >= *last + Duration::from_secs(1) {
                *last = t.elapsed;
                self.println(&format!(
                    "    {:>4.0} s  {:>10.0} IOPS",
                    t.elapsed.as_secs_f64(),
                    t.recent_iops
                ));
            }
        }
    }

    fn cancelled(&self) -> bool {
        self.inner.cancelled()
    }
}

impl crate::study::StudyObserver for StudyProgress {
    fn study_start(&self, name: crate::study::StudyName, total: usize, skipped: usize) {
        let mut slot = self.points.lock().unwrap();
        if let Some(b) = slot.take() {
            b.finish_and_clear();
        }
        eprintln!(
            "readlab: study {} — {} points{}",
            name.name(),
            total,
            if skipped > 0 {
                format!(", {skipped} already done")
            } else {
                String::new()
            }
        );
        if !self.inner.quiet {
            let b = ProgressBar::new(total as u64);
            b.set_style(
                ProgressStyle::with_template(
                    "{spinner} [{bar:30}] {pos}/{len} points, ETA {eta} {msg}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            b.set_position(skipped as u64);
            *slot = Some(b);
        }
    }

    fn point_start(&self, index: usize, _total: usize, p: &crate::study::Point) {
        *self.last_line.lock().unwrap() = Duration::ZERO;
        if let Some(b) = self.points.lock().unwrap().as_ref() {
            b.set_position(index as u64);
            b.set_message(format!(
                "{} {} {}",
                p.cfg.label(),
                format_size(p.cfg.bs),
                p.tag.scheduler.as_deref().unwrap_or("")
            ));
        }
    }

    fn point_done(&self, d: &Document) {
        if let Some(b) = self.points.lock().unwrap().as_ref() {
            b.inc(1);
        }
        for w in &d.result.warnings {
            self.println(&format!("readlab: warning: {}: {w}", d.result.label));
        }
    }

    fn note(&self, message: &str) {
        self.println(&format!("readlab: {message}"));
    }
}

fn cmd_study(a: &StudyArgs) -> anyhow::Result<ExitCode> {
    let name = crate::study::StudyName::parse(&a.name)?;
    let out = a
        .out
        .clone()
        .unwrap_or_else(|| crate::study::default_out(&a.target));
    crate::outpath::check_dir(&out, &[&a.target], &[crate::store::RESULTS, "summary.md"])?;
    let opts = crate::study::StudyOptions {
        target: a.target.clone(),
        quick: a.quick,
        out,
        resume: a.resume,
        max_threads: a
            .max_threads
            .as_deref()
            .map(|s| count("max-threads", s))
            .transpose()?,
        verify: a.no_verify.then_some(false),
    };
    let progress = StudyProgress {
        inner: Progress::new(false),
        points: std::sync::Mutex::new(None),
        last_line: std::sync::Mutex::new(Duration::ZERO),
    };
    let outcome = crate::study::run(&[name], &opts, &progress)?;
    if let Some(b) = progress.points.lock().unwrap().take() {
        b.finish_and_clear();
    }
    println!("{}", outcome.summary);
    eprintln!(
        "readlab: {} points measured, {} already done; results: {}; summary: {}",
        outcome.measured,
        outcome.skipped,
        outcome.results.display(),
        outcome.summary_path.display()
    );
    if outcome.interrupted {
        eprintln!("readlab: interrupted; run the same command with --resume to continue");
        return Ok(ExitCode::from(130));
    }
    Ok(ExitCode::SUCCESS)
}

/// Tuner progress: one line per measured point under a spinner.
struct TuneProgress {
    inner: Progress,
}

impl Observer for TuneProgress {
    fn cancelled(&self) -> bool {
        self.inner.cancelled()
    }
}

impl crate::tune::TuneObserver for TuneProgress {
    fn phase(&self, what: &str) {
        eprintln!("readlab: tune: {what}");
    }
    fn measured(&self, c: &crate::tune::Candidate, _doc: &Document) {
        eprintln!(
            "    {:<14} {:>9.0} IOPS {:>8.1} MB/s  p99.9 {:>9}  CPU {:.2} cores",
            c.label,
            c.iops,
            c.mb_s,
            crate::size::format_ns(c.p999_ns as f64),
            c.cpu_cores
        );
    }
}

fn cmd_tune(a: &TuneArgs) -> anyhow::Result<ExitCode> {
    use crate::tune::{self, Goal};
    let block_sizes =
        a.bs.split(',')
            .map(parse_size)
            .collect::<Result<Vec<_>, _>>()?;
    let engines = a
        .engines
        .split(',')
        .map(|e| EngineKind::parse(e.trim()))
        .collect::<Result<Vec<_>, _>>()?;
    let target_name = a
        .target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "target".into());
    let prepared = crate::target::Target::inspect(&a.target)?
        .prepared_id
        .is_some();
    let opts = tune::TuneOptions {
        target: a.target.clone(),
        block_sizes,
        goal: match a.goal {
            GoalArg::Throughput => Goal::Throughput,
            GoalArg::Latency => Goal::Latency,
            GoalArg::Balanced => Goal::Balanced,
        },
        p999_max: a.p999_max.as_deref().map(parse_duration).transpose()?,
        cpu_max: a.cpu_max,
        engines,
        budget: parse_duration(&a.budget)?,
        out: a
            .out
            .clone()
            .unwrap_or_else(|| PathBuf::from(format!("readlab-tune-{target_name}"))),
        verify: prepared && !a.no_verify,
    };
    crate::outpath::check_dir(&opts.out, &[&a.target], &[crate::store::RESULTS])?;
    let progress = TuneProgress {
        inner: Progress::new(true),
    };
    let report = tune::tune(&opts, &progress)?;
    let mut exit = ExitCode::SUCCESS;
    for rec in &report.recommendations {
        println!(
            "\n## {} — block size {}, goal {}, {} points measured\n",
            opts.target.display(),
            format_size(rec.bs),
            rec.goal.name(),
            rec.points_measured
        );
        println!(
            "| goal | target | engine | threads | queue size | batch | features | MB/s | IOPS | p99.9 | CPU (cores) | label |"
        );
        println!("|---|---|---|---:|---:|---:|---|---:|---:|---:|---:|---|");
        for (g, c) in &rec.per_goal {
            let cfg = &c.config;
            let o = &cfg.options;
            let feats: Vec<&str> = [
                (o.fixed_files, "fixed files"),
                (o.fixed_bufs, "fixed buffers"),
                (o.sqpoll, "SQ poll"),
            ]
            .into_iter()
            .filter_map(|(on, n)| on.then_some(n))
            .collect();
            println!(
                "| {}{} | {} | {} | {} | {} | {} | {} | {:.1} | {:.0} | {} | {:.2} | {} |",
                g.name(),
                if *g == rec.goal { " (recommended)" } else { "" },
                target_name,
                cfg.engine.name(),
                cfg.threads,
                cfg.iodepth,
                cfg.batch,
                if feats.is_empty() {
                    "-".into()
                } else {
                    feats.join(", ")
                },
                c.mb_s,
                c.iops,
                crate::size::format_ns(c.p999_ns as f64),
                c.cpu_cores,
                c.label
            );
        }
        match &rec.pick {
            Some(p) => {
                println!("\nRecommended: {} ({} goal)", p.label, rec.goal.name());
                for t in &rec.trade_offs {
                    println!("  trade-off: {t}");
                }
                println!("\n  readlab: {}", tune::readlab_command(&p.config));
                println!("  fio:     {}", tune::fio_command(&p.config));
                let profile = tune::Profile {
                    schema: tune::PROFILE_SCHEMA.into(),
                    goal: rec.goal,
                    label: p.label.clone(),
                    config: p.config.clone(),
                    expected: p.clone(),
                };
                let path = opts.out.join(format!(
                    "profile-{}.json",
                    format_size(rec.bs).to_lowercase()
                ));
                crate::fsio::write_file(&path, &serde_json::to_string_pretty(&profile)?)?;
                println!(
                    "  profile: {} (replay: readlab run --profile {})",
                    path.display(),
                    path.display()
                );
            }
            None => {
                exit = ExitCode::from(1);
                println!(
                    "\nNo configuration met the constraints{}{}. Closest points:",
                    opts.p999_max
                        .map(|m| format!(
                            " p99.9 ≤ {}",
                            crate::size::format_ns(m.as_nanos() as f64)
                        ))
                        .unwrap_or_default(),
                    opts.cpu_max
                        .map(|c| format!(" CPU ≤ {c} cores"))
                        .unwrap_or_default()
                );
                for (c, why) in &rec.closest {
                    println!(
                        "  {:<14} {:.0} IOPS, p99.9 {}, CPU {:.2} cores: {}",
                        c.label,
                        c.iops,
                        crate::size::format_ns(c.p999_ns as f64),
                        c.cpu_cores,
                        why
                    );
                }
            }
        }
    }
    eprintln!(
        "readlab: tuned in {:.0} s of a {:.0} s budget; every point is in {}",
        report.seconds,
        report.budget_s,
        report.results.display()
    );
    Ok(exit)
}

fn cmd_report(a: &ReportArgs) -> anyhow::Result<ExitCode> {
    let format = crate::report::ReportFormat::parse(&a.format)?;
    let inputs: Vec<&Path> = a
        .inputs
        .iter()
        .chain(&a.fio)
        .map(PathBuf::as_path)
        .collect();
    match &a.out {
        Some(o) if o.as_os_str() == "-" => {}
        o => crate::outpath::check_file(
            o.as_deref()
                .unwrap_or(Path::new(&format!("report.{}", format.extension()))),
            &inputs,
        )?,
    }
    if let Some(dir) = &a.png {
        crate::outpath::check_dir(dir, &inputs, &[])?;
    }
    let report = crate::report::load(&a.inputs, &a.fio)?;
    for n in &report.notes {
        eprintln!("readlab: note: {n}");
    }
    let text = export::report_exporter(format).render(&report)?;
    let out = a
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("report.{}", format.extension())));
    if out.as_os_str() == "-" {
        print!("{text}");
    } else {
        crate::fsio::write_file(&out, &text)?;
        eprintln!(
            "readlab: wrote {} ({} points, {} sections)",
            out.display(),
            report.points.len(),
            report.sections.len()
        );
    }
    if let Some(dir) = &a.png {
        let files = crate::report::write_pngs(&report, dir)?;
        eprintln!(
            "readlab: wrote {} PNG charts to {}",
            files.len(),
            dir.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn cmd_info(a: &InfoArgs) -> anyhow::Result<ExitCode> {
    let report = crate::probe::probe(&a.target)?;
    match a.output {
        OutputArg::Json => println!("{}", serde_json::to_string_pretty(&report)?),
        OutputArg::Table => print!("{}", crate::probe::render(&report)),
    }
    Ok(ExitCode::SUCCESS)
}

fn cmd_prepare(a: &PrepareArgs) -> anyhow::Result<ExitCode> {
    let cfg = PrepareConfig {
        path: a.path.clone(),
        size: a.size.as_deref().map(parse_size).transpose()?,
        overwrite: a.overwrite,
    };
    let progress = Progress::new(false);
    let term = Arc::new(AtomicBool::new(false));
    let _ = signal_hook::flag::register(signal_hook::consts::SIGTERM, term.clone());
    let _ = signal_hook::flag::register(signal_hook::consts::SIGTERM, progress.interrupted.clone());
    let p = match prepare::prepare(&cfg, &progress) {
        Err(e @ Error::Interrupted { .. }) => {
            progress.finish();
            eprintln!("readlab: {e}");
            return Ok(ExitCode::from(if term.load(Ordering::Relaxed) {
                143
            } else {
                130
            }));
        }
        r => r?,
    };
    progress.finish();
    println!(
        "prepared {}: {} ({} B) in {:.2} s, {:.0} MiB/s, {}, file id {:016x}",
        p.path.display(),
        format_size(p.size),
        p.size,
        p.seconds,
        p.size as f64 / p.seconds.max(1e-9) / (1u64 << 20) as f64,
        if p.direct {
            "O_DIRECT"
        } else {
            "buffered (no O_DIRECT here)"
        },
        p.file_id
    );
    Ok(ExitCode::SUCCESS)
}

fn cmd_quick(a: &QuickArgs) -> anyhow::Result<ExitCode> {
    let runtime = parse_duration(&a.runtime)?;
    if runtime.is_zero() {
        return Err(Error::invalid("--runtime must be positive").into());
    }
    let plan = quick::plan(&a.dir, runtime)?;
    let progress = Progress::new(false);
    let docs = quick::execute(&plan, &progress)?;
    progress.finish();
    docs.iter().for_each(print_warnings);
    println!();
    print!("{}", TableExporter.render(&docs)?);
    println!();
    println!(
        "Results (one JSON document per run): {}\nScratch file (verifiable data, reused next time): {}",
        plan.results.display(),
        plan.scratch.display()
    );
    Ok(if docs.iter().any(|d| d.result.failed()) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Entry point of the binary.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    let res = match &cli.command {
        None => cmd_quick(&QuickArgs {
            runtime: "4s".into(),
            dir: ".".into(),
        }),
        Some(Command::Quick(a)) => cmd_quick(a),
        Some(Command::Prepare(a)) => cmd_prepare(a),
        Some(Command::Run(a)) => cmd_run(a),
        Some(Command::Info(a)) => cmd_info(a),
        Some(Command::Study(a)) => cmd_study(a),
        Some(Command::Tune(a)) => cmd_tune(a),
        Some(Command::Report(a)) => cmd_report(a),
    };
    match res {
        Ok(code) => code,
        Err(e) => {
            let bad_input = e.downcast_ref::<Error>().is_some_and(Error::is_bad_input);
            let interrupted = matches!(e.downcast_ref(), Some(Error::Interrupted { .. }));
            eprintln!("readlab: error: {e:#}");
            ExitCode::from(if bad_input {
                2
            } else if interrupted {
                130
            } else {
                1
            })
        }
    }
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
        assert!(count("iodepth", "-1").is_err());
        assert!(count("iodepth", "0").is_err());
        assert_eq!(count("iodepth", "32").unwrap(), 32);
    }

    #[test]
    fn quick_default_args_match_clap_defaults() {
        let c = Cli::try_parse_from(["readlab", "quick"]).unwrap();
        let Some(Command::Quick(q)) = c.command else {
            panic!()
        };
        assert_eq!(q.runtime, "4s");
        assert_eq!(q.dir, PathBuf::from("."));
    }
}
