//! Helpers shared by the end-to-end tests: run the real binary, prepare real files.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_readlab"))
}

pub fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("start readlab")
}

/// Held by the tests of one test binary that must not share the machine with each other (each
/// binary has its own lock); a test that failed while holding it does not block the rest.
pub fn one_at_a_time() -> MutexGuard<'static, ()> {
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner())
}

/// Text as one line per message: the continuation lines a terminal's width broke off (indented
/// by two or four) joined back, so a test can look for a phrase wherever the line was broken.
pub fn unwrapped(s: &str) -> String {
    s.replace("\n    ", " ").replace("\n  ", " ")
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A temporary directory on the real disk (not tmpfs), so O_DIRECT goes to a device.
pub fn disk_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("readlab-test-")
        .tempdir_in(std::env::temp_dir())
        .expect("temp dir")
}

pub fn prepare(dir: &Path, name: &str, size: &str) -> PathBuf {
    let p = dir.join(name);
    let o = run(&["prepare", p.to_str().unwrap(), "--size", size]);
    assert!(o.status.success(), "prepare failed: {}", stderr(&o));
    p
}

pub fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not pure JSON ({e}): {}\nstderr: {}",
            stdout(o),
            stderr(o)
        )
    })
}

/// Corrupt one byte of a file (or device) in place, durably.
pub fn flip_byte(path: &Path, offset: u64) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .unwrap();
    let mut b = [0u8; 1];
    f.read_exact_at(&mut b, offset).unwrap();
    b[0] ^= 0x5a;
    f.write_all_at(&b, offset).unwrap();
    f.sync_all().unwrap();
}

/// The run failed (exit 1) and its error output names the offset of the corrupted byte.
pub fn assert_mismatch_reported(o: &Output, offset: u64) {
    assert_eq!(o.status.code(), Some(1), "{}", stderr(o));
    assert!(
        stderr(o).contains(&format!("offset {offset}")),
        "no offset {offset} in: {}",
        stderr(o)
    );
}

pub fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// A loop device over a prepared file in /dev/shm with direct I/O on: a fast real block device.
/// Detached (and its backing file removed) on drop.
pub struct LoopDev {
    pub dev: String,
    backing: PathBuf,
}

impl LoopDev {
    /// Needs root; panics with a clear message otherwise (CI runs as root).
    pub fn prepared(size: &str) -> LoopDev {
        assert!(is_root(), "loop devices need root (CI runs as root)");
        let backing = PathBuf::from(format!(
            "/dev/shm/readlab-loop-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos()
        ));
        let o = run(&["prepare", backing.to_str().unwrap(), "--size", size]);
        assert!(o.status.success(), "prepare backing file: {}", stderr(&o));
        let o = Command::new("losetup")
            .args([
                "--find",
                "--show",
                "--direct-io=on",
                backing.to_str().unwrap(),
            ])
            .output()
            .expect("losetup (util-linux)");
        assert!(o.status.success(), "losetup: {}", stderr(&o));
        LoopDev {
            dev: stdout(&o).trim().to_string(),
            backing,
        }
    }
}

impl Drop for LoopDev {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.dev]).status();
        let _ = std::fs::remove_file(&self.backing);
    }
}

/// Every file under `dir` (recursively) with its kind and contents' digest; FIFOs and
/// directories by kind only: what the hostile batteries compare before and after each case.
pub fn tree(dir: &Path) -> std::collections::BTreeMap<PathBuf, String> {
    let mut out = std::collections::BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let p = e.path();
            let t = e.file_type().unwrap();
            let what = if t.is_dir() {
                todo.push(p.clone());
                "dir".to_string()
            } else if t.is_file() {
                let bytes = std::fs::read(&p).unwrap();
                format!(
                    "file {} {:x}",
                    bytes.len(),
                    xxhash_rust::xxh3::xxh3_64(&bytes)
                )
            } else {
                format!("{t:?}")
            };
            out.insert(p, what);
        }
    }
    out
}

/// Wait for `child` (its output piped) at most `limit`; killed, and the test failed with its
/// stderr, past it. Its output and how long it ran.
pub fn wait_within(mut child: Child, limit: Duration, what: &str) -> (Output, Duration) {
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return (child.wait_with_output().unwrap(), start.elapsed());
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let o = child.wait_with_output().unwrap();
            panic!(
                "{what}: still running after {limit:?}; stderr: {}",
                stderr(&o)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A path as the `&str` an argument list wants.
pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `cmd` run in `cwd`, stdin empty, its output kept; killed, and the test failed, past `limit`.
pub fn output_within(mut cmd: Command, cwd: &Path, limit: Duration) -> Output {
    let child = cmd
        .current_dir(cwd)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start readlab");
    wait_within(child, limit, &format!("{cmd:?}")).0
}

/// readlab with `args` in `cwd` (so default output directories would land there, and be seen),
/// as [`output_within`] runs it.
pub fn readlab_within<S: AsRef<std::ffi::OsStr>>(
    cwd: &Path,
    args: &[S],
    limit: Duration,
) -> Output {
    let mut cmd = bin();
    cmd.args(args);
    output_within(cmd, cwd, limit)
}

/// `o` exited with `code` and said exactly one line on stderr, holding every phrase of `says`:
/// how readlab refuses bad input. The line is returned.
pub fn one_line(o: &Output, code: i32, says: &[&str]) -> String {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(code), "stderr: {err}");
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "expected one line on stderr, got: {err}");
    for phrase in says {
        assert!(lines[0].contains(phrase), "{phrase:?} not in: {err}");
    }
    lines[0].to_string()
}

/// A result's `engine_features` (the field must be an array of strings).
pub fn engine_features(r: &serde_json::Value) -> Vec<&str> {
    r["engine_features"]
        .as_array()
        .unwrap_or_else(|| panic!("engine_features is not an array: {r}"))
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect()
}

/// A profile like `readlab tune` writes, for `target`, with `edit` applied to its configuration.
pub fn profile(path: &Path, target: &Path, edit: impl Fn(&mut serde_json::Value)) {
    let line = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/results-small.jsonl"
    ))
    .unwrap();
    let doc: serde_json::Value = serde_json::from_str(line.lines().next().unwrap()).unwrap();
    let mut config = doc["config"].clone();
    config["target"] = target.to_str().unwrap().into();
    edit(&mut config);
    let p = serde_json::json!({
        "schema": "readlab.profile/1",
        "goal": "balanced",
        "label": "P",
        "config": config,
        "expected": {
            "config": config, "label": "P", "iops": 1000.0, "mb_s": 4.0,
            "p999_ns": 100000, "p50_ns": 50000, "cpu_cores": 0.1
        }
    });
    std::fs::write(path, serde_json::to_string_pretty(&p).unwrap()).unwrap();
}
