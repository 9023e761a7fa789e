//! Block devices as the kernel counts them: `/proc/diskstats` (completed reads, merges, sectors,
//! time busy and time-weighted queue) and `/sys/class/block/NAME/inflight`, turned into dstat's
//! and iostat's per-second figures. Also which device a name or path means, so the monitor can
//! refuse an unknown one before it starts.

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// One line of /proc/diskstats: the cumulative counters of one device.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DiskCounters {
    pub reads: u64,
    pub reads_merged: u64,
    pub sectors_read: u64,
    pub read_ms: u64,
    pub writes: u64,
    pub writes_merged: u64,
    pub sectors_written: u64,
    pub write_ms: u64,
    /// Milliseconds with at least one request in flight.
    pub io_ms: u64,
    /// Milliseconds × requests in flight (iostat's aqu-sz numerator).
    pub weighted_ms: u64,
}

/// Every device of /proc/diskstats by name.
pub fn parse_diskstats(text: &str) -> HashMap<String, DiskCounters> {
    let mut out = HashMap::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 14 {
            continue;
        }
        let n = |i: usize| f[i].parse::<u64>().unwrap_or(0);
        out.insert(
            f[2].to_string(),
            DiskCounters {
                reads: n(3),
                reads_merged: n(4),
                sectors_read: n(5),
                read_ms: n(6),
                writes: n(7),
                writes_merged: n(8),
                sectors_written: n(9),
                write_ms: n(10),
                io_ms: n(12),
                weighted_ms: n(13),
            },
        );
    }
    out
}

/// One device over one interval, in the units iostat and dstat print.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DeviceSample {
    pub name: String,
    /// Reads completed in the interval (after merging: one per request the device saw).
    pub reads: u64,
    pub read_iops: f64,
    /// 10^6 bytes per second.
    pub read_mb_s: f64,
    /// Mean size of a completed read request, KiB (readahead and merges make it larger than the
    /// reader's block size).
    pub read_kib_per_io: f64,
    /// Reads merged into another request per second (adjacent buffered reads, readahead).
    pub read_merges_s: f64,
    /// Mean time a read spent from queueing to completion, ms (iostat's r_await).
    pub read_await_ms: f64,
    pub write_iops: f64,
    pub write_mb_s: f64,
    /// Requests in flight (reads + writes) from `inflight`, averaged over the thread samples.
    pub inflight: f64,
    /// Time-weighted mean queue length (iostat's aqu-sz).
    pub queue: f64,
    /// Share of the interval with at least one request in flight, %.
    pub util_pct: f64,
}

impl DeviceSample {
    /// The figures between two counter snapshots `dt` seconds apart.
    pub fn between(
        name: &str,
        a: &DiskCounters,
        b: &DiskCounters,
        dt: f64,
        inflight: f64,
    ) -> DeviceSample {
        let dt = dt.max(1e-9);
        let reads = b.reads.saturating_sub(a.reads);
        let rbytes = b.sectors_read.saturating_sub(a.sectors_read) * 512;
        let wbytes = b.sectors_written.saturating_sub(a.sectors_written) * 512;
        let ms = dt * 1e3;
        DeviceSample {
            name: name.to_string(),
            reads,
            read_iops: reads as f64 / dt,
            read_mb_s: rbytes as f64 / dt / 1e6,
            read_kib_per_io: if reads > 0 {
                rbytes as f64 / reads as f64 / 1024.0
            } else {
                0.0
            },
            read_merges_s: b.reads_merged.saturating_sub(a.reads_merged) as f64 / dt,
            read_await_ms: if reads > 0 {
                b.read_ms.saturating_sub(a.read_ms) as f64 / reads as f64
            } else {
                0.0
            },
            write_iops: b.writes.saturating_sub(a.writes) as f64 / dt,
            write_mb_s: wbytes as f64 / dt / 1e6,
            inflight,
            queue: b.weighted_ms.saturating_sub(a.weighted_ms) as f64 / ms,
            util_pct: (100.0 * b.io_ms.saturating_sub(a.io_ms) as f64 / ms).min(100.0),
        }
    }
}

/// A device the monitor watches, with its `inflight` file kept open (re-read in place).
pub struct Watched {
    pub name: String,
    inflight: Option<File>,
    /// Sum and count of the in-flight samples of the current interval.
    acc: (u64, u64),
}

impl Watched {
    pub fn new(name: &str) -> Watched {
        Watched {
            name: name.to_string(),
            inflight: File::open(sys_dir(name).join("inflight")).ok(),
            acc: (0, 0),
        }
    }

