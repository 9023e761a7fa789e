//! What `readlab serve` was asked ([`ServeConfig`]) and what every server thread shares: the
//! context, its counters, a client's slot and the negotiation. Apart from `serve/mod.rs` so that
//! the two server models (thread, uring) and the server that starts them do not name each other.

use super::budget::{Budget, DEFAULT_MAX_IN_FLIGHT};
use super::request::Limits;
use crate::engine::{EngineKind, EngineOptions};
use crate::nbd::handshake::{ServerOutcome, Session, server_handshake};
use crate::nbd::wait::Deadline;
use crate::nbd::{Address, ExportInfo, Stream};
use crate::source::Source;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::io::{IoSlice, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How the server is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Model {
    /// A thread per connection, synchronous reads (or the engine's own queue) on it.
    Thread,
    /// `threads` io_uring event loops, each driving its connections' sockets and reads.
    Uring,
}

/// What is served.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// A local file or block device.
    Target(PathBuf),
    /// Zeros of this many bytes, no storage (the document's null block device).
    Null(u64),
}

/// Largest request served, the advertised maximum block size.
pub const MAX_REQUEST: u32 = 32 << 20;
/// How long a client may take to negotiate, the whole handshake (`--handshake-timeout`).
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a negotiated client may send nothing with nothing in flight, or leave its replies
/// unread, before it is closed (`--idle-timeout`).
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(300);

/// Everything `readlab serve` was asked.
#[derive(Debug, Clone, Serialize)]
pub struct ServeConfig {
    pub backend: Backend,
    pub listen: Address,
    pub model: Model,
    /// Event-loop threads of the uring model.
    pub threads: usize,
    /// The engine reading the target in the thread model.
    pub engine: EngineKind,
    /// Reads in flight per connection (thread model: the engine's queue).
    pub iodepth: usize,
    pub direct: bool,
    pub options: EngineOptions,
    /// Added to every read's service time.
    pub delay: Duration,
    /// Spin on the sockets for a request for up to this long before sleeping for it.
    pub busy_poll: Duration,
    pub max_clients: usize,
    pub export_name: String,
    /// The whole handshake's deadline.
    pub handshake_timeout: Duration,
    /// A negotiated client quiet this long is closed (zero: never).
    pub idle_timeout: Duration,
    /// Payload bytes in flight across all connections (beyond one small request each).
    pub max_in_flight: u64,
}

impl ServeConfig {
    pub fn new(backend: Backend, listen: Address) -> ServeConfig {
        ServeConfig {
            backend,
            listen,
            model: Model::Thread,
            threads: 1,
            engine: EngineKind::Psync,
            iodepth: 1,
            direct: true,
            options: EngineOptions::default(),
            delay: Duration::ZERO,
            busy_poll: Duration::ZERO,
            max_clients: 256,
            export_name: String::new(),
            handshake_timeout: HANDSHAKE_TIMEOUT,
            idle_timeout: IDLE_TIMEOUT,
            max_in_flight: DEFAULT_MAX_IN_FLIGHT,
        }
    }
}

impl Serialize for Address {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

/// Counters every connection adds to.
#[derive(Default)]
pub(crate) struct Counters {
    pub(crate) reads: AtomicU64,
    pub(crate) bytes: AtomicU64,
    /// Requests answered with an error (writes, bad reads, failed reads).
    pub(crate) refused: AtomicU64,
    pub(crate) clients: AtomicU64,
    pub(crate) clients_total: AtomicU64,
    pub(crate) clients_max: AtomicU64,
    pub(crate) rejected: AtomicU64,
    /// Connections closed because the client broke the protocol (or vanished mid-reply).
    pub(crate) hung_up: AtomicU64,
    /// Connections closed at the handshake deadline or the idle timeout.
    pub(crate) timed_out: AtomicU64,
}

/// One connected client, counted until dropped.
pub(crate) struct ClientSlot(pub(crate) Arc<Ctx>);

impl Drop for ClientSlot {
    fn drop(&mut self) {
        self.0.counters.clients.fetch_sub(1, Ordering::Relaxed);
    }
}

/// What every server thread shares.
pub(crate) struct Ctx {
    pub(crate) cfg: ServeConfig,
    pub(crate) export: ExportInfo,
    pub(crate) limits: Limits,
    /// The source read (None: the null back end).
    pub(crate) source: Option<Box<dyn Source>>,
    pub(crate) counters: Counters,
    pub(crate) stop: AtomicBool,
    /// Streams of the thread model's connections, to wake them when stopping.
    pub(crate) live: Mutex<HashMap<u64, Stream>>,
    /// Payload bytes in flight, shared by every connection.
    pub(crate) budget: Budget,
}

impl Ctx {
    pub(crate) fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Count a served read.
    pub(crate) fn served(&self, bytes: u64) {
        self.counters.reads.fetch_add(1, Ordering::Relaxed);
        self.counters.bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    pub(crate) fn refused(&self) {
        self.counters.refused.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn hung_up(&self) {
        self.counters.hung_up.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn timed_out(&self) {
        self.counters.timed_out.fetch_add(1, Ordering::Relaxed);
    }

    /// The idle timeout as a socket timeout (None: never).
    pub(crate) fn idle(&self) -> Option<Duration> {
        Some(self.cfg.idle_timeout).filter(|d| !d.is_zero())
    }
}

/// Negotiate on `s` within the handshake deadline (one deadline for the whole handshake, not
/// per read: a client dripping a byte at a time is dropped at it); when transmission starts,
/// with the stream's timeouts cleared: what the client negotiated when transmission starts.
pub(crate) fn negotiate(s: &mut Stream, ctx: &Ctx) -> Option<Session> {
    let mut d = Deadline::new(s, Instant::now() + ctx.cfg.handshake_timeout);
    let outcome = server_handshake(&mut d, &ctx.export);
    if matches!(&outcome, Err(e) if timed_out(e)) {
        ctx.timed_out();
    }
    let Ok(ServerOutcome::Transmission { session, .. }) = outcome else {
        return None;
    };
    (s.set_read_timeout(None).is_ok() && s.set_write_timeout(None).is_ok()).then_some(session)
}

/// Write every byte of `bufs` to `s` (header and payload in one `writev` when the socket takes
/// them), on a socket whose write timeout is `within`: a `writev` that waited that long and still took only part of the replies
/// is a client not reading them, and ends with a timeout (the kernel growing its buffers would
/// otherwise let a trickle through every few seconds, each restarting the socket's timeout).
pub(crate) fn write_all_within(
    s: &Stream,
    mut bufs: &mut [IoSlice<'_>],
    within: Option<Duration>,
) -> std::io::Result<()> {
    IoSlice::advance_slices(&mut bufs, 0);
    while !bufs.is_empty() {
        let t = Instant::now();
        match (&*s).write_vectored(bufs) {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(n) => {
                IoSlice::advance_slices(&mut bufs, n);
                if !bufs.is_empty() && within.is_some_and(|d| t.elapsed() >= d) {
                    return Err(std::io::ErrorKind::TimedOut.into());
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Whether an I/O error is a socket timeout.
pub(crate) fn timed_out(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    )
}
