//! One connection of the uring model and the life of its requests: bytes received, parsed into
//! requests, read from the target (inline or through the ring), after the injected delay queued
//! as replies, and sent in one SENDMSG. The event loop (`mod.rs`) decides when each step runs;
//! a step changes its own connection and what the loop's connections share ([`Shared`]), never
//! another connection.

use super::budget::Memory;
use crate::nbd::Stream;
use crate::nbd::handshake::Session;
use crate::nbd::proto::{EIO, REQUEST_LEN, error_of_errno};
use crate::serve::budget::PayloadBuf;
use crate::serve::request::{
    Action, ReplyHeader, block_status, classify, data_header, error_reply,
};
use crate::serve::thread::ZEROS;
use crate::serve::{ClientSlot, Ctx};
use io_uring::{IoUring, opcode, squeue, types};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::fs::File;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::Arc;
use std::time::Instant;

/// Requests one connection may have in flight.
pub(super) const MAX_REQS: usize = 64;
/// Payload bytes one connection may have in flight (one largest request fits).
pub(super) const MAX_BYTES: u64 = crate::serve::MAX_REQUEST as u64;
const RECV_BUF: usize = 64 << 10;
/// Largest iovec list of one SENDMSG.
const MAX_IOV: usize = 256;

// What a completion is for (in its user data, see `ud`).
pub(super) const RECV: u64 = 1;
pub(super) const READ: u64 = 2;
pub(super) const SEND: u64 = 3;
pub(super) const WAKE: u64 = 4;

/// A completion's user data: the connection, what it is for, and the request.
pub(super) fn ud(conn: usize, kind: u64, req: usize) -> u64 {
    ((conn as u64) << 32) | (kind << 24) | req as u64
}

/// The last system call's error, as a positive errno.
pub(super) fn errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

/// Which reads the loop does itself with `preadv2` instead of through the ring. A buffered read
/// that the page cache can answer costs the same either way, but a file system without
/// non-blocking reads (tmpfs, where the benchmarks keep their files) makes io_uring hand every
/// READ to an io-wq worker thread: a thread hop and a cross-CPU wake-up per request, ~3× the
/// CPU of the thread model at one client QD1. So: on tmpfs/ramfs (memory: a read never waits
/// for a device) read inline; elsewhere, buffered, try `RWF_NOWAIT` inline and give the ring only
/// what would wait (not cached); with O_DIRECT, always the ring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Inline {
    Never,
    Nowait,
    Memory,
}

const TMPFS_MAGIC: u64 = 0x0102_1994;
const RAMFS_MAGIC: u64 = 0x8584_58f6;

impl Inline {
    pub(super) fn of(file: Option<&File>, direct: bool) -> Inline {
        let Some(f) = file else {
            return Inline::Never;
        };
        if direct {
            return Inline::Never;
        }
        match rustix::fs::fstatfs(f).map(|s| s.f_type as u64) {
            Ok(TMPFS_MAGIC | RAMFS_MAGIC) => Inline::Memory,
            _ => Inline::Nowait,
        }
    }

    /// The read's result as the ring would give it (bytes, or −errno), or None: use the ring.
    pub(super) fn read(&mut self, fd: RawFd, buf: &mut [u8], offset: u64) -> Option<i32> {
        let flags = match *self {
            Inline::Never => return None,
            Inline::Nowait => rustix::io::ReadWriteFlags::NOWAIT,
            Inline::Memory => rustix::io::ReadWriteFlags::empty(),
        };
        // SAFETY: `fd` is the loop's open target file, which outlives this call.
        let file = unsafe { rustix::fd::BorrowedFd::borrow_raw(fd) };
        let mut iov = [std::io::IoSliceMut::new(buf)];
        match rustix::io::preadv2(file, &mut iov, offset, flags) {
            Ok(n) => Some(n as i32),
            Err(rustix::io::Errno::AGAIN) => None,
            Err(rustix::io::Errno::OPNOTSUPP) => {
                *self = Inline::Never; // no RWF_NOWAIT here: the ring it is
                None
            }
            Err(e) => Some(-e.raw_os_error()),
        }
    }
}

