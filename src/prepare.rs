//! `readlab prepare`: fill a file or device with verifiable data at device speed (large direct
//! writes fed by a generator thread), refusing to destroy anything readlab did not write.

use crate::buffer::AlignedBuf;
use crate::data;
use crate::error::{Error, Result};
use crate::source::{TargetKind, local as target};
use std::fs::OpenOptions;
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
    pub overwrite: bool,
}

/// Receives progress while a target is written.
pub trait PrepareObserver {
    fn progress(&self, _written: u64, _total: u64) {}
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

/// Refuse to touch what readlab did not write, unless asked to destroy it.
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
    if cfg.overwrite {
        return Ok(Some(kind));
    }
    if kind == TargetKind::Block {
        return Err(Error::Foreign {
            path: cfg.path.clone(),
            why: "it is a block device".into(),
        });
    }
    if meta.len() > 0 {
        let t = target::Target::inspect(&cfg.path)?;
        if t.prepared_id.is_none() {
            return Err(Error::Foreign {
                path: cfg.path.clone(),
                why: "it holds data that `readlab prepare` did not write".into(),
            });
        }
    }
    Ok(Some(kind))
}

/// Write verifiable data to `cfg.path`, ending with fsync.
pub fn prepare(cfg: &PrepareConfig, observer: &dyn PrepareObserver) -> Result<Prepared> {
    let existing = check_overwrite(cfg)?;
    let sector = data::SECTOR as u64;
    let size = match (cfg.size, existing) {
        (Some(s), _) => s.div_ceil(sector) * sector,
        (None, Some(TargetKind::Block)) => {
            let f = target::open_read(&cfg.path, false)?;
            target::size_of(&f, &cfg.path)? / sector * sector
        }
        (None, _) => return Err(Error::invalid("give the size to write, e.g. --size 1G")),
    };
    if size == 0 {
        return Err(Error::invalid("size must be at least 4k"));
    }
    if existing == Some(TargetKind::Block) {
        let f = target::open_read(&cfg.path, false)?;
        let dev = target::size_of(&f, &cfg.path)?;
        if size > dev {
            return Err(Error::invalid(format!(
                "{}: size {size} B is larger than the device ({dev} B)",
                cfg.path.display()
            )));
        }
    }
    let open = |direct: bool| {
        let mut o = OpenOptions::new();
        o.write(true)
            .create(existing.is_none() || existing == Some(TargetKind::File));
        if direct {
            o.custom_flags(libc::O_DIRECT);
        }
        o.open(&cfg.path)
    };
    let (file, direct) = match open(true) {
        Ok(f) => (f, true),
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => (
            open(false).map_err(|e| Error::io(&cfg.path, "cannot open for writing", e))?,
            false,
        ),
        Err(e) if e.kind() == ErrorKind::PermissionDenied => {
            return Err(Error::PermissionDenied {
                path: cfg.path.clone(),
            });
        }
        Err(e) => return Err(Error::io(&cfg.path, "cannot open for writing", e)),
    };
    if existing != Some(TargetKind::Block) {
        file.set_len(size)
            .map_err(|e| Error::io(&cfg.path, "cannot set the file size", e))?;
    }
    let file_id: u64 = rand::random::<u64>() | 1;
    let started = std::time::Instant::now();

    // A generator thread fills buffers while this thread writes the previous ones.
    let (to_writer, filled) = mpsc::sync_channel::<(u64, AlignedBuf)>(2);
    let (to_generator, empty) = mpsc::sync_channel::<AlignedBuf>(3);
    for _ in 0..3 {
        to_generator
            .send(AlignedBuf::new(CHUNK))
            .expect("channel has room");
    }
    let result = std::thread::scope(|s| -> Result<()> {
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
        let mut written = 0u64;
        while written < size {
            let (off, buf) = filled
                .recv()
                .map_err(|_| Error::Engine("the data generator stopped".into()))?;
            let n = (size - off).min(CHUNK as u64) as usize;
            let mut done = 0;
            while done < n {
                let w = rustix::io::pwrite(&file, &buf[done..n], off + done as u64)
                    .map_err(|e| Error::io(&cfg.path, "write failed", e.into()))?;
                if w == 0 {
                    return Err(Error::io(
                        &cfg.path,
                        "write failed",
                        std::io::Error::from(ErrorKind::WriteZero),
                    ));
                }
                done += w;
            }
            written += n as u64;
            observer.progress(written, size);
            let _ = to_generator.send(buf);
        }
        drop(to_generator);
        Ok(())
    });
    result?;
    file.sync_all()
        .map_err(|e| Error::io(&cfg.path, "fsync failed", e))?;
    Ok(Prepared {
        path: cfg.path.clone(),
        size,
        file_id,
        direct,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// Whether `path` already holds a readlab image of exactly `size` bytes (lets the default job reuse it).
pub fn is_prepared(path: &Path, size: u64) -> bool {
    match target::Target::inspect(path) {
        Ok(t) => {
            t.prepared_id.is_some() && t.size == size && t.prepared_at(size - data::SECTOR as u64)
        }
        Err(_) => false,
    }
}
