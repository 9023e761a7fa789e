//! The uring model: `--threads` event loops, each with one io_uring that drives both its
//! connections' sockets (RECV of request headers, SENDMSG of header and payload together) and the
//! storage reads (READ on the target), so a thread never blocks on any one client or read. A
//! connection is negotiated on a short-lived thread of its own and then handed to the loop with
//! the fewest connections, woken through an eventfd. With few connections on a loop (at most
//! [`POLL_MAX`]) it talks to their sockets itself: a direct non-blocking `recv` when `poll` finds
//! one readable and a direct `sendmsg` of a reply, the ring taking only what the socket does not
//! (a send left partial) — one system call each instead of a trip through the ring.
//!
//! Bounds: per connection at most [`conn::MAX_REQS`] requests and [`conn::MAX_BYTES`] of payload
//! in flight, and across all of them the server's in-flight budget (beyond either, a connection's
//! socket is not read until replies have gone out); buffers come in size classes from a
//! byte-capped cache per thread that releases what stays unused. A connection quiet for
//! `--idle-timeout` (nothing asked, or its replies unread) is closed; one that broke the protocol
//! gets the replies to what it asked before, then is closed. A connection's state lives until
//! every operation the kernel holds on it has completed.
//!
//! This file is the event loop (wait, reap, dispatch to the connections, sweep, close); `conn` is
//! one connection, its requests' way from the bytes received to the reply sent, and what the
//! loop's connections share (`Shared`: the ring, the target, the lists the loop acts on next);
//! `budget` is the loop's memory: what a read takes from the buffer budget and what a finished
//! request gives back.

mod budget;
mod conn;

use super::budget::CACHE_IDLE;
use super::thread::{Awake, SPIN_BUDGET, may_spin};
use super::{ClientSlot, Ctx, delay, negotiate};
use crate::error::{Error, Result};
use crate::nbd::Stream;
use crate::nbd::handshake::Session;
use crate::nbd::proto::REQUEST_LEN;
use crate::source::WorkerOpen;
use budget::{Memory, STARVED_RETRY};
use conn::{Conn, Inline, READ, RECV, SEND, Shared, WAKE, errno, ud};
use crossbeam_channel::{Receiver, Sender};
use io_uring::{IoUring, opcode, types};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const RING: u32 = 1024;
/// How often idle connections and idle cached buffers are looked for.
const SWEEP: Duration = Duration::from_millis(100);
/// Up to this many connections waiting for requests, the loop sleeps in `poll` on their sockets
/// (see [`Loop::sleep_in_poll`]).
const POLL_MAX: usize = 4;

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

