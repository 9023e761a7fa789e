//! End-to-end: the thread-pool engine (`pool`) and glibc POSIX AIO (`posixaio`) read real files and
//! a real block device (a loop device with direct I/O), verify every byte, label their runs and,
//! for the pool, split latency into the read itself and the hand-off around it.

use crate::common;
use common::*;
use std::io::Read;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

/// Like `common::run`, but a run that hangs fails the test instead of blocking it forever.
fn run_bounded(args: &[&str]) -> Output {
    let mut child = bin()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start readlab");
    let drain = |mut p: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            p.read_to_end(&mut v).expect("read child output");
            v
        })
    };
    let out = drain(Box::new(child.stdout.take().unwrap()));
    let err = drain(Box::new(child.stderr.take().unwrap()));
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait for readlab") {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            let err = String::from_utf8_lossy(&err.join().unwrap()).into_owned();
            panic!("readlab {args:?} still running after 60 s; stderr: {err}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

fn lat(v: &serde_json::Value, k: &str) -> u64 {
    v[k].as_u64()
        .unwrap_or_else(|| panic!("latency field {k} missing in {v}"))
}

/// Percentiles ordered, mean inside [min, max], something counted.
fn assert_ordered(what: &str, l: &serde_json::Value) {
    assert!(
        l["count"].as_u64().unwrap_or(0) > 0,
        "{what}: no samples: {l}"
    );
    let order = [
        "min_ns", "p50_ns", "p90_ns", "p99_ns", "p999_ns", "p9999_ns", "max_ns",
    ];
    for w in order.windows(2) {
        assert!(
            lat(l, w[0]) <= lat(l, w[1]),
            "{what}: {} > {}: {l}",
            w[0],
            w[1]
        );
    }
    let mean = l["mean_ns"].as_f64().unwrap();
    assert!(
        mean >= lat(l, "min_ns") as f64 && mean <= lat(l, "max_ns") as f64,
        "{what}: mean outside [min, max]: {l}"
    );
    assert!(lat(l, "min_ns") > 0, "{what}: zero latency: {l}");
}

/// The value following `flag` in `args`, or `default`.
fn arg(args: &[&str], flag: &str, default: usize) -> usize {
    args.iter()
        .position(|a| *a == flag)
        .map(|i| args[i + 1].parse().unwrap())
        .unwrap_or(default)
}

/// Run one verifying configuration and check everything the JSON says about it.
fn check_run(engine: &str, target: &str, extra: &[&str]) {
    let mut args = vec![
        "run",
        "--engine",
        engine,
        "--runtime",
        "1s",
        "--verify",
        "--output",
        "json",
        target,
    ];
    args.extend_from_slice(extra);
    let o = run_bounded(&args);
    let ctx = format!("{engine} {extra:?} on {target}");
    assert!(o.status.success(), "{ctx}: {}", stderr(&o));
    assert!(!stderr(&o).contains("panicked"), "{ctx}: {}", stderr(&o));
    let doc = json(&o);
    let r = &doc["result"];

    // Everything read, nothing wrong.
    let ios = r["ios"].as_u64().unwrap();
    assert!(ios > 0, "{ctx}: no I/Os: {r}");
    assert!(r["iops"].as_f64().unwrap() > 0.0, "{ctx}");
    assert_eq!(r["errors"]["count"], 0, "{ctx}: {}", r["errors"]);
    assert_eq!(r["verify"]["mismatches"], 0, "{ctx}: {}", r["verify"]);
    assert!(
        r["verify"]["checked_ios"].as_u64().unwrap() >= ios,
        "{ctx}: fewer reads verified than counted: {}",
        r["verify"]
    );
    assert_ordered(&format!("{ctx}: latency"), &r["latency"]);
    assert_eq!(
        r["latency"]["count"].as_u64().unwrap(),
        r["requests"].as_u64().unwrap(),
        "{ctx}"
    );
    assert!(!r["timeline"].as_array().unwrap().is_empty(), "{ctx}");

    // The report's label: W (pool) or X (POSIX aio), depth, batch, threads.
    let (depth, batch, threads) = (
        arg(extra, "--iodepth", 1),
        arg(extra, "--batch", 1),
        arg(extra, "--numjobs", 1),
    );
    let prefix = if engine == "pool" { "W" } else { "X" };
    let mut label = format!("{prefix}{depth}B{batch}");
    // Reader threads set apart from the default, then blocks per request (labels say what
    // differs).
    if extra.contains(&"--pool-threads") {
        label.push_str(&format!("R{}", arg(extra, "--pool-threads", 0)));
    }
    let blocks = arg(extra, "--blocks-per-request", 1);
    if blocks > 1 {
        label.push_str(&format!("×{blocks}"));
    }
    if threads > 1 {
        label.push_str(&format!("T{threads}"));
    }
    assert_eq!(r["label"], label.as_str(), "{ctx}");
    assert_eq!(
        doc["config"]["direct"],
        !extra.contains(&"--buffered"),
        "{ctx}"
    );

    let bpr = arg(extra, "--blocks-per-request", 1) as u64;
    assert_eq!(ios, r["requests"].as_u64().unwrap() * bpr, "{ctx}");

    if engine == "pool" {
        // The reader threads time the pread itself: the runner reports it and the hand-off.
        let service = &r["service_latency"];
        assert_ordered(&format!("{ctx}: service"), service);
        assert!(
            service["count"].as_u64().unwrap() >= ios,
            "{ctx}: fewer reads timed than counted: {service}"
        );
        assert!(
            lat(service, "p50_ns") < lat(&r["latency"], "p50_ns"),
            "{ctx}: the read alone is not faster than the whole I/O: service {service}, total {}",
            r["latency"]
        );
        if bpr == 1 {
            let handoff = &r["handoff_latency"];
            assert_ordered(&format!("{ctx}: hand-off"), handoff);
            assert_eq!(handoff["count"], service["count"], "{ctx}");
        } else {
            // Hand-off is only defined when a request is one read.
            assert!(
                r["handoff_latency"].is_null(),
                "{ctx}: {}",
                r["handoff_latency"]
            );
        }
        let pool_threads = arg(extra, "--pool-threads", depth * bpr as usize);
        assert_eq!(
            r["engine_features"],
            serde_json::json!([format!("reader_threads={pool_threads}")]),
            "{ctx}"
        );
    } else {
        // glibc does not say how long the read itself took.
        assert!(
            r["service_latency"].is_null(),
            "{ctx}: {}",
            r["service_latency"]
        );
        assert!(
            r["handoff_latency"].is_null(),
            "{ctx}: {}",
            r["handoff_latency"]
        );
    }
}

const POOL_CASES: &[&[&str]] = &[
    &["--iodepth", "1"],
    &["--iodepth", "16"],
    &["--pool-threads", "2", "--iodepth", "8"],
    &["--blocks-per-request", "8", "--iodepth", "2"],
    &["--numjobs", "2", "--iodepth", "4"],
    &["--buffered", "--iodepth", "4"],
];

const POSIXAIO_CASES: &[&[&str]] = &[
    &["--iodepth", "1"],
    &["--iodepth", "16"],
    &["--iodepth", "8", "--batch", "4"],
    &["--blocks-per-request", "8", "--iodepth", "2"],
    &["--numjobs", "2", "--iodepth", "4"],
    &["--buffered", "--iodepth", "4"],
];

fn on_file(engine: &str, cases: &[&[&str]]) {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "64M");
    for extra in cases {
        check_run(engine, f.to_str().unwrap(), extra);
    }
}

