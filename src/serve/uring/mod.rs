//! The uring model: `--threads` event loops, each with one io_uring that drives both its
//! connections' sockets (RECV of request headers, SENDMSG of header and payload together) and the
//! storage reads (READ on the target), so a thread never blocks on any one client or read. A
//! connection is negotiated on a short-lived thread of its own and then handed to the loop with
//! the fewest connections, woken through an eventfd. With few connections on a loop (at most
//! [`POLL_MAX`]) it talks to their sockets itself: a direct non-blocking `recv` when `poll` finds
//! one readable and a direct `sendmsg` of a reply, the ring taking only what the socket does not
//! (a send left partial) — one system call each instead of a trip through the ring.
//!
//! Bounds: per connection at most [`MAX_REQS`] requests and [`MAX_BYTES`] of payload in flight,
//! and across all of them the server's in-flight budget (beyond either, a connection's socket is
//! not read until replies have gone out); buffers come in size classes from a byte-capped cache
//! per thread that releases what stays unused. A connection quiet for `--idle-timeout` (nothing
//! asked, or its replies unread) is closed; one that broke the protocol gets the replies to what
//! it asked before, then is closed. A connection's state lives until every operation the kernel
//! holds on it has completed.

use super::budget::{BufCache, CACHE_CAP, CACHE_IDLE, FLOOR, PayloadBuf, class};
use super::request::{Action, ReplyHeader, block_status, classify, data_header, error_reply};
use super::thread::{Awake, SPIN_BUDGET, ZEROS, may_spin};
use super::{ClientSlot, Ctx, delay, negotiate};
use crate::error::{Error, Result};
use crate::nbd::Stream;
use crate::nbd::handshake::Session;
use crate::nbd::proto::{EIO, REQUEST_LEN, error_of_errno};
use crate::source::WorkerOpen;
use crossbeam_channel::{Receiver, Sender};
use io_uring::{IoUring, opcode, squeue, types};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::fs::File;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Requests one connection may have in flight.
pub(crate) const MAX_REQS: usize = 64;
/// Payload bytes one connection may have in flight (one largest request fits).
const MAX_BYTES: u64 = super::MAX_REQUEST as u64;
const RECV_BUF: usize = 64 << 10;
const RING: u32 = 1024;
/// Largest iovec list of one SENDMSG.
const MAX_IOV: usize = 256;
/// How often idle connections and idle cached buffers are looked for.
const SWEEP: Duration = Duration::from_millis(100);
/// How soon a connection waiting for the in-flight budget tries again.
const STARVED_RETRY: Duration = Duration::from_millis(1);
/// Up to this many connections waiting for requests, the loop sleeps in `poll` on their sockets
/// (see [`Loop::sleep_in_poll`]).
const POLL_MAX: usize = 4;

const RECV: u64 = 1;
const READ: u64 = 2;
const SEND: u64 = 3;
const WAKE: u64 = 4;

fn ud(conn: usize, kind: u64, req: usize) -> u64 {
    ((conn as u64) << 32) | (kind << 24) | req as u64
}

/// How to reach one event loop: its queue of new connections, its wake-up eventfd, and how
/// many connections it serves.
type Queue = (
    Sender<(Stream, ClientSlot, Session)>,
    Arc<OwnedFd>,
    Arc<AtomicUsize>,
);

