//! `nbd`: reads an NBD export over the worker's own connection, like fio's `nbd` engine: queued
//! reads become request headers sent together in one write, up to `--iodepth` in flight, and
//! replies (simple replies, in any order) are matched to their slot by cookie. Replies are read
//! through one receive buffer, so several small replies cost one system call. With `--busy-poll`
//! the worker spins on its socket for replies instead of sleeping in the kernel.
//!
//! Requests are never sent with a blocking write: what the socket does not take at once waits,
//! and the engine sends it while it receives replies (poll for both), so a server that answers
//! before it reads more requests can never leave both sides blocked in send, at any depth. A
//! server that sends nothing for [`REPLY_TIMEOUT`] while reads are in flight is given up on.

use super::options::EngineOptions;
use super::spec::{
    Capabilities, Completion, Engine, EngineOption, EngineSetup, EngineSpec, Io, Unset, Value,
};
use crate::buffer::BufferPool;
use crate::error::{Error, Result};
use crate::nbd::Connection;
use crate::nbd::proto::{
    REQUEST_LEN, Request, SIMPLE_REPLY_LEN, STRUCTURED_REPLY_MAGIC, SimpleReply, errno_of_error,
};
use rustix::event::{PollFd, PollFlags};
use rustix::net::{RecvFlags, SendFlags};
use std::collections::VecDeque;
use std::io;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// `P`: the worker busy-polls its socket (`RP` next to `R`); the label leaves out for how long.
const BUSY_POLL: EngineOption = EngineOption {
    flag: "busy-poll",
    letter: Some('P'),
    words: "busy-polling its socket",
    help: "spin on the socket for a reply for up to this long (default 200us; `--busy-poll=300us`) before sleeping for it: QD1 latency without the wake-up of an idle CPU, at the cost of a spinning core",
    fio: None,
    column: "busy_poll_us",
    value: Value::Setting {
        unit: "us",
        bare: Some(NbdOptions::BUSY_POLL_US as u64),
        unset: Unset::Zero,
    },
};

pub static SPEC: EngineSpec = EngineSpec {
    name: "nbd",
    label: "R",
    fio_name: "nbd",
    words: "NBD",
    capabilities: Capabilities {
        asynchronous: true,
        needs_direct: false,
        supports_batch: true,
        does_io: true,
    },
    options: &[BUSY_POLL],
    stored: &[],
    check: check_depth,
    // It reads remote exports only: nothing to try on a local file in the probe or the
    // conformance suite (the end-to-end tests run it against real servers).
    variants: Vec::new,
    open: |s: EngineSetup| {
        let mut e = NbdEngine::new(s.nbd()?, s.pool);
        let us = NbdOptions::of(&s.options).busy_poll_us;
        e.busy_poll = std::time::Duration::from_micros(us.into());
        Ok(Box::new(e))
    },
};

/// The nbd engine's options, typed: what its rows hold in an [`EngineOptions`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NbdOptions {
    /// Spin on the socket for a reply for up to this many microseconds before sleeping for it
    /// (0: never spin): no sleep and no wake-up of an idle CPU in the latency.
    pub busy_poll_us: u32,
}

impl NbdOptions {
    /// The spin budget `--busy-poll` gives without a value: a QD1 reply with 100 us of service
    /// time arrives within it.
    pub const BUSY_POLL_US: u32 = 200;

    /// The nbd engine's options in `o`.
    pub fn of(o: &EngineOptions) -> Self {
        NbdOptions {
            busy_poll_us: BUSY_POLL.get(o).map_or(0, |n| n as u32),
        }
    }

    /// Write them into `o`, leaving other engines' options as they are.
    pub fn write(&self, o: &mut EngineOptions) {
        BUSY_POLL.set(o, self.busy_poll_us.into());
    }

    /// Change them in `o` with `f`.
    pub fn edit(o: &mut EngineOptions, f: impl FnOnce(&mut Self)) {
        let mut v = Self::of(o);
        f(&mut v);
        v.write(o);
    }
}

/// Bytes of the receive buffer: many small replies per read, large payloads go straight to
/// their slot.
const RECV_BUF: usize = 256 << 10;

