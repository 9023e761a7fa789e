//! `pool`: the submitting thread hands each read to one of N reader threads doing pread(2), what
//! glibc's POSIX AIO and many applications do. The reader times the pread itself, so the runner
//! can split each I/O's latency into the read and the hand-off (queueing, wake-ups, cache
//! traffic) around it.
//!
//! No unsafe code: every slot owns its own page-aligned [`AlignedBuf`], which travels to a reader
//! inside the job and comes back inside the completion. While a read is in flight the engine
//! simply does not hold its buffer, so nothing can look at it.

#![forbid(unsafe_code)]

use super::options::EngineOptions;
use super::spec::{
    Capabilities, Completion, Engine, EngineOption, EngineSetup, EngineSpec, Io, Value,
};

/// `R<n>`: n reader threads, when set apart from the default (one per queue slot).
const POOL_THREADS: EngineOption = EngineOption {
    flag: "pool-threads",
    letter: Some('R'),
    words: "{n} reader threads",
    help: "reader threads behind the submitting thread (default: iodepth)",
    fio: None,
    column: "pool_threads",
    value: Value::Count,
};

pub static SPEC: EngineSpec = EngineSpec {
    name: "pool",
    label: "W",
    fio_name: "psync",
    words: "thread pool",
    capabilities: Capabilities {
        supports_batch: false,
        ..super::spec::ASYNC
    },
    options: &[POOL_THREADS],
    stored: &[],
    check: |o, w| {
        let o = PoolOptions::of(o);
        if o.pool_threads == Some(0) {
            return Err(crate::error::Error::invalid(
                "--pool-threads must be at least 1",
            ));
        }
        // Every worker starts its own readers: the process holds workers × (1 + readers).
        let readers = o.pool_threads.unwrap_or(w.iodepth);
        let total = readers.saturating_add(1).saturating_mul(w.threads);
        if total > super::spec::MAX_THREADS {
            return Err(crate::error::Error::invalid(format!(
                "{} worker(s) with {readers} reader threads each make {total} threads; readlab \
                 starts at most {}: use fewer --pool-threads{} or --numjobs",
                w.threads,
                super::spec::MAX_THREADS,
                if o.pool_threads.is_none() {
                    " (the default is --iodepth)"
                } else {
                    ""
                }
            )));
        }
        Ok(())
    },
    variants: super::spec::plain,
    open: |s| Ok(Box::new(Pool::new(s)?)),
};

/// The pool's options, typed: what its rows hold in an [`EngineOptions`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PoolOptions {
    /// Worker threads doing the reads (default: iodepth).
    pub pool_threads: Option<usize>,
}

impl PoolOptions {
    /// The pool's options in `o`.
    pub fn of(o: &EngineOptions) -> Self {
        PoolOptions {
            pool_threads: POOL_THREADS.get(o).map(|n| n as usize),
        }
    }

    /// Write them into `o`, leaving other engines' options as they are.
    pub fn write(&self, o: &mut EngineOptions) {
        POOL_THREADS.put(o, self.pool_threads.map(|n| n as u64));
    }

    /// Change them in `o` with `f`.
    pub fn edit(o: &mut EngineOptions, f: impl FnOnce(&mut Self)) {
        let mut v = Self::of(o);
        f(&mut v);
        v.write(o);
    }
}

use crate::buffer::AlignedBuf;
use crate::error::{Error, Result};
use crossbeam_channel::{Receiver, Sender};
use std::fs::File;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

/// Stack of a reader thread: it only calls pread.
const READER_STACK: usize = 256 << 10;

/// A read on its way to a reader thread, carrying the buffer it reads into.
struct Job {
    token: u32,
    /// Which of the job's files (an index into the readers' files).
    file: u16,
    offset: u64,
    len: u32,
    buf: AlignedBuf,
}

/// A finished read on its way back, with the buffer.
struct Done {
    token: u32,
    res: i64,
    service_ns: u64,
    buf: AlignedBuf,
}

pub struct Pool {
    /// Shared job queue of all readers; `None` once closed (in drop).
    jobs: Option<Sender<Job>>,
    done: Receiver<Done>,
    /// Slot `i` holds token `i`'s buffer while no read of it is in flight.
    slots: Vec<Option<AlignedBuf>>,
    /// Queued by `queue`, sent by `submit`.
    queued: Vec<Job>,
    in_flight: usize,
    readers: Vec<JoinHandle<()>>,
    /// How many files the readers read (an [`Io::file`] past them is refused at `queue`).
    files: usize,
}

