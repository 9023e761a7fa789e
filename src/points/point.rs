//! One measured point in the report's shape, whichever tool measured it (readlab result documents
//! become points here; fio's JSON in `super::super::fio`), and the short name of the input it came from.

use crate::config::Rw;
use crate::engine::EngineOptions;
use crate::env::Environment;
use crate::interval::RepeatSummary;
use crate::monitor::MonitorRecord;
use crate::result::Document;
use crate::source::TargetKind;
use crate::stats::{LatencySummary, OffsetSample, TimelinePoint, decode_histogram};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

/// Which tool measured a point.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    Readlab,
    Fio,
}

impl Source {
    pub fn name(self) -> &'static str {
        match self {
            Source::Readlab => "readlab",
            Source::Fio => "fio",
        }
    }
}

/// Where and when a point was measured, as far as its tool recorded it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct Env {
    /// The file or device read.
    pub target: String,
    /// What is behind the target, e.g. `ext4 on vda, mq-deadline`; empty when unknown.
    pub device: String,
    /// Kernel release; empty when the tool did not record it (fio does not).
    pub kernel: String,
    pub hostname: String,
    /// RFC 3339 UTC start time; empty when unknown.
    pub date: String,
    /// The measuring tool and its version, e.g. `readlab 0.1.0` or `fio-3.33`.
    pub tool: String,
}

/// One measured configuration; the report's JSON carries every point in this shape (without
/// its histogram), so a report can be compared with another later.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Point {
    pub source: Source,
    /// The target's name, which keeps devices apart in charts, legends and verdicts: the
    /// device's model, else its file system and device (`ext4 on vda`), else the device
    /// (`loop0`) — see [`default_name`].
    pub name: String,
    /// The input file the point was read from.
    pub origin: String,
    /// The study it belongs to (readlab study tag); None for plain runs and fio jobs.
    pub study: Option<String>,
    pub scheduler: Option<String>,
    /// A networked study's point: side, network, server model, back end, delay, server CPU.
    pub net: Option<crate::result::NetTag>,
    /// Another setting the point ran under (study tag), e.g. `buffered, read_ahead_kb=0`.
    pub setting: Option<String>,
    /// The report's label (`P`, `A16B1T3`, …); fio points carry a `fio:` prefix.
    pub label: String,
    /// An open-loop run's rate asked and achieved (`rate 5,000/s, achieved 4,998/s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_loop: Option<String>,
    /// Engine name in readlab's vocabulary (fio's `io_uring` is `uring`).
    pub engine: String,
    /// `read` (sequential) or `randread`; fio's other patterns are kept as fio names them.
    pub rw: String,
    /// How random reads picked their blocks, in fio's words (`zipf:1.2`); absent for uniform.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub random_distribution: Option<String>,
    /// A mix of block sizes in fio's words (`4k/60:64k/40`); absent for one size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bssplit: Option<String>,
    pub bs: u64,
    pub threads: usize,
    pub iodepth: usize,
    /// Mean requests in flight per thread: measured by readlab; IOPS × mean latency (Little's law)
    /// for fio jobs and results written before readlab measured it.
    pub achieved_depth: f64,
    pub batch: usize,
    pub blocks_per_request: usize,
    /// The engine's own options (io_uring features, preadv2 flags); fio's where it named them.
    pub options: EngineOptions,
    pub direct: bool,
    /// First byte read (scans plot bandwidth against offset from here).
    pub offset: u64,
    pub seconds: f64,
    pub ios: u64,
    pub iops: f64,
    /// 10^6 bytes per second.
    pub mb_s: f64,
    /// CPU of the whole process as % of one core (kernel helper threads included).
    pub cpu_pct: f64,
    /// CPU of io_uring's SQ poll thread alone, % of one core.
    pub sqpoll_cpu_pct: f64,
    /// CPU of the process per I/O, µs.
    pub cpu_us_per_io: f64,
    /// readlab's own clock reads per I/O, ns (None for fio).
    pub timer_ns_per_io: Option<f64>,
    /// readlab's own loop in this point's shape, on the null engine (None for fio, for null-engine
    /// points and for results written before readlab measured it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runner_cost: Option<crate::result::RunnerCost>,
    /// With repetitions: each headline figure's median and interval over the runs.
    pub spread: Option<RepeatSummary>,
    /// How well the run measured its headline figures (each with its interval), when it could.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision: Option<crate::result::Precision>,
    /// The rounds of the race the configuration took part in, when it was raced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub race: Option<crate::result::RaceRecord>,
    pub latency: LatencySummary,
    pub timeline: Vec<TimelinePoint>,
    /// Throughput per stretch of the target (`--sample-every`), in offset order.
    #[serde(default)]
    pub offset_samples: Vec<OffsetSample>,
    /// Latency histogram as (latency in ns, count) in increasing latency; empty when not stored.
    #[serde(skip)]
    pub bins: Vec<(u64, u64)>,
    pub env: Env,
    /// Anything a reader should know about how the figures were obtained.
    pub note: Option<String>,
    /// The monitor's samples, when the run had `--monitor` (drawn, not exported).
    #[serde(skip)]
    pub monitor: Option<Arc<MonitorRecord>>,
    /// Its place in a run on several targets (None for a run on one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multi: Option<Multi>,
}