/// How long the engine waits, with reads in flight, without receiving a byte (or sending one,
/// when requests wait to go out) before it says the server stopped answering.
pub const REPLY_TIMEOUT: Duration = Duration::from_secs(30);

/// Most requests one connection keeps in flight: servers queue what they cannot serve at once,
/// so more only adds latency; more connections (`--numjobs`) add parallelism.
pub const MAX_DEPTH: usize = 16384;

fn check_depth(_: &EngineOptions, w: &super::Workload) -> Result<()> {
    if w.files > 1 {
        return Err(Error::invalid(format!(
            "--engine nbd reads one export per job, not {} files; give each export its own job \
             (or several TARGETs to `readlab run`)",
            w.files
        )));
    }
    let depth = w.iodepth.saturating_mul(w.blocks_per_request);
    if depth > MAX_DEPTH {
        return Err(Error::invalid(format!(
            "--iodepth {} × --blocks-per-request {} = {depth} reads in flight on one NBD \
             connection; readlab keeps at most {MAX_DEPTH} (a server queues the rest, which only \
             adds latency): use a smaller --iodepth, or more --numjobs (one connection each)",
            w.iodepth, w.blocks_per_request
        )));
    }
    Ok(())
}

pub struct NbdEngine {
    conn: Arc<Connection>,
    pool: BufferPool,
    /// Request headers not yet sent (from `sent` on).
    out: Vec<u8>,
    sent: usize,
    queued: usize,
    /// Length asked of each slot's read, and whether it is waiting for its reply.
    len: Vec<u32>,
    busy: Vec<bool>,
    /// Requests queued or sent whose reply has not come.
    outstanding: usize,
    /// Requests submitted and not yet reaped (their reply may have come).
    inflight: usize,
    rbuf: Box<[u8]>,
    rpos: usize,
    rend: usize,
    /// The reply whose payload is arriving: its slot and the bytes of it received so far.
    payload: Option<(usize, usize)>,
    /// Replies received and not yet reaped.
    done: VecDeque<Completion>,
    /// How long to spin on the socket for a reply before sleeping for it.
    busy_poll: Duration,
    /// See [`REPLY_TIMEOUT`].
    timeout: Duration,
    /// When a byte last went either way.
    progress: Instant,
    /// Why the connection failed, once the replies received before are reaped.
    failed: Option<Error>,
}

/// What one non-blocking receive gave.
enum Got {
    Bytes,
    Nothing,
}

impl NbdEngine {
    pub fn new(conn: Arc<Connection>, pool: BufferPool) -> NbdEngine {
        let n = pool.slots();
        // Blocking receives wait for at most the reply timeout (then the engine looks at the
        // clock); sends never block.
        let _ = conn.stream.set_read_timeout(Some(REPLY_TIMEOUT));
        let _ = conn.stream.set_write_timeout(Some(REPLY_TIMEOUT));
        NbdEngine {
            conn,
            pool,
            out: Vec::with_capacity(n * REQUEST_LEN),
            sent: 0,
            queued: 0,
            len: vec![0; n],
            busy: vec![false; n],
            outstanding: 0,
            inflight: 0,
            rbuf: vec![0u8; RECV_BUF].into_boxed_slice(),
            rpos: 0,
            rend: 0,
            payload: None,
            done: VecDeque::with_capacity(n),
            busy_poll: Duration::ZERO,
            timeout: REPLY_TIMEOUT,
            progress: Instant::now(),
            failed: None,
        }
    }

    /// Give the server up after `timeout` without a byte either way while reads are in flight.
    #[cfg(test)]
    pub fn set_timeout(&mut self, timeout: Duration) {
        self.timeout = timeout;
        let _ = self.conn.stream.set_read_timeout(Some(timeout));
    }

    /// The error that ends the engine: the server, what happened and how many reads were
    /// waiting for their replies; or why readlab closed the connection, if it did.
    fn lost(&self, e: impl std::fmt::Display) -> Error {
        if let Some(why) = self.conn.aborted() {
            return Error::Engine(format!(
                "{}: {why}; readlab closed the connection with {} reads in flight",
                self.conn.url.server(),
                self.outstanding
            ));
        }
        Error::Engine(format!(
            "{}: the connection failed with {} reads in flight: {e}",
            self.conn.url.server(),
            self.outstanding
        ))
    }

