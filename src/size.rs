//! Human sizes and durations ("4k", "1m", "5s") parsed with fio's binary meaning; `crate::units`
//! prints them back.

use crate::error::{Error, Result};
use std::time::Duration;

/// Parse a size like `4k`, `1m`, `256M`, `1g`, `4KiB` or `512`; k, m, g, t are powers of 1024 as in fio.
pub fn parse_size(s: &str) -> Result<u64> {
    let t = s.trim();
    if t.starts_with('-') {
        return Err(Error::invalid(format!(
            "size '{s}' is negative; give a positive size like 4k or 1g"
        )));
    }
    let cfg = parse_size::Config::new().with_binary();
    cfg.parse_size(t)
        .map_err(|_| Error::invalid(format!("cannot parse size '{s}'; use a number with an optional k, m, g or t suffix (powers of 1024), e.g. 4k or 1g")))
}

/// The longest duration readlab accepts anywhere (runtime, ramp, budget, …): a year. Anything
/// longer is a typo, and keeping every duration this short keeps every sum and product of them
/// (deadlines, budgets × shares) far from overflow.
pub const MAX_DURATION: Duration = Duration::from_secs(365 * 24 * 3600);

/// Parse a duration like `5s`, `500ms`, `2m`; a bare number means seconds, as in fio. At most
/// [`MAX_DURATION`].
pub fn parse_duration(s: &str) -> Result<Duration> {
    let t = s.trim();
    if t.starts_with('-') {
        return Err(Error::invalid(format!(
            "duration '{s}' is negative; give a positive duration like 5s"
        )));
    }
    let too_long = || {
        Error::invalid(format!(
            "duration '{s}' is longer than readlab allows (a year); give e.g. 5s, 2m or 1h"
        ))
    };
    if let Ok(secs) = t.parse::<f64>()
        && secs.is_finite()
        && secs >= 0.0
    {
        if secs > MAX_DURATION.as_secs_f64() {
            return Err(too_long());
        }
        return Ok(Duration::from_secs_f64(secs));
    }
    match humantime::parse_duration(t) {
        Ok(d) if d > MAX_DURATION => Err(too_long()),
        Ok(d) => Ok(d),
        // humantime says "number is too large" for what overflows its own arithmetic.
        Err(humantime::DurationError::NumberOverflow) => Err(too_long()),
        Err(_) => Err(Error::invalid(format!(
            "cannot parse duration '{s}'; use e.g. 5s, 500ms or 2m"
        ))),
    }
}

/// The block sizes readlab reads with (a run's `--bs`, a job file's `bs=` and `bssplit=`):
/// 512 B … 64 MiB.
pub const BLOCK_SIZES: std::ops::RangeInclusive<u64> = 512..=64 << 20;

/// A block size as the report names it (`4K`, `256K`, `1M`): [`crate::units::format_bytes`] in
/// table style. Kept for callers not yet moved to `crate::units` (study summaries, charts).
pub fn format_size(bytes: u64) -> String {
    crate::units::format_bytes(bytes as f64, crate::units::Style::Table)
}

/// A latency for tables and the terminal (`12.3us`): [`crate::units::format_ns`] in table style.
/// Kept for callers not yet moved to `crate::units` (study summaries).
pub fn format_ns(ns: f64) -> String {
    crate::units::format_ns(ns, crate::units::Style::Table)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_binary() {
        assert_eq!(parse_size("4k").unwrap(), 4096);
        assert_eq!(parse_size("1m").unwrap(), 1 << 20);
        assert_eq!(parse_size("256M").unwrap(), 256 << 20);
        assert_eq!(parse_size("1g").unwrap(), 1 << 30);
        assert_eq!(parse_size("4KiB").unwrap(), 4096);
        assert_eq!(parse_size("512").unwrap(), 512);
        assert!(parse_size("-4k").is_err());
        assert!(parse_size("four").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("5s").unwrap(), Duration::from_secs(5));
        assert_eq!(parse_duration("5").unwrap(), Duration::from_secs(5));
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert!(parse_duration("-1s").is_err());
        assert!(parse_duration("soon").is_err());
        // Huge durations are refused, never overflow.
        for huge in [
            "300000000000y",
            "1e300",
            "366days",
            "99999999999999999999999s",
        ] {
            let e = parse_duration(huge).unwrap_err().to_string();
            assert!(e.contains("longer than readlab allows"), "{huge}: {e}");
        }
        assert_eq!(parse_duration("365days").unwrap(), MAX_DURATION);
    }

    #[test]
    fn formatting() {
        assert_eq!(format_size(4096), "4K");
        assert_eq!(format_size(1 << 20), "1M");
        assert_eq!(format_size(512), "512");
        assert_eq!(format_ns(1500.0), "1.5us");
    }
}