/// The event-loop threads and how to reach them.
pub(super) struct Workers {
    queues: Vec<Queue>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Workers {
    pub(super) fn start(ctx: &Arc<Ctx>) -> Result<Workers> {
        let mut queues = Vec::new();
        let mut threads = Vec::new();
        for i in 0..ctx.cfg.threads {
            let (tx, rx) = crossbeam_channel::unbounded();
            let efd = rustix::event::eventfd(0, rustix::event::EventfdFlags::CLOEXEC)
                .map_err(|e| Error::io("eventfd", "cannot create", e.into()))?;
            let efd = Arc::new(efd);
            let load = Arc::new(AtomicUsize::new(0));
            let file = match &ctx.source {
                None => None,
                Some(s) => {
                    let how = WorkerOpen {
                        direct: ctx.cfg.direct,
                        advice: None,
                        offset: 0,
                        len: ctx.export.size,
                    };
                    Some(s.open_worker(&how)?.file()?)
                }
            };
            // Built here, driven by the loop's thread: no SINGLE_ISSUER (it binds the creator).
            let ring = IoUring::builder()
                .setup_coop_taskrun()
                .build(RING)
                .or_else(|_| IoUring::new(RING))
                .map_err(|e| Error::io("io_uring", "cannot set up a ring", e))?;
            let (c, e, l) = (ctx.clone(), efd.clone(), load.clone());
            let h = std::thread::Builder::new()
                .name(format!("rl-uring-{i}"))
                .spawn(move || {
                    delay::precise_timers();
                    Loop::new(&c, ring, file, rx, e, l).run();
                })
                .map_err(|e| Error::io("thread", "cannot start a uring thread", e))?;
            queues.push((tx, efd, load));
            threads.push(h);
        }
        Ok(Workers { queues, threads })
    }

    /// Negotiate on a thread of its own, then give the connection to the least loaded loop.
    pub(super) fn hand_over(
        &self,
        ctx: Arc<Ctx>,
        mut stream: Stream,
        slot: ClientSlot,
        id: u64,
    ) -> std::io::Result<()> {
        let (tx, efd, load) = self
            .queues
            .iter()
            .min_by_key(|q| q.2.load(Ordering::Relaxed))
            .cloned()
            .expect("at least one uring thread");
        std::thread::Builder::new()
            .name(format!("rl-hs-{id}"))
            .spawn(move || {
                let Some(session) = negotiate(&mut stream, &ctx) else {
                    return;
                };
                if ctx.stopping() {
                    return;
                }
                load.fetch_add(1, Ordering::Relaxed);
                if tx.send((stream, slot, session)).is_ok() {
                    let _ = rustix::io::write(&*efd, &1u64.to_ne_bytes());
                }
            })
            .map(|_| ())
    }

    pub(super) fn join(self) {
        for (_, efd, _) in &self.queues {
            let _ = rustix::io::write(&**efd, &1u64.to_ne_bytes());
        }
        for t in self.threads {
            let _ = t.join();
        }
    }
}

/// Which reads the loop does itself with `preadv2` instead of through the ring. A buffered read
/// that the page cache can answer costs the same either way, but a file system without
/// non-blocking reads (tmpfs, where the benchmarks keep their files) makes io_uring hand every
/// READ to an io-wq worker thread: a thread hop and a cross-CPU wake-up per request, ~3× the
/// CPU of the thread model at one client QD1. So: on tmpfs/ramfs (memory: a read never waits
/// for a device) read inline; elsewhere, buffered, try `RWF_NOWAIT` inline and give the ring only
/// what would wait (not cached); with O_DIRECT, always the ring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Inline {
    Never,
    Nowait,
    Memory,
}

const TMPFS_MAGIC: u64 = 0x0102_1994;
const RAMFS_MAGIC: u64 = 0x8584_58f6;