impl Pool {
    pub fn new(setup: EngineSetup) -> Result<Self> {
        let files = Arc::new(setup.files()?);
        let slots = setup.pool.slots();
        let slot_len = setup.pool.slot_len();
        // Each slot gets its own buffer instead of a piece of the shared region.
        drop(setup.pool);
        let threads = PoolOptions::of(&setup.options)
            .pool_threads
            .unwrap_or(setup.depth)
            .max(1);
        // Bounded to the number of slots: at most `slots` jobs and completions exist at once, so
        // neither side ever blocks on a full channel, and the array channel never allocates per
        // message.
        let (job_tx, job_rx) = crossbeam_channel::bounded::<Job>(slots);
        let (done_tx, done_rx) = crossbeam_channel::bounded::<Done>(slots);
        let mut pool = Pool {
            jobs: Some(job_tx),
            done: done_rx,
            slots: (0..slots)
                .map(|_| Some(AlignedBuf::new(slot_len)))
                .collect(),
            queued: Vec::with_capacity(slots),
            in_flight: 0,
            readers: Vec::with_capacity(threads),
            files: files.len(),
        };
        for i in 0..threads {
            let (files, jobs, done) = (files.clone(), job_rx.clone(), done_tx.clone());
            let handle = std::thread::Builder::new()
                .name(format!("readlab-pool-{i}"))
                .stack_size(READER_STACK)
                .spawn(move || reader(&files, &jobs, &done))
                // On failure `pool` is dropped here, which stops and joins the readers started.
                .map_err(|e| Error::Engine(format!("pool: cannot start reader thread {i}: {e}")))?;
            pool.readers.push(handle);
        }
        Ok(pool)
    }

    fn readers_gone() -> Error {
        Error::Engine("pool: every reader thread has exited".into())
    }

    fn complete(&mut self, d: Done, out: &mut Vec<Completion>) {
        self.slots[d.token as usize] = Some(d.buf);
        self.in_flight -= 1;
        out.push(Completion {
            token: d.token,
            res: d.res,
            service_ns: d.service_ns,
        });
    }
}

/// One reader thread: pread each job into its own buffer and send it back, until the job queue
/// is closed and empty.
fn reader(files: &[Arc<File>], jobs: &Receiver<Job>, done: &Sender<Done>) {
    for mut job in jobs.iter() {
        let file = &*files[job.file as usize];
        let len = (job.len as usize).min(job.buf.len());
        let buf = &mut job.buf[..len];
        let start = Instant::now();
        let r = loop {
            match rustix::io::pread(file, &mut *buf, job.offset) {
                Err(rustix::io::Errno::INTR) => continue,
                r => break r,
            }
        };
        // At least 1 ns: 0 means "unknown" to the runner.
        let service_ns = (start.elapsed().as_nanos() as u64).max(1);
        let res = match r {
            Ok(n) => n as i64,
            Err(e) => -(e.raw_os_error() as i64),
        };
        let d = Done {
            token: job.token,
            res,
            service_ns,
            buf: job.buf,
        };
        if done.send(d).is_err() {
            // The engine is gone; the buffer is dropped with the message.
            break;
        }
    }
}

impl Engine for Pool {
    fn queue(&mut self, io: Io) -> Result<()> {
        io.file_among(self.files, "pool")?;
        let slot = self
            .slots
            .get_mut(io.token as usize)
            .ok_or_else(|| Error::Engine(format!("pool: token {} has no slot", io.token)))?;
        let buf = slot.take().ok_or_else(|| {
            Error::Engine(format!("pool: token {} queued while in flight", io.token))
        })?;
        self.queued.push(Job {
            token: io.token,
            file: io.file,
            offset: io.offset,
            len: io.len,
            buf,
        });
        Ok(())
    }

    fn submit(&mut self) -> Result<usize> {
        let jobs = self.jobs.as_ref().expect("job queue open until drop");
        let n = self.queued.len();
        for job in self.queued.drain(..) {
            jobs.send(job).map_err(|_| Pool::readers_gone())?;
            self.in_flight += 1;
        }
        Ok(n)
    }

    fn reap_at_most(&mut self, min: usize, max: usize, out: &mut Vec<Completion>) -> Result<usize> {
        let min = min.min(self.in_flight);
        let mut n = 0;
        while n < min {
            let d = self.done.recv().map_err(|_| Pool::readers_gone())?;
            self.complete(d, out);
            n += 1;
        }
        while n < max {
            let Ok(d) = self.done.try_recv() else { break };
            self.complete(d, out);
            n += 1;
        }
        Ok(n)
    }

    fn buffer(&self, token: u32, len: usize) -> &[u8] {
        let buf = self.slots[token as usize]
            .as_deref()
            .unwrap_or_else(|| panic!("pool: slot {token} is still in flight"));
        &buf[..len.min(buf.len())]
    }

