//! The files `readlab run` writes beside its results, from the configurations about to run: the
//! fio job file that replays them (`--write-job`) and the log of the offsets read
//! (`--log-offsets`).

use readlab::config::RunConfig;
use readlab::error::Error;
use std::path::Path;

/// `--write-job FILE`: the fio job file of the one configuration about to run.
pub fn write_job(profile: Option<&Path>, path: &Path, cfgs: &[RunConfig]) -> anyhow::Result<()> {
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
    let text = readlab::fiojob::write(cfg, &cfg.label(), &origin)?;
    let profile = profile.into_iter();
    readlab::outpath::check_file(
        path,
        &profile.chain([cfg.target.as_path()]).collect::<Vec<_>>(),
    )?;
    readlab::fsio::write_file(path, &text)?;
    errln!(
        "readlab: wrote {} (replay: fio {0}, or readlab run --job {0})",
        path.display()
    );
    Ok(())
}

/// `--log-offsets FILE`: one configuration on one target, measured once (`alone`: no other
/// target, no repetition), logs its offsets.
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
    readlab::outpath::check_file(path, &[cfg.target.as_path()])?;
    cfg.log_offsets = Some(path.to_path_buf());
    Ok(())
}
