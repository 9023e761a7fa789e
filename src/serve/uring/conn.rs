//! One connection of the uring model and the life of its requests: bytes received, parsed into
//! requests, read from the target (inline or through the ring), after the injected delay queued
//! as replies, and sent in one SENDMSG. The event loop (`mod.rs`) decides when each step runs.

use super::{Loop, READ, RECV, SEND, errno, ud};
use crate::nbd::Stream;
use crate::nbd::handshake::Session;
use crate::nbd::proto::{EIO, REQUEST_LEN, error_of_errno};
use crate::serve::ClientSlot;
use crate::serve::budget::PayloadBuf;
use crate::serve::request::{
    Action, ReplyHeader, block_status, classify, data_header, error_reply,
};
use crate::serve::thread::ZEROS;
use io_uring::{opcode, types};
use std::cmp::Reverse;
use std::collections::VecDeque;
use std::fs::File;
use std::os::fd::{AsRawFd, RawFd};
use std::time::Instant;

/// Requests one connection may have in flight.
pub(super) const MAX_REQS: usize = 64;
/// Payload bytes one connection may have in flight (one largest request fits).
pub(super) const MAX_BYTES: u64 = crate::serve::MAX_REQUEST as u64;
const RECV_BUF: usize = 64 << 10;
/// Largest iovec list of one SENDMSG.
const MAX_IOV: usize = 256;

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
    /// receives with a direct `recv` (few connections, see [`Loop::few`]).
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
    /// One request of up to [`FLOOR`] bytes is outside the budget; it is in flight.
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
}

