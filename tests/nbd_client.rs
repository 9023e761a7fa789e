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
