//! The report's data: every measured point, from readlab results or fio JSON, in one shape, read
//! from the inputs the user named, grouped into the report's studies and ranked on the
//! throughput/latency Pareto frontier.

use super::fio;
use super::pareto;
use crate::config::Rw;
use crate::error::{Error, Result};
use crate::result::Document;
use crate::stats::{LatencySummary, TimelinePoint, decode_histogram};
use crate::study::StudyName;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Which tool measured a point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
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
#[derive(Debug, Clone, Default, PartialEq)]
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

/// One measured configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub source: Source,
    /// The input file the point was read from.
    pub origin: String,
    /// The study it belongs to (readlab study tag); None for plain runs and fio jobs.
    pub study: Option<String>,
    pub scheduler: Option<String>,
    /// The report's label (`P`, `A16B1T3`, …); fio points carry a `fio:` prefix.
    pub label: String,
    /// Engine name in readlab's vocabulary (fio's `io_uring` is `uring`).
    pub engine: String,
    /// `read` (sequential) or `randread`; fio's other patterns are kept as fio names them.
    pub rw: String,
    pub bs: u64,
    pub threads: usize,
    pub iodepth: usize,
    pub batch: usize,
    pub blocks_per_request: usize,
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
    pub latency: LatencySummary,
    pub timeline: Vec<TimelinePoint>,
    /// Latency histogram as (latency in ns, count) in increasing latency; empty when not stored.
    pub bins: Vec<(u64, u64)>,
    pub env: Env,
    /// Anything a reader should know about how the figures were obtained.
    pub note: Option<String>,
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
            origin: origin.to_string(),
            study: d.study.as_ref().map(|t| t.study.clone()),
            scheduler: d.study.as_ref().and_then(|t| t.scheduler.clone()),
            label: r.label.clone(),
            engine: c.engine.name().to_string(),
            rw: match c.rw {
                Rw::Read => "read".into(),
                Rw::Randread => "randread".into(),
            },
            bs: c.bs,
            threads: c.threads,
            iodepth: c.iodepth,
            batch: c.batch,
            blocks_per_request: c.blocks_per_request,
            direct: c.direct,
            offset: c.offset,
            seconds: r.seconds,
            ios: r.ios,
            iops: r.iops,
            mb_s: r.mb_s,
            cpu_pct: r.cpu.app.pct_of_core + r.cpu.sqpoll.pct_of_core + r.cpu.io_worker.pct_of_core,
            sqpoll_cpu_pct: r.cpu.sqpoll.pct_of_core,
            latency: r.latency.clone(),
            timeline: r.timeline.clone(),
            bins,
            env: Env {
                target: c.target.display().to_string(),
                device,
                kernel: e.kernel.clone(),
                hostname: e.hostname.clone(),
                date: e.date.clone(),
                tool: format!("readlab {}", e.readlab_version),
            },
            // Runs end by their runtime, an I/O limit (scans) or stability; anything else
            // (an interrupted run) is worth a word.
            note: (!matches!(r.ended_by.as_str(), "runtime" | "io-limit" | "stable"))
                .then(|| format!("ended by {}", r.ended_by)),
        }
    }

    pub fn is_fio(&self) -> bool {
        self.source == Source::Fio
    }

    /// `sequential` or `random` (or fio's own word for other patterns).
    pub fn access(&self) -> &str {
        match self.rw.as_str() {
            "read" => "sequential",
            "randread" => "random",
            other => other,
        }
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

/// A section of the report: one study and the points shown in it.
#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    pub study: StudyName,
    /// Indices into [`Report::points`]: the study's own points, then fio points of the same shape.
    pub points: Vec<usize>,
}

/// Everything a report shows, ready for any output format.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    pub points: Vec<Point>,
    /// The inputs read, as given.
    pub inputs: Vec<String>,
    /// Things the reader should know (skipped fio jobs, empty inputs, unknown studies).
    pub notes: Vec<String>,
    /// One section per study that has data, in the report's order.
    pub sections: Vec<Section>,
    /// Points on the throughput/p99.9 Pareto frontier, by increasing throughput.
    pub frontier: Vec<usize>,
    /// The few best points of each block size (enlarged and labelled on the all-experiments chart).
    pub highlights: Vec<usize>,
}

fn bad(path: &Path, why: impl std::fmt::Display) -> Error {
    Error::invalid(format!("{}: {why}", path.display()))
}

