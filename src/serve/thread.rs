//! The thread model: one thread per connection (the document's server forks a process per
//! client). The thread takes every request that has arrived (a pipelining client sends several),
//! reads them through its own readlab engine (`--engine`, `--iodepth` reads in flight) or the null
//! back end, waits out the injected delay, and answers each with its header and payload in one
//! `writev`. Requests larger than a buffer slot are read in slot-sized pieces, so memory per
//! connection is bounded by `iodepth` slots; all but the first come out of the server's
//! in-flight budget (a connection waits for them before it is served). With `--busy-poll` the
//! thread spins on its socket for the next request (up to a budget) before sleeping in the kernel.
//! A client that sends nothing, or reads no reply, for `--idle-timeout` is closed (the socket's
//! own timeouts).

use super::budget::Lease;
use super::delay;
use super::request::{
    Action, ReplyHeader, block_status, can_fail_midway, classify, data_header, error_reply,
};
use super::shared::{timed_out, write_all_within};
use super::{ClientSlot, Ctx, negotiate};
use crate::buffer::BufferPool;
use crate::engine::{self, Completion, Engine, EngineSetup, Io};
use crate::nbd::Stream;
use crate::nbd::handshake::Session;
use crate::nbd::proto::{EIO, REQUEST_LEN, error_of_errno};
use crate::source::WorkerOpen;
use std::fs::File;
use std::io::{IoSlice, Read};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// Bytes of one buffer slot: a larger request is read in pieces of this size.
pub(crate) const CHUNK: usize = 256 << 10;
/// Requests taken from the stream before they are answered.
const MAX_BATCH: usize = 64;
/// Receive buffer for request headers.
const RECV_BUF: usize = 64 << 10;

/// Why a connection ended before its client said goodbye: idle past `--idle-timeout` (counted
/// as timed out), or broken (the client vanished mid-frame, a frame the server cannot serve).
#[derive(Debug, PartialEq)]
enum Closed {
    Idle,
    Broken(String),
}

impl From<String> for Closed {
    fn from(why: String) -> Closed {
        Closed::Broken(why)
    }
}

impl From<&str> for Closed {
    fn from(why: &str) -> Closed {
        Closed::Broken(why.into())
    }
}

/// What the null back end serves.
pub(crate) static ZEROS: [u8; CHUNK] = [0u8; CHUNK];

/// The short adaptive spin for the next request, on by default (without `--busy-poll`): at one
/// request in flight the client's next request comes a few µs after the reply, and a thread that
/// sleeps for it leaves its CPU idle, so the request must wake that CPU first (on a VM an idle
/// vCPU halts: ~20-30 µs, more than the whole request). Spinning up to [`SPIN_BUDGET`] keeps the
/// CPU awake for it. Bounded so it never costs a busy server anything: only while no more of
/// this process's serving threads are awake than half the CPUs (a loaded server has no idle CPU
/// to save and its CPU per request must not grow), and only after a request that did come within
/// the budget (a client that thinks between requests is not spun for: one miss turns it off
/// until a request comes within twice the budget again).
pub(crate) const SPIN_BUDGET: Duration = Duration::from_micros(50);

/// Serving threads (both models) not asleep waiting for a request.
static AWAKE: AtomicUsize = AtomicUsize::new(0);

/// Whether few enough serving threads are awake to spin for the next request.
pub(crate) fn may_spin() -> bool {
    static HALF_CPUS: OnceLock<usize> = OnceLock::new();
    let half = *HALF_CPUS
        .get_or_init(|| (std::thread::available_parallelism().map_or(1, |n| n.get()) / 2).max(1));
    AWAKE.load(Ordering::Relaxed) <= half
}

/// Counts a serving thread in [`AWAKE`] while it lives; [`Awake::asleep`] takes it out while it
/// sleeps for a request.
pub(crate) struct Awake;

impl Awake {
    pub(crate) fn new() -> Awake {
        AWAKE.fetch_add(1, Ordering::Relaxed);
        Awake
    }

    pub(crate) fn asleep<T>(&self, f: impl FnOnce() -> T) -> T {
        AWAKE.fetch_sub(1, Ordering::Relaxed);
        let r = f();
        AWAKE.fetch_add(1, Ordering::Relaxed);
        r
    }
}