impl Loop<'_> {
    pub(super) fn on_recv(&mut self, i: usize, res: i32) {
        let c = self.conns[i].as_mut().expect("live connection");
        c.ops -= 1;
        c.recv_armed = false;
        if res <= 0 {
            if res < 0 || c.rend > c.rpos || c.skip > 0 {
                // Gone in the middle of a request, or a socket error.
                c.broken = !c.no_more;
            }
            c.no_more = true;
        } else {
            c.rend += res as usize;
            c.last_active = self.active;
            c.heard = Instant::now();
        }
        self.touched.push(i);
    }

    pub(super) fn on_read(&mut self, i: usize, r: usize, res: i32) {
        let c = self.conns[i].as_mut().expect("live connection");
        c.ops -= 1;
        let q = c.reqs[r].as_mut().expect("live request");
        if res < 0 {
            q.error = error_of_errno(-res);
        } else if res == 0 {
            q.error = EIO;
        } else {
            q.done += res as u32;
            if q.done < q.len {
                // A short read: ask for the rest.
                self.read(i, r);
                return;
            }
        }
        self.finished(i, r);
    }

    /// A request's data (or error) is ready: after the injected delay, its reply may go out.
    pub(super) fn finished(&mut self, i: usize, r: usize) {
        let d = self.ctx.cfg.delay;
        if d.is_zero() {
            self.conns[i].as_mut().unwrap().ready.push_back(r);
            self.touched.push(i);
        } else {
            self.delayed.push(Reverse((Instant::now() + d, i, r)));
        }
    }

    pub(super) fn release_due(&mut self) {
        let now = Instant::now();
        while let Some(Reverse((due, i, r))) = self.delayed.peek().copied() {
            if due > now {
                break;
            }
            self.delayed.pop();
            self.conns[i].as_mut().unwrap().ready.push_back(r);
            self.touched.push(i);
        }
    }

    pub(super) fn on_send(&mut self, i: usize, res: i32) {
        let c = self.conns[i].as_mut().expect("live connection");
        c.ops -= 1;
        self.touched.push(i);
        if res < 0 {
            // The client vanished mid-reply: this connection ends, nobody else notices.
            c.no_more = true;
            c.broken = true;
            c.stream.shutdown();
            let sent = std::mem::take(&mut c.sending);
            for r in sent {
                self.release(i, r);
            }
            return;
        }
        c.last_active = self.active;
        // Advance over what was sent; a partial send goes on from there.
        let mut n = res as usize;
        while n > 0 && c.iov_at < c.iov.len() {
            let v = &mut c.iov[c.iov_at];
            let k = n.min(v.iov_len);
            // SAFETY: k ≤ iov_len, so the pointer stays inside the same buffer.
            v.iov_base = unsafe { (v.iov_base as *mut u8).add(k) } as *mut libc::c_void;
            v.iov_len -= k;
            n -= k;
            if v.iov_len == 0 {
                c.iov_at += 1;
            }
        }
        if c.iov_at < c.iov.len() {
            self.send_rest(i);
            return;
        }
        let sent = std::mem::take(&mut c.sending);
        for r in sent {
            let q = self.conns[i].as_ref().unwrap().reqs[r].as_ref().unwrap();
            if q.error != 0 {
                self.ctx.refused();
            } else if q.len > 0 {
                self.ctx.served(q.len as u64);
            }
            self.release(i, r);
        }
    }

    /// Receive into connection `i`'s buffer through the ring.
    pub(super) fn arm_recv(&mut self, i: usize) {
        let c = self.conns[i].as_mut().unwrap();
        let e = opcode::Recv::new(
            types::Fd(c.fd),
            // SAFETY: rend < len, so the pointer is inside the receive buffer.
            unsafe { c.rbuf.as_mut_ptr().add(c.rend) },
            (c.rbuf.len() - c.rend) as u32,
        )
        .build()
        .user_data(ud(i, RECV, 0));
        c.polled = false;
        c.recv_armed = true;
        c.ops += 1;
        self.push(e);
    }

    /// The loop is about to wait without polling its sockets itself: the connections it was
    /// polling receive through the ring again.
    pub(super) fn unpoll(&mut self) {
        for i in 0..self.conns.len() {
            if self.conns[i].as_ref().is_some_and(|c| c.polled) {
                self.arm_recv(i);
            }
        }
    }

    /// Take the requests the receive buffer holds, as far as the bounds allow.
    pub(super) fn parse(&mut self, i: usize) {
        let limits = self.ctx.limits;
        loop {
            let c = self.conns[i].as_mut().unwrap();
            if c.no_more && !c.broken && c.rend == c.rpos {
                return;
            }
            if c.broken || c.hang_up || c.starved {
                return;
            }
            if c.skip > 0 {
                let k = (c.skip as usize).min(c.rend - c.rpos);
                c.rpos += k;
                c.skip -= k as u64;
                if c.skip > 0 {
                    return;
                }
            }
            if c.rend - c.rpos < REQUEST_LEN {
                if c.rbuf.len() - c.rpos < REQUEST_LEN {
                    c.rbuf.copy_within(c.rpos..c.rend, 0);
                    c.rend -= c.rpos;
                    c.rpos = 0;
                }
                return;
            }
            if !c.room() {
                return;
            }
            let action = classify(&c.rbuf[c.rpos..c.rpos + REQUEST_LEN], &limits);
            // A read's memory first: without it, the request waits in the receive buffer.
            let mem = match action {
                Action::Read { len, .. } if self.file.is_some() => match self.memory(i, len) {
                    Some(m) => Some(m),
                    None => return,
                },
                _ => None,
            };
            let c = self.conns[i].as_mut().unwrap();
            c.rpos += REQUEST_LEN;
            match action {
                Action::Read {
                    cookie,
                    offset,
                    len,
                } => {
                    let r = self.new_req(i, cookie, offset, len, 0);
                    match mem {
                        Some((floor, charged)) => {
                            let buf = self.cache.get(len as usize);
                            let c = self.conns[i].as_mut().unwrap();
                            let q = c.reqs[r].as_mut().unwrap();
                            (q.buf, q.floor, q.charged) = (Some(buf), floor, charged);
                            self.read(i, r);
                        }
                        None => self.finished(i, r),
                    }
                }
                Action::Refuse { cookie, error } => {
                    let r = self.new_req(i, cookie, 0, 0, error);
                    self.conns[i].as_mut().unwrap().ready.push_back(r);
                }
                Action::BlockStatus {
                    cookie,
                    offset,
                    len,
                    flags,
                } => {
                    let r = self.new_req(i, cookie, 0, 0, 0);
                    let c = self.conns[i].as_mut().unwrap();
                    let map = self.file.as_deref();
                    let h =
                        block_status(c.session, cookie, offset, len, flags, map, limits.min_block);
                    c.reqs[r].as_mut().unwrap().header = h;
                    c.ready.push_back(r);
                }
                Action::SkipThenRefuse {
                    cookie,
                    bytes,
                    error,
                } => {
                    let r = self.new_req(i, cookie, 0, 0, error);
                    let c = self.conns[i].as_mut().unwrap();
                    c.ready.push_back(r);
                    c.skip = bytes as u64;
                }
                Action::Disconnect => {
                    let c = self.conns[i].as_mut().unwrap();
                    c.no_more = true;
                    c.rpos = c.rend;
                    return;
                }
                Action::HangUp(_) => {
                    // Answer what came before, then close.
                    let c = self.conns[i].as_mut().unwrap();
                    c.no_more = true;
                    c.hang_up = true;
                    return;
                }
            }
        }
    }

    fn new_req(&mut self, i: usize, cookie: u64, offset: u64, len: u32, error: u32) -> usize {
        let c = self.conns[i].as_mut().unwrap();
        let header = match error {
            0 => data_header(c.session, cookie, offset, len, true, true).expect("a first header"),
            e => error_reply(c.session, cookie, e),
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
        c.bytes_in_flight += len as u64;
        match c.free.pop() {
            Some(r) => {
                c.reqs[r] = Some(q);
                r
            }
            None => {
                c.reqs.push(Some(q));
                c.reqs.len() - 1
            }
        }
    }

    /// Read what request `r` still lacks into its buffer: on this thread when that cannot wait
    /// for a device (see [`Inline`]), else through the ring.
    pub(super) fn read(&mut self, i: usize, r: usize) {
        let fd = self.file.as_ref().expect("a file back end").as_raw_fd();
        let c = self.conns[i].as_mut().unwrap();
        let q = c.reqs[r].as_mut().unwrap();
        let buf = q.buf.as_mut().expect("a read has a buffer");
        if let Some(res) = self.inline.read(
            fd,
            &mut buf[q.done as usize..q.len as usize],
            q.offset + q.done as u64,
        ) {
            c.ops += 1; // as if the ring had held it: on_read takes it back
            self.on_read(i, r, res);
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
        c.ops += 1;
        self.push(e);
    }

    /// Send the ready replies (headers and payloads) in one SENDMSG.
    pub(super) fn send(&mut self, i: usize) {
        let c = self.conns[i].as_mut().unwrap();
        c.iov.clear();
        c.iov_at = 0;
        let session = c.session;
        while let Some(&r) = c.ready.front() {
            let q = c.reqs[r].as_mut().unwrap();
            let zero_pieces = if q.error == 0 && q.buf.is_none() {
                (q.len as usize).div_ceil(ZEROS.len())
            } else {
                0
            };
            if c.iov.len() + 2 + zero_pieces > MAX_IOV && !c.sending.is_empty() {
                break;
            }
            c.ready.pop_front();
            if q.error != 0 && q.len > 0 {
                // A read that failed: its header says so, no payload follows.
                q.header = error_reply(session, q.cookie, q.error);
            }
            c.iov.push(libc::iovec {
                // The kernel only reads it.
                iov_base: q.header.as_bytes().as_ptr() as *mut libc::c_void,
                iov_len: q.header.len(),
            });
            if q.error == 0 && q.len > 0 {
                match q.buf.as_mut() {
                    Some(b) => c.iov.push(libc::iovec {
                        iov_base: b.as_mut_ptr() as *mut libc::c_void,
                        iov_len: q.len as usize,
                    }),
                    None => {
                        let mut left = q.len as usize;
                        while left > 0 {
                            let k = left.min(ZEROS.len());
                            c.iov.push(libc::iovec {
                                iov_base: ZEROS.as_ptr() as *mut libc::c_void,
                                iov_len: k,
                            });
                            left -= k;
                        }
                    }
                }
            }
            c.sending.push(r);
        }
        c.send_since = self.active;
        if self.few() {
            let c = self.conns[i].as_mut().unwrap();
            // Few connections: send on this thread, without a trip through the ring; what the
            // socket does not take now goes on through the ring (see `on_send`).
            c.msg.msg_iov = c.iov.as_mut_ptr();
            c.msg.msg_iovlen = c.iov.len();
            // SAFETY: the message header points at this connection's iovecs, which point at its
            // live request buffers (or the static zeros); non-blocking, so nothing outlives it.
            let n =
                unsafe { libc::sendmsg(c.fd, &*c.msg, libc::MSG_NOSIGNAL | libc::MSG_DONTWAIT) };
            let res = if n >= 0 { n as i32 } else { -errno() };
            if res != -libc::EAGAIN {
                c.ops += 1; // as if the ring had held it: on_send takes it back
                self.on_send(i, res);
                return;
            }
        }
        self.send_rest(i);
    }

    pub(super) fn send_rest(&mut self, i: usize) {
        let c = self.conns[i].as_mut().unwrap();
        c.msg.msg_iov = c.iov[c.iov_at..].as_mut_ptr();
        c.msg.msg_iovlen = c.iov.len() - c.iov_at;
        let e = opcode::SendMsg::new(types::Fd(c.fd), &*c.msg as *const libc::msghdr)
            .flags(libc::MSG_NOSIGNAL as u32)
            .build()
            .user_data(ud(i, SEND, 0));
        c.ops += 1;
        self.push(e);
    }
}
