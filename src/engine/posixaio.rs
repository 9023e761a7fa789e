//! `posixaio`: glibc's POSIX AIO (`aio_read`, `lio_listio(LIO_NOWAIT)`, `aio_suspend`,
//! `aio_error`, `aio_return`), which runs each read as a pread(2) on a glibc helper thread.
//!
//! glibc serialises the requests of one file descriptor: a request for a descriptor that already
//! has one in progress is chained behind it and handled by the same helper thread once that read
//! finishes (rt/aio_misc.c, `__aio_enqueue_request`). Each readlab worker has one descriptor, so
//! whatever the iodepth, at most one read per worker is in the kernel at a time; a deeper queue
//! only waits longer in glibc.
//!
//! The aiocbs live in one boxed slice, one per token, allocated once: glibc keeps pointers to
//! them while requests are in flight, so they must never move, and they are only ever touched
//! through raw pointers (`UnsafeCell`) because glibc's threads write into them concurrently.
//! Buffers are lent from the [`BufferPool`] for exactly as long as the request is in flight.

use super::spec::{Completion, Engine, EngineSetup, EngineSpec, Io};

pub static SPEC: EngineSpec = EngineSpec {
    name: "posixaio",
    label: "X",
    fio_name: "posixaio",
    words: "POSIX aio",
    capabilities: super::spec::ASYNC,
    options: &[],
    stored: &[],
    check: check_depth,
    variants: super::spec::plain,
    open: |s| Ok(Box::new(PosixAio::new(s)?)),
};
use crate::buffer::BufferPool;
use crate::error::{Error, Result};
use std::cell::UnsafeCell;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::sync::Arc;

/// Most reads one worker keeps queued in glibc. glibc runs them one after another on the
/// worker's descriptor, so a deeper queue only waits longer, and every queued read must finish
/// before the run can end (glibc's reads cannot be called back): at 10,000 a 300 ms run took
/// 90 s more to drain and could not be stopped.
pub const MAX_DEPTH: usize = 256;

/// A queue glibc would only make wait longer and the run unable to end is refused.
fn check_depth(_: &super::EngineOptions, w: &super::spec::Workload) -> Result<()> {
    let depth = w.iodepth.saturating_mul(w.blocks_per_request);
    if depth > MAX_DEPTH {
        return Err(Error::invalid(format!(
            "posixaio at --iodepth {} × --blocks-per-request {} = {depth} reads queued per \
             thread: glibc runs one read per descriptor at a time, so readlab keeps at most \
             {MAX_DEPTH} (a deeper queue only waits longer and delays the end of the run); use \
             libaio or uring for deep queues, or more --numjobs",
            w.iodepth, w.blocks_per_request
        )));
    }
    Ok(())
}

/// Most aiocbs handed to one lio_listio call (glibc keeps an array of this many on its stack).
const LISTIO_CHUNK: usize = 1024;

pub struct PosixAio {
    /// Keeps the descriptors open for as long as any request may refer to them (drop waits
    /// first); a read of [`Io::file`] `f` names `files[f]`.
    files: Vec<Arc<File>>,
    pool: BufferPool,
    /// One control block per token; glibc holds pointers into this slice while reads are in flight.
    cbs: Box<[UnsafeCell<libc::aiocb>]>,
    /// A zeroed aiocb with the fields common to every read filled in.
    template: libc::aiocb,
    /// Tokens queued since the last submit.
    queued: Vec<u32>,
    /// Tokens glibc has accepted and not yet reported done.
    inflight: Vec<u32>,
    /// Submissions glibc refused, reported as failed reads at the next reap.
    refused: Vec<Completion>,
    /// Scratch lists for lio_listio and aio_suspend, allocated once.
    list: Vec<*mut libc::aiocb>,
    waitlist: Vec<*const libc::aiocb>,
}

