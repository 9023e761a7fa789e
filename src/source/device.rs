//! The block device behind a local source, as sysfs shows it: which device holds a path, its queue
//! settings and its loop backing file. A leaf: the local source, the environment and the probe
//! all read these facts here.

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
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq, schemars::JsonSchema)]
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
