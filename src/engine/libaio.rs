//! `libaio`: Linux native asynchronous I/O through the raw system calls (io_setup, io_submit,
//! io_getevents, io_destroy), like fio's `libaio` engine without the library.
//!
//! One aio context per worker and one preallocated `iocb` per token: `queue` fills the token's iocb,
//! `submit` hands the whole batch to the kernel in one io_submit, `reap` collects completions with
//! io_getevents into a preallocated event array. Nothing is allocated per I/O.
//!
//! Without O_DIRECT the kernel performs the read inside io_submit, so buffered libaio is synchronous
//! (the probe warns about it); it still reads correctly.

use super::spec::{Capabilities, Completion, Engine, EngineSetup, EngineSpec, Io};

pub static SPEC: EngineSpec = EngineSpec {
    name: "libaio",
    label: "A",
    fio_name: "libaio",
    words: "libaio",
    // Without O_DIRECT, io_submit performs the read itself before returning.
    capabilities: Capabilities {
        needs_direct: true,
        ..super::spec::ASYNC
    },
    options: &[],
    stored: &[],
    check: super::spec::no_check,
    variants: super::spec::plain,
    open: |s| Ok(Box::new(Libaio::new(s)?)),
};
use crate::buffer::BufferPool;
use crate::error::{Error, Result};
use std::fs::File;
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The kernel's `aio_context_t`.
type AioContext = libc::c_ulong;

/// `IOCB_CMD_PREAD` from linux/aio_abi.h.
const IOCB_CMD_PREAD: u16 = 0;

/// How long io_submit may keep answering EAGAIN while nothing is in flight before readlab gives up.
const EAGAIN_PATIENCE: Duration = Duration::from_secs(1);

/// `struct iocb` from linux/aio_abi.h (64 bytes). The kernel reads it during io_submit (and writes
/// `aio_key`); it is not needed afterwards.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
#[allow(dead_code)] // read by the kernel, not by Rust
struct Iocb {
    aio_data: u64,
    #[cfg(target_endian = "little")]
    aio_key: u32,
    aio_rw_flags: i32,
    #[cfg(target_endian = "big")]
    aio_key: u32,
    aio_lio_opcode: u16,
    aio_reqprio: i16,
    aio_fildes: u32,
    aio_buf: u64,
    aio_nbytes: u64,
    aio_offset: i64,
    aio_reserved2: u64,
    aio_flags: u32,
    aio_resfd: u32,
}

/// `struct io_event` from linux/aio_abi.h (32 bytes), written by io_getevents.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
struct IoEvent {
    /// The iocb's `aio_data`: our token.
    data: u64,
    /// Address of the iocb.
    obj: u64,
    /// Bytes read or a negative errno.
    res: i64,
    res2: i64,
}

fn errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

fn describe(errno: i32) -> std::io::Error {
    std::io::Error::from_raw_os_error(errno)
}

/// The head of the completion ring the kernel maps at the context's address (`struct aio_ring`
/// in fs/aio.c, 32 bytes), followed by `nr` io_events. Completions are read from it in user space
/// when some are there, as fio's `userspace_reap` does, so reaping what has already completed
/// costs no system call; io_getevents is called only to wait.
#[repr(C)]
#[allow(dead_code)] // the kernel's layout: some fields are only checked or never read
struct AioRing {
    id: u32,
    nr: u32,
    head: u32,
    tail: u32,
    magic: u32,
    compat_features: u32,
    incompat_features: u32,
    header_length: u32,
}

/// `AIO_RING_MAGIC` in fs/aio.c.
const AIO_RING_MAGIC: u32 = 0xa10a_10a1;

pub struct Libaio {
    ctx: AioContext,
    /// The context's completion ring can be read in user space (its magic and layout checked).
    user_ring: bool,
    /// Keeps the descriptors in `fds` open for as long as reads may use them.
    _files: Vec<Arc<File>>,
    /// Each file's descriptor, by [`Io::file`].
    fds: Vec<u32>,
    pool: BufferPool,
    /// One iocb per token; never resized, so pointers into it stay valid.
    iocbs: Vec<Iocb>,
    /// Tokens queued but not yet accepted by the kernel.
    queued: Vec<u32>,
    /// The io_submit argument, rebuilt from `queued` on each submit (capacity `depth`).
    ptrs: Vec<*mut Iocb>,
    /// io_getevents' output (`depth` entries).
    events: Vec<IoEvent>,
    /// Reads the kernel refused in io_submit itself, handed back as failed completions by `reap`.
    refused: Vec<Completion>,
    /// Reads the kernel has accepted and not yet completed.
    inflight: usize,
}

