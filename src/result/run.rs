//! One run's figures ([`RunResult`]) and what they carry (errors, verification, the timer, how
//! the run ended, an open-loop run's rate). Apart from the document in `result.rs` so that the
//! fleet record, which holds each rank's figures and is held by the document, and the document
//! do not name each other.

use crate::cpu::CpuUsage;
use crate::data::Mismatch;
use crate::error::IoErrorRecord;
use crate::stats::{LatencySummary, TimelinePoint};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ErrorSummary {
    pub count: u64,
    /// Reads refused with EAGAIN under RWF_NOWAIT (not errors: the data was not cached).
    pub eagain: u64,
    /// The first few errors, in order.
    pub first: Vec<IoErrorRecord>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct VerifySummary {
    pub checked_ios: u64,
    pub mismatches: u64,
    pub first: Vec<Mismatch>,
}

/// How readlab's own clock weighs on each I/O.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TimerInfo {
    /// The clock every I/O is timed with: `tsc` (the CPU's time-stamp counter, read directly
    /// where the kernel keeps time with it) or `monotonic` (CLOCK_MONOTONIC). Empty in results
    /// written before it was recorded.
    #[serde(default)]
    pub clock: String,
    pub ns_per_clock_read: f64,
    pub clock_reads_per_io: f64,
    pub overhead_ns_per_io: f64,
}

/// readlab's own loop in a run's shape: the same runner (threads, depth, batch, complete-min,
/// blocks per request, block size, access, rate, sampling) driving the null engine, which reads
/// nothing, for a short window ([`crate::runner::null_cost`]). What is left of the run's CPU per
/// I/O is the engine, the kernel and the device.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunnerCost {
    /// CPU of readlab's threads per I/O on the null engine in this run's shape, µs (computed as
    /// the run's own `cpu_us_per_io`).
    pub cpu_us_per_io: f64,
    /// I/Os per second readlab's loop reached on the null engine in this shape.
    pub iops: f64,
    /// `cpu_us_per_io` above ÷ the run's `cpu_us_per_io`: the part of the run's CPU per I/O
    /// that is readlab's own loop ([`RunnerCost::share`]).
    pub share_of_cpu: f64,
}

impl RunnerCost {
    /// The null engine's figures held against a run whose CPU per I/O is `run_cpu_us_per_io`;
    /// None when the run has no CPU per I/O to hold them against (nothing completed).
    pub fn new(cpu_us_per_io: f64, iops: f64, run_cpu_us_per_io: f64) -> Option<RunnerCost> {
        let share_of_cpu = RunnerCost::share(cpu_us_per_io, run_cpu_us_per_io)?;
        Some(RunnerCost {
            cpu_us_per_io,
            iops,
            share_of_cpu,
        })
    }

    /// The one computation of the share every output shows: readlab's CPU per I/O on the null
    /// engine ÷ the run's CPU per I/O; None unless both are positive and finite.
    pub fn share(runner_cpu_us_per_io: f64, run_cpu_us_per_io: f64) -> Option<f64> {
        let ok = |v: f64| v.is_finite() && v > 0.0;
        (ok(runner_cpu_us_per_io) && ok(run_cpu_us_per_io))
            .then(|| runner_cpu_us_per_io / run_cpu_us_per_io)
    }
}

/// Every figure of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
    /// readlab's own loop in this run's shape, measured on the null engine right after the run.
    /// Absent for runs of the null engine itself (their own figures are it), for runs where it
    /// could not be measured (interrupted, nothing completed), for a fleet's aggregate (each
    /// rank's result carries its own), and in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runner_cost: Option<RunnerCost>,
    /// Time of the read alone (engines that hand reads to other threads report it).
    pub service_latency: Option<LatencySummary>,
    /// Per-I/O hand-off cost: total latency minus the read itself (thread pool).
    pub handoff_latency: Option<LatencySummary>,
    /// Engine features in use after any fallback (e.g. io_uring setup flags).
    pub engine_features: Vec<String>,
    /// The completion interrupts the target's device raised over the window, per I/O: whether
    /// the kernel polled (IOPOLL, RWF_HIPRI) or took an interrupt. Absent where the device's
    /// interrupt lines cannot be named (not NVMe or virtio), for buffered runs (a page-cache hit
    /// raises no interrupt either), and in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completions: Option<crate::irq::CompletionInterrupts>,
    /// Open-loop figures (with `--rate`).
    pub open_loop: Option<OpenLoopSummary>,
    /// With `--thinktime` (fio's `thinktime`): the pause asked and the pauses as measured.
    /// Absent without think time, and in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub think: Option<ThinkSummary>,
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
    /// How well this run measured its headline figures: each with its interval. Absent where
    /// the run was too short for one (fewer than four batches of windows), for imported and
    /// aggregated results, and in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision: Option<Precision>,
    /// The rounds this configuration was measured in when it was raced against others
    /// (interleaved with them, compared round by round). Absent when it was not raced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub race: Option<RaceRecord>,
    /// With a mix of block sizes (`bssplit`): each size's share and figures over the measured
    /// window, in the mix's order, beside the run's own (which cover every size). Absent for
    /// one size.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub by_size: Vec<SizeFigures>,
}

/// One size of a mix over the measured window: how many of the requests took it (against the
/// share asked), its rate and its latency.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SizeFigures {
    /// The size in bytes.
    pub bs: u64,
    /// Its share of the requests asked for, percent.
    pub percent: u32,
    /// Requests of this size completed in the window, and their share of all, percent.
    pub requests: u64,
    pub share_pct: f64,
    pub bytes: u64,
    /// Requests of this size per second of the window, and their bytes (2^20 per second).
    pub iops: f64,
    pub mib_s: f64,
    pub latency: LatencySummary,
}

