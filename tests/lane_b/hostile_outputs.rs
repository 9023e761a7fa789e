//! End-to-end (issue 23 item 7): hostile outputs. A stdout whose reader left (`| true`, `| head`)
//! or that is full never panics any command and never stops the files a command writes; an output
//! never replaces test data `readlab prepare` wrote, nor (at a path the user did not name, or in
//! a results directory) a file readlab did not write; a study never mixes another target's points
//! into its directory; a missing `--png` directory is said, not created with its parents.

use crate::common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

const LIMIT: Duration = Duration::from_secs(120);

/// Wait for `child` within [`LIMIT`], killing it and failing if it outlives it.
fn bounded(mut child: std::process::Child, what: &str) -> std::process::ExitStatus {
    let started = Instant::now();
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            return st;
        }
        if started.elapsed() > LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} hung: still running after {LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Run readlab in `cwd` with stdout a pipe whose read end is closed before the command prints
/// anything; stderr is kept in a file. Returns the exit code and stderr.
fn closed_stdout(cwd: &Path, args: &[&str]) -> (Option<i32>, String) {
    let err = cwd.join(".stderr.txt");
    let mut child = bin()
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .expect("start readlab");
    // The reader leaves at once.
    drop(child.stdout.take());
    let st = bounded(child, &format!("{args:?}"));
    let text = std::fs::read_to_string(&err).unwrap();
    std::fs::remove_file(&err).unwrap();
    (st.code(), text)
}

/// A prepared target and a run document of it, in a fresh directory.
fn setup() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let d = disk_dir();
    let data = prepare(d.path(), "data.bin", "4M");
    let run_json = d.path().join("run.json");
    let o = run(&["run", s(&data), "--runtime", "0.1s", "--json", s(&run_json)]);
    assert!(o.status.success(), "{}", stderr(&o));
    (d, data, run_json)
}

#[test]
fn a_closed_stdout_panics_no_command_and_files_are_still_written() {
    let (d, data, run_json) = setup();
    let dir = d.path();
    let out_json = dir.join("out.json");
    let new_target = dir.join("new.bin");
    let study = dir.join("study");
    let cases: Vec<(Vec<&str>, Vec<PathBuf>)> = vec![
        (vec!["info", s(&data)], vec![]),
        (
            vec!["run", s(&data), "--runtime", "0.1s", "--json", s(&out_json)],
            vec![out_json.clone()],
        ),
        (
            vec!["run", s(&data), "--runtime", "0.1s", "--output", "json"],
            vec![],
        ),
        (vec!["compare", s(&run_json), s(&run_json)], vec![]),
        (vec!["report", "-o", "-", s(&run_json)], vec![]),
        (
            vec!["report", "-o", "-", "--format", "md", s(&run_json)],
            vec![],
        ),
        (
            vec!["prepare", s(&new_target), "--size", "1M"],
            vec![new_target.clone()],
        ),
        (
            vec![
                "study",
                "latency",
                s(&data),
                "--quick",
                "--runtime",
                "0.05s",
                "--out",
                s(&study),
            ],
            vec![study.join("results.jsonl"), study.join("summary.md")],
        ),
    ];
    for (args, files) in cases {
        let (code, err) = closed_stdout(dir, &args);
        assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
        assert_ne!(code, Some(101), "{args:?}: {err}");
        // The reader leaving is not the command's failure: it ends with its own code.
        assert_eq!(code, Some(0), "{args:?}: {err}");
        for f in files {
            assert!(f.exists(), "{args:?} did not write {}: {err}", f.display());
        }
    }
}

/// `readlab … 2>&1 | head`: stdout and stderr both a pipe whose reader left. No panic, the
/// files are written, the command's own exit code.
#[test]
fn a_closed_stderr_too_stops_nothing() {
    let (d, data, _) = setup();
    let study = d.path().join("study");
    let json = d.path().join("run.out.json");
    for (args, files) in [
        (
            vec![
                "study",
                "latency",
                s(&data),
                "--quick",
                "--runtime",
                "0.05s",
                "--out",
                s(&study),
            ],
            vec![study.join("results.jsonl"), study.join("summary.md")],
        ),
        (
            vec!["run", s(&data), "--runtime", "0.1s", "--json", s(&json)],
            vec![json.clone()],
        ),
    ] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let child = bin()
            .args(&args)
            .stdin(Stdio::null())
            .stdout(writer.try_clone().unwrap())
            .stderr(writer)
            .spawn()
            .unwrap();
        let st = bounded(child, &format!("{args:?}"));
        assert_eq!(st.code(), Some(0), "{args:?}");
        for f in files {
            assert!(f.exists(), "{args:?} did not write {}", f.display());
        }
    }
}