impl Libaio {
    pub fn new(setup: EngineSetup) -> Result<Self> {
        let depth = setup.depth.max(1);
        if setup.pool.slots() < depth {
            return Err(Error::Engine(format!(
                "libaio: {depth} I/Os in flight need {depth} buffers, the pool has {}",
                setup.pool.slots()
            )));
        }
        let nr = libc::c_long::try_from(depth)
            .map_err(|_| Error::Engine(format!("libaio: iodepth {depth} is too large")))?;
        let mut ctx: AioContext = 0;
        // SAFETY: io_setup writes one aio_context_t to the valid, zero-initialised `ctx`.
        let r = unsafe { libc::syscall(libc::SYS_io_setup, nr, &mut ctx as *mut AioContext) };
        if r < 0 {
            return Err(Error::Engine(setup_error(depth, errno())));
        }
        let files = setup.files()?;
        let fds = files.iter().map(|f| f.as_raw_fd() as u32).collect();
        // SAFETY: io_setup succeeded, so `ctx` is the address of the ring the kernel mapped
        // into this process, at least one page long: its 32-byte header is readable.
        let user_ring = unsafe {
            let ring = ctx as *const AioRing;
            std::ptr::read_volatile(&raw const (*ring).magic) == AIO_RING_MAGIC
                && std::ptr::read_volatile(&raw const (*ring).incompat_features) == 0
                && std::ptr::read_volatile(&raw const (*ring).header_length)
                    == std::mem::size_of::<AioRing>() as u32
        };
        Ok(Libaio {
            ctx,
            user_ring,
            _files: files,
            fds,
            pool: setup.pool,
            iocbs: vec![Iocb::default(); depth],
            queued: Vec::with_capacity(depth),
            ptrs: Vec::with_capacity(depth),
            events: vec![IoEvent::default(); depth],
            refused: Vec::with_capacity(depth),
            inflight: 0,
        })
    }

    /// io_getevents for at least `min` (at most `depth`) events into `self.events`; EINTR is retried.
    /// May return fewer than `min` when a signal arrives after some events were collected.
    fn getevents(&mut self, min: usize, max: usize) -> Result<usize> {
        let nr = self.events.len().min(max.max(min).max(1));
        let got = self.ring_reap(nr);
        if got >= min {
            return Ok(got);
        }
        let (min, nr) = (min - got, nr - got);
        loop {
            // SAFETY: `events` holds `events.len()` io_event structs and the kernel writes at most
            // that many; a null timeout means wait. `ctx` is a live context from io_setup.
            let r = unsafe {
                libc::syscall(
                    libc::SYS_io_getevents,
                    self.ctx,
                    min as libc::c_long,
                    nr as libc::c_long,
                    self.events[got..].as_mut_ptr(),
                    std::ptr::null_mut::<libc::timespec>(),
                )
            };
            if r >= 0 {
                return Ok(got + r as usize);
            }
            let e = errno();
            if e != libc::EINTR {
                return Err(Error::Engine(format!(
                    "libaio: io_getevents failed: {}",
                    describe(e)
                )));
            }
        }
    }

    /// Take up to `max` completions already in the ring into `self.events`, without a system
    /// call; how many.
    fn ring_reap(&mut self, max: usize) -> usize {
        if !self.user_ring {
            return 0;
        }
        let ring = self.ctx as *mut AioRing;
        // SAFETY: `user_ring` says `ctx` is the kernel's ring for this context, mapped for as
        // long as the context lives (until `drop`), with `nr` io_events after its header. Only
        // this thread reaps this context (io_getevents is never running for it meanwhile). The
        // kernel writes an event before it publishes the new tail (smp_wmb in aio_complete):
        // the tail is read with acquire ordering before the events it covers, and the head is
        // published with release ordering after they were copied, so the kernel never reuses an
        // entry still being read.
        unsafe {
            let nr = std::ptr::read_volatile(&raw const (*ring).nr);
            let head_at = std::sync::atomic::AtomicU32::from_ptr(&raw mut (*ring).head);
            let tail = std::sync::atomic::AtomicU32::from_ptr(&raw mut (*ring).tail)
                .load(std::sync::atomic::Ordering::Acquire);
            let mut head = head_at.load(std::sync::atomic::Ordering::Relaxed);
            if nr == 0 || head >= nr || tail >= nr {
                return 0;
            }
            let first = ring.add(1) as *const IoEvent;
            let mut n = 0;
            while head != tail && n < max {
                self.events[n] = std::ptr::read_volatile(first.add(head as usize));
                head = (head + 1) % nr;
                n += 1;
            }
            if n > 0 {
                head_at.store(head, std::sync::atomic::Ordering::Release);
            }
            n
        }
    }

