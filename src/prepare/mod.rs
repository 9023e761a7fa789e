//! `readlab prepare`: fill a file or device with verifiable data at device speed (large direct
//! writes fed by a generator thread), refusing to destroy anything readlab did not write.
//!
//! Order of writes, so that nothing but a finished prepare is ever called prepared: first a
//! "prepare under way" marker over the first sector (fsynced), then every sector but the first,
//! fsync, and last the first sector's real header, fsync. A failed or interrupted prepare leaves
//! the marker, which `info` and `run --verify` do not take for readlab data and which a later
//! `prepare` overwrites without `--overwrite`; a file the failed prepare created is removed.

mod guard;

pub use guard::{Image, image_of, is_pending};

use crate::buffer::AlignedBuf;
use crate::data;
use crate::error::{Error, Result};
use crate::source::{TargetKind, local as target};
use std::fs::{File, OpenOptions};
use std::io::ErrorKind;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc;

/// Bytes written per system call.
const CHUNK: usize = 4 << 20;

#[derive(Debug, Clone)]
pub struct PrepareConfig {
    pub path: PathBuf,
    /// Bytes to write; rounded up to whole 4 KiB sectors. None: the whole block device.
    pub size: Option<u64>,
    /// Allow destroying data readlab did not write (any block device, any foreign file).
    /// Never allows writing to a block device in use (mounted, held, open exclusively).
    pub overwrite: bool,
}

/// Receives progress while a target is written, and may stop it.
pub trait PrepareObserver {
    fn progress(&self, _written: u64, _total: u64) {}
    /// Asked between chunks (every 4 MiB): true stops the prepare with [`Error::Interrupted`].
    fn should_stop(&self) -> bool {
        false
    }
}

impl PrepareObserver for () {}

#[derive(Debug, Clone)]
pub struct Prepared {
    pub path: PathBuf,
    pub size: u64,
    pub file_id: u64,
    pub direct: bool,
    pub seconds: f64,
}

/// Refuse to touch what readlab did not write, unless asked to destroy it, and block devices in
/// use even then.
fn check_overwrite(cfg: &PrepareConfig) -> Result<Option<TargetKind>> {
    let meta = match std::fs::metadata(&cfg.path) {
        Ok(m) => m,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(e) if e.kind() == ErrorKind::PermissionDenied => {
            return Err(Error::PermissionDenied {
                path: cfg.path.clone(),
            });
        }
        Err(e) => return Err(Error::io(&cfg.path, "cannot inspect", e)),
    };
    let kind = TargetKind::of(&meta, &cfg.path)?;
    if kind == TargetKind::Block {
        guard::check_not_in_use(&cfg.path, &meta)?;
    }
    if cfg.overwrite {
        return Ok(Some(kind));
    }
    if kind == TargetKind::Block {
        return Err(Error::Foreign {
            path: cfg.path.clone(),
            why: "it is a block device".into(),
        });
    }
    if meta.len() > 0 && image_of(&cfg.path).is_none() && !guard::is_pending(&cfg.path) {
        return Err(Error::Foreign {
            path: cfg.path.clone(),
            why: "it holds data that `readlab prepare` did not write".into(),
        });
    }
    Ok(Some(kind))
}

/// Open the target for writing (block devices exclusively), with O_DIRECT where it works.
fn open_for_writing(path: &Path, kind: Option<TargetKind>) -> Result<(File, bool)> {
    let block = kind == Some(TargetKind::Block);
    let open = |direct: bool| {
        let mut o = OpenOptions::new();
        o.write(true).create(!block);
        let mut flags = if block { libc::O_EXCL } else { 0 };
        if direct {
            flags |= libc::O_DIRECT;
        }
        o.custom_flags(flags);
        o.open(path)
    };
    let err = |e: std::io::Error| match e.kind() {
        ErrorKind::PermissionDenied => Error::PermissionDenied { path: path.into() },
        _ if block && e.raw_os_error() == Some(libc::EBUSY) => guard::busy_error(path),
        // Creating a file fails with ENOENT only when its directory is missing: bad input.
        ErrorKind::NotFound if !block => Error::Output(crate::error::OutputError::NoParent {
            out: path.into(),
            parent: path.parent().unwrap_or(Path::new(".")).into(),
        }),
        _ => Error::io(path, "cannot open for writing", e),
    };
    match open(true) {
        Ok(f) => Ok((f, true)),
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => Ok((open(false).map_err(err)?, false)),
        Err(e) => Err(err(e)),
    }
}

