//! End-to-end (issue 10 §3): `prepare` destroys nothing it must not — a mounted filesystem, a
//! device open exclusively, a foreign file wearing a copied readlab header — checks free space up
//! front, stops promptly on Ctrl-C / SIGTERM leaving nothing called prepared; two studies never
//! share a results directory, and `--resume` beside a running study changes nothing.

use crate::common;
use common::*;
use std::collections::HashSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

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

fn signal(child: &Child, sig: rustix::process::Signal) {
    let pid = rustix::process::Pid::from_child(child);
    rustix::process::kill_process(pid, sig).unwrap();
}

/// Wait for `child` at most `limit`; kill it (and fail) if it is still running.
fn wait_at_most(child: Child, limit: Duration, what: &str) -> Output {
    wait_within(child, limit, what).0
}

fn wait_until(limit: Duration, what: &str, mut ok: impl FnMut() -> bool) {
    let t = Instant::now();
    while !ok() {
        assert!(t.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn spawn(args: &[&str]) -> Child {
    bin()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start readlab")
}

/// An ext4 filesystem on a loop device over a /dev/shm file, mounted; everything undone on drop.
struct MountedExt4 {
    dev: String,
    backing: PathBuf,
    mnt: tempfile::TempDir,
    mounted: bool,
}

impl MountedExt4 {
    fn new() -> MountedExt4 {
        assert!(
            is_root(),
            "loop devices and mount need root (CI runs as root)"
        );
        let backing = PathBuf::from(format!(
            "/dev/shm/readlab-noharm-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        std::fs::File::create(&backing)
            .unwrap()
            .set_len(64 << 20)
            .unwrap();
        let mut m = MountedExt4 {
            dev: String::new(),
            backing,
            mnt: tempfile::tempdir().unwrap(),
            mounted: false,
        };
        let o = Command::new("losetup")
            .args(["--find", "--show", m.backing.to_str().unwrap()])
            .output()
            .expect("losetup (util-linux)");
        assert!(o.status.success(), "losetup: {}", stderr(&o));
        m.dev = stdout(&o).trim().to_string();
        let o = Command::new("mkfs.ext4")
            .args(["-q", "-F", &m.dev])
            .output()
            .expect("mkfs.ext4 (e2fsprogs)");
        assert!(o.status.success(), "mkfs.ext4: {}", stderr(&o));
        let o = Command::new("mount")
            .args([&m.dev, m.mnt.path().to_str().unwrap()])
            .output()
            .expect("mount");
        assert!(o.status.success(), "mount: {}", stderr(&o));
        m.mounted = true;
        m
    }
}

impl Drop for MountedExt4 {
    fn drop(&mut self) {
        if self.mounted {
            let _ = Command::new("umount").arg(self.mnt.path()).status();
        }
        if !self.dev.is_empty() {
            let _ = Command::new("losetup").args(["-d", &self.dev]).status();
        }
        let _ = std::fs::remove_file(&self.backing);
    }
}

#[test]
fn a_mounted_filesystem_is_never_wiped_even_with_overwrite() {
    let fs = MountedExt4::new();
    let precious = fs.mnt.path().join("precious.txt");
    std::fs::write(&precious, b"my thesis, final version").unwrap();
    Command::new("sync").status().unwrap();
    for args in [
        vec!["prepare", &fs.dev, "--overwrite"],
        vec!["prepare", &fs.dev, "--overwrite", "--size", "1m"],
        vec!["prepare", &fs.dev],
    ] {
        let o = run(&args);
        assert_refused(&o, "mounted at");
    }
    // The filesystem is intact: its file reads back, and it unmounts and checks clean.
    assert_eq!(
        std::fs::read(&precious).unwrap(),
        b"my thesis, final version"
    );
    let o = Command::new("umount").arg(fs.mnt.path()).output().unwrap();
    assert!(o.status.success(), "umount: {}", stderr(&o));
    let o = Command::new("fsck.ext4")
        .args(["-n", "-f", &fs.dev])
        .output()
        .expect("fsck.ext4");
    assert!(o.status.success(), "fsck: {}{}", stdout(&o), stderr(&o));
    let _ = Command::new("mount")
        .args([&fs.dev, fs.mnt.path().to_str().unwrap()])
        .status();
}

#[test]
fn a_device_open_exclusively_elsewhere_is_refused() {
    let lo = LoopDev::prepared("8M");
    let before = run(&["info", "--output", "json", &lo.dev]);
    assert!(before.status.success(), "{}", stderr(&before));
    // Hold the device the way a filesystem or volume manager does.
    use std::os::unix::fs::OpenOptionsExt;
    let held = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_EXCL)
        .open(&lo.dev)
        .unwrap();
    let o = run(&["prepare", &lo.dev, "--overwrite", "--size", "1m"]);
    assert_refused(&o, "busy");
    drop(held);
    // Untouched: still the same readlab image.
    let after = run(&["info", "--output", "json", &lo.dev]);
    assert_eq!(
        json(&before)["target"]["prepared_id"],
        json(&after)["target"]["prepared_id"]
    );
}

#[test]
fn a_foreign_file_with_a_copied_readlab_header_is_refused() {
    let d = disk_dir();
    let src = prepare(d.path(), "src", "1M");
    let mut bytes = std::fs::read(&src).unwrap()[..4096].to_vec();
    bytes.extend(std::iter::repeat_n(b'd', (1 << 20) - 4096));
    let foreign = d.path().join("foreign");
    std::fs::write(&foreign, &bytes).unwrap();
    let before = digest(&foreign);
    let o = run(&["prepare", foreign.to_str().unwrap(), "--size", "1m"]);
    assert_refused(&o, "--overwrite");
    let o = run(&["prepare", foreign.to_str().unwrap(), "--size", "2m"]);
    assert_refused(&o, "--overwrite");
    assert_eq!(digest(&foreign), before);
    // A real readlab file is still re-prepared without the flag.
    let o = run(&["prepare", src.to_str().unwrap(), "--size", "2m"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// A private 64 MiB tmpfs, unmounted on drop (a small filesystem to run out of).
struct SmallTmpfs(tempfile::TempDir);

impl SmallTmpfs {
    fn new() -> SmallTmpfs {
        assert!(is_root(), "mount needs root (CI runs as root)");
        let d = tempfile::tempdir().unwrap();
        let o = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=64m", "readlab-test"])
            .arg(d.path())
            .output()
            .expect("mount");
        assert!(o.status.success(), "mount tmpfs: {}", stderr(&o));
        SmallTmpfs(d)
    }
}

impl Drop for SmallTmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.0.path()).status();
    }
}

#[test]
fn a_size_larger_than_the_free_space_is_refused_up_front() {
    let small = SmallTmpfs::new();
    let disk = disk_dir();
    for (dir, size) in [
        (small.0.path(), "100m"),
        (small.0.path(), "8t"),
        (disk.path(), "8t"),
    ] {
        let f = dir.join("huge");
        let t = Instant::now();
        let child = spawn(&["prepare", f.to_str().unwrap(), "--size", size]);
        let o = wait_at_most(child, Duration::from_secs(10), "prepare of a huge size");
        assert_refused(&o, "not enough free space");
        assert!(t.elapsed() < Duration::from_secs(5));
        assert!(!f.exists(), "{} was created", f.display());
    }
    // What fits is written.
    let f = small.0.path().join("fits");
    let o = run(&["prepare", f.to_str().unwrap(), "--size", "16m"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// Start `prepare FILE --size 20g`, wait until it is writing, send `sig`, and return its output.
fn interrupt_prepare(f: &Path, sig: rustix::process::Signal) -> Output {
    let child = spawn(&["prepare", f.to_str().unwrap(), "--size", "20g"]);
    // The file reaches its full length once the marker is durable; then data is being written.
    wait_until(Duration::from_secs(20), "prepare to start writing", || {
        std::fs::metadata(f).is_ok_and(|m| m.len() == 20 << 30)
    });
    std::thread::sleep(Duration::from_millis(300));
    signal(&child, sig);
    wait_at_most(child, Duration::from_secs(5), "interrupted prepare")
}

fn assert_not_prepared(f: &Path) {
    let o = run(&["info", f.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("not prepared by readlab"),
        "{}",
        stdout(&o)
    );
    let o = run(&[
        "run",
        "--verify",
        "--runtime",
        "1s",
        "-q",
        f.to_str().unwrap(),
    ]);
    assert_refused(&o, "not written by `readlab prepare`");
}

#[test]
fn ctrl_c_stops_prepare_and_nothing_is_called_prepared() {
    let d = disk_dir();
    // Over a readlab file: interrupted, it is not prepared, and a plain prepare takes it back.
    let f = prepare(d.path(), "f", "4M");
    let o = interrupt_prepare(&f, rustix::process::Signal::INT);
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    assert!(stderr(&o).contains("interrupted"), "{}", stderr(&o));
    assert_not_prepared(&f);
    let o = run(&["prepare", f.to_str().unwrap(), "--size", "1m"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(&[
        "run",
        "--verify",
        "--runtime",
        "1s",
        "-q",
        f.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));

    // A new file: interrupted, nothing is left behind.
    let g = d.path().join("g");
    let o = interrupt_prepare(&g, rustix::process::Signal::INT);
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    assert!(!g.exists(), "the partial file was left behind");
}

#[test]
fn sigterm_stops_prepare_with_143() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "4M");
    let o = interrupt_prepare(&f, rustix::process::Signal::TERM);
    assert_eq!(o.status.code(), Some(143), "{}", stderr(&o));
    assert_not_prepared(&f);
}

fn lines(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("unparseable ({e}): {l}")))
        .collect()
}

/// A threads study (8 points of about 1.2 s) running into `out`, once it has stored `points`.
fn running_study(f: &Path, out: &Path, points: usize) -> Child {
    let child = spawn(&[
        "study",
        "threads",
        "--quick",
        "--max-threads",
        "8",
        "--out",
        out.to_str().unwrap(),
        f.to_str().unwrap(),
    ]);
    wait_until(Duration::from_secs(60), "the study's first points", || {
        lines(&out.join("results.jsonl")).len() >= points
    });
    child
}

/// Stop the study with SIGINT; every point it says it measured is in the file, once.
fn finish_study(child: Child, out: &Path) {
    signal(&child, rustix::process::Signal::INT);
    let o = wait_at_most(child, Duration::from_secs(30), "interrupted study");
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    let measured = points_measured(&stderr(&o)).expect("the study says what it measured");
    let docs = lines(&out.join("results.jsonl"));
    assert_eq!(docs.len(), measured, "{}", stderr(&o));
    let keys: HashSet<String> = docs
        .iter()
        .map(|v| format!("{}|{}", v["study"], v["config"]))
        .collect();
    assert_eq!(keys.len(), docs.len(), "duplicated points");
}

/// "readlab: 8 points measured, 0 already done; …" → 8
fn points_measured(err: &str) -> Option<usize> {
    err.lines().find_map(|l| {
        let (n, rest) = l.strip_prefix("readlab: ")?.split_once(' ')?;
        rest.starts_with("points measured")
            .then(|| n.parse().ok())
            .flatten()
    })
}

#[test]
fn two_studies_never_share_a_results_directory() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "32M");
    let out = d.path().join("o");
    let first = running_study(&f, &out, 0);
    wait_until(Duration::from_secs(20), "the lock", || {
        out.join("results.jsonl").exists()
    });
    let t = Instant::now();
    let o = run(&[
        "study",
        "latency",
        "--quick",
        "--out",
        out.to_str().unwrap(),
        f.to_str().unwrap(),
    ]);
    assert_refused(&o, &format!("pid {}", first.id()));
    assert!(stderr(&o).contains("in use by another readlab run"));
    assert!(t.elapsed() < Duration::from_secs(5));
    finish_study(first, &out);
}

#[test]
fn resume_beside_a_running_study_changes_nothing() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "32M");
    let out = d.path().join("o");
    let results = out.join("results.jsonl");
    let first = running_study(&f, &out, 1);
    let before = std::fs::read_to_string(&results).unwrap();
    let ino = std::fs::metadata(&results).unwrap().ino();
    let o = run(&[
        "study",
        "threads",
        "--quick",
        "--max-threads",
        "8",
        "--resume",
        "--out",
        out.to_str().unwrap(),
        f.to_str().unwrap(),
    ]);
    assert_refused(&o, &format!("pid {}", first.id()));
    // The running study's file was neither replaced nor rewritten: it only grew.
    assert_eq!(std::fs::metadata(&results).unwrap().ino(), ino);
    assert!(
        std::fs::read_to_string(&results)
            .unwrap()
            .starts_with(&before)
    );
    finish_study(first, &out);
    // Afterwards resume works as before.
    let o = run(&[
        "study",
        "threads",
        "--quick",
        "--max-threads",
        "8",
        "--resume",
        "--out",
        out.to_str().unwrap(),
        f.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(lines(&results).len(), 8);
}
