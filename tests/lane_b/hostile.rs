//! End-to-end (issue 10 §3): a battery of hostile invocations — absurd durations, counts, sizes
//! and memory, outputs aimed at inputs, targets that are not targets, flags that do not exist —
//! each run with a time limit. Every one must end in time with its exit code (2 for bad input),
//! one line on stderr naming the problem, no panic, nothing on stdout, and every file around it
//! exactly as it was (no file created, changed or removed).

use crate::common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

/// Every invocation must end within this (they all fail before any I/O, or after a 1 ns run).
const LIMIT: Duration = Duration::from_secs(30);

/// Run readlab in `cwd` (so default output directories would land there, and be seen), killing
/// it and failing if it outlives [`LIMIT`].
fn run_bounded(cwd: &Path, args: &[String]) -> Output {
    readlab_within(cwd, args, LIMIT)
}

struct Case {
    args: Vec<String>,
    code: i32,
    /// Text the error must contain (case-insensitive).
    needle: &'static str,
}

fn case(args: &[&str], code: i32, needle: &'static str) -> Case {
    Case {
        args: args.iter().map(|s| s.to_string()).collect(),
        code,
        needle,
    }
}

fn check(cwd: &Path, c: &Case) {
    let o = run_bounded(cwd, &c.args);
    let err = stderr(&o);
    let args = &c.args;
    assert_eq!(
        o.status.code(),
        Some(c.code),
        "{args:?}: exit code; stderr: {err}"
    );
    assert!(
        !err.contains("panicked") && !err.contains("RUST_BACKTRACE") && !err.contains("backtrace"),
        "{args:?} panicked: {err}"
    );
    assert!(
        err.to_lowercase().contains(&c.needle.to_lowercase()),
        "{args:?}: expected '{}' in: {err}",
        c.needle
    );
    if c.code == 2 {
        assert_eq!(err.lines().count(), 1, "{args:?}: not one line: {err}");
        assert!(err.starts_with("readlab: "), "{args:?}: {err}");
        assert!(
            stdout(&o).is_empty(),
            "{args:?} printed to stdout: {}",
            stdout(&o)
        );
    }
}

/// A results directory holding the stored small fixture.
fn results_dir(dir: &Path) -> PathBuf {
    let r = dir.join("results");
    std::fs::create_dir(&r).unwrap();
    std::fs::copy(
        "tests/fixtures/results-small.jsonl",
        r.join("results.jsonl"),
    )
    .unwrap();
    r
}

