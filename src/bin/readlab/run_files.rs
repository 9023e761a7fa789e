//! The files `readlab run` writes beside its results, from the configurations about to run: the
//! fio job file that replays them (`--write-job`) and the log of the offsets read
//! (`--log-offsets`); and the check of every file the run writes, together, before anything runs.

use readlab::config::RunConfig;
use readlab::error::Error;
use std::path::Path;

/// Every file `readlab run` writes, each named by its flag (`--json`, `--write-job`, …): no two
/// the same file, none one of `inputs` (the profile, the job file, the targets), each replacing
/// only a file readlab wrote unless `force`. Checked before anything runs or is written.
pub fn check_outputs(
    outs: &[(&str, Option<&Path>)],
    inputs: &[&Path],
    force: bool,
) -> Result<(), Error> {
    let named: Vec<(&str, &Path)> = outs
        .iter()
        .filter_map(|(flag, p)| p.map(|p| (*flag, p)))
        .collect();
    readlab::outpath::check_distinct(&named)?;
    for (_, p) in &named {
        readlab::outpath::check_file(p, inputs, force)?;
    }
    Ok(())
}

/// `--write-job FILE`: the fio job file of the one configuration about to run, as text; written
/// by [`write_job`] only once the run has measured, so a run that fails leaves no job behind.
pub fn job_text(profile: Option<&Path>, path: &Path, cfgs: &[RunConfig]) -> anyhow::Result<String> {
    if path.as_os_str() == "-" {
        return Err(Error::InvalidArgument(
            "--write-job -: standard output carries the run's own results, so the job file is \
             written to a file only; name one (e.g. --write-job job.fio, or ./- for a file named -)"
                .into(),
        )
        .into());
    }
    let [cfg] = cfgs else {
        return Err(Error::InvalidArgument(format!(
            "--write-job writes one configuration and {} were asked for; give each flag one value",
            cfgs.len()
        ))
        .into());
    };
    let origin = match profile {
        Some(p) => format!("written by readlab run from the profile {}", p.display()),
        None => "written by readlab run".to_string(),
    };
    Ok(readlab::fiojob::write(cfg, &cfg.label(), &origin)?)
}

/// Write the job file [`job_text`] made (its path checked with the run's other outputs).
pub fn write_job(path: &Path, text: &str) -> anyhow::Result<()> {
    readlab::fsio::write_file(path, text)?;
    errln!(
        "readlab: wrote {} (replay: fio {0}, or readlab run --job {0})",
        path.display()
    );
    Ok(())
}

/// `--log-offsets FILE`: one configuration on one target, measured once (`alone`: no other
/// target, no repetition), logs its offsets (the path checked with the run's other outputs).
pub fn log_offsets(path: &Path, cfgs: &mut [RunConfig], alone: bool) -> anyhow::Result<()> {
    let [cfg] = cfgs else {
        return Err(Error::InvalidArgument(
            "--log-offsets logs one configuration; give each flag one value".into(),
        )
        .into());
    };
    if !alone {
        return Err(Error::InvalidArgument(
            "--log-offsets logs one run on one target; drop --repeat and the other targets".into(),
        )
        .into());
    }
    cfg.log_offsets = Some(path.to_path_buf());
    Ok(())
}
