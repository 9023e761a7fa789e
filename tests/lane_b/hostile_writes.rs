//! End-to-end (issue 43): the one rule of every path readlab writes, held by `man DIR`,
//! `completions`, `--write-job`, `--json`, `tune --out` and `quick --dir`. A symbolic link at the
//! final component is never followed (not even with `--force`), a file readlab did not write is
//! replaced only with `--force`, an input is never an output, two outputs never name one file, a
//! FIFO never hangs a command, `--write-job -` makes no file named `-`, a job file is never left
//! behind by a run that failed, and a closed stdout fails the command instead of exiting 0 with
//! nothing written. Each case: the exit code, exactly one line on stderr saying what to do, the
//! directory's files unchanged (kinds and digests), and the command ended within a deadline.

use crate::common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::Duration;

/// Far above what any case takes (each is refused before it measures anything, or runs 0.2 s):
/// a hang fails the test instead of the suite.
const LIMIT: Duration = Duration::from_secs(30);

/// readlab in `cwd`, stdin empty, its output kept, ended within [`LIMIT`].
fn bounded(cwd: &Path, args: &[&str]) -> Output {
    readlab_within(cwd, args, LIMIT)
}

/// A directory with a prepared data file in it (what a link points at in the case).
fn setup() -> (tempfile::TempDir, PathBuf) {
    let d = disk_dir();
    let data = prepare(d.path(), "data.dat", "1M");
    (d, data)
}

/// Run `args` in `dir` and check the refusal: exit 2, one line with `says`, nothing changed.
fn refused(dir: &Path, args: &[&str], says: &[&str]) -> String {
    let before = tree(dir);
    let o = bounded(dir, args);
    let line = one_line(&o, 2, says);
    assert_eq!(tree(dir), before, "readlab {args:?} changed files: {line}");
    line
}

fn mkfifo(p: &Path) {
    let made = std::process::Command::new("mkfifo").arg(p).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo (coreutils)");
}

