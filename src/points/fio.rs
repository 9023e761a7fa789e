//! fio's JSON output (`--output-format=json` or `json+`) as report points: one point per job that
//! read anything, with fio's own latency percentiles and, from json+, its latency histogram.

use super::point::{Env, Point, Source};
use crate::config::RunConfig;
use crate::engine::{EngineKind, EngineOptions};
use crate::error::{Error, Result};
use crate::stats::LatencySummary;
use serde_json::{Map, Value};

/// What a fio file gave: its points, and why any job was left out.
#[derive(Debug, Default)]
pub struct Imported {
    pub points: Vec<Point>,
    pub notes: Vec<String>,
}

/// fio writes every option as a string; numbers may come as numbers from other tools.
fn opt(opts: &Map<String, Value>, names: &[&str]) -> Option<String> {
    names.iter().find_map(|n| match opts.get(*n)? {
        Value::String(s) => Some(s.trim().to_string()),
        Value::Number(x) => Some(x.to_string()),
        Value::Bool(b) => Some(if *b { "1".into() } else { "0".into() }),
        _ => None,
    })
}

fn opt_count(opts: &Map<String, Value>, names: &[&str]) -> Option<usize> {
    opt(opts, names)?.parse::<usize>().ok().filter(|&v| v >= 1)
}

fn num(v: &Value, key: &str) -> f64 {
    v.get(key)
        .and_then(Value::as_f64)
        .filter(|x| x.is_finite())
        .unwrap_or(0.0)
}

fn count(v: &Value, key: &str) -> u64 {
    v.get(key)
        .and_then(|x| {
            x.as_u64()
                .or_else(|| x.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64))
        })
        .unwrap_or(0)
}

/// fio's `bs` (`4k`, `4k,8k` for read,write, `4096`): the read size, binary units as fio uses.
fn block_size(s: &str) -> Option<u64> {
    let first = s.split([',', ':']).next()?.trim();
    crate::size::parse_size(first).ok().filter(|&b| b > 0)
}

/// fio engine names in readlab's words: the registered engine whose fio name it is (readlab's
/// own name first: `psync` stays `psync`, `io_uring` becomes `uring`); fio's others as fio says.
fn engine_name(fio: &str) -> String {
    if fio.is_empty() {
        return "psync".into();
    }
    EngineKind::parse(fio)
        .ok()
        .or_else(|| EngineKind::all().find(|k| k.fio_name() == fio))
        .map_or_else(|| fio.to_string(), |k| k.name().to_string())
}

/// The percentiles of one of fio's latency blocks (`lat_ns` or `clat_ns`).
fn summary(block: &Value) -> LatencySummary {
    let min = count(block, "min");
    let max = count(block, "max").max(min);
    let pct: Vec<(f64, u64)> = block
        .get("percentile")
        .and_then(Value::as_object)
        .map(|m| {
            let mut v: Vec<(f64, u64)> = m
                .iter()
                .filter_map(|(k, v)| Some((k.parse::<f64>().ok()?, v.as_u64()?)))
                .collect();
            v.sort_by(|a, b| a.0.total_cmp(&b.0));
            v
        })
        .unwrap_or_default();
    // fio's value for the percentile asked, or the next one it has, or the maximum.
    let at = |want: f64| -> u64 {
        pct.iter()
            .find(|(k, _)| *k >= want - 1e-6)
            .map_or(max, |&(_, v)| v)
            .clamp(min, max)
    };
    LatencySummary {
        count: count(block, "N"),
        min_ns: min,
        mean_ns: num(block, "mean"),
        stdev_ns: num(block, "stddev"),
        p50_ns: at(50.0),
        p90_ns: at(90.0),
        p99_ns: at(99.0),
        p999_ns: at(99.9),
        p9999_ns: at(99.99),
        max_ns: max,
    }
}

/// json+ histogram: `bins` maps a latency in ns to how many I/Os took about that long.
fn bins(block: &Value) -> Vec<(u64, u64)> {
    let mut v: Vec<(u64, u64)> = block
        .get("bins")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, n)| Some((k.parse::<u64>().ok()?, n.as_u64()?)))
                .filter(|&(_, n)| n > 0)
                .collect()
        })
        .unwrap_or_default();
    v.sort_unstable();
    v
}

/// fio's options for the features readlab labels, as readlab's options of the same engine: the
/// engine's table of options says which fio option each is (`fixedbufs`, `registerfiles`,
/// `sqthread_poll`, `hipri` for io_uring's polled completions, `hipri`, `nowait` for pvsync2).
fn options(engine: &str, opts: &Map<String, Value>) -> EngineOptions {
    match EngineKind::parse(engine) {
        Ok(kind) => crate::engine::option::from_fio(kind, |name| opt(opts, &[name])),
        Err(_) => EngineOptions::default(),
    }
}

