//! What a run will hold in memory, estimated before it starts and held against the memory the
//! machine has free (`MemAvailable`), so a configuration too large for the machine is refused up
//! front (exit 2) instead of being killed by the OOM killer half-way.

use crate::error::{Error, Result};

/// Fixed memory of each worker thread: its latency histograms (the run's, the per-second ones,
/// service and hand-off), the stack it touches, its counters. Measured: ~0.7 MiB.
pub const PER_THREAD: u64 = 1 << 20;
/// Per request slot beyond its buffer: ring entries (an io_uring SQE and two CQEs), an iocb and
/// its event, the runner's bookkeeping.
pub const PER_SLOT: u64 = 256;
/// Buffers are page-aligned: a slot takes at least a page.
const PAGE: u64 = 4096;
/// The share of `MemAvailable` a run may plan to use; the rest is left to the page cache, the
/// kernel and everything else.
pub const SHARE_OF_AVAILABLE: f64 = 0.8;

/// Estimated bytes a run holds: per worker thread, `slots` request slots of `slot_bytes` each
/// (page-aligned) and the thread's fixed state. Saturating: absurd inputs give `u64::MAX`.
pub fn estimate(threads: usize, slots: u64, slot_bytes: u64) -> u64 {
    let slot = slot_bytes
        .max(1)
        .div_ceil(PAGE)
        .saturating_mul(PAGE)
        .saturating_add(PER_SLOT);
    slots
        .saturating_mul(slot)
        .saturating_add(PER_THREAD)
        .saturating_mul(threads as u64)
}

/// `MemAvailable` from /proc/meminfo, in bytes (None when it cannot be read).
pub fn available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    parse_available(&text)
}

fn parse_available(meminfo: &str) -> Option<u64> {
    meminfo
        .lines()
        .find(|l| l.starts_with("MemAvailable:"))?
        .split_whitespace()
        .nth(1)?
        .parse::<u64>()
        .ok()
        .map(|kb| kb.saturating_mul(1024))
}

/// Refuse a run whose estimate exceeds [`SHARE_OF_AVAILABLE`] of `available` bytes (no check
/// when the machine does not say what it has free).
pub fn check(need: u64, available: Option<u64>) -> Result<()> {
    let Some(avail) = available else {
        return Ok(());
    };
    let allowed = (avail as f64 * SHARE_OF_AVAILABLE) as u64;
    if need > allowed {
        return Err(Error::invalid(format!(
            "this run needs about {} of memory (buffers, rings and per-thread state), more than \
             {:.0} % of the {} this machine has available; use fewer --numjobs, a smaller \
             --iodepth or --bs",
            mib(need),
            SHARE_OF_AVAILABLE * 100.0,
            mib(avail)
        )));
    }
    Ok(())
}

fn mib(b: u64) -> String {
    if b >= 1 << 30 {
        format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64)
    } else {
        format!("{} MiB", b >> 20)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_issue_case_is_counted_in_full() {
        // --engine uring --iodepth 4096 --numjobs 4096 --bs 512: 16 M slots of a page each.
        let need = estimate(4096, 4096, 512);
        assert!(need > 64 << 30, "{need}");
        let e = check(need, Some(24 << 30)).unwrap_err().to_string();
        assert!(
            e.contains("GiB of memory") && e.contains("--numjobs"),
            "{e}"
        );
        // A small run passes, and so does anything when MemAvailable is unknown.
        assert!(check(estimate(1, 1, 4096), Some(1 << 30)).is_ok());
        assert!(check(u64::MAX, None).is_ok());
        assert_eq!(estimate(usize::MAX, u64::MAX, u64::MAX), u64::MAX);
    }

    #[test]
    fn mem_available_parses() {
        let m = "MemTotal:       24000000 kB\nMemFree:  100 kB\nMemAvailable:   2000 kB\n";
        assert_eq!(parse_available(m), Some(2000 * 1024));
        assert_eq!(parse_available("MemTotal: 1 kB\n"), None);
        assert!(available().is_some_and(|a| a > 0));
    }
}