    /// Turn the first `n` events into completions and give their buffers back to the pool.
    fn collect(&mut self, n: usize, out: &mut Vec<Completion>) -> Result<()> {
        self.inflight -= n;
        for ev in &self.events[..n] {
            let token = ev.data as u32;
            if ev.data >= self.iocbs.len() as u64 {
                return Err(Error::Engine(format!(
                    "libaio: the kernel returned an event for unknown token {}",
                    ev.data
                )));
            }
            // SAFETY: the kernel returned this iocb's event: its read is over.
            unsafe { self.pool.reclaim(token as usize) };
            out.push(Completion::new(token, ev.res));
        }
        Ok(())
    }
}

/// The io_setup failure, with what to do about it.
fn setup_error(depth: usize, errno: i32) -> String {
    let mut msg = format!("libaio: io_setup({depth}) failed: {}", describe(errno));
    if errno == libc::EAGAIN {
        let read = |p: &str| {
            std::fs::read_to_string(p)
                .map(|s| s.trim().to_string())
                .unwrap_or_else(|_| "?".into())
        };
        msg.push_str(&format!(
            "; this worker's {depth} aio events would exceed the system-wide limit \
             (/proc/sys/fs/aio-nr is {} of /proc/sys/fs/aio-max-nr {}; every thread's context \
             counts iodepth × blocks-per-request). Use fewer threads or a smaller iodepth, or raise \
             the limit: sysctl -w fs.aio-max-nr=1048576",
            read("/proc/sys/fs/aio-nr"),
            read("/proc/sys/fs/aio-max-nr")
        ));
    } else if errno == libc::ENOSYS {
        msg.push_str("; this kernel was built without native aio (CONFIG_AIO); use another engine");
    }
    msg
}

impl Engine for Libaio {
    fn queue(&mut self, io: Io) -> Result<()> {
        let t = io.token as usize;
        let fd = self.fds[io.file_among(self.fds.len(), "libaio")?];
        if t >= self.iocbs.len() || io.len as usize > self.pool.slot_len() {
            return Err(Error::Engine(format!(
                "libaio: I/O {io:?} does not fit {} buffers of {} B",
                self.iocbs.len(),
                self.pool.slot_len()
            )));
        }
        let buf = self.pool.lend(t);
        self.iocbs[t] = Iocb {
            aio_data: io.token as u64,
            aio_lio_opcode: IOCB_CMD_PREAD,
            aio_fildes: fd,
            aio_buf: buf as u64,
            aio_nbytes: io.len as u64,
            aio_offset: io.offset as i64,
            ..Iocb::default()
        };
        self.queued.push(io.token);
        Ok(())
    }

    fn submit(&mut self) -> Result<usize> {
        let mut submitted = 0;
        let mut eagain_since: Option<Instant> = None;
        while !self.queued.is_empty() {
            let base = self.iocbs.as_mut_ptr();
            self.ptrs.clear();
            self.ptrs
                .extend(self.queued.iter().map(|&t| base.wrapping_add(t as usize)));
            // SAFETY: `ptrs` holds `ptrs.len()` pointers to initialised iocbs inside `iocbs`
            // (tokens were bounds-checked in `queue`), which is not resized or otherwise accessed
            // during the call; each iocb's buffer is a lent pool slot of at least `aio_nbytes`
            // bytes that stays untouched until its completion is reaped (or the engine is dropped,
            // which waits for it first).
            let r = unsafe {
                libc::syscall(
                    libc::SYS_io_submit,
                    self.ctx,
                    self.ptrs.len() as libc::c_long,
                    self.ptrs.as_mut_ptr(),
                )
            };
            if r > 0 {
                let n = r as usize;
                self.inflight += n;
                submitted += n;
                if n == self.queued.len() {
                    self.queued.clear();
                } else {
                    self.queued.drain(..n);
                }
                continue;
            }
            let e = if r == 0 { libc::EAGAIN } else { errno() };
            match e {
                libc::EINTR => {}
                // Out of kernel resources: completions will free some. The next reap submits
                // the rest, after collecting what has finished.
                libc::EAGAIN | libc::ENOMEM if self.inflight > 0 => break,
                libc::EAGAIN | libc::ENOMEM => {
                    let since = *eagain_since.get_or_insert_with(Instant::now);
                    if since.elapsed() > EAGAIN_PATIENCE {
                        return Err(Error::Engine(format!(
                            "libaio: io_submit cannot submit anything ({}) although no read is in \
                             flight, for {} ms; the kernel is out of aio resources",
                            describe(e),
                            EAGAIN_PATIENCE.as_millis()
                        )));
                    }
                    std::thread::sleep(Duration::from_millis(1));
                }
                // The kernel refused the first iocb itself (bad descriptor, bad arguments): that
                // read fails with the errno like any read, and the rest are submitted.
                _ => {
                    let t = self.queued.remove(0);
                    // SAFETY: io_submit refused this iocb, so the kernel never took its buffer.
                    unsafe { self.pool.reclaim(t as usize) };
                    self.refused.push(Completion::new(t, -(e as i64)));
                }
            }
        }
        Ok(submitted)
    }

