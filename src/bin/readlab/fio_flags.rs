//! fio's words on `readlab run`'s command line: fio's options that ask for what readlab always does
//! (accepted with a note), fio's switch values (`--direct=1`), fio's names for the access pattern,
//! and the one-line refusal of a fio option readlab does not have. The options fio and readlab
//! share with an engine are the engines' own (`engine_flags`).

use clap::Args;
use readlab::config::Rw;

/// fio options that mean what readlab always does (hidden; a note says so when given).
#[derive(Args, Debug)]
pub struct FioNoops {
    #[arg(long = "time_based", alias = "time-based", hide = true)]
    time_based: bool,
    #[arg(long = "group_reporting", alias = "group-reporting", hide = true)]
    group_reporting: bool,
    #[arg(long, hide = true)]
    thread: bool,
    #[arg(long = "norandommap", hide = true)]
    norandommap: bool,
    #[arg(long = "randrepeat", hide = true, num_args = 0..=1, require_equals = true, default_missing_value = "1")]
    randrepeat: Option<String>,
    #[arg(long = "lat_percentiles", alias = "lat-percentiles", hide = true, num_args = 0..=1, require_equals = true, default_missing_value = "1")]
    lat_percentiles: Option<String>,
    #[arg(long = "clat_percentiles", alias = "clat-percentiles", hide = true, num_args = 0..=1, require_equals = true, default_missing_value = "1")]
    clat_percentiles: Option<String>,
}

impl FioNoops {
    /// One note per fio option given that readlab accepted as meaning nothing more.
    pub fn notes(&self) -> Vec<String> {
        [
            ("time_based", self.time_based),
            ("group_reporting", self.group_reporting),
            ("thread", self.thread),
            ("norandommap", self.norandommap),
            ("randrepeat", self.randrepeat.is_some()),
            ("lat_percentiles", self.lat_percentiles.is_some()),
            ("clat_percentiles", self.clat_percentiles.is_some()),
        ]
        .into_iter()
        .filter(|(_, given)| *given)
        .filter_map(|(k, _)| match readlab::fiojob::foreign(k) {
            Some(readlab::fiojob::Foreign::NoOp(why)) => Some(format!("--{k}: {why}; ignored")),
            _ => None,
        })
        .collect()
    }
}

/// `--rw`: read or randread; writing patterns are refused as writes, not as typos.
pub fn rw_word(s: &str) -> Result<Rw, readlab::Error> {
    readlab::fiojob::rw(s)
}

/// `--random-distribution`: fio's words (`zipf:1.2`, `pareto:0.2`, `normal:5`, `zoned:…`).
pub fn distribution(s: &str) -> Result<readlab::distribution::RandomDistribution, readlab::Error> {
    s.parse()
}

/// fio's `bssplit` (`4k/60:64k/40`).
pub fn bssplit(s: &str) -> Result<readlab::bssplit::BsSplit, readlab::Error> {
    s.parse()
}

/// fio's switch value: 1/0, true/false (bare is clap's default_missing_value).
pub fn switch(s: &str) -> Result<bool, readlab::Error> {
    readlab::fiojob::switch_word(s)
}

/// `--verify` is readlab's own (no value, or 1/0); fio's `--verify=crc32c` is refused by name.
pub fn verify_switch(s: &str) -> Result<bool, String> {
    switch(s).map_err(|_| match readlab::fiojob::foreign("verify") {
        Some(readlab::fiojob::Foreign::Refused(what)) => format!("verify={s}: {what}"),
        _ => format!("'{s}' is not 0 or 1"),
    })
}

/// The one-line refusal of a fio option readlab does not have, when clap found one it does not
/// know (fio's ioscheduler → what to do instead); none for anything else.
pub fn fio_refusal(e: &clap::Error) -> Option<String> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if e.kind() != ErrorKind::UnknownArgument {
        return None;
    }
    let Some(ContextValue::String(arg)) = e.get(ContextKind::InvalidArg) else {
        return None;
    };
    let name = arg.trim_start_matches('-');
    let name = name.split('=').next().unwrap_or(name);
    use readlab::fiojob::{Foreign, Treatment};
    match readlab::fiojob::row(name)?.treatment {
        Treatment::Foreign(Foreign::Refused(what)) => {
            Some(format!("error: {arg} is fio's, not readlab's: {what}"))
        }
        Treatment::Foreign(Foreign::NoOp(why)) => Some(format!(
            "error: {arg}: {why}; readlab run takes it alone, without a value"
        )),
        Treatment::Read(flag) => Some(format!(
            "error: {arg} is fio's job-file option; readlab run's is {flag}"
        )),
    }
}

/// `--file_service_type`: fio's words (`roundrobin`, `random`, `sequential`).
pub fn file_service(s: &str) -> Result<readlab::fileset::FileService, readlab::Error> {
    s.parse()
}
