//! End-to-end (issue 10 §3): output paths (`--json`, `-o`, `--out`, `--png`) are checked before any
//! work: never an input or the target, never a device node, FIFO or directory, never in a missing
//! directory. Each refusal exits 2 with one line and leaves everything as it was.

use crate::common;
use common::*;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::process::Output;

fn digest(path: &Path) -> u64 {
    xxhash_rust::xxh3::xxh3_64(&std::fs::read(path).unwrap())
}

/// Exit 2 with a one-line message containing `needle`.
fn assert_refused(o: &Output, needle: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "not one line: {err}");
    assert!(err.contains(needle), "no '{needle}' in: {err}");
}

/// A file's identity and contents, to show it was left alone.
fn snapshot(path: &Path) -> (u64, u64, u64) {
    let m = std::fs::metadata(path).unwrap();
    (m.ino(), m.len(), digest(path))
}

/// A results directory (the stored small fixture) in `dir`.
fn results_dir(dir: &Path) -> PathBuf {
    let out = dir.join("study");
    std::fs::create_dir(&out).unwrap();
    std::fs::copy(
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/results-small.jsonl"
        ),
        out.join("results.jsonl"),
    )
    .unwrap();
    out
}

#[test]
fn run_json_over_the_target_is_refused() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "1M");
    let before = snapshot(&f);
    let t = f.to_str().unwrap();
    let o = run(&["run", "--runtime", "1s", "-q", "--json", t, t]);
    assert_refused(&o, "which this command reads");
    // Another spelling of the same file.
    let dotted = d.path().join(".").join("f");
    let o = run(&["run", "-q", "--json", dotted.to_str().unwrap(), t]);
    assert_refused(&o, "which this command reads");
    assert_eq!(snapshot(&f), before);
    // A different file is written as before.
    let j = d.path().join("run.json");
    let o = run(&[
        "run",
        "--runtime",
        "1s",
        "-q",
        "--json",
        j.to_str().unwrap(),
        t,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(j.is_file());
}

/// A device node in `dir` for the device `rdev` (so that, should a check ever fail, only this
/// copy is replaced and never a node under /dev).
fn node(dir: &Path, name: &str, kind: &str, rdev: u64) -> PathBuf {
    let p = dir.join(name);
    let o = std::process::Command::new("mknod")
        .arg(&p)
        .arg(kind)
        .arg(rustix::fs::major(rdev).to_string())
        .arg(rustix::fs::minor(rdev).to_string())
        .output()
        .expect("mknod (coreutils)");
    assert!(o.status.success(), "mknod: {}", stderr(&o));
    p
}

#[test]
fn run_json_over_a_device_node_is_refused() {
    assert!(is_root(), "device nodes need root (CI runs as root)");
    let lo = LoopDev::prepared("8M");
    let d = disk_dir();
    let f = prepare(d.path(), "f", "1M");
    let rdev = std::fs::metadata(&lo.dev).unwrap().rdev();
    let dev = node(d.path(), "dev", "b", rdev);
    let dev = dev.to_str().unwrap();
    for (target, why) in [
        (f.to_str().unwrap(), "block device"),
        (dev, "which this command reads"),
    ] {
        let o = run(&["run", "--runtime", "1s", "-q", "--json", dev, target]);
        assert_refused(&o, why);
    }
    let m = std::fs::metadata(dev).unwrap();
    assert!(
        m.file_type().is_block_device(),
        "the device node was replaced"
    );
    assert_eq!(m.rdev(), rdev);
    let o = run(&["info", &lo.dev]);
    assert!(stdout(&o).contains("prepared by readlab"), "{}", stdout(&o));
}

#[test]
fn run_json_to_a_fifo_a_directory_or_a_missing_directory_is_refused() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "1M");
    let t = f.to_str().unwrap();
    let fifo = d.path().join("fifo");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo");
    let o = run(&[
        "run",
        "--runtime",
        "1s",
        "-q",
        "--json",
        fifo.to_str().unwrap(),
        t,
    ]);
    assert_refused(&o, "FIFO");
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
    let o = run(&[
        "run",
        "--runtime",
        "1s",
        "-q",
        "--json",
        d.path().to_str().unwrap(),
        t,
    ]);
    assert_refused(&o, "directory");
    let missing = d.path().join("no/such/dir/run.json");
    let o = run(&[
        "run",
        "--runtime",
        "1s",
        "-q",
        "--json",
        missing.to_str().unwrap(),
        t,
    ]);
    assert_refused(&o, "does not exist");
    assert!(!d.path().join("no").exists());
}