    fn reap_at_most(&mut self, min: usize, max: usize, out: &mut Vec<Completion>) -> Result<usize> {
        let start = out.len();
        out.append(&mut self.refused);
        loop {
            if self.inflight == 0 && !self.queued.is_empty() {
                self.submit()?;
                out.append(&mut self.refused);
            }
            if self.inflight == 0 {
                break;
            }
            // Never wait for more reads than the kernel holds.
            let want = min.saturating_sub(out.len() - start).min(self.inflight);
            let room = max.saturating_sub(out.len() - start).max(want);
            let n = self.getevents(want, room)?;
            self.collect(n, out)?;
            if !self.queued.is_empty() {
                self.submit()?;
                out.append(&mut self.refused);
            }
            if out.len() - start >= min {
                break;
            }
        }
        Ok(out.len() - start)
    }

    fn buffer(&self, token: u32, len: usize) -> &[u8] {
        self.pool.slot(token as usize, len)
    }

    fn features(&self) -> Vec<String> {
        let mut f = vec!["IOCB_CMD_PREAD".to_string()];
        if self.user_ring {
            f.push("user-space reap".into());
        }
        f
    }
}

impl Drop for Libaio {
    fn drop(&mut self) {
        // The buffers are freed right after this: wait for every read the kernel still holds.
        while self.inflight > 0 {
            match self.getevents(1, usize::MAX) {
                Ok(n) => {
                    let mut sink = Vec::with_capacity(n);
                    if self.collect(n, &mut sink).is_err() {
                        break;
                    }
                }
                // io_destroy below also waits for in-flight requests on current kernels.
                Err(_) => break,
            }
        }
        // SAFETY: `ctx` came from io_setup and is destroyed exactly once; io_destroy returns only
        // after every request of the context has completed.
        unsafe { libc::syscall(libc::SYS_io_destroy, self.ctx) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffer::BUF_ALIGN;
    use std::mem::{offset_of, size_of};
    use std::os::unix::fs::FileExt;

    #[test]
    fn abi_structs_match_linux_aio_abi_h() {
        assert_eq!(size_of::<Iocb>(), 64);
        assert_eq!(size_of::<IoEvent>(), 32);
        assert_eq!(offset_of!(Iocb, aio_data), 0);
        #[cfg(target_endian = "little")]
        {
            assert_eq!(offset_of!(Iocb, aio_key), 8);
            assert_eq!(offset_of!(Iocb, aio_rw_flags), 12);
        }
        assert_eq!(offset_of!(Iocb, aio_lio_opcode), 16);
        assert_eq!(offset_of!(Iocb, aio_reqprio), 18);
        assert_eq!(offset_of!(Iocb, aio_fildes), 20);
        assert_eq!(offset_of!(Iocb, aio_buf), 24);
        assert_eq!(offset_of!(Iocb, aio_nbytes), 32);
        assert_eq!(offset_of!(Iocb, aio_offset), 40);
        assert_eq!(offset_of!(Iocb, aio_reserved2), 48);
        assert_eq!(offset_of!(Iocb, aio_flags), 56);
        assert_eq!(offset_of!(Iocb, aio_resfd), 60);
        assert_eq!(offset_of!(IoEvent, data), 0);
        assert_eq!(offset_of!(IoEvent, obj), 8);
        assert_eq!(offset_of!(IoEvent, res), 16);
        assert_eq!(offset_of!(IoEvent, res2), 24);
    }

    /// A file on the real disk whose block `i` is filled with byte `i`.
    fn blocks_file(blocks: usize) -> (tempfile::NamedTempFile, File) {
        let f = tempfile::NamedTempFile::new_in(std::env::temp_dir()).unwrap();
        for i in 0..blocks {
            f.as_file()
                .write_all_at(&[i as u8; BUF_ALIGN], (i * BUF_ALIGN) as u64)
                .unwrap();
        }
        f.as_file().sync_all().unwrap();
        let direct = crate::source::local::open_read(f.path(), true).unwrap();
        (f, direct)
    }

    fn engine(file: File, depth: usize) -> Libaio {
        Libaio::new(EngineSetup {
            handles: vec![Arc::new(file).into()],
            pool: BufferPool::new(depth, BUF_ALIGN),
            depth,
            direct: true,
            options: Default::default(),
        })
        .unwrap()
    }

    fn io(token: u32, block: u64) -> Io {
        Io {
            file: 0,
            token,
            offset: block * BUF_ALIGN as u64,
            len: BUF_ALIGN as u32,
        }
    }

    #[test]
    fn reads_a_batch_into_the_right_buffers() {
        let (_f, file) = blocks_file(64);
        let mut e = engine(file, 8);
        for round in 0..4u64 {
            for t in 0..8u32 {
                e.queue(io(t, (t as u64 * 7 + round) % 64)).unwrap();
            }
            assert_eq!(e.submit().unwrap(), 8);
            let mut out = Vec::new();
            let mut got = 0;
            while got < 8 {
                got += e.reap(3.min(8 - got), &mut out).unwrap();
            }
            assert_eq!(out.len(), 8);
            let mut tokens: Vec<u32> = out.iter().map(|c| c.token).collect();
            tokens.sort();
            assert_eq!(tokens, (0..8).collect::<Vec<_>>());
            for c in &out {
                assert_eq!(c.res, BUF_ALIGN as i64);
                let block = (c.token as u64 * 7 + round) % 64;
                assert!(
                    e.buffer(c.token, BUF_ALIGN)
                        .iter()
                        .all(|&b| b == block as u8),
                    "token {} holds the wrong block",
                    c.token
                );
            }
        }
    }

    #[test]
    fn errors_and_short_reads_come_back_as_completions() {
        let (_f, file) = blocks_file(4);
        let mut e = engine(file, 2);
        // Misaligned for O_DIRECT, and past the end of the file.
        e.queue(Io {
            file: 0,
            token: 0,
            offset: 100,
            len: BUF_ALIGN as u32,
        })
        .unwrap();
        e.queue(io(1, 10)).unwrap();
        e.submit().unwrap();
        let mut out = Vec::new();
        while out.len() < 2 {
            e.reap(1, &mut out).unwrap();
        }
        out.sort_by_key(|c| c.token);
        assert_eq!(out[0], Completion::new(0, -(libc::EINVAL as i64)));
        assert_eq!(out[1], Completion::new(1, 0));
    }

    #[test]
    fn a_refused_iocb_fails_alone() {
        let (_f, file) = blocks_file(4);
        let mut e = engine(file, 3);
        e.queue(io(0, 0)).unwrap();
        e.queue(io(1, 1)).unwrap();
        e.queue(io(2, 2)).unwrap();
        // io_submit rejects an iocb whose descriptor is not open.
        e.iocbs[1].aio_fildes = u32::MAX >> 1;
        assert_eq!(e.submit().unwrap(), 2);
        let mut out = Vec::new();
        while out.len() < 3 {
            e.reap(1, &mut out).unwrap();
        }
        out.sort_by_key(|c| c.token);
        assert_eq!(out[1], Completion::new(1, -(libc::EBADF as i64)));
        assert_eq!(out[0].res, BUF_ALIGN as i64);
        assert_eq!(out[2].res, BUF_ALIGN as i64);
    }

    #[test]
    fn buffered_reads_work_too() {
        let (f, _) = blocks_file(8);
        let mut e = engine(File::open(f.path()).unwrap(), 4);
        for t in 0..4 {
            e.queue(io(t, t as u64 + 4)).unwrap();
        }
        e.submit().unwrap();
        let mut out = Vec::new();
        e.reap(4, &mut out).unwrap();
        assert_eq!(out.len(), 4);
        for c in out {
            assert!(
                e.buffer(c.token, BUF_ALIGN)
                    .iter()
                    .all(|&b| b == c.token as u8 + 4)
            );
        }
    }

    #[test]
    fn dropping_with_reads_in_flight_waits_for_them() {
        let (_f, file) = blocks_file(64);
        let mut e = engine(file, 32);
        for t in 0..32 {
            e.queue(io(t, t as u64)).unwrap();
        }
        e.submit().unwrap();
        drop(e);
    }
}