/// Read one readlab input: a results directory, a results.jsonl, or a `--json` document (one run
/// or an array of runs). fio JSON given here is imported as if passed with `--fio`.
fn load_results(path: &Path, report: &mut Report) -> Result<()> {
    let meta = std::fs::metadata(path).map_err(|e| bad(path, format!("cannot read: {e}")))?;
    let file: PathBuf = if meta.is_dir() {
        let f = path.join(crate::store::RESULTS);
        if !f.is_file() {
            return Err(bad(
                path,
                format!(
                    "no {} here; give a study's --out directory, a results.jsonl, or a `readlab run --json` file",
                    crate::store::RESULTS
                ),
            ));
        }
        f
    } else {
        path.to_path_buf()
    };
    let origin = file.display().to_string();
    let bytes = std::fs::read(&file).map_err(|e| bad(&file, format!("cannot read: {e}")))?;
    let Ok(text) = String::from_utf8(bytes) else {
        return Err(bad(&file, "not a text file (expected readlab JSON)"));
    };
    if text.trim().is_empty() {
        report.notes.push(format!("{origin} is empty: no points"));
        return Ok(());
    }
    let docs: Vec<Document> = match serde_json::from_str::<serde_json::Value>(&text) {
        // One JSON value: a --json document, an array of them, or fio's output.
        Ok(v) if v.get("fio version").is_some() || v.get("jobs").is_some() => {
            return load_fio_text(&text, &origin, report);
        }
        Ok(v @ serde_json::Value::Array(_)) => serde_json::from_value(v)
            .map_err(|e| bad(&file, format!("not an array of readlab results ({e})")))?,
        Ok(v) => vec![
            serde_json::from_value(v)
                .map_err(|e| bad(&file, format!("not a readlab result ({e})")))?,
        ],
        // Several values: results.jsonl, one run per line (a torn last line is ignored).
        Err(_) => crate::store::load(&file)?,
    };
    if docs.is_empty() {
        report.notes.push(format!("{origin} holds no runs"));
    }
    for d in &docs {
        if !d.schema.starts_with("readlab.run/") {
            report.notes.push(format!(
                "{origin}: a run with schema '{}' was read as {}",
                d.schema,
                crate::result::SCHEMA
            ));
        }
        let p = Point::from_document(d, &origin);
        if let Some(n) = &p.note {
            report.notes.push(format!(
                "{origin}: {} ({} {}): {n}",
                p.label,
                p.engine,
                crate::size::format_size(p.bs)
            ));
        }
        report.points.push(p);
    }
    Ok(())
}

fn load_fio_text(text: &str, origin: &str, report: &mut Report) -> Result<()> {
    let imported = fio::import(text, origin)?;
    if imported.points.is_empty() && imported.notes.is_empty() {
        report.notes.push(format!("{origin}: no fio jobs"));
    }
    report.notes.extend(imported.notes);
    if imported
        .points
        .iter()
        .any(|p| p.note.as_deref().is_some_and(|n| n.starts_with("fio clat")))
    {
        report.notes.push(format!(
            "{origin}: fio printed completion-latency (clat) percentiles only; readlab measures from submission (fio's lat): run fio with --lat_percentiles=1 to compare like with like"
        ));
    }
    report.points.extend(imported.points);
    Ok(())
}

fn load_fio(path: &Path, report: &mut Report) -> Result<()> {
    let bytes = std::fs::read(path).map_err(|e| bad(path, format!("cannot read: {e}")))?;
    let origin = path.display().to_string();
    let Ok(text) = String::from_utf8(bytes) else {
        return Err(bad(path, "not a text file (expected fio JSON)"));
    };
    if text.trim().is_empty() {
        report
            .notes
            .push(format!("{origin} is empty: no fio points"));
        return Ok(());
    }
    load_fio_text(&text, &origin, report)
}

/// Whether a fio point has the shape of a study's points, so it can be drawn beside them.
fn fio_fits(study: StudyName, p: &Point) -> bool {
    let async_engine = matches!(p.engine.as_str(), "libaio" | "uring");
    match study {
        StudyName::Latency => p.rw == "randread" && p.threads == 1 && p.iodepth == 1,
        StudyName::Stream => {
            p.threads == 1 && p.iodepth == 1 && (p.rw == "read" || p.rw == "randread")
        }
        StudyName::Threads => p.rw == "randread" && p.iodepth == 1,
        StudyName::Queue => p.rw == "randread" && async_engine,
        _ => false,
    }
}

