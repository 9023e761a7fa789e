//! fio's JSON document (`fio --output-format=json`) written from readlab's runs, so that the tools
//! built around fio's output (fio-plot, fio pipelines) read readlab's figures: one fio job per run,
//! every field in fio's name, unit and type, filled from readlab's own measurements (a field
//! readlab does not measure is written as fio writes an unmeasured one: 0). `points::fio` reads it
//! back; docs/json.md lists the fields and where readlab's meaning differs from fio's.

use super::Exporter;
use crate::error::{Error, Result};
use crate::result::{Document, RunResult};
use crate::stats::LatencySummary;
use serde_json::{Map, Value, json};

/// fio's JSON, one job per run (as `fio --output-format=json` of a job file with a section per
/// run and `group_reporting`: each job stands for all its threads).
pub struct FioJsonExporter;

impl Exporter for FioJsonExporter {
    fn render(&self, docs: &[Document]) -> Result<String> {
        serde_json::to_string_pretty(&document(docs))
            .map(|mut s| {
                s.push('\n');
                s
            })
            .map_err(|source| Error::Json {
                what: "fio JSON",
                source,
            })
    }
}

/// fio's default percentile list (`percentile_list`), the keys of a `*_ns` block's `percentile`.
pub const PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

/// The document: who wrote it, when, the options every job shares, the jobs. fio lists the disks
/// it sampled in `disk_util`; readlab samples none during a run, so the list is empty.
fn document(docs: &[Document]) -> Value {
    let (version, unix_ms) = docs.first().map_or_else(
        || (env!("CARGO_PKG_VERSION").to_string(), 0),
        |d| {
            (
                d.environment.readlab_version.clone(),
                unix_ms(&d.environment.date),
            )
        },
    );
    json!({
        "fio version": format!("readlab-{version}"),
        "timestamp": unix_ms / 1000,
        "timestamp_ms": unix_ms,
        "time": ctime(unix_ms / 1000),
        // readlab runs threads, and reports each run as one job for all of them.
        "global options": {"thread": "", "group_reporting": ""},
        "jobs": docs.iter().map(job).collect::<Vec<_>>(),
        "disk_util": [],
    })
}

/// One run as one of fio's jobs.
fn job(d: &Document) -> Value {
    let (c, r) = (&d.config, &d.result);
    let (usr, sys) = cpu_split(r);
    let (ns, us, ms) = buckets(r);
    json!({
        "jobname": r.label,
        "groupid": 0,
        "error": r.errors.first.first().map_or(0, |e| e.errno),
        "eta": 0,
        "elapsed": (c.ramp.as_secs_f64() + r.seconds).ceil() as u64,
        "job options": job_options(d),
        "read": read_block(r),
        "write": unmeasured_direction(),
        "trim": unmeasured_direction(),
        "sync": {"total_ios": 0, "lat_ns": zero_stat()},
        "job_runtime": runtime_ms(r),
        "usr_cpu": usr,
        "sys_cpu": sys,
        "ctx": 0,
        "majf": 0,
        "minf": 0,
        "iodepth_level": depth_levels(&["1", "2", "4", "8", "16", "32", ">=64"]),
        "iodepth_submit": depth_levels(&["0", "4", "8", "16", "32", "64", ">=64"]),
        "iodepth_complete": depth_levels(&["0", "4", "8", "16", "32", "64", ">=64"]),
        "latency_ns": ns,
        "latency_us": us,
        "latency_ms": ms,
        "latency_depth": c.iodepth,
        "latency_target": 0,
        "latency_percentile": 100.0,
        "latency_window": 0,
    })
}

/// The run's configuration as fio's job options (strings, as fio writes every option): the ones
/// fio-plot sorts by (`rw`, `bs`, `iodepth`, `numjobs`) always, the others when they apply.
/// readlab times each read from submission to completion, fio's `lat`: hence `lat_percentiles`,
/// and no `slat`/`clat` (`disable_slat`, `disable_clat`).
fn job_options(d: &Document) -> Map<String, Value> {
    let c = &d.config;
    let mut o = Map::new();
    let mut put = |k: &str, v: String| {
        o.insert(k.to_string(), Value::String(v));
    };
    put("name", d.result.label.clone());
    put(
        if c.engine.name() == "nbd" {
            "uri"
        } else {
            "filename"
        },
        targets(d),
    );
    for (k, v) in crate::fiojob::workload_options(c) {
        put(k, v);
    }
    // fio-plot sorts by it, whatever the engine.
    put("iodepth", c.iodepth.to_string());
    put("lat_percentiles", "1".into());
    put("disable_slat", "1".into());
    put("disable_clat", "1".into());
    o
}

