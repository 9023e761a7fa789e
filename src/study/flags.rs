//! The study flags that only some studies take (`--network`, `--max-threads`,
//! `--allow-device-changes`): beside studies none of which takes one, the flag would change
//! nothing, so it is refused before anything runs rather than ignored.

use super::{StudyName, StudyOptions};
use crate::error::{Error, Result};

/// Refuse a flag that none of the studies `names` takes, naming the studies that do.
pub(super) fn check(names: &[StudyName], opts: &StudyOptions) -> Result<()> {
    let networked = [
        super::clients::SPEC.name,
        super::delay::SPEC.name,
        super::latency_breakdown::SPEC.name,
        super::server_model::SPEC.name,
    ];
    let threads = [super::threads::SPEC.name, super::scheduler::SPEC.name];
    let device = [super::cache::SPEC.name];
    let rules: [(&str, bool, &[&str]); 3] = [
        ("--network", opts.network.is_some(), &networked),
        ("--max-threads", opts.max_threads.is_some(), &threads),
        ("--allow-device-changes", opts.allow_device_changes, &device),
    ];
    for (flag, given, takers) in rules {
        if given && !names.iter().any(|n| takers.contains(&n.name())) {
            let these = names
                .iter()
                .map(|n| n.name())
                .collect::<Vec<_>>()
                .join(", ");
            return Err(Error::invalid(format!(
                "{flag} applies to the {} study only; the {these} study takes none: drop {flag}",
                takers.join(" or ")
            )));
        }
    }
    Ok(())
}
