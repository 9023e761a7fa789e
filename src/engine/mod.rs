//! Read interfaces behind one small trait, like fio's `ioengine_ops` but typed: queue I/Os carrying a
//! token, submit them, reap completions. Timing and counting live in the runner, never here.
//!
//! Synchronous interfaces implement the tiny [`SyncRead`] trait; [`SyncEngine`] adapts them. Each
//! engine lives in its own file; its [`Capabilities`] are plain data.

#[cfg(test)]
pub(crate) mod fake;
mod libaio;
mod null;
mod pool;
mod posixaio;
mod psync;
mod pvsync2;
mod sync;
mod uring;

pub use sync::{SyncEngine, SyncRead};

use crate::buffer::BufferPool;
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::sync::Arc;

/// One read: `len` bytes at `offset` into the buffer of slot `token`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Io {
    pub token: u32,
    pub offset: u64,
    pub len: u32,
}

/// A finished read: bytes read, or a negative errno (the kernel's convention).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Completion {
    pub token: u32,
    pub res: i64,
    /// Nanoseconds the read itself took, when the engine can tell it apart from hand-off (the
    /// thread pool); 0 when unknown. The runner derives the hand-off cost from it.
    pub service_ns: u64,
}

impl Completion {
    pub fn new(token: u32, res: i64) -> Completion {
        Completion {
            token,
            res,
            service_ns: 0,
        }
    }
}

/// The operations every engine offers. An engine owns the buffers its I/Os read into.
pub trait Engine {
    /// Add an I/O to the batch being built. Its buffer is slot `io.token` of the engine's pool.
    fn queue(&mut self, io: Io) -> Result<()>;
    /// Hand everything queued to the kernel; returns how many I/Os were submitted.
    fn submit(&mut self) -> Result<usize>;
    /// Wait until at least `min` I/Os have completed and append up to `max` of the completions
    /// available to `out` (`max >= min`; completions of I/Os the kernel refused at submit may come
    /// on top). The rest stay with the kernel for the next call, so a caller that refills after each
    /// small reap keeps its queue full, as fio's `iodepth_batch_complete_max` does.
    fn reap_at_most(&mut self, min: usize, max: usize, out: &mut Vec<Completion>) -> Result<usize>;
    /// Wait until at least `min` I/Os have completed and append every available completion to `out`.
    fn reap(&mut self, min: usize, out: &mut Vec<Completion>) -> Result<usize> {
        self.reap_at_most(min, usize::MAX, out)
    }
    /// The data of a completed I/O (valid until the token is queued again).
    fn buffer(&self, token: u32, len: usize) -> &[u8];
    /// Features actually in use, after any fallback (e.g. io_uring setup flags the kernel took).
    fn features(&self) -> Vec<String> {
        Vec::new()
    }
}

/// What an engine can do, as data (fio keeps the same facts in engine flags).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Capabilities {
    /// Keeps more than one I/O in flight per thread.
    pub asynchronous: bool,
    /// Only works (asynchronously) with O_DIRECT.
    pub needs_direct: bool,
    /// Submits several I/Os per system call.
    pub supports_batch: bool,
    /// Reads from the target at all (the null engine does not).
    pub does_io: bool,
}

/// The engines readlab knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EngineKind {
    Psync,
    Pvsync2,
    Libaio,
    Uring,
    Pool,
    Posixaio,
    Null,
}

