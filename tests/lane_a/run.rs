//! End-to-end: the real binary prepares real files, reads them with every engine, verifies them,
//! and reports exact statistics.

use crate::common;
use common::*;

fn lat(doc: &serde_json::Value, k: &str) -> u64 {
    doc["result"]["latency"][k]
        .as_u64()
        .unwrap_or_else(|| panic!("latency.{k} missing"))
}

fn assert_sane(doc: &serde_json::Value) {
    let r = &doc["result"];
    assert!(r["ios"].as_u64().unwrap() > 0, "no I/Os: {r}");
    assert!(r["iops"].as_f64().unwrap() > 0.0);
    let order = [
        "min_ns", "p50_ns", "p90_ns", "p99_ns", "p999_ns", "p9999_ns", "max_ns",
    ];
    for w in order.windows(2) {
        assert!(
            lat(doc, w[0]) <= lat(doc, w[1]),
            "{} > {}: {}",
            w[0],
            w[1],
            r["latency"]
        );
    }
    let mean = r["latency"]["mean_ns"].as_f64().unwrap();
    assert!(mean >= lat(doc, "min_ns") as f64 && mean <= lat(doc, "max_ns") as f64);
    assert_eq!(doc["schema"], "readlab.run/1");
    assert!(!r["histogram"].as_str().unwrap().is_empty());
    assert!(!r["timeline"].as_array().unwrap().is_empty());
}

#[test]
fn psync_verified_run_writes_sane_json() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "256M");
    let out = d.path().join("out.json");
    let o = run(&[
        "run",
        "--engine",
        "psync",
        "--bs",
        "4k",
        "--rw",
        "randread",
        "--runtime",
        "2s",
        "--verify",
        "--json",
        out.to_str().unwrap(),
        "-q",
        f.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let table = stdout(&o);
    assert!(
        table.contains("IOPS") && table.contains("p99.9") && table.contains("0 mismatches"),
        "{table}"
    );
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_sane(&doc);
    assert_eq!(doc["result"]["label"], "P");
    let v = &doc["result"]["verify"];
    assert!(v["checked_ios"].as_u64().unwrap() >= doc["result"]["ios"].as_u64().unwrap());
    assert_eq!(v["mismatches"], 0);
    let env = &doc["environment"];
    assert_eq!(env["target"]["kind"], "file");
    assert!(env["kernel"].as_str().unwrap().len() > 1);
    assert!(env["target"]["dio_offset_align"].as_u64().unwrap() >= 512);
    // The app thread did the reads: its CPU is counted.
    assert!(doc["result"]["cpu"]["app"]["total_s"].as_f64().unwrap() > 0.0);
    // Two seconds of 100 ms windows: an interval that holds the run's IOPS, said in the table.
    let p = &doc["result"]["precision"];
    let iops = doc["result"]["iops"].as_f64().unwrap();
    let e = &p["iops"];
    assert_eq!(e["value"].as_f64(), Some(iops), "{p}");
    assert!(
        e["lo"].as_f64().unwrap() <= iops && iops <= e["hi"].as_f64().unwrap(),
        "{p}"
    );
    assert!(p["windows"].as_u64().unwrap() >= 8, "{p}");
    let p99 = &p["p99_ns"];
    let v = p99["value"].as_f64().unwrap();
    assert!(
        p99["lo"].as_f64().unwrap() <= v && v <= p99["hi"].as_f64().unwrap(),
        "{p}"
    );
    assert!(
        table.contains("interval IOPS ") && table.contains(" % (95 %; "),
        "{table}"
    );
}

#[test]
fn every_engine_reads_real_files() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "64M");
    let f = f.to_str().unwrap();
    let cases: &[&[&str]] = &[
        &["--engine", "psync", "--verify"],
        &[
            "--engine",
            "psync",
            "--verify",
            "--rw",
            "read",
            "--bs",
            "1m",
            "--numjobs",
            "2",
        ],
        &[
            "--engine",
            "psync",
            "--verify",
            "--buffered",
            "--fadvise",
            "random",
        ],
        &["--engine", "pvsync2", "--verify"],
        &["--engine", "pvsync2", "--verify", "--buffered", "--nowait"],
        &["--engine", "pvsync2", "--verify", "--hipri"],
        &["--engine", "null"],
    ];
    for extra in cases {
        let mut args = vec!["run", "--runtime", "1s", "--output", "json", f];
        args.extend_from_slice(extra);
        let o = run(&args);
        assert!(o.status.success(), "{extra:?}: {}", stderr(&o));
        let doc = json(&o);
        if extra.contains(&"--nowait") {
            // Uncached reads may all be refused with EAGAIN; that is reported, not an error.
            assert_eq!(doc["result"]["errors"]["count"], 0, "{extra:?}");
        } else {
            assert_sane(&doc);
        }
        if extra.contains(&"--hipri") {
            assert!(
                stderr(&o).contains("RWF_HIPRI is ignored"),
                "{}",
                stderr(&o)
            );
        }
    }
}

