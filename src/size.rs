//! Human sizes and durations ("4k", "1m", "5s") parsed with fio's binary meaning and printed back.

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

/// Parse a duration like `5s`, `500ms`, `2m`; a bare number means seconds, as in fio.
pub fn parse_duration(s: &str) -> Result<Duration> {
    let t = s.trim();
    if t.starts_with('-') {
        return Err(Error::invalid(format!(
            "duration '{s}' is negative; give a positive duration like 5s"
        )));
    }
    if let Ok(secs) = t.parse::<f64>()
        && secs.is_finite()
        && secs >= 0.0
    {
        return Ok(Duration::from_secs_f64(secs));
    }
    humantime::parse_duration(t).map_err(|_| {
        Error::invalid(format!(
            "cannot parse duration '{s}'; use e.g. 5s, 500ms or 2m"
        ))
    })
}

/// Format a byte count with binary units, the way the report labels block sizes (4K, 256K, 1M).
pub fn format_size(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["", "K", "M", "G", "T"];
    let mut v = bytes;
    let mut i = 0;
    while v >= 1024 && v.is_multiple_of(1024) && i < UNITS.len() - 1 {
        v /= 1024;
        i += 1;
    }
    if i == 0 && bytes >= 1024 {
        return format!("{:.1}K", bytes as f64 / 1024.0);
    }
    format!("{v}{}", UNITS[i])
}

/// Format nanoseconds as a short latency with a unit (ns, us, ms, s).
pub fn format_ns(ns: f64) -> String {
    if ns < 1_000.0 {
        format!("{ns:.0}ns")
    } else if ns < 1_000_000.0 {
        format!("{:.1}us", ns / 1e3)
    } else if ns < 1_000_000_000.0 {
        format!("{:.2}ms", ns / 1e6)
    } else {
        format!("{:.2}s", ns / 1e9)
    }
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
    }

    #[test]
    fn formatting() {
        assert_eq!(format_size(4096), "4K");
        assert_eq!(format_size(1 << 20), "1M");
        assert_eq!(format_size(512), "512");
        assert_eq!(format_ns(1500.0), "1.5us");
    }
}