    fn silent_for(&self) -> Error {
        self.lost(format!(
            "no reply for {} s: the server stopped answering",
            self.timeout.as_secs_f64()
        ))
    }

    fn pending(&self) -> bool {
        self.sent < self.out.len()
    }

    /// Send what the socket takes now of the requests waiting to go out.
    fn send_some(&mut self) -> Result<()> {
        while self.pending() {
            match rustix::net::send(
                &self.conn.stream,
                &self.out[self.sent..],
                SendFlags::DONTWAIT,
            ) {
                Ok(n) => {
                    self.sent += n;
                    self.progress = Instant::now();
                }
                Err(rustix::io::Errno::AGAIN) => return Ok(()),
                Err(rustix::io::Errno::INTR) => {}
                Err(rustix::io::Errno::CONNRESET | rustix::io::Errno::PIPE) => {
                    return Err(self.lost("the server closed it (connection reset)"));
                }
                Err(e) => return Err(self.lost(io::Error::from(e))),
            }
        }
        self.out.clear();
        self.sent = 0;
        Ok(())
    }

    /// One receive, into the receive buffer or straight into the slot whose payload is
    /// arriving; waits (up to the socket's timeout) when `block`.
    fn recv_some(&mut self, block: bool) -> Result<Got> {
        let flags = if block {
            RecvFlags::empty()
        } else {
            RecvFlags::DONTWAIT
        };
        let direct = match self.payload {
            Some((t, got)) if self.rpos == self.rend => Some((t, got)),
            _ => None,
        };
        if direct.is_none() {
            if self.rpos == self.rend {
                self.rpos = 0;
                self.rend = 0;
            } else if self.rpos > 0 && self.rbuf.len() - self.rend < SIMPLE_REPLY_LEN {
                self.rbuf.copy_within(self.rpos..self.rend, 0);
                self.rend -= self.rpos;
                self.rpos = 0;
            }
        }
        loop {
            let r = match direct {
                Some((t, got)) => {
                    let len = self.len[t] as usize;
                    let slot = self.pool.slot_mut(t, len);
                    rustix::net::recv(&self.conn.stream, &mut slot[got..], flags)
                }
                None => rustix::net::recv(&self.conn.stream, &mut self.rbuf[self.rend..], flags),
            };
            match r {
                Ok((0, _)) => {
                    return Err(self.lost(if self.payload.is_some() {
                        "the server closed it in the middle of a reply"
                    } else {
                        "the server closed it"
                    }));
                }
                Ok((n, _)) => {
                    self.progress = Instant::now();
                    match direct {
                        Some((t, got)) => self.payload = Some((t, got + n)),
                        None => self.rend += n,
                    }
                    return Ok(Got::Bytes);
                }
                Err(rustix::io::Errno::AGAIN) => return Ok(Got::Nothing),
                Err(rustix::io::Errno::INTR) => {}
                Err(rustix::io::Errno::CONNRESET) => {
                    return Err(self.lost(if self.payload.is_some() {
                        "the server closed it in the middle of a reply (connection reset)"
                    } else {
                        "the server closed it (connection reset)"
                    }));
                }
                Err(e) => return Err(self.lost(io::Error::from(e))),
            }
        }
    }

