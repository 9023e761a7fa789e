//! The tuner's answer: what "best" means (a [`Goal`]), the measured candidates, the
//! recommendation per block size and the whole [`TuneReport`] written to `tune.json`. Apart from
//! the search in `tune.rs` so that the report, the verdict and the profile read the answer without
//! depending on the executor (which depends on the studies).

use crate::config::RunConfig;
use crate::result::Document;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// What "best" means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Goal {
    /// Most IOPS (ties within 1 % go to the lower p99.9).
    Throughput,
    /// Lowest p99.9 among points with at least half the best IOPS.
    Latency,
    /// Lowest p99.9 among points with at least 90 % of the best IOPS.
    Balanced,
}

impl Goal {
    pub const ALL: [Goal; 3] = [Goal::Throughput, Goal::Balanced, Goal::Latency];

    pub fn name(self) -> &'static str {
        match self {
            Goal::Throughput => "throughput",
            Goal::Latency => "latency",
            Goal::Balanced => "balanced",
        }
    }

    /// The rule its pick follows, in words: `lowest p99.9 keeping half the best IOPS`.
    pub fn rule(self) -> &'static str {
        match self {
            Goal::Throughput => "most IOPS (within 1 %, the lower p99.9)",
            Goal::Balanced => "lowest p99.9 keeping 90 % of the best IOPS",
            Goal::Latency => "lowest p99.9 keeping half the best IOPS",
        }
    }

    /// The share of the best throughput a pick must keep (see [`crate::pareto::pick`]).
    pub fn floor(self) -> f64 {
        match self {
            Goal::Throughput => 0.99,
            Goal::Balanced => 0.9,
            Goal::Latency => 0.5,
        }
    }
}

/// How a re-measured finalist varied over its runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Spread {
    pub runs: usize,
    /// Probability that each interval holds the true median.
    pub confidence: f64,
    pub iops: crate::interval::Interval,
    pub p999_ns: crate::interval::Interval,
    pub cpu_cores: crate::interval::Interval,
}

/// One measured configuration, reduced to what the search compares.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Candidate {
    pub config: RunConfig,
    pub label: String,
    pub iops: f64,
    pub mb_s: f64,
    pub p999_ns: u64,
    pub p50_ns: u64,
    /// CPU in cores (100 % of one core = 1.0), SQ poll and io workers included.
    pub cpu_cores: f64,
    /// For finalists: the runs their figures are the medians of.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spread: Option<Spread>,
    /// Requests its latency figures come from (0: not recorded), to say when p99.9 rests on too
    /// few of them.
    #[serde(default)]
    pub requests: u64,
}

impl Candidate {
    pub(super) fn of(doc: &Document) -> Candidate {
        let r = &doc.result;
        Candidate {
            config: doc.config.clone(),
            label: r.label.clone(),
            iops: r.iops,
            mb_s: r.mb_s,
            p999_ns: r.latency.p999_ns,
            p50_ns: r.latency.p50_ns,
            cpu_cores: r.cpu.threads_pct_of_core() / 100.0,
            spread: None,
            requests: r.requests,
        }
    }

    /// What the frontier compares: IOPS (higher is better), p99.9 and CPU (lower is better).
    pub(super) fn objectives(&self) -> [f64; 3] {
        [self.iops, self.p999_ns as f64, self.cpu_cores]
    }
}

/// The tuner's answer for one block size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Recommendation {
    pub bs: u64,
    pub goal: Goal,
    /// None when no point met the constraints.
    pub pick: Option<Candidate>,
    /// The best point for every goal (constraints applied).
    pub per_goal: Vec<(Goal, Candidate)>,
    pub frontier: Vec<Candidate>,
    pub trade_offs: Vec<String>,
    /// When nothing met the constraints: the closest points and why they fail.
    pub closest: Vec<(Candidate, String)>,
    pub points_measured: usize,
    /// Every finalist with the medians of its re-measured runs (the pick is among them): what
    /// the answer weighs the pick's margin against.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub finalists: Vec<Candidate>,
}

/// The file in a tune directory holding the [`TuneReport`] (written by `readlab tune`, read by
/// `readlab report` for the selected-parameters table).
pub const REPORT_FILE: &str = "tune.json";

/// Everything a tuning session produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TuneReport {
    pub target: PathBuf,
    pub recommendations: Vec<Recommendation>,
    pub seconds: f64,
    pub budget_s: f64,
    pub results: PathBuf,
    /// Runs that saw I/O errors or verification mismatches (never candidates: a configuration
    /// that returned errors or wrong data is not recommended).
    #[serde(default)]
    pub failures: crate::failures::Failures,
    /// Warnings many of the runs said (a target in memory: every run), each once with how many
    /// runs said it: what `tune` prints first.
    #[serde(default)]
    pub warnings: Vec<crate::warnings::Banner>,
}
