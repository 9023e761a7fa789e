//! The environment a result was measured in: kernel, CPU, and the block device behind the target
//! with its queue settings from sysfs, so results from different machines can be told apart.

pub use crate::source::device::{BlockDev, DeviceInfo, device_of, sysfs_string, sysfs_u64};
use crate::source::{Source, Target, TargetKind};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Where and when a result was measured.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct Environment {
    pub readlab_version: String,
    pub hostname: String,
    pub kernel: String,
    pub cpu_model: String,
    pub cpus: usize,
    pub memory_bytes: u64,
    /// RFC 3339 UTC time at which the run started.
    pub date: String,
    pub target: Target,
    pub filesystem: Option<String>,
    pub device: DeviceInfo,
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}

fn memory_bytes() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse::<u64>().ok())
        })
        .map(|kb| kb * 1024)
        .unwrap_or(0)
}

/// The filesystem type holding `path` (from /proc/self/mounts, longest matching mount point).
fn filesystem_of(path: &Path) -> Option<String> {
    let abs = std::fs::canonicalize(path).ok()?;
    let mounts = std::fs::read_to_string("/proc/self/mounts").ok()?;
    mounts
        .lines()
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            let _src = it.next()?;
            let mnt = it.next()?;
            let fstype = it.next()?;
            abs.starts_with(mnt)
                .then(|| (mnt.len(), fstype.to_string()))
        })
        .max_by_key(|(len, _)| *len)
        .map(|(_, fs)| fs)
}

pub fn cpus() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

/// The filesystem a file target lives on; None for block devices.
pub fn filesystem(target: &Target) -> Option<String> {
    match target.kind {
        TargetKind::File => filesystem_of(&target.path),
        TargetKind::Block | TargetKind::Nbd => None,
    }
}

/// The running kernel's release, as `uname -r` prints it.
pub fn kernel() -> String {
    rustix::system::uname()
        .release()
        .to_string_lossy()
        .into_owned()
}

impl Environment {
    /// The environment of a run on `target`, whose device facts the caller already read.
    pub fn capture(source: &dyn Source, device: DeviceInfo) -> Environment {
        let target = &source.describe();
        let u = rustix::system::uname();
        Environment {
            readlab_version: env!("CARGO_PKG_VERSION").into(),
            hostname: u.nodename().to_string_lossy().into_owned(),
            kernel: kernel(),
            cpu_model: cpu_model(),
            cpus: cpus(),
            memory_bytes: memory_bytes(),
            date: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
            target: target.clone(),
            filesystem: filesystem(target),
            device,
        }
    }
}
