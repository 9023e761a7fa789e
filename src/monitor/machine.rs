//! The machine over one interval, dstat's `-pcm` columns and more: CPU usr/sys/iowait/idle/steal
//! and context switches from `/proc/stat`, runnable and blocked tasks, PSI stall shares from
//! `/proc/pressure/{io,cpu}`, page cache, dirty and free memory from `/proc/meminfo`, page
//! reclaim (pages scanned and reclaimed) from `/proc/vmstat` (the page cache filling and being
//! emptied again).

use serde::{Deserialize, Serialize};

/// Cumulative machine counters at one instant.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MachineCounters {
    /// user+nice, system+irq+softirq, idle, iowait, steal ticks over all CPUs.
    pub usr: u64,
    pub sys: u64,
    pub idle: u64,
    pub iowait: u64,
    pub steal: u64,
    pub ctxt: u64,
    pub forks: u64,
    /// Instant values: tasks runnable and blocked on I/O.
    pub running: u64,
    pub blocked: u64,
    /// PSI `total=` in µs (None without PSI).
    pub io_some_us: Option<u64>,
    pub io_full_us: Option<u64>,
    pub cpu_some_us: Option<u64>,
    pub mem_free_kib: u64,
    pub mem_available_kib: u64,
    pub cached_kib: u64,
    pub shmem_kib: u64,
    pub buffers_kib: u64,
    pub dirty_kib: u64,
    /// Pages reclaimed (kswapd + direct).
    pub pgsteal: u64,
    /// Pages scanned for reclaim (kswapd + direct).
    pub pgscan: u64,
}

/// The machine over one interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MachineSample {
    /// Shares of all CPUs' time, % (they add up to 100, like dstat's).
    pub usr_pct: f64,
    pub sys_pct: f64,
    pub iowait_pct: f64,
    pub idle_pct: f64,
    pub steal_pct: f64,
    /// Tasks runnable (on a CPU or waiting for one) and blocked on I/O, at the sample.
    pub running: u64,
    pub blocked: u64,
    pub ctxt_s: f64,
    pub forks_s: f64,
    /// Share of the interval in which some (or all) non-idle tasks were stalled on I/O, % (PSI).
    pub psi_io_some_pct: Option<f64>,
    pub psi_io_full_pct: Option<f64>,
    pub psi_cpu_some_pct: Option<f64>,
    /// Page cache (`Cached`, which includes tmpfs/shm) and its shared-memory part, KiB.
    pub page_cache_kib: u64,
    pub shmem_kib: u64,
    pub buffers_kib: u64,
    pub dirty_kib: u64,
    pub free_kib: u64,
    pub available_kib: u64,
    /// Pages reclaimed per second (kswapd and direct reclaim).
    pub reclaim_pages_s: f64,
    /// Pages scanned for reclaim per second (kswapd and direct).
    #[serde(default)]
    pub scan_pages_s: f64,
}

fn psi_total(text: &str, which: &str) -> Option<u64> {
    text.lines()
        .find(|l| l.starts_with(which))?
        .split_whitespace()
        .find_map(|w| w.strip_prefix("total="))?
        .parse()
        .ok()
}

/// Parse /proc/stat, /proc/meminfo, /proc/vmstat and the PSI files' texts.
pub fn parse(
    stat: &str,
    meminfo: &str,
    vmstat: &str,
    psi_io: Option<&str>,
    psi_cpu: Option<&str>,
) -> MachineCounters {
    let mut c = MachineCounters::default();
    for line in stat.lines() {
        let mut it = line.split_whitespace();
        let key = it.next().unwrap_or("");
        let v: Vec<u64> = it.filter_map(|x| x.parse().ok()).collect();
        let at = |i: usize| v.get(i).copied().unwrap_or(0);
        match key {
            "cpu" => {
                c.usr = at(0) + at(1);
                c.sys = at(2) + at(5) + at(6);
                c.idle = at(3);
                c.iowait = at(4);
                c.steal = at(7);
            }
            "ctxt" => c.ctxt = at(0),
            "processes" => c.forks = at(0),
            "procs_running" => c.running = at(0),
            "procs_blocked" => c.blocked = at(0),
            _ => {}
        }
    }
    for line in meminfo.lines() {
        let mut it = line.split_whitespace();
        let (Some(k), Some(v)) = (it.next(), it.next().and_then(|v| v.parse::<u64>().ok())) else {
            continue;
        };
        match k {
            "MemFree:" => c.mem_free_kib = v,
            "MemAvailable:" => c.mem_available_kib = v,
            "Cached:" => c.cached_kib = v,
            "Shmem:" => c.shmem_kib = v,
            "Buffers:" => c.buffers_kib = v,
            "Dirty:" => c.dirty_kib = v,
            _ => {}
        }
    }
    for line in vmstat.lines() {
        let mut it = line.split_whitespace();
        let (Some(k), Some(v)) = (it.next(), it.next().and_then(|v| v.parse::<u64>().ok())) else {
            continue;
        };
        match k {
            "pgsteal_kswapd" | "pgsteal_direct" => c.pgsteal += v,
            "pgscan_kswapd" | "pgscan_direct" => c.pgscan += v,
            _ => {}
        }
    }
    c.io_some_us = psi_io.and_then(|t| psi_total(t, "some"));
    c.io_full_us = psi_io.and_then(|t| psi_total(t, "full"));
    c.cpu_some_us = psi_cpu.and_then(|t| psi_total(t, "some"));
    c
}

