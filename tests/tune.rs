//! End-to-end: `readlab tune` finishes within its budget with a table, the fio command and a
//! replayable profile, and says plainly when no configuration meets the constraints.

mod common;
use common::*;
use std::time::Instant;

#[test]
fn tune_within_budget_prints_the_table_and_a_replayable_profile() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "256M");
    let out = d.path().join("tune");
    let started = Instant::now();
    let o = run(&[
        "tune",
        "--budget",
        "30s",
        "--out",
        out.to_str().unwrap(),
        f.to_str().unwrap(),
    ]);
    let took = started.elapsed().as_secs_f64();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(took <= 35.0, "tune took {took:.1} s for a 30 s budget");
    let table = stdout(&o);
    for s in [
        // An aligned table (fitted to the terminal), not Markdown.
        "goal ",
        " queue size ",
        "(recommended)",
        "fio --name=readlab",
        "--ioengine=",
        "profile:",
        "Recommended:",
        // The finalists were re-measured (--repeat defaults to 3): medians and their intervals.
        "interleaved runs;",
        "intervals: IOPS",
    ] {
        assert!(table.contains(s), "missing '{s}' in:\n{table}");
    }
    // Several interfaces were searched, and every point is in the results store.
    let results = std::fs::read_to_string(out.join("results.jsonl")).unwrap();
    let engines: std::collections::HashSet<String> = results
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["config"]["engine"].to_string()
        })
        .collect();
    assert!(engines.len() >= 2, "{engines:?}");
    let profile = out.join("profile-4k.json");
    let p: serde_json::Value = serde_json::from_slice(&std::fs::read(&profile).unwrap()).unwrap();
    assert_eq!(p["schema"], "readlab.profile/1");
    let label = p["label"].as_str().unwrap().to_string();
    let o = run(&[
        "run",
        "--profile",
        profile.to_str().unwrap(),
        "--runtime",
        "1s",
        "--output",
        "json",
    ]);
    assert!(o.status.success(), "replay: {}", stderr(&o));
    let doc = json(&o);
    assert_eq!(doc["result"]["label"], label.as_str());
    assert_eq!(doc["config"]["engine"], p["config"]["engine"]);
}

#[test]
fn impossible_latency_target_is_said_plainly() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "64M");
    let out = d.path().join("tune");
    let o = run(&[
        "tune",
        "--budget",
        "12s",
        "--engines",
        "psync",
        "--p999-max",
        "1us",
        "--out",
        out.to_str().unwrap(),
        f.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("No configuration met the constraints p99.9 ≤ 1.0us"),
        "{text}"
    );
    assert!(
        text.contains("Closest points") && text.contains("p99.9"),
        "{text}"
    );
    assert!(!out.join("profile-4k.json").exists());
}

#[test]
fn bad_tune_input_is_exit_2() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "1M");
    for (args, needle) in [
        (
            vec!["tune", "--engines", "nope", f.to_str().unwrap()],
            "unknown engine",
        ),
        (
            vec!["tune", "--budget", "2s", f.to_str().unwrap()],
            "budget",
        ),
        (
            vec!["tune", "--bs", "2m", f.to_str().unwrap()],
            "larger than the range",
        ),
        (
            vec!["tune", "--cpu-max", "0", f.to_str().unwrap()],
            "cpu-max",
        ),
    ] {
        let o = run(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(needle), "{args:?}: {}", stderr(&o));
    }
    let o = run(&["run", "--profile", "/nonexistent.json"]);
    assert_eq!(o.status.code(), Some(2));
}

/// Issue 10 §3: the tuner never recommends a configuration for a target that returns wrong data:
/// it prints the totals and the first offset, writes no profile and exits 1; the failed runs are
/// stored, and the report shows them.
#[test]
fn a_target_returning_wrong_data_gets_no_recommendation() {
    let d = disk_dir();
    // 256 sectors, one of them wrong: every point of the search reads it many times.
    let f = prepare(d.path(), "f", "1M");
    let bad = (300 << 10) + 77u64;
    flip_byte(&f, bad);
    let out = d.path().join("tune");
    let o = run(&[
        "tune",
        "--budget",
        "10s",
        "--engines",
        "psync,libaio",
        "--out",
        out.to_str().unwrap(),
        f.to_str().unwrap(),
    ]);
    let err = stderr(&o);
    assert_mismatch_reported(&o, bad);
    assert!(err.contains("run(s) failed"), "{err}");
    assert!(err.contains("no configuration is recommended"), "{err}");
    assert!(!stdout(&o).contains("Recommended:"), "{}", stdout(&o));
    assert!(!out.join("profile-4k.json").exists());
    let o = run(&["report", out.to_str().unwrap(), "--format", "md", "-o", "-"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains(&format!("first mismatch at offset {bad}")),
        "{}",
        stdout(&o)
    );
}