/// The run's target, or its targets joined as fio joins several files (`a:b`).
fn targets(d: &Document) -> String {
    if d.targets.is_empty() && d.config.files.is_empty() {
        return d.config.target.display().to_string();
    }
    if d.targets.is_empty() {
        // A job over several files, as its job file names them (fio's `filename=a:b`).
        return crate::fileset::join(&d.config.job_files());
    }
    d.targets
        .iter()
        .map(|t| t.config.target.display().to_string())
        .collect::<Vec<_>>()
        .join(":")
}

/// The measured window in whole milliseconds (fio's `runtime`).
fn runtime_ms(r: &RunResult) -> u64 {
    (r.seconds * 1000.0).round() as u64
}

/// The reads: totals, rates, latency from submission (`lat_ns`; `slat_ns` and `clat_ns` are not
/// measured) and the per-second samples of the run's timeline as fio's bandwidth and IOPS
/// samples.
fn read_block(r: &RunResult) -> Value {
    let kib_s = r.mib_s * 1024.0;
    let bw = samples(r.timeline.iter().map(|t| t.mib_s * 1024.0));
    let iops = samples(r.timeline.iter().map(|t| t.iops));
    json!({
        "io_bytes": r.bytes,
        "io_kbytes": r.bytes / 1024,
        "bw_bytes": (r.mb_s * 1e6).round() as u64,
        "bw": kib_s.round() as u64,
        "iops": r.iops,
        "runtime": runtime_ms(r),
        "total_ios": r.ios,
        "short_ios": 0,
        "drop_ios": 0,
        "slat_ns": zero_stat(),
        "clat_ns": zero_stat(),
        "lat_ns": lat_block(&r.latency, &r.histogram),
        "bw_min": bw.min.round() as u64,
        "bw_max": bw.max.round() as u64,
        "bw_agg": if kib_s > 0.0 { bw.mean * 100.0 / kib_s } else { 0.0 },
        "bw_mean": bw.mean,
        "bw_dev": bw.dev,
        "bw_samples": bw.n,
        "iops_min": iops.min.round() as u64,
        "iops_max": iops.max.round() as u64,
        "iops_mean": iops.mean,
        "iops_stddev": iops.dev,
        "iops_samples": iops.n,
    })
}

/// min, max, mean, sample standard deviation and count of a series (all 0 when empty).
#[derive(Default)]
struct Samples {
    min: f64,
    max: f64,
    mean: f64,
    dev: f64,
    n: usize,
}

fn samples(values: impl Iterator<Item = f64>) -> Samples {
    let v: Vec<f64> = values.filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return Samples::default();
    }
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let dev = if v.len() > 1 {
        (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
    } else {
        0.0
    };
    Samples {
        min: v.iter().copied().fold(f64::INFINITY, f64::min),
        max: v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        mean,
        dev,
        n: v.len(),
    }
}

