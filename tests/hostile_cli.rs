//! End-to-end (issue 23 §7): the hostile command lines a battery still found unclean — malformed
//! NBD URLs, a server asked what it cannot do, absurd counts, study targets that hold nothing,
//! a monitor whose reader left, a rate beyond the device, a report over thousands of inputs.
//! Each ends in time with the outcome a user expects: a one-line refusal (exit 2) that leaves
//! every file around it as it was, or bounded behaviour that says what happened.

mod common;
mod nbd_common;
use common::*;
use std::io::BufRead;
use std::path::Path;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

/// Every refusal must come within this (they all fail before any I/O).
const LIMIT: Duration = Duration::from_secs(30);

/// Run readlab in `cwd` (so default output directories would land there, and be seen), killing
/// it and failing if it outlives [`LIMIT`].
fn run_bounded(cwd: &Path, args: &[String]) -> Output {
    let mut child = bin()
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start readlab");
    let started = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if started.elapsed() > LIMIT {
            let _ = child.kill();
            let mut o = child.wait_with_output().unwrap();
            // Said as its error, so the caller reports the hang with the other failures.
            o.stderr = format!("HUNG: still running after {LIMIT:?}; {}", stderr(&o)).into();
            return o;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The arguments as a message shows them (a 5,000-character export name cut short).
fn short(args: &[String]) -> Vec<String> {
    args.iter()
        .map(|a| {
            if a.len() > 60 {
                format!("{}…", &a[..60])
            } else {
                a.clone()
            }
        })
        .collect()
}

struct Case {
    args: Vec<String>,
    /// Text the one-line error must contain (case-insensitive).
    needle: &'static str,
}

fn case(args: &[&str], needle: &'static str) -> Case {
    Case {
        args: args.iter().map(|s| s.to_string()).collect(),
        needle,
    }
}

/// A bad-input refusal: exit 2, one line naming the problem, nothing on stdout, no panic, and
/// no file created, changed or removed under `cwd`. What is wrong with it, if anything.
fn check_refused(cwd: &Path, c: &Case) -> Result<(), String> {
    let before = tree(cwd);
    let o = run_bounded(cwd, &c.args);
    let err = stderr(&o);
    let args = short(&c.args);
    let fail = |why: String| Err(format!("{args:?}: {why}; stderr: {err}"));
    if o.status.code() != Some(2) {
        return fail(format!("exit code {:?}, not 2", o.status.code()));
    }
    if err.contains("panicked") {
        return fail("panicked".into());
    }
    if !err.to_lowercase().contains(&c.needle.to_lowercase()) {
        return fail(format!("no '{}' in the error", c.needle));
    }
    if err.lines().count() != 1 || !err.starts_with("readlab: ") {
        return fail("not one line starting readlab:".into());
    }
    if !stdout(&o).is_empty() {
        return fail(format!("printed {}", stdout(&o)));
    }
    if tree(cwd) != before {
        return fail(format!("changed files under {cwd:?}"));
    }
    Ok(())
}

/// A free loop device (no backing file), when this runs as root.
fn free_loop_device() -> Option<String> {
    if !is_root() {
        return None;
    }
    let o = std::process::Command::new("losetup")
        .arg("-f")
        .output()
        .ok()?;
    let dev = stdout(&o).trim().to_string();
    (o.status.success() && dev.starts_with("/dev/loop")).then_some(dev)
}

#[test]
fn hostile_command_lines_are_refused_with_exit_2_and_touch_nothing() {
    let d = disk_dir();
    let dir = d.path();
    let f = prepare(dir, "f", "4M");
    let g = prepare(dir, "g", "4M");
    let empty = dir.join("empty");
    std::fs::write(&empty, b"").unwrap();
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let (f, g, empty) = (s(&f), s(&g), s(&empty));
    let long_export = "a".repeat(5000);
    let listen = "127.0.0.1:0";

    let mut cases = vec![
        // Malformed NBD URLs are bad input, never a failed connection (exit 1).
        case(&["run", "--engine", "nbd", "nbd://127.0.0.1:0/"], "port 0"),
        case(&["run", "--engine", "nbd", "nbd://::1/"], "in brackets"),
        case(
            &["run", "--engine", "nbd", "nbd://127.0.0.1:1/%ZZ"],
            "not a percent escape",
        ),
        case(
            &["info", &format!("nbd://127.0.0.1:1/{long_export}")],
            "at most 4096",
        ),
        case(
            &[
                "run",
                "--engine",
                "nbd",
                "--netns",
                "readlab-no-such-ns",
                "nbd://127.0.0.1:1/x",
            ],
            "does not exist",
        ),
        // The monitor's thread sampling rate.
        case(
            &["monitor", "--thread-hz", "0", "--count", "1"],
            "--thread-hz",
        ),
        // The server asked what it cannot do: refused before it listens.
        case(
            &["serve", "--sqpoll", "--listen", listen, &f],
            "--engine uring",
        ),
        case(
            &["serve", "--fixed-files", "--listen", listen, &f],
            "--engine uring",
        ),
        case(
            &[
                "serve",
                "--model",
                "uring",
                "--fixed-files",
                "--listen",
                listen,
                &f,
            ],
            "--engine uring",
        ),
        case(
            &["serve", "--engine", "null", "--listen", listen, &f],
            "zeros",
        ),
        case(
            &["serve", "--export", &long_export, "--listen", listen, &f],
            "at most 4096 bytes",
        ),
        // Absurd counts: refused, never a day-long (or endless) run.
        case(
            &["run", "--repeat", "1000000", "--runtime", "100ms", &f],
            "--repeat",
        ),
        // The thread limit counts every target's threads.
        case(
            &["run", "--numjobs", "3000", "--runtime", "100ms", &f, &g],
            "6000 threads",
        ),
        case(
            &[
                "run",
                "--engine",
                "pool",
                "--iodepth",
                "64",
                "--numjobs",
                "40",
                "--runtime",
                "100ms",
                &f,
                &g,
            ],
            "5200 threads",
        ),
        // Study targets that hold nothing: refused before a results directory exists.
        case(&["study", "queue", "--quick", &empty], "empty (0 B)"),
    ];
    let sys = [
        "/sys/kernel/mm/transparent_hugepage/enabled",
        "/sys/power/state",
        "/sys/kernel/uevent_seqnum",
    ]
    .into_iter()
    .find(|p| Path::new(p).is_file());
    if let Some(sys) = sys {
        cases.push(case(&["study", "queue", "--quick", sys], "sysfs"));
    }
    if let Some(dev) = free_loop_device() {
        cases.push(case(
            &["study", "queue", "--quick", &dev],
            "nothing attached",
        ));
    }
    // Every case is tried (and every failure listed), a hang or a refusal missed alike.
    let failed: Vec<String> = cases
        .iter()
        .filter_map(|c| check_refused(dir, c).err())
        .collect();
    assert!(
        failed.is_empty(),
        "{} of {} cases:\n{}",
        failed.len(),
        cases.len(),
        failed.join("\n")
    );
}

/// `readlab monitor | head -1` and `readlab monitor --pid 1 | true`: once the reader of its
/// output is gone, the monitor ends (it used to sample for nobody until killed).
#[test]
fn the_monitor_ends_when_its_reader_leaves() {
    for (args, lines) in [
        (&["monitor", "--interval", "100ms"][..], 1),
        (&["monitor", "--pid", "1", "--interval", "100ms"][..], 0),
    ] {
        let mut child = bin()
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start readlab");
        let out = child.stdout.take().unwrap();
        let mut reader = std::io::BufReader::new(out);
        for _ in 0..lines {
            let mut l = String::new();
            reader.read_line(&mut l).unwrap();
        }
        drop(reader);
        let started = Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            if started.elapsed() > Duration::from_secs(15) {
                let _ = child.kill();
                let _ = child.wait();
                panic!("{args:?}: still running 15 s after its reader left");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        assert!(status.success(), "{args:?}: {status}");
    }
}

/// `--rate` far beyond the device: the terminal shows the backlog, and both the terminal and
/// the JSON say the run could not keep up.
#[test]
fn a_rate_beyond_the_device_says_the_run_could_not_keep_up() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "4M");
    let json = d.path().join("run.json");
    let o = run_bounded(
        d.path(),
        &[
            "run",
            "--rate",
            "1e12",
            "--runtime",
            "1s",
            "--json",
            json.to_str().unwrap(),
            f.to_str().unwrap(),
        ]
        .map(String::from),
    );
    let (out, err) = (unwrapped(&stdout(&o)), unwrapped(&stderr(&o)));
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(out.contains("largest backlog"), "{out}");
    assert!(out.contains("still due at the end"), "{out}");
    assert!(
        err.contains("asked 1,000,000,000,000/s, issued") && err.contains("could not keep up"),
        "{err}"
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let warnings = doc["result"]["warnings"].as_array().unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().unwrap().contains("could not keep up")),
        "{warnings:?}"
    );
}

