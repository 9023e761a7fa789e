//! What an engine is, as types the engines share: one read and its completion, the [`Engine`]
//! trait, an engine's [`EngineSpec`] and the option rows it declares, what it starts with, and the
//! helpers the engines' specs use. A leaf: the engines name it, and it names none of them, so the
//! engine table in `engine/mod.rs` can list the engines without an import cycle.

use super::options::EngineOptions;
use crate::buffer::BufferPool;
use crate::error::Result;
use crate::source::Handle;
use serde::Serialize;
use std::fs::File;
use std::sync::Arc;

/// One read: `len` bytes at `offset` of file `file` (an index into the engine's
/// [`EngineSetup::handles`]; 0 when the job reads one file) into the buffer of slot `token`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Io {
    pub token: u32,
    pub file: u16,
    pub offset: u64,
    pub len: u32,
}

impl Io {
    /// A read of the job's first (or only) file.
    pub fn new(token: u32, offset: u64, len: u32) -> Io {
        Io {
            token,
            file: 0,
            offset,
            len,
        }
    }

    /// The index of the file this I/O names among the `files` an engine (`engine`, its name in
    /// the message) opened: an engine error when it names one past them. Every queueing
    /// engine's one check of it.
    pub fn file_among(&self, files: usize, engine: &str) -> Result<usize> {
        let f = self.file as usize;
        if f >= files {
            return Err(crate::error::Error::Engine(format!(
                "{engine}: I/O {self:?} names a file past the {files} it reads"
            )));
        }
        Ok(f)
    }
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
    /// Whether [`submit_and_reap`](Engine::submit_and_reap) submits and waits in one system call
    /// (io_uring_enter does both): then the runner leaves a refill's last batch for it to submit.
    fn combines_submit_and_reap(&self) -> bool {
        false
    }
    /// Submit what is queued, then reap as [`reap_at_most`](Engine::reap_at_most) does, in one
    /// system call where the interface has one for both: a loop that refills and then waits would
    /// otherwise make two whenever nothing has completed yet. The default submits, then reaps.
    fn submit_and_reap(
        &mut self,
        min: usize,
        max: usize,
        out: &mut Vec<Completion>,
    ) -> Result<usize> {
        self.submit()?;
        self.reap_at_most(min, max, out)
    }
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

/// One engine, described by itself in its own file and listed once in
/// [`registry`](super::registry): what it is called, its label letter, what it can do, which of
/// the options it owns, and how it opens.
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
    /// (in the order labels write them), words, fio option ([`option`](super::option) reads
    /// them). An option set for another engine is refused by
    /// [`RunConfig::check`](crate::config).
    pub options: &'static [EngineOption],
    /// The order results store its options' columns in where it is not the table's, as readlab
    /// has always written them (io_uring's `fixed_files` before `fixed_bufs`, and the SQ poll
    /// thread's idle time, [`EngineOptions::SQPOLL_IDLE_MS`], after its CPU); the columns it
    /// leaves out follow in the table's order. Empty: the table's order.
    pub stored: &'static [&'static str],
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
    /// Files each worker reads (fio's `filename=a:b`): 1 for a job over one file.
    pub files: usize,
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

/// Everything an engine needs to start: what it reads, its buffers and options.
pub struct EngineSetup {
    /// What this worker reads through: one handle per file of the job (a local descriptor, or
    /// one NBD connection), in the order [`Io::file`] counts them.
    pub handles: Vec<Handle>,
    /// One slot per I/O that can be in flight (`depth` slots of `pool.slot_len()` bytes).
    pub pool: BufferPool,
    /// Most I/Os in flight at once (iodepth × blocks per request).
    pub depth: usize,
    /// Whether the handle was opened with O_DIRECT.
    pub direct: bool,
    pub options: EngineOptions,
}

impl EngineSetup {
    /// The local descriptors of every file, for engines that read local files and devices.
    pub fn files(&self) -> Result<Vec<Arc<File>>> {
        self.handles.iter().map(Handle::file).collect()
    }

    /// The one NBD connection, for the engine that reads one remote export.
    pub fn nbd(&self) -> Result<Arc<crate::nbd::Connection>> {
        match self.handles.as_slice() {
            [one] => one.nbd(),
            more => Err(crate::error::Error::invalid(format!(
                "--engine nbd reads one export per job, not {} files",
                more.len()
            ))),
        }
    }
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

/// How an option carries its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value {
    /// On or off (`--fixed-files`): set, it is 1.
    Switch,
    /// A number the label writes after the letter (`--pool-threads 8`, label `R8`); unset, it is
    /// absent (results store `null`).
    Count,
    /// A number the label leaves out (the SQ poll thread's CPU; the busy-poll budget, whose letter
    /// only says it is on), at most `u32::MAX`: `unit` is what the command line writes after it
    /// (none, or a unit of time: `us`), `bare` what the flag without a value and the letter alone
    /// mean (none: the flag needs its value), `unset` how it looks when not set.
    Setting {
        unit: &'static str,
        bare: Option<u64>,
        unset: Unset,
    },
}