/// Write verifiable data to `cfg.path`, ending with fsync. Stops between chunks when the
/// observer asks; see the module comment for what a stopped or failed prepare leaves.
pub fn prepare(cfg: &PrepareConfig, observer: &dyn PrepareObserver) -> Result<Prepared> {
    let existing = check_overwrite(cfg)?;
    let sector = data::SECTOR as u64;
    let requested = cfg
        .size
        .map(|s| {
            s.checked_next_multiple_of(sector)
                .ok_or_else(|| Error::invalid(format!("size {s} B is too large")))
        })
        .transpose()?;
    if requested == Some(0) {
        return Err(Error::invalid("size must be at least 4k"));
    }
    let block = existing == Some(TargetKind::Block);
    if !block && requested.is_none() {
        return Err(Error::invalid("give the size to write, e.g. --size 1G"));
    }
    if let (false, Some(size)) = (block, requested) {
        guard::check_free_space(&cfg.path, size)?;
    }
    let (file, direct) = open_for_writing(&cfg.path, existing)?;
    let size = if block {
        let dev = target::size_of(&file, &cfg.path)?;
        match requested {
            Some(s) if s > dev => {
                return Err(Error::invalid(format!(
                    "{}: size {s} B is larger than the device ({dev} B)",
                    cfg.path.display()
                )));
            }
            Some(s) => s,
            None => dev / sector * sector,
        }
    } else {
        requested.expect("checked above")
    };
    if size == 0 {
        return Err(Error::invalid("size must be at least 4k"));
    }
    let started = std::time::Instant::now();
    let file_id: u64 = rand::random::<u64>() | 1;
    let written = write_image(&file, &cfg.path, size, file_id, block, observer);
    if let Err(e) = written {
        drop(file);
        if existing.is_none() {
            // Nothing of value was there before: leave nothing behind.
            let _ = std::fs::remove_file(&cfg.path);
        }
        return Err(e);
    }
    Ok(Prepared {
        path: cfg.path.clone(),
        size,
        file_id,
        direct,
        seconds: started.elapsed().as_secs_f64(),
    })
}

fn pwrite_all(file: &File, path: &Path, buf: &[u8], off: u64) -> Result<()> {
    let mut done = 0;
    while done < buf.len() {
        let w = rustix::io::pwrite(file, &buf[done..], off + done as u64)
            .map_err(|e| Error::io(path, "write failed", e.into()))?;
        if w == 0 {
            return Err(Error::io(
                path,
                "write failed",
                std::io::Error::from(ErrorKind::WriteZero),
            ));
        }
        done += w;
    }
    Ok(())
}

/// Marker, body, header, in that order, each durable before the next.
fn write_image(
    file: &File,
    path: &Path,
    size: u64,
    file_id: u64,
    block: bool,
    observer: &dyn PrepareObserver,
) -> Result<()> {
    let sector = data::SECTOR;
    let sync = |what| file.sync_all().map_err(|e| Error::io(path, what, e));
    pwrite_all(file, path, &guard::pending_sector(file_id, size), 0)?;
    sync("fsync failed")?;
    if !block {
        file.set_len(size)
            .map_err(|e| Error::io(path, "cannot set the file size", e))?;
    }
    // A generator thread fills buffers while this thread writes the previous ones.
    let (to_writer, filled) = mpsc::sync_channel::<(u64, AlignedBuf)>(2);
    let (to_generator, empty) = mpsc::sync_channel::<AlignedBuf>(3);
    for _ in 0..3 {
        to_generator
            .send(AlignedBuf::new(CHUNK))
            .expect("channel has room");
    }
    std::thread::scope(|s| -> Result<()> {
        s.spawn(move || {
            let mut off = 0u64;
            while off < size {
                let Ok(mut buf) = empty.recv() else { return };
                let n = (size - off).min(CHUNK as u64) as usize;
                data::fill(file_id, off, &mut buf[..n]);
                if to_writer.send((off, buf)).is_err() {
                    return;
                }
                off += n as u64;
            }
        });
        // Owned here, so an early return hangs up both channels and the generator ends.
        let (filled, to_generator) = (filled, to_generator);
        let mut written = 0u64;
        while written < size {
            if observer.should_stop() {
                return Err(Error::Interrupted { path: path.into() });
            }
            let (off, buf) = filled
                .recv()
                .map_err(|_| Error::ThreadDied("the data generator stopped"))?;
            let n = (size - off).min(CHUNK as u64) as usize;
            // The first sector keeps the marker until everything else is durable.
            let skip = if off == 0 { sector } else { 0 };
            pwrite_all(file, path, &buf[skip..n], off + skip as u64)?;
            written += n as u64;
            observer.progress(written, size);
            let _ = to_generator.send(buf);
        }
        Ok(())
    })?;
    sync("fsync failed")?;
    let mut header = AlignedBuf::new(sector);
    data::fill_sector(file_id, 0, &mut header);
    pwrite_all(file, path, &header, 0)?;
    sync("fsync failed")
}

/// Whether `path` already holds a complete readlab image of exactly `size` bytes (lets the
/// default job reuse it).
pub fn is_prepared(path: &Path, size: u64) -> bool {
    image_of(path).is_some_and(|i| i.size == size)
}