/// What the connections of one event loop share, and what their steps use: the ring, the
/// target, the memory, and the lists the loop acts on next.
pub(super) struct Shared<'a> {
    pub(super) ctx: &'a Ctx,
    pub(super) ring: IoUring,
    pub(super) file: Option<Arc<File>>,
    pub(super) inline: Inline,
    /// Idle buffers and the connections waiting for the in-flight budget.
    pub(super) memory: Memory,
    /// Reads waiting out the injected delay: (due, conn, req).
    pub(super) delayed: BinaryHeap<Reverse<(Instant, usize, usize)>>,
    /// Connections with something to do after the completions just reaped.
    pub(super) touched: Vec<usize>,
    /// When the last completion came: with `--busy-poll`, the loop spins until this is older
    /// than the budget.
    pub(super) active: Instant,
}

impl Shared<'_> {
    pub(super) fn push(&mut self, e: squeue::Entry) {
        loop {
            // SAFETY: every entry pushed here points into memory that outlives its operation:
            // a connection's receive buffer, request buffers and message header are freed only
            // when the connection's `ops` count is back to zero, and the wake buffer is leaked.
            if unsafe { self.ring.submission().push(&e) }.is_ok() {
                return;
            }
            let _ = self.ring.submit();
        }
    }
}

pub(super) struct Req {
    pub(super) cookie: u64,
    pub(super) offset: u64,
    pub(super) len: u32,
    pub(super) error: u32,
    /// Bytes read so far.
    pub(super) done: u32,
    pub(super) buf: Option<PayloadBuf>,
    /// The buffer is the connection's one request outside the budget.
    pub(super) floor: bool,
    /// Bytes taken from the server's in-flight budget.
    pub(super) charged: u64,
    pub(super) header: ReplyHeader,
}

pub(super) struct Conn {
    pub(super) stream: Stream,
    pub(super) fd: RawFd,
    pub(super) _slot: ClientSlot,
    pub(super) session: Session,
    pub(super) rbuf: Box<[u8]>,
    pub(super) rpos: usize,
    pub(super) rend: usize,
    pub(super) recv_armed: bool,
    /// Waiting for a request with no RECV in the ring: the loop polls the socket itself and
    /// receives with a direct `recv` (few connections on the loop).
    pub(super) polled: bool,
    /// The socket may hold bytes: worth a direct `recv` before waiting.
    pub(super) readable: bool,
    /// When its last bytes came (for the spin: is it the one client asking back to back?).
    pub(super) heard: Instant,
    /// Payload bytes of a refused write still to drop.
    pub(super) skip: u64,
    /// No more requests: the client said goodbye, left, or broke the protocol.
    pub(super) no_more: bool,
    pub(super) broken: bool,
    /// A broken frame: the replies to what came before go out, then the connection closes.
    pub(super) hang_up: bool,
    /// Closed for being quiet for `--idle-timeout`.
    pub(super) timed_out: bool,
    /// Waiting for the in-flight budget, a request in its buffer.
    pub(super) starved: bool,
    /// One request of up to `FLOOR` bytes is outside the budget; it is in flight.
    pub(super) floor_used: bool,
    /// When the socket last moved (bytes received, or a reply sent).
    pub(super) last_active: Instant,
    /// When the SENDMSG in flight began: its replies must be gone within the idle timeout.
    pub(super) send_since: Instant,
    pub(super) reqs: Vec<Option<Box<Req>>>,
    pub(super) free: Vec<usize>,
    pub(super) bytes_in_flight: u64,
    /// Requests whose reply may go out, in order.
    pub(super) ready: VecDeque<usize>,
    /// The SENDMSG in flight: its requests, iovecs and message header.
    pub(super) sending: Vec<usize>,
    pub(super) iov: Vec<libc::iovec>,
    pub(super) iov_at: usize,
    pub(super) msg: Box<libc::msghdr>,
    /// Operations the kernel holds on this connection.
    pub(super) ops: usize,
}

impl Conn {
    pub(super) fn new(stream: Stream, slot: ClientSlot, session: Session) -> Box<Conn> {
        let fd = stream.as_raw_fd();
        Box::new(Conn {
            stream,
            fd,
            _slot: slot,
            session,
            rbuf: vec![0u8; RECV_BUF].into_boxed_slice(),
            rpos: 0,
            rend: 0,
            recv_armed: false,
            polled: false,
            readable: true,
            heard: Instant::now(),
            skip: 0,
            no_more: false,
            broken: false,
            hang_up: false,
            timed_out: false,
            starved: false,
            floor_used: false,
            last_active: Instant::now(),
            send_since: Instant::now(),
            reqs: Vec::new(),
            free: Vec::new(),
            bytes_in_flight: 0,
            ready: VecDeque::new(),
            sending: Vec::new(),
            iov: Vec::with_capacity(MAX_IOV),
            iov_at: 0,
            // SAFETY: msghdr is plain data; all-zero is a valid empty message.
            msg: Box::new(unsafe { std::mem::zeroed() }),
            ops: 0,
        })
    }

