//! End-to-end: studies run as one command, write results.jsonl and summary.md, survive SIGINT
//! with --resume, and the scheduler study restores the device's scheduler.

use crate::common;
use common::*;
use std::collections::HashSet;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

fn lines(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("unparseable line ({e}): {l}")))
        .collect()
}

fn point_key(v: &serde_json::Value) -> String {
    format!("{}|{}", v["study"], v["config"])
}

fn study(args: &[&str]) -> std::process::Output {
    let o = run(args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    o
}

fn check_outputs(out: &Path, name: &str, min_points: usize) -> Vec<serde_json::Value> {
    let docs = lines(&out.join("results.jsonl"));
    assert!(docs.len() >= min_points, "{name}: {} points", docs.len());
    for d in &docs {
        assert_eq!(d["study"]["study"], name);
        assert!(d["result"]["ios"].as_u64().unwrap() > 0, "{d}");
        assert_eq!(d["result"]["errors"]["count"], 0);
    }
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(summary.contains(&format!("## {name}")), "{summary}");
    // One line per point in the summary's point list.
    let rows = summary
        .lines()
        .filter(|l| l.starts_with("| ") && l.contains(" | ") && !l.starts_with("| label"))
        .count();
    assert!(
        rows >= docs.len(),
        "{rows} rows for {} points:\n{summary}",
        docs.len()
    );
    docs
}

#[test]
fn latency_and_threads_quick_studies() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "64M");
    let out = d.path().join("lat");
    let o = study(&[
        "study",
        "latency",
        "--quick",
        "--runtime",
        "300ms",
        "--out",
        out.to_str().unwrap(),
        f.to_str().unwrap(),
    ]);
    // stdout says where the summary is; the summary holds the tables.
    assert!(stdout(&o).contains("summary.md"), "{}", stdout(&o));
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(summary.contains("single-read latency"), "{summary}");
    let docs = check_outputs(&out, "latency", 8);
    let engines: HashSet<String> = docs
        .iter()
        .map(|d| d["config"]["engine"].to_string())
        .collect();
    assert_eq!(engines.len(), 2, "pread and preadv2");
    // Block sizes that do not fit a quarter of the target are left out.
    assert!(
        docs.iter()
            .all(|d| d["config"]["bs"].as_u64().unwrap() <= 16 << 20)
    );

    let out = d.path().join("thr");
    study(&[
        "study",
        "threads",
        "--quick",
        "--runtime",
        "300ms",
        "--max-threads",
        "4",
        "--out",
        out.to_str().unwrap(),
        f.to_str().unwrap(),
    ]);
    let docs = check_outputs(&out, "threads", 6);
    let threads: HashSet<u64> = docs
        .iter()
        .map(|d| d["config"]["threads"].as_u64().unwrap())
        .collect();
    assert_eq!(threads, HashSet::from([1, 2, 4]));
    assert!(
        std::fs::read_to_string(out.join("summary.md"))
            .unwrap()
            .contains("threads × block size")
    );
}

