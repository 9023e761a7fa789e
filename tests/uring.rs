//! End-to-end: the `uring` engine through the real binary, every feature on a real file and on a
//! loop device, with every byte verified. This kernel (6.18) takes every feature readlab asks for
//! except COOP_TASKRUN with SQPOLL: a feature missing from `engine_features` fails here.

mod common;
use common::*;
use std::time::{Duration, Instant};

const FULL: [&str; 5] = [
    "COOP_TASKRUN",
    "SINGLE_ISSUER",
    "DEFER_TASKRUN",
    "NO_SQARRAY",
    "REGISTERED_RING_FD",
];
const SQPOLL: [&str; 4] = [
    "SQPOLL",
    "SINGLE_ISSUER",
    "NO_SQARRAY",
    "REGISTERED_RING_FD",
];
const SQPOLL_FIXED: [&str; 6] = [
    "SQPOLL",
    "FIXED_FILES",
    "FIXED_BUFFERS",
    "SINGLE_ISSUER",
    "NO_SQARRAY",
    "REGISTERED_RING_FD",
];

struct Case {
    args: &'static [&'static str],
    label: &'static str,
    features: Vec<&'static str>,
}

fn with(prefix: &[&'static str], rest: &[&'static str]) -> Vec<&'static str> {
    [prefix, rest].concat()
}

fn cases() -> Vec<Case> {
    let c = |args, label, features| Case {
        args,
        label,
        features,
    };
    vec![
        c(&["--iodepth", "32"], "U32B1", FULL.to_vec()),
        c(
            &["--iodepth", "32", "--fixed-files"],
            "U32B1F",
            with(&["FIXED_FILES"], &FULL),
        ),
        c(
            &["--iodepth", "32", "--fixed-bufs"],
            "U32B1M",
            with(&["FIXED_BUFFERS"], &FULL),
        ),
        c(
            &["--iodepth", "32", "--fixed-files", "--fixed-bufs"],
            "U32B1MF",
            with(&["FIXED_FILES", "FIXED_BUFFERS"], &FULL),
        ),
        c(&["--iodepth", "32", "--sqpoll"], "U32B1S", SQPOLL.to_vec()),
        c(
            &[
                "--iodepth",
                "32",
                "--sqpoll",
                "--fixed-files",
                "--fixed-bufs",
            ],
            "U32B1MFS",
            SQPOLL_FIXED.to_vec(),
        ),
        c(
            &[
                "--iodepth",
                "32",
                "--sqpoll",
                "--fixed-files",
                "--fixed-bufs",
                "--numjobs",
                "2",
            ],
            "U32B1MFST2",
            SQPOLL_FIXED.to_vec(),
        ),
        c(&["--batch", "4", "--iodepth", "16"], "U16B4", FULL.to_vec()),
        c(
            &["--iodepth", "32", "--batch", "4", "--complete-min", "4"],
            "U32B4",
            FULL.to_vec(),
        ),
        c(
            &["--iodepth", "4", "--blocks-per-request", "8"],
            "U4B1×8",
            FULL.to_vec(),
        ),
        c(
            &["--iodepth", "32", "--numjobs", "2"],
            "U32B1T2",
            FULL.to_vec(),
        ),
        c(&["--iodepth", "32", "--buffered"], "U32B1", FULL.to_vec()),
        c(&["--iodepth", "32", "--plain-setup"], "U32B1L", vec![]),
    ]
}

/// Run every case against `target` with --verify and check what it reports.
fn every_feature_reads(target: &str) {
    for case in cases() {
        let mut args = vec![
            "run",
            "--engine",
            "uring",
            "--runtime",
            "1s",
            "--verify",
            "--output",
            "json",
            "-q",
            target,
        ];
        args.extend_from_slice(case.args);
        let o = run(&args);
        assert!(o.status.success(), "{:?}: {}", case.args, stderr(&o));
        let doc = json(&o);
        let r = &doc["result"];
        let what = format!("{:?} on {target}: {r}", case.args);
        assert_eq!(r["label"], case.label, "{what}");
        assert_eq!(engine_features(r), case.features, "{what}");
        let ios = r["ios"].as_u64().unwrap();
        assert!(ios > 100, "{what}");
        assert_eq!(r["errors"]["count"], 0, "{what}");
        assert_eq!(r["verify"]["mismatches"], 0, "{what}");
        assert!(
            r["verify"]["checked_ios"].as_u64().unwrap() >= ios,
            "{what}"
        );
        if case.args.contains(&"--blocks-per-request") {
            assert_eq!(ios, r["requests"].as_u64().unwrap() * 8, "{what}");
        }
        let sqpoll_threads = r["cpu"]["sqpoll"]["threads"].as_u64().unwrap();
        if case.args.contains(&"--sqpoll") {
            let jobs = if case.args.contains(&"--numjobs") {
                2
            } else {
                1
            };
            assert_eq!(sqpoll_threads, jobs, "{what}");
        } else {
            assert_eq!(sqpoll_threads, 0, "{what}");
        }
    }
}