    pub(super) fn live_reqs(&self) -> usize {
        self.reqs.len() - self.free.len()
    }

    /// Room for another request within the connection's bounds.
    pub(super) fn room(&self) -> bool {
        self.live_reqs() < MAX_REQS && self.bytes_in_flight < MAX_BYTES
    }

    /// A RECV completed (or a direct `recv` returned): bytes received, the peer gone (0) or a
    /// socket error.
    pub(super) fn on_recv(&mut self, i: usize, res: i32, sh: &mut Shared) {
        self.ops -= 1;
        self.recv_armed = false;
        if res <= 0 {
            if res < 0 || self.rend > self.rpos || self.skip > 0 {
                // Gone in the middle of a request, or a socket error.
                self.broken = !self.no_more;
            }
            self.no_more = true;
        } else {
            self.rend += res as usize;
            self.last_active = sh.active;
            self.heard = Instant::now();
        }
        sh.touched.push(i);
    }

    /// A read of request `r` completed (in the ring or inline).
    pub(super) fn on_read(&mut self, i: usize, r: usize, res: i32, sh: &mut Shared) {
        self.ops -= 1;
        let q = self.reqs[r].as_mut().expect("live request");
        if res < 0 {
            q.error = error_of_errno(-res);
        } else if res == 0 {
            q.error = EIO;
        } else {
            q.done += res as u32;
            if q.done < q.len {
                // A short read: ask for the rest.
                self.read(i, r, sh);
                return;
            }
        }
        self.finished(i, r, sh);
    }

    /// A request's data (or error) is ready: after the injected delay, its reply may go out.
    fn finished(&mut self, i: usize, r: usize, sh: &mut Shared) {
        let d = sh.ctx.cfg.delay;
        if d.is_zero() {
            self.ready.push_back(r);
            sh.touched.push(i);
        } else {
            sh.delayed.push(Reverse((Instant::now() + d, i, r)));
        }
    }

    /// A SENDMSG completed (or a direct `sendmsg` returned): the rest of a partial send goes on;
    /// the requests sent are counted and released.
    pub(super) fn on_send(&mut self, i: usize, res: i32, sh: &mut Shared) {
        self.ops -= 1;
        sh.touched.push(i);
        if res < 0 {
            // The client vanished mid-reply: this connection ends, nobody else notices.
            self.no_more = true;
            self.broken = true;
            self.stream.shutdown();
            let sent = std::mem::take(&mut self.sending);
            for r in sent {
                self.release(r, sh);
            }
            return;
        }
        self.last_active = sh.active;
        // Advance over what was sent; a partial send goes on from there.
        let mut n = res as usize;
        while n > 0 && self.iov_at < self.iov.len() {
            let v = &mut self.iov[self.iov_at];
            let k = n.min(v.iov_len);
            // SAFETY: k ≤ iov_len, so the pointer stays inside the same buffer.
            v.iov_base = unsafe { (v.iov_base as *mut u8).add(k) } as *mut libc::c_void;
            v.iov_len -= k;
            n -= k;
            if v.iov_len == 0 {
                self.iov_at += 1;
            }
        }
        if self.iov_at < self.iov.len() {
            self.send_rest(i, sh);
            return;
        }
        let sent = std::mem::take(&mut self.sending);
        for r in sent {
            let q = self.reqs[r].as_ref().unwrap();
            if q.error != 0 {
                sh.ctx.refused();
            } else if q.len > 0 {
                sh.ctx.served(q.len as u64);
            }
            self.release(r, sh);
        }
    }

    /// Request `r` is done with: its slot, its bytes and its memory go back.
    pub(super) fn release(&mut self, r: usize, sh: &mut Shared) {
        let q = self.reqs[r].take().unwrap();
        self.free.push(r);
        self.bytes_in_flight -= q.len as u64;
        if q.floor {
            self.floor_used = false;
        }
        sh.memory.give(&sh.ctx.budget, q.charged, q.buf, sh.active);
    }