impl PosixAio {
    pub fn new(setup: EngineSetup) -> Result<Self> {
        let slots = setup.pool.slots();
        // SAFETY: aiocb is a plain C struct of integers, pointers and a sigevent; all-zero bytes
        // is a valid value (and what C code gets from memset before filling it in).
        let mut template: libc::aiocb = unsafe { std::mem::zeroed() };
        let files = setup.files()?;
        template.aio_fildes = files[0].as_raw_fd();
        template.aio_lio_opcode = libc::LIO_READ;
        template.aio_reqprio = 0;
        template.aio_sigevent.sigev_notify = libc::SIGEV_NONE;
        Ok(PosixAio {
            cbs: (0..slots).map(|_| UnsafeCell::new(template)).collect(),
            template,
            queued: Vec::with_capacity(slots),
            inflight: Vec::with_capacity(slots),
            refused: Vec::with_capacity(slots),
            list: Vec::with_capacity(slots.min(LISTIO_CHUNK)),
            waitlist: Vec::with_capacity(slots),
            pool: setup.pool,
            files,
        })
    }

    fn cb(&self, token: u32) -> *mut libc::aiocb {
        self.cbs[token as usize].get()
    }

    /// Status of an accepted request: `None` while in progress, else its result (bytes or -errno).
    /// Collecting the result with aio_return is part of this.
    fn status(&self, token: u32) -> Result<Option<i64>> {
        let cb = self.cb(token);
        // SAFETY: cb points into `self.cbs`, which lives and stays put as long as `self`;
        // aio_error only reads the block, under glibc's request lock.
        let err = unsafe { libc::aio_error(cb) };
        match err {
            libc::EINPROGRESS => Ok(None),
            0 => {
                // SAFETY: as above; the request is complete, so glibc no longer writes the block.
                let ret = unsafe { libc::aio_return(cb) };
                Ok(Some(ret as i64))
            }
            e if e > 0 => {
                // SAFETY: as above.
                unsafe { libc::aio_return(cb) };
                Ok(Some(-(e as i64)))
            }
            _ => Err(Error::Engine(format!(
                "aio_error failed for slot {token}: {}",
                std::io::Error::last_os_error()
            ))),
        }
    }

    /// Hand one chunk of queued tokens (`self.list` holds their aiocbs) to glibc.
    fn submit_chunk(&mut self, tokens: std::ops::Range<usize>) -> Result<()> {
        let n = self.list.len();
        let r = if n == 1 {
            // SAFETY: the aiocb is filled in, its buffer is lent to it and stays valid, and the
            // block does not move until its completion is collected (the slice is never resized).
            unsafe { libc::aio_read(self.list[0]) }
        } else {
            // SAFETY: as for aio_read, for each of the `n` blocks in `list`; LIO_NOWAIT with no
            // sigevent asks for no notification.
            unsafe {
                libc::lio_listio(
                    libc::LIO_NOWAIT,
                    self.list.as_ptr(),
                    n as libc::c_int,
                    std::ptr::null_mut(),
                )
            }
        };
        if r == 0 {
            for i in tokens {
                self.inflight.push(self.queued[i]);
            }
            return Ok(());
        }
        // Some or all were refused (EAGAIN: out of resources). Every block was zeroed when it was
        // queued, so a refused one reads as "done, 0 bytes" and an accepted one as in progress
        // or done with its real result.
        let errno = std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO);
        for i in tokens {
            let token = self.queued[i];
            match self.status(token)? {
                None => self.inflight.push(token),
                Some(res) => {
                    let res = if res > 0 { res } else { -(errno as i64) };
                    // SAFETY: glibc reports this request finished (aio_error is no longer
                    // EINPROGRESS), so nothing writes its buffer any more.
                    unsafe { self.pool.reclaim(token as usize) };
                    self.refused.push(Completion::new(token, res));
                }
            }
        }
        Ok(())
    }

    /// Move every finished request from `inflight` to `out`.
    fn collect(&mut self, max: usize, out: &mut Vec<Completion>) -> Result<usize> {
        let mut n = 0;
        let mut i = 0;
        while i < self.inflight.len() && n < max {
            let token = self.inflight[i];
            match self.status(token)? {
                None => i += 1,
                Some(res) => {
                    self.inflight.swap_remove(i);
                    // SAFETY: glibc reports this request finished, so nothing writes its buffer.
                    unsafe { self.pool.reclaim(token as usize) };
                    out.push(Completion::new(token, res));
                    n += 1;
                }
            }
        }
        Ok(n)
    }

    /// Block until at least one request in `inflight` has finished (or a signal interrupts).
    fn suspend(&mut self) -> std::io::Result<()> {
        self.waitlist.clear();
        for &t in &self.inflight {
            self.waitlist.push(self.cbs[t as usize].get());
        }
        // SAFETY: every pointer is a block of `self.cbs` (live, never moved); aio_suspend reads
        // them under glibc's request lock and returns when one is no longer in progress.
        let r = unsafe {
            libc::aio_suspend(
                self.waitlist.as_ptr(),
                self.waitlist.len() as libc::c_int,
                std::ptr::null(),
            )
        };
        if r == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    }
}