/// A rate the device keeps up with says nothing of the kind.
#[test]
fn a_rate_the_device_keeps_up_with_says_nothing_of_a_shortfall() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "4M");
    let o = run_bounded(
        d.path(),
        &[
            "run",
            "--rate",
            "200",
            "--runtime",
            "1s",
            f.to_str().unwrap(),
        ]
        .map(String::from),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!stderr(&o).contains("could not keep up"), "{}", stderr(&o));
}

/// CPU seconds (user + system) a child used, waiting for it (killed past `limit`).
fn cpu_of(mut cmd: std::process::Command, limit: Duration) -> (i32, f64) {
    // Reaped by wait4 below (with its rusage), which std's `wait` would not give.
    #[allow(clippy::zombie_processes)]
    let child = cmd.spawn().expect("start readlab");
    let pid = child.id() as libc::pid_t;
    let started = Instant::now();
    loop {
        let mut status = 0;
        // SAFETY: an all-zero rusage is a valid value of this plain C struct.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: `pid` is our own child, not yet reaped (std's Child never waited for it);
        // `status` and `ru` are valid for writes for the call.
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut ru) };
        assert!(r >= 0, "wait4: {}", std::io::Error::last_os_error());
        if r == pid {
            let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
            let code = if libc::WIFEXITED(status) {
                libc::WEXITSTATUS(status)
            } else {
                -1
            };
            return (code, secs(ru.ru_utime) + secs(ru.ru_stime));
        }
        if started.elapsed() > limit {
            // SAFETY: killing and reaping our own child, still unreaped, by its pid; a null
            // status pointer is allowed.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, std::ptr::null_mut(), 0);
            }
            panic!("still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `readlab report` over thousands of inputs, each its own series in the charts: linear, not
/// the minutes a series looked up by a scan per point took (4,000 inputs: ~12 s of CPU before,
/// under 2 s after).
#[test]
fn a_report_over_thousands_of_inputs_takes_seconds() {
    let d = disk_dir();
    let dir = d.path().join("many");
    std::fs::create_dir(&dir).unwrap();
    let fixture = std::fs::read_to_string("tests/fixtures/results-small.jsonl").unwrap();
    let lines: Vec<&str> = fixture.lines().collect();
    let n = 4000;
    let mut inputs = Vec::new();
    for i in 0..n {
        let mut doc: serde_json::Value = serde_json::from_str(lines[i % lines.len()]).unwrap();
        doc["config"]["seed"] = (i as u64 + 1).into();
        doc["config"]["bs"] = (4096 * (1 + i as u64 % 64)).into();
        doc["config"]["threads"] = (1 + i as u64 / 64).into();
        let p = dir.join(format!("r{i:05}.json"));
        std::fs::write(&p, serde_json::to_string(&doc).unwrap()).unwrap();
        inputs.push(p);
    }
    let out = d.path().join("report.html");
    let mut cmd = bin();
    cmd.arg("report")
        .args(&inputs)
        .arg("-o")
        .arg(&out)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let (code, cpu) = cpu_of(cmd, Duration::from_secs(120));
    assert_eq!(code, 0);
    assert!(out.is_file());
    assert!(cpu < 5.0, "{n} inputs took {cpu:.1} s of CPU");
}

/// `--engine nbd --iodepth 100000` against a real server: refused with the cap (it hung once),
/// and what the cap allows runs and ends.
#[test]
fn an_nbd_depth_beyond_the_cap_is_refused_before_it_connects_its_workers() {
    let s = nbd_common::readlab_serve(&["--null", "64m"]);
    let d = disk_dir();
    let c = case(
        &["run", "--engine", "nbd", "--iodepth", "100000", &s.url],
        "at most 16384",
    );
    check_refused(d.path(), &c).unwrap();
    let o = run_bounded(
        d.path(),
        &[
            "run",
            "--engine",
            "nbd",
            "--iodepth",
            "256",
            "--runtime",
            "300ms",
            &s.url,
        ]
        .map(String::from),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}