/// A run's headline figures, each with the interval that holds its true value at `confidence`:
/// the rate from per-window counts (batch means: consecutive windows grouped so that the
/// batches' means are close to independent), CPU per I/O from per-window CPU (a ratio of
/// totals), the percentiles from the histogram's counts (order statistics).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Precision {
    pub confidence: f64,
    /// Length of the windows the rate and CPU were sampled over, seconds.
    pub window_s: f64,
    /// Windows in the measured window, and the batches they were grouped into.
    pub windows: usize,
    pub batches: usize,
    /// The run's IOPS with the interval of its mean rate over the windows (each window's I/Os
    /// over its seconds; a last window cut short left out).
    pub iops: crate::estimate::Estimate,
    /// The run's CPU per I/O with an interval from each window's CPU: the process's CPU clock
    /// (`CLOCK_PROCESS_CPUTIME_ID`: every thread, io_uring's kernel helpers included), cheaper
    /// to read ten times a second than the per-thread figures of `cpu`; its relative width,
    /// around the run's own figure. None when no window saw an I/O.
    pub cpu_us_per_io: Option<crate::estimate::Estimate>,
    /// The percentiles of the run's merged histogram, each with the interval of order
    /// statistics its request count supports; a side without a bound (too few requests beyond
    /// it) is none.
    pub p50_ns: crate::estimate::Estimate,
    pub p99_ns: crate::estimate::Estimate,
    pub p999_ns: crate::estimate::Estimate,
}

/// The rounds of a race one configuration took part in: `id` names the race (configurations
/// are compared round by round only within one race), each round its figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RaceRecord {
    pub id: String,
    /// Round 0 is the first pass; a configuration that left the race early has fewer rounds.
    /// Calls compare the rounds after the first pass in pairs (they are interleaved; the main
    /// job's only time the reads, its first pass verified them).
    pub rounds: Vec<RoundFigures>,
    /// The confidence each of the race's calls in this configuration's group was made at: the
    /// race's own, shared among the group's contenders and the looks planned.
    pub confidence: f64,
    /// The race's own confidence, of all its calls and looks together: what its intervals are
    /// stated at (results from before it was kept: 95 %).
    #[serde(default = "default_race_confidence")]
    pub race_confidence: f64,
    /// Gaps inside ±margin were called equal.
    pub margin: f64,
    /// How long the race ran, and one round of it, seconds.
    pub seconds: f64,
    pub round_s: f64,
}

fn default_race_confidence() -> f64 {
    crate::estimate::CONFIDENCE
}

/// One configuration's figures in one round of a race (round 0 is the first pass).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RoundFigures {
    pub round: usize,
    pub seconds: f64,
    pub iops: f64,
    pub cpu_us_per_io: f64,
    pub p99_ns: u64,
    pub p999_ns: u64,
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum EndedBy {
    /// The planned runtime elapsed (or every worker finished its work on its own).
    Runtime,
    /// Per-second IOPS settled before the runtime (`--stop-when-stable`).
    Stable,
    /// Every worker issued its `--io-limit` bytes (× `--loops`; with `--loops` alone, its part
    /// of the range that many times) before the runtime.
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

/// A run's pauses between I/Os (fio's think time): what was asked and what the pauses that began
/// in the measured window came to, all threads together. A pause is measured by a clock read
/// before and after it, so its mean says how long the pauses really were (a sleep overshoots by
/// the system's sleep granularity; readlab, like fio, sleeps short of it and spins the rest).
/// No read's latency holds any of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ThinkSummary {
    /// What was asked ([`crate::think::ThinkTime`]: the pause, its spinning part, every how
    /// many I/Os or how much I/O time).
    pub asked: crate::think::ThinkTime,
    /// Pauses that began in the window.
    pub pauses: u64,
    /// Their mean length as measured, µs.
    pub mean_pause_us: f64,
    /// Time spent spinning in them, all threads, seconds: CPU the workload asked for, inside the
    /// run's own CPU figures (not readlab's own cost).
    pub spun_s: f64,
}

/// How well an open-loop run kept to its schedule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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

#[cfg(test)]
mod tests {
    use super::{RunResult, RunnerCost};

    #[test]
    fn the_share_is_the_runners_cpu_over_the_runs() {
        let c = RunnerCost::new(0.1, 7e6, 0.8).unwrap();
        assert_eq!((c.cpu_us_per_io, c.iops), (0.1, 7e6));
        assert!((c.share_of_cpu - 0.125).abs() < 1e-15, "{c:?}");
        assert_eq!(RunnerCost::share(0.1, 0.8), Some(c.share_of_cpu));
        // Nothing to hold it against, or nothing measured: no share.
        assert_eq!(RunnerCost::new(0.1, 7e6, 0.0), None);
        assert_eq!(RunnerCost::share(0.0, 0.8), None);
        assert_eq!(RunnerCost::share(f64::NAN, 0.8), None);
        assert_eq!(RunnerCost::share(0.1, f64::INFINITY), None);
    }

    #[test]
    fn older_results_without_it_still_read_and_none_is_not_written() {
        let line = crate::fixture::RESULTS_SMALL.lines().next().unwrap();
        assert!(!line.contains("runner_cost"));
        let doc: serde_json::Value = serde_json::from_str(line).unwrap();
        let mut r: RunResult = serde_json::from_value(doc["result"].clone()).unwrap();
        assert_eq!(r.runner_cost, None);
        assert!(!serde_json::to_string(&r).unwrap().contains("runner_cost"));
        r.runner_cost = RunnerCost::new(0.1, 7e6, 0.8);
        let back: RunResult = serde_json::from_str(&serde_json::to_string(&r).unwrap()).unwrap();
        assert_eq!(back.runner_cost, r.runner_cost);
    }
}