/// Read the machine's counters now.
pub fn read() -> MachineCounters {
    let r = |p: &str| std::fs::read_to_string(p).ok();
    let (io, cpu) = (r("/proc/pressure/io"), r("/proc/pressure/cpu"));
    parse(
        &r("/proc/stat").unwrap_or_default(),
        &r("/proc/meminfo").unwrap_or_default(),
        &r("/proc/vmstat").unwrap_or_default(),
        io.as_deref(),
        cpu.as_deref(),
    )
}

impl MachineSample {
    /// Files' and block devices' cached pages, bytes: `Cached` plus `Buffers` (a block device
    /// read through the page cache counts as buffers, not as cached).
    pub fn file_cache_bytes(&self) -> u64 {
        (self.page_cache_kib + self.buffers_kib) * 1024
    }

    /// The machine between two snapshots `dt` seconds apart (instant values from the later).
    pub fn between(a: &MachineCounters, b: &MachineCounters, dt: f64) -> MachineSample {
        let dt = dt.max(1e-9);
        let d = |x: u64, y: u64| y.saturating_sub(x) as f64;
        let (usr, sys, idle, wait, steal) = (
            d(a.usr, b.usr),
            d(a.sys, b.sys),
            d(a.idle, b.idle),
            d(a.iowait, b.iowait),
            d(a.steal, b.steal),
        );
        let total = (usr + sys + idle + wait + steal).max(1.0);
        let psi = |x: Option<u64>, y: Option<u64>| match (x, y) {
            (Some(x), Some(y)) => Some((100.0 * d(x, y) / 1e6 / dt).min(100.0)),
            _ => None,
        };
        MachineSample {
            usr_pct: 100.0 * usr / total,
            sys_pct: 100.0 * sys / total,
            iowait_pct: 100.0 * wait / total,
            idle_pct: 100.0 * idle / total,
            steal_pct: 100.0 * steal / total,
            running: b.running,
            blocked: b.blocked,
            ctxt_s: d(a.ctxt, b.ctxt) / dt,
            forks_s: d(a.forks, b.forks) / dt,
            psi_io_some_pct: psi(a.io_some_us, b.io_some_us),
            psi_io_full_pct: psi(a.io_full_us, b.io_full_us),
            psi_cpu_some_pct: psi(a.cpu_some_us, b.cpu_some_us),
            page_cache_kib: b.cached_kib,
            shmem_kib: b.shmem_kib,
            buffers_kib: b.buffers_kib,
            dirty_kib: b.dirty_kib,
            free_kib: b.mem_free_kib,
            available_kib: b.mem_available_kib,
            reclaim_pages_s: d(a.pgsteal, b.pgsteal) / dt,
            scan_pages_s: d(a.pgscan, b.pgscan) / dt,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_and_shares() {
        let stat0 = "cpu  100 0 50 800 40 0 10 0 0 0\nctxt 1000\nprocesses 10\nprocs_running 1\n";
        let stat1 = "cpu  200 0 120 1400 60 0 10 10 0 0\nctxt 3000\nprocesses 14\nprocs_running 3\nprocs_blocked 2\n";
        let mem = "MemFree: 100 kB\nCached: 2048 kB\nShmem: 48 kB\nDirty: 8 kB\n";
        let vm0 = "pgsteal_kswapd 5\npgsteal_direct 5\npgsteal_anon 100\npgscan_kswapd 10\n";
        let vm1 = "pgsteal_kswapd 15\npgsteal_direct 25\npgsteal_anon 900\npgscan_kswapd 50\n";
        let psi0 =
            "some avg10=0 avg60=0 avg300=0 total=1000\nfull avg10=0 avg60=0 avg300=0 total=0\n";
        let psi1 = "some avg10=0 avg60=0 avg300=0 total=501000\nfull avg10=0 avg60=0 avg300=0 total=250000\n";
        let a = parse(stat0, mem, vm0, Some(psi0), None);
        let b = parse(stat1, mem, vm1, Some(psi1), None);
        let s = MachineSample::between(&a, &b, 2.0);
        // 100 usr + 70 sys + 600 idle + 20 wait + 10 steal = 800 ticks
        assert_eq!(s.usr_pct, 12.5);
        assert_eq!(s.sys_pct, 8.75);
        assert_eq!(s.idle_pct, 75.0);
        assert_eq!(s.iowait_pct, 2.5);
        assert_eq!(s.steal_pct, 1.25);
        assert_eq!((s.running, s.blocked), (3, 2));
        assert_eq!(s.ctxt_s, 1000.0);
        assert_eq!(s.forks_s, 2.0);
        assert_eq!(s.psi_io_some_pct, Some(25.0));
        assert_eq!(s.psi_io_full_pct, Some(12.5));
        assert_eq!(s.psi_cpu_some_pct, None);
        assert_eq!((s.page_cache_kib, s.shmem_kib, s.dirty_kib), (2048, 48, 8));
        assert_eq!(s.reclaim_pages_s, 15.0);
        assert_eq!(s.scan_pages_s, 20.0);
    }

    #[test]
    fn this_machine_reads() {
        let c = read();
        assert!(c.usr + c.sys + c.idle > 0, "{c:?}");
        assert!(c.mem_free_kib > 0, "{c:?}");
    }
}
