//! Read interfaces behind one small trait, like fio's `ioengine_ops` but typed: queue I/Os carrying a
//! token, submit them, reap completions. Timing and counting live in the runner, never here.
//!
//! Synchronous interfaces implement the tiny [`SyncRead`] trait; [`SyncEngine`] adapts them. Each
//! engine lives in its own file; its [`Capabilities`] are plain data.

#[cfg(test)]
mod conformance;
#[cfg(test)]
pub(crate) mod fake;
mod libaio;
mod nbd;
mod null;
pub mod option;
mod pool;
mod posixaio;
mod psync;
mod pvsync2;
mod sync;
mod uring;

pub use sync::{SyncEngine, SyncRead};

use crate::buffer::BufferPool;
use crate::error::{Error, Result};
use crate::source::Handle;
use serde::{Deserialize, Serialize};

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

/// One engine, described by itself in its own file and listed once in [`registry`]: what it is
/// called, its label letter, what it can do, which of the options it owns, and how it opens.
pub struct EngineSpec {
    /// Its name on the command line and in results (`uring`).
    pub name: &'static str,
    /// The report's label letter, unique in the registry: `P` pread, `A` Linux aio, `U` io_uring;
    /// readlab adds `V` for preadv2, `W` for the thread pool, `X` for POSIX aio and `N` for null.
    pub label: &'static str,
    /// fio's `ioengine` for the same interface (fio has no thread pool or null reader of this
    /// kind: those map to `psync`).
    pub fio_name: &'static str,
    /// The interface in words, as a label's expansion starts (`io_uring`, `thread pool`).
    pub words: &'static str,
    pub capabilities: Capabilities,
    /// The options of [`EngineOptions`] this engine owns, each declared once: flag, label letter
    /// (in the order labels write them), words, fio option ([`option`] reads them). An option
    /// set for another engine is refused by [`RunConfig::check`](crate::config).
    pub options: &'static [option::EngineOption],
    /// Check its own options (beyond which engine they belong to) against the workload.
    pub check: fn(&EngineOptions, &Workload) -> Result<()>,
    /// Its feature variants worth trying on their own, as (flags, options): `("", default)` first,
    /// then e.g. `("--fixed-bufs", …)`. The probe's table and the conformance suite run each.
    pub variants: fn() -> Vec<(&'static str, EngineOptions)>,
    /// Create one worker's engine.
    pub open: fn(EngineSetup) -> Result<Box<dyn Engine>>,
}

/// Only the default options.
pub(crate) fn plain() -> Vec<(&'static str, EngineOptions)> {
    vec![("", EngineOptions::default())]
}

/// The default options changed by `f`.
pub(crate) fn with(f: impl FnOnce(&mut EngineOptions)) -> EngineOptions {
    let mut o = EngineOptions::default();
    f(&mut o);
    o
}

/// What of a run's configuration an engine checks its options against.
#[derive(Debug, Clone, Copy)]
pub struct Workload {
    pub direct: bool,
    pub iodepth: usize,
    pub blocks_per_request: usize,
    /// Worker threads (each with its own engine), for engines that start threads of their own.
    pub threads: usize,
}

/// The most threads one run may start, worker threads and engines' own threads together: far
/// beyond what any device needs, and short of what the system refuses (`pthread_create` EAGAIN
/// aborts a run half-started).
pub const MAX_THREADS: usize = 4096;

/// Nothing to check.
pub(crate) fn no_check(_: &EngineOptions, _: &Workload) -> Result<()> {
    Ok(())
}

/// Synchronous, one I/O in flight per thread.
pub(crate) const SYNC: Capabilities = Capabilities {
    asynchronous: false,
    needs_direct: false,
    supports_batch: false,
    does_io: true,
};

/// Keeps many I/Os in flight and submits several per call.
pub(crate) const ASYNC: Capabilities = Capabilities {
    asynchronous: true,
    needs_direct: false,
    supports_batch: true,
    does_io: true,
};

/// Every engine readlab knows, in the order tables list them. Adding an engine is one file with
/// its [`EngineSpec`] and one line here.
pub fn registry() -> &'static [&'static EngineSpec] {
    static ALL: &[&EngineSpec] = &[
        &psync::SPEC,
        &pvsync2::SPEC,
        &libaio::SPEC,
        &uring::SPEC,
        &pool::SPEC,
        &posixaio::SPEC,
        &null::SPEC,
        &nbd::SPEC,
        #[cfg(test)]
        &fake::SPEC,
    ];
    ALL
}

