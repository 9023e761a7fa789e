//! End-to-end: a signal stops every command that measures in a series, and says so by its exit
//! code — 130 for SIGINT (Ctrl-C), 143 for SIGTERM: `run --repeat` with short runs (the stop
//! falls between runs), a multi-configuration `run`, `tune` (nothing recommended, no profile
//! written from a partial search) and `quick`. And the inputs that could keep a command from
//! ever ending are refused at once with exit 2: posixaio with a queue glibc would take minutes
//! to drain, a `--profile` that is a FIFO or /dev/zero. Under mpirun (feature `mpi`): the one
//! line saying which rank failed is never lost, and what cannot run across ranks is refused.

// Built with `mpi` (scripts/test's second pass) only the MPI test runs: the helpers of the others
// are unused there.
#![cfg_attr(feature = "mpi", allow(dead_code, unused_imports))]

mod common;
use common::*;
use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A started readlab whose stderr is collected as it comes.
struct Running {
    child: Child,
    err: Arc<Mutex<String>>,
    reader: Option<std::thread::JoinHandle<()>>,
    started: Instant,
}

impl Running {
    fn start(args: &[&str]) -> Running {
        let mut child = bin()
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start readlab");
        let err = Arc::new(Mutex::new(String::new()));
        let mut pipe = child.stderr.take().unwrap();
        let sink = err.clone();
        let reader = std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        Running {
            child,
            err,
            reader: Some(reader),
            started: Instant::now(),
        }
    }

    fn stderr(&self) -> String {
        self.err.lock().unwrap().clone()
    }

