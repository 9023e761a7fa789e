//! End-to-end: the libaio engine takes completions that are already in the kernel's ring from
//! user space, so a queue kept full costs one system call per read (io_submit), not two; and
//! every byte read that way is still verified. Counted with strace on the real binary, on a
//! loop device with O_DIRECT (completions arrive while readlab works) and on a buffered file
//! (io_submit completes the reads before it returns).

mod common;
use common::*;
use std::collections::BTreeMap;

/// Calls of each system call strace counted (`strace -c` table) for `readlab ARGS`.
fn syscalls(dir: &std::path::Path, args: &[&str]) -> (serde_json::Value, BTreeMap<String, u64>) {
    let counts = dir.join("strace.txt");
    let json = dir.join("run.json");
    let o = std::process::Command::new("strace")
        .args(["-f", "-c", "-e", "trace=io_submit,io_getevents", "-o"])
        .arg(&counts)
        .arg(env!("CARGO_BIN_EXE_readlab"))
        .args(args)
        .arg("--json")
        .arg(&json)
        .arg("-q")
        .output()
        .expect("strace is installed by scripts/test-deps");
    assert!(o.status.success(), "{}", stderr(&o));
    let mut calls = BTreeMap::new();
    for line in std::fs::read_to_string(&counts).unwrap().lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        // % time, seconds, usecs/call, calls, [errors], syscall
        if let (Some(name), Some(n)) = (f.last(), f.get(3))
            && name.starts_with("io_")
            && let Ok(n) = n.parse::<u64>()
        {
            calls.insert(name.to_string(), n);
        }
    }
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    (doc, calls)
}

fn check(what: &str, doc: &serde_json::Value, calls: &BTreeMap<String, u64>) {
    let r = &doc["result"];
    assert_eq!(r["errors"]["count"], 0, "{what}: {}", r["errors"]);
    assert_eq!(r["verify"]["mismatches"], 0, "{what}: {}", r["verify"]);
    let ios = r["ios"].as_u64().unwrap();
    assert!(ios >= 2000, "{what}: {ios} I/Os");
    assert!(
        engine_features(r).contains(&"user-space reap"),
        "{what}: {}",
        r["engine_features"]
    );
    let submits = calls.get("io_submit").copied().unwrap_or(0);
    let waits = calls.get("io_getevents").copied().unwrap_or(0);
    assert!(
        submits >= ios / 2,
        "{what}: {submits} io_submit for {ios} reads: {calls:?}"
    );
    // Before, each reap was an io_getevents: as many as the reads.
    assert!(
        waits * 4 < submits,
        "{what}: {waits} io_getevents against {submits} io_submit: {calls:?}"
    );
}

/// A verified libaio run at `depth` of `limit` bytes on `target` (`--direct` or `--buffered`).
fn libaio(
    dir: &std::path::Path,
    depth: &str,
    limit: &str,
    mode: &str,
    target: &str,
) -> (serde_json::Value, BTreeMap<String, u64>) {
    syscalls(
        dir,
        &[
            "run",
            "--engine",
            "libaio",
            "--iodepth",
            depth,
            "--runtime",
            "10s",
            "--io-limit",
            limit,
            "--verify",
            mode,
            target,
        ],
    )
}

#[test]
fn a_full_queue_reaps_from_the_ring_without_a_system_call() {
    let d = disk_dir();
    let lo = LoopDev::prepared("64M");
    let (doc, calls) = libaio(d.path(), "32", "40M", "--direct", &lo.dev);
    check("loop device, O_DIRECT", &doc, &calls);

    let f = prepare(d.path(), "f", "16M");
    let (doc, calls) = libaio(d.path(), "8", "16M", "--buffered", f.to_str().unwrap());
    check("buffered file", &doc, &calls);
}