#[test]
fn a_battery_of_hostile_invocations_harms_nothing() {
    let d = disk_dir();
    let dir = d.path();
    let f = prepare(dir, "f", "4M");
    let foreign = dir.join("precious");
    std::fs::write(&foreign, vec![0x42u8; 1 << 20]).unwrap();
    let results = results_dir(dir);
    let sub = dir.join("sub");
    std::fs::create_dir(&sub).unwrap();
    let fifo = dir.join("fifo");
    let o = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .output()
        .expect("mkfifo (coreutils)");
    assert!(o.status.success(), "mkfifo: {}", stderr(&o));
    let bad_json = dir.join("bad.json");
    std::fs::write(&bad_json, "{").unwrap();
    let huge_ramp = dir.join("profile-huge.json");
    profile(&huge_ramp, &f, |c| c["ramp"] = 1e13.into());
    let many_threads = dir.join("profile-threads.json");
    profile(&many_threads, &f, |c| c["threads"] = 100_000.into());
    // Prepared, then grown with data readlab did not write.
    let grown = prepare(dir, "grown", "1M");
    {
        use std::io::Write;
        let mut g = std::fs::OpenOptions::new()
            .append(true)
            .open(&grown)
            .unwrap();
        g.write_all(&vec![0u8; 1 << 20]).unwrap();
    }
    let missing = dir.join("missing");
    let no_dir = dir.join("no-such-dir").join("x");
    let fresh = dir.join("fresh");

    let s = |p: &Path| p.to_str().unwrap().to_string();
    let (f, foreign, results, sub, fifo) = (s(&f), s(&foreign), s(&results), s(&sub), s(&fifo));
    let (bad_json, huge_ramp, many_threads) = (s(&bad_json), s(&huge_ramp), s(&many_threads));
    let (missing, no_dir, fresh, grown) = (s(&missing), s(&no_dir), s(&fresh), s(&grown));
    let in_results = format!("{results}/results.jsonl");
    let huge = "300000000000y";
    let long = "longer than readlab allows";

    let cases = vec![
        // Durations beyond any sense: refused by the parser, never an overflow or a hang.
        case(&["run", "--runtime", huge, &f], 2, long),
        case(&["run", "--ramp", huge, &f], 2, long),
        case(&["run", "--runtime", "1e300", &f], 2, long),
        case(
            &["run", "--stop-when-stable", "--min-runtime", huge, &f],
            2,
            long,
        ),
        case(
            &[
                "run",
                "--engine",
                "uring",
                "--sqpoll",
                "--sqpoll-idle",
                huge,
                &f,
            ],
            2,
            long,
        ),
        case(&["tune", "--budget", huge, &f], 2, long),
        case(&["tune", "--p999-max", huge, &f], 2, long),
        case(&["quick", "--runtime", huge], 2, long),
        case(&["run", "--profile", &huge_ramp], 2, long),
        // Threads and memory beyond the machine: refused up front.
        case(
            &["run", "--engine", "pool", "--pool-threads", "100000", &f],
            2,
            "at most 4096",
        ),
        case(
            &["run", "--engine", "pool", "--iodepth", "5000", &f],
            2,
            "at most 4096",
        ),
        case(
            &["run", "--numjobs", "100000", &f],
            2,
            "--numjobs must be at most",
        ),
        case(
            &["run", "--profile", &many_threads],
            2,
            "--numjobs must be at most",
        ),
        case(
            &["study", "threads", "--max-threads", "100000", &f],
            2,
            "at most 4096",
        ),
        case(
            &[
                "run",
                "--engine",
                "uring",
                "--iodepth",
                "4096",
                "--numjobs",
                "4096",
                "--bs",
                "512",
                &f,
            ],
            2,
            "of memory",
        ),
        case(
            &["run", "--numjobs", "99999999999999999999999", &f],
            2,
            "too large",
        ),
        case(
            &[
                "run",
                "--engine",
                "libaio",
                "--iodepth",
                "18446744073709551615",
                &f,
            ],
            2,
            "too large",
        ),
        // Sizes, offsets and counts out of range.
        case(
            &["run", "--bs", "18446744073709551615", &f],
            2,
            "outside 512 B",
        ),
        case(&["run", "--bs", "1e300", &f], 2, "cannot parse size"),
        case(
            &["run", "--offset", "18446744073709551615", &f],
            2,
            "offset",
        ),
        case(&["run", "--size", "99999t", &f], 2, "past the end"),
        case(&["run", "--rate", "nan", &f], 2, "--rate"),
        case(&["run", "--blocks-per-request", "100000", &f], 2, "1024"),
        case(
            &[
                "run",
                "--engine",
                "libaio",
                "--iodepth",
                "4",
                "--batch",
                "8",
                &f,
            ],
            2,
            "batch must be",
        ),
        case(
            &[
                "run",
                "--engine",
                "libaio",
                "--iodepth",
                "4",
                "--complete-min",
                "9",
                &f,
            ],
            2,
            "complete-min",
        ),
        case(&["run", "--io-limit", "0", &f], 2, "--io-limit"),
        case(
            &["run", "--stop-when-stable", "--stable-window", "1", &f],
            2,
            "--stable-window",
        ),
        case(
            &[
                "run",
                "--engine",
                "uring",
                "--sqpoll",
                "--sqpoll-cpu",
                "99999",
                &f,
            ],
            2,
            "cpus",
        ),
        // Outputs aimed at inputs, directories, FIFOs, missing directories.
        case(&["run", "--json", &f, &f], 2, "which this command reads"),
        case(&["run", "--json", &sub, &f], 2, "directory"),
        case(&["run", "--json", &fifo, &f], 2, "fifo"),
        case(&["run", "--json", &no_dir, &f], 2, "does not exist"),
        case(&["study", "latency", &f, "--out", &f], 2, "refusing"),
        case(&["tune", "--out", &f, &f], 2, "refusing"),
        case(
            &["report", &results, "-o", &in_results],
            2,
            "which this command reads",
        ),
        case(&["report", &results, "--png", &f], 2, "refusing"),
        // An existing results directory is never rewritten without --resume.
        case(&["study", "latency", &f, "--out", &results], 2, "--resume"),
        // Targets that are not targets.
        case(&["run", &sub], 2, "not a regular file"),
        case(&["run", &fifo], 2, "not a regular file"),
        case(&["run", &missing], 2, "no such file"),
        case(&["info", &fifo], 2, "not a regular file"),
        case(&["info", &missing], 2, "no such file"),
        case(&["study", "latency", &missing], 2, "no such file"),
        case(&["run", "--verify", &foreign], 2, "not written by"),
        // A target prepared only in part: each command names its own way out.
        case(&["run", "--verify", &grown], 2, "drop --verify"),
        case(&["study", "latency", &grown], 2, "pass --no-verify"),
        case(&["tune", &grown], 2, "pass --no-verify"),
        // prepare never destroys what it did not write, and fails before writing.
        case(&["prepare", &foreign, "--size", "1m"], 2, "--overwrite"),
        case(&["prepare", &fifo, "--size", "1m"], 2, "not a regular file"),
        case(&["prepare", &no_dir, "--size", "1m"], 2, "does not exist"),
        case(&["prepare", &fresh, "--size", "8t"], 2, "free space"),
        case(
            &["prepare", &fresh, "--size", "1e300"],
            2,
            "cannot parse size",
        ),
        // Options that do not fit the engine, unknown names, malformed inputs.
        case(&["run", "--engine", "foo", &f], 2, "unknown engine"),
        case(&["run", "--hipri", &f], 2, "pvsync2"),
        case(&["run", "--fixed-files", &f], 2, "--engine uring"),
        case(
            &["run", "--profile", &missing, &f],
            2,
            "cannot read the profile",
        ),
        case(&["run", "--profile", &bad_json], 2, "not a readlab profile"),
        case(&["study", "bogus", &f], 2, "unknown study"),
        case(&["tune", "--budget", "1s", &f], 2, "at least 10s"),
        case(&["tune", "--cpu-max", "nan", &f], 2, "--cpu-max"),
        case(&["tune", "--engines", "foo", &f], 2, "unknown engine"),
        case(&["tune", "--bs", "3", &f], 2, "block size"),
        case(&["tune", "--repeat", "0", &f], 2, "at least 1"),
        case(&["report", &missing], 2, "cannot read"),
        case(&["report", &f], 2, "not a text file"),
        case(
            &["report", &results, "--format", "xml"],
            2,
            "unknown report format",
        ),
        case(&["report", "--fio", &bad_json], 2, "not fio json"),
        case(&["quick", "--dir", &missing], 2, "no such directory"),
        // Outputs where no file can be created (procfs, sysfs) are refused before the run, not
        // after it; files that are no targets are bad input.
        case(
            &["run", "--json", "/proc/version", &f],
            2,
            "no file can be created",
        ),
        case(
            &["study", "latency", &f, "--out", "/proc/x"],
            2,
            "no file can be created",
        ),
        case(
            &["report", &results, "-o", "/proc/r.html"],
            2,
            "no file can be created",
        ),
        case(
            &["tune", &f, "--out", "/sys/kernel/x"],
            2,
            "no file can be created",
        ),
        case(&["run", "/proc/version"], 2, "cannot find its size"),
        case(&["info", "/proc/self/mem"], 2, "cannot find its size"),
        // clap's own errors are one line too.
        case(&["run", "--rw", "write", &f], 2, "readlab only reads"),
        case(&["run", "--frobnicate", &f], 2, "unexpected argument"),
        case(&["run", "--engine"], 2, "a value is required"),
        case(&["tune", "--goal", "fast", &f], 2, "possible values"),
        case(&["bogus"], 2, "unrecognized subcommand"),
        case(&["run"], 2, "give a TARGET"),
        // A run whose measured window saw nothing is marked and fails; it never prints a CPU
        // share divided by an empty window.
        case(
            &["run", "--runtime", "1ns", "-q", &f],
            1,
            "nothing was measured",
        ),
    ];
    assert!(cases.len() >= 40, "{} cases", cases.len());
    let before = tree(dir);
    for c in &cases {
        check(dir, c);
        assert_eq!(
            tree(dir),
            before,
            "{:?} changed the files around it",
            c.args
        );
    }
}