/// How a [`Value::Setting`] looks when it is not set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unset {
    /// Absent (results store `null`): 0 is a value like any other (CPU 0).
    Null,
    /// 0 (results store `0`): setting it to 0 turns it off (no busy-polling).
    Zero,
}

/// One engine option, declared once in its engine's file. Its value lives in
/// [`EngineOptions`] under its column; the engine reads it through a typed view of its own.
#[derive(Debug)]
pub struct EngineOption {
    /// Its flag on the command line, without the dashes (`fixed-files`).
    pub flag: &'static str,
    /// Its letter in the label (`F`), none when labels leave it out.
    pub letter: Option<char>,
    /// What it is, in words (`fixed files`); `{n}` stands for its value (`{n} reader threads`).
    pub words: &'static str,
    /// What it does, for the command line's help (`registered file (fixed-file SQEs; fio's
    /// --registerfiles)`): the binary writes the engine's name before it.
    pub help: &'static str,
    /// fio's option for the same thing (`registerfiles`), none when fio has none.
    pub fio: Option<&'static str>,
    /// Its field in the results and its column in the report's CSV and JSON (`fixed_files`), and
    /// its key in [`EngineOptions`].
    pub column: &'static str,
    pub value: Value,
}

impl EngineOption {
    /// Its value in `o`: none when it is off or unset (a switch that is on is `Some(1)`).
    pub fn get(&self, o: &EngineOptions) -> Option<u64> {
        o.get(self.column)
    }

    /// Whether it is set (on) in `o`.
    pub fn on(&self, o: &EngineOptions) -> bool {
        o.on(self.column)
    }

    /// Set it in `o` to `n`: a switch ignores `n` (on), a setting whose unset is
    /// [`Unset::Zero`] is off at 0, and a setting is at most `u32::MAX`.
    pub fn set(&self, o: &mut EngineOptions, n: u64) {
        match self.value {
            Value::Switch => o.set(self.column, 1),
            Value::Count => o.set(self.column, n),
            Value::Setting {
                unset: Unset::Zero, ..
            } if n == 0 => o.clear(self.column),
            Value::Setting { .. } => o.set(self.column, n.min(u32::MAX as u64)),
        }
    }

    /// Unset it in `o`.
    pub fn clear(&self, o: &mut EngineOptions) {
        o.clear(self.column)
    }

    /// Set it in `o` to `n`, or unset it when `n` is none.
    pub fn put(&self, o: &mut EngineOptions, n: Option<u64>) {
        match n {
            Some(n) => self.set(o, n),
            None => self.clear(o),
        }
    }

    /// Turn a switch on or off in `o`.
    pub fn switch(&self, o: &mut EngineOptions, on: bool) {
        self.put(o, on.then_some(1))
    }

    /// The value the letter alone (and, on the command line, the flag alone) stands for: on for
    /// a switch, the setting's `bare`; none for a count, which is always written.
    pub fn bare(&self) -> Option<u64> {
        match self.value {
            Value::Switch => Some(1),
            Value::Count => None,
            Value::Setting { bare, .. } => bare,
        }
    }

    /// Its words for value `n` (`8 reader threads`, `fixed files`).
    pub fn words_for(&self, n: u64) -> String {
        self.words.replace("{n}", &n.to_string())
    }

    /// Its words when set in `o`.
    pub fn words_in(&self, o: &EngineOptions) -> Option<String> {
        self.get(o).map(|n| self.words_for(n))
    }

    /// Its flag on `readlab run`'s command line, when set in `o` (`--fixed-files`,
    /// `--pool-threads 8`, `--busy-poll=200us`).
    pub fn readlab_arg(&self, o: &EngineOptions) -> Option<String> {
        let n = self.get(o)?;
        Some(match self.value {
            Value::Switch => format!("--{}", self.flag),
            Value::Count => format!("--{} {n}", self.flag),
            Value::Setting { unit: "", .. } => format!("--{} {n}", self.flag),
            Value::Setting { unit, .. } => format!("--{}={n}{unit}", self.flag),
        })
    }

    /// Its option on fio's command line, when set in `o` and fio has it (`--registerfiles=1`).
    pub fn fio_arg(&self, o: &EngineOptions) -> Option<String> {
        let (name, n) = (self.fio?, self.get(o)?);
        Some(format!("--{name}={n}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_io_names_one_of_the_engine_s_files_or_is_refused() {
        let io = Io {
            file: 2,
            ..Io::new(7, 4096, 4096)
        };
        assert_eq!(io.file_among(3, "libaio").unwrap(), 2);
        let e = io.file_among(2, "libaio").unwrap_err().to_string();
        assert!(
            e.starts_with("libaio: I/O") && e.ends_with("names a file past the 2 it reads"),
            "{e}"
        );
    }
}