    /// Receive into the buffer through the ring.
    pub(super) fn arm_recv(&mut self, i: usize, sh: &mut Shared) {
        let e = opcode::Recv::new(
            types::Fd(self.fd),
            // SAFETY: rend < len, so the pointer is inside the receive buffer.
            unsafe { self.rbuf.as_mut_ptr().add(self.rend) },
            (self.rbuf.len() - self.rend) as u32,
        )
        .build()
        .user_data(ud(i, RECV, 0));
        self.polled = false;
        self.recv_armed = true;
        self.ops += 1;
        sh.push(e);
    }

    /// Take the requests the receive buffer holds, as far as the bounds allow.
    pub(super) fn parse(&mut self, i: usize, sh: &mut Shared) {
        let limits = sh.ctx.limits;
        loop {
            if self.no_more && !self.broken && self.rend == self.rpos {
                return;
            }
            if self.broken || self.hang_up || self.starved {
                return;
            }
            if self.skip > 0 {
                let k = (self.skip as usize).min(self.rend - self.rpos);
                self.rpos += k;
                self.skip -= k as u64;
                if self.skip > 0 {
                    return;
                }
            }
            if self.rend - self.rpos < REQUEST_LEN {
                if self.rbuf.len() - self.rpos < REQUEST_LEN {
                    self.rbuf.copy_within(self.rpos..self.rend, 0);
                    self.rend -= self.rpos;
                    self.rpos = 0;
                }
                return;
            }
            if !self.room() {
                return;
            }
            let action = classify(&self.rbuf[self.rpos..self.rpos + REQUEST_LEN], &limits);
            // A read's memory first: without it, the request waits in the receive buffer.
            let mem = match action {
                Action::Read { len, .. } if sh.file.is_some() => match self.memory(i, len, sh) {
                    Some(m) => Some(m),
                    None => return,
                },
                _ => None,
            };
            self.rpos += REQUEST_LEN;
            match action {
                Action::Read {
                    cookie,
                    offset,
                    len,
                } => {
                    let r = self.new_req(cookie, offset, len, 0);
                    match mem {
                        Some((floor, charged)) => {
                            let buf = sh.memory.cache.get(len as usize);
                            let q = self.reqs[r].as_mut().unwrap();
                            (q.buf, q.floor, q.charged) = (Some(buf), floor, charged);
                            self.read(i, r, sh);
                        }
                        None => self.finished(i, r, sh),
                    }
                }
                Action::Refuse { cookie, error } => {
                    let r = self.new_req(cookie, 0, 0, error);
                    self.ready.push_back(r);
                }
                Action::BlockStatus {
                    cookie,
                    offset,
                    len,
                    flags,
                } => {
                    let r = self.new_req(cookie, 0, 0, 0);
                    let map = sh.file.as_deref();
                    let h = block_status(
                        self.session,
                        cookie,
                        offset,
                        len,
                        flags,
                        map,
                        limits.min_block,
                    );
                    self.reqs[r].as_mut().unwrap().header = h;
                    self.ready.push_back(r);
                }
                Action::SkipThenRefuse {
                    cookie,
                    bytes,
                    error,
                } => {
                    let r = self.new_req(cookie, 0, 0, error);
                    self.ready.push_back(r);
                    self.skip = bytes as u64;
                }
                Action::Disconnect => {
                    self.no_more = true;
                    self.rpos = self.rend;
                    return;
                }
                Action::HangUp(_) => {
                    // Answer what came before, then close.
                    self.no_more = true;
                    self.hang_up = true;
                    return;
                }
            }
        }
    }

    fn new_req(&mut self, cookie: u64, offset: u64, len: u32, error: u32) -> usize {
        let header = match error {
            0 => {
                data_header(self.session, cookie, offset, len, true, true).expect("a first header")
            }
            e => error_reply(self.session, cookie, e),
        };
        let q = Box::new(Req {
            cookie,
            offset,
            len,
            error,
            done: 0,
            buf: None,
            floor: false,
            charged: 0,
            header,
        });
        self.bytes_in_flight += len as u64;
        match self.free.pop() {
            Some(r) => {
                self.reqs[r] = Some(q);
                r
            }
            None => {
                self.reqs.push(Some(q));
                self.reqs.len() - 1
            }
        }
    }

    /// Memory for a `len`-byte read: (outside the budget, bytes taken from it), or None when the
    /// budget has not got it (the connection waits, retried shortly).
    fn memory(&mut self, i: usize, len: u32, sh: &mut Shared) -> Option<(bool, u64)> {
        let m = sh.memory.take(&sh.ctx.budget, i, len, &mut self.floor_used);
        if m.is_none() {
            self.starved = true;
        }
        m
    }

