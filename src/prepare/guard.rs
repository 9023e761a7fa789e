//! What `readlab prepare` may write over, decided before a byte is written: the full prepared-file
//! check (size, first and last sector, sampled checksums), the marker of an unfinished prepare,
//! block devices in use (mounted, held, open exclusively), and free space.

use crate::buffer::AlignedBuf;
use crate::data::{self, SECTOR};
use crate::error::{Error, Result};
use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use xxhash_rust::xxh3::xxh3_64;

/// Sectors checked between the first and the last by the full prepared-file check.
const SAMPLES: u64 = 6;

/// Magic of the first sector while a prepare is under way: it is not readlab data (nothing calls
/// the target prepared), but a later `prepare` recognises it as its own.
const PENDING: [u8; 8] = *b"RDLABWIP";

/// A complete readlab image found on a target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Image {
    pub id: u64,
    pub size: u64,
}

fn read_sector(file: &File, offset: u64) -> Option<AlignedBuf> {
    let mut buf = AlignedBuf::new(SECTOR);
    let n = rustix::io::pread(file, &mut buf[..], offset).ok()?;
    (n == SECTOR).then_some(buf)
}

/// The full prepared-file check of a regular file: its size is whole sectors, and its first and
/// last sectors and [`SAMPLES`] sectors spread between them are exactly what `readlab prepare`
/// writes for one file id (headers and checksums of the whole sector).
pub fn image_of(path: &Path) -> Option<Image> {
    let file = File::open(path).ok()?;
    let size = file.metadata().ok()?.len();
    if size == 0 || size % SECTOR as u64 != 0 {
        return None;
    }
    let id = data::sector_file_id(&read_sector(&file, 0)?, 0)?;
    let sectors = size / SECTOR as u64;
    let picks = (0..=SAMPLES + 1).map(|i| i * (sectors - 1) / (SAMPLES + 1) * SECTOR as u64);
    for off in picks {
        let s = read_sector(&file, off)?;
        if data::verify(id, off, &s).is_some() {
            return None;
        }
    }
    Some(Image { id, size })
}

/// The first sector written before anything else: names the prepare under way and its size.
pub fn pending_sector(id: u64, size: u64) -> AlignedBuf {
    let mut s = AlignedBuf::new(SECTOR);
    s[0..8].copy_from_slice(&PENDING);
    s[8..16].copy_from_slice(&id.to_le_bytes());
    s[16..24].copy_from_slice(&size.to_le_bytes());
    let sum = xxh3_64(&s[0..24]);
    s[24..32].copy_from_slice(&sum.to_le_bytes());
    s
}

/// Whether the regular file at `path` is what an unfinished prepare left: the marker sector, for
/// the size the file has.
pub fn is_pending(path: &Path) -> bool {
    let Ok(file) = File::open(path) else {
        return false;
    };
    let (Ok(meta), Some(s)) = (file.metadata(), read_sector(&file, 0)) else {
        return false;
    };
    s[0..8] == PENDING
        && s[16..24] == meta.len().to_le_bytes()
        && s[24..32] == xxh3_64(&s[0..24]).to_le_bytes()
        && s[32..].iter().all(|&b| b == 0)
}

/// `major:minor` of the block device `dev` and of its partitions.
fn device_numbers(rdev: u64) -> (PathBuf, Vec<String>) {
    let me = format!("{}:{}", rustix::fs::major(rdev), rustix::fs::minor(rdev));
    let sys = PathBuf::from(format!("/sys/dev/block/{me}"));
    let mut nums = vec![me];
    if let Ok(dir) = std::fs::read_dir(&sys) {
        for e in dir.flatten() {
            if e.path().join("partition").exists()
                && let Ok(n) = std::fs::read_to_string(e.path().join("dev"))
            {
                nums.push(n.trim().to_string());
            }
        }
    }
    (sys, nums)
}