#[test]
fn sequential_threads_get_their_own_stripes_and_label() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "32M");
    let o = run(&[
        "run",
        "--rw",
        "read",
        "--bs",
        "64k",
        "--numjobs",
        "3",
        "--runtime",
        "1s",
        "--verify",
        "--output",
        "json",
        f.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = json(&o);
    assert_sane(&doc);
    assert_eq!(doc["result"]["label"], "PT3");
    assert_eq!(doc["config"]["threads"], 3);
}

#[test]
fn ramp_is_excluded_from_the_window() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "16M");
    let o = run(&[
        "run",
        "--engine",
        "null",
        "--runtime",
        "1s",
        "--ramp",
        "1s",
        "--output",
        "json",
        f.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = json(&o);
    let secs = doc["result"]["seconds"].as_f64().unwrap();
    assert!((0.9..1.2).contains(&secs), "window {secs}");
    let timeline = doc["result"]["timeline"].as_array().unwrap();
    assert!(timeline.len() <= 2, "{timeline:?}");
}

#[test]
fn a_flipped_byte_is_reported_with_its_offset() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "16M");
    let target = (5 << 20) + 1234u64; // inside the filler of a sector
    flip_byte(&f, target);
    // Random reads confined to that sector.
    let o = run(&[
        "run",
        "--verify",
        "--runtime",
        "1s",
        "--offset",
        "5m",
        "--size",
        "4k",
        "-q",
        f.to_str().unwrap(),
    ]);
    assert_mismatch_reported(&o, target);
    // A sequential pass over the whole file finds it too, and the JSON says where.
    let o = run(&[
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
        f.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let doc = json(&o);
    assert_eq!(doc["result"]["verify"]["first"][0]["offset"], target);
    assert_eq!(doc["result"]["verify"]["first"][0]["sector"], 5u64 << 20);
    // A header byte (the sector's own offset field) is caught as well.
    let f2 = prepare(d.path(), "g", "1M");
    flip_byte(&f2, 8192 + 17);
    let o = run(&[
        "run",
        "--verify",
        "--rw",
        "read",
        "--runtime",
        "1s",
        "-q",
        f2.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("offset 8209"), "{}", stderr(&o));
}

#[test]
fn short_reads_are_counted_with_their_offset() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "8M");
    let child = bin()
        .args([
            "run",
            "--rw",
            "read",
            "--bs",
            "64k",
            "--runtime",
            "3s",
            "--output",
            "json",
            f.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1200));
    std::fs::OpenOptions::new()
        .write(true)
        .open(&f)
        .unwrap()
        .set_len(4 << 20)
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let doc = json(&o);
    let e = &doc["result"]["errors"];
    assert!(e["count"].as_u64().unwrap() > 0);
    let first = &e["first"][0];
    assert!(first["offset"].as_u64().unwrap() >= 4 << 20, "{first}");
    assert!(
        first["message"].as_str().unwrap().contains("short read"),
        "{first}"
    );
}

