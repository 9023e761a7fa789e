//! What is being read: a regular file or a block device, its size, its direct-I/O alignment, and
//! whether `readlab prepare` wrote it (so its data can be verified).

use crate::buffer::AlignedBuf;
use crate::data;
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::io::ErrorKind;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TargetKind {
    File,
    Block,
    /// An export of an NBD server (`nbd://…`), read over the network.
    Nbd,
}

impl TargetKind {
    /// A regular file or a block device; anything else cannot be a target.
    pub fn of(meta: &std::fs::Metadata, path: &Path) -> Result<TargetKind> {
        if meta.file_type().is_block_device() {
            Ok(TargetKind::Block)
        } else if meta.is_file() {
            Ok(TargetKind::File)
        } else {
            Err(Error::invalid(format!(
                "{}: not a regular file or block device",
                path.display()
            )))
        }
    }
}

/// Facts about a target found before any I/O is measured.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct Target {
    pub path: PathBuf,
    pub kind: TargetKind,
    pub size: u64,
    /// Required alignment of offsets and lengths for O_DIRECT (statx STATX_DIOALIGN, else the
    /// device's logical block size, else 512).
    pub dio_offset_align: u64,
    /// Required alignment of memory buffers for O_DIRECT.
    pub dio_mem_align: u64,
    /// Whether the filesystem/device accepts O_DIRECT at all.
    pub direct_supported: bool,
    /// File id found in the first sector when `readlab prepare` wrote this target.
    pub prepared_id: Option<u64>,
}

fn open_error(path: &Path, e: std::io::Error) -> Error {
    match e.kind() {
        ErrorKind::NotFound => Error::TargetNotFound { path: path.into() },
        ErrorKind::PermissionDenied => Error::PermissionDenied { path: path.into() },
        _ => Error::io(path, "cannot open", e),
    }
}

/// Open a target read-only, with O_DIRECT when asked, and with O_NOATIME: a read benchmark must
/// not write the inode's access time (relatime still writes it once a day), and without it every
/// read pays the kernel's access-time check (about 20 ns per read on a loop device here; fio opens
/// devices the same way). The kernel allows O_NOATIME to the file's owner or with CAP_FOWNER; for
/// anyone else (EPERM) the target is opened without it.
pub fn open_read(path: &Path, direct: bool) -> Result<File> {
    let open = |noatime: bool| {
        let mut o = OpenOptions::new();
        o.read(true);
        let mut flags = if noatime { libc::O_NOATIME } else { 0 };
        if direct {
            flags |= libc::O_DIRECT;
        }
        o.custom_flags(flags);
        o.open(path)
    };
    let r = match open(true) {
        Err(e) if e.raw_os_error() == Some(libc::EPERM) => open(false),
        r => r,
    };
    r.map_err(|e| {
        if direct && e.raw_os_error() == Some(libc::EINVAL) {
            Error::invalid(format!(
                "{}: the filesystem does not support O_DIRECT; use --buffered",
                path.display()
            ))
        } else {
            open_error(path, e)
        }
    })
}

/// Size in bytes of a file or block device.
pub fn size_of(file: &File, path: &Path) -> Result<u64> {
    rustix::fs::seek(file, rustix::fs::SeekFrom::End(0)).map_err(|e| {
        // A file that cannot seek to its end (/proc, /sys) is no target: bad input.
        Error::invalid(format!(
            "{}: cannot find its size ({}); readlab reads regular files and block devices",
            path.display(),
            std::io::Error::from(e)
        ))
    })
}

