//! What `readlab serve` was asked ([`ServeConfig`]) and what every server thread shares: the
//! context, its counters, a client's slot and the negotiation. Apart from `serve/mod.rs` so that
//! the two server models (thread, uring) and the server that starts them do not name each other.

use super::request::Limits;
use crate::engine::{EngineKind, EngineOptions};
use crate::nbd::handshake::{ServerOutcome, Session, server_handshake};
use crate::nbd::{Address, ExportInfo, Stream};
use crate::source::Source;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How the server is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Model {
    /// A thread per connection, synchronous reads (or the engine's own queue) on it.
    Thread,
    /// `threads` io_uring event loops, each driving its connections' sockets and reads.
    Uring,
}

/// What is served.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// A local file or block device.
    Target(PathBuf),
    /// Zeros of this many bytes, no storage (the document's null block device).
    Null(u64),
}

/// Largest request served, the advertised maximum block size.
pub const MAX_REQUEST: u32 = 32 << 20;
/// How long a client may take to negotiate.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

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
}

/// Negotiate on `s` (bounded in time); what the client negotiated when transmission starts.
pub(crate) fn negotiate(s: &mut Stream, ctx: &Ctx) -> Option<Session> {
    if s.set_read_timeout(Some(HANDSHAKE_TIMEOUT)).is_err()
        || s.set_write_timeout(Some(HANDSHAKE_TIMEOUT)).is_err()
    {
        return None;
    }
    let Ok(ServerOutcome::Transmission { session, .. }) = server_handshake(s, &ctx.export) else {
        return None;
    };
    (s.set_read_timeout(None).is_ok() && s.set_write_timeout(None).is_ok()).then_some(session)
}
