//! A job file written from a run configuration (for fio and for `readlab run --job`), and where
//! it goes beside a profile.

use crate::config::{Arrivals, Fadvise, Rate, RunConfig, Rw};
use crate::engine::EngineKind;
use crate::error::Error;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// fio's time: whole seconds when it is, else milliseconds (fio reads both).
pub fn fio_time(d: Duration) -> String {
    if d.subsec_nanos() == 0 {
        format!("{}s", d.as_secs())
    } else {
        format!("{}ms", d.as_millis().max(1))
    }
}

/// fio's words for what `cfg` reads and how, as `(option, value)`: the engine, the pattern, the
/// block size, O_DIRECT, the threads, an asynchronous engine's depth and batches, the range, the
/// runtime and ramp, the engine's options. What a written job file and fio's JSON document
/// (`export::fio`'s `job options`) both say of a configuration.
pub fn workload_options(cfg: &RunConfig) -> Vec<(&'static str, String)> {
    let mut o = vec![
        (
            "ioengine",
            if cfg.engine == EngineKind::Null {
                "null".to_string()
            } else {
                cfg.engine.fio_name().to_string()
            },
        ),
        (
            "rw",
            match cfg.rw {
                Rw::Read => "read",
                Rw::Randread => "randread",
            }
            .to_string(),
        ),
        ("bs", cfg.bs.to_string()),
        ("direct", u8::from(cfg.direct).to_string()),
        ("numjobs", cfg.threads.to_string()),
    ];
    if !cfg.bssplit.is_single() {
        // Taken over bs= by fio and readlab alike; its offsets align to the smallest, bs.
        o.push(("bssplit", cfg.bssplit.to_string()));
    }
    if cfg.engine.capabilities().asynchronous {
        o.push(("iodepth", cfg.iodepth.to_string()));
        o.push(("iodepth_batch_submit", cfg.batch.to_string()));
        o.push(("iodepth_batch_complete_min", cfg.complete_min.to_string()));
    }
    if !cfg.file_service.is_default() {
        o.push(("file_service_type", cfg.file_service.word().to_string()));
    }
    if cfg.offset > 0 {
        o.push(("offset", cfg.offset.to_string()));
    }
    if let Some(n) = cfg.size {
        o.push(("size", n.to_string()));
    }
    o.push(("runtime", fio_time(cfg.runtime)));
    if !cfg.ramp.is_zero() {
        o.push(("ramp_time", fio_time(cfg.ramp)));
    }
    if let Some(t) = cfg.thinktime {
        // fio's units: µs, and seconds for the I/O time.
        o.push(("thinktime", t.think_us.to_string()));
        if t.spin_us > 0 {
            o.push(("thinktime_spin", t.spin_us.to_string()));
        }
        if let Some(b) = t.blocks {
            o.push(("thinktime_blocks", b.to_string()));
        }
        if let Some(i) = t.iotime_us {
            o.push(("thinktime_iotime", format!("{i}us")));
        }
    }
    if let Some(n) = cfg.loops {
        o.push(("loops", n.to_string()));
    }
    for d in crate::engine::option::set_in(cfg.engine, &cfg.options) {
        if let (Some(k), Some(n)) = (d.fio, d.get(&cfg.options)) {
            o.push((k, n.to_string()));
        }
    }
    o
}

/// The fio job file that runs `cfg` (one job, named `name`), for fio and for `readlab run
/// --job`. Refused for what fio has no words for (readlab's thread pool, blocks per request, an
/// open-loop rate); readlab's byte verification and its stop once stable are left out, each with
/// a comment (the job runs its whole runtime).
pub fn write(cfg: &RunConfig, name: &str, origin: &str) -> Result<String, Error> {
    let no = |what: &str| {
        Err(Error::invalid(format!(
            "{}: {what} has no fio equivalent, so no job file can replay it",
            cfg.label()
        )))
    };
    if cfg.engine == EngineKind::Pool {
        return no("the thread pool engine");
    }
    if cfg.blocks_per_request > 1 {
        return no("several blocks per request");
    }
    let name: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let target = replayable(&cfg.target)?;
    for f in &cfg.files {
        replayable(f)?;
    }
    let nbd = cfg.engine.name() == "nbd";
    let mut s =
        format!("; {origin}\n; replay with `fio FILE` or `readlab run --job FILE`\n[{name}]\n");
    let mut put = |k: &str, v: String| s.push_str(&format!("{k}={v}\n"));
    if nbd {
        put("uri", target.to_string());
    } else {
        put("filename", crate::fileset::join(&cfg.job_files()));
    }

    for (k, v) in workload_options(cfg) {
        put(k, v);
    }
    if cfg.engine.capabilities().asynchronous {
        put("iodepth_batch_complete_max", cfg.batch.to_string());
    }
    if let Some(n) = cfg.io_limit {
        put("io_size", n.to_string());
    }
    put("randseed", cfg.seed.to_string());
    if !cfg.random_distribution.is_uniform() {
        put("random_distribution", cfg.random_distribution.to_string());
    }
    if let Some(f) = cfg.fadvise {
        put(
            "fadvise_hint",
            match f {
                Fadvise::Sequential => "sequential",
                Fadvise::Random => "random",
            }
            .into(),
        );
    }
    if let Some(Rate { iops, arrivals }) = cfg.rate {
        s.push_str(&format!(
            "; readlab's open loop: {iops} IOPS over all threads, {} arrivals (fio: rate_iops per job, rate_process)\n",
            match arrivals {
                Arrivals::Poisson => "poisson",
                Arrivals::Fixed => "fixed",
            }
        ));
        return no("an open-loop rate");
    }
    // With loops, the job reads a fixed amount and ends (fio: time_based would make loops moot).
    if cfg.loops.is_none() {
        s.push_str("time_based\n");
    }
    s.push_str("norandommap\nthread\ngroup_reporting\n");
    if cfg.stop_when_stable.is_some() {
        s.push_str("; readlab stopped once IOPS was stable; this job runs the whole runtime\n");
    }
    if cfg.verify {
        s.push_str("; readlab also checked every byte read against `readlab prepare`'s data (readlab run --verify)\n");
    }
    Ok(s)
}

/// The target as a job file's value, refused when fio would read another file from it: a name
/// that is not UTF-8, holds a line break or a control character, starts or ends with a blank
/// (fio trims them) or holds `${` (fio expands it). fio has no quoting.
fn replayable(target: &Path) -> Result<&str, Error> {
    let refuse = |why: &str| {
        Err(Error::invalid(format!(
            "{}: a target whose name {why} cannot be written into a job file (fio would read another file); rename or link it under a plain name",
            target.to_string_lossy().escape_debug()
        )))
    };
    let Some(t) = target.to_str() else {
        return refuse("is not UTF-8");
    };
    if t.chars().any(char::is_control) {
        return refuse("holds a line break or control character");
    }
    if t.trim() != t {
        return refuse("starts or ends with a blank");
    }
    if t.contains("${") {
        return refuse("holds `${` (fio expands it)");
    }
    Ok(t)
}

/// The job file's path beside a profile: `job-4k.fio` for `profile-4k.json`.
pub fn beside(profile: &Path) -> PathBuf {
    let stem = profile
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let rest = stem.strip_prefix("profile").unwrap_or(&stem);
    profile.with_file_name(format!("job{rest}.fio"))
}