impl EngineKind {
    pub const ALL: [EngineKind; 7] = [
        EngineKind::Psync,
        EngineKind::Pvsync2,
        EngineKind::Libaio,
        EngineKind::Uring,
        EngineKind::Pool,
        EngineKind::Posixaio,
        EngineKind::Null,
    ];

    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Psync => "psync",
            EngineKind::Pvsync2 => "pvsync2",
            EngineKind::Libaio => "libaio",
            EngineKind::Uring => "uring",
            EngineKind::Pool => "pool",
            EngineKind::Posixaio => "posixaio",
            EngineKind::Null => "null",
        }
    }

    pub fn parse(name: &str) -> Result<EngineKind> {
        EngineKind::ALL
            .into_iter()
            .find(|k| k.name() == name)
            .ok_or_else(|| Error::UnknownEngine {
                name: name.into(),
                known: EngineKind::ALL.map(|k| k.name()).join(", "),
            })
    }

    pub fn capabilities(self) -> Capabilities {
        let sync = Capabilities {
            asynchronous: false,
            needs_direct: false,
            supports_batch: false,
            does_io: true,
        };
        let asynchronous = Capabilities {
            asynchronous: true,
            supports_batch: true,
            ..sync
        };
        match self {
            EngineKind::Psync | EngineKind::Pvsync2 => sync,
            EngineKind::Null => Capabilities {
                does_io: false,
                ..sync
            },
            // Without O_DIRECT, io_submit performs the read itself before returning.
            EngineKind::Libaio => Capabilities {
                needs_direct: true,
                ..asynchronous
            },
            EngineKind::Uring | EngineKind::Posixaio => asynchronous,
            EngineKind::Pool => Capabilities {
                supports_batch: false,
                ..asynchronous
            },
        }
    }

    /// The report's label letter for this interface: `P` pread, `A` Linux aio, `U` io_uring;
    /// readlab adds `W` for the thread pool, `X` for POSIX aio and `N` for null.
    pub fn label_prefix(self) -> &'static str {
        match self {
            EngineKind::Psync | EngineKind::Pvsync2 => "P",
            EngineKind::Libaio => "A",
            EngineKind::Uring => "U",
            EngineKind::Pool => "W",
            EngineKind::Posixaio => "X",
            EngineKind::Null => "N",
        }
    }
}

/// Engine options that only some engines understand.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct EngineOptions {
    /// preadv2 RWF_HIPRI: poll for completion (needs a device with poll queues).
    pub hipri: bool,
    /// preadv2 RWF_NOWAIT: fail with EAGAIN instead of blocking.
    pub nowait: bool,
    /// io_uring: register the file and use fixed-file SQEs.
    pub fixed_files: bool,
    /// io_uring: register the buffer region once and use READ_FIXED.
    pub fixed_bufs: bool,
    /// io_uring: a kernel thread polls the submission queue (IORING_SETUP_SQPOLL).
    pub sqpoll: bool,
    /// io_uring: pin the SQ poll thread to this CPU.
    pub sqpoll_cpu: Option<u32>,
    /// io_uring: milliseconds the SQ poll thread spins before it sleeps.
    pub sqpoll_idle_ms: u32,
    /// io_uring: busy-poll for completions (IORING_SETUP_IOPOLL; needs device poll queues).
    pub iopoll: bool,
    /// io_uring: do not try COOP_TASKRUN / SINGLE_ISSUER / DEFER_TASKRUN / a registered ring fd.
    pub plain_setup: bool,
    /// pool: worker threads doing the reads (default: iodepth).
    pub pool_threads: Option<usize>,
}

/// Everything an engine needs to start: the opened target, its buffers and options.
pub struct EngineSetup {
    pub file: Arc<File>,
    /// One slot per I/O that can be in flight (`depth` slots of `pool.slot_len()` bytes).
    pub pool: BufferPool,
    /// Most I/Os in flight at once (iodepth × blocks per request).
    pub depth: usize,
    /// Whether the file was opened with O_DIRECT.
    pub direct: bool,
    pub options: EngineOptions,
}

/// Create an engine of `kind` for one worker thread.
pub fn open(kind: EngineKind, setup: EngineSetup) -> Result<Box<dyn Engine>> {
    Ok(match kind {
        EngineKind::Psync => Box::new(SyncEngine::new(psync::Psync::new(setup.file), setup.pool)),
        EngineKind::Pvsync2 => Box::new(SyncEngine::new(
            pvsync2::Pvsync2::new(setup.file, &setup.options),
            setup.pool,
        )),
        EngineKind::Null => Box::new(SyncEngine::new(null::Null, setup.pool)),
        EngineKind::Libaio => Box::new(libaio::Libaio::new(setup)?),
        EngineKind::Uring => Box::new(uring::Uring::new(setup)?),
        EngineKind::Pool => Box::new(pool::Pool::new(setup)?),
        EngineKind::Posixaio => Box::new(posixaio::PosixAio::new(setup)?),
    })
}

/// A temporary file of `blocks` blocks of `bs` bytes, block `b` filled with byte `b`: engine unit
/// tests read it and check each buffer landed in the right slot.
#[cfg(test)]
pub(crate) fn test_file(blocks: usize, bs: usize) -> tempfile::NamedTempFile {
    use std::io::Write;
    let mut f = tempfile::NamedTempFile::new().unwrap();
    for b in 0..blocks {
        f.write_all(&vec![b as u8; bs]).unwrap();
    }
    f.flush().unwrap();
    f
}
