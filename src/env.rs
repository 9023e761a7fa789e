//! The environment a result was measured in: kernel, CPU, and the block device behind the target
//! with its queue settings from sysfs, so results from different machines can be told apart.

use crate::target::{Target, TargetKind};
use serde::{Deserialize, Serialize};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// A block device as sysfs shows it (`/sys/class/block/NAME`).
#[derive(Debug, Clone)]
pub struct BlockDev {
    pub name: String,
    /// The whole disk's sysfs directory (for a partition, its parent).
    pub disk_dir: PathBuf,
}

impl BlockDev {
    pub fn queue_dir(&self) -> PathBuf {
        self.disk_dir.join("queue")
    }
}

pub fn sysfs_string(p: &Path) -> Option<String> {
    std::fs::read_to_string(p)
        .ok()
        .map(|s| s.trim().to_string())
}

pub fn sysfs_u64(p: &Path) -> Option<u64> {
    sysfs_string(p)?.parse().ok()
}

/// The block device holding `path`: the device itself for a block special file, or the device of
/// the filesystem for a regular file. None for filesystems without one (tmpfs).
pub fn device_of(path: &Path) -> Option<BlockDev> {
    let meta = std::fs::metadata(path).ok()?;
    let dev = if std::os::unix::fs::FileTypeExt::is_block_device(&meta.file_type()) {
        meta.rdev()
    } else {
        meta.dev()
    };
    let (maj, min) = (libc::major(dev), libc::minor(dev));
    let link = PathBuf::from(format!("/sys/dev/block/{maj}:{min}"));
    let real = std::fs::canonicalize(&link).ok()?;
    let name = real.file_name()?.to_string_lossy().into_owned();
    let disk_dir = if real.join("partition").exists() {
        real.parent()?.to_path_buf()
    } else {
        real
    };
    Some(BlockDev { name, disk_dir })
}

/// Facts about the device behind a target, read from sysfs.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
pub struct DeviceInfo {
    pub name: Option<String>,
    pub disk: Option<String>,
    pub model: Option<String>,
    pub scheduler: Option<String>,
    pub read_ahead_kb: Option<u64>,
    pub nr_requests: Option<u64>,
    pub rotational: Option<bool>,
    pub io_poll: Option<bool>,
    pub logical_block_size: Option<u64>,
    pub physical_block_size: Option<u64>,
    pub max_sectors_kb: Option<u64>,
    /// Backing file of a loop device and whether the loop device does direct I/O.
    pub loop_backing_file: Option<String>,
    pub loop_direct_io: Option<bool>,
}

impl DeviceInfo {
    pub fn of(path: &Path) -> DeviceInfo {
        let Some(dev) = device_of(path) else {
            return DeviceInfo::default();
        };
        let q = dev.queue_dir();
        let d = &dev.disk_dir;
        let scheduler = sysfs_string(&q.join("scheduler")).map(|s| {
            // "none [mq-deadline] kyber" -> "mq-deadline"
            s.split_whitespace()
                .find(|w| w.starts_with('['))
                .map(|w| w.trim_matches(['[', ']']).to_string())
                .unwrap_or(s)
        });
        DeviceInfo {
            name: Some(dev.name.clone()),
            disk: d.file_name().map(|n| n.to_string_lossy().into_owned()),
            model: sysfs_string(&d.join("device/model")).filter(|s| !s.is_empty()),
            scheduler,
            read_ahead_kb: sysfs_u64(&q.join("read_ahead_kb")),
            nr_requests: sysfs_u64(&q.join("nr_requests")),
            rotational: sysfs_u64(&q.join("rotational")).map(|v| v != 0),
            io_poll: sysfs_u64(&q.join("io_poll")).map(|v| v != 0),
            logical_block_size: sysfs_u64(&q.join("logical_block_size")),
            physical_block_size: sysfs_u64(&q.join("physical_block_size")),
            max_sectors_kb: sysfs_u64(&q.join("max_sectors_kb")),
            loop_backing_file: sysfs_string(&d.join("loop/backing_file")),
            loop_direct_io: sysfs_u64(&d.join("loop/dio")).map(|v| v != 0),
        }
    }
}

/// Where and when a result was measured.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
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
        TargetKind::Block => None,
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
    pub fn capture(target: &Target, device: DeviceInfo) -> Environment {
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