impl Engine for PosixAio {
    fn queue(&mut self, io: Io) -> Result<()> {
        let t = io.token as usize;
        if t >= self.cbs.len() {
            return Err(Error::Engine(format!("posixaio: token {t} has no slot")));
        }
        let fd = self.files[io.file_among(self.files.len(), "posixaio")?].as_raw_fd();
        let offset = libc::off_t::try_from(io.offset)
            .map_err(|_| Error::Engine(format!("posixaio: offset {} too large", io.offset)))?;
        let len = (io.len as usize).min(self.pool.slot_len());
        // Panics if the slot is still in flight: then glibc may still use the block below.
        let buf = self.pool.lend(t);
        let mut cb = self.template;
        cb.aio_fildes = fd;
        cb.aio_buf = buf.cast();
        cb.aio_nbytes = len;
        cb.aio_offset = offset;
        // SAFETY: the slot was not lent (checked just above), so no request of this block is in
        // flight and nothing else reads or writes it; the pointer is valid and aligned.
        unsafe { self.cbs[t].get().write(cb) };
        self.queued.push(io.token);
        Ok(())
    }

    fn submit(&mut self) -> Result<usize> {
        let n = self.queued.len();
        let mut start = 0;
        while start < n {
            let end = (start + LISTIO_CHUNK).min(n);
            self.list.clear();
            for i in start..end {
                let cb = self.cb(self.queued[i]);
                self.list.push(cb);
            }
            let r = self.submit_chunk(start..end);
            if r.is_err() {
                self.queued.clear();
                return r.map(|_| 0);
            }
            start = end;
        }
        self.queued.clear();
        Ok(n)
    }

    fn reap_at_most(&mut self, min: usize, max: usize, out: &mut Vec<Completion>) -> Result<usize> {
        let min = min.min(self.inflight.len() + self.refused.len());
        let mut n = self.refused.len();
        out.append(&mut self.refused);
        loop {
            n += self.collect(max.max(min).saturating_sub(n), out)?;
            if n >= min {
                return Ok(n);
            }
            match self.suspend() {
                Ok(()) => {}
                Err(e) if matches!(e.raw_os_error(), Some(libc::EINTR | libc::EAGAIN)) => {}
                Err(e) => return Err(Error::Engine(format!("aio_suspend failed: {e}"))),
            }
        }
    }

    fn buffer(&self, token: u32, len: usize) -> &[u8] {
        self.pool.slot(token as usize, len)
    }
}

impl PosixAio {
    /// Cancel what glibc has not started and wait for the rest: afterwards glibc holds no
    /// pointer to any block or buffer of this engine.
    fn quiesce(&mut self) {
        for &t in &self.inflight {
            let cb = self.cbs[t as usize].get();
            // SAFETY: the block is live and was accepted by glibc for its descriptor (one of
            // `files`, still open); aio_cancel removes it if it has not started (marking it
            // ECANCELED) and otherwise leaves it running.
            unsafe { libc::aio_cancel((*cb).aio_fildes, cb) };
        }
        while !self.inflight.is_empty() {
            let mut i = 0;
            while i < self.inflight.len() {
                // SAFETY: as in `status`.
                let err = unsafe { libc::aio_error(self.cb(self.inflight[i])) };
                if err == libc::EINPROGRESS {
                    i += 1;
                } else {
                    let t = self.inflight.swap_remove(i);
                    // SAFETY: aio_error is no longer EINPROGRESS: the request is over.
                    unsafe { self.pool.reclaim(t as usize) };
                }
            }
            if !self.inflight.is_empty() {
                // Errors (EINTR) only mean another look.
                let _ = self.suspend();
            }
        }
    }
}