impl Target {
    /// Inspect a target without measuring anything. Fails with a clear message if it cannot be read.
    pub fn inspect(path: &Path) -> Result<Target> {
        let meta = std::fs::metadata(path).map_err(|e| open_error(path, e))?;
        let kind = TargetKind::of(&meta, path)?;
        let file = open_read(path, false)?;
        let size = size_of(&file, path)?;
        let (mut off_align, mut mem_align) = (0u64, 0u64);
        if let Ok(st) = rustix::fs::statx(
            &file,
            "",
            rustix::fs::AtFlags::EMPTY_PATH,
            rustix::fs::StatxFlags::DIOALIGN,
        ) && st.stx_mask & rustix::fs::StatxFlags::DIOALIGN.bits() != 0
        {
            off_align = st.stx_dio_offset_align as u64;
            mem_align = st.stx_dio_mem_align as u64;
        }
        // statx reports 0 when the file does not support direct I/O; confirm by trying.
        let direct_supported = open_read(path, true).is_ok();
        if off_align == 0 {
            off_align = super::device::device_of(path)
                .and_then(|d| super::device::sysfs_u64(&d.queue_dir().join("logical_block_size")))
                .unwrap_or(512);
        }
        if mem_align == 0 {
            mem_align = off_align;
        }
        let prepared_id = read_prepared_id(&file, 0);
        Ok(Target {
            path: path.into(),
            kind,
            size,
            dio_offset_align: off_align,
            dio_mem_align: mem_align,
            direct_supported,
            prepared_id,
        })
    }

    /// Check that a sector at `offset` also belongs to the prepared image (used at the end of a
    /// verified range, to catch ranges that run past an image on a larger device). A sector the
    /// device fails to read (EIO: a bad sector, a device-mapper `error` segment) counts as
    /// prepared: whose data it holds is unknown, and the run that reads it counts the error with
    /// its offset, where a refusal here would blame the data for the device's error.
    pub fn prepared_at(&self, offset: u64) -> bool {
        let Some(id) = self.prepared_id else {
            return false;
        };
        let Ok(f) = open_read(&self.path, false) else {
            return false;
        };
        let mut buf = AlignedBuf::new(data::SECTOR);
        match rustix::io::pread(&f, &mut buf[..], offset) {
            Err(rustix::io::Errno::IO) => true,
            Ok(n) if n == data::SECTOR => data::sector_file_id(&buf, offset) == Some(id),
            _ => false,
        }
    }
}

/// The readlab file id stored in the sector at `offset`, if that sector is readlab data.
fn read_prepared_id(file: &File, offset: u64) -> Option<u64> {
    let mut buf = AlignedBuf::new(data::SECTOR);
    let n = rustix::io::pread(file, &mut buf[..], offset).ok()?;
    if n < data::SECTOR {
        return None;
    }
    data::sector_file_id(&buf, offset)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::os::fd::AsFd;

    /// Set the file's access time to two days ago (older than relatime's one-day rule, so the
    /// next read that updates access times does).
    fn age_atime(f: &tempfile::NamedTempFile) -> i64 {
        let old = rustix::fs::Timestamps {
            last_access: rustix::fs::Timespec {
                tv_sec: rustix::time::clock_gettime(rustix::time::ClockId::Realtime).tv_sec
                    - 2 * 86_400,
                tv_nsec: 0,
            },
            last_modification: rustix::fs::Timespec {
                tv_sec: 0,
                tv_nsec: rustix::fs::UTIME_OMIT,
            },
        };
        rustix::fs::futimens(f.as_file().as_fd(), &old).unwrap();
        atime(f.path())
    }

    fn atime(p: &Path) -> i64 {
        rustix::fs::stat(p).unwrap().st_atime
    }

    fn read_all(mut f: File) {
        let mut buf = Vec::new();
        f.read_to_end(&mut buf).unwrap();
        assert_eq!(buf.len(), 8192);
    }

    /// Reading a target leaves its access time alone. The control read (without O_NOATIME) shows
    /// this file system does update access times, so the test can fail.
    #[test]
    fn reading_a_target_does_not_update_its_access_time() {
        let f = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(f.path(), vec![7u8; 8192]).unwrap();

        let before = age_atime(&f);
        read_all(File::open(f.path()).unwrap());
        assert_ne!(
            atime(f.path()),
            before,
            "control: a plain read did not update the access time of {} (mounted noatime?): \
             this test cannot tell O_NOATIME's effect here",
            f.path().display()
        );

        let before = age_atime(&f);
        let file = open_read(f.path(), false).unwrap();
        let fl = rustix::fs::fcntl_getfl(&file).unwrap();
        assert!(fl.contains(rustix::fs::OFlags::NOATIME), "{fl:?}");
        read_all(file);
        assert_eq!(
            atime(f.path()),
            before,
            "readlab's read updated the access time"
        );
    }
}
