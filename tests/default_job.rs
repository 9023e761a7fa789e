//! End-to-end: the README's main command — `readlab` with no arguments — in a fresh directory.

mod common;
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
    // A second run reuses the prepared file.
    let o = bin()
        .args(["quick", "--runtime", "1s"])
        .current_dir(d.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("reusing prepared"), "{}", stderr(&o));
}