#[test]
fn a_full_stdout_fails_naming_the_file() {
    let (d, data, _) = setup();
    let o = bin()
        .args(["info", s(&data)])
        .stdout(
            std::fs::OpenOptions::new()
                .write(true)
                .open("/dev/full")
                .unwrap(),
        )
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("/dev/full"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    drop(d);
}

/// A small tmpfs mounted in a temporary directory, filled up; unmounted when dropped.
struct FullFs {
    dir: tempfile::TempDir,
}

impl FullFs {
    fn new() -> Option<FullFs> {
        if !is_root() {
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs", s(dir.path())])
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            return None;
        }
        // Filled: writing more fails with ENOSPC.
        let _ = std::fs::write(dir.path().join("fill"), vec![0u8; 1 << 20]);
        Some(FullFs { dir })
    }
}

impl Drop for FullFs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg(self.dir.path())
            .status();
    }
}

#[test]
fn a_full_disk_under_outputs_fails_naming_the_file() {
    let (_d, data, run_json) = setup();
    let Some(full) = FullFs::new() else {
        eprintln!("skipped: needs root to mount a tmpfs");
        return;
    };
    let f = |n: &str| full.dir.path().join(n);
    for (args, name) in [
        (
            vec![
                "run".to_string(),
                s(&data).into(),
                "--runtime".into(),
                "0.1s".into(),
                "--json".into(),
                s(&f("run.json")).into(),
            ],
            "run.json",
        ),
        (
            vec![
                "monitor".into(),
                "--count".into(),
                "1".into(),
                "--interval".into(),
                "100ms".into(),
                "--json".into(),
                s(&f("mon.json")).into(),
            ],
            "mon.json",
        ),
        (
            vec![
                "report".into(),
                s(&run_json).into(),
                "-o".into(),
                s(&f("r.html")).into(),
            ],
            "r.html",
        ),
    ] {
        let o = bin().args(&args).output().unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains(name), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    // stdout on the full disk: the JSON the run prints.
    let o = bin()
        .args(["run", s(&data), "--runtime", "0.1s", "--output", "json"])
        .stdout(std::fs::File::create(f("stdout.json")).unwrap())
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("stdout.json"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// Every output aimed at a file `readlab prepare` wrote (another target, not the one read) is
/// refused with exit 2, and the file is left as it was.
#[test]
fn outputs_never_replace_prepared_test_data() {
    let (d, data, run_json) = setup();
    let other = prepare(d.path(), "other.bin", "1M");
    let before = std::fs::read(&other).unwrap();
    let o_ = s(&other);
    let cases: Vec<Vec<&str>> = vec![
        vec!["run", s(&data), "--runtime", "0.1s", "--json", o_],
        vec!["report", s(&run_json), "-o", o_],
        vec!["report", s(&run_json), "--json", o_, "-o", "-"],
        vec!["compare", s(&run_json), s(&run_json), "-o", o_],
        vec!["compare", s(&run_json), s(&run_json), "--json", o_],
        vec!["monitor", "--count", "1", "--json", o_],
        vec!["info", s(&data), "--json", o_],
        // The monitor's JSON onto the file it watches.
        vec!["monitor", "--count", "1", "--json", s(&data), s(&data)],
    ];
    for args in cases {
        let o = bin().args(&args).current_dir(d.path()).output().unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("refusing"), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert_eq!(
            std::fs::read(&other).unwrap(),
            before,
            "{args:?} changed it"
        );
    }
    assert!(image_intact(&data));
}

fn image_intact(p: &Path) -> bool {
    run(&["info", s(p)]).status.success()
}

/// `readlab report DIR` writes report.<format> in the current directory: a file there that
/// readlab did not write is refused (exit 2, untouched) unless --force; one it wrote is replaced.
#[test]
fn the_default_report_path_replaces_only_readlab_reports() {
    let (d, _data, run_json) = setup();
    let cwd = d.path().join("cwd");
    std::fs::create_dir(&cwd).unwrap();
    for (format, name) in [("html", "report.html"), ("csv", "report.csv")] {
        let file = cwd.join(name);
        std::fs::write(&file, b"my own notes\n").unwrap();
        let o = bin()
            .args(["report", s(&run_json), "--format", format])
            .current_dir(&cwd)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{format}: {}", stderr(&o));
        assert!(stderr(&o).contains("--force"), "{}", stderr(&o));
        assert_eq!(std::fs::read(&file).unwrap(), b"my own notes\n");
        // With --force it is replaced; then, being readlab's, it is replaced again without.
        for extra in [Some("--force"), None] {
            let mut args = vec!["report", s(&run_json), "--format", format];
            args.extend(extra);
            let o = bin().args(&args).current_dir(&cwd).output().unwrap();
            assert!(o.status.success(), "{args:?}: {}", stderr(&o));
            assert_ne!(std::fs::read(&file).unwrap(), b"my own notes\n");
        }
    }
}

/// `study`/`tune --out` over a directory holding a summary.md / tune.json readlab did not write
/// is refused, and `study --resume` of another target's study too, naming both targets.
#[test]
fn results_directories_hold_only_their_own_study() {
    let (d, data, _) = setup();
    let other = prepare(d.path(), "other.bin", "4M");
    let dir = d.path().join("mine");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("summary.md"), b"my summary\n").unwrap();
    std::fs::write(dir.join("tune.json"), b"{\"mine\": 1}\n").unwrap();
    for args in [
        vec![
            "study",
            "latency",
            s(&data),
            "--quick",
            "--runtime",
            "0.05s",
            "--out",
            s(&dir),
        ],
        vec!["tune", s(&data), "--out", s(&dir)],
    ] {
        let o = run(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("readlab did not write"),
            "{}",
            stderr(&o)
        );
    }
    assert_eq!(
        std::fs::read(dir.join("summary.md")).unwrap(),
        b"my summary\n"
    );
    assert_eq!(
        std::fs::read(dir.join("tune.json")).unwrap(),
        b"{\"mine\": 1}\n"
    );
    assert!(!dir.join("results.jsonl").exists());

    let study = d.path().join("study");
    let args = |target: &Path, resume: bool| {
        let mut a = vec![
            "study".to_string(),
            "latency".into(),
            s(target).into(),
            "--quick".into(),
            "--runtime".into(),
            "0.05s".into(),
            "--out".into(),
            s(&study).into(),
        ];
        if resume {
            a.push("--resume".into());
        }
        a
    };
    let o = bin().args(args(&data, false)).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let results = std::fs::read(study.join("results.jsonl")).unwrap();
    let o = bin().args(args(&other, true)).output().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("data.bin") && err.contains("other.bin"),
        "names both targets: {err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert_eq!(std::fs::read(study.join("results.jsonl")).unwrap(), results);
    // Its own target resumes.
    let o = bin().args(args(&data, true)).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn a_png_directory_under_a_missing_one_is_refused() {
    let (d, _data, run_json) = setup();
    let png = d.path().join("no/such/png");
    let html = d.path().join("r.html");
    let o = run(&["report", s(&run_json), "-o", s(&html), "--png", s(&png)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("does not exist"), "{}", stderr(&o));
    assert!(!d.path().join("no").exists());
    assert!(!html.exists(), "work started before the check");
}

/// The PNG charts replace only PNGs readlab wrote (each carries readlab's name in its `Software`
/// chunk): drawn twice into one directory, the second replaces the first; a file of another's
/// under a chart's name is refused before anything is written, and kept, unless `--force`.
#[test]
fn png_charts_replace_only_readlabs_own() {
    let (d, _data, run_json) = setup();
    let png = d.path().join("png");
    let html = d.path().join("r.html");
    let report = |extra: &[&str]| {
        let mut args = vec!["report", s(&run_json), "-o", s(&html), "--png", s(&png)];
        args.extend_from_slice(extra);
        run(&args)
    };
    let o = report(&[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut names: Vec<PathBuf> = std::fs::read_dir(&png)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    names.sort();
    assert!(!names.is_empty(), "no chart drawn");
    let o = report(&[]);
    assert!(o.status.success(), "its own PNGs: {}", stderr(&o));
    // Another's picture under the first chart's name.
    let theirs = b"\x89PNG\r\n\x1a\nsomeone's picture".to_vec();
    std::fs::write(&names[0], &theirs).unwrap();
    std::fs::remove_file(&html).unwrap();
    let o = report(&[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--force"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&names[0]).unwrap(), theirs, "replaced");
    assert!(!html.exists(), "work started before the check");
    let o = report(&["--force"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_ne!(
        std::fs::read(&names[0]).unwrap(),
        theirs,
        "--force replaces it"
    );
}

/// Two studies on one directory at once: the second is refused at once with one line naming
/// the first's pid.
#[test]
fn a_second_study_on_a_busy_directory_is_one_line() {
    let (d, data, _) = setup();
    let out = d.path().join("busy");
    let args = [
        "study",
        "queue",
        s(&data),
        "--quick",
        "--runtime",
        "0.2s",
        "--out",
        s(&out),
    ];
    let first = bin()
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = first.id();
    // Until the first holds the lock (its lock file names it).
    let started = Instant::now();
    while !std::fs::read_to_string(out.join(".readlab.lock"))
        .is_ok_and(|t| t.contains(&format!("pid {pid}")))
    {
        assert!(started.elapsed() < LIMIT, "the first study never started");
        std::thread::sleep(Duration::from_millis(10));
    }
    let o = bin().args(args).output().unwrap();
    let st = bounded(first, "the first study");
    assert!(st.success());
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains(&format!("pid {pid}")), "{err}");
}