fn label(
    engine: &str,
    iodepth: usize,
    batch: usize,
    threads: usize,
    options: &EngineOptions,
) -> String {
    let core = match EngineKind::parse(engine) {
        Ok(kind) => {
            let mut c = RunConfig::new("");
            c.engine = kind;
            c.iodepth = iodepth;
            c.batch = batch;
            c.threads = threads;
            c.options = options.clone();
            c.label()
        }
        Err(_) => {
            let mut l = engine.to_string();
            if iodepth > 1 {
                l.push_str(&format!("{iodepth}B{batch}"));
            }
            if threads > 1 {
                l.push_str(&format!("T{threads}"));
            }
            l
        }
    };
    format!("fio:{core}")
}

fn rfc3339(unix_s: u64) -> String {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(unix_s.min(253_402_300_799));
    humantime::format_rfc3339_seconds(t).to_string()
}

/// Read fio's JSON (normal or json+). Jobs that read nothing are noted and left out.
pub fn import(text: &str, origin: &str) -> Result<Imported> {
    let bad = |why: String| Error::invalid(format!("{origin}: {why}"));
    // fio may print notices before the JSON document when it writes to stdout.
    let start = text.find('{').unwrap_or(0);
    let v: Value = serde_json::from_str(&text[start..]).map_err(|e| {
        bad(format!(
            "not fio JSON ({e}); run fio with --output-format=json or json+"
        ))
    })?;
    let jobs = v.get("jobs").and_then(Value::as_array).ok_or_else(|| {
        bad("not fio JSON: no \"jobs\"; run fio with --output-format=json or json+".into())
    })?;
    let empty = Map::new();
    let run = Run {
        version: v
            .get("fio version")
            .and_then(Value::as_str)
            .unwrap_or("fio")
            .to_string(),
        date: v
            .get("timestamp")
            .and_then(Value::as_u64)
            .map(rfc3339)
            .unwrap_or_default(),
        global: v
            .get("global options")
            .and_then(Value::as_object)
            .unwrap_or(&empty),
        disks: v
            .get("disk_util")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|d| d.get("name")?.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default(),
    };
    let mut out = Imported::default();
    for (n, job) in jobs.iter().enumerate() {
        read_job(&run, n, job, origin, &mut out);
    }
    Ok(out)
}

/// What a fio document says of all its jobs: fio's version, when it ran, its global options and
/// the disks it watched.
struct Run<'a> {
    version: String,
    date: String,
    global: &'a Map<String, Value>,
    disks: Vec<String>,
}