    /// Read what request `r` still lacks into its buffer: on this thread when that cannot wait
    /// for a device (see [`Inline`]), else through the ring.
    fn read(&mut self, i: usize, r: usize, sh: &mut Shared) {
        let fd = sh.file.as_ref().expect("a file back end").as_raw_fd();
        let q = self.reqs[r].as_mut().unwrap();
        let buf = q.buf.as_mut().expect("a read has a buffer");
        if let Some(res) = sh.inline.read(
            fd,
            &mut buf[q.done as usize..q.len as usize],
            q.offset + q.done as u64,
        ) {
            self.ops += 1; // as if the ring had held it: on_read takes it back
            self.on_read(i, r, res, sh);
            return;
        }
        let e = opcode::Read::new(
            types::Fd(fd),
            // SAFETY: done < len = the buffer's length.
            unsafe { buf.as_mut_ptr().add(q.done as usize) },
            q.len - q.done,
        )
        .offset(q.offset + q.done as u64)
        .build()
        .user_data(ud(i, READ, r));
        self.ops += 1;
        sh.push(e);
    }

    /// Send the ready replies (headers and payloads) in one SENDMSG; with `few` connections on
    /// the loop, first straight from this thread.
    pub(super) fn send(&mut self, i: usize, few: bool, sh: &mut Shared) {
        self.iov.clear();
        self.iov_at = 0;
        let session = self.session;
        while let Some(&r) = self.ready.front() {
            let q = self.reqs[r].as_mut().unwrap();
            let zero_pieces = if q.error == 0 && q.buf.is_none() {
                (q.len as usize).div_ceil(ZEROS.len())
            } else {
                0
            };
            if self.iov.len() + 2 + zero_pieces > MAX_IOV && !self.sending.is_empty() {
                break;
            }
            self.ready.pop_front();
            if q.error != 0 && q.len > 0 {
                // A read that failed: its header says so, no payload follows.
                q.header = error_reply(session, q.cookie, q.error);
            }
            self.iov.push(libc::iovec {
                // The kernel only reads it.
                iov_base: q.header.as_bytes().as_ptr() as *mut libc::c_void,
                iov_len: q.header.len(),
            });
            if q.error == 0 && q.len > 0 {
                match q.buf.as_mut() {
                    Some(b) => self.iov.push(libc::iovec {
                        iov_base: b.as_mut_ptr() as *mut libc::c_void,
                        iov_len: q.len as usize,
                    }),
                    None => {
                        let mut left = q.len as usize;
                        while left > 0 {
                            let k = left.min(ZEROS.len());
                            self.iov.push(libc::iovec {
                                iov_base: ZEROS.as_ptr() as *mut libc::c_void,
                                iov_len: k,
                            });
                            left -= k;
                        }
                    }
                }
            }
            self.sending.push(r);
        }
        self.send_since = sh.active;
        if few {
            // Few connections: send on this thread, without a trip through the ring; what the
            // socket does not take now goes on through the ring (see `on_send`).
            self.msg.msg_iov = self.iov.as_mut_ptr();
            self.msg.msg_iovlen = self.iov.len();
            // SAFETY: the message header points at this connection's iovecs, which point at its
            // live request buffers (or the static zeros); non-blocking, so nothing outlives it.
            let n = unsafe {
                libc::sendmsg(self.fd, &*self.msg, libc::MSG_NOSIGNAL | libc::MSG_DONTWAIT)
            };
            let res = if n >= 0 { n as i32 } else { -errno() };
            if res != -libc::EAGAIN {
                self.ops += 1; // as if the ring had held it: on_send takes it back
                self.on_send(i, res, sh);
                return;
            }
        }
        self.send_rest(i, sh);
    }

    fn send_rest(&mut self, i: usize, sh: &mut Shared) {
        self.msg.msg_iov = self.iov[self.iov_at..].as_mut_ptr();
        self.msg.msg_iovlen = self.iov.len() - self.iov_at;
        let e = opcode::SendMsg::new(types::Fd(self.fd), &*self.msg as *const libc::msghdr)
            .flags(libc::MSG_NOSIGNAL as u32)
            .build()
            .user_data(ud(i, SEND, 0));
        self.ops += 1;
        sh.push(e);
    }
}