#[test]
fn man_never_writes_through_a_link() {
    let (d, data) = setup();
    let man = d.path().join("man");
    std::fs::create_dir(&man).unwrap();
    std::os::unix::fs::symlink("../data.dat", man.join("readlab.1")).unwrap();
    for force in [false, true] {
        let mut args = vec!["man", "man"];
        if force {
            args.push("--force");
        }
        refused(d.path(), &args, &["man/readlab.1", "symbolic link"]);
    }
    assert!(
        std::fs::symlink_metadata(man.join("readlab.1"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    // The data file is still readlab's test data, whole.
    let o = bounded(d.path(), &["run", s(&data), "--runtime", "0.2s"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn man_never_replaces_a_hand_written_page_unless_forced() {
    let d = disk_dir();
    let man = d.path().join("man");
    std::fs::create_dir(&man).unwrap();
    std::fs::write(man.join("readlab.1"), ".TH mine 1\nmy own page\n").unwrap();
    refused(
        d.path(),
        &["man", "man"],
        &["man/readlab.1", "readlab did not write it", "--force"],
    );
    // With --force it is replaced, and a second run replaces readlab's own pages without it.
    for args in [&["man", "man", "--force"][..], &["man", "man"][..]] {
        let o = bounded(d.path(), args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        let page = std::fs::read_to_string(man.join("readlab.1")).unwrap();
        assert!(page.contains("readlab manual"), "{page}");
    }
}

#[test]
fn man_with_a_fifo_for_a_page_is_refused_at_once() {
    let d = disk_dir();
    let man = d.path().join("man");
    std::fs::create_dir(&man).unwrap();
    mkfifo(&man.join("readlab.1"));
    refused(d.path(), &["man", "man"], &["man/readlab.1", "a FIFO"]);
    refused(d.path(), &["man", "man", "--force"], &["a FIFO"]);
}

#[test]
fn the_job_file_read_is_never_the_json_written() {
    let (d, _data) = setup();
    std::fs::write(
        d.path().join("j.fio"),
        "[j]\nfilename=data.dat\nrw=randread\nbs=4k\nruntime=200ms\n",
    )
    .unwrap();
    for force in [false, true] {
        let mut args = vec!["run", "--job", "j.fio", "--json", "j.fio"];
        if force {
            args.push("--force");
        }
        refused(d.path(), &args, &["j.fio", "which this command reads"]);
    }
}

#[test]
fn two_outputs_never_name_one_file() {
    let (d, _data) = setup();
    for args in [
        &[
            "run",
            "data.dat",
            "--runtime",
            "0.2s",
            "--write-job",
            "x",
            "--json",
            "x",
        ][..],
        &[
            "run",
            "data.dat",
            "--runtime",
            "0.2s",
            "--write-job",
            "x",
            "--json",
            "./x",
            "--force",
        ][..],
    ] {
        refused(d.path(), args, &["twice", "--json", "--write-job"]);
    }
    assert!(!d.path().join("x").exists());
}

#[test]
fn write_job_and_json_never_replace_a_file_readlab_did_not_write() {
    let (d, _data) = setup();
    let notes = d.path().join("notes.txt");
    std::fs::write(&notes, "my notes\n").unwrap();
    std::fs::write(d.path().join("mine.fio"), "; my job\n[j]\nbs=64k\n").unwrap();
    for args in [
        &[
            "run",
            "data.dat",
            "--runtime",
            "0.2s",
            "--json",
            "notes.txt",
        ][..],
        &[
            "run",
            "data.dat",
            "--runtime",
            "0.2s",
            "--write-job",
            "mine.fio",
        ][..],
        &["info", "data.dat", "--json", "notes.txt"][..],
    ] {
        refused(d.path(), args, &["readlab did not write it", "--force"]);
    }
    // With --force the user's file is replaced by readlab's.
    let o = bounded(
        d.path(),
        &[
            "run",
            "data.dat",
            "--runtime",
            "0.2s",
            "--json",
            "notes.txt",
            "--write-job",
            "mine.fio",
            "--force",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&notes).unwrap()).unwrap();
    assert_eq!(doc["schema"], "readlab.run/1");
    let job = std::fs::read_to_string(d.path().join("mine.fio")).unwrap();
    assert!(job.starts_with("; written by readlab run"), "{job}");
    // And readlab's own files are replaced without it.
    let o = bounded(
        d.path(),
        &[
            "run",
            "data.dat",
            "--runtime",
            "0.2s",
            "--json",
            "notes.txt",
            "--write-job",
            "mine.fio",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn json_and_write_job_never_write_through_a_link() {
    let (d, _data) = setup();
    std::os::unix::fs::symlink("data.dat", d.path().join("out.json")).unwrap();
    std::os::unix::fs::symlink("nowhere", d.path().join("dangling.fio")).unwrap();
    for args in [
        &[
            "run",
            "data.dat",
            "--runtime",
            "0.2s",
            "--write-job",
            "dangling.fio",
        ][..],
        &["info", "data.dat", "--json", "out.json", "--force"][..],
        &[
            "run",
            "data.dat",
            "--runtime",
            "0.2s",
            "--json",
            "dangling.fio",
            "--force",
        ][..],
    ] {
        refused(d.path(), args, &["refusing to write"]);
    }
    assert!(!d.path().join("nowhere").exists());
}

#[test]
fn tune_never_replaces_a_job_file_it_did_not_write() {
    let (d, _data) = setup();
    let out = d.path().join("t");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("job-4k.fio"), "; my job\n[mine]\nbs=4k\n").unwrap();
    refused(
        d.path(),
        &[
            "tune", "data.dat", "--bs", "4k", "--out", "t", "--budget", "10s",
        ],
        &["t/job-4k.fio", "readlab did not write it", "--force"],
    );
}

#[test]
fn quick_never_replaces_results_it_did_not_write() {
    let d = disk_dir();
    let q = d.path().join("q");
    std::fs::create_dir(&q).unwrap();
    std::fs::write(q.join("readlab-quick.jsonl"), "my own lines\n").unwrap();
    refused(
        d.path(),
        &["quick", "--dir", "q", "--runtime", "0.1s"],
        &["readlab-quick.jsonl", "readlab did not write it", "--force"],
    );
}

#[test]
fn write_job_dash_makes_no_file_named_dash() {
    let (d, _data) = setup();
    refused(
        d.path(),
        &["run", "data.dat", "--runtime", "0.2s", "--write-job", "-"],
        &["--write-job -", "name one"],
    );
    assert!(!d.path().join("-").exists());
}

#[test]
fn a_run_that_fails_leaves_no_job_file() {
    let (d, _data) = setup();
    // A target that is not there, and one that is there but smaller than a block.
    for (target, bs, says) in [
        ("missing.dat", "4k", "missing.dat"),
        ("data.dat", "2m", "larger than the range"),
    ] {
        let before = tree(d.path());
        let o = bounded(
            d.path(),
            &[
                "run",
                target,
                "--bs",
                bs,
                "--runtime",
                "0.2s",
                "--write-job",
                "w.fio",
            ],
        );
        one_line(&o, 2, &[says]);
        assert_eq!(tree(d.path()), before, "{target}: {}", stderr(&o));
        assert!(!d.path().join("w.fio").exists());
    }
}

/// readlab with descriptor 1 closed (`>&-`), through the shell.
fn closed_stdout(cwd: &Path, args: &str) -> Output {
    let child = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("exec \"$0\" {args} >&-"))
        .arg(env!("CARGO_BIN_EXE_readlab"))
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start sh");
    wait_within(child, LIMIT, args).0
}

#[test]
fn a_closed_stdout_is_a_failure_said_in_one_line() {
    let d = disk_dir();
    for args in ["completions bash", "man --page run", "man"] {
        let before = tree(d.path());
        let o = closed_stdout(d.path(), args);
        one_line(&o, 1, &["standard output", "closed"]);
        assert_eq!(tree(d.path()), before, "{args}");
    }
}