/// Job `n` of the document as a point in `out`, or the note saying why it is left out.
fn read_job(run: &Run, n: usize, job: &Value, origin: &str, out: &mut Imported) {
    let opts = job_options(run.global, job);
    let name = job
        .get("jobname")
        .and_then(Value::as_str)
        .map_or_else(|| format!("job {}", n + 1), str::to_string);
    let read = job.get("read").unwrap_or(&Value::Null);
    let ios = count(read, "total_ios");
    if ios == 0 {
        out.notes.push(read_nothing(origin, &name, job));
        return;
    }
    let engine = engine_name(&opt(&opts, &["ioengine"]).unwrap_or_default());
    let rw = opt(&opts, &["rw", "readwrite"]).unwrap_or_else(|| "read".into());
    let bs = job_block_size(&opts, count(read, "io_bytes"), ios);
    let iodepth = opt_count(&opts, &["iodepth"]).unwrap_or(1);
    let batch = opt_count(&opts, &["iodepth_batch_submit", "iodepth_batch"])
        .unwrap_or(1)
        .min(iodepth);
    // With group_reporting a job stands for all its clones; otherwise each clone is listed.
    let grouped = opts.contains_key("group_reporting");
    let threads = if grouped {
        opt_count(&opts, &["numjobs"]).unwrap_or(1)
    } else {
        1
    };
    let direct = opt(&opts, &["direct"]).is_some_and(|d| d == "1" || d == "true")
        || opt(&opts, &["buffered"]).is_some_and(|b| b == "0" || b == "false");
    let (seconds, iops, bw_bytes) = rates(read, job, ios);
    let Some(JobLatency {
        latency,
        hist,
        note,
    }) = job_latency(read)
    else {
        out.notes.push(format!(
            "{origin}: fio job '{name}' has no latency figures (lat_ns and clat_ns missing or \
             empty); left out"
        ));
        return;
    };
    let target = opt(&opts, &["filename", "directory", "uri"]).unwrap_or_else(|| name.clone());
    let options = options(&engine, &opts);
    let cpu_pct = num(job, "usr_cpu") + num(job, "sys_cpu");
    out.points.push(Point {
        source: Source::Fio,
        // fio names the disks it watched; else the target's file name.
        name: if run.disks.is_empty() {
            crate::outdir::target_name(std::path::Path::new(&target))
        } else {
            run.disks.join(", ")
        },
        origin: origin.to_string(),
        study: None,
        scheduler: None,
        net: None,
        setting: None,
        label: label(&engine, iodepth, batch, threads, &options),
        engine,
        rw,
        random_distribution: job_distribution(&opts),
        bssplit: opt(&opts, &["bssplit"])
            .and_then(|b| b.parse::<crate::bssplit::BsSplit>().ok())
            .filter(|b| !b.is_single())
            .map(|b| b.to_string()),
        bs,
        threads,
        iodepth,
        achieved_depth: super::point::little(iops, latency.mean_ns, threads),
        batch,
        blocks_per_request: 1,
        options,
        direct,
        offset: opt(&opts, &["offset"])
            .and_then(|s| crate::size::parse_size(&s).ok())
            .unwrap_or(0),
        seconds,
        ios,
        iops,
        mb_s: bw_bytes / 1e6,
        cpu_pct,
        sqpoll_cpu_pct: 0.0,
        open_loop: None,
        cpu_us_per_io: if iops > 0.0 {
            cpu_pct / 100.0 / iops * 1e6
        } else {
            0.0
        },
        timer_ns_per_io: None,
        runner_cost: None,
        spread: None,
        precision: None,
        race: None,
        latency,
        timeline: Vec::new(),
        offset_samples: Vec::new(),
        bins: hist,
        env: Env {
            target,
            device: run.disks.join(", "),
            kernel: String::new(),
            hostname: String::new(),
            date: run.date.clone(),
            tool: run.version.clone(),
        },
        note: Some(note),
        monitor: None,
        multi: None,
    });
}