    /// Turn what has been received into completions: whole replies, and the payload arriving.
    fn parse(&mut self) -> Result<()> {
        loop {
            if let Some((t, got)) = self.payload {
                let len = self.len[t] as usize;
                let have = (self.rend - self.rpos).min(len - got);
                if have > 0 {
                    let slot = self.pool.slot_mut(t, len);
                    slot[got..got + have].copy_from_slice(&self.rbuf[self.rpos..self.rpos + have]);
                    self.rpos += have;
                }
                if got + have < len {
                    self.payload = Some((t, got + have));
                    return Ok(());
                }
                self.payload = None;
                self.done.push_back(Completion::new(t as u32, len as i64));
                continue;
            }
            if self.rend - self.rpos < SIMPLE_REPLY_LEN {
                return Ok(());
            }
            let b = &self.rbuf[self.rpos..self.rpos + SIMPLE_REPLY_LEN];
            let h = SimpleReply::decode(b).map_err(|m| {
                self.lost(if m.0 == STRUCTURED_REPLY_MAGIC {
                    "a structured reply, which readlab did not negotiate".to_string()
                } else {
                    format!("not a simple reply ({m})")
                })
            })?;
            let token = h.cookie as usize;
            if token >= self.busy.len() || !self.busy[token] {
                return Err(self.lost(format!(
                    "reply to cookie {} that is not in flight",
                    h.cookie
                )));
            }
            self.rpos += SIMPLE_REPLY_LEN;
            self.busy[token] = false;
            self.outstanding -= 1;
            if h.error != 0 {
                self.done.push_back(Completion::new(
                    token as u32,
                    -(errno_of_error(h.error) as i64),
                ));
            } else {
                self.payload = Some((token, 0));
            }
        }
    }

    /// Receive (and send what waits to go out) until `need` replies are ready to be reaped.
    fn wait_for(&mut self, need: usize) -> Result<()> {
        self.parse()?;
        while self.done.len() < need {
            if self.progress.elapsed() >= self.timeout {
                return Err(self.silent_for());
            }
            if self.pending() {
                self.send_some()?;
                if self.pending() {
                    self.wait_both()?;
                    continue;
                }
            }
            if !self.busy_poll.is_zero() && self.spin()? {
                self.parse()?;
                continue;
            }
            // Nothing to send: sleep in the receive itself (one system call per wake-up).
            if let Got::Bytes = self.recv_some(true)? {
                self.parse()?;
            }
        }
        Ok(())
    }

    /// Spin on the socket for up to the busy-poll budget; whether bytes came.
    fn spin(&mut self) -> Result<bool> {
        let start = Instant::now();
        loop {
            if let Got::Bytes = self.recv_some(false)? {
                return Ok(true);
            }
            if start.elapsed() >= self.busy_poll {
                return Ok(false);
            }
            std::thread::yield_now();
        }
    }

    /// Requests wait to go out and replies may come: poll for both, then do what can be done.
    fn wait_both(&mut self) -> Result<()> {
        let left = self.timeout.saturating_sub(self.progress.elapsed());
        let ts = rustix::time::Timespec {
            tv_sec: left.as_secs() as i64,
            tv_nsec: left.subsec_nanos() as i64,
        };
        let mut fds = [PollFd::new(
            &self.conn.stream,
            PollFlags::IN | PollFlags::OUT,
        )];
        match rustix::event::poll(&mut fds, Some(&ts)) {
            Ok(_) | Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(self.lost(io::Error::from(e))),
        }
        let ev = fds[0].revents();
        if ev.intersects(PollFlags::OUT | PollFlags::ERR) {
            self.send_some()?;
        }
        if ev.intersects(PollFlags::IN | PollFlags::HUP | PollFlags::ERR)
            && let Got::Bytes = self.recv_some(false)?
        {
            self.parse()?;
        }
        Ok(())
    }
}

impl Engine for NbdEngine {
    fn queue(&mut self, io: Io) -> Result<()> {
        let t = io.token as usize;
        if self.busy[t] {
            return Err(Error::Engine(format!("slot {t} is already in flight")));
        }
        self.len[t] = io.len;
        self.busy[t] = true;
        let at = self.out.len();
        self.out.resize(at + REQUEST_LEN, 0);
        Request::read(io.token as u64, io.offset, io.len).encode_into(&mut self.out[at..]);
        self.queued += 1;
        self.outstanding += 1;
        Ok(())
    }

    /// Send what the socket takes at once; the rest goes out while replies are reaped.
    fn submit(&mut self) -> Result<usize> {
        let n = self.queued;
        if n == 0 {
            return Ok(0);
        }
        if self.outstanding == n {
            // Nothing was in flight: the wait for replies starts now.
            self.progress = Instant::now();
        }
        self.queued = 0;
        self.inflight += n;
        self.send_some()?;
        Ok(n)
    }