    /// Wait (at most `limit`) until stderr says `what`.
    fn wait_for(&mut self, what: &str, limit: Duration) {
        let end = Instant::now() + limit;
        while !self.stderr().contains(what) {
            if Instant::now() > end || self.child.try_wait().unwrap().is_some() {
                let _ = self.child.kill();
                panic!("never said {what:?} within {limit:?}: {}", self.stderr());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn signal(&self, sig: &str) {
        let ok = Command::new("kill")
            .args([sig, &self.child.id().to_string()])
            .status()
            .unwrap()
            .success();
        assert!(ok, "kill {sig}");
    }

    /// Wait at most `limit` for the end; killed (and the test failed) past it. Returns the exit
    /// code, stderr and how long after `since` it ended.
    fn end_within(mut self, limit: Duration, since: Instant) -> (Option<i32>, String, Duration) {
        loop {
            if let Some(st) = self.child.try_wait().unwrap() {
                let took = since.elapsed();
                if let Some(r) = self.reader.take() {
                    r.join().unwrap();
                }
                return (st.code(), self.stderr(), took);
            }
            if since.elapsed() > limit {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!(
                    "still running {limit:?} after the signal ({:?} since start): {}",
                    self.started.elapsed(),
                    self.stderr()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Run `args`, killed (and the test failed) past `limit`.
fn output_within(args: &[&str], limit: Duration) -> Output {
    let child = bin()
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start readlab");
    wait_within(child, limit, &format!("readlab {}", args.join(" "))).0
}

/// `run --repeat 50` of 100 ms runs: Ctrl-C falls between two runs most of the time, and must
/// still end the series, exit 130 (143 for SIGTERM).
#[cfg(not(feature = "mpi"))]
#[test]
fn a_signal_between_short_repeated_runs_stops_the_series() {
    let dir = disk_dir();
    let f = prepare(dir.path(), "t.dat", "16M");
    for (sig, code) in [("-INT", 130), ("-TERM", 143)] {
        let r = Running::start(&["run", "--repeat", "50", "--runtime", "100ms", s(&f)]);
        // The series is under way: a few runs ended.
        std::thread::sleep(Duration::from_millis(1500));
        let at = Instant::now();
        r.signal(sig);
        let (got, err, took) = r.end_within(Duration::from_secs(10), at);
        assert_eq!(got, Some(code), "{sig}: {err}");
        assert!(err.contains("interrupted"), "{sig}: {err}");
        assert!(took < Duration::from_secs(3), "{sig}: ended {took:?} after");
    }
}

/// Twenty configurations of 100 ms runs: a signal ends the list, not just the run in flight.
#[cfg(not(feature = "mpi"))]
#[test]
fn a_signal_stops_a_multi_configuration_run() {
    let dir = disk_dir();
    let f = prepare(dir.path(), "t.dat", "16M");
    let r = Running::start(&[
        "run",
        "--engine",
        "psync,pvsync2",
        "--bs",
        "4k,8k,16k,32k,64k",
        "--numjobs",
        "1,2",
        "--runtime",
        "100ms",
        s(&f),
    ]);
    std::thread::sleep(Duration::from_millis(1500));
    let at = Instant::now();
    r.signal("-INT");
    let (got, err, took) = r.end_within(Duration::from_secs(10), at);
    assert_eq!(got, Some(130), "{err}");
    assert!(took < Duration::from_secs(3), "ended {took:?} after");
}

/// An interrupted `tune` recommends nothing from its partial search and writes no profile:
/// exit 130 for SIGINT, 143 for SIGTERM.
#[cfg(not(feature = "mpi"))]
#[test]
fn an_interrupted_tune_recommends_nothing_and_says_so() {
    let dir = disk_dir();
    let f = prepare(dir.path(), "t.dat", "32M");
    for (sig, code) in [("-INT", 130), ("-TERM", 143)] {
        let out = dir.path().join(format!("tune{code}"));
        let mut r = Running::start(&[
            "tune",
            "--engines",
            "psync",
            "--budget",
            "60s",
            "--out",
            s(&out),
            s(&f),
        ]);
        // Two points measured: the search is under way.
        r.wait_for(" IOPS ", Duration::from_secs(40));
        let at = Instant::now();
        r.signal(sig);
        let (got, err, took) = r.end_within(Duration::from_secs(15), at);
        assert_eq!(got, Some(code), "{sig}: {err}");
        assert!(unwrapped(&err).contains("tune interrupted"), "{sig}: {err}");
        assert!(
            took < Duration::from_secs(10),
            "{sig}: ended {took:?} after"
        );
        let profiles: Vec<_> = std::fs::read_dir(&out)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("profile") || n == "tune.json")
            .collect();
        assert!(profiles.is_empty(), "{sig}: written anyway: {profiles:?}");
    }
}

/// An interrupted `quick` exits 130, not 0.
#[cfg(not(feature = "mpi"))]
#[test]
fn an_interrupted_quick_exits_130() {
    let dir = disk_dir();
    let mut r = Running::start(&["quick", "--runtime", "2s", "--dir", s(dir.path())]);
    // Interrupted while it measures (not while it prepares its scratch file).
    r.wait_for("[1/", Duration::from_secs(120));
    std::thread::sleep(Duration::from_millis(500));
    let at = Instant::now();
    r.signal("-INT");
    let (got, err, took) = r.end_within(Duration::from_secs(15), at);
    assert_eq!(got, Some(130), "{err}");
    assert!(err.contains("interrupted"), "{err}");
    assert!(took < Duration::from_secs(10), "ended {took:?} after");
}

/// posixaio at a queue glibc would take minutes to drain (every queued read runs, one after
/// another, before the run can end) is refused at once, naming what to use instead.
#[cfg(not(feature = "mpi"))]
#[test]
fn posixaio_with_a_queue_it_cannot_drain_is_refused() {
    let dir = disk_dir();
    let f = prepare(dir.path(), "t.dat", "16M");
    for depth in ["10000", "100000", "257"] {
        let o = output_within(
            &[
                "run",
                "--engine",
                "posixaio",
                "--iodepth",
                depth,
                "--runtime",
                "300ms",
                s(&f),
            ],
            Duration::from_secs(20),
        );
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "--iodepth {depth}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains("posixaio") && err.contains("uring"), "{err}");
    }
    // The cap itself runs, and ends within a few seconds of its runtime.
    let start = Instant::now();
    let o = output_within(
        &[
            "run",
            "--engine",
            "posixaio",
            "--iodepth",
            "256",
            "--runtime",
            "300ms",
            "-q",
            s(&f),
        ],
        Duration::from_secs(30),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
}

/// A profile is a small regular file: /dev/zero (read without end: 8 GB in 15 s), a FIFO (a read
/// that blocks for ever), a directory and a file past 1 MiB are refused at once, exit 2.
#[cfg(not(feature = "mpi"))]
#[test]
fn a_profile_that_is_not_a_small_regular_file_is_refused() {
    let dir = disk_dir();
    let fifo = dir.path().join("fifo");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let big = dir.path().join("big.json");
    std::fs::write(&big, vec![b' '; (1 << 20) + 10]).unwrap();
    for p in [
        Path::new("/dev/zero"),
        fifo.as_path(),
        dir.path(),
        big.as_path(),
    ] {
        let o = output_within(&["run", "--profile", s(p)], Duration::from_secs(10));
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{}: {err}", p.display());
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains("profile"), "{err}");
    }
}

/// Under mpirun (three ranks on two busy cores), the one line naming the failed rank is said
/// every time: rank 0 says it before MPI is finalised, and the others exit only after.
#[cfg(feature = "mpi")]
mod mpi {
    use super::*;

    fn mpirun(n: usize, args: &[&str]) -> Output {
        let mut c = Command::new("mpirun");
        c.args([
            "--allow-run-as-root",
            "--oversubscribe",
            "-n",
            &n.to_string(),
        ])
        .arg(env!("CARGO_BIN_EXE_readlab"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
        let child = c.spawn().expect("start mpirun (openmpi-bin)");
        let what = format!("mpirun readlab {}", args.join(" "));
        wait_within(child, Duration::from_secs(60), &what).0
    }

    /// Both cores kept busy while `f` runs.
    fn busy<T>(f: impl FnOnce() -> T) -> T {
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let spinners: Vec<_> = (0..2)
            .map(|_| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                        std::hint::spin_loop();
                    }
                })
            })
            .collect();
        let r = f();
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        for s in spinners {
            s.join().unwrap();
        }
        r
    }

    #[test]
    fn the_failed_rank_is_always_named_and_unrunnable_studies_are_refused() {
        let dir = disk_dir();
        prepare(dir.path(), "t0", "8M");
        prepare(dir.path(), "t1", "8M");
        let template = dir.path().join("t{rank}");
        let template = s(&template);
        busy(|| {
            for i in 0..12 {
                let o = mpirun(3, &["run", "--runtime", "5s", template]);
                let err = stderr(&o);
                assert_eq!(o.status.code(), Some(2), "try {i}: {err}");
                assert!(
                    err.contains("1 of 3 ranks failed: rank 2 ("),
                    "try {i}: the line was lost: {err}"
                );
                assert_eq!(err.matches("ranks failed").count(), 1, "try {i}: {err}");
            }
        });
        let out = dir.path().join("study");
        let json = dir.path().join("study.json");
        for args in [
            vec!["study", "scheduler", "--quick", "--out", s(&out), template],
            vec![
                "study",
                "latency",
                "--quick",
                "--json",
                s(&json),
                "--out",
                s(&out),
                template,
            ],
        ] {
            let o = mpirun(2, &args);
            let err = stderr(&o);
            assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
            assert_eq!(err.matches("readlab: error").count(), 1, "{args:?}: {err}");
            assert!(!out.exists() && !json.exists(), "{args:?}: wrote anyway");
        }
    }
}