/// An engine, by name: a typed handle on its [`EngineSpec`], stored in results as the name.
#[derive(Clone, Copy)]
pub struct EngineKind(&'static EngineSpec);

#[allow(non_upper_case_globals)]
impl EngineKind {
    pub const Psync: EngineKind = EngineKind(&psync::SPEC);
    pub const Pvsync2: EngineKind = EngineKind(&pvsync2::SPEC);
    pub const Libaio: EngineKind = EngineKind(&libaio::SPEC);
    pub const Uring: EngineKind = EngineKind(&uring::SPEC);
    pub const Pool: EngineKind = EngineKind(&pool::SPEC);
    pub const Posixaio: EngineKind = EngineKind(&posixaio::SPEC);
    pub const Null: EngineKind = EngineKind(&null::SPEC);
}

impl EngineKind {
    /// Every registered engine.
    pub fn all() -> impl Iterator<Item = EngineKind> {
        registry().iter().map(|s| EngineKind(s))
    }

    /// Its place in the registry, for tables that list engines in the registry's order.
    pub fn index(self) -> usize {
        registry()
            .iter()
            .position(|s| s.name == self.0.name)
            .unwrap_or(usize::MAX)
    }

    pub fn spec(self) -> &'static EngineSpec {
        self.0
    }

    pub fn name(self) -> &'static str {
        self.0.name
    }

    pub fn parse(name: &str) -> Result<EngineKind> {
        EngineKind::all()
            .find(|k| k.name() == name)
            .ok_or_else(|| Error::UnknownEngine {
                name: name.into(),
                known: EngineKind::all()
                    .map(|k| k.name())
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }

    pub fn capabilities(self) -> Capabilities {
        self.0.capabilities
    }

    /// The report's label letter for this interface.
    pub fn label_prefix(self) -> &'static str {
        self.0.label
    }

    /// fio's name for the same interface.
    pub fn fio_name(self) -> &'static str {
        self.0.fio_name
    }

    /// The interface in words (`io_uring`, `thread pool`).
    pub fn words(self) -> &'static str {
        self.0.words
    }
}

impl PartialEq for EngineKind {
    fn eq(&self, other: &EngineKind) -> bool {
        self.0.name == other.0.name
    }
}

impl Eq for EngineKind {}

impl std::hash::Hash for EngineKind {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.0.name.hash(h)
    }
}

impl std::fmt::Debug for EngineKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "EngineKind({})", self.0.name)
    }
}

impl Serialize for EngineKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.0.name)
    }
}

impl<'de> Deserialize<'de> for EngineKind {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<EngineKind, D::Error> {
        let name = String::deserialize(d)?;
        EngineKind::parse(&name).map_err(serde::de::Error::custom)
    }
}

/// Engine options that only some engines understand: each engine's own typed options, stored
/// flat (`"fixed_files": true`, …) as readlab has always written them.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct EngineOptions {
    #[serde(flatten)]
    pub pvsync2: pvsync2::Pvsync2Options,
    #[serde(flatten)]
    pub uring: uring::UringOptions,
    #[serde(flatten)]
    pub pool: pool::PoolOptions,
    #[serde(flatten)]
    pub nbd: nbd::NbdOptions,
}

pub use nbd::NbdOptions;
pub use pool::PoolOptions;
pub use pvsync2::Pvsync2Options;
pub use uring::UringOptions;

/// Everything an engine needs to start: what it reads, its buffers and options.
pub struct EngineSetup {
    /// What this worker reads through (a local descriptor today).
    pub handle: Handle,
    /// One slot per I/O that can be in flight (`depth` slots of `pool.slot_len()` bytes).
    pub pool: BufferPool,
    /// Most I/Os in flight at once (iodepth × blocks per request).
    pub depth: usize,
    /// Whether the handle was opened with O_DIRECT.
    pub direct: bool,
    pub options: EngineOptions,
}

/// Create an engine of `kind` for one worker thread.
pub fn open(kind: EngineKind, setup: EngineSetup) -> Result<Box<dyn Engine>> {
    (kind.0.open)(setup)
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