/// Where a point stands in a run on several targets.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Multi {
    /// The run's name: its targets' names joined with `+`.
    pub run: String,
    /// The target's name, or None for the run's aggregate.
    pub name: Option<String>,
    /// Targets in the run.
    pub targets: usize,
}

impl Point {
    /// A point from a readlab result document.
    pub fn from_document(d: &Document, origin: &str) -> Point {
        let c = &d.config;
        let r = &d.result;
        let e = &d.environment;
        let mut device = match (&e.filesystem, &e.device.name) {
            (Some(fs), Some(dev)) => format!("{fs} on {dev}"),
            (Some(fs), None) => fs.clone(),
            (None, Some(dev)) => dev.clone(),
            (None, None) => String::new(),
        };
        if let Some(s) = &e.device.scheduler {
            device.push_str(&format!(", {s}"));
        }
        let bins = decode_histogram(&r.histogram)
            .map(|h| {
                h.iter_recorded()
                    .map(|v| (v.value_iterated_to(), v.count_at_value()))
                    .filter(|&(_, n)| n > 0)
                    .collect()
            })
            .unwrap_or_default();
        Point {
            source: Source::Readlab,
            name: default_name(e),
            origin: origin.to_string(),
            study: d.study.as_ref().map(|t| t.study.to_string()),
            scheduler: d.study.as_ref().and_then(|t| t.scheduler.clone()),
            net: d.study.as_ref().and_then(|t| t.net.clone()),
            setting: d.study.as_ref().and_then(|t| t.setting.clone()),
            // Written again from the configuration, so results stored before a label convention
            // changed read as today's labels.
            label: c.label(),
            open_loop: r
                .open_loop
                .as_ref()
                .map(crate::result::OpenLoopSummary::words),
            engine: c.engine.name().to_string(),
            rw: match c.rw {
                Rw::Read => "read".into(),
                Rw::Randread => "randread".into(),
            },
            random_distribution: (!c.random_distribution.is_uniform())
                .then(|| c.random_distribution.to_string()),
            bssplit: (!c.bssplit.is_single()).then(|| c.bssplit.to_string()),
            bs: c.bs,
            threads: c.threads,
            iodepth: c.iodepth,
            achieved_depth: r
                .achieved_depth
                .unwrap_or_else(|| little(r.requests_per_s, r.latency.mean_ns, c.threads)),
            batch: c.batch,
            blocks_per_request: c.blocks_per_request,
            options: c.options.clone(),
            direct: c.direct,
            offset: c.offset,
            seconds: r.seconds,
            ios: r.ios,
            iops: r.iops,
            mb_s: r.mb_s,
            cpu_pct: r.cpu.app.pct_of_core + r.cpu.sqpoll.pct_of_core + r.cpu.io_worker.pct_of_core,
            sqpoll_cpu_pct: r.cpu.sqpoll.pct_of_core,
            cpu_us_per_io: r.cpu_us_per_io,
            timer_ns_per_io: Some(r.timer.overhead_ns_per_io),
            runner_cost: r.runner_cost.clone(),
            spread: r.repeat.clone(),
            precision: r.precision.clone(),
            race: r.race.clone(),
            latency: r.latency.clone(),
            timeline: r.timeline.clone(),
            offset_samples: r.offset_samples.clone(),
            bins,
            env: Env {
                target: crate::nbd::shown(&c.target.display().to_string()),
                device,
                kernel: e.kernel.clone(),
                hostname: e.hostname.clone(),
                date: e.date.clone(),
                tool: format!("readlab {}", e.readlab_version),
            },
            note: run_note(r),
            monitor: d.monitor.clone().map(Arc::new),
            multi: None,
        }
        .into_fleet(d.fleet.as_deref())
    }

