//! End-to-end: the real binary reads real files and a real block device with `--engine libaio`,
//! verifies every byte, labels the run and reports sane statistics.

use crate::common;
use common::*;

fn lat(doc: &serde_json::Value, k: &str) -> u64 {
    doc["result"]["latency"][k]
        .as_u64()
        .unwrap_or_else(|| panic!("latency.{k} missing: {}", doc["result"]))
}

/// The libaio runs every target gets, with the label each must carry.
const CASES: &[(&[&str], &str)] = &[
    (&["--iodepth", "1"], "A1B1"),
    (&["--iodepth", "32"], "A32B1"),
    (&["--iodepth", "16", "--batch", "4"], "A16B4"),
    (
        &["--iodepth", "16", "--batch", "8", "--complete-min", "8"],
        "A16B8",
    ),
    (&["--iodepth", "4", "--blocks-per-request", "8"], "A4B1×8"),
    (&["--iodepth", "16", "--numjobs", "2"], "A16B1T2"),
    (&["--iodepth", "8", "--buffered"], "A8B1"),
    (&["--iodepth", "8", "--rw", "read", "--bs", "1m"], "A8B1"),
];

fn run_libaio(target: &str, extra: &[&str]) -> (std::process::Output, serde_json::Value) {
    let mut args = vec![
        "run",
        "--engine",
        "libaio",
        "--verify",
        "--runtime",
        "1s",
        "--output",
        "json",
        target,
    ];
    args.extend_from_slice(extra);
    let o = run(&args);
    assert!(
        o.status.success(),
        "{extra:?} on {target}: exit {:?}: {}",
        o.status.code(),
        stderr(&o)
    );
    let doc = json(&o);
    (o, doc)
}

fn check_all_cases(target: &str) {
    for &(extra, label) in CASES {
        let (o, doc) = run_libaio(target, extra);
        let r = &doc["result"];
        let what = format!("{extra:?} on {target}");
        assert_eq!(r["label"], label, "{what}");
        assert_eq!(doc["config"]["engine"], "libaio", "{what}");
        let ios = r["ios"].as_u64().unwrap();
        assert!(ios > 0, "{what}: no I/Os: {r}");
        assert!(r["iops"].as_f64().unwrap() > 0.0, "{what}");
        assert_eq!(r["errors"]["count"], 0, "{what}: {}", r["errors"]);
        let v = &r["verify"];
        assert_eq!(v["mismatches"], 0, "{what}: {v}");
        assert!(
            v["checked_ios"].as_u64().unwrap() >= ios,
            "{what}: {v} vs {ios} I/Os"
        );
        for w in ["min_ns", "p50_ns", "p99_ns", "max_ns"].windows(2) {
            assert!(
                lat(&doc, w[0]) <= lat(&doc, w[1]),
                "{what}: {} > {}: {}",
                w[0],
                w[1],
                r["latency"]
            );
        }
        assert!(lat(&doc, "min_ns") > 0, "{what}: {}", r["latency"]);
        assert!(
            engine_features(r).contains(&"IOCB_CMD_PREAD"),
            "{what}: {}",
            r["engine_features"]
        );
        let err = stderr(&o);
        if extra.contains(&"--buffered") {
            assert!(err.contains("synchronous"), "{what}: {err}");
            assert_eq!(doc["config"]["direct"], false, "{what}");
        } else {
            assert!(!err.contains("synchronous"), "{what}: {err}");
            assert_eq!(doc["config"]["direct"], true, "{what}");
        }
        if let Some(i) = extra.iter().position(|&a| a == "--blocks-per-request") {
            let bpr: u64 = extra[i + 1].parse().unwrap();
            assert_eq!(ios, r["requests"].as_u64().unwrap() * bpr, "{what}");
        }
    }
}

#[test]
fn libaio_reads_and_verifies_a_real_file() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "64M");
    check_all_cases(f.to_str().unwrap());
}

#[test]
fn libaio_reads_and_verifies_a_loop_device() {
    let dev = LoopDev::prepared("64M");
    check_all_cases(&dev.dev);
}

/// A flipped byte makes a verifying libaio run exit 1 and name the byte's offset.
fn flipped_byte_is_caught(target: &str) {
    let offset = (5 << 20) + 1234u64;
    flip_byte(std::path::Path::new(target), offset);
    for extra in [
        &["--iodepth", "8", "--offset", "5m", "--size", "64k"][..],
        &[
            "--iodepth",
            "16",
            "--batch",
            "4",
            "--rw",
            "read",
            "--bs",
            "128k",
        ][..],
    ] {
        let mut args = vec![
            "run",
            "--engine",
            "libaio",
            "--verify",
            "--runtime",
            "1s",
            "--output",
            "json",
            target,
        ];
        args.extend_from_slice(extra);
        let o = run(&args);
        assert_mismatch_reported(&o, offset);
        let doc = json(&o);
        let v = &doc["result"]["verify"];
        assert!(v["mismatches"].as_u64().unwrap() > 0, "{extra:?}: {v}");
        assert_eq!(v["first"][0]["offset"], offset, "{extra:?}: {v}");
        assert_eq!(v["first"][0]["sector"], 5u64 << 20, "{extra:?}: {v}");
    }
}

#[test]
fn libaio_reports_a_flipped_byte_in_a_file() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "16M");
    flipped_byte_is_caught(f.to_str().unwrap());
}

#[test]
fn libaio_reports_a_flipped_byte_on_a_loop_device() {
    let dev = LoopDev::prepared("16M");
    flipped_byte_is_caught(&dev.dev);
}

#[test]
fn too_many_aio_events_explain_aio_max_nr() {
    let max: u64 = std::fs::read_to_string("/proc/sys/fs/aio-max-nr")
        .expect("read /proc/sys/fs/aio-max-nr")
        .trim()
        .parse()
        .unwrap();
    assert!(
        max < 1 << 20,
        "fs.aio-max-nr is {max}; this test needs the usual limit (65536) to ask for more"
    );
    let d = disk_dir();
    let f = prepare(d.path(), "f", "1M");
    let depth = (max + 1).to_string();
    let o = run(&[
        "run",
        "--engine",
        "libaio",
        "--buffered",
        "--iodepth",
        &depth,
        "--runtime",
        "1s",
        "-q",
        f.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("io_setup") && err.contains("/proc/sys/fs/aio-max-nr"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}