/// The empty run's result says so in every figure: no "0 ns" latency, no CPU share in the
/// millions of percent, in the JSON as in the table; Ctrl-C during the ramp is the same, and
/// exits 130.
#[test]
fn a_run_with_an_empty_window_is_marked_not_divided_by() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "4M");
    let saved = d.path().join("empty.json");
    let o = run(&[
        "run",
        "--runtime",
        "1ns",
        "--output",
        "json",
        "--json",
        saved.to_str().unwrap(),
        f.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    // The report leaves it out, saying why, rather than drawing 0 ns and 0 IOPS.
    let rep = run(&[
        "report",
        saved.to_str().unwrap(),
        "--format",
        "csv",
        "-o",
        "-",
    ]);
    assert!(rep.status.success(), "{}", stderr(&rep));
    assert!(
        stderr(&rep).contains("no request measured; left out"),
        "{}",
        stderr(&rep)
    );
    assert_eq!(stdout(&rep).lines().count(), 1, "{}", stdout(&rep));
    let doc = json(&o);
    let r = &doc["result"];
    assert_eq!(r["requests"], 0);
    let warnings = r["warnings"].as_array().unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().unwrap().starts_with("nothing was measured")),
        "{warnings:?}"
    );
    assert!(
        !warnings
            .iter()
            .any(|w| w.as_str().unwrap().starts_with("other processes")),
        "a 1 ns window cannot tell other load: {warnings:?}"
    );

    let child = bin()
        .args([
            "run",
            "--ramp",
            "20s",
            "--runtime",
            "2s",
            f.to_str().unwrap(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1000));
    rustix::process::kill_process(
        rustix::process::Pid::from_child(&child),
        rustix::process::Signal::INT,
    )
    .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    let (out, err) = (stdout(&o), stderr(&o));
    assert!(err.contains("nothing was measured"), "{err}");
    assert!(out.contains("latency  – (no request measured)"), "{out}");
    assert!(out.contains("app 0.0% of a core"), "{out}");
    assert!(out.contains("ended    interrupted"), "{out}");
}