/// Refuse a block device that is mounted (it or a partition of it) or held by another device
/// (device mapper, RAID, bcache). Checked even with --overwrite; opening with O_EXCL then catches
/// what these files do not show (swap, another exclusive opener).
pub fn check_not_in_use(path: &Path, meta: &std::fs::Metadata) -> Result<()> {
    let (sys, nums) = device_numbers(meta.rdev());
    let busy = |why: String| Error::Busy {
        path: path.to_path_buf(),
        why,
    };
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo")
        .map_err(|e| Error::io("/proc/self/mountinfo", "cannot read", e))?;
    for line in mountinfo.lines() {
        let f: Vec<&str> = line.split(' ').collect();
        if f.len() > 4 && nums.iter().any(|n| n == f[2]) {
            return Err(busy(format!("mounted at {}", f[4])));
        }
    }
    let mut dirs = vec![sys.clone()];
    if let Ok(dir) = std::fs::read_dir(&sys) {
        dirs.extend(
            dir.flatten()
                .map(|e| e.path())
                .filter(|p| p.join("partition").exists()),
        );
    }
    for d in dirs {
        let holders: Vec<String> = std::fs::read_dir(d.join("holders"))
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        if !holders.is_empty() {
            return Err(busy(format!("held by {}", holders.join(", "))));
        }
    }
    Ok(())
}

/// The error for a block device the kernel refused to open exclusively.
pub fn busy_error(path: &Path) -> Error {
    Error::Busy {
        path: path.to_path_buf(),
        why: "the kernel reports it busy: mounted, swap, or open exclusively by another program"
            .into(),
    }
}

/// Refuse to start writing `size` bytes to regular file `path` when its filesystem cannot hold
/// them (the blocks the file already has are reused).
pub fn check_free_space(path: &Path, size: u64) -> Result<()> {
    let existing = std::fs::metadata(path).map_or(0, |m| m.blocks() * 512);
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let Ok(st) = rustix::fs::statvfs(dir) else {
        // A filesystem that cannot say is written to and reports ENOSPC itself.
        return Ok(());
    };
    let avail = st
        .f_bavail
        .saturating_mul(st.f_frsize)
        .saturating_add(existing);
    if size > avail {
        return Err(Error::NoSpace {
            path: path.to_path_buf(),
            need: size,
            avail,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image(dir: &Path, sectors: usize, id: u64) -> PathBuf {
        let p = dir.join(format!("img-{sectors}"));
        let mut buf = vec![0u8; sectors * SECTOR];
        data::fill(id, 0, &mut buf);
        std::fs::write(&p, &buf).unwrap();
        p
    }

    #[test]
    fn a_whole_image_passes_the_full_check() {
        let d = tempfile::tempdir().unwrap();
        let p = image(d.path(), 100, 9);
        assert_eq!(
            image_of(&p),
            Some(Image {
                id: 9,
                size: 100 * SECTOR as u64
            })
        );
    }

    #[test]
    fn a_copied_header_an_extended_file_or_a_damaged_sample_fail_it() {
        let d = tempfile::tempdir().unwrap();
        let src = image(d.path(), 100, 9);
        let mut head = std::fs::read(&src).unwrap()[..SECTOR].to_vec();
        head.extend(vec![0x61u8; 99 * SECTOR]);
        let foreign = d.path().join("foreign");
        std::fs::write(&foreign, &head).unwrap();
        assert_eq!(image_of(&foreign), None);
        // An image with something appended.
        let mut longer = std::fs::read(&src).unwrap();
        longer.extend(b"tail");
        std::fs::write(&foreign, &longer).unwrap();
        assert_eq!(image_of(&foreign), None);
        // A sampled sector (the middle one) whose filler changed but whose header did not.
        let mut bytes = std::fs::read(&src).unwrap();
        let mid = 3 * 99 / 7 * SECTOR;
        bytes[mid + 100] ^= 1;
        std::fs::write(&foreign, &bytes).unwrap();
        assert_eq!(image_of(&foreign), None);
    }

    #[test]
    fn the_pending_marker_is_not_data_and_names_its_size() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("p");
        let mut bytes = pending_sector(5, 8 * SECTOR as u64).to_vec();
        bytes.resize(8 * SECTOR, 0);
        std::fs::write(&p, &bytes).unwrap();
        assert!(is_pending(&p));
        assert_eq!(image_of(&p), None);
        assert_eq!(data::sector_file_id(&bytes[..SECTOR], 0), None);
        bytes.resize(9 * SECTOR, 0);
        std::fs::write(&p, &bytes).unwrap();
        assert!(!is_pending(&p), "size differs from the marker's");
    }

    #[test]
    fn free_space_is_checked() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("big");
        let e = check_free_space(&p, u64::MAX / 2).unwrap_err();
        assert!(
            matches!(e, Error::NoSpace { .. }) && e.is_bad_input(),
            "{e}"
        );
        check_free_space(&p, 4096).unwrap();
    }
}
