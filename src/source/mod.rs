//! What an engine reads: a *source* — a local file or block device today, a remote export next —
//! described by its size, its direct-I/O alignment, the identity of the prepared data on it (for
//! verification) and how each worker opens it. Engines never see a path: the runner opens the
//! source and hands each worker's engine a [`Handle`].

pub mod device;
pub mod local;
pub mod nbd;
mod open;

pub use local::{Target, TargetKind};
pub use open::open;

use crate::error::{Error, Result};
use std::fs::File;
use std::sync::Arc;

/// Alignment O_DIRECT asks of offsets/lengths and of memory buffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Alignment {
    pub offset: u64,
    pub memory: u64,
}

/// How one worker wants its handle opened.
#[derive(Debug, Clone, Copy)]
pub struct WorkerOpen {
    /// Bypass the page cache (O_DIRECT).
    pub direct: bool,
    /// An access-pattern hint for the range the worker reads (posix_fadvise).
    pub advice: Option<rustix::fs::Advice>,
    pub offset: u64,
    pub len: u64,
}

/// What a worker's engine reads through.
#[derive(Debug, Clone)]
pub enum Handle {
    /// A local file or block device, opened for this worker.
    File(Arc<File>),
    /// A negotiated connection to an NBD export, this worker's own.
    Nbd(Arc<crate::nbd::Connection>),
}

impl Handle {
    /// The local descriptor, for engines that read local files and devices.
    pub fn file(&self) -> Result<Arc<File>> {
        match self {
            Handle::File(f) => Ok(f.clone()),
            Handle::Nbd(c) => Err(Error::invalid(format!(
                "{} is an NBD export: read it with --engine nbd",
                c.url
            ))),
        }
    }

    /// The NBD connection, for the engine that reads remote exports.
    pub fn nbd(&self) -> Result<Arc<crate::nbd::Connection>> {
        match self {
            Handle::Nbd(c) => Ok(c.clone()),
            Handle::File(_) => Err(Error::invalid(
                "--engine nbd reads an NBD export (nbd://HOST:PORT/EXPORT or \
                 nbd+unix:///EXPORT?socket=PATH), not a local file or device",
            )),
        }
    }
}

impl From<Arc<File>> for Handle {
    fn from(f: Arc<File>) -> Handle {
        Handle::File(f)
    }
}

impl From<File> for Handle {
    fn from(f: File) -> Handle {
        Handle::File(Arc::new(f))
    }
}

/// What is read, as engines and the runner need to know it.
pub trait Source: Send + Sync {
    /// How the user named it (a path, later a URL), for messages.
    fn name(&self) -> String;
    /// Bytes readable.
    fn size(&self) -> u64;
    /// O_DIRECT's alignment, or None when the source cannot be read around the page cache.
    fn direct(&self) -> Option<Alignment>;
    /// The file id `readlab prepare` wrote in the first sector, if it did.
    fn prepared_id(&self) -> Option<u64>;
    /// Whether the sector at `offset` belongs to the same prepared image.
    fn prepared_at(&self, offset: u64) -> bool;
    /// Open a handle for one worker.
    fn open_worker(&self, how: &WorkerOpen) -> Result<Handle>;
    /// Refuse requests of `bs` bytes at `offset` (and whole blocks after it) that the source
    /// says it cannot serve, before anything is read; the warnings for those it serves badly.
    fn check_requests(&self, _bs: u64, _offset: u64) -> Result<Vec<String>> {
        Ok(Vec::new())
    }
    /// Wake up every worker blocked on one of its handles (the run ended long ago and they
    /// still wait): they fail with `why`. Whether it could: local files cannot be woken; a
    /// remote source closes its connections.
    fn abort(&self, _why: &str) -> bool {
        false
    }
    /// The facts only a local file or device has (filesystem, sysfs), if this is one.
    fn local(&self) -> Option<&Target> {
        None
    }
    /// What a result records of the source (for a remote one: its URL, size and identity).
    fn describe(&self) -> Target;
}

impl Source for Target {
    fn name(&self) -> String {
        self.path.display().to_string()
    }

    fn size(&self) -> u64 {
        self.size
    }

    fn direct(&self) -> Option<Alignment> {
        self.direct_supported.then_some(Alignment {
            offset: self.dio_offset_align,
            memory: self.dio_mem_align,
        })
    }

    fn prepared_id(&self) -> Option<u64> {
        self.prepared_id
    }

    fn prepared_at(&self, offset: u64) -> bool {
        Target::prepared_at(self, offset)
    }

    fn open_worker(&self, how: &WorkerOpen) -> Result<Handle> {
        let f = local::open_read(&self.path, how.direct)?;
        if let Some(advice) = how.advice {
            rustix::fs::fadvise(&f, how.offset, std::num::NonZeroU64::new(how.len), advice)
                .map_err(|e| Error::io(&self.path, "posix_fadvise failed", e.into()))?;
        }
        Ok(f.into())
    }

    fn local(&self) -> Option<&Target> {
        Some(self)
    }

    fn describe(&self) -> Target {
        self.clone()
    }
}