/// A latency block as fio writes one it did not measure.
fn zero_stat() -> Value {
    json!({"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0})
}

/// A direction readlab never does (write, trim): fio's block of a direction with no I/O.
fn unmeasured_direction() -> Value {
    json!({
        "io_bytes": 0, "io_kbytes": 0, "bw_bytes": 0, "bw": 0, "iops": 0.0, "runtime": 0,
        "total_ios": 0, "short_ios": 0, "drop_ios": 0,
        "slat_ns": zero_stat(), "clat_ns": zero_stat(), "lat_ns": zero_stat(),
        "bw_min": 0, "bw_max": 0, "bw_agg": 0.0, "bw_mean": 0.0, "bw_dev": 0.0, "bw_samples": 0,
        "iops_min": 0, "iops_max": 0, "iops_mean": 0.0, "iops_stddev": 0.0, "iops_samples": 0,
    })
}

/// readlab does not record how many requests were in flight at each submission (only the mean,
/// `achieved_depth`): fio's depth distributions are written as unmeasured.
fn depth_levels(keys: &[&str]) -> Value {
    Value::Object(keys.iter().map(|k| (k.to_string(), json!(0.0))).collect())
}

/// fio's key for a percentile: `99.900000`.
pub fn percentile_key(p: f64) -> String {
    format!("{p:.6}")
}

/// `lat_ns`: readlab's exact min, max, mean and count; the percentiles readlab reports (p50,
/// p90, p99, p99.9, p99.99) as it reports them, fio's others from the run's histogram (each
/// clamped to the run's min and max, as readlab's own).
fn lat_block(l: &LatencySummary, histogram: &str) -> Value {
    if l.count == 0 {
        return zero_stat();
    }
    let hist = crate::stats::decode_histogram(histogram);
    let own = [
        (50.0, l.p50_ns),
        (90.0, l.p90_ns),
        (99.0, l.p99_ns),
        (99.9, l.p999_ns),
        (99.99, l.p9999_ns),
    ];
    let pct: Map<String, Value> = PERCENTILES
        .iter()
        .filter_map(|&p| {
            let v = match own.iter().find(|(q, _)| *q == p) {
                Some(&(_, v)) => v,
                None => hist
                    .as_ref()?
                    .value_at_quantile(p / 100.0)
                    .clamp(l.min_ns, l.max_ns),
            };
            Some((percentile_key(p), json!(v)))
        })
        .collect();
    json!({
        "min": l.min_ns,
        "max": l.max_ns,
        "mean": l.mean_ns,
        "stddev": l.stdev_ns,
        "N": l.count,
        "percentile": pct,
    })
}

/// fio's latency buckets: the share (%) of requests in each, by their upper bound (exclusive)
/// in ns, µs and ms; `>=2000` ms takes the rest. fio counts completion latency (`clat`) there;
/// readlab's are of its latency from submission, as the histogram resolves them (0.1 %).
fn buckets(r: &RunResult) -> (Value, Value, Value) {
    const SMALL: [u64; 10] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000];
    const MS: [u64; 11] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000, 2000];
    let mut ns = [0u64; 10];
    let mut us = [0u64; 10];
    let mut ms = [0u64; 12];
    let mut total = 0u64;
    if let Some(h) = crate::stats::decode_histogram(&r.histogram) {
        for v in h.iter_recorded() {
            let n = v.count_at_value();
            let at = h.lowest_equivalent(v.value_iterated_to());
            total += n;
            let slot = |unit: u64, bounds: &[u64]| {
                bounds
                    .iter()
                    .position(|&b| at / unit < b)
                    .unwrap_or(bounds.len())
            };
            if at < 1_000 {
                ns[slot(1, &SMALL)] += n;
            } else if at < 1_000_000 {
                us[slot(1_000, &SMALL)] += n;
            } else {
                ms[slot(1_000_000, &MS)] += n;
            }
        }
    }
    let share = |n: u64| {
        if total == 0 {
            0.0
        } else {
            n as f64 * 100.0 / total as f64
        }
    };
    let map = |keys: Vec<String>, counts: &[u64]| -> Value {
        Value::Object(
            keys.into_iter()
                .zip(counts)
                .map(|(k, &n)| (k, json!(share(n))))
                .collect(),
        )
    };
    let small: Vec<String> = SMALL.iter().map(u64::to_string).collect();
    let mut ms_keys: Vec<String> = MS.iter().map(u64::to_string).collect();
    ms_keys.push(">=2000".into());
    (map(small.clone(), &ns), map(small, &us), map(ms_keys, &ms))
}

/// fio's `usr_cpu` and `sys_cpu` (% of one core over the run): readlab's CPU of every thread of
/// the run (its own, io_uring's SQ poll thread and io workers; `cpu_pct` of the report),
/// divided between user and system time as the threads' tick counts divide it.
fn cpu_split(r: &RunResult) -> (f64, f64) {
    let c = &r.cpu;
    let total = c.app.pct_of_core + c.sqpoll.pct_of_core + c.io_worker.pct_of_core;
    let user = c.app.user_s + c.sqpoll.user_s + c.io_worker.user_s;
    let sys = c.app.sys_s + c.sqpoll.sys_s + c.io_worker.sys_s;
    if user + sys <= 0.0 {
        return (0.0, total);
    }
    let usr = total * user / (user + sys);
    (usr, total - usr)
}

/// Milliseconds since 1970 of an RFC 3339 date (0 when it is not one).
fn unix_ms(date: &str) -> u64 {
    humantime::parse_rfc3339_weak(date)
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_millis() as u64)
}

/// fio's `time` (C's `ctime`, `Sun Nov 29 02:32:27 2026`), in UTC.
fn ctime(unix_s: u64) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let days = unix_s / 86_400;
    let secs = unix_s % 86_400;
    // Civil date from days since 1970-01-01 (Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{} {} {day:2} {:02}:{:02}:{:02} {year}",
        DAYS[(days % 7) as usize],
        MONTHS[(month - 1) as usize],
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

#[cfg(test)]
mod tests;
