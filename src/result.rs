//! The versioned result document: configuration, environment and every figure of one run, in the
//! shape written by `--json` and read back by later tools.

use crate::config::RunConfig;
use crate::env::Environment;
use serde::{Deserialize, Serialize};
use study_name::StudyName;

pub mod fleet;
pub mod run;
pub mod study_name;

pub const SCHEMA: &str = "readlab.run/1";

/// A failed read: where, and why (defined beside the errors that carry it).
pub use crate::error::IoErrorRecord;
pub use run::{
    EndedBy, ErrorSummary, OpenLoopSummary, Precision, RaceRecord, RoundFigures, RunResult,
    RunnerCost, SizeFigures, ThinkSummary, TimerInfo, VerifySummary,
};

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

    /// The run could not keep to the rate asked: it issued less than 90 % of it and more than
    /// a tenth of a second's arrivals were still due at the end. The warning every output
    /// carries then (the latencies count that wait from each request's due time).
    pub fn shortfall(&self) -> Option<String> {
        let short = self.achieved_iops < 0.9 * self.target_iops
            && self.final_backlog > (0.1 * self.target_iops).max(1.0);
        short.then(|| {
            format!(
                "asked {}/s, issued {}/s: the run could not keep up ({} requests still due at \
                 the end, latency counted from their due time); lower --rate, or raise \
                 --iodepth or --numjobs",
                grouped(self.target_iops),
                grouped(self.achieved_iops),
                grouped(self.final_backlog)
            )
        })
    }
}

impl ThinkSummary {
    /// The pause asked and the pauses as measured, as the report says them: `2.00ms every 4
    /// I/Os, all spinning: 25 pauses, 2.06ms each on average`.
    pub fn words(&self) -> String {
        format!(
            "{}: {} pauses, {} each on average",
            self.asked.words(),
            grouped(self.pauses as f64),
            crate::units::format_ns(self.mean_pause_us * 1e3, crate::units::Style::Table)
        )
    }
}

/// A rate rounded to a whole number, its thousands apart (`4,998`).
fn grouped(v: f64) -> String {
    crate::units::grouped(v.round().max(0.0) as u64)
}

/// Which study point a run belongs to (absent for a plain `readlab run`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
    /// Delay netem added to every packet from the server to its clients on the veth pair, µs:
    /// a delay in the network, not in the server (0: none).
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub netem_us: u64,
    /// The server's CPU during the point (remote points of a server readlab started only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<ServerCpu>,
    /// The clients were spread over this many MPI ranks (rank r ran N/R clients, one more when
    /// r < N mod R); absent when every client ran in one process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranks: Option<usize>,
}

/// A server's CPU as measured by the server itself (its `--json` summary).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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

fn is_zero_u64(v: &u64) -> bool {
    *v == 0
}

impl NetTag {
    /// The netem delays (µs) these points were measured with, smallest first, each once.
    pub fn netem_delays<'a>(tags: impl Iterator<Item = &'a NetTag>) -> Vec<u64> {
        let mut v: Vec<u64> = tags.map(|t| t.netem_us).filter(|&n| n > 0).collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// Everything but the measured server CPU: what makes two points the same point.
    pub fn same_point(&self, o: &NetTag) -> bool {
        (
            &self.side,
            &self.network,
            &self.model,
            &self.backend,
            self.delay_us,
            self.busy_poll_us,
            self.netem_us,
            self.ranks,
        ) == (
            &o.side,
            &o.network,
            &o.model,
            &o.backend,
            o.delay_us,
            o.busy_poll_us,
            o.netem_us,
            o.ranks,
        )
    }
}

/// One target of a run on several targets: its name, its own figures, or why it failed (the
/// others' results stand).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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

/// A test fixture: three members (ranks 0, 1 and 2 on hosts a, a and b, reading `/dev/t{rank}`)
/// with the environments and results of real runs, and the documents of those runs (from
/// tests/fixtures/results-small.jsonl; the members take its lines 0, 1 and 3).
#[cfg(test)]
pub fn sample_members() -> (Vec<Document>, Vec<fleet::FleetMember>) {
    let docs: Vec<Document> = include_str!("../tests/fixtures/results-small.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let members = [0usize, 1, 3]
        .iter()
        .enumerate()
        .map(|(rank, &i)| fleet::FleetMember {
            rank,
            host: if rank < 2 { "a" } else { "b" }.into(),
            local_rank: rank % 2,
            target: format!("/dev/t{rank}"),
            threads: Some(1),
            clock_offset_ns: 0,
            clock_uncertainty_ns: 0,
            exchange_offset_ns: None,
            exchange_uncertainty_ns: None,
            start_ns: 0,
            late_ns: 0,
            realtime_wait: true,
            environment: docs[i].environment.clone(),
            result: docs[i].result.clone(),
        })
        .collect();
    (docs, members)
}

#[cfg(test)]
mod tests {
    use super::{Document, EndedBy, IoErrorRecord, OpenLoopSummary, VerifySummary};
    use crate::data::Mismatch;

    #[test]
    fn a_rate_not_kept_up_with_is_said() {
        let line = include_str!("../tests/fixtures/results-small.jsonl")
            .lines()
            .next()
            .unwrap();
        let d: Document = serde_json::from_str(line).unwrap();
        let o = |target: f64, achieved: f64, final_backlog: f64| OpenLoopSummary {
            target_iops: target,
            achieved_iops: achieved,
            issue_delay: d.result.latency.clone(),
            late: 0,
            late_pct: 0.0,
            max_backlog: final_backlog,
            final_backlog,
        };
        let w = o(1e12, 15_000.0, 1e12).shortfall().unwrap();
        assert!(
            w.starts_with("asked 1,000,000,000,000/s, issued 15,000/s: the run could not keep up"),
            "{w}"
        );
        // Kept up (a request or two due at the end), or short by noise only: nothing said.
        assert_eq!(o(5000.0, 4990.0, 1.0).shortfall(), None);
        assert_eq!(o(10.0, 8.0, 1.0).shortfall(), None);
    }

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