/// SIGTERM ends a run like Ctrl-C: exit 143, the partial result written to `--json`, marked as
/// interrupted (it used to be lost).
#[test]
fn sigterm_keeps_a_runs_partial_result_marked() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "4M");
    let out = d.path().join("part.json");
    let child = bin()
        .args([
            "run",
            "--runtime",
            "20s",
            "--json",
            out.to_str().unwrap(),
            "-q",
            f.to_str().unwrap(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    rustix::process::kill_process(
        rustix::process::Pid::from_child(&child),
        rustix::process::Signal::TERM,
    )
    .unwrap();
    let started = Instant::now();
    let o = child.wait_with_output().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "SIGTERM took long"
    );
    assert_eq!(o.status.code(), Some(143), "{}", stderr(&o));
    assert!(stderr(&o).contains("interrupted"), "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(doc["result"]["ended_by"], "interrupted");
    assert!(
        doc["result"]["ios"].as_u64().unwrap() > 0,
        "{}",
        doc["result"]
    );
}

/// fio JSON without latency figures: the job is left out with a note, never drawn at 0 ns.
#[test]
fn fio_json_without_latency_is_never_drawn_at_0_ns() {
    let d = disk_dir();
    let results = results_dir(d.path());
    let fio = d.path().join("fio-nolat.json");
    std::fs::write(
        &fio,
        r#"{"fio version":"fio-3.33","timestamp":1700000000,
        "global options":{"ioengine":"libaio","iodepth":"32","bs":"4k","direct":"1","rw":"randread"},
        "jobs":[{"jobname":"x","job options":{},"read":{"total_ios":100000,"io_bytes":409600000,
        "iops":50000.0,"bw_bytes":204800000,"runtime":2000},"usr_cpu":5.0,"sys_cpu":20.0}]}"#,
    )
    .unwrap();
    let o = run(&[
        "report",
        results.to_str().unwrap(),
        "--fio",
        fio.to_str().unwrap(),
        "--format",
        "csv",
        "-o",
        "-",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("fio job 'x' has no latency figures"),
        "{}",
        stderr(&o)
    );
    let csv = stdout(&o);
    assert!(csv.lines().count() > 1, "{csv}");
    assert!(
        !csv.lines().any(|l| l.contains(",fio,")),
        "a fio point without latency was drawn: {csv}"
    );
}

/// A read-only tmpfs, unmounted on drop.
struct ReadOnlyFs(tempfile::TempDir);

impl ReadOnlyFs {
    fn new() -> ReadOnlyFs {
        assert!(is_root(), "mount needs root (CI runs as root)");
        let d = tempfile::tempdir().unwrap();
        let o = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "ro,size=16m", "tmpfs"])
            .arg(d.path())
            .output()
            .expect("mount (util-linux)");
        assert!(o.status.success(), "mount: {}", stderr(&o));
        ReadOnlyFs(d)
    }
}

