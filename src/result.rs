//! The versioned result document: configuration, environment and every figure of one run, in the
//! shape written by `--json` and read back by later tools.

use crate::config::RunConfig;
use crate::cpu::CpuUsage;
use crate::data::Mismatch;
use crate::env::Environment;
use crate::stats::{LatencySummary, TimelinePoint};
use crate::study::name::StudyName;
use serde::{Deserialize, Serialize};

pub mod fleet;

pub const SCHEMA: &str = "readlab.run/1";

/// A failed read: where, and why (defined beside the errors that carry it).
pub use crate::error::IoErrorRecord;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ErrorSummary {
    pub count: u64,
    /// Reads refused with EAGAIN under RWF_NOWAIT (not errors: the data was not cached).
    pub eagain: u64,
    /// The first few errors, in order.
    pub first: Vec<IoErrorRecord>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct VerifySummary {
    pub checked_ios: u64,
    pub mismatches: u64,
    pub first: Vec<Mismatch>,
}

/// How readlab's own clock weighs on each I/O.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimerInfo {
    pub ns_per_clock_read: f64,
    pub clock_reads_per_io: f64,
    pub overhead_ns_per_io: f64,
}

/// Every figure of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// The report's label for this configuration (e.g. `P`, `PT4`, `A16B1T3`).
    pub label: String,
    /// Measured window in seconds (ramp excluded).
    pub seconds: f64,
    /// Block reads completed in the window (requests × blocks per request).
    pub ios: u64,
    /// Logical requests completed in the window; latency is per request.
    pub requests: u64,
    pub bytes: u64,
    pub iops: f64,
    pub requests_per_s: f64,
    /// 10^6 bytes per second.
    pub mb_s: f64,
    /// 2^20 bytes per second.
    pub mib_s: f64,
    pub latency: LatencySummary,
    /// Mean requests in flight per thread over the measured window (time-weighted; by Little's
    /// law IOPS × mean latency), to hold against the `iodepth` asked for. Absent in results
    /// written before readlab measured it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub achieved_depth: Option<f64>,
    pub timeline: Vec<TimelinePoint>,
    /// With `--sample-every N`: throughput per N bytes of the target, in offset order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub offset_samples: Vec<crate::stats::OffsetSample>,
    pub cpu: CpuUsage,
    /// CPU of every thread of the process (including kernel helpers) per measured I/O.
    pub cpu_us_per_io: f64,
    pub timer: TimerInfo,
    /// Time of the read alone (engines that hand reads to other threads report it).
    pub service_latency: Option<LatencySummary>,
    /// Per-I/O hand-off cost: total latency minus the read itself (thread pool).
    pub handoff_latency: Option<LatencySummary>,
    /// Engine features in use after any fallback (e.g. io_uring setup flags).
    pub engine_features: Vec<String>,
    /// Open-loop figures (with `--rate`).
    pub open_loop: Option<OpenLoopSummary>,
    pub errors: ErrorSummary,
    pub verify: Option<VerifySummary>,
    /// Why the run ended.
    pub ended_by: EndedBy,
    pub warnings: Vec<String>,
    /// With `--repeat N`: the median and confidence interval of each figure over the N runs (this
    /// document is the run with the median IOPS). Absent for a single run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<crate::interval::RepeatSummary>,
    /// Merged latency histogram (HdrHistogram V2, deflate, base64); merge it with others later.
    pub histogram: String,
}

impl RunResult {
    /// True when the run saw an I/O error or a verification mismatch.
    pub fn failed(&self) -> bool {
        self.errors.count > 0 || self.verify.as_ref().is_some_and(|v| v.mismatches > 0)
    }

    /// Why the run failed, one line each (counts, then the first mismatch and the first error
    /// with their offsets), or None when it did not fail.
    pub fn failure_summary(&self) -> Option<Vec<String>> {
        if !self.failed() {
            return None;
        }
        let mismatches = self.verify.as_ref().map_or(0, |v| v.mismatches);
        let mut lines = vec![format!(
            "run failed: {} I/O error(s), {mismatches} verification mismatch(es)",
            self.errors.count
        )];
        if let Some(m) = self.verify.as_ref().and_then(|v| v.first.first()) {
            lines.push(format!(
                "first mismatch at offset {} (sector {})",
                m.offset, m.sector
            ));
        }
        if let Some(e) = self.errors.first.first() {
            lines.push(format!("first error at offset {}: {}", e.offset, e.message));
        }
        Some(lines)
    }
}