impl Drop for Awake {
    fn drop(&mut self) {
        AWAKE.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Start the thread of one accepted connection.
pub(super) fn spawn(
    ctx: Arc<Ctx>,
    mut stream: Stream,
    slot: ClientSlot,
    id: u64,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new()
        .name(format!("rl-conn-{id}"))
        .spawn(move || {
            let _slot = slot;
            delay::precise_timers();
            let Some(session) = negotiate(&mut stream, &ctx) else {
                return;
            };
            if stream.set_read_timeout(ctx.idle()).is_err()
                || stream.set_write_timeout(ctx.idle()).is_err()
            {
                return;
            }
            // Out of descriptors, a connection the server could not wake at its stop is closed.
            let Ok(c) = stream.try_clone() else { return };
            ctx.live.lock().unwrap().insert(id, c);
            let end = if ctx.stopping() {
                Ok(())
            } else {
                Conn::open(&ctx, &stream, session).and_then(|mut c| c.serve())
            };
            ctx.live.lock().unwrap().remove(&id);
            match end {
                Err(Closed::Idle) => ctx.timed_out(),
                Err(_) => ctx.hung_up(),
                Ok(()) => {}
            }
        })
}

/// The storage side of one connection.
enum Store {
    Null,
    Engine(Box<dyn Engine>),
}

struct Item {
    cookie: u64,
    /// The whole reply of a request answered without reading (refused, block status).
    answer: Option<ReplyHeader>,
    len: u32,
    first: usize,
    pieces: usize,
    header_sent: bool,
    failed: bool,
}

struct Piece {
    offset: u64,
    len: u32,
    error: Option<u32>,
}

enum Seg {
    Header(usize),
    Data(usize, usize),
}

struct Conn<'a> {
    ctx: &'a Ctx,
    s: &'a Stream,
    session: Session,
    store: Store,
    /// The served file, for block status (None: the null back end).
    map: Option<Arc<File>>,
    /// The buffer slots beyond the first, taken from the server's in-flight budget.
    _slots: Option<Lease<'a>>,
    depth: usize,
    rbuf: Box<[u8]>,
    rpos: usize,
    rend: usize,
    items: Vec<Item>,
    pieces: Vec<Piece>,
    comps: Vec<Completion>,
    /// When the last replies went out, and whether to spin for the next request (see
    /// [`SPIN_BUDGET`]).
    replied: Instant,
    spin: bool,
    awake: Awake,
}

type Ended = Result<(), Closed>;

impl<'a> Conn<'a> {
    fn open(ctx: &'a Ctx, s: &'a Stream, session: Session) -> Result<Conn<'a>, Closed> {
        let cfg = &ctx.cfg;
        let mut map = None;
        let (store, depth, slots) = match &ctx.source {
            None => (Store::Null, usize::MAX, None),
            Some(src) => {
                let extra = (cfg.iodepth as u64 - 1) * CHUNK as u64;
                let slots = Lease::wait(&ctx.budget, extra, || ctx.stopping())
                    .ok_or("the server is stopping")?;
                let how = WorkerOpen {
                    direct: cfg.direct,
                    advice: None,
                    offset: 0,
                    len: ctx.export.size,
                };
                let handle = src.open_worker(&how).map_err(|e| e.to_string())?;
                map = handle.file().ok();
                let setup = EngineSetup {
                    handles: vec![handle],
                    pool: BufferPool::new(cfg.iodepth, CHUNK),
                    depth: cfg.iodepth,
                    direct: cfg.direct,
                    options: cfg.options.clone(),
                };
                let e = engine::open(cfg.engine, setup).map_err(|e| e.to_string())?;
                (Store::Engine(e), cfg.iodepth, Some(slots))
            }
        };
        Ok(Conn {
            ctx,
            s,
            session,
            store,
            map,
            _slots: slots,
            depth,
            rbuf: vec![0u8; RECV_BUF].into_boxed_slice(),
            rpos: 0,
            rend: 0,
            items: Vec::with_capacity(MAX_BATCH),
            pieces: Vec::new(),
            comps: Vec::new(),
            replied: Instant::now(),
            spin: true,
            awake: Awake::new(),
        })
    }