impl Inline {
    fn of(file: Option<&File>, direct: bool) -> Inline {
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
    fn read(&mut self, fd: RawFd, buf: &mut [u8], offset: u64) -> Option<i32> {
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

struct Req {
    cookie: u64,
    offset: u64,
    len: u32,
    error: u32,
    /// Bytes read so far.
    done: u32,
    buf: Option<PayloadBuf>,
    /// The buffer is the connection's one request outside the budget.
    floor: bool,
    /// Bytes taken from the server's in-flight budget.
    charged: u64,
    header: ReplyHeader,
}

struct Conn {
    stream: Stream,
    fd: RawFd,
    _slot: ClientSlot,
    session: Session,
    rbuf: Box<[u8]>,
    rpos: usize,
    rend: usize,
    recv_armed: bool,
    /// Waiting for a request with no RECV in the ring: the loop polls the socket itself and
    /// receives with a direct `recv` (few connections, see [`Loop::few`]).
    polled: bool,
    /// The socket may hold bytes: worth a direct `recv` before waiting.
    readable: bool,
    /// When its last bytes came (for the spin: is it the one client asking back to back?).
    heard: Instant,
    /// Payload bytes of a refused write still to drop.
    skip: u64,
    /// No more requests: the client said goodbye, left, or broke the protocol.
    no_more: bool,
    broken: bool,
    /// A broken frame: the replies to what came before go out, then the connection closes.
    hang_up: bool,
    /// Closed for being quiet for `--idle-timeout`.
    timed_out: bool,
    /// Waiting for the in-flight budget, a request in its buffer.
    starved: bool,
    /// One request of up to [`FLOOR`] bytes is outside the budget; it is in flight.
    floor_used: bool,
    /// When the socket last moved (bytes received, or a reply sent).
    last_active: Instant,
    /// When the SENDMSG in flight began: its replies must be gone within the idle timeout.
    send_since: Instant,
    reqs: Vec<Option<Box<Req>>>,
    free: Vec<usize>,
    bytes_in_flight: u64,
    /// Requests whose reply may go out, in order.
    ready: VecDeque<usize>,
    /// The SENDMSG in flight: its requests, iovecs and message header.
    sending: Vec<usize>,
    iov: Vec<libc::iovec>,
    iov_at: usize,
    msg: Box<libc::msghdr>,
    /// Operations the kernel holds on this connection.
    ops: usize,
}

impl Conn {
    fn live_reqs(&self) -> usize {
        self.reqs.len() - self.free.len()
    }
}

struct Loop<'a> {
    ctx: &'a Ctx,
    ring: IoUring,
    file: Option<Arc<File>>,
    inline: Inline,
    rx: Receiver<(Stream, ClientSlot, Session)>,
    efd: Arc<OwnedFd>,
    load: Arc<AtomicUsize>,
    wake_buf: &'static mut [u8; 8],
    conns: Vec<Option<Box<Conn>>>,
    free_conns: Vec<usize>,
    /// Reads waiting out the injected delay: (due, conn, req).
    delayed: BinaryHeap<Reverse<(Instant, usize, usize)>>,
    /// Idle buffers by size class, byte-capped, released when unused.
    cache: BufCache,
    /// Connections waiting for the in-flight budget.
    starved: Vec<usize>,
    /// When idle connections and buffers are next looked for.
    next_sweep: Instant,
    /// Connections with something to do after the completions just reaped.
    touched: Vec<usize>,
    /// When the last completion came: with `--busy-poll`, the loop spins until this is older
    /// than the budget.
    active: Instant,
    /// Spin for the next request before sleeping (see [`SPIN_BUDGET`]): the last wait was short.
    spin: bool,
    awake: Awake,
}

impl<'a> Loop<'a> {
    fn new(
        ctx: &'a Ctx,
        ring: IoUring,
        file: Option<Arc<File>>,
        rx: Receiver<(Stream, ClientSlot, Session)>,
        efd: Arc<OwnedFd>,
        load: Arc<AtomicUsize>,
    ) -> Loop<'a> {
        Loop {
            ctx,
            ring,
            inline: Inline::of(file.as_deref(), ctx.cfg.direct),
            file,
            rx,
            efd,
            load,
            // The eventfd read may still be held by the kernel when the loop ends: its 8 bytes
            // are never freed.
            wake_buf: Box::leak(Box::new([0u8; 8])),
            conns: Vec::new(),
            free_conns: Vec::new(),
            delayed: BinaryHeap::new(),
            cache: BufCache::new(CACHE_CAP),
            starved: Vec::new(),
            next_sweep: Instant::now() + SWEEP,
            touched: Vec::new(),
            active: Instant::now(),
            spin: true,
            awake: Awake::new(),
        }
    }

    fn push(&mut self, e: squeue::Entry) {
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

    fn arm_wake(&mut self) {
        let e = opcode::Read::new(
            types::Fd(self.efd.as_raw_fd()),
            self.wake_buf.as_mut_ptr(),
            8,
        )
        .build()
        .user_data(ud(0, WAKE, 0));
        self.push(e);
    }

    fn run(mut self) {
        self.arm_wake();
        let mut stopping = false;
        loop {
            if self.ctx.stopping() && !stopping {
                stopping = true;
                for i in 0..self.conns.len() {
                    if let Some(c) = self.conns[i].as_mut() {
                        c.no_more = true;
                        c.stream.shutdown();
                        self.touched.push(i);
                    }
                }
                while self.rx.try_recv().is_ok() {}
            }
            if stopping && self.conns.iter().all(|c| c.is_none()) {
                return;
            }
            let now = Instant::now();
            if now >= self.next_sweep {
                self.sweep(now);
                self.next_sweep = now + SWEEP;
            }
            for i in std::mem::take(&mut self.starved) {
                if let Some(c) = self.conns[i].as_mut() {
                    c.starved = false;
                    self.touched.push(i);
                }
            }
            self.release_due();
            self.work();
            self.wait();
            self.reap();
        }
    }

    /// Close the connections quiet for the idle timeout: nothing in flight and nothing asked, or
    /// replies the client has not read. Release the cached buffers unused for a while.
    fn sweep(&mut self, now: Instant) {
        self.cache.trim(now, CACHE_IDLE);
        let Some(idle) = self.ctx.idle() else {
            return;
        };
        for (i, c) in self.conns.iter_mut().enumerate() {
            let Some(c) = c.as_mut() else { continue };
            let asked = c.rend - c.rpos >= REQUEST_LEN;
            let quiet = c.live_reqs() == 0 && !asked && now.duration_since(c.last_active) >= idle;
            // Replies read a trickle at a time count as unread.
            let unread = !c.sending.is_empty() && now.duration_since(c.send_since) >= idle;
            if !c.no_more && (quiet || unread) {
                c.no_more = true;
                c.timed_out = true;
                c.stream.shutdown();
                self.ctx.timed_out();
                self.touched.push(i);
            }
        }
    }

    /// Submit, then wait for a completion, the next delay deadline, or 100 ms.
    fn wait(&mut self) {
        let now = Instant::now();
        let mut limit = match self.delayed.peek() {
            Some(Reverse((due, _, _))) => due.saturating_duration_since(now),
            None => Duration::from_millis(100),
        };
        if !self.starved.is_empty() {
            limit = limit.min(STARVED_RETRY + delay::SPIN);
        }
        let polling = self.active.elapsed() < self.ctx.cfg.busy_poll;
        if limit <= delay::SPIN || polling {
            self.unpoll();
            let _ = self.ring.submit();
            return; // spin: come back at once
        }
        let d = limit
            - if self.delayed.is_empty() {
                Duration::ZERO
            } else {
                delay::SPIN
            };
        // Submit first: what completes at once (a read from the page cache, a send into an
        // empty socket buffer) is reaped without a second `io_uring_enter` to wait.
        if !self.ring.submission().is_empty() {
            let _ = self.ring.submit();
        }
        if self.ring.completion().is_empty() && self.sleep_in_poll(d) {
            return; // the loop reaps what came (or comes back here)
        }
        self.unpoll();
        if !self.ring.completion().is_empty() {
            return;
        }
        let ts = types::Timespec::new()
            .sec(d.as_secs())
            .nsec(d.subsec_nanos());
        let args = types::SubmitArgs::new().timespec(&ts);
        let ring = &mut self.ring;
        let _ = self
            .awake
            .asleep(|| ring.submitter().submit_with_args(1, &args));
    }

    /// Few connections: sleep in `poll(2)` on their sockets and the ring instead of in
    /// `io_uring_enter`; false if it did not (too many connections, none waiting for a request,
    /// or a delay to wake up for). Why: a socket wakes a `poll` sleeper with a *sync* wake-up
    /// (the sender is about to sleep), which the scheduler honours by running this thread on the
    /// sender's CPU, while the ring's own RECV wakes it through task work, an ordinary wake-up
    /// that lands on the other CPU, often idle: at one client QD1 that cross-CPU wake-up (an idle
    /// vCPU leaving halt) cost more than the whole request. Nothing is lost: the ring's RECV
    /// stays armed and its completion is posted by the task work that runs as `poll` returns to
    /// user space; any other completion makes the ring fd readable or interrupts `poll` through
    /// task work; and the sleep is bounded by `d`. With one of them asking back to back it first
    /// spins for up to [`SPIN_BUDGET`], as the thread model does.
    fn sleep_in_poll(&mut self, d: Duration) -> bool {
        if !self.delayed.is_empty() {
            return false;
        }
        let mut fds = [libc::pollfd {
            fd: self.ring.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        }; POLL_MAX + 1];
        let mut polled = [usize::MAX; POLL_MAX + 1];
        let (mut n, mut recent) = (1, 0);
        let start = Instant::now();
        for (i, c) in self.conns.iter().enumerate() {
            let Some(c) = c else { continue };
            if c.recv_armed || c.polled {
                if n == fds.len() {
                    return false;
                }
                if c.polled {
                    polled[n] = i;
                }
                fds[n].fd = c.fd;
                fds[n].events = libc::POLLIN | libc::POLLRDHUP;
                n += 1;
                recent += usize::from(start.duration_since(c.heard) < Duration::from_millis(1));
            }
        }
        if n == 1 {
            return false;
        }
        let fds = &mut fds[..n];
        // One client asking back to back: spin for its next request first, polling without
        // sleeping (task work, a RECV's completion among it, runs as each poll returns).
        let spun = self.spin && recent == 1 && may_spin();
        let mut ready = false;
        while spun && !ready && start.elapsed() < SPIN_BUDGET {
            // SAFETY: `fds` is a live array of pollfd structures.
            ready = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, 0) } != 0
                || !self.ring.completion().is_empty();
            if !ready {
                std::thread::yield_now();
            }
        }
        if !ready {
            let ms = d.as_millis().clamp(1, 100) as libc::c_int;
            // SAFETY: as above.
            self.awake
                .asleep(|| unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms) });
        }
        let within = if spun { 1 } else { 2 } * SPIN_BUDGET;
        self.spin = start.elapsed() <= within;
        for (k, f) in fds.iter().enumerate() {
            if polled[k] != usize::MAX && f.revents != 0 {
                let c = self.conns[polled[k]].as_mut().unwrap();
                c.polled = false;
                c.readable = true;
                self.touched.push(polled[k]);
            }
        }
        true
    }

    fn reap(&mut self) {
        let cqes: Vec<(u64, i32)> = self
            .ring
            .completion()
            .map(|c| (c.user_data(), c.result()))
            .collect();
        if !cqes.is_empty() {
            self.active = Instant::now();
        }
        for (data, res) in cqes {
            let (conn, kind, req) = (
                (data >> 32) as usize,
                (data >> 24) & 0xff,
                (data & 0xff_ffff) as usize,
            );
            match kind {
                WAKE => {
                    self.accept_new();
                    self.arm_wake();
                }
                RECV => self.on_recv(conn, res),
                READ => self.on_read(conn, req, res),
                SEND => self.on_send(conn, res),
                _ => {}
            }
        }
    }

    fn accept_new(&mut self) {
        while let Ok((stream, slot, session)) = self.rx.try_recv() {
            if self.ctx.stopping() {
                self.load.fetch_sub(1, Ordering::Relaxed);
                continue;
            }
            let fd = stream.as_raw_fd();
            let c = Box::new(Conn {
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
            });
            let i = match self.free_conns.pop() {
                Some(i) => {
                    self.conns[i] = Some(c);
                    i
                }
                None => {
                    self.conns.push(Some(c));
                    self.conns.len() - 1
                }
            };
            self.touched.push(i);
        }
    }

    fn on_recv(&mut self, i: usize, res: i32) {
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

    fn on_read(&mut self, i: usize, r: usize, res: i32) {
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
    fn finished(&mut self, i: usize, r: usize) {
        let d = self.ctx.cfg.delay;
        if d.is_zero() {
            self.conns[i].as_mut().unwrap().ready.push_back(r);
            self.touched.push(i);
        } else {
            self.delayed.push(Reverse((Instant::now() + d, i, r)));
        }
    }

    fn release_due(&mut self) {
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

    fn on_send(&mut self, i: usize, res: i32) {
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

    fn release(&mut self, i: usize, r: usize) {
        let c = self.conns[i].as_mut().unwrap();
        let q = c.reqs[r].take().unwrap();
        c.free.push(r);
        c.bytes_in_flight -= q.len as u64;
        if q.floor {
            c.floor_used = false;
        }
        if q.charged > 0 {
            self.ctx.budget.give(q.charged);
        }
        if let Some(b) = q.buf {
            self.cache.put(b, self.active);
        }
    }

    /// Everything the touched connections can do now: parse requests, start reads and sends,
    /// receive more, or close.
    fn work(&mut self) {
        while let Some(i) = self.touched.pop() {
            if self.conns[i].is_none() {
                continue;
            }
            self.parse(i);
            let c = self.conns[i].as_mut().unwrap();
            if c.broken {
                // Nothing more goes out: drop the replies waiting to be sent.
                let waiting: Vec<usize> = c.ready.drain(..).collect();
                for r in waiting {
                    self.release(i, r);
                }
            }
            let c = self.conns[i].as_mut().unwrap();
            if c.sending.is_empty() && !c.ready.is_empty() && !c.broken {
                self.send(i);
            }
            let c = self.conns[i].as_mut().unwrap();
            let room = c.live_reqs() < MAX_REQS && c.bytes_in_flight < MAX_BYTES;
            if c.rpos == c.rend && !c.recv_armed {
                // All taken (a refused write's payload too): receive from the start again.
                c.rpos = 0;
                c.rend = 0;
            }
            let wants = !c.no_more && !c.recv_armed && !c.polled && room;
            let space = c.rend < c.rbuf.len();
            if wants && space && self.few() && self.delayed.is_empty() {
                let c = self.conns[i].as_mut().unwrap();
                if !c.readable {
                    c.polled = true; // the loop polls its socket before it sleeps
                    continue;
                }
                let space = c.rbuf.len() - c.rend;
                // SAFETY: rend < len: the pointer and length stay inside the receive buffer.
                let n = unsafe {
                    libc::recv(
                        c.fd,
                        c.rbuf.as_mut_ptr().add(c.rend) as *mut libc::c_void,
                        space,
                        libc::MSG_DONTWAIT,
                    )
                };
                let res = if n >= 0 { n as i32 } else { -errno() };
                // Less than it could take: it took all there was.
                c.readable = res > 0 && res as usize == space;
                if res == -libc::EAGAIN {
                    c.polled = true;
                } else {
                    c.ops += 1; // as if the ring had held it: on_recv takes it back
                    c.recv_armed = true;
                    self.on_recv(i, res);
                }
                continue;
            }
            if wants && space {
                self.arm_recv(i);
            }
            let c = self.conns[i].as_mut().unwrap();
            let idle = c.live_reqs() == 0 && c.sending.is_empty();
            if c.no_more && idle && c.ops == 0 {
                let c = self.conns[i].take().unwrap();
                if (c.broken || c.hang_up) && !c.timed_out {
                    self.ctx.hung_up();
                }
                self.free_conns.push(i);
                self.load.fetch_sub(1, Ordering::Relaxed);
            } else if c.no_more && idle && c.recv_armed {
                c.stream.shutdown(); // the pending receive ends, then the connection
            }
        }
    }

    /// Receive into connection `i`'s buffer through the ring.
    fn arm_recv(&mut self, i: usize) {
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
    fn unpoll(&mut self) {
        for i in 0..self.conns.len() {
            if self.conns[i].as_ref().is_some_and(|c| c.polled) {
                self.arm_recv(i);
            }
        }
    }

    /// Take the requests the receive buffer holds, as far as the bounds allow.
    fn parse(&mut self, i: usize) {
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
            if c.live_reqs() >= MAX_REQS || c.bytes_in_flight >= MAX_BYTES {
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

    /// Memory for a `len`-byte read on connection `i`: (outside the budget, bytes taken from it),
    /// or None when the budget has not got it (the connection waits, retried shortly).
    fn memory(&mut self, i: usize, len: u32) -> Option<(bool, u64)> {
        let size = class(len as usize);
        let c = self.conns[i].as_mut().unwrap();
        if !c.floor_used && size <= FLOOR {
            c.floor_used = true;
            return Some((true, 0));
        }
        if self.ctx.budget.try_take(size as u64) {
            return Some((false, size as u64));
        }
        c.starved = true;
        self.starved.push(i);
        None
    }

    /// Read what request `r` still lacks into its buffer: on this thread when that cannot wait
    /// for a device (see [`Inline`]), else through the ring.
    fn read(&mut self, i: usize, r: usize) {
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
    fn send(&mut self, i: usize) {
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

    /// Few enough connections on this loop that a system call per socket operation on its
    /// thread is cheaper than the ring's round trip (at one client QD1: one `sendmsg` instead
    /// of an `io_uring_enter` and a completion to reap).
    fn few(&self) -> bool {
        self.load.load(Ordering::Relaxed) <= POLL_MAX && self.ctx.cfg.busy_poll.is_zero()
    }

    fn send_rest(&mut self, i: usize) {
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

fn errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}
