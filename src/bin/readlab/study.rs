//! `readlab study`: run one of the report's experiments (or all), print its summary table; exit 1
//! when a point failed (I/O errors, verification mismatches: totals and first offsets printed) or
//! none could run, 130 when interrupted (the same command with --resume continues).

use crate::args::{JsonOut, count, duration, thread_count};
use crate::progress::StudyProgress;
use clap::{Args, ValueEnum};
use readlab::error::Error;
use readlab::study::{StudyName, StudyOptions};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct StudyArgs {
    /// The study to run (one of the values below), or all (the studies marked in all); the
    /// tune study's points are written by `readlab tune`.
    #[arg(value_parser = crate::completions::StudyNameParser)]
    pub name: String,
    /// File or block device to study (not needed by `delay`, which serves zeros; NAME:PATH names
    /// it), or for `clients` a server's export (nbd://HOST:PORT/EXPORT) to read instead of one
    /// readlab serve per point (under mpirun the clients are spread over the ranks).
    pub target: Option<PathBuf>,
    /// More targets, for the devices study (1, 2 … N of them read at once).
    pub more_targets: Vec<PathBuf>,
    /// Name a target in every output: TARGET=NAME (repeatable); NAME alone names the only target
    /// (fio's --name=JOB).
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
    /// The delay study: also measure these network delays (e.g. 100us,1ms), each made by netem on
    /// the veth pair (server to clients) with nothing injected by the server, as their own series
    /// beside the server's --delay ones (veth network: root, iproute2's ip and tc, sch_netem).
    #[arg(long, value_parser = duration, value_delimiter = ',')]
    pub netem: Vec<Duration>,
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
            netem: self.netem.clone(),
        };
        Ok((names, opts))
    }
}

pub fn run(a: &StudyArgs) -> anyhow::Result<ExitCode> {
    let (names, opts) = a.to_options()?;
    if let Some(fleet) = crate::fleet::launch()? {
        let json = a.out_json.json.is_some() || a.out_json.is_json();
        return crate::fleet::study(fleet, &a.target, names, opts, json, a.out_json.force);
    }
    let inputs: Vec<&std::path::Path> = opts
        .target
        .iter()
        .map(|t| t.as_path())
        .chain(opts.targets.iter().map(|t| t.path.as_path()))
        .collect();
    readlab::outpath::check_dir(
        &opts.out,
        &inputs,
        &[readlab::store::RESULTS, "summary.md"],
        a.out_json.force,
    )?;
    if a.resume {
        readlab::store::check_same_target(&opts.out, &inputs)?;
    }
    a.out_json.check(&inputs)?;
    if let (false, Some(path)) = (a.no_verify, &opts.target)
        && !readlab::study::is_server(path)
    {
        let target = readlab::source::Target::inspect(path)?;
        readlab::runner::check_prepared_throughout(&target, "--no-verify")?;
    }
    let progress = StudyProgress::new().with_monitor(a.monitor);
    let outcome = readlab::study::run(&names, &opts, &progress)?;
    progress.finish();
    let docs = readlab::store::load(&outcome.results)?;
    let report = readlab::verdict::report_of(&docs);
    let verdict = readlab::verdict::of_report(&report);
    a.out_json
        .emit(&serde_json::to_value(readlab::schema::StudyJson {
            schema: readlab::schema::STUDY_SCHEMA.into(),
            studies: names.iter().map(|n| n.name().to_string()).collect(),
            out: opts.out.clone(),
            results: outcome.results.clone(),
            summary_path: outcome.summary_path.clone(),
            measured: outcome.measured,
            skipped: outcome.skipped,
            interrupted: outcome.interrupted,
            verdict: readlab::verdict::render::typed(&verdict, &report.points),
            runs: docs.clone(),
        })?)?;
    if !a.out_json.is_json() {
        // The answer first.
        crate::progress::print_answer(&readlab::verdict::answer_text_for(&docs));
        outp!(
            "{}",
            crate::progress::where_it_is(&docs, &outcome.summary_path, &opts.out)
        );
    }
    errln!(
        "readlab: {} points measured, {} already done; results: {}; summary: {}",
        outcome.measured,
        outcome.skipped,
        outcome.results.display(),
        outcome.summary_path.display()
    );
    let failures = progress.failures();
    if failures.any() {
        for l in failures.lines() {
            errln!("readlab: {l}");
        }
        return Ok(ExitCode::from(1));
    }
    if outcome.measured + outcome.skipped == 0 && progress.points_not_run() > 0 {
        errln!(
            "readlab: no point of the study could run on this target ({} skipped, reasons above)",
            progress.points_not_run()
        );
        return Ok(ExitCode::from(1));
    }
    if outcome.interrupted {
        errln!("readlab: interrupted; run the same command with --resume to continue");
        return Ok(crate::progress::interrupted_exit());
    }
    Ok(ExitCode::SUCCESS)
}