/// A job's options as fio ran it: the global options, its own over them.
fn job_options(global: &Map<String, Value>, job: &Value) -> Map<String, Value> {
    let mut opts = global.clone();
    if let Some(o) = job.get("job options").and_then(Value::as_object) {
        opts.extend(o.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    opts
}

/// The note on a job that read nothing (left out), saying whether it wrote instead.
fn read_nothing(origin: &str, name: &str, job: &Value) -> String {
    let wrote = count(job.get("write").unwrap_or(&Value::Null), "total_ios") > 0;
    format!(
        "{origin}: fio job '{name}' read nothing{}; left out",
        if wrote {
            " (it wrote; readlab reports reads)"
        } else {
            ""
        }
    )
}

/// A job's block size: a mix's smallest (its offsets' alignment, as readlab's own), else `bs=`,
/// else its bytes over its reads.
fn job_block_size(opts: &Map<String, Value>, io_bytes: u64, ios: u64) -> u64 {
    opt(opts, &["bssplit"])
        .and_then(|b| b.parse::<crate::bssplit::BsSplit>().ok())
        .and_then(|b| b.min())
        .or_else(|| opt(opts, &["bs", "blocksize", "rw_min_bs"]).and_then(|s| block_size(&s)))
        .unwrap_or_else(|| io_bytes.checked_div(ios).unwrap_or(0))
}

/// A job's skew in readlab's words (fio's when readlab does not read it), none when uniform.
fn job_distribution(opts: &Map<String, Value>) -> Option<String> {
    opt(opts, &["random_distribution"])
        .filter(|d| d != "random")
        .map(|d| {
            d.parse::<crate::distribution::RandomDistribution>()
                .map_or(d, |d| d.to_string())
        })
}

/// A job's seconds, IOPS and bytes per second: fio's, else worked out from its counts.
fn rates(read: &Value, job: &Value, ios: u64) -> (f64, f64, f64) {
    let runtime_ms = num(read, "runtime").max(num(job, "job_runtime"));
    let seconds = runtime_ms / 1000.0;
    let iops = {
        let i = num(read, "iops");
        if i > 0.0 || seconds <= 0.0 {
            i
        } else {
            ios as f64 / seconds
        }
    };
    let bw_bytes = {
        let b = num(read, "bw_bytes");
        if b > 0.0 { b } else { num(read, "bw") * 1024.0 }
    };
    (seconds, iops, bw_bytes)
}

/// A job's latency: fio's lat percentiles when it printed them (lat_percentiles=1), else its
/// completion latency's (clat); its json+ histogram; and the note saying which were used. None
/// when neither block has figures.
fn job_latency(read: &Value) -> Option<JobLatency> {
    // readlab measures from submission to completion (fio's lat); use fio's lat percentiles
    // when it printed them (lat_percentiles=1), else the completion latency (clat).
    let lat = read.get("lat_ns").unwrap_or(&Value::Null);
    let clat = read.get("clat_ns").unwrap_or(&Value::Null);
    // A block is usable when it has a maximum and a mean; a job with neither block usable
    // has no latency to draw (never 0 ns).
    let usable = |b: &Value| count(b, "max") > 0 && num(b, "mean") > 0.0;
    let (block, kind) = if usable(lat) && lat.get("percentile").is_some() {
        (lat, "lat")
    } else if usable(clat) {
        (clat, "clat")
    } else if usable(lat) {
        (lat, "lat")
    } else {
        return None;
    };
    let mut latency = summary(block);
    if block.get("percentile").and_then(Value::as_object).is_none() {
        // Without fio's percentiles there are none to show: marked as unsupported (–).
        latency.count = 0;
    }
    let mut hist = bins(lat);
    let mut hist_kind = "lat";
    if hist.is_empty() {
        hist = bins(clat);
        hist_kind = "clat";
    }
    let mut note = format!("fio {kind} percentiles");
    if !hist.is_empty() {
        note.push_str(&format!(", json+ {hist_kind} histogram"));
    }
    Some(JobLatency {
        latency,
        hist,
        note,
    })
}

/// What [`job_latency`] found: the summary, the histogram and the note saying whose they are.
struct JobLatency {
    latency: LatencySummary,
    hist: Vec<(u64, u64)>,
    note: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    const NORMAL: &str = include_str!("../../tests/fixtures/fio-normal.json");
    const PLUS: &str = include_str!("../../tests/fixtures/fio-jsonplus.json");
    const ZERO: &str = include_str!("../../tests/fixtures/fio-zero-reads.json");

    fn one(text: &str) -> Point {
        let i = import(text, "t.json").unwrap();
        assert_eq!(i.points.len(), 1, "{:?}", i.notes);
        i.points.into_iter().next().unwrap()
    }

    fn check_common(p: &Point) {
        assert_eq!(p.source, Source::Fio);
        assert_eq!(p.engine, "psync");
        assert_eq!(p.rw, "randread");
        assert_eq!(p.bs, 4096);
        assert_eq!((p.threads, p.iodepth, p.batch), (1, 1, 1));
        assert!(p.direct);
        assert_eq!(p.label, "fio:P");
        assert!(p.ios > 100 && p.iops > 0.0 && p.mb_s > 0.0, "{p:?}");
        // Throughput agrees with I/Os over time.
        let iops = p.ios as f64 / p.seconds;
        assert!((iops / p.iops - 1.0).abs() < 0.05, "{iops} vs {}", p.iops);
        assert!((p.mb_s * 1e6 / 4096.0 / p.iops - 1.0).abs() < 0.01);
        let l = &p.latency;
        assert!(l.min_ns > 0 && l.min_ns <= l.p50_ns && l.p50_ns <= l.p90_ns);
        assert!(l.p90_ns <= l.p99_ns && l.p99_ns <= l.p999_ns && l.p999_ns <= l.p9999_ns);
        assert!(l.p9999_ns <= l.max_ns);
        assert!(l.mean_ns > l.min_ns as f64 && l.mean_ns < l.max_ns as f64);
        assert!(p.cpu_pct > 0.0);
        assert!(
            p.env.date.starts_with("20") && p.env.date.ends_with('Z'),
            "{}",
            p.env.date
        );
        assert!(p.env.tool.starts_with("fio-"));
        assert!(p.env.kernel.is_empty());
    }

    /// What the tuner's fio command sets, the import reads back as the same options: both read the
    /// engines' one table of options.
    #[test]
    fn the_tuners_fio_command_imports_as_the_same_options() {
        for (kind, d) in crate::engine::option::all() {
            let mut c = RunConfig::new("/dev/x");
            c.engine = kind;
            d.set(&mut c.options, 3);
            let cmd = crate::tune::fio_command(&c);
            let job: Map<String, Value> = cmd
                .split_whitespace()
                .filter_map(|a| a.strip_prefix("--")?.split_once('='))
                .map(|(k, v)| (k.to_string(), Value::String(v.to_string())))
                .collect();
            let back = options(kind.name(), &job);
            let want = if d.fio.is_some() {
                c.options.clone()
            } else {
                EngineOptions::default()
            };
            assert_eq!(back, want, "{} {}: {cmd}", kind.name(), d.flag);
        }
    }

    #[test]
    fn normal_json() {
        let p = one(NORMAL);
        check_common(&p);
        assert!(p.bins.is_empty());
        assert_eq!(p.note.as_deref(), Some("fio clat percentiles"));
    }

    #[test]
    fn json_plus_has_the_histogram() {
        let p = one(PLUS);
        check_common(&p);
        assert!(p.bins.len() > 10);
        assert!(p.bins.windows(2).all(|w| w[0].0 < w[1].0));
        let n: u64 = p.bins.iter().map(|b| b.1).sum();
        assert_eq!(n, p.latency.count, "bins count every I/O");
        assert_eq!(n, p.ios);
        // The histogram spans fio's own extremes.
        let (lo, hi) = (p.bins[0].0, p.bins[p.bins.len() - 1].0);
        assert!(lo as f64 <= p.latency.min_ns as f64 * 1.1, "{lo}");
        assert!(hi as f64 >= p.latency.max_ns as f64 * 0.9, "{hi}");
        assert!(p.note.as_deref().unwrap().contains("json+"));
    }

    #[test]
    fn a_job_that_read_nothing_is_noted() {
        let i = import(ZERO, "zero.json").unwrap();
        assert!(i.points.is_empty());
        assert_eq!(i.notes.len(), 1);
        assert!(i.notes[0].contains("read nothing"), "{:?}", i.notes);
    }

    #[test]
    fn options_and_odd_documents() {
        let doc = r#"{"fio version":"fio-3.0","timestamp":0,"global options":{"ioengine":"io_uring","iodepth":"32","iodepth_batch_submit":"4","numjobs":"3","group_reporting":"","bs":"64k,4k"},
            "jobs":[{"jobname":"u","job options":{"rw":"randread"},"read":{"total_ios":10,"io_bytes":655360,"iops":5.0,"bw_bytes":327680,"runtime":2000,
            "clat_ns":{"min":5,"max":9,"mean":7,"N":10,"percentile":{"50.000000":7,"99.900000":12}}}}]}"#;
        let p = one(doc);
        assert_eq!(p.engine, "uring");
        assert_eq!(p.bs, 65536);
        assert_eq!((p.threads, p.iodepth, p.batch), (3, 32, 4));
        assert_eq!(p.label, "fio:U32B4T3");
        assert!(!p.direct);
        // Percentiles fio lacks come from the next one it has, and stay within [min, max].
        assert_eq!(p.latency.p90_ns, 9);
        assert_eq!(p.latency.p999_ns, 9);
        assert_eq!(p.latency.p50_ns, 7);
        assert_eq!(p.env.date, "1970-01-01T00:00:00Z");

        // A job without latency figures is left out with a note, never drawn at 0 ns.
        let nolat = r#"{"jobs":[{"jobname":"n","read":{"total_ios":10,"io_bytes":40960,"iops":5.0,"runtime":2000}},
            {"jobname":"z","read":{"total_ios":10,"io_bytes":40960,"iops":5.0,"runtime":2000,"lat_ns":{"min":0,"max":0,"mean":0.0}}}]}"#;
        let i = import(nolat, "x").unwrap();
        assert!(i.points.is_empty(), "{:?}", i.points);
        assert_eq!(i.notes.len(), 2, "{:?}", i.notes);
        assert!(i.notes[0].contains("no latency figures"), "{:?}", i.notes);
        // Min, mean and max without percentiles: kept, percentiles marked as unsupported.
        let nopct = r#"{"jobs":[{"jobname":"m","read":{"total_ios":10,"io_bytes":40960,"iops":5.0,"runtime":2000,
            "clat_ns":{"min":5,"max":9,"mean":7,"N":10}}}]}"#;
        let p = one(nopct);
        assert_eq!((p.latency.min_ns, p.latency.max_ns), (5, 9));
        assert!(!p.latency.supports(50.0));
        for bad in ["", "[]", "{}", "not json", r#"{"jobs":3}"#] {
            assert!(import(bad, "x").is_err(), "{bad}");
        }
        // Jobs without a read section, with a broken one, or with no jobs at all.
        let i = import(r#"{"jobs":[{"jobname":"w"},{"read":"?"}]}"#, "x").unwrap();
        assert_eq!((i.points.len(), i.notes.len()), (0, 2));
        assert!(import(r#"{"jobs":[]}"#, "x").unwrap().points.is_empty());
        // Notices before the document (fio printing to stdout).
        let noisy =
            format!("note: both iodepth >= 1 and synchronous I/O engine are selected\n{NORMAL}");
        assert_eq!(import(&noisy, "x").unwrap().points.len(), 1);
    }
}