    /// A fleet's aggregate (several MPI ranks measured as one) is a target of its own: named
    /// for its ranks and their targets, never for rank 0's device, whose configuration and
    /// environment the fleet's document carries. Verdicts, "devices side by side" and charts
    /// keep targets apart by name, so the fleet's summed IOPS are never credited to one device.
    fn into_fleet(mut self, fleet: Option<&crate::result::fleet::FleetRecord>) -> Point {
        let Some(f) = fleet else { return self };
        self.name = fleet_name(f);
        self.env.target = f.target.clone();
        self.env.device = String::new();
        self.env.hostname = f.hosts.join(", ");
        self
    }

    /// The points of one run: the run itself, and for a run on several targets its aggregate
    /// first, then each target that has figures, named (its `env.target` is its name).
    pub fn from_run(d: &Document, origin: &str) -> Vec<Point> {
        let mut whole = Point::from_document(d, origin);
        if d.targets.is_empty() {
            return vec![whole];
        }
        let run = d.config.target.display().to_string();
        let n = d.targets.len();
        // The aggregate is a target of its own (`a+b`), each share goes by the name the run
        // gave its target (`--name`, `NAME:PATH`, else its device or file name): the charts,
        // legends and verdicts keep them apart by these names.
        whole.name = run.clone();
        whole.multi = Some(Multi {
            run: run.clone(),
            name: None,
            targets: n,
        });
        let mut out = vec![whole];
        for t in &d.targets {
            let Some(r) = &t.result else { continue };
            let one = Document {
                schema: d.schema.clone(),
                study: d.study.clone(),
                config: t.config.clone(),
                environment: t.environment.clone(),
                result: r.clone(),
                targets: Vec::new(),
                monitor: None,
                fleet: None,
            };
            let mut p = Point::from_document(&one, origin);
            p.env.target = t.name.clone();
            p.name = t.name.clone();
            p.multi = Some(Multi {
                run: run.clone(),
                name: Some(t.name.clone()),
                targets: n,
            });
            out.push(p);
        }
        out
    }

    pub fn is_fio(&self) -> bool {
        self.source == Source::Fio
    }

    /// `sequential`, `random` or `random zipf:1.2` (or fio's own word for other patterns): the
    /// workload's name, by [`access_words`](crate::config::access_words).
    pub fn access(&self) -> String {
        crate::config::access_words(
            &self.rw,
            self.random_distribution.as_deref().unwrap_or(""),
            self.bssplit.as_deref().unwrap_or(""),
        )
    }

    /// Whether the point's p99.9 and throughput can be placed on a chart at all.
    pub fn plottable(&self) -> bool {
        self.ios > 0
            && self.mb_s.is_finite()
            && self.mb_s >= 0.0
            && self.latency.p999_ns > 0
            && self.latency.max_ns > 0
    }
}