/// Why a run ended. Stored as the strings readlab has always written: `"runtime"`, `"stable"`,
/// `"io-limit"`, `"interrupted"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EndedBy {
    /// The planned runtime elapsed (or every worker finished its work on its own).
    Runtime,
    /// Per-second IOPS settled before the runtime (`--stop-when-stable`).
    Stable,
    /// Every worker issued its `--io-limit` bytes before the runtime.
    IoLimit,
    /// The observer cancelled the run (Ctrl-C); its figures cover only part of the window.
    Interrupted,
}

impl EndedBy {
    /// The stored name, as in the JSON documents.
    pub fn as_str(self) -> &'static str {
        match self {
            EndedBy::Runtime => "runtime",
            EndedBy::Stable => "stable",
            EndedBy::IoLimit => "io-limit",
            EndedBy::Interrupted => "interrupted",
        }
    }
}

impl std::fmt::Display for EndedBy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How well an open-loop run kept to its schedule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpenLoopSummary {
    pub target_iops: f64,
    /// Requests completed per second in the window.
    pub achieved_iops: f64,
    /// How late requests were issued after their due time (waiting for a free slot).
    pub issue_delay: LatencySummary,
    /// Requests issued more than one mean inter-arrival time late (missed deadlines).
    pub late: u64,
    pub late_pct: f64,
    /// Largest backlog seen: requests that were due but could not be issued yet.
    pub max_backlog: f64,
    /// Requests still due but never issued when the window ended.
    pub final_backlog: f64,
}

impl OpenLoopSummary {
    /// The rate asked and the rate achieved, as every output says them: `rate 5,000/s, achieved
    /// 4,998/s`.
    pub fn words(&self) -> String {
        format!(
            "rate {}/s, achieved {}/s",
            grouped(self.target_iops),
            grouped(self.achieved_iops)
        )
    }
}

/// A rate rounded to a whole number, its thousands apart (`4,998`).
fn grouped(v: f64) -> String {
    let n = v.round().max(0.0) as u64;
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Which study point a run belongs to (absent for a plain `readlab run`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StudyTag {
    pub study: StudyName,
    /// The I/O scheduler the device was switched to for this point (scheduler study).
    #[serde(default)]
    pub scheduler: Option<String>,
    /// Another setting this point ran under, e.g. `buffered, read_ahead_kb=0` (cache study).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setting: Option<String>,
    /// A networked study's point: which side it measured, over what, and the server's CPU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub net: Option<NetTag>,
}

/// What a networked study's point measured (the NBD studies of the networked-flash document).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NetTag {
    /// `remote`: readlab's nbd client reading a `readlab serve` server; `local`: the same device
    /// read directly at the same concurrency (the "equivalent local performance").
    pub side: String,
    /// How client and server were connected: `loopback` (127.0.0.1), `netns-veth`, or `none`
    /// for local points.
    pub network: String,
    /// The server model (`thread`, `uring`); empty for local points.
    #[serde(default)]
    pub model: String,
    /// `target` (the study's file or device), `null` (zeros without storage), or `export`: the
    /// export of a server given by URL, which readlab neither started nor measures.
    pub backend: String,
    /// Service time injected into every read by the server, µs.
    #[serde(default)]
    pub delay_us: u64,
    /// Client and server spun on their sockets for up to this many µs before sleeping (0: they
    /// slept at once, the usual way).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub busy_poll_us: u32,
    /// The server's CPU during the point (remote points of a server readlab started only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<ServerCpu>,
    /// The clients were spread over this many MPI ranks (rank r ran N/R clients, one more when
    /// r < N mod R); absent when every client ran in one process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranks: Option<usize>,
}

/// A server's CPU as measured by the server itself (its `--json` summary).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerCpu {
    /// CPU of the server process per read served, µs.
    pub us_per_read: f64,
    /// Server cores busy at the client's IOPS (µs per read × IOPS), % of one core.
    pub pct_of_core: f64,
    /// Reads served per second of server CPU: IOPS per server core.
    pub iops_per_core: f64,
    /// Reads the server counted (warm-up included).
    pub reads: u64,
}

