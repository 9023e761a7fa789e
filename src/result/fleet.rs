//! What a run measured by a fleet of processes (MPI ranks) keeps besides its aggregate figures:
//! who took part (rank, host, target), each member's own result, when each started against the
//! others and how well that is known. Lives beside the result document because the document
//! carries it (`Document::fleet`); `crate::fleet` fills it in.

use super::RunResult;
use crate::env::Environment;
use serde::{Deserialize, Serialize};

/// The fleet part of a document whose `result` is the fleet's aggregate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FleetRecord {
    /// Number of ranks (processes) that measured.
    pub ranks: usize,
    /// The distinct hosts, in the order of their first rank.
    pub hosts: Vec<String>,
    /// The target as given, before `{rank}`, `{local_rank}` and `{host}` were filled in.
    pub target: String,
    pub start: FleetStart,
    /// Seconds during which every rank was measuring: from the latest start of a measured window
    /// to the earliest end (on rank 0's clock).
    pub common_window_s: f64,
    /// What each aggregate figure is (summed, merged, …), for whoever reads the document.
    pub aggregate: String,
    /// Every rank that measured, in rank order.
    pub members: Vec<FleetMember>,
    /// Ranks of the launch that had no share of the work (fewer clients than ranks): they met
    /// the others but measured nothing, and are in no figure.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub idle: Vec<usize>,
}

/// How together the ranks started.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FleetStart {
    /// Latest minus earliest start of a rank, on rank 0's clock.
    pub skew_ns: u64,
    /// How well the hosts' clock offsets are known (the largest half round trip of the best
    /// exchange with rank 0; 0 when every rank shares rank 0's clock): the skew is known to ±
    /// this.
    pub clock_uncertainty_ns: u64,
    /// How long before the start the ranks were told when to start.
    pub notice_ns: u64,
}

/// One rank's part.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FleetMember {
    pub rank: usize,
    pub host: String,
    /// Rank among the ranks of its host.
    pub local_rank: usize,
    /// The target this rank read.
    pub target: String,
    /// The threads (NBD clients) this rank ran: the run's own where every rank runs the same
    /// workload, its share where the ranks split one (the clients study over MPI).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<usize>,
    /// This rank's clock minus rank 0's, as estimated over MPI (0 on rank 0's host).
    pub clock_offset_ns: i64,
    pub clock_uncertainty_ns: u64,
    /// What this run's ping-pong exchanges with rank 0 measured (absent on rank 0), also where
    /// the clock is known to be rank 0's own (a check on the estimate): offset and ± bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exchange_offset_ns: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exchange_uncertainty_ns: Option<u64>,
    /// When this rank started, relative to the earliest rank, on rank 0's clock.
    pub start_ns: u64,
    /// How late it started after the agreed instant.
    pub late_ns: u64,
    /// Whether it waited for the instant at real-time priority (SCHED_FIFO), its wake-up
    /// preempting other work; false where that is not permitted (no CAP_SYS_NICE, RLIMIT_RTPRIO).
    #[serde(default)]
    pub realtime_wait: bool,
    pub environment: Environment,
    pub result: RunResult,
}