impl Drop for ReadOnlyFs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg(self.0.path())
            .status();
    }
}

/// An OS error reaches the user once, on one line (it used to be printed twice: the library's
/// message already carries it, and its cause chain repeated it).
#[test]
fn an_os_error_is_printed_once() {
    let ro = ReadOnlyFs::new();
    let x = ro.0.path().join("x");
    let o = run_bounded(
        ro.0.path(),
        &["prepare".into(), s(&x), "--size".into(), "1m".into()],
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(err.matches("os error 30").count(), 1, "{err}");
    assert!(!x.exists());
    // And an output on it is refused before any work.
    let d = disk_dir();
    let f = prepare(d.path(), "f", "1M");
    let out = ro.0.path().join("o.json");
    let o = run(&["run", "--json", &s(&out), &s(&f)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("no file can be created"),
        "{}",
        stderr(&o)
    );
}

fn s(p: &Path) -> String {
    p.to_str().unwrap().to_string()
}

/// Every `--flag` the sources name (in messages, hints, help) is a flag of some readlab command,
/// or one of fio's in the fio command lines readlab prints (issue 10 §3: messages named
/// `--threads` for `--numjobs`, and "drop --verify" in tune, which has none).
#[test]
fn every_flag_a_message_names_exists() {
    let mut flags = std::collections::BTreeSet::new();
    // Every command the top-level help lists.
    let top = stdout(&run(&["--help"]));
    let commands: Vec<String> = top
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .filter(|c| c != "help")
        .collect();
    assert!(commands.len() >= 7, "{top}");
    for cmd in commands.iter().map(String::as_str) {
        let o = run(&[cmd, "--help"]);
        assert!(o.status.success(), "{cmd} --help: {}", stderr(&o));
        flags.extend(flag_names(&stdout(&o)));
    }
    assert!(
        flags.contains("numjobs") && flags.contains("no-verify"),
        "{flags:?}"
    );
    // Other tools' options: fio's own, in the fio command lines and hints readlab prints.
    let fio = [
        "filename",
        "fixedbufs",
        "group",
        "ioengine",
        "lat",
        "name",
        "norandommap",
        "output-format",
        "randrepeat",
        "registerfiles",
        "sqthread",
        "time",
        "version",
        // cargo's, mpirun's and srun's, in the hints about building and launching under MPI.
        "release",
        "features",
        "bind-to",
        "cpu-bind",
        // nbdkit's, qemu-nbd's and nbdinfo's, in the hints about serving without TLS and listing
        // exports.
        "tls",
        "tls-creds",
        "list",
        "oldstyle",
    ];
    let mut unknown = Vec::new();
    let mut todo = vec![PathBuf::from("src")];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
                continue;
            }
            let text = std::fs::read_to_string(&p).unwrap();
            for (i, line) in text.lines().enumerate() {
                for f in flag_names(line) {
                    if !flags.contains(&f) && !fio.contains(&f.as_str()) {
                        unknown.push(format!("{}:{}: --{f}", p.display(), i + 1));
                    }
                }
            }
        }
    }
    assert!(unknown.is_empty(), "flags no command has: {unknown:#?}");
}

/// The names of the `--flag`s in a text (`--no-verify` → `no-verify`).
fn flag_names(text: &str) -> Vec<String> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(at) = text[i..].find("--") {
        let start = i + at + 2;
        let before_ok =
            i + at == 0 || !b[i + at - 1].is_ascii_alphanumeric() && b[i + at - 1] != b'-';
        let mut end = start;
        while end < b.len()
            && (b[end].is_ascii_lowercase() || b[end].is_ascii_digit() || b[end] == b'-')
        {
            end += 1;
        }
        if before_ok && end > start && b[start].is_ascii_lowercase() {
            out.push(text[start..end].trim_end_matches('-').to_string());
        }
        i = end.max(start);
    }
    out
}
