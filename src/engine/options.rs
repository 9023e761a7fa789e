//! The options engines take, as plain data: [`EngineOptions`] and each engine's own typed options
//! in it. Their own file so the engines, the engine table and the core types can all name them
//! without naming each other.

use serde::{Deserialize, Serialize};

/// Engine options that only some engines understand: each engine's own typed options, stored
/// flat (`"fixed_files": true`, …) as readlab has always written them.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(default)]
pub struct EngineOptions {
    #[serde(flatten)]
    pub pvsync2: Pvsync2Options,
    #[serde(flatten)]
    pub uring: UringOptions,
    #[serde(flatten)]
    pub pool: PoolOptions,
    #[serde(flatten)]
    pub nbd: NbdOptions,
}

/// pvsync2's own options.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(default)]
pub struct Pvsync2Options {
    /// preadv2 RWF_HIPRI: poll for completion (needs a device with poll queues).
    pub hipri: bool,
    /// preadv2 RWF_NOWAIT: fail with EAGAIN instead of blocking.
    pub nowait: bool,
}

/// io_uring's own options.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(default)]
pub struct UringOptions {
    /// Register the file and use fixed-file SQEs.
    pub fixed_files: bool,
    /// Register the buffer region once and use READ_FIXED.
    pub fixed_bufs: bool,
    /// A kernel thread polls the submission queue (IORING_SETUP_SQPOLL).
    pub sqpoll: bool,
    /// Pin the SQ poll thread to this CPU.
    pub sqpoll_cpu: Option<u32>,
    /// Milliseconds the SQ poll thread spins before it sleeps.
    pub sqpoll_idle_ms: u32,
    /// Busy-poll for completions (IORING_SETUP_IOPOLL; needs device poll queues).
    pub iopoll: bool,
    /// Do not try COOP_TASKRUN / SINGLE_ISSUER / DEFER_TASKRUN / NO_SQARRAY / a registered ring fd.
    pub plain_setup: bool,
}

/// The pool's own options.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(default)]
pub struct PoolOptions {
    /// Worker threads doing the reads (default: iodepth).
    pub pool_threads: Option<usize>,
}

/// The nbd engine's own options.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(default)]
pub struct NbdOptions {
    /// Spin on the socket for a reply for up to this many microseconds before sleeping for it
    /// (0: never spin): no sleep and no wake-up of an idle CPU in the latency.
    pub busy_poll_us: u32,
}

impl NbdOptions {
    /// The spin budget `--busy-poll` gives without a value: a QD1 reply with 100 us of service
    /// time arrives within it.
    pub const BUSY_POLL_US: u32 = 200;
}