#[test]
fn an_existing_store_needs_resume() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "16M");
    let out = d.path().join("o");
    study(&[
        "study",
        "stream",
        "--quick",
        "--runtime",
        "300ms",
        "--out",
        out.to_str().unwrap(),
        f.to_str().unwrap(),
    ]);
    let o = run(&[
        "study",
        "stream",
        "--quick",
        "--runtime",
        "300ms",
        "--out",
        out.to_str().unwrap(),
        f.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--resume"), "{}", stderr(&o));
    // Resuming a finished study measures nothing new.
    let before = lines(&out.join("results.jsonl")).len();
    let o = study(&[
        "study",
        "stream",
        "--quick",
        "--runtime",
        "300ms",
        "--resume",
        "--out",
        out.to_str().unwrap(),
        f.to_str().unwrap(),
    ]);
    assert!(stderr(&o).contains("0 points measured"), "{}", stderr(&o));
    assert_eq!(lines(&out.join("results.jsonl")).len(), before);
    let o = run(&["study", "nonsense", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("unknown study"));
}

fn signal_after(
    child: &mut Child,
    results: &Path,
    points: usize,
    limit: Duration,
    sig: rustix::process::Signal,
) {
    let start = Instant::now();
    while lines(results).len() < points {
        assert!(
            start.elapsed() < limit,
            "no {points} points within {limit:?}"
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "study ended before SIGINT"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(300)); // inside the next point
    rustix::process::kill_process(rustix::process::Pid::from_child(child), sig).unwrap();
}

/// Start a study, SIGINT it once `points` points are stored, and check it exits 130.
fn interrupt_study(args: &[&str], out: &Path, points: usize) {
    signal_study(args, out, points, rustix::process::Signal::INT, 130)
}

/// Start a study, send `sig` once `points` points are stored, and check it exits with `code`.
fn signal_study(args: &[&str], out: &Path, points: usize, sig: rustix::process::Signal, code: i32) {
    let mut child = bin()
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    signal_after(
        &mut child,
        &out.join("results.jsonl"),
        points,
        Duration::from_secs(60),
        sig,
    );
    let o = child.wait_with_output().unwrap();
    assert_eq!(
        o.status.code(),
        Some(code),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn sigint_then_resume_loses_and_duplicates_nothing() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "32M");
    let out = d.path().join("o");
    let args = [
        "study",
        "threads",
        "--quick",
        "--max-threads",
        "8",
        "--out",
        out.to_str().unwrap(),
        f.to_str().unwrap(),
    ];
    interrupt_study(&args, &out, 2);
    let partial = lines(&out.join("results.jsonl"));
    assert!(
        partial.len() >= 2 && partial.len() < 8,
        "{} points after SIGINT",
        partial.len()
    );
    assert!(out.join("summary.md").exists());

    let o = study(&[
        "study",
        "threads",
        "--quick",
        "--max-threads",
        "8",
        "--resume",
        "--out",
        out.to_str().unwrap(),
        f.to_str().unwrap(),
    ]);
    assert!(stderr(&o).contains("already done"), "{}", stderr(&o));
    let all = lines(&out.join("results.jsonl"));
    assert_eq!(all.len(), 8, "4 thread counts × 2 block sizes");
    let keys: HashSet<String> = all.iter().map(point_key).collect();
    assert_eq!(keys.len(), all.len(), "duplicated points");
    for p in &partial {
        assert!(keys.contains(&point_key(p)), "lost a point");
    }
}

fn scheduler_of(dev: &str) -> String {
    let name = dev.trim_start_matches("/dev/");
    std::fs::read_to_string(format!("/sys/block/{name}/queue/scheduler")).unwrap()
}

#[test]
fn scheduler_study_switches_and_restores_even_after_sigint_or_sigterm() {
    let lo = LoopDev::prepared("32M");
    let before = scheduler_of(&lo.dev);
    let d = disk_dir();
    let out = d.path().join("s");
    let o = study(&[
        "study",
        "scheduler",
        "--quick",
        "--max-threads",
        "2",
        "--out",
        out.to_str().unwrap(),
        &lo.dev,
    ]);
    assert_eq!(scheduler_of(&lo.dev), before, "scheduler not restored");
    let docs = check_outputs(&out, "scheduler", 4);
    let mut seen = HashSet::new();
    for doc in &docs {
        // Each point ran under the scheduler it is tagged with.
        assert_eq!(
            doc["environment"]["device"]["scheduler"], doc["study"]["scheduler"],
            "{}",
            doc["study"]
        );
        seen.insert(doc["study"]["scheduler"].as_str().unwrap().to_string());
    }
    let offered = before.split_whitespace().count();
    assert_eq!(seen.len(), offered, "one sweep per scheduler in '{before}'");
    assert!(stdout(&o).contains("Summary tables:"), "{}", stdout(&o));
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(summary.contains("scheduler"), "{summary}");

    // Interrupted halfway, it still puts the original back.
    let out = d.path().join("s2");
    interrupt_study(
        &[
            "study",
            "scheduler",
            "--quick",
            "--max-threads",
            "2",
            "--out",
            out.to_str().unwrap(),
            &lo.dev,
        ],
        &out,
        3,
    );
    assert_eq!(
        scheduler_of(&lo.dev),
        before,
        "scheduler not restored after SIGINT"
    );
    // SIGTERM is handled the same way (issue 10 §3: it used to leave the scheduler changed).
    let out = d.path().join("s3");
    signal_study(
        &[
            "study",
            "scheduler",
            "--quick",
            "--max-threads",
            "2",
            "--out",
            out.to_str().unwrap(),
            &lo.dev,
        ],
        &out,
        2,
        rustix::process::Signal::TERM,
        143,
    );
    assert_eq!(
        scheduler_of(&lo.dev),
        before,
        "scheduler not restored after SIGTERM"
    );
}

#[test]
fn queue_and_multiblock_quick_studies() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "64M");
    let out = d.path().join("q");
    let o = study(&[
        "study",
        "queue",
        "--quick",
        "--runtime",
        "300ms",
        "--out",
        out.to_str().unwrap(),
        f.to_str().unwrap(),
    ]);
    assert!(stdout(&o).contains("Summary tables:"), "{}", stdout(&o));
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(
        summary.contains("queue size × interface and threads"),
        "{summary}"
    );
    let docs = check_outputs(&out, "queue", 16);
    let labels: HashSet<String> = docs
        .iter()
        .map(|d| d["result"]["label"].as_str().unwrap().to_string())
        .collect();
    for l in ["A1B1", "A64B1", "U16B1T2", "U4B1"] {
        assert!(labels.contains(l), "{l} missing from {labels:?}");
    }
    let out = d.path().join("m");
    study(&[
        "study",
        "multiblock",
        "--quick",
        "--runtime",
        "300ms",
        "--out",
        out.to_str().unwrap(),
        f.to_str().unwrap(),
    ]);
    let docs = check_outputs(&out, "multiblock", 12);
    for d in &docs {
        let r = &d["result"];
        let n = d["config"]["blocks_per_request"].as_u64().unwrap();
        assert_eq!(
            r["ios"].as_u64().unwrap(),
            n * r["requests"].as_u64().unwrap()
        );
    }
    // Latency per request grows with the blocks in it for pread (one after another).
    let p50 = |engine: &str, n: u64| {
        docs.iter()
            .find(|d| d["config"]["engine"] == engine && d["config"]["blocks_per_request"] == n)
            .map(|d| d["result"]["latency"]["p50_ns"].as_f64().unwrap())
            .unwrap()
    };
    assert!(p50("psync", 64) > 10.0 * p50("psync", 1));
    // Submitted together, 64 blocks cost far less than 64 reads in a row.
    assert!(p50("uring", 64) < p50("psync", 64));
}

/// Issue 10 §3: a study whose reads return wrong data prints the totals and the first offset and
/// exits 1 (it used to exit 0 and say nothing), and the report of its results shows the failures.
#[test]
fn a_study_that_reads_wrong_data_fails_and_says_where() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "16M");
    let bad = (5 << 20) + 1234u64;
    flip_byte(&f, bad);
    let out = d.path().join("lat");
    let o = run(&[
        "study",
        "latency",
        "--quick",
        "--runtime",
        "300ms",
        "--out",
        out.to_str().unwrap(),
        f.to_str().unwrap(),
    ]);
    let err = stderr(&o);
    assert_mismatch_reported(&o, bad);
    assert!(err.contains("run(s) failed"), "{err}");
    assert!(err.contains("verification mismatch(es)"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    // The points' warnings are printed, also when stderr is not a terminal (a 300 ms point of 4 MiB
    // reads cannot have the samples p99.9 needs): each once, at the first point that said it.
    assert!(
        err.contains("readlab: warning: psync P ") && err.contains("too few samples for the tail"),
        "{err}"
    );
    // Every point is stored, and the report marks the failed ones with their offset.
    let docs = lines(&out.join("results.jsonl"));
    assert!(
        docs.iter()
            .any(|d| d["result"]["verify"]["mismatches"].as_u64() > Some(0)),
        "no mismatch stored"
    );
    let o = run(&["report", out.to_str().unwrap(), "--format", "md", "-o", "-"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let md = stdout(&o);
    assert!(
        md.contains("FAILED") && md.contains(&format!("first mismatch at offset {bad}")),
        "{md}"
    );
}

#[test]
fn study_repeat_stores_the_median_of_each_point_with_its_interval() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "1M");
    let out = d.path().join("rep");
    study(&[
        "study",
        "stream",
        "--quick",
        "--runtime",
        "300ms",
        "--repeat",
        "2",
        "--out",
        out.to_str().unwrap(),
        f.to_str().unwrap(),
    ]);
    let docs = check_outputs(&out, "stream", 2);
    for doc in &docs {
        let rep = &doc["result"]["repeat"];
        assert_eq!(rep["runs"], 2, "{rep}");
        let i = &rep["iops"];
        let (lo, m, hi) = (
            i["lo"].as_f64().unwrap(),
            i["median"].as_f64().unwrap(),
            i["hi"].as_f64().unwrap(),
        );
        assert!(lo <= m && m <= hi, "{i}");
        // Stored under the plan's own configuration, so --resume finds it.
        assert_eq!(doc["config"]["seed"], 1, "{}", doc["config"]);
    }
    let o = study(&[
        "study",
        "stream",
        "--quick",
        "--runtime",
        "300ms",
        "--repeat",
        "2",
        "--resume",
        "--out",
        out.to_str().unwrap(),
        f.to_str().unwrap(),
    ]);
    assert!(stderr(&o).contains("0 points measured"), "{}", stderr(&o));
}