#[test]
fn stdout_json_is_pure_and_roundtrips() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "16M");
    let o = run(&[
        "run",
        "--engine",
        "pvsync2",
        "--hipri",
        "--runtime",
        "1s",
        "--output",
        "json",
        f.to_str().unwrap(),
    ]);
    assert!(o.status.success());
    let doc = json(&o); // the HIPRI warning went to stderr
    let back: readlab::result::Document = serde_json::from_value(doc).expect("schema deserialises");
    assert!(back.result.ios > 0);
    let h = readlab::stats::decode_histogram(&back.result.histogram).expect("histogram decodes");
    assert_eq!(h.len(), back.result.ios);
}

#[test]
fn multi_block_requests_read_blocks_one_after_another_on_sync_engines() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "32M");
    let o = run(&[
        "run",
        "--blocks-per-request",
        "8",
        "--verify",
        "--runtime",
        "1s",
        "--output",
        "json",
        f.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = json(&o);
    assert_sane(&doc);
    let r = &doc["result"];
    assert_eq!(
        r["ios"].as_u64().unwrap(),
        8 * r["requests"].as_u64().unwrap()
    );
    assert_eq!(
        r["bytes"].as_u64().unwrap(),
        4096 * r["ios"].as_u64().unwrap()
    );
    assert!(r["verify"]["checked_ios"].as_u64().unwrap() >= r["ios"].as_u64().unwrap());
    // Latency is per request, not per block: one sample per request, and at QD1 on one thread
    // the requests' latencies fill the window (were only one block of eight timed, they would
    // cover about an eighth of it). An identity of the accounting, whatever the disk's speed.
    let lat = &r["latency"];
    assert_eq!(lat["count"].as_u64(), r["requests"].as_u64(), "{lat}");
    let busy_s = lat["mean_ns"].as_f64().unwrap() * lat["count"].as_f64().unwrap() / 1e9;
    let window_s = r["seconds"].as_f64().unwrap();
    assert!(
        busy_s > 0.5 * window_s,
        "8-block requests were timed for {busy_s:.3} s of a {window_s:.3} s window"
    );
}

/// `--repeat N`: N runs, the median one shown with a confidence interval per figure (JSON and
/// table); a mismatch in any repetition fails the whole run with its offset.
#[test]
fn repeat_gives_medians_with_intervals_and_keeps_every_failure() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "16M");
    let fs = f.to_str().unwrap();
    let o = run(&[
        "run",
        "--repeat",
        "3",
        "--runtime",
        "0.5s",
        "--output",
        "json",
        fs,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = json(&o);
    let rep = &doc["result"]["repeat"];
    assert_eq!(rep["runs"], 3, "{rep}");
    assert!(rep["confidence"].as_f64().unwrap() > 0.5, "{rep}");
    for k in [
        "iops",
        "p50_ns",
        "p99_ns",
        "cpu_us_per_io",
        "achieved_depth",
    ] {
        let i = &rep[k];
        let (lo, m, hi) = (
            i["lo"].as_f64().unwrap(),
            i["median"].as_f64().unwrap(),
            i["hi"].as_f64().unwrap(),
        );
        assert!(lo <= m && m <= hi, "{k}: {i}");
    }
    assert_eq!(
        doc["result"]["iops"].as_f64().unwrap(),
        rep["iops"]["median"].as_f64().unwrap(),
        "the median run stands for the repetitions"
    );
    let o = run(&["run", "--repeat", "2", "--runtime", "0.3s", fs]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("repeat   2 runs, the median one shown"),
        "{}",
        stdout(&o)
    );
    // Wrong data in the repetitions: exit 1 with the offset, every repetition's mismatches counted.
    let bad = (2 << 20) + 99u64;
    flip_byte(&f, bad);
    let o = run(&[
        "run",
        "--verify",
        "--repeat",
        "3",
        "--runtime",
        "0.3s",
        "--offset",
        "2m",
        "--size",
        "4k",
        "--output",
        "json",
        fs,
    ]);
    assert_mismatch_reported(&o, bad);
    let doc = json(&o);
    let v = &doc["result"]["verify"];
    assert_eq!(v["mismatches"], v["checked_ios"], "{v}");
    assert!(
        v["mismatches"].as_u64() > doc["result"]["ios"].as_u64(),
        "the mismatches of every repetition, not only the median run's: {v}"
    );
    assert_eq!(v["first"][0]["offset"], bad);
}