fn on_loop_device(engine: &str, cases: &[&[&str]]) {
    let dev = LoopDev::prepared("64M");
    for extra in cases {
        check_run(engine, &dev.dev, extra);
    }
}

#[test]
fn pool_verifies_a_real_file() {
    on_file("pool", POOL_CASES);
}

#[test]
fn pool_verifies_a_loop_device() {
    on_loop_device("pool", POOL_CASES);
}

#[test]
fn posixaio_verifies_a_real_file() {
    on_file("posixaio", POSIXAIO_CASES);
}

#[test]
fn posixaio_verifies_a_loop_device() {
    on_loop_device("posixaio", POSIXAIO_CASES);
}

#[test]
fn a_flipped_byte_fails_the_run_with_its_offset() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "16M");
    let target = (5 << 20) + 1234u64;
    flip_byte(&f, target);
    let fs = f.to_str().unwrap();
    let cases: &[&[&str]] = &[
        &["--engine", "pool", "--iodepth", "4"],
        &["--engine", "pool", "--iodepth", "1"],
        &["--engine", "posixaio", "--iodepth", "8", "--batch", "4"],
        &["--engine", "posixaio", "--iodepth", "1"],
    ];
    for extra in cases {
        // Random reads confined to the damaged sector.
        let mut args = vec![
            "run",
            "--verify",
            "--runtime",
            "1s",
            "--offset",
            "5m",
            "--size",
            "4k",
            "-q",
            fs,
        ];
        args.extend_from_slice(extra);
        let o = run_bounded(&args);
        assert_mismatch_reported(&o, target);
        // A sequential pass over the whole file finds it too, and the JSON says where.
        let mut args = vec![
            "run",
            "--verify",
            "--rw",
            "read",
            "--bs",
            "128k",
            "--runtime",
            "1s",
            "--output",
            "json",
            fs,
        ];
        args.extend_from_slice(extra);
        let o = run_bounded(&args);
        assert_eq!(o.status.code(), Some(1), "{extra:?}: {}", stderr(&o));
        let doc = json(&o);
        let v = &doc["result"]["verify"];
        assert!(v["mismatches"].as_u64().unwrap() >= 1, "{extra:?}: {v}");
        assert_eq!(v["first"][0]["offset"], target, "{extra:?}: {v}");
        assert_eq!(doc["result"]["errors"]["count"], 0, "{extra:?}");
    }
}
