//! `readlab run --engine nbd` against real servers: nbdkit's memory, null and file plugins (the
//! file one over a prepared file, verified, and caught when a byte changes), and readlab serve in
//! both models; `readlab info nbd://…`; engines and targets that do not go together are refused.

mod common;
mod nbd_common;

use nbd_common::{nbdkit, readlab_serve};

fn run_nbd(url: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "run",
        "--engine",
        "nbd",
        "--runtime",
        "1s",
        "--output",
        "json",
        url,
    ];
    args.extend_from_slice(extra);
    common::run(&args)
}

fn ios(o: &std::process::Output) -> u64 {
    assert!(o.status.success(), "{}", common::stderr(o));
    let j = common::json(o);
    j[0]["result"]["latency"]["count"]
        .as_u64()
        .or_else(|| j["result"]["latency"]["count"].as_u64())
        .unwrap_or_else(|| panic!("no latency count in {j}"))
}

#[test]
fn reads_nbdkit_memory_and_null() {
    let dir = common::disk_dir();
    let mem = nbdkit(dir.path(), &["memory", "64M"]);
    assert!(ios(&run_nbd(&mem.url, &["--iodepth", "4", "--numjobs", "2"])) > 100);
    let null = nbdkit(dir.path(), &["null", "1G"]);
    assert!(ios(&run_nbd(&null.url, &["--iodepth", "16", "--bs", "64k"])) > 100);
}

#[test]
fn verifies_a_prepared_file_served_by_nbdkit_and_catches_a_changed_byte() {
    let dir = common::disk_dir();
    let f = common::prepare(dir.path(), "p.dat", "16M");
    let srv = nbdkit(dir.path(), &["file", f.to_str().unwrap()]);
    let o = run_nbd(&srv.url, &["--iodepth", "8", "--verify"]);
    let j = {
        assert!(o.status.success(), "{}", common::stderr(&o));
        common::json(&o)
    };
    let doc = if j.is_array() { &j[0] } else { &j };
    let v = &doc["result"]["verify"];
    assert!(v["checked_ios"].as_u64().unwrap() > 100, "{v}");
    assert_eq!(v["mismatches"], 0, "{v}");
    assert_eq!(doc["environment"]["target"]["kind"], "nbd");
    // The identity was learned from the data: change a byte and the read that covers it fails.
    let bad = 3 * 4096 + 100;
    common::flip_byte(&f, bad);
    let o = common::run(&[
        "run",
        "--engine",
        "nbd",
        "--rw",
        "read",
        "--size",
        "64k",
        "--io-limit",
        "64k",
        "--runtime",
        "5s",
        "--verify",
        "-q",
        &srv.url,
    ]);
    common::assert_mismatch_reported(&o, bad);
}

#[test]
fn reads_readlab_serve_in_both_models_verified() {
    let dir = common::disk_dir();
    let f = common::prepare(dir.path(), "p.dat", "32M");
    for model in [
        &["--model", "thread"][..],
        &["--model", "uring", "--threads", "2"],
    ] {
        let mut args = vec![f.to_str().unwrap()];
        args.extend_from_slice(model);
        let s = readlab_serve(&args);
        for extra in [
            &["--iodepth", "8", "--numjobs", "2", "--verify"][..],
            &["--bs", "1m", "--iodepth", "2", "--verify"],
            &["--bs", "512", "--buffered"],
        ] {
            let n = ios(&run_nbd(&s.url, extra));
            assert!(n > 50, "{model:?} {extra:?}: {n} reads");
        }
    }
    // The thread model with an asynchronous engine behind it.
    let s = readlab_serve(&[f.to_str().unwrap(), "--engine", "uring", "--iodepth", "8"]);
    assert!(ios(&run_nbd(&s.url, &["--iodepth", "8", "--verify"])) > 50);
}