    fn features(&self) -> Vec<String> {
        vec![format!("reader_threads={}", self.readers.len())]
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        // Closing the job queue ends each reader once the jobs already sent are read; their
        // completions (and buffers) wait in `done`, which has room for all of them, and are freed
        // with it after the join.
        self.jobs = None;
        for r in self.readers.drain(..) {
            let _ = r.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffer::BufferPool;
    use std::sync::Arc;

    const BS: usize = 4096;

    fn file(blocks: usize) -> tempfile::NamedTempFile {
        crate::engine::spec::test_file(blocks, BS)
    }

    fn open(f: File, slots: usize, threads: Option<usize>) -> Pool {
        Pool::new(EngineSetup {
            handles: vec![Arc::new(f).into()],
            pool: BufferPool::new(slots, BS),
            depth: slots,
            direct: false,
            options: crate::engine::spec::with(|o| {
                PoolOptions {
                    pool_threads: threads,
                }
                .write(o)
            }),
        })
        .unwrap()
    }

    fn read_all(e: &mut Pool, blocks: &[u64]) -> Vec<Completion> {
        for (t, &b) in blocks.iter().enumerate() {
            e.queue(Io {
                file: 0,
                token: t as u32,
                offset: b * BS as u64,
                len: BS as u32,
            })
            .unwrap();
        }
        assert_eq!(e.submit().unwrap(), blocks.len());
        let mut out = Vec::new();
        while out.len() < blocks.len() {
            e.reap(1, &mut out).unwrap();
        }
        assert_eq!(out.len(), blocks.len());
        out
    }

    #[test]
    fn each_read_lands_in_its_own_slot_and_the_buffers_come_back() {
        let f = file(32);
        let mut e = open(f.reopen().unwrap(), 8, Some(3));
        assert_eq!(e.readers.len(), 3);
        for round in 0..3u64 {
            let blocks: Vec<u64> = (0..8).map(|t| (t * 3 + round) % 32).collect();
            for c in read_all(&mut e, &blocks) {
                assert_eq!(c.res, BS as i64);
                assert!(c.service_ns > 0);
                let want = blocks[c.token as usize] as u8;
                assert!(e.buffer(c.token, BS).iter().all(|&x| x == want));
            }
            assert_eq!(e.in_flight, 0);
            assert!(e.slots.iter().all(Option::is_some));
        }
    }

    #[test]
    fn reap_waits_for_min_and_default_threads_is_depth() {
        let f = file(4);
        let mut e = open(f.reopen().unwrap(), 4, None);
        assert_eq!(e.readers.len(), 4);
        for t in 0..4 {
            e.queue(Io {
                file: 0,
                token: t,
                offset: t as u64 * BS as u64,
                len: BS as u32,
            })
            .unwrap();
        }
        e.submit().unwrap();
        let mut out = Vec::new();
        let n = e.reap(4, &mut out).unwrap();
        assert_eq!((n, out.len()), (4, 4));
        // Nothing in flight: a reap asking for more returns at once.
        assert_eq!(e.reap(3, &mut out).unwrap(), 0);
    }

    #[test]
    fn a_failed_read_returns_its_errno() {
        let f = file(1);
        // Write-only: pread fails with EBADF.
        let wo = std::fs::OpenOptions::new()
            .write(true)
            .open(f.path())
            .unwrap();
        let mut e = open(wo, 2, Some(1));
        let out = read_all(&mut e, &[0]);
        assert_eq!(out[0].res, -(libc::EBADF as i64));
    }

    #[test]
    #[should_panic(expected = "in flight")]
    fn a_buffer_in_flight_cannot_be_read() {
        let f = file(1);
        let mut e = open(f.reopen().unwrap(), 1, Some(1));
        e.queue(Io {
            file: 0,
            token: 0,
            offset: 0,
            len: BS as u32,
        })
        .unwrap();
        let _ = e.buffer(0, BS);
    }

    #[test]
    fn a_token_cannot_be_queued_twice() {
        let f = file(1);
        let mut e = open(f.reopen().unwrap(), 1, Some(1));
        let io = Io {
            file: 0,
            token: 0,
            offset: 0,
            len: BS as u32,
        };
        e.queue(io).unwrap();
        assert!(e.queue(io).is_err());
    }

    #[test]
    fn drop_with_reads_in_flight_joins_the_readers() {
        let f = file(64);
        let mut e = open(f.reopen().unwrap(), 64, Some(4));
        for t in 0..64u32 {
            e.queue(Io {
                file: 0,
                token: t,
                offset: t as u64 * BS as u64,
                len: BS as u32,
            })
            .unwrap();
        }
        e.submit().unwrap();
        let done = e.done.clone();
        drop(e);
        // Every reader finished its reads before the join returned.
        assert_eq!(done.len(), 64);
    }
}