/// Read every input and work out sections, frontier and highlights.
pub fn load(results: &[PathBuf], fio_files: &[PathBuf]) -> Result<Report> {
    if results.is_empty() && fio_files.is_empty() {
        return Err(Error::invalid(
            "nothing to report on; give a results directory, a results.jsonl or a `readlab run --json` file, and/or --fio FILE.json",
        ));
    }
    let mut report = Report::default();
    let mut seen = BTreeSet::new();
    for (path, is_fio) in results
        .iter()
        .map(|p| (p, false))
        .chain(fio_files.iter().map(|p| (p, true)))
    {
        // The same file named twice (a directory and its results.jsonl) is read once.
        let key = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
        let key = if key.is_dir() {
            key.join(crate::store::RESULTS)
        } else {
            key
        };
        report.inputs.push(path.display().to_string());
        if !seen.insert(key) {
            report
                .notes
                .push(format!("{} was given twice; read once", path.display()));
            continue;
        }
        if is_fio {
            load_fio(path, &mut report)?;
        } else {
            load_results(path, &mut report)?;
        }
    }
    report.analyse();
    Ok(report)
}

impl Report {
    /// Build a report from points already in memory (tests, other front ends).
    pub fn from_points(points: Vec<Point>) -> Report {
        let mut r = Report {
            points,
            ..Report::default()
        };
        r.analyse();
        r
    }

    /// Sections, frontier and highlights from `points`.
    pub fn analyse(&mut self) {
        self.sections.clear();
        for name in StudyName::EACH {
            let own: Vec<usize> = self
                .points
                .iter()
                .enumerate()
                .filter(|(_, p)| p.study.as_deref() == Some(name.name()))
                .map(|(i, _)| i)
                .collect();
            if own.is_empty() {
                continue;
            }
            let fio: Vec<usize> = self
                .points
                .iter()
                .enumerate()
                .filter(|(_, p)| p.is_fio() && p.plottable() && fio_fits(name, p))
                .map(|(i, _)| i)
                .collect();
            self.sections.push(Section {
                study: name,
                points: own.into_iter().chain(fio).collect(),
            });
        }
        let unknown: BTreeSet<&str> = self
            .points
            .iter()
            .filter_map(|p| p.study.as_deref())
            .filter(|s| StudyName::parse(s).is_err())
            .collect();
        for s in unknown {
            self.notes.push(format!(
                "study '{s}' has no section of its own; its points are in the all-experiments chart"
            ));
        }
        let plottable: Vec<usize> = (0..self.points.len())
            .filter(|&i| self.points[i].plottable())
            .collect();
        let xy: Vec<(f64, f64)> = plottable
            .iter()
            .map(|&i| (self.points[i].mb_s, self.points[i].latency.p999_ns as f64))
            .collect();
        self.frontier = pareto::frontier(&xy)
            .into_iter()
            .map(|k| plottable[k])
            .collect();
        let groups: Vec<u64> = plottable.iter().map(|&i| self.points[i].bs).collect();
        self.highlights = pareto::highlights(&xy, &groups, 3)
            .into_iter()
            .map(|k| plottable[k])
            .collect();
    }

    /// The points of a section.
    pub fn section_points(&self, s: &Section) -> Vec<&Point> {
        s.points
            .iter()
            .filter_map(|&i| self.points.get(i))
            .collect()
    }

    /// Labels that tell points apart: the report's label, with the engine added where two
    /// engines share a label (pread and preadv2 are both `P`).
    pub fn display_label(&self, i: usize) -> String {
        let Some(p) = self.points.get(i) else {
            return String::new();
        };
        let shared = self
            .points
            .iter()
            .any(|q| q.label == p.label && q.engine != p.engine);
        let mut l = if shared {
            format!("{} {}", p.label, p.engine)
        } else {
            p.label.clone()
        };
        if p.is_fio() && self.fio_origins() > 1 {
            l.push_str(&format!(" ({})", origin_name(&p.origin)));
        }
        l
    }

    /// How many fio files the points came from.
    pub fn fio_origins(&self) -> usize {
        self.points
            .iter()
            .filter(|p| p.is_fio())
            .map(|p| p.origin.as_str())
            .collect::<BTreeSet<_>>()
            .len()
    }