    fn reap_at_most(&mut self, min: usize, max: usize, out: &mut Vec<Completion>) -> Result<usize> {
        let need = min.min(self.inflight);
        if self.failed.is_none()
            && let Err(e) = self.wait_for(need)
        {
            self.failed = Some(e);
        }
        // Replies that came before the connection failed are handed over first; the error
        // comes once they are all reaped.
        if self.done.is_empty()
            && let Some(e) = self.failed.take()
        {
            return Err(e);
        }
        let mut got = 0;
        while got < max
            && let Some(c) = self.done.pop_front()
        {
            out.push(c);
            got += 1;
        }
        self.inflight -= got;
        Ok(got)
    }

    fn buffer(&self, token: u32, len: usize) -> &[u8] {
        self.pool.slot(token as usize, len)
    }

    fn features(&self) -> Vec<String> {
        let e = &self.conn.advertised.export;
        let mut f = vec![self.conn.advertised.negotiated_with.clone()];
        if e.multi_conn() {
            f.push("multi-conn".into());
        }
        f
    }
}

impl Drop for NbdEngine {
    fn drop(&mut self) {
        if !self.sent.is_multiple_of(REQUEST_LEN) {
            // Half a request went out: a goodbye after it would be garbage to the server.
            self.conn.stream.shutdown();
        } else {
            self.conn.disconnect();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nbd::proto::{CMD_READ, REQUEST_LEN};
    use crate::nbd::{Address, ExportInfo, NbdUrl, Stream};
    use std::io::{Read, Write};
    use std::os::unix::net::UnixStream;
    use std::sync::mpsc;

    fn conn(s: UnixStream) -> Arc<Connection> {
        let url = NbdUrl {
            address: Address::Unix("/test".into()),
            export: String::new(),
            netns: None,
        };
        let advertised = crate::nbd::Advertised {
            handshake_flags: 0,
            export: ExportInfo {
                name: String::new(),
                description: None,
                size: 1 << 30,
                flags: 0,
                block_sizes: None,
            },
            negotiated_with: "test".into(),
            list: None,
        };
        Arc::new(Connection::new(url, Stream::Unix(s), advertised))
    }

    /// Run `f` on a thread; panic if it takes longer than `secs`.
    fn within<T: Send + 'static>(secs: u64, f: impl FnOnce() -> T + Send + 'static) -> T {
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(f());
        });
        rx.recv_timeout(Duration::from_secs(secs))
            .expect("finished in time (no deadlock)")
    }

    /// A server that serves one request at a time, writing each reply with a blocking write
    /// before it reads the next request (as simple servers do): with a deep queue of requests
    /// bigger than the socket buffers, a client that only sends while it sends leaves both
    /// blocked in send. This one keeps reading replies while requests wait to go out.
    #[test]
    fn no_depth_deadlocks_against_a_server_that_answers_before_it_reads() {
        let depth = 16384;
        let len = 4096u32;
        let (c, mut s) = UnixStream::pair().unwrap();
        let server = std::thread::spawn(move || {
            let mut req = [0u8; REQUEST_LEN];
            let payload = vec![7u8; len as usize];
            let mut served = 0;
            while s.read_exact(&mut req).is_ok() {
                let r = Request::decode(&req).unwrap();
                if r.kind != CMD_READ {
                    break;
                }
                let h = SimpleReply {
                    error: 0,
                    cookie: r.cookie,
                };
                s.write_all(&h.encode()).unwrap();
                s.write_all(&payload).unwrap();
                served += 1;
            }
            served
        });
        let conn = conn(c);
        let got = within(60, move || {
            let mut e = NbdEngine::new(conn, BufferPool::new(depth, len as usize));
            for t in 0..depth as u32 {
                e.queue(Io {
                    file: 0,
                    token: t,
                    offset: t as u64 * len as u64,
                    len,
                })
                .unwrap();
            }
            assert_eq!(e.submit().unwrap(), depth);
            let mut out = Vec::new();
            while out.len() < depth {
                e.reap_at_most(1, depth, &mut out).unwrap();
            }
            assert!(out.iter().all(|c| c.res == len as i64));
            assert!(e.buffer(5, len as usize).iter().all(|&b| b == 7));
            out.len()
        });
        assert_eq!(got, depth);
        assert_eq!(server.join().unwrap(), depth);
    }

    /// A server that stops answering: the engine gives up after its timeout and says who and
    /// how many reads were waiting.
    #[test]
    fn a_silent_server_is_given_up_on_after_the_timeout() {
        let (c, s) = UnixStream::pair().unwrap();
        let conn = conn(c);
        let err = within(20, move || {
            let mut e = NbdEngine::new(conn, BufferPool::new(4, 4096));
            e.set_timeout(Duration::from_millis(300));
            for t in 0..3 {
                e.queue(Io {
                    file: 0,
                    token: t,
                    offset: 0,
                    len: 4096,
                })
                .unwrap();
            }
            e.submit().unwrap();
            let t = Instant::now();
            let r = e.reap_at_most(1, 4, &mut Vec::new());
            (r.map(|_| ()), t.elapsed())
        });
        drop(s);
        let (r, took) = err;
        let msg = r.unwrap_err().to_string();
        assert!(
            msg.contains("nbd+unix:///?socket=/test")
                && msg.contains("3 reads in flight")
                && msg.contains("stopped answering"),
            "{msg}"
        );
        assert!(took < Duration::from_secs(5), "{took:?}");
    }

    /// Closed under the worker by the runner: the engine says why, not "the server closed it".
    #[test]
    fn an_aborted_connection_says_why() {
        let (c, _s) = UnixStream::pair().unwrap();
        let conn = conn(c);
        let c2 = conn.clone();
        let h = std::thread::spawn(move || {
            let mut e = NbdEngine::new(c2, BufferPool::new(2, 4096));
            e.queue(Io {
                file: 0,
                token: 0,
                offset: 0,
                len: 4096,
            })
            .unwrap();
            e.submit().unwrap();
            e.reap_at_most(1, 2, &mut Vec::new()).map(|_| ())
        });
        std::thread::sleep(Duration::from_millis(200));
        conn.abort("no reply within 5 s after the run's end");
        let msg = h.join().unwrap().unwrap_err().to_string();
        assert!(
            msg.contains("no reply within 5 s after the run's end")
                && msg.contains("1 reads in flight"),
            "{msg}"
        );
    }

    /// The replies that came before the connection failed count; the failure comes after.
    #[test]
    fn replies_received_before_a_failure_are_reaped_first() {
        let (c, mut s) = UnixStream::pair().unwrap();
        let conn = conn(c);
        let mut e = NbdEngine::new(conn, BufferPool::new(2, 512));
        for t in 0..2 {
            e.queue(Io {
                file: 0,
                token: t,
                offset: 0,
                len: 512,
            })
            .unwrap();
        }
        e.submit().unwrap();
        let mut req = [0u8; 2 * REQUEST_LEN];
        s.read_exact(&mut req).unwrap();
        s.write_all(
            &SimpleReply {
                error: 0,
                cookie: 1,
            }
            .encode(),
        )
        .unwrap();
        s.write_all(&[9u8; 512]).unwrap();
        drop(s);
        let mut out = Vec::new();
        assert_eq!(e.reap_at_most(2, 2, &mut out).unwrap(), 1);
        assert_eq!((out[0].token, out[0].res), (1, 512));
        let msg = e.reap_at_most(1, 2, &mut out).unwrap_err().to_string();
        assert!(
            msg.contains("the server closed it") && msg.contains("1 reads in flight"),
            "{msg}"
        );
    }

    #[test]
    fn a_depth_beyond_the_limit_is_refused() {
        let w = |iodepth, blocks_per_request| super::super::Workload {
            direct: false,
            iodepth,
            blocks_per_request,
            threads: 1,
            files: 1,
        };
        let o = super::super::EngineOptions::default();
        assert!(check_depth(&o, &w(MAX_DEPTH, 1)).is_ok());
        let e = check_depth(&o, &w(MAX_DEPTH / 2, 4))
            .unwrap_err()
            .to_string();
        assert!(e.contains("--numjobs"), "{e}");
    }
}