    /// Add one in-flight sample (reads + writes) to the current interval.
    pub fn sample_inflight(&mut self, buf: &mut [u8]) {
        let Some(f) = &self.inflight else { return };
        let Ok(n) = f.read_at(buf, 0) else { return };
        let v: u64 = std::str::from_utf8(&buf[..n])
            .unwrap_or("")
            .split_whitespace()
            .filter_map(|x| x.parse::<u64>().ok())
            .sum();
        self.acc.0 += v;
        self.acc.1 += 1;
    }

    /// The interval's mean in-flight count; starts the next interval.
    pub fn take_inflight(&mut self) -> f64 {
        let (s, n) = std::mem::take(&mut self.acc);
        if n == 0 { 0.0 } else { s as f64 / n as f64 }
    }
}

/// Read /proc/diskstats (one read of the whole file).
pub fn read_diskstats() -> HashMap<String, DiskCounters> {
    parse_diskstats(&std::fs::read_to_string("/proc/diskstats").unwrap_or_default())
}

fn sys_dir(name: &str) -> PathBuf {
    Path::new("/sys/class/block").join(name)
}

/// Devices the kernel knows (whole disks and partitions), sorted.
pub fn known() -> Vec<String> {
    let mut v: Vec<String> = read_diskstats().into_keys().collect();
    v.sort();
    v
}

/// Whole disks with a size (attached loop devices, disks; not empty loop slots), for a monitor
/// told no device.
pub fn default_set() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir("/sys/block")
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| {
                    crate::source::device::sysfs_u64(&sys_dir(n).join("size")).unwrap_or(0) > 0
                })
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// The device a user's word means: a name from /proc/diskstats (`loop0`), a device node
/// (`/dev/loop0`), or a file or directory (the device of its filesystem). Bad input names what
/// is known.
pub fn resolve(word: &str) -> Result<String> {
    let stats = read_diskstats();
    if stats.contains_key(word) {
        return Ok(word.to_string());
    }
    let p = Path::new(word);
    if p.exists() {
        return match crate::source::device::device_of(p) {
            Some(d) if stats.contains_key(&d.name) => Ok(d.name),
            _ => Err(Error::invalid(format!(
                "{word}: no block device behind it (a memory filesystem such as tmpfs?); name a \
                 device the kernel counts, e.g. {}",
                known().join(" ")
            ))),
        };
    }
    Err(Error::invalid(format!(
        "unknown device '{word}'; devices on this machine: {}",
        known().join(" ")
    )))
}

/// The device behind a run's target, if it has one the kernel counts.
pub fn of_target(path: &Path) -> Option<String> {
    let d = crate::source::device::device_of(path)?;
    read_diskstats().contains_key(&d.name).then_some(d.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO: &str = "   7       0 loop0 100 5 800 40 0 0 0 0 0 50 60 0 0 0 0 0 0\n \
                       254       0 vda 10275 3936 2168338 12972 2500 19382 3135048 9155 0 6148 22446 3678 6 112160 313 121 5\n";

    #[test]
    fn diskstats_lines_parse_by_name() {
        let m = parse_diskstats(TWO);
        assert_eq!(m.len(), 2);
        let l = m["loop0"];
        assert_eq!((l.reads, l.reads_merged, l.sectors_read), (100, 5, 800));
        assert_eq!((l.io_ms, l.weighted_ms), (50, 60));
        assert_eq!(m["vda"].writes_merged, 19382);
    }

    #[test]
    fn figures_between_two_snapshots() {
        let a = DiskCounters::default();
        let b = DiskCounters {
            reads: 1000,
            reads_merged: 10,
            sectors_read: 8000,
            read_ms: 500,
            io_ms: 250,
            weighted_ms: 2000,
            ..a
        };
        let s = DeviceSample::between("loop0", &a, &b, 0.5, 3.0);
        assert_eq!(s.read_iops, 2000.0);
        assert_eq!(s.read_kib_per_io, 4.0);
        assert!((s.read_mb_s - 8.192).abs() < 1e-9);
        assert_eq!(s.read_merges_s, 20.0);
        assert_eq!(s.read_await_ms, 0.5);
        assert_eq!(s.queue, 4.0);
        assert_eq!(s.util_pct, 50.0);
        assert_eq!(s.inflight, 3.0);
    }

    #[test]
    fn an_unknown_device_names_the_known_ones() {
        let e = resolve("no-such-disk-xyz").unwrap_err().to_string();
        assert!(e.contains("unknown device 'no-such-disk-xyz'"), "{e}");
    }
}