#[test]
fn report_over_its_own_input_is_refused() {
    let d = disk_dir();
    let study = results_dir(d.path());
    let results = study.join("results.jsonl");
    let before = snapshot(&results);
    let s = study.to_str().unwrap();
    for args in [
        vec!["report", s, "-o", results.to_str().unwrap()],
        vec![
            "report",
            s,
            "--format",
            "csv",
            "-o",
            results.to_str().unwrap(),
        ],
        vec![
            "report",
            results.to_str().unwrap(),
            "-o",
            results.to_str().unwrap(),
        ],
    ] {
        let o = run(&args);
        assert_refused(&o, "which this command reads");
    }
    let fio = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/fio-normal.json"
    ));
    let fio_copy = d.path().join("fio.json");
    std::fs::copy(&fio, &fio_copy).unwrap();
    let fio_before = snapshot(&fio_copy);
    let o = run(&[
        "report",
        s,
        "--fio",
        fio_copy.to_str().unwrap(),
        "-o",
        fio_copy.to_str().unwrap(),
    ]);
    assert_refused(&o, "which this command reads");
    assert_eq!(snapshot(&results), before);
    assert_eq!(snapshot(&fio_copy), fio_before);
    // A report beside the study it draws is what everyone does.
    let html = study.join("report.html");
    let o = run(&["report", s, "-o", html.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(snapshot(&results), before);
}

#[test]
fn report_to_a_device_node_or_png_into_a_file_is_refused() {
    let d = disk_dir();
    let study = results_dir(d.path());
    let s = study.to_str().unwrap();
    assert!(is_root(), "device nodes need root (CI runs as root)");
    let null = node(
        d.path(),
        "null",
        "c",
        std::fs::metadata("/dev/null").unwrap().rdev(),
    );
    let o = run(&["report", s, "--format", "csv", "-o", null.to_str().unwrap()]);
    assert_refused(&o, "character device");
    assert!(
        std::fs::metadata(&null)
            .unwrap()
            .file_type()
            .is_char_device()
    );
    let file = d.path().join("a-file");
    std::fs::write(&file, b"keep me").unwrap();
    let html = d.path().join("r.html");
    let o = run(&[
        "report",
        s,
        "-o",
        html.to_str().unwrap(),
        "--png",
        file.to_str().unwrap(),
    ]);
    assert_refused(&o, "as a directory");
    assert_eq!(std::fs::read(&file).unwrap(), b"keep me");
    assert!(!html.exists(), "work started before the check");
}

#[test]
fn study_and_tune_out_over_the_target_are_refused() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "1M");
    let before = snapshot(&f);
    let t = f.to_str().unwrap();
    let o = run(&["study", "latency", "--quick", "--out", t, t]);
    assert_refused(&o, "which this command reads");
    let o = run(&["tune", "--budget", "10s", "--out", t, t]);
    assert_refused(&o, "which this command reads");
    // A directory whose results file would be the target.
    let inside = d.path().join("o");
    std::fs::create_dir(&inside).unwrap();
    let g = prepare(&inside, "results.jsonl", "1M");
    let g_before = snapshot(&g);
    let o = run(&[
        "study",
        "latency",
        "--quick",
        "--resume",
        "--out",
        inside.to_str().unwrap(),
        g.to_str().unwrap(),
    ]);
    assert_refused(&o, "which this command reads");
    assert_eq!(snapshot(&f), before);
    assert_eq!(snapshot(&g), g_before);
}
