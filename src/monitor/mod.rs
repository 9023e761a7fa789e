//! The live monitor: dstat and psn in one, tied to readlab's own numbers. Once per interval it
//! reads the devices' counters (`devices`), the machine's (`machine`) and sums up the thread
//! samples it took many times a second of one process (`threads`); `sampler` is the loop on its
//! own thread, `line` the compact terminal line. `readlab monitor` runs it on its own; a run with
//! `--monitor` runs it beside its workers on the run's own clock (samples at the ends of the
//! run's seconds), so device IOPS and the run's per-second IOPS describe the same seconds.

pub mod devices;
pub mod line;
pub mod machine;
mod sampler;
mod syscalls;
pub mod threads;

pub use devices::DeviceSample;
pub use machine::MachineSample;
pub use sampler::Monitor;
pub use threads::{Kind, State, ThreadsSample};

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The sampler thread's name; readlab's CPU figures leave this thread out (its cost is reported
/// by the monitor itself).
pub const THREAD_NAME: &str = crate::cpu::MONITOR_THREAD;

/// Thread samples per second unless asked otherwise (psn's rate is 10 to 20).
pub const DEFAULT_THREAD_HZ: u32 = 10;

/// The most thread samples per second: each reads every thread's /proc files.
pub const MAX_THREAD_HZ: u32 = 1000;

/// What to watch and how often.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MonitorOptions {
    /// Device names as /proc/diskstats spells them (see [`devices::resolve`]).
    pub devices: Vec<String>,
    /// The process whose threads are sampled (a run: its own).
    pub pid: Option<u32>,
    /// One sample (one line) per interval.
    #[serde(with = "crate::secs")]
    #[schemars(with = "f64")]
    pub interval: Duration,
    /// Thread samples per second.
    pub thread_hz: u32,
}

impl MonitorOptions {
    /// Watch these devices and this process, one sample a second, threads at the default rate.
    pub fn new(devices: Vec<String>, pid: Option<u32>) -> MonitorOptions {
        MonitorOptions {
            devices,
            pid,
            interval: Duration::from_secs(1),
            thread_hz: DEFAULT_THREAD_HZ,
        }
    }
}

/// Everything seen over one interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Sample {
    /// End of the interval in seconds since the monitor's epoch (a run's: the end of its ramp,
    /// so sample `t_s = k + 1` covers the run's timeline second `k`).
    pub t_s: f64,
    /// Real length of the interval (rates are per real second).
    pub interval_s: f64,
    pub devices: Vec<DeviceSample>,
    pub machine: MachineSample,
    /// The process's threads (and active kernel threads elsewhere).
    pub threads: ThreadsSample,
    /// The process was gone at this sample (the last one).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub process_ended: bool,
    /// CPU of the sampler thread itself over the interval, % of one core.
    pub sampler_cpu_pct: f64,
}

impl Sample {
    /// The sample of device `name`, if watched.
    pub fn device(&self, name: &str) -> Option<&DeviceSample> {
        self.devices.iter().find(|d| d.name == name)
    }

    /// Threads of `kind`, if any were seen.
    pub fn kind(&self, kind: Kind) -> Option<&threads::KindCount> {
        self.threads.kinds.iter().find(|k| k.kind == Some(kind))
    }
}

/// A monitor's whole output: what it watched and every sample, as stored in `--json` and in a
/// run's document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MonitorRecord {
    pub options: MonitorOptions,
    pub samples: Vec<Sample>,
    /// The sampler thread's own CPU over the whole monitor, % of one core.
    pub sampler_cpu_pct: f64,
    /// Anything the reader should know (a target without a block device, a process that ended).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl MonitorRecord {
    /// Device `name`'s read IOPS in the sample covering the run's timeline second ending at
    /// `t_end` (the sample whose end lies within 0.5 s of it).
    pub fn device_iops_at(&self, name: &str, t_end: f64) -> Option<f64> {
        self.samples
            .iter()
            .filter(|s| (s.t_s - t_end).abs() < 0.5)
            .find_map(|s| s.device(name).map(|d| d.read_iops))
    }

    /// The sample whose interval holds time `t` of the run's timeline (the first ending at or
    /// after it; the last one for a `t` past the end), None before the measured window's first.
    pub fn sample_at(&self, t: f64) -> Option<&Sample> {
        let measured = || self.samples.iter().filter(|s| s.t_s > 0.0);
        measured()
            .find(|s| s.t_s >= t)
            .or_else(|| measured().next_back())
    }

    /// Pages reclaimed from the start of the measured window to the end of the sample holding
    /// time `t` (each sample's rate times its interval, summed).
    pub fn reclaimed_pages_until(&self, t: f64) -> f64 {
        let Some(end) = self.sample_at(t).map(|s| s.t_s) else {
            return 0.0;
        };
        self.samples
            .iter()
            .filter(|s| s.t_s > 0.0 && s.t_s <= end)
            .map(|s| s.machine.reclaim_pages_s * s.interval_s)
            .sum()
    }
}
