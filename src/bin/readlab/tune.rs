//! `readlab tune`: search for the best configuration, print the table and recommendation per
//! block size, save each pick as a replayable profile; exit 1 when nothing met the constraints
//! or a run failed (I/O errors, verification mismatches: then nothing is recommended); 130 (143
//! for SIGTERM) when interrupted, recommending nothing from the partial search.

use crate::args::{JsonOut, count, duration, size};
use crate::progress::TuneProgress;
use clap::{Args, ValueEnum};
use readlab::error::Error;
use readlab::tune::{self, Profile};
use readlab::tune::{Goal, TuneOptions};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

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
    /// Engines to search, comma-separated (fio's names too: io_uring, sync).
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
            .map(readlab::fiojob::engine)
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

pub fn run(a: &TuneArgs) -> anyhow::Result<ExitCode> {
    let opts = a.to_options()?;
    readlab::outpath::check_dir(
        &opts.out,
        &[&a.target],
        &[
            readlab::store::RESULTS,
            tune::REPORT_FILE,
            "profile-*",
            "job-*",
        ],
        a.out_json.force,
    )?;
    readlab::store::check_same_target(&opts.out, &[&a.target])?;
    a.out_json.check(&[&a.target])?;
    let progress = TuneProgress::new(opts.budget);
    let report = tune::tune(&opts, &progress)?;
    if progress.interrupted() {
        // A partial search recommends nothing and writes no profile: its pick would only be the
        // best of what it had reached.
        errln!(
            "readlab: tune interrupted after {:.0} s of a {:.0} s budget: the search is partial, so \
             nothing is recommended and no profile written; the points measured are in {}",
            report.seconds,
            report.budget_s,
            report.results.display()
        );
        return Ok(crate::progress::interrupted_exit());
    }
    if report.failures.any() {
        // A device that returned errors or wrong data gets no recommendation.
        for l in report.failures.lines() {
            errln!("readlab: {l}");
        }
        errln!(
            "readlab: no configuration is recommended for a target that fails reads or returns \
             wrong data; every run is in {}",
            report.results.display()
        );
        return Ok(ExitCode::from(1));
    }
    let text = !a.out_json.is_json();
    if text {
        // Said once, above every recommendation it puts in doubt.
        for b in &report.warnings {
            let runs = if b.points == 1 { "run" } else { "runs" };
            let t = crate::out();
            for l in t
                .fit(&format!("warning: {} ({} {runs})", b.text, b.points))
                .lines()
            {
                outln!("{}", t.warning(l));
            }
        }
    }
    let mut exit = ExitCode::SUCCESS;
    let mut profiles = Vec::new();
    if text {
        // The answer first, from the finalists' medians the picks were chosen on.
        let docs = readlab::store::load(&report.results)?;
        let answers = readlab::verdict::answer::for_tune(&report, &docs);
        crate::progress::print_answer(&readlab::verdict::answer::text(&answers));
    }
    for rec in &report.recommendations {
        if text {
            let term = crate::out();
            outp!(
                "{}",
                term.fit(&tune::recommendation_text(rec, &opts, &term))
            );
        }
        match save_profile(rec, &opts, text)? {
            Some(path) => profiles.push(path),
            None => exit = ExitCode::from(1),
        }
    }
    // The selected parameters beside the results, for `readlab report`.
    let doc = serde_json::to_value(readlab::schema::TuneJson {
        schema: readlab::schema::TUNE_SCHEMA.into(),
        report: report.clone(),
        profiles: profiles.clone(),
    })?;
    let mut saved = serde_json::to_string_pretty(&doc)?;
    saved.push('\n');
    readlab::fsio::write_file(&opts.out.join(tune::REPORT_FILE), &saved)?;
    a.out_json.emit(&doc)?;
    errln!(
        "readlab: tuned in {:.0} s of a {:.0} s budget; every point is in {}",
        report.seconds,
        report.budget_s,
        report.results.display()
    );
    Ok(exit)
}

/// Save the profile of a recommendation's pick, with its fio job file beside it when fio has words
/// for it, and say where (with the text); none when nothing met the constraints.
fn save_profile(
    rec: &tune::Recommendation,
    opts: &TuneOptions,
    text: bool,
) -> anyhow::Result<Option<PathBuf>> {
    let Some(profile) = Profile::of(rec) else {
        return Ok(None);
    };
    let path = profile.save(&opts.out)?;
    let job = readlab::fiojob::beside(&path);
    let written = readlab::fiojob::write(
        &profile.config,
        &profile.config.label(),
        &format!("written by readlab tune with {}", path.display()),
    )
    .map(|t| readlab::fsio::write_file(&job, &t));
    if text {
        outln!(
            "{}",
            crate::out().fit(&format!(
                "  profile: {} (replay: readlab run --profile {})",
                path.display(),
                path.display()
            ))
        );
        let line = match &written {
            Ok(_) => format!(
                "  fio job: {} (replay: fio {} or readlab run --job {})",
                job.display(),
                job.display(),
                job.display()
            ),
            Err(why) => format!("  fio job: none ({why})"),
        };
        outln!("{}", crate::out().fit(&line));
    }
    if let Ok(Err(e)) = written {
        return Err(e.into());
    }
    Ok(Some(path))
}