/// The name a target goes by when the user gave none: the device's model; for a file, its file
/// system and the device under it (`ext4 on vda`, the model in place of the device name when
/// sysfs has one); a file system without a device by its type (`tmpfs`); else the target's
/// file name.
pub fn default_name(e: &Environment) -> String {
    let model = e
        .device
        .model
        .as_deref()
        .map(str::trim)
        .filter(|m| !m.is_empty());
    let dev = model.or(e.device.name.as_deref());
    match (e.target.kind, &e.filesystem, dev) {
        (TargetKind::Block, _, Some(d)) => d.to_string(),
        (_, Some(fs), Some(d)) => format!("{fs} on {d}"),
        (_, Some(fs), None) => fs.clone(),
        (_, None, Some(d)) => d.to_string(),
        (_, None, None) => crate::outdir::target_name(&e.target.path),
    }
}

/// A fleet's name: `fleet of 2 ranks: loop6, loop7` — its members' targets by their names
/// ([`default_name`]); where those repeat, with their hosts, else by the paths the ranks read.
pub fn fleet_name(f: &crate::result::fleet::FleetRecord) -> String {
    let distinct = |v: &[String]| {
        let set: BTreeSet<&String> = v.iter().collect();
        set.len() == v.len()
    };
    let mut names: Vec<String> = f
        .members
        .iter()
        .map(|m| default_name(&m.environment))
        .collect();
    if !distinct(&names) && f.hosts.len() > 1 {
        names = f
            .members
            .iter()
            .zip(&names)
            .map(|(m, n)| format!("{}:{n}", m.host))
            .collect();
    }
    if !distinct(&names) {
        let paths: Vec<String> = f
            .members
            .iter()
            .map(|m| crate::outdir::target_name(Path::new(&m.target)))
            .collect();
        if distinct(&paths) {
            names = paths;
        }
    }
    let list = if names.len() > 4 {
        format!(
            "{}, … {}",
            names[..3].join(", "),
            names.last().expect("more than four")
        )
    } else {
        names.join(", ")
    };
    let ranks = f.ranks;
    let s = if ranks == 1 { "" } else { "s" };
    if list.is_empty() {
        format!("fleet of {ranks} rank{s}")
    } else {
        format!("fleet of {ranks} rank{s}: {list}")
    }
}

/// A short name for an input: its file name without `.json`, or for a study's `results.jsonl`
/// the name of its directory.
pub fn origin_name(origin: &str) -> String {
    let path = Path::new(origin);
    let file = |p: &Path| p.file_name().map(|n| n.to_string_lossy().into_owned());
    let name = file(path).unwrap_or_else(|| origin.to_string());
    if name == crate::store::RESULTS
        && let Some(dir) = path.parent().and_then(file)
    {
        return dir;
    }
    name.strip_suffix(".json")
        .map(str::to_string)
        .unwrap_or(name)
}