    /// Have at least `n` bytes buffered; false on a clean end of stream between requests.
    fn fill(&mut self, n: usize) -> Result<bool, Closed> {
        if self.rpos == self.rend {
            self.rpos = 0;
            self.rend = 0;
        }
        if self.rbuf.len() - self.rpos < n {
            self.rbuf.copy_within(self.rpos..self.rend, 0);
            self.rend -= self.rpos;
            self.rpos = 0;
        }
        while self.rend - self.rpos < n {
            let mut s = self.s;
            let got = if !self.ctx.cfg.busy_poll.is_zero() {
                s.recv_spinning(&mut self.rbuf[self.rend..], self.ctx.cfg.busy_poll)
            } else if self.spin && may_spin() {
                // Not Stream::recv_spinning: past the budget this thread sleeps, and a sleeping
                // thread must not count as awake (an idle connection would stop every spin).
                let buf = &mut self.rbuf[self.rend..];
                let start = Instant::now();
                loop {
                    match s.recv_nowait(buf) {
                        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                        r => break r,
                    }
                    if start.elapsed() >= SPIN_BUDGET {
                        break self.awake.asleep(|| s.read(buf));
                    }
                    std::thread::yield_now();
                }
            } else {
                let buf = &mut self.rbuf[self.rend..];
                self.awake.asleep(|| s.read(buf))
            };
            match got {
                Ok(0) if self.rend == self.rpos => return Ok(false),
                Ok(0) => return Err("the client left in the middle of a request".into()),
                Ok(k) => self.rend += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if timed_out(&e) => return Err(Closed::Idle),
                Err(e) => return Err(e.to_string().into()),
            }
        }
        Ok(true)
    }

    /// Drop `n` bytes of a write's payload.
    fn skip(&mut self, mut n: usize) -> Ended {
        let have = (self.rend - self.rpos).min(n);
        self.rpos += have;
        n -= have;
        while n > 0 {
            self.rpos = 0;
            self.rend = 0;
            let k = n.min(self.rbuf.len());
            let mut s = self.s;
            match s.read(&mut self.rbuf[..k]) {
                Ok(0) => return Err("the client left in the middle of a write".into()),
                Ok(got) => n -= got,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if timed_out(&e) => return Err(Closed::Idle),
                Err(e) => return Err(e.to_string().into()),
            }
        }
        Ok(())
    }

    fn serve(&mut self) -> Ended {
        let limits = self.ctx.limits;
        loop {
            if !self.fill(REQUEST_LEN)? || self.ctx.stopping() {
                return Ok(());
            }
            // Spin for the next request only if this one came within the budget (or, slept
            // for, within twice that: the wake-up is in the gap then).
            let within = if self.spin { 1 } else { 2 } * SPIN_BUDGET;
            self.spin = self.replied.elapsed() <= within;
            self.items.clear();
            self.pieces.clear();
            let mut end = None;
            while self.rend - self.rpos >= REQUEST_LEN && self.items.len() < MAX_BATCH {
                let at = self.rpos;
                self.rpos += REQUEST_LEN;
                match classify(&self.rbuf[at..at + REQUEST_LEN], &limits) {
                    Action::Read {
                        cookie,
                        offset,
                        len,
                    } => self.add_read(cookie, offset, len),
                    Action::Refuse { cookie, error } => self.add_refusal(cookie, error),
                    Action::BlockStatus {
                        cookie,
                        offset,
                        len,
                        flags,
                    } => {
                        let map = self.map.as_deref();
                        let h = block_status(
                            self.session,
                            cookie,
                            offset,
                            len,
                            flags,
                            map,
                            limits.min_block,
                        );
                        self.add_answer(cookie, h);
                    }
                    Action::SkipThenRefuse {
                        cookie,
                        bytes,
                        error,
                    } => {
                        self.skip(bytes as usize)?;
                        self.add_refusal(cookie, error);
                    }
                    Action::Disconnect => {
                        end = Some(Ok(()));
                        break;
                    }
                    Action::HangUp(why) => {
                        end = Some(Err(why.into()));
                        break;
                    }
                }
            }
            // Answer what came before a disconnect or a broken frame, then stop.
            self.execute()?;
            self.replied = Instant::now();
            if let Some(e) = end {
                return e;
            }
        }
    }

    fn add_refusal(&mut self, cookie: u64, error: u32) {
        self.ctx.refused();
        self.add_answer(cookie, error_reply(self.session, cookie, error));
    }

    fn add_answer(&mut self, cookie: u64, answer: ReplyHeader) {
        self.items.push(Item {
            cookie,
            answer: Some(answer),
            len: 0,
            first: self.pieces.len(),
            pieces: 0,
            header_sent: false,
            failed: false,
        });
    }

    fn add_read(&mut self, cookie: u64, offset: u64, len: u32) {
        let first = self.pieces.len();
        let mut done = 0u32;
        while done < len {
            let n = (len - done).min(CHUNK as u32);
            self.pieces.push(Piece {
                offset: offset + done as u64,
                len: n,
                error: None,
            });
            done += n;
        }
        self.items.push(Item {
            cookie,
            answer: None,
            len,
            first,
            pieces: self.pieces.len() - first,
            header_sent: false,
            failed: false,
        });
    }