struct Loop<'a> {
    /// What its connections share: the ring, the target, the memory, the lists acted on next.
    sh: Shared<'a>,
    rx: Receiver<(Stream, ClientSlot, Session)>,
    efd: Arc<OwnedFd>,
    load: Arc<AtomicUsize>,
    wake_buf: &'static mut [u8; 8],
    conns: Vec<Option<Box<Conn>>>,
    free_conns: Vec<usize>,
    /// When idle connections and buffers are next looked for.
    next_sweep: Instant,
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
            sh: Shared {
                ctx,
                ring,
                inline: Inline::of(file.as_deref(), ctx.cfg.direct),
                file,
                memory: Memory::new(),
                delayed: BinaryHeap::new(),
                touched: Vec::new(),
                active: Instant::now(),
            },
            rx,
            efd,
            load,
            // The eventfd read may still be held by the kernel when the loop ends: its 8 bytes
            // are never freed.
            wake_buf: Box::leak(Box::new([0u8; 8])),
            conns: Vec::new(),
            free_conns: Vec::new(),
            next_sweep: Instant::now() + SWEEP,
            spin: true,
            awake: Awake::new(),
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
        self.sh.push(e);
    }

    fn run(mut self) {
        self.arm_wake();
        let mut stopping = false;
        loop {
            if self.sh.ctx.stopping() && !stopping {
                stopping = true;
                for i in 0..self.conns.len() {
                    if let Some(c) = self.conns[i].as_mut() {
                        c.no_more = true;
                        c.stream.shutdown();
                        self.sh.touched.push(i);
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
            for i in std::mem::take(&mut self.sh.memory.starved) {
                if let Some(c) = self.conns[i].as_mut() {
                    c.starved = false;
                    self.sh.touched.push(i);
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
        self.sh.memory.cache.trim(now, CACHE_IDLE);
        let Some(idle) = self.sh.ctx.idle() else {
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
                self.sh.ctx.timed_out();
                self.sh.touched.push(i);
            }
        }
    }

    /// Submit, then wait for a completion, the next delay deadline, or 100 ms.
    fn wait(&mut self) {
        let now = Instant::now();
        let mut limit = match self.sh.delayed.peek() {
            Some(Reverse((due, _, _))) => due.saturating_duration_since(now),
            None => Duration::from_millis(100),
        };
        if !self.sh.memory.starved.is_empty() {
            limit = limit.min(STARVED_RETRY + delay::SPIN);
        }
        let polling = self.sh.active.elapsed() < self.sh.ctx.cfg.busy_poll;
        if limit <= delay::SPIN || polling {
            self.unpoll();
            let _ = self.sh.ring.submit();
            return; // spin: come back at once
        }
        let d = limit
            - if self.sh.delayed.is_empty() {
                Duration::ZERO
            } else {
                delay::SPIN
            };
        // Submit first: what completes at once (a read from the page cache, a send into an
        // empty socket buffer) is reaped without a second `io_uring_enter` to wait.
        if !self.sh.ring.submission().is_empty() {
            let _ = self.sh.ring.submit();
        }
        if self.sh.ring.completion().is_empty() && self.sleep_in_poll(d) {
            return; // the loop reaps what came (or comes back here)
        }
        self.unpoll();
        if !self.sh.ring.completion().is_empty() {
            return;
        }
        let ts = types::Timespec::new()
            .sec(d.as_secs())
            .nsec(d.subsec_nanos());
        let args = types::SubmitArgs::new().timespec(&ts);
        let ring = &mut self.sh.ring;
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
        if !self.sh.delayed.is_empty() {
            return false;
        }
        let mut fds = [libc::pollfd {
            fd: self.sh.ring.as_raw_fd(),
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
                || !self.sh.ring.completion().is_empty();
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
                self.sh.touched.push(polled[k]);
            }
        }
        true
    }

    fn reap(&mut self) {
        let cqes: Vec<(u64, i32)> = self
            .sh
            .ring
            .completion()
            .map(|c| (c.user_data(), c.result()))
            .collect();
        if !cqes.is_empty() {
            self.sh.active = Instant::now();
        }
        for (data, res) in cqes {
            let (i, kind, req) = (
                (data >> 32) as usize,
                (data >> 24) & 0xff,
                (data & 0xff_ffff) as usize,
            );
            if kind == WAKE {
                self.accept_new();
                self.arm_wake();
                continue;
            }
            let sh = &mut self.sh;
            match kind {
                RECV => live(&mut self.conns, i).on_recv(i, res, sh),
                READ => live(&mut self.conns, i).on_read(i, req, res, sh),
                SEND => live(&mut self.conns, i).on_send(i, res, sh),
                _ => {}
            }
        }
    }

    fn accept_new(&mut self) {
        while let Ok((stream, slot, session)) = self.rx.try_recv() {
            if self.sh.ctx.stopping() {
                self.load.fetch_sub(1, Ordering::Relaxed);
                continue;
            }
            let c = Conn::new(stream, slot, session);
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
            self.sh.touched.push(i);
        }
    }

    /// The delayed reads whose time has come: their replies may go out.
    fn release_due(&mut self) {
        let now = Instant::now();
        while let Some(Reverse((due, i, r))) = self.sh.delayed.peek().copied() {
            if due > now {
                break;
            }
            self.sh.delayed.pop();
            self.conns[i].as_mut().unwrap().ready.push_back(r);
            self.sh.touched.push(i);
        }
    }

    /// The loop is about to wait without polling its sockets itself: the connections it was
    /// polling receive through the ring again.
    fn unpoll(&mut self) {
        for i in 0..self.conns.len() {
            if let Some(c) = self.conns[i].as_mut().filter(|c| c.polled) {
                c.arm_recv(i, &mut self.sh);
            }
        }
    }

    /// Everything the touched connections can do now: parse requests, start reads and sends,
    /// receive more, or close.
    fn work(&mut self) {
        while let Some(i) = self.sh.touched.pop() {
            let sh = &mut self.sh;
            let Some(c) = self.conns[i].as_mut() else {
                continue;
            };
            c.parse(i, sh);
            if c.broken {
                // Nothing more goes out: drop the replies waiting to be sent.
                let waiting: Vec<usize> = c.ready.drain(..).collect();
                for r in waiting {
                    c.release(r, sh);
                }
            }
            if c.sending.is_empty() && !c.ready.is_empty() && !c.broken {
                c.send(i, few(&self.load, sh.ctx), sh);
            }
            let room = c.room();
            if c.rpos == c.rend && !c.recv_armed {
                // All taken (a refused write's payload too): receive from the start again.
                c.rpos = 0;
                c.rend = 0;
            }
            let wants = !c.no_more && !c.recv_armed && !c.polled && room;
            let space = c.rend < c.rbuf.len();
            if wants && space && few(&self.load, sh.ctx) && sh.delayed.is_empty() {
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
                    c.on_recv(i, res, sh);
                }
                continue;
            }
            if wants && space {
                c.arm_recv(i, sh);
            }
            let idle = c.live_reqs() == 0 && c.sending.is_empty();
            if c.no_more && idle && c.ops == 0 {
                let c = self.conns[i].take().unwrap();
                if (c.broken || c.hang_up) && !c.timed_out {
                    sh.ctx.hung_up();
                }
                self.free_conns.push(i);
                self.load.fetch_sub(1, Ordering::Relaxed);
            } else if c.no_more && idle && c.recv_armed {
                c.stream.shutdown(); // the pending receive ends, then the connection
            }
        }
    }
}

/// Connection `i`, which a completion names: alive until the kernel holds nothing of it.
fn live(conns: &mut [Option<Box<Conn>>], i: usize) -> &mut Conn {
    conns[i].as_mut().expect("live connection")
}

/// Few enough connections on this loop (`load`) that a system call per socket operation on its
/// thread is cheaper than the ring's round trip (at one client QD1: one `sendmsg` instead of an
/// `io_uring_enter` and a completion to reap).
fn few(load: &AtomicUsize, ctx: &Ctx) -> bool {
    load.load(Ordering::Relaxed) <= POLL_MAX && ctx.cfg.busy_poll.is_zero()
}