impl Drop for PosixAio {
    fn drop(&mut self) {
        // Nothing may be freed (blocks, buffers, the descriptor) while glibc can still write to it.
        self.quiesce();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::options::EngineOptions;

    const BS: usize = 4096;

    fn file(blocks: usize) -> tempfile::NamedTempFile {
        crate::engine::spec::test_file(blocks, BS)
    }

    fn open(f: File, slots: usize) -> PosixAio {
        PosixAio::new(EngineSetup {
            handles: vec![Arc::new(f).into()],
            pool: BufferPool::new(slots, BS),
            depth: slots,
            direct: false,
            options: EngineOptions::default(),
        })
        .unwrap()
    }

    fn queue(e: &mut PosixAio, token: u32, block: u64) {
        e.queue(Io {
            file: 0,
            token,
            offset: block * BS as u64,
            len: BS as u32,
        })
        .unwrap();
    }

    #[test]
    fn batches_and_single_reads_land_in_their_slots() {
        let f = file(32);
        let mut e = open(f.reopen().unwrap(), 8);
        for round in 0..3u64 {
            let blocks: Vec<u64> = (0..8).map(|t| (t * 5 + round) % 32).collect();
            // One lio_listio of 5, then three aio_read.
            for (t, &b) in blocks.iter().enumerate().take(5) {
                queue(&mut e, t as u32, b);
            }
            assert_eq!(e.submit().unwrap(), 5);
            for (t, &b) in blocks.iter().enumerate().skip(5) {
                queue(&mut e, t as u32, b);
                assert_eq!(e.submit().unwrap(), 1);
            }
            let mut out = Vec::new();
            let n = e.reap(8, &mut out).unwrap();
            assert_eq!((n, out.len()), (8, 8));
            for c in &out {
                assert_eq!(c.res, BS as i64);
                let want = blocks[c.token as usize] as u8;
                assert!(e.buffer(c.token, BS).iter().all(|&x| x == want));
            }
            assert!(e.inflight.is_empty());
            // Nothing in flight: a reap asking for more returns at once.
            assert_eq!(e.reap(2, &mut out).unwrap(), 0);
        }
    }

    #[test]
    fn a_failed_read_returns_its_errno() {
        let f = file(1);
        let wo = std::fs::OpenOptions::new()
            .write(true)
            .open(f.path())
            .unwrap();
        let mut e = open(wo, 2);
        queue(&mut e, 0, 0);
        queue(&mut e, 1, 0);
        e.submit().unwrap();
        let mut out = Vec::new();
        e.reap(2, &mut out).unwrap();
        assert_eq!(out.len(), 2);
        assert!(
            out.iter().all(|c| c.res == -(libc::EBADF as i64)),
            "{out:?}"
        );
    }

    #[test]
    fn drop_cancels_or_waits_for_reads_in_flight() {
        let f = file(256);
        let mut e = open(f.reopen().unwrap(), 256);
        for t in 0..256u32 {
            queue(&mut e, t, t as u64);
        }
        e.submit().unwrap();
        assert!(!e.inflight.is_empty());
        // What drop does first: afterwards no block is in progress, each one cancelled or done.
        e.quiesce();
        assert!(e.inflight.is_empty());
        for t in 0..256u32 {
            let res = e
                .status(t)
                .unwrap()
                .expect("still in progress after quiesce");
            assert!(
                res == BS as i64 || res == -(libc::ECANCELED as i64),
                "{res}"
            );
        }
        drop(e);
    }

    #[test]
    #[should_panic(expected = "in flight")]
    fn a_buffer_in_flight_cannot_be_read() {
        let f = file(1);
        let mut e = open(f.reopen().unwrap(), 1);
        queue(&mut e, 0, 0);
        e.submit().unwrap();
        let _ = e.buffer(0, BS);
    }
}