    /// The run whose per-second timeline is shown: a plain run if there is one, else the longest
    /// measured point that is not a scan, else any point with a timeline.
    pub fn timeline_point(&self) -> Option<usize> {
        let with: Vec<usize> = (0..self.points.len())
            .filter(|&i| !self.points[i].timeline.is_empty() && self.points[i].ios > 0)
            .collect();
        let longest = |cands: Vec<usize>| {
            cands.into_iter().max_by(|&a, &b| {
                let (pa, pb) = (&self.points[a], &self.points[b]);
                pa.timeline
                    .len()
                    .cmp(&pb.timeline.len())
                    .then(pa.mb_s.total_cmp(&pb.mb_s))
                    // The first of equals wins.
                    .then(b.cmp(&a))
            })
        };
        let plain: Vec<usize> = with
            .iter()
            .copied()
            .filter(|&i| self.points[i].study.is_none())
            .collect();
        longest(plain)
            .or_else(|| {
                longest(
                    with.iter()
                        .copied()
                        .filter(|&i| self.points[i].study.as_deref() != Some("scan"))
                        .collect(),
                )
            })
            .or_else(|| longest(with))
    }

    /// Points whose latency distribution is drawn: the frontier (at most `max`, spread along it)
    /// and every fio point with a histogram (json+), then a plain run if nothing else has one.
    pub fn cdf_points(&self, max: usize) -> Vec<usize> {
        let frontier: Vec<usize> = self
            .frontier
            .iter()
            .copied()
            .filter(|&i| !self.points[i].bins.is_empty())
            .collect();
        let mut chosen = spread(&frontier, max);
        for (i, p) in self.points.iter().enumerate() {
            if p.is_fio() && !p.bins.is_empty() && !chosen.contains(&i) && chosen.len() < max + 3 {
                chosen.push(i);
            }
        }
        if chosen.is_empty()
            && let Some(i) = (0..self.points.len()).find(|&i| !self.points[i].bins.is_empty())
        {
            chosen.push(i);
        }
        chosen
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

/// At most `max` items of `v`, evenly spread, first and last included.
fn spread(v: &[usize], max: usize) -> Vec<usize> {
    if v.len() <= max {
        return v.to_vec();
    }
    if max < 2 {
        return v.iter().copied().take(max).collect();
    }
    let mut out: Vec<usize> = (0..max).map(|k| v[k * (v.len() - 1) / (max - 1)]).collect();
    out.dedup();
    out
}

/// The caption of a chart: target, kernel and date of the points on it.
pub fn caption(points: &[&Point]) -> String {
    let mut parts = Vec::new();
    let readlab: Vec<&&Point> = points.iter().filter(|p| !p.is_fio()).collect();
    let fio: Vec<&&Point> = points.iter().filter(|p| p.is_fio()).collect();
    if !readlab.is_empty() {
        parts.push(describe_env(&readlab, "readlab"));
    }
    if !fio.is_empty() {
        parts.push(describe_env(&fio, "fio"));
    }
    if parts.is_empty() {
        return "No measured points.".into();
    }
    parts.join(" ")
}

fn describe_env(points: &[&&Point], who: &str) -> String {
    let distinct = |f: &dyn Fn(&Point) -> String| -> Vec<String> {
        let set: BTreeSet<String> = points
            .iter()
            .map(|p| f(p))
            .filter(|s| !s.is_empty())
            .collect();
        set.into_iter().collect()
    };
    let targets = distinct(&|p| {
        if p.env.device.is_empty() {
            p.env.target.clone()
        } else {
            format!("{} ({})", p.env.target, p.env.device)
        }
    });
    let kernels = distinct(&|p| p.env.kernel.clone());
    let hosts = distinct(&|p| p.env.hostname.clone());
    let tools = distinct(&|p| p.env.tool.clone());
    let dates = distinct(&|p| short_date(&p.env.date));
    let mut s = format!(
        "{}: target {}",
        if who == "fio" {
            "fio points"
        } else {
            "Measured"
        },
        if targets.is_empty() {
            "unknown".to_string()
        } else {
            targets.join("; ")
        }
    );
    if kernels.is_empty() {
        s.push_str(", kernel not recorded");
    } else {
        s.push_str(&format!(", kernel {}", kernels.join(", ")));
    }
    if !hosts.is_empty() {
        s.push_str(&format!(", host {}", hosts.join(", ")));
    }
    match (dates.first(), dates.last()) {
        (Some(a), Some(b)) if a == b => s.push_str(&format!(", {a}")),
        (Some(a), Some(b)) => s.push_str(&format!(", {a} – {b}")),
        _ => s.push_str(", date not recorded"),
    }
    if !tools.is_empty() {
        s.push_str(&format!(" ({})", tools.join(", ")));
    }
    s.push('.');
    s
}

/// `2026-11-21T20:03:04Z` → `2026-11-21 20:03 UTC`; anything else as it is.
fn short_date(d: &str) -> String {
    match (d.get(0..10), d.get(11..16)) {
        (Some(day), Some(hm)) if d.as_bytes().get(10) == Some(&b'T') && d.ends_with('Z') => {
            format!("{day} {hm} UTC")
        }
        _ => d.to_string(),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A plausible point for tests.
    pub fn point(label: &str, bs: u64, mb_s: f64, p999_us: f64) -> Point {
        let ns = (p999_us * 1000.0) as u64;
        Point {
            source: Source::Readlab,
            origin: "test".into(),
            study: None,
            scheduler: None,
            label: label.into(),
            engine: "psync".into(),
            rw: "randread".into(),
            bs,
            threads: 1,
            iodepth: 1,
            batch: 1,
            blocks_per_request: 1,
            direct: true,
            offset: 0,
            seconds: 1.0,
            ios: 1000,
            iops: mb_s * 1e6 / bs as f64,
            mb_s,
            cpu_pct: 10.0,
            sqpoll_cpu_pct: 0.0,
            latency: LatencySummary {
                count: 1000,
                min_ns: ns / 10,
                mean_ns: ns as f64 / 4.0,
                stdev_ns: 1.0,
                p50_ns: ns / 5,
                p90_ns: ns / 3,
                p99_ns: ns / 2,
                p999_ns: ns,
                p9999_ns: ns,
                max_ns: ns * 2,
            },
            timeline: Vec::new(),
            bins: Vec::new(),
            env: Env {
                target: "/dev/x".into(),
                kernel: "6.1".into(),
                date: "2026-01-02T03:04:05Z".into(),
                tool: "readlab 0.1.0".into(),
                ..Env::default()
            },
            note: None,
        }
    }

    #[test]
    fn sections_follow_the_study_order_and_take_fitting_fio_points() {
        let mut a = point("PT2", 4096, 100.0, 300.0);
        a.study = Some("threads".into());
        a.threads = 2;
        let mut b = point("P", 4096, 50.0, 100.0);
        b.study = Some("latency".into());
        let mut f = point("fio:P", 4096, 60.0, 90.0);
        f.source = Source::Fio;
        let mut q = point("fio:U16B1", 4096, 60.0, 90.0);
        q.source = Source::Fio;
        q.engine = "uring".into();
        q.iodepth = 16;
        let r = Report::from_points(vec![a, b, f, q]);
        let names: Vec<&str> = r.sections.iter().map(|s| s.study.name()).collect();
        assert_eq!(names, ["latency", "threads"]);
        assert_eq!(r.sections[0].points, [1, 2]);
        assert_eq!(r.sections[1].points, [0, 2]);
        assert!(r.highlights.contains(&0));
    }

    #[test]
    fn odd_inputs_give_notes_not_panics() {
        let r = Report::from_points(Vec::new());
        assert!(r.sections.is_empty() && r.frontier.is_empty());
        assert_eq!(r.timeline_point(), None);
        assert!(r.cdf_points(5).is_empty());
        let mut z = point("P", 4096, 0.0, 0.0);
        z.ios = 0;
        let r = Report::from_points(vec![z]);
        assert!(r.frontier.is_empty());
        assert_eq!(caption(&[]), "No measured points.");
    }

    #[test]
    fn shared_labels_name_the_engine() {
        let a = point("P", 4096, 1.0, 1.0);
        let mut b = point("P", 4096, 1.0, 1.0);
        b.engine = "pvsync2".into();
        let r = Report::from_points(vec![a, b]);
        assert_eq!(r.display_label(0), "P psync");
        assert_eq!(r.display_label(1), "P pvsync2");
        assert_eq!(r.display_label(7), "");
    }

    #[test]
    fn captions_name_target_kernel_and_date() {
        let a = point("P", 4096, 1.0, 1.0);
        let c = caption(&[&a]);
        assert!(
            c.contains("/dev/x") && c.contains("kernel 6.1") && c.contains("2026-01-02 03:04 UTC"),
            "{c}"
        );
    }

    #[test]
    fn origin_names() {
        assert_eq!(origin_name("/tmp/x/study-a/results.jsonl"), "study-a");
        assert_eq!(origin_name("results.jsonl"), "results.jsonl");
        assert_eq!(origin_name("out/fio-4k.json"), "fio-4k");
        assert_eq!(origin_name("a/small.jsonl"), "small.jsonl");
    }

    #[test]
    fn spread_keeps_ends() {
        assert_eq!(spread(&[1, 2, 3], 5), [1, 2, 3]);
        assert_eq!(spread(&[0, 1, 2, 3, 4, 5, 6, 7, 8], 3), [0, 4, 8]);
        assert!(spread(&[], 3).is_empty());
    }
}
