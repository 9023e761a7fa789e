//! `nbd`: reads an NBD export over the worker's own connection, like fio's `nbd` engine: queued
//! reads become request headers sent together in one write, up to `--iodepth` in flight, and
//! replies (simple replies, in any order) are matched to their slot by cookie. Replies are read
//! through one receive buffer, so several small replies cost one system call. With `--busy-poll`
//! the worker spins on its socket for replies instead of sleeping in the kernel.

use super::options::NbdOptions;
use super::spec::{
    Capabilities, Completion, Engine, EngineOption, EngineSetup, EngineSpec, Io, Value,
};
use crate::buffer::BufferPool;
use crate::error::{Error, Result};
use crate::nbd::Connection;
use crate::nbd::proto::{Request, SIMPLE_REPLY_LEN, SimpleReply, errno_of_error};
use std::io::{Read, Write};
use std::sync::Arc;

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
    // `P`: the worker busy-polls its socket (`RP` next to `R`); the label leaves out for how long.
    options: &[EngineOption {
        flag: "busy-poll",
        letter: Some('P'),
        words: "busy-polling its socket",
        fio: None,
        column: "busy_poll_us",
        value: Value::Setting { unit: "us" },
        get: |o| (o.nbd.busy_poll_us > 0).then_some(o.nbd.busy_poll_us.into()),
        set: |o, n| {
            o.nbd.busy_poll_us = if n > 1 {
                n.min(u32::MAX as u64) as u32
            } else {
                NbdOptions::BUSY_POLL_US
            }
        },
    }],
    check: super::spec::no_check,
    // It reads remote exports only: nothing to try on a local file in the probe or the
    // conformance suite (the end-to-end tests run it against real servers).
    variants: Vec::new,
    open: |s: EngineSetup| {
        let mut e = NbdEngine::new(s.handle.nbd()?, s.pool);
        e.busy_poll = std::time::Duration::from_micros(s.options.nbd.busy_poll_us.into());
        Ok(Box::new(e))
    },
};

/// Bytes of the receive buffer: many small replies per read, large payloads go straight to
/// their slot.
const RECV_BUF: usize = 256 << 10;

pub struct NbdEngine {
    conn: Arc<Connection>,
    pool: BufferPool,
    /// Request headers queued and not yet sent.
    out: Vec<u8>,
    queued: usize,
    /// Length asked of each slot's read, and whether it is in flight.
    len: Vec<u32>,
    busy: Vec<bool>,
    inflight: usize,
    rbuf: Box<[u8]>,
    rpos: usize,
    rend: usize,
    /// How long to spin on the socket for a reply before sleeping for it.
    busy_poll: std::time::Duration,
}

impl NbdEngine {
    pub fn new(conn: Arc<Connection>, pool: BufferPool) -> NbdEngine {
        let n = pool.slots();
        NbdEngine {
            conn,
            pool,
            out: Vec::with_capacity(n * 28),
            queued: 0,
            len: vec![0; n],
            busy: vec![false; n],
            inflight: 0,
            rbuf: vec![0u8; RECV_BUF].into_boxed_slice(),
            rpos: 0,
            rend: 0,
            busy_poll: std::time::Duration::ZERO,
        }
    }

    fn lost(&self, e: impl std::fmt::Display) -> Error {
        Error::Engine(format!(
            "{}: the connection failed with {} reads in flight: {e}",
            self.conn.url, self.inflight
        ))
    }

    /// Receive more bytes into the buffer (moving what is left to its start); blocks.
    fn fill(&mut self) -> Result<()> {
        if self.rpos == self.rend {
            self.rpos = 0;
            self.rend = 0;
        } else if self.rpos > 0 && self.rbuf.len() - self.rend < SIMPLE_REPLY_LEN {
            self.rbuf.copy_within(self.rpos..self.rend, 0);
            self.rend -= self.rpos;
            self.rpos = 0;
        }
        let mut s = &self.conn.stream;
        loop {
            let got = if !self.busy_poll.is_zero() {
                s.recv_spinning(&mut self.rbuf[self.rend..], self.busy_poll)
            } else {
                s.read(&mut self.rbuf[self.rend..])
            };
            match got {
                Ok(0) => return Err(self.lost("the server closed it")),
                Ok(n) => {
                    self.rend += n;
                    return Ok(());
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.lost(e)),
            }
        }
    }

    /// Take one whole reply (header and payload) if `block` or if the buffer already holds its
    /// header; None when it would have to wait and `block` is false.
    fn next_reply(&mut self, block: bool) -> Result<Option<Completion>> {
        while self.rend - self.rpos < SIMPLE_REPLY_LEN {
            if !block {
                return Ok(None);
            }
            self.fill()?;
        }
        let h = SimpleReply::decode(&self.rbuf[self.rpos..self.rpos + SIMPLE_REPLY_LEN])
            .map_err(|m| self.lost(format!("not a simple reply ({m})")))?;
        self.rpos += SIMPLE_REPLY_LEN;
        let token = h.cookie as usize;
        if token >= self.busy.len() || !self.busy[token] {
            return Err(self.lost(format!(
                "reply to cookie {} that is not in flight",
                h.cookie
            )));
        }
        self.busy[token] = false;
        self.inflight -= 1;
        if h.error != 0 {
            return Ok(Some(Completion::new(
                token as u32,
                -(errno_of_error(h.error) as i64),
            )));
        }
        let len = self.len[token] as usize;
        let have = (self.rend - self.rpos).min(len);
        let slot = self.pool.slot_mut(token, len);
        slot[..have].copy_from_slice(&self.rbuf[self.rpos..self.rpos + have]);
        self.rpos += have;
        if have < len {
            // The rest of the payload goes straight into the slot.
            let mut s = &self.conn.stream;
            if let Err(e) = s.read_exact(&mut slot[have..]) {
                return Err(Error::Engine(format!(
                    "{}: the connection failed in the middle of a reply: {e}",
                    self.conn.url
                )));
            }
        }
        Ok(Some(Completion::new(token as u32, len as i64)))
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
        self.out.resize(at + 28, 0);
        Request::read(io.token as u64, io.offset, io.len).encode_into(&mut self.out[at..]);
        self.queued += 1;
        Ok(())
    }

    fn submit(&mut self) -> Result<usize> {
        let n = self.queued;
        if n == 0 {
            return Ok(0);
        }
        let mut s = &self.conn.stream;
        if let Err(e) = s.write_all(&self.out) {
            return Err(self.lost(e));
        }
        self.out.clear();
        self.queued = 0;
        self.inflight += n;
        Ok(n)
    }

    fn reap_at_most(&mut self, min: usize, max: usize, out: &mut Vec<Completion>) -> Result<usize> {
        let min = min.min(self.inflight);
        let mut got = 0;
        while got < max && self.inflight > 0 {
            // Wait for the first `min`; then take only what has already arrived.
            match self.next_reply(got < min)? {
                Some(c) => {
                    out.push(c);
                    got += 1;
                }
                None => break,
            }
        }
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
        self.conn.disconnect();
    }
}