#[test]
fn every_feature_reads_a_real_file() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "64M");
    every_feature_reads(f.to_str().unwrap());
}

#[test]
fn every_feature_reads_a_loop_device() {
    let lo = LoopDev::prepared("64M");
    every_feature_reads(&lo.dev);
}

#[test]
fn a_flipped_byte_is_caught() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "16M");
    let target = (5 << 20) + 1234u64;
    flip_byte(&f, target);
    for extra in [
        &["--iodepth", "8"][..],
        &["--iodepth", "8", "--fixed-bufs", "--fixed-files"],
        &["--iodepth", "8", "--sqpoll", "--fixed-bufs"],
        &["--iodepth", "8", "--buffered"],
    ] {
        let mut args = vec![
            "run",
            "--engine",
            "uring",
            "--verify",
            "--runtime",
            "1s",
            "--offset",
            "5m",
            "--size",
            "64k",
            "-q",
            f.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let o = run(&args);
        assert_mismatch_reported(&o, target);
    }
}

#[test]
fn the_sqpoll_thread_cpu_is_reported() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "64M");
    let o = run(&[
        "run",
        "--engine",
        "uring",
        "--sqpoll",
        "--iodepth",
        "16",
        "--runtime",
        "2s",
        "--output",
        "json",
        "-q",
        f.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = json(&o);
    let sq = &doc["result"]["cpu"]["sqpoll"];
    assert!(sq["threads"].as_u64().unwrap() >= 1, "{sq}");
    // The poll thread spins while there is work: most of a core.
    let pct = sq["pct_of_core"].as_f64().unwrap();
    assert!(pct > 50.0, "sq-poll thread used {pct}% of a core: {sq}");
    assert!(sq["total_s"].as_f64().unwrap() > 1.0, "{sq}");
    assert_eq!(doc["result"]["label"], "U16B1S");
}

#[test]
fn iopoll_without_poll_queues_is_refused_up_front() {
    let lo = LoopDev::prepared("16M");
    let started = Instant::now();
    let o = run(&[
        "run",
        "--engine",
        "uring",
        "--iopoll",
        "--iodepth",
        "8",
        "--runtime",
        "1s",
        "-q",
        &lo.dev,
    ]);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("poll queues"), "{}", stderr(&o));
    assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
}

#[test]
fn registered_buffers_over_the_memlock_limit_say_what_to_do() {
    assert!(
        is_root(),
        "this test drops CAP_IPC_LOCK from a root process"
    );
    let d = disk_dir();
    let f = prepare(d.path(), "f", "16M");
    // 64 × 64 KiB = 4 MiB of registered buffers.
    let args = [
        "run",
        "--engine",
        "uring",
        "--fixed-bufs",
        "--iodepth",
        "64",
        "--bs",
        "64k",
        "--runtime",
        "1s",
        "-q",
        f.to_str().unwrap(),
    ];
    // Without CAP_IPC_LOCK and with a 1 MiB RLIMIT_MEMLOCK.
    let o = std::process::Command::new("prlimit")
        .args([
            "--memlock=1048576:1048576",
            "setpriv",
            "--bounding-set",
            "-ipc_lock",
        ])
        .arg(env!("CARGO_BIN_EXE_readlab"))
        .args(args)
        .output()
        .expect("prlimit and setpriv (util-linux)");
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    for needle in ["RLIMIT_MEMLOCK", "1024 KiB", "ulimit -l", "--fixed-bufs"] {
        assert!(err.contains(needle), "missing {needle:?} in: {err}");
    }
    assert!(!err.contains("panicked"), "{err}");
    // Root (CAP_IPC_LOCK) is not limited: 16 MiB, twice the default 8 MiB limit.
    let mut big = args.to_vec();
    big[5] = "256";
    let o = run(&big);
    assert!(o.status.success(), "{}", stderr(&o));
}
