//! The study flags that only some studies take (`--network`, `--max-threads`,
//! `--allow-device-changes`): beside studies none of which takes one, the flag would change
//! nothing, so it is refused before anything runs rather than ignored. Plain data in, so the
//! registry (`study/mod.rs`) says which study takes what.

use crate::error::{Error, Result};

/// A flag, whether it was given, and the names of the studies that take it.
pub(super) type Rule<'a> = (&'static str, bool, &'a [&'static str]);

/// Refuse a flag given that none of the studies `chosen` takes, naming the studies that do.
pub(super) fn check(chosen: &[&str], rules: &[Rule<'_>]) -> Result<()> {
    for &(flag, given, takers) in rules {
        if given && !chosen.iter().any(|n| takers.contains(n)) {
            return Err(Error::invalid(format!(
                "{flag} applies to the {} study only; the {} study takes none: drop {flag}",
                takers.join(" or "),
                chosen.join(", ")
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flag_no_chosen_study_takes_is_refused() {
        let rules: [Rule<'_>; 1] = [("--network", true, &["clients", "delay"])];
        let e = check(&["latency"], &rules).unwrap_err().to_string();
        assert!(
            e.contains("applies to the clients or delay study only"),
            "{e}"
        );
        assert!(check(&["latency", "delay"], &rules).is_ok());
        assert!(check(&["latency"], &[("--network", false, &["clients"])]).is_ok());
    }
}
