//! End-to-end: the README's main command — `readlab` with no arguments — in a fresh directory.

use crate::common;
use common::*;

#[test]
fn bare_readlab_prepares_a_scratch_file_and_surveys_the_engines() {
    let d = disk_dir();
    let started = std::time::Instant::now();
    let o = bin().current_dir(d.path()).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        started.elapsed().as_secs() < 120,
        "the default job must finish in under 2 minutes"
    );
    let out = stdout(&o);
    for label in [
        "psync",
        "pvsync2",
        "libaio",
        "uring",
        "A32B1",
        "U32B1",
        "null",
        "PT",
        "IOPS",
        "readlab-quick.jsonl",
    ] {
        assert!(out.contains(label), "missing {label} in:\n{out}");
    }
    // It ends with the answer: a verdict naming the fastest configuration, the null engine apart.
    let verdict = &out[out.find("Verdict for ").expect("a verdict")..];
    for s in [
        "fastest",
        "lowest tail at QD1",
        "cheapest CPU per I/O",
        "recommended: balanced",
    ] {
        assert!(verdict.contains(s), "missing {s} in:\n{verdict}");
    }
    assert!(
        verdict.contains("Self-measurement, not ranked: null engine N"),
        "{verdict}"
    );
    let ranked: Vec<&str> = verdict
        .lines()
        .filter(|l| l.contains("fastest") || l.contains("recommended"))
        .collect();
    assert!(
        ranked.iter().all(|l| !l.contains(" null ")),
        "the null engine is never ranked: {ranked:?}"
    );
    assert!(d.path().join("readlab-scratch.dat").exists());
    let lines = std::fs::read_to_string(d.path().join("readlab-quick.jsonl")).unwrap();
    let docs: Vec<serde_json::Value> = lines
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(docs.len(), 7);
    for doc in &docs {
        assert!(doc["result"]["ios"].as_u64().unwrap() > 0);
        assert_eq!(doc["result"]["errors"]["count"], 0);
    }
    // A second run reuses the prepared file; `--output json` prints the runs alone (no race:
    // what is checked here is the output).
    let o = bin()
        .args([
            "quick",
            "--runtime",
            "1s",
            "--budget",
            "0",
            "--output",
            "json",
        ])
        .current_dir(d.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("reusing prepared"), "{}", stderr(&o));
    assert_eq!(json(&o).as_array().map(Vec::len), Some(7));
}