/// What a reader of the report must know about a run: how it ended when that was not its plan
/// (an interrupted run), its failures (I/O errors, verification mismatches, with the first
/// offsets) and its warnings (other load, a target in memory, too few samples).
fn run_note(r: &crate::result::RunResult) -> Option<String> {
    let mut parts = run_facts(r);
    parts.extend(r.warnings.iter().cloned());
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// What a reader must know about a run apart from its warnings: how it ended when that was not
/// its plan, its failures, its repetitions' intervals.
pub(super) fn run_facts(r: &crate::result::RunResult) -> Vec<String> {
    let mut parts = Vec::new();
    // Runs end by their runtime, an I/O limit (scans) or stability; anything else is worth a word.
    if !matches!(r.ended_by.as_str(), "runtime" | "io-limit" | "stable") {
        parts.push(format!("ended by {}", r.ended_by));
    }
    if let Some(lines) = r.failure_summary() {
        parts.push(format!("FAILED: {}", lines.join("; ")));
    }
    if let Some(rep) = &r.repeat {
        // The figures are the median run's; how far the repetitions spread is part of them.
        let ns = |v: f64| crate::units::format_ns(v, crate::units::Style::Table);
        parts.push(format!(
            "median of {} runs; {:.0} % intervals: IOPS {:.0}–{:.0}, p99 {}–{}, p99.9 {}–{}",
            rep.runs,
            rep.confidence * 100.0,
            rep.iops.lo,
            rep.iops.hi,
            ns(rep.p99_ns.lo),
            ns(rep.p99_ns.hi),
            ns(rep.p999_ns.lo),
            ns(rep.p999_ns.hi)
        ));
    }
    parts
}

/// Mean requests in flight per thread by Little's law: rate × mean time in the system.
pub fn little(requests_per_s: f64, mean_latency_ns: f64, threads: usize) -> f64 {
    requests_per_s * mean_latency_ns / 1e9 / threads.max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origin_names() {
        assert_eq!(origin_name("/tmp/x/study-a/results.jsonl"), "study-a");
        assert_eq!(origin_name("results.jsonl"), "results.jsonl");
        assert_eq!(origin_name("out/fio-4k.json"), "fio-4k");
        assert_eq!(origin_name("a/small.jsonl"), "small.jsonl");
    }

    /// A run's failures and warnings reach the report as its note.
    #[test]
    fn failures_and_warnings_are_noted() {
        let mut d: Document = crate::fixture::first();
        assert_eq!(Point::from_document(&d, "x").note, None);
        d.result
            .warnings
            .push("other processes used 90 % of a core".into());
        d.result.errors.count = 2;
        d.result.errors.first.push(crate::result::IoErrorRecord {
            offset: 8192,
            len: 4096,
            errno: libc::EIO,
            message: "Input/output error (os error 5)".into(),
        });
        let note = Point::from_document(&d, "x").note.unwrap();
        assert!(
            note.starts_with("FAILED: run failed: 2 I/O error(s)"),
            "{note}"
        );
        assert!(note.contains("first error at offset 8192"), "{note}");
        assert!(
            note.ends_with("other processes used 90 % of a core"),
            "{note}"
        );
    }

    /// A fleet's document carries rank 0's configuration and environment; its point is the
    /// fleet, named for its ranks' targets, never rank 0's device.
    #[test]
    fn a_fleet_is_its_own_target() {
        let (docs, mut members) = crate::result::sample_members();
        for (m, dev) in members.iter_mut().zip(["loop6", "loop7", "loop8"]) {
            m.environment.target.kind = TargetKind::Block;
            m.environment.device.name = Some(dev.into());
            m.environment.filesystem = None;
        }
        let record = crate::result::fleet::FleetRecord {
            ranks: 3,
            hosts: vec!["a".into(), "b".into()],
            target: "/dev/loop{rank}".into(),
            start: crate::result::fleet::FleetStart {
                skew_ns: 0,
                clock_uncertainty_ns: 0,
                notice_ns: 0,
            },
            common_window_s: 1.0,
            aggregate: String::new(),
            members: members.clone(),
            idle: Vec::new(),
        };
        let mut d = docs[0].clone();
        d.study = None;
        d.environment = members[0].environment.clone();
        d.fleet = Some(Box::new(record));
        let rank0 = default_name(&d.environment);
        assert_eq!(rank0, "loop6");
        let p = Point::from_document(&d, "fleet.json");
        assert_eq!(p.name, "fleet of 3 ranks: loop6, loop7, loop8");
        assert_eq!(p.env.target, "/dev/loop{rank}");
        assert_ne!(p.name, rank0);
        // The same devices behind every rank on several hosts: named with their hosts.
        let mut f = d.fleet.clone().unwrap();
        for m in &mut f.members {
            m.environment.device.name = Some("nvme0n1".into());
        }
        // Two ranks on host a read the same name: the paths the ranks read tell them apart.
        assert_eq!(fleet_name(&f), "fleet of 3 ranks: t0, t1, t2");
        f.members.remove(1);
        f.ranks = 2;
        assert_eq!(fleet_name(&f), "fleet of 2 ranks: a:nvme0n1, b:nvme0n1");
    }

    /// A run measured with --repeat carries its intervals into the report.
    #[test]
    fn repetitions_show_their_intervals() {
        let docs: Vec<Document> = crate::fixture::documents::<Document>()
            .into_iter()
            .take(3)
            .collect();
        let d = crate::repeat::combine(docs).unwrap();
        let note = Point::from_document(&d, "x").note.unwrap();
        assert!(
            note.contains("median of 3 runs; 75 % intervals: IOPS "),
            "{note}"
        );
    }
}
