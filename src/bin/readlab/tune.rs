//! `readlab tune`: search for the best configuration, print the table and recommendation per
//! block size, save each pick as a replayable profile; exit 1 when nothing met the constraints
//! or a run failed (I/O errors, verification mismatches: then nothing is recommended).

use crate::args::TuneArgs;
use crate::progress::TuneProgress;
use readlab::tune::{self, Profile};
use std::process::ExitCode;

pub fn run(a: &TuneArgs) -> anyhow::Result<ExitCode> {
    let opts = a.to_options()?;
    readlab::outpath::check_dir(&opts.out, &[&a.target], &[readlab::store::RESULTS])?;
    a.out_json.check(&[&a.target])?;
    let report = tune::tune(&opts, &TuneProgress::new())?;
    if report.failures.any() {
        // A device that returned errors or wrong data gets no recommendation.
        for l in report.failures.lines() {
            eprintln!("readlab: {l}");
        }
        eprintln!(
            "readlab: no configuration is recommended for a target that fails reads or returns \
             wrong data; every run is in {}",
            report.results.display()
        );
        return Ok(ExitCode::from(1));
    }
    let text = !a.out_json.is_json();
    let mut exit = ExitCode::SUCCESS;
    let mut profiles = Vec::new();
    for rec in &report.recommendations {
        if text {
            print!("{}", tune::recommendation_text(rec, &opts));
        }
        match Profile::of(rec) {
            Some(profile) => {
                let path = profile.save(&opts.out)?;
                if text {
                    println!(
                        "  profile: {} (replay: readlab run --profile {})",
                        path.display(),
                        path.display()
                    );
                }
                profiles.push(path);
            }
            None => exit = ExitCode::from(1),
        }
    }
    // The selected parameters beside the results, for `readlab report`.
    let mut doc = serde_json::to_value(&report)?;
    if let Some(m) = doc.as_object_mut() {
        m.insert("schema".into(), "readlab.tune/1".into());
        m.insert("profiles".into(), serde_json::to_value(&profiles)?);
    }
    let mut saved = serde_json::to_string_pretty(&doc)?;
    saved.push('\n');
    readlab::fsio::write_file(&opts.out.join(tune::REPORT_FILE), &saved)?;
    a.out_json.emit(&doc)?;
    eprintln!(
        "readlab: tuned in {:.0} s of a {:.0} s budget; every point is in {}",
        report.seconds,
        report.budget_s,
        report.results.display()
    );
    Ok(exit)
}