    /// Read pieces `[a, b)` (slot `k - a` for piece `k`).
    fn read_wave(&mut self, a: usize, b: usize) -> Ended {
        let Store::Engine(e) = &mut self.store else {
            return Ok(());
        };
        for k in a..b {
            let p = &self.pieces[k];
            e.queue(Io {
                file: 0,
                token: (k - a) as u32,
                offset: p.offset,
                len: p.len,
            })
            .map_err(|e| e.to_string())?;
        }
        e.submit().map_err(|e| e.to_string())?;
        let mut left = b - a;
        while left > 0 {
            self.comps.clear();
            e.reap(1, &mut self.comps).map_err(|e| e.to_string())?;
            left -= self.comps.len().min(left);
            for c in &self.comps {
                let p = &mut self.pieces[a + c.token as usize];
                if c.res < 0 {
                    p.error = Some(error_of_errno((-c.res) as i32));
                } else if (c.res as u64) < p.len as u64 {
                    p.error = Some(EIO);
                }
            }
        }
        Ok(())
    }

    /// Read every piece of the batch in waves of `depth` and answer every request in order.
    fn execute(&mut self) -> Ended {
        let delay = self.ctx.cfg.delay;
        let (mut next, mut p) = (0usize, 0usize);
        let mut headers: Vec<ReplyHeader> = Vec::new();
        let mut segs: Vec<Seg> = Vec::new();
        loop {
            let wave_end = p.saturating_add(self.depth).min(self.pieces.len());
            if wave_end > p {
                self.read_wave(p, wave_end)?;
                if !delay.is_zero() {
                    let polling = !self.ctx.cfg.busy_poll.is_zero();
                    delay::wait_until(Instant::now() + delay, polling);
                }
            }
            headers.clear();
            segs.clear();
            let mut broken = None;
            while next < self.items.len() {
                let it = &mut self.items[next];
                if let Some(h) = it.answer {
                    headers.push(h);
                    segs.push(Seg::Header(headers.len() - 1));
                    next += 1;
                    continue;
                }
                let (a, b) = (it.first.max(p), (it.first + it.pieces).min(wave_end));
                if a >= b {
                    break;
                }
                // A read already answered with its error has nothing more to send.
                let error = match it.failed {
                    true => None,
                    false => self.pieces[a..b].iter().find_map(|x| x.error),
                };
                if let Some(err) = error {
                    if it.header_sent && !can_fail_midway(self.session) {
                        broken = Some("a read failed after its reply had begun".to_string());
                        break;
                    }
                    headers.push(error_reply(self.session, it.cookie, err));
                    segs.push(Seg::Header(headers.len() - 1));
                    it.header_sent = true;
                    it.failed = true;
                    self.ctx.refused();
                } else if !it.failed {
                    // Simple replies: one header first; structured: a chunk per wave.
                    let n = self.pieces[a..b].iter().map(|x| x.len).sum();
                    let (at, last) = (self.pieces[a].offset, b == it.first + it.pieces);
                    let first = !it.header_sent;
                    if let Some(h) = data_header(self.session, it.cookie, at, n, first, last) {
                        headers.push(h);
                        segs.push(Seg::Header(headers.len() - 1));
                    }
                    it.header_sent = true;
                    segs.extend((a..b).map(|k| Seg::Data(k - p, self.pieces[k].len as usize)));
                }
                if b < it.first + it.pieces {
                    break;
                }
                if !it.failed {
                    self.ctx.served(it.len as u64);
                }
                next += 1;
            }
            self.send(&headers, &segs)?;
            if let Some(why) = broken {
                return Err(Closed::Broken(why));
            }
            p = wave_end;
            if p >= self.pieces.len() && next >= self.items.len() {
                return Ok(());
            }
        }
    }

    /// Write headers and payloads in as few `writev` calls as the iovec limit allows.
    fn send(&self, headers: &[ReplyHeader], segs: &[Seg]) -> Ended {
        let mut iov: Vec<IoSlice> = segs
            .iter()
            .map(|s| match s {
                Seg::Header(i) => IoSlice::new(headers[*i].as_bytes()),
                Seg::Data(token, len) => IoSlice::new(match &self.store {
                    Store::Null => &ZEROS[..*len],
                    Store::Engine(e) => e.buffer(*token as u32, *len),
                }),
            })
            .collect();
        for group in iov.chunks_mut(512) {
            write_all_within(self.s, group, self.ctx.idle()).map_err(|e| match timed_out(&e) {
                true => Closed::Idle,
                false => Closed::Broken(format!("the client vanished mid-reply: {e}")),
            })?;
        }
        Ok(())
    }
}