#[test]
fn info_prints_what_the_server_advertised() {
    let s = readlab_serve(&["--null", "3m", "--export", "zeros"]);
    let url = format!("{}zeros", s.url);
    let o = common::run(&["info", &url]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let t = common::stdout(&o);
    for want in [
        "3145728 B",
        "read-only       true",
        "multi-conn      true",
        "maximum 33554432 B",
        "'zeros'",
        "NBD_OPT_GO",
    ] {
        assert!(t.contains(want), "no {want:?} in:\n{t}");
    }
    let o = common::run(&["info", "--output", "json", &url]);
    let j = common::json(&o);
    assert_eq!(j["export"]["size"], 3 << 20);
}

#[test]
fn engines_and_targets_that_do_not_go_together_are_refused() {
    let dir = common::disk_dir();
    let f = common::prepare(dir.path(), "p.dat", "1M");
    let s = readlab_serve(&["--null", "1m"]);
    let o = common::run(&["run", "--engine", "psync", "--runtime", "1s", "-q", &s.url]);
    assert_eq!(o.status.code(), Some(2), "{}", common::stderr(&o));
    assert!(common::stderr(&o).contains("--engine nbd"));
    let o = common::run(&[
        "run",
        "--engine",
        "nbd",
        "--runtime",
        "1s",
        "-q",
        f.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", common::stderr(&o));
    // Nobody listening: a clear error, not a hang.
    drop(s);
    let o = common::run(&[
        "run",
        "--engine",
        "nbd",
        "--runtime",
        "1s",
        "-q",
        "nbd+unix:///?socket=/nonexistent/x",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", common::stderr(&o));
    assert!(
        common::stderr(&o).contains("cannot reach"),
        "{}",
        common::stderr(&o)
    );
    let o = common::run(&["run", "--engine", "nbd", "-q", "nbd://host:notaport/"]);
    assert_eq!(o.status.code(), Some(2), "{}", common::stderr(&o));
}

/// Run the binary, killing it past `limit` (then the test fails: the client hung).
fn run_within(args: &[&str], limit: std::time::Duration) -> std::process::Output {
    use std::process::Stdio;
    let t = std::time::Instant::now();
    let mut child = common::bin()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start readlab");
    while child.try_wait().unwrap().is_none() {
        if t.elapsed() > limit {
            let _ = child.kill();
            let o = child.wait_with_output().unwrap();
            panic!(
                "readlab {args:?} still running after {limit:?}: {}",
                common::stderr(&o)
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// qemu-nbd with its defaults serves one client at a time (a second connection waits in its
/// accept queue, never greeted). A one-worker run holds exactly one connection, so it works; a
/// two-worker run needs two and says why it cannot have the second.
#[test]
fn qemu_nbd_with_its_defaults_serves_a_one_worker_run() {
    nbd_common::need("qemu-nbd");
    let dir = common::disk_dir();
    let f = common::prepare(dir.path(), "p.dat", "16M");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let pid = dir.path().join("qemu-nbd.pid");
    let child = std::process::Command::new("qemu-nbd")
        .args(["-r", "-f", "raw", "-t", "-b", "127.0.0.1", "-p"])
        .arg(port.to_string())
        .arg("--pid-file")
        .arg(&pid)
        .arg(&f)
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("start qemu-nbd");
    let _server = nbd_common::Server {
        child,
        url: format!("nbd://127.0.0.1:{port}/"),
        out: Vec::new(),
    };
    let t = std::time::Instant::now();
    while !pid.exists() {
        assert!(t.elapsed().as_secs() < 10, "qemu-nbd did not start");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let url = format!("nbd://127.0.0.1:{port}/");
    let limit = std::time::Duration::from_secs(30);
    let o = run_within(
        &[
            "run",
            "--engine",
            "nbd",
            "--runtime",
            "1s",
            "--threads",
            "1",
            "--iodepth",
            "4",
            "--verify",
            "--output",
            "json",
            &url,
        ],
        limit,
    );
    assert!(ios(&o) > 50);
    let o = run_within(
        &[
            "run",
            "--engine",
            "nbd",
            "--runtime",
            "1s",
            "--threads",
            "2",
            "-q",
            &url,
        ],
        limit,
    );
    let err = common::unwrapped(&common::stderr(&o));
    assert_eq!(o.status.code(), Some(1), "{err}");
    for want in [
        "connection 2 of the run",
        "sent no greeting within 10 s",
        "client limit",
        "-e N",
        "multi-conn",
        "--numjobs 1",
    ] {
        assert!(err.contains(want), "no {want:?} in: {err}");
    }
    // And the server still serves a one-worker run after (nothing was left open).
    let o = run_within(
        &[
            "run",
            "--engine",
            "nbd",
            "--runtime",
            "1s",
            "--output",
            "json",
            &url,
        ],
        limit,
    );
    assert!(ios(&o) > 50);
}

/// nbdkit's blocksize-policy filter advertises a minimum of 4 KiB and a maximum of 64 KiB and
/// refuses (EINVAL) what is outside: readlab refuses such a --bs before the run, with the
/// server's numbers (exit 2), and reads within them.
#[test]
fn block_sizes_the_server_advertises_are_honoured() {
    let dir = common::disk_dir();
    let f = common::prepare(dir.path(), "p.dat", "16M");
    let srv = nbdkit(
        dir.path(),
        &[
            "--filter=blocksize-policy",
            "file",
            f.to_str().unwrap(),
            "blocksize-minimum=4096",
            "blocksize-maximum=65536",
            "blocksize-error-policy=error",
        ],
    );
    let limit = std::time::Duration::from_secs(30);
    for (extra, want) in [
        (
            &["--bs", "128k"][..],
            &[
                "--bs 131072 B is larger than the server accepts",
                "maximum 65536 B",
            ][..],
        ),
        (
            &["--bs", "128k", "--buffered"],
            &["larger than the server accepts"],
        ),
        (
            &["--bs", "512", "--buffered"],
            &[
                "not a multiple of the server's minimum block size",
                "minimum 4096 B",
            ],
        ),
        (
            &["--bs", "4k", "--offset", "512"],
            &["--offset 512 is not a multiple", "minimum 4096 B"],
        ),
    ] {
        let mut args = vec!["run", "--engine", "nbd", "--runtime", "1s", "-q", &srv.url];
        args.extend_from_slice(extra);
        let o = run_within(&args, limit);
        let err = common::unwrapped(&common::stderr(&o));
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {err}");
        for w in want {
            assert!(err.contains(w), "{extra:?}: no {w:?} in: {err}");
        }
        assert!(!err.contains("O_DIRECT"), "{err}");
    }
    for bs in ["4k", "64k"] {
        let o = run_within(
            &[
                "run",
                "--engine",
                "nbd",
                "--runtime",
                "1s",
                "--bs",
                bs,
                "--iodepth",
                "4",
                "--verify",
                "--output",
                "json",
                &srv.url,
            ],
            limit,
        );
        assert!(ios(&o) > 20, "{bs}");
    }
}

/// A deep queue against readlab serve (both models) completes: the client reads replies while
/// its requests wait to go out. A depth beyond what one connection keeps is refused.
#[test]
fn a_deep_client_never_deadlocks_and_an_absurd_depth_is_refused() {
    let s = readlab_serve(&["--null", "256m"]);
    let u = readlab_serve(&["--null", "256m", "--model", "uring"]);
    let limit = std::time::Duration::from_secs(40);
    for url in [&s.url, &u.url] {
        let o = run_within(
            &[
                "run",
                "--engine",
                "nbd",
                "--runtime",
                "1s",
                "--iodepth",
                "4096",
                "--batch",
                "4096",
                "--bs",
                "16k",
                "--output",
                "json",
                url,
            ],
            limit,
        );
        assert!(ios(&o) > 4096, "{url}");
    }
    let o = run_within(
        &[
            "run",
            "--engine",
            "nbd",
            "--runtime",
            "1s",
            "--iodepth",
            "20000",
            "--bs",
            "4k",
            "-q",
            &s.url,
        ],
        limit,
    );
    assert_eq!(o.status.code(), Some(2), "{}", common::stderr(&o));
    assert!(common::unwrapped(&common::stderr(&o)).contains("more --numjobs"));
}