fn is_zero(v: &u32) -> bool {
    *v == 0
}

impl NetTag {
    /// Everything but the measured server CPU: what makes two points the same point.
    pub fn same_point(&self, o: &NetTag) -> bool {
        (
            &self.side,
            &self.network,
            &self.model,
            &self.backend,
            self.delay_us,
            self.busy_poll_us,
            self.ranks,
        ) == (
            &o.side,
            &o.network,
            &o.model,
            &o.backend,
            o.delay_us,
            o.busy_poll_us,
            o.ranks,
        )
    }
}

/// One target of a run on several targets: its name, its own figures, or why it failed (the
/// others' results stand).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetRun {
    /// The name every output uses (`--name`, `NAME:PATH`, or the device's name).
    pub name: String,
    pub config: RunConfig,
    pub environment: Environment,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<RunResult>,
    /// The error that stopped this target (its workers stopped, the others went on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl TargetRun {
    /// True when this target's run ended in an error, I/O errors or mismatches.
    pub fn failed(&self) -> bool {
        self.error.is_some() || self.result.as_ref().is_some_and(RunResult::failed)
    }
}

impl Document {
    /// True when the run (or any of its targets) failed.
    pub fn failed(&self) -> bool {
        self.result.failed() || self.targets.iter().any(TargetRun::failed)
    }
}

/// One run as written to disk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Document {
    pub schema: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub study: Option<StudyTag>,
    pub config: RunConfig,
    pub environment: Environment,
    /// The run's figures; with several targets, their aggregate.
    pub result: RunResult,
    /// A run on several targets at once: each target's own result (absent for one target).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<TargetRun>,
    /// The monitor's samples when the run had `--monitor`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub monitor: Option<crate::monitor::MonitorRecord>,
    /// A run measured by several processes under MPI: `result` is their aggregate, this names
    /// every rank with its own result (`crate::fleet`). Absent for a single process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fleet: Option<Box<fleet::FleetRecord>>,
}

#[cfg(test)]
mod tests {
    use super::{Document, EndedBy, IoErrorRecord, VerifySummary};
    use crate::data::Mismatch;

    #[test]
    fn a_failed_run_says_why_with_offsets() {
        let line = include_str!("../tests/fixtures/results-small.jsonl")
            .lines()
            .next()
            .unwrap();
        let mut r = serde_json::from_str::<Document>(line).unwrap().result;
        r.errors = Default::default();
        r.verify = None;
        assert_eq!(r.failure_summary(), None);
        r.errors.count = 2;
        r.errors.first.push(IoErrorRecord {
            offset: 8192,
            len: 4096,
            errno: 0,
            message: "short read".into(),
        });
        r.verify = Some(VerifySummary {
            checked_ios: 10,
            mismatches: 1,
            first: vec![Mismatch {
                offset: 8209,
                sector: 8192,
                expected: 1,
                found: 2,
            }],
        });
        assert_eq!(
            r.failure_summary().unwrap(),
            [
                "run failed: 2 I/O error(s), 1 verification mismatch(es)",
                "first mismatch at offset 8209 (sector 8192)",
                "first error at offset 8192: short read",
            ]
        );
    }

    #[test]
    fn ended_by_keeps_its_stored_names() {
        for (e, name) in [
            (EndedBy::Runtime, "runtime"),
            (EndedBy::Stable, "stable"),
            (EndedBy::IoLimit, "io-limit"),
            (EndedBy::Interrupted, "interrupted"),
        ] {
            let json = serde_json::to_string(&e).unwrap();
            assert_eq!(json, format!("\"{name}\""));
            assert_eq!(e.to_string(), name);
            assert_eq!(serde_json::from_str::<EndedBy>(&json).unwrap(), e);
        }
    }
}
