//! Is the target really a device? A target on tmpfs, a loop device backed by a file in memory, a
//! RAM disk, or a buffered run whose whole range sits in the page cache measures RAM, and the
//! result must say so ("you are measuring RAM").

use crate::warnings::{IN_PAGE_CACHE, MEASURING_RAM};
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

const TMPFS_MAGIC: u64 = 0x0102_1994;
const RAMFS_MAGIC: u64 = 0x8584_58f6;
/// cachestat(2), Linux 6.5; the same number on every architecture's unified syscall table.
const SYS_CACHESTAT: libc::c_long = 451;
/// Share of the range in the page cache above which a buffered run is said to measure memory.
const RESIDENT: f64 = 0.9;

/// The filesystem magic of whatever holds `path`.
fn fs_magic(path: &Path) -> Option<u64> {
    rustix::fs::statfs(path).ok().map(|s| s.f_type as u64)
}

fn memory_fs(magic: u64) -> Option<&'static str> {
    match magic {
        TMPFS_MAGIC => Some("tmpfs"),
        RAMFS_MAGIC => Some("ramfs"),
        _ => None,
    }
}

/// For a block device: the file behind a loop device, or the device's name when it is a RAM disk
/// (brd `ram*`, `zram*`).
fn block_memory(path: &Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.file_type().is_block_device() {
        return None;
    }
    use std::os::unix::fs::MetadataExt;
    let rdev = meta.rdev();
    let (major, minor) = (libc::major(rdev), libc::minor(rdev));
    let sys = PathBuf::from(format!("/sys/dev/block/{major}:{minor}"));
    let name = std::fs::canonicalize(&sys)
        .ok()?
        .file_name()?
        .to_string_lossy()
        .into_owned();
    if name.starts_with("ram") || name.starts_with("zram") {
        return Some(format!("{name} is a RAM disk"));
    }
    let backing = std::fs::read_to_string(sys.join("loop/backing_file")).ok()?;
    let backing = backing.trim();
    let fs = memory_fs(fs_magic(Path::new(backing))?)?;
    Some(format!(
        "{name} is a loop device over {backing}, which is on {fs}"
    ))
}

/// Pages of `[offset, offset + len)` of `file` in the page cache, and pages in the range, by
/// cachestat(2); None where the kernel lacks it.
fn cached_share(file: &std::fs::File, offset: u64, len: u64) -> Option<f64> {
    use std::os::fd::AsRawFd;
    #[repr(C)]
    struct Range {
        off: u64,
        len: u64,
    }
    #[repr(C)]
    #[derive(Default)]
    struct Stat {
        nr_cache: u64,
        nr_dirty: u64,
        nr_writeback: u64,
        nr_evicted: u64,
        nr_recently_evicted: u64,
    }
    let range = Range { off: offset, len };
    let mut stat = Stat::default();
    // SAFETY: cachestat reads one `struct cachestat_range` from `&range` and writes one `struct
    // cachestat` into `&mut stat`, both live, properly aligned `repr(C)` structs of the kernel's
    // layout (two and five u64s); the descriptor is open for the whole call.
    let r = unsafe {
        libc::syscall(
            SYS_CACHESTAT,
            file.as_raw_fd(),
            &range as *const Range,
            &mut stat as *mut Stat,
            0u32,
        )
    };
    if r != 0 || len == 0 {
        return None;
    }
    // SAFETY: sysconf only reads a system constant.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as u64;
    Some(stat.nr_cache as f64 / len.div_ceil(page) as f64)
}

/// Why a run of `path` measured memory rather than a device, if it did: the target's place, or
/// (for buffered runs, checked after the run) how much of the range read was in the page cache.
pub fn memory_warning(path: &Path, direct: bool, offset: u64, len: u64) -> Option<String> {
    if let Some(w) = target_in_memory(path) {
        return Some(w);
    }
    if direct {
        return None;
    }
    let file = std::fs::File::open(path).ok()?;
    let share = cached_share(&file, offset, len)?;
    (share >= RESIDENT).then(|| {
        format!(
            "{:.0} % {IN_PAGE_CACHE}: buffered reads measured RAM, not the \
             device (read with O_DIRECT, or a range larger than memory)",
            100.0 * share.min(1.0)
        )
    })
}

/// What `info` says of a target before anything is measured: its place in memory (every read
/// measures RAM), else how much of its first `len` bytes sit in the page cache when that is
/// most of them (buffered reads would measure RAM).
pub fn before_reading(path: &Path, len: u64) -> Option<String> {
    if let Some(w) = target_in_memory(path) {
        return Some(w);
    }
    let file = std::fs::File::open(path).ok()?;
    let share = cached_share(&file, 0, len)?;
    (share >= RESIDENT).then(|| {
        format!(
            "{:.0} % of the target is in the page cache: buffered reads of it measure RAM, not \
             the device (read with O_DIRECT, or drop the cache first)",
            100.0 * share.min(1.0)
        )
    })
}

/// Why any read of `path` measures memory rather than a device, if it does, by its place alone
/// (tmpfs or ramfs, a RAM disk, a loop device over a file in memory): what `info` and `tune`
/// say before anything is measured.
pub fn target_in_memory(path: &Path) -> Option<String> {
    let block = std::fs::metadata(path).is_ok_and(|m| m.file_type().is_block_device());
    if block {
        // A device node's own filesystem (/dev, often a tmpfs) says nothing about the device.
        if let Some(why) = block_memory(path) {
            return Some(format!(
                "{why}: {MEASURING_RAM} through the block layer, not a device"
            ));
        }
    } else if let Some(fs) = fs_magic(path).and_then(memory_fs) {
        return Some(format!(
            "the target is on {fs}: every read is a memory copy; {MEASURING_RAM}, not a device"
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_file_in_dev_shm_is_memory() {
        let mut f = tempfile::NamedTempFile::new_in("/dev/shm").unwrap();
        f.write_all(&[1u8; 8192]).unwrap();
        let w = memory_warning(f.path(), true, 0, 8192).expect("tmpfs is memory");
        assert!(w.contains("tmpfs") && w.contains("measuring RAM"), "{w}");
    }

    #[test]
    fn a_buffered_file_read_from_the_page_cache_is_memory_and_a_direct_one_is_not() {
        let dir = tempfile::tempdir_in(std::env::current_dir().unwrap()).unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, vec![7u8; 1 << 20]).unwrap();
        if fs_magic(&p).and_then(memory_fs).is_some() {
            return; // the build directory is itself in memory: the first test covers it
        }
        // Just written: every page is cached.
        let w = memory_warning(&p, false, 0, 1 << 20).expect("cachestat on this kernel");
        assert!(w.contains("page cache"), "{w}");
        assert_eq!(memory_warning(&p, true, 0, 1 << 20), None);
        // `info` says so before reading, of the whole target.
        let w = before_reading(&p, 1 << 20).expect("cached");
        assert!(
            w.contains("100 % of the target is in the page cache"),
            "{w}"
        );
    }
}
