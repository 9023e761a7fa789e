//! End-to-end (issue 43): every file readlab reads — results and reports' JSON for `report`,
//! `compare`, `report --fio` and `report --baseline`, job files and their includes — is a regular
//! file checked without blocking (a FIFO never stalls `open`), read to a bound in bounded memory
//! whatever its size says (/proc files say 0), and refused with exit 2 and one clear line (or a
//! capped list); every input is left as it was. Each case runs under an address-space limit and a
//! deadline. Then the job-file cases said wrong before: fio's `include FILE`, a byte-order mark,
//! a later job's missing target, `--check`, target names a written job cannot hold, a torn last
//! line of results.jsonl and a target truncated under a study.

use crate::common;
use common::*;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::Duration;

const FIXTURE: &str = "tests/fixtures/results-small.jsonl";
/// The address space every child gets: far below what the unbounded reads took (tens of GB).
const MEMORY: u64 = 1 << 30;
/// Past this a child is taken for hung.
const DEADLINE: Duration = Duration::from_secs(10);

fn mkfifo(p: &Path) -> PathBuf {
    let made = std::process::Command::new("mkfifo").arg(p).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo (coreutils)");
    p.to_path_buf()
}

/// Run readlab with `args` in `dir`, its address space limited to [`MEMORY`], held to
/// [`DEADLINE`]: past it the child gets SIGINT and must end within a second (the test fails
/// either way, saying which).
fn bounded(dir: &Path, args: &[&str]) -> Output {
    let mut c = bin();
    c.args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: setrlimit is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        c.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: MEMORY,
                rlim_max: MEMORY,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = c.spawn().expect("start readlab");
    let start = std::time::Instant::now();
    while start.elapsed() < DEADLINE {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let pid = child.id() as i32;
    // SAFETY: kill on our own child's pid.
    unsafe { libc::kill(pid, libc::SIGINT) };
    let (o, took) = wait_within(
        child,
        Duration::from_secs(5),
        &format!("{args:?} after SIGINT"),
    );
    panic!(
        "{args:?}: still running after {DEADLINE:?}; SIGINT ended it in {took:?} (exit {:?}): {}",
        o.status.code(),
        stderr(&o)
    );
}

/// The lines readlab printed on stderr.
fn lines(o: &Output) -> Vec<String> {
    stderr(o).lines().map(str::to_string).collect()
}

/// Exit 2 with one line holding `says`.
fn refused_in_one_line(o: &Output, says: &str, what: &str) {
    assert_eq!(o.status.code(), Some(2), "{what}: {}", stderr(o));
    let l = lines(o);
    assert_eq!(l.len(), 1, "{what}: one line: {}", stderr(o));
    assert!(l[0].contains(says), "{what}: {}", stderr(o));
}

/// A directory holding a results file (the fixture), the snapshot of everything in it.
fn setup() -> (tempfile::TempDir, PathBuf) {
    let d = disk_dir();
    let results = d.path().join("results.jsonl");
    std::fs::copy(FIXTURE, &results).unwrap();
    (d, results)
}

#[test]
fn fifos_as_inputs_are_refused_without_blocking() {
    let (d, results) = setup();
    let fifo = mkfifo(&d.path().join("fifo.json"));
    let before = tree(d.path());
    let (f, r) = (s(&fifo), s(&results));
    for args in [
        vec!["report", f, "-o", "r.html"],
        vec!["report", r, "--fio", f, "-o", "r.html"],
        vec!["report", r, "--baseline", f, "-o", "r.html"],
        vec!["compare", f, r],
        vec!["compare", r, f],
    ] {
        let o = bounded(d.path(), &args);
        refused_in_one_line(&o, "a FIFO, not a regular file", &format!("{args:?}"));
        assert_eq!(tree(d.path()), before, "{args:?}: the directory changed");
    }
}

#[test]
fn a_large_json_array_of_numbers_is_refused_at_its_first_element() {
    let (d, results) = setup();
    let numbers = d.path().join("numbers.json");
    let mut text = String::from("[1");
    text.push_str(&",1".repeat(15_000_000));
    text.push(']');
    std::fs::write(&numbers, text).unwrap();
    let before = tree(d.path());
    for args in [
        vec!["report", s(&numbers), "-o", "r.html"],
        vec!["compare", s(&numbers), s(&results)],
    ] {
        let o = bounded(d.path(), &args);
        refused_in_one_line(
            &o,
            "element 1 is not a readlab document",
            &format!("{args:?}"),
        );
        assert_eq!(tree(d.path()), before, "{args:?}");
    }
}

#[test]
fn a_torn_last_line_of_results_is_said() {
    let (d, results) = setup();
    let text = std::fs::read_to_string(&results).unwrap();
    let last = text.lines().last().unwrap();
    let torn = format!("{text}{}", &last[..last.len() / 2]);
    std::fs::write(&results, torn).unwrap();
    let before = tree(d.path());
    let o = bounded(
        d.path(),
        &["report", s(&results), "-o", "-", "--format", "csv"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let said: Vec<String> = lines(&o)
        .into_iter()
        .filter(|l| l.contains("cut off"))
        .collect();
    assert_eq!(said.len(), 1, "{}", stderr(&o));
    assert!(
        said[0].contains(&format!("{}: line 21 is cut off", results.display())),
        "{}",
        said[0]
    );
    assert_eq!(tree(d.path()), before);
}

/// A job file in `d` and the stderr of `run --job` of it (with `extra`).
fn job(d: &Path, name: &str, text: &[u8], extra: &[&str]) -> Output {
    let p = d.join(name);
    std::fs::write(&p, text).unwrap();
    let mut args = vec!["run", "--job", s(&p), "-q"];
    args.extend_from_slice(extra);
    bounded(d, &args)
}

#[test]
fn pathological_job_files_are_refused_in_bounded_memory_and_lines() {
    let d = disk_dir();
    let before = tree(d.path());
    // Many [global] lines, then many one-line sections: 634 KB.
    let mut text = String::from("[global]\n");
    text.push_str(&"bs=4k\n".repeat(40_000));
    for i in 0..50_000 {
        text.push_str(&format!("[j{i}]\n"));
    }
    assert!(text.len() > 600_000 && text.len() < 1 << 20);
    let o = job(d.path(), "many.fio", text.as_bytes(), &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("more than 1000 options"),
        "{}",
        stderr(&o)
    );
    assert!(lines(&o).len() <= 12, "{}", stderr(&o));
    // 60,000 unknown options; then 500: the first ten and how many more.
    for (n, more) in [(60_000, None), (500, Some("… and 490 more"))] {
        let mut text = String::from("[a]\nfilename=f.dat\n");
        for i in 0..n {
            text.push_str(&format!("bogus{i}=1\n"));
        }
        let o = job(d.path(), "unknown.fio", text.as_bytes(), &[]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(lines(&o).len() <= 12, "{n}: {} lines", lines(&o).len());
        if let Some(more) = more {
            assert!(stderr(&o).contains(more), "{}", stderr(&o));
            assert!(stderr(&o).contains("'bogus0'"), "{}", stderr(&o));
        }
    }
    // /proc files say they are empty: read to the bound only.
    for p in ["/proc/self/pagemap", "/proc/kallsyms"] {
        let o = bounded(d.path(), &["run", "--job", p, "-q"]);
        refused_in_one_line(&o, "the job file", p);
    }
    let fifo = mkfifo(&d.path().join("fifo.fio"));
    let o = bounded(d.path(), &["run", "--job", s(&fifo), "-q"]);
    refused_in_one_line(&o, "a FIFO, not a regular file", "a FIFO job file");
    // An include naming a FIFO, or one that includes itself.
    let o = job(d.path(), "inc-fifo.fio", b"[a]\ninclude fifo.fio\n", &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("a FIFO"), "{}", stderr(&o));
    std::fs::write(d.path().join("loop.fio"), "include loop.fio\n").unwrap();
    let o = job(d.path(), "loops.fio", b"[a]\ninclude loop.fio\n", &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("nested deeper"), "{}", stderr(&o));
    let after = tree(d.path());
    for (p, what) in &before {
        assert_eq!(after.get(p), Some(what), "{}", p.display());
    }
}

#[test]
fn fio_include_and_a_byte_order_mark_are_read() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "16M");
    std::fs::write(d.path().join("other.fio"), "; shared\nbs=8k\nrw=read\n").unwrap();
    let body = format!(
        "[a]\nfilename={}\nruntime=100ms\ninclude other.fio\n",
        s(&f)
    );
    let o = job(d.path(), "inc.fio", body.as_bytes(), &["--output", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(json(&o)["config"]["bs"], 8192, "{}", stdout(&o));
    // include=FILE, fio's other spelling, from another directory: found beside the job file.
    let body = format!(
        "[a]\nfilename={}\nruntime=100ms\ninclude=other.fio\n",
        s(&f)
    );
    std::fs::write(d.path().join("eq.fio"), body).unwrap();
    let o = bounded(
        Path::new("/"),
        &[
            "run",
            "--job",
            s(&d.path().join("eq.fio")),
            "-q",
            "--output",
            "json",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(json(&o)["config"]["rw"], "read", "{}", stdout(&o));
    // A byte-order mark (a Windows editor's) before the first section.
    let mut bom = b"\xef\xbb\xbf".to_vec();
    bom.extend_from_slice(format!("[a]\nfilename={}\nruntime=100ms\n", s(&f)).as_bytes());
    let o = job(d.path(), "bom.fio", &bom, &["--output", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn a_later_jobs_missing_target_stops_the_file_before_anything_runs() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "16M");
    // The first job would run 60 s (past the deadline) if it ran at all.
    let body = format!(
        "[a]\nfilename={}\nruntime=60s\n[b]\nfilename={}\nruntime=100ms\n",
        s(&f),
        s(&d.path().join("missing.dat"))
    );
    let o = job(d.path(), "two.fio", body.as_bytes(), &[]);
    refused_in_one_line(&o, "line 4 [b]", "a missing target");
    assert!(stderr(&o).contains("nothing ran"), "{}", stderr(&o));
    // --check holds a profile's replay; a job file has none.
    let body = format!("[a]\nfilename={}\nruntime=60s\n", s(&f));
    let o = job(d.path(), "one.fio", body.as_bytes(), &["--check"]);
    refused_in_one_line(&o, "--check", "--check with --job");
}

#[test]
fn a_target_name_a_job_file_cannot_hold_is_refused() {
    use std::os::unix::ffi::OsStrExt;
    let d = disk_dir();
    let names: [&[u8]; 4] = [b"a\nb.dat", b" lead.dat", b"bad\xff.dat", b"env${HOME}.dat"];
    for name in names {
        // Named as a user would, relative to the current directory (fio trims a value's
        // leading blank, so ` lead.dat` would replay `lead.dat`).
        let t = d.path().join(std::ffi::OsStr::from_bytes(name));
        std::fs::copy(prepare(d.path(), "src", "1M"), &t).unwrap();
        let job = d.path().join("out.fio");
        let o = bin()
            .args(["run", "--write-job", "out.fio", "--runtime", "100ms", "-q"])
            .arg(std::ffi::OsStr::from_bytes(name))
            .current_dir(d.path())
            .stdin(Stdio::null())
            .output()
            .expect("start readlab");
        let what = String::from_utf8_lossy(name).into_owned();
        refused_in_one_line(&o, "cannot be written into a job file", &what);
        assert!(!job.exists(), "{what}: a job file was written");
        std::fs::remove_file(&t).unwrap();
    }
}

#[test]
fn a_target_truncated_under_a_study_stops_it() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "64M");
    let out = d.path().join("lat");
    let child = bin()
        .args([
            "study",
            "latency",
            "--quick",
            "--runtime",
            "200ms",
            "--out",
            s(&out),
            s(&f),
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Truncated once the first point is stored (the study has eight).
    let results = out.join("results.jsonl");
    let start = std::time::Instant::now();
    while std::fs::read_to_string(&results).map_or(true, |t| !t.contains('\n')) {
        assert!(start.elapsed() < DEADLINE, "no point stored");
        std::thread::sleep(Duration::from_millis(5));
    }
    std::fs::File::options()
        .write(true)
        .open(&f)
        .unwrap()
        .set_len(32 << 20)
        .unwrap();
    let (o, _) = wait_within(child, Duration::from_secs(30), "the study");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        unwrapped(&stderr(&o)).contains("the target changed under the study"),
        "{}",
        stderr(&o)
    );
    let stored = std::fs::read_to_string(&results).unwrap().lines().count();
    assert!(stored < 8, "{stored} points stored");
}
