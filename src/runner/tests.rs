//! The runner driven by the scripted fake engine: counts, latencies, errors, verification, stop
//! conditions and the open-loop schedule, each checked against what the script makes happen.
//! Timing bounds are generous: the machine running the tests may be busy.

use super::{EngineFactory, Observer, Silent, Tick, run_with};
use crate::config::{Arrivals, Rate, RunConfig, Rw};
use crate::data;
use crate::engine::fake::{Act, Fake, Script, Which};
use crate::engine::{Engine, EngineKind, EngineSetup, Pvsync2Options, UringOptions};
use crate::error::{Error, Result};
use crate::result::{EndedBy, RunResult};
use crate::stability::StopRule;
use std::io::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const BS: u64 = 4096;
const FILE_ID: u64 = 0x5eed_f00d;
const MS: Duration = Duration::from_millis(1);

/// A target of `blocks` 4 KiB blocks in readlab's prepared format, so runs can verify it.
fn prepared(blocks: u64) -> tempfile::NamedTempFile {
    let mut f = tempfile::NamedTempFile::new().unwrap();
    let mut buf = vec![0u8; (blocks * BS) as usize];
    data::fill(FILE_ID, 0, &mut buf);
    f.write_all(&buf).unwrap();
    f.flush().unwrap();
    f
}

/// A buffered, verified, sequential run of one thread; `iodepth` > 1 needs an asynchronous kind.
fn config(target: &tempfile::NamedTempFile, iodepth: usize) -> RunConfig {
    RunConfig {
        engine: if iodepth > 1 {
            EngineKind::Uring
        } else {
            EngineKind::Psync
        },
        iodepth,
        direct: false,
        verify: true,
        rw: Rw::Read,
        runtime: Duration::from_secs(10),
        ..RunConfig::new(target.path())
    }
}

fn factory(script: Script) -> impl Fn(usize, EngineSetup) -> Result<Box<dyn Engine>> + Sync {
    move |_, setup| Ok(Box::new(Fake::new(setup, script.clone())?))
}

/// A result's warnings about the run itself, without those on how far its figures can be trusted
/// (this test target is a buffered file in the page cache; fake runs are short).
fn problems(r: &RunResult) -> Vec<&str> {
    r.warnings
        .iter()
        .map(String::as_str)
        .filter(|w| {
            !(w.contains("measuring RAM")
                || w.contains("measured RAM")
                || w.starts_with("only ")
                || w.starts_with("other processes")
                || w.starts_with("the measured window was only")
                || w.starts_with("the hypervisor"))
        })
        .collect()
}

fn run_script(cfg: &RunConfig, script: Script) -> Result<RunResult> {
    run_with(cfg, &Silent, &factory(script)).map(|d| d.result)
}

#[test]
fn every_io_and_byte_is_counted_and_verified() {
    let f = prepared(64);
    let mut cfg = config(&f, 4);
    cfg.threads = 2;
    cfg.blocks_per_request = 2;
    cfg.io_limit = Some(16 * BS); // 8 requests of 2 blocks per thread
    let r = run_script(&cfg, Script::new()).unwrap();
    assert_eq!(r.ended_by, EndedBy::IoLimit);
    assert_eq!((r.requests, r.ios, r.bytes), (16, 32, 32 * BS));
    assert_eq!(r.latency.count, 16);
    assert_eq!(r.timeline.iter().map(|p| p.ios).sum::<u64>(), 32);
    let v = r.verify.as_ref().expect("verified run");
    assert_eq!((v.checked_ios, v.mismatches), (32, 0));
    assert_eq!(r.errors.count, 0);
    assert!(!r.failed());
    assert_eq!(r.engine_features, ["fake"]);
    assert!(r.service_latency.is_none() && r.handoff_latency.is_none());
}

/// `--sample-every`: a scan of one thread gives one sample per stretch, in offset order, adding
/// up to every byte read, each with a throughput.
#[test]
fn a_scan_is_sampled_every_n_bytes() {
    let f = prepared(64);
    let mut cfg = config(&f, 1);
    cfg.io_limit = Some(64 * BS);
    cfg.sample_bytes = Some(16 * BS);
    let r = run_script(&cfg, Script::new()).unwrap();
    let offsets: Vec<u64> = r.offset_samples.iter().map(|s| s.offset).collect();
    assert_eq!(offsets, [0, 16 * BS, 32 * BS, 48 * BS]);
    assert_eq!(
        r.offset_samples.iter().map(|s| s.bytes).sum::<u64>(),
        r.bytes
    );
    assert!(r.offset_samples.iter().all(|s| s.mb_s > 0.0 && s.t_s > 0.0));
    assert!(r.offset_samples.windows(2).all(|w| w[0].t_s <= w[1].t_s));
    cfg.sample_bytes = None;
    assert!(
        run_script(&cfg, Script::new())
            .unwrap()
            .offset_samples
            .is_empty()
    );
}

#[test]
fn each_worker_gets_its_own_engine() {
    let f = prepared(64);
    let mut cfg = config(&f, 1);
    cfg.threads = 3;
    cfg.io_limit = Some(4 * BS);
    let seen = Mutex::new(Vec::new());
    let open = |i: usize, setup: EngineSetup| -> Result<Box<dyn Engine>> {
        seen.lock().unwrap().push(i);
        Ok(Box::new(Fake::new(setup, Script::new())?))
    };
    let r = run_with(&cfg, &Silent, &open).unwrap().result;
    assert_eq!(r.ios, 12);
    let mut seen = seen.into_inner().unwrap();
    seen.sort();
    assert_eq!(seen, [0, 1, 2]);
}

#[test]
fn latency_is_the_scripted_service_time() {
    let f = prepared(64);
    let mut cfg = config(&f, 1);
    cfg.runtime = Duration::from_millis(600);
    let service = 3 * MS;
    let r = run_script(&cfg, Script::new().delay(service).report_service()).unwrap();
    assert_eq!(r.ended_by, EndedBy::Runtime);
    let l = &r.latency;
    assert!(l.min_ns >= service.as_nanos() as u64, "{l:?}");
    assert!(l.p50_ns < (service + 20 * MS).as_nanos() as u64, "{l:?}");
    // At most one I/O per service time, and not far fewer.
    assert!((20..=200).contains(&r.ios), "{} I/Os", r.ios);
    // The engine's own service time is recorded as given; hand-off is the rest.
    let s = r.service_latency.as_ref().expect("service time reported");
    let want = service.as_nanos() as f64;
    assert!((s.p50_ns as f64 - want).abs() < want * 0.01, "{s:?}");
    let h = r.handoff_latency.as_ref().expect("hand-off derived");
    assert_eq!(h.count, s.count);
    assert!(h.p50_ns < (20 * MS).as_nanos() as u64, "{h:?}");
}

#[test]
fn latency_counts_each_request_from_its_own_submission() {
    let f = prepared(64);
    let mut cfg = config(&f, 4);
    cfg.io_limit = Some(8 * BS);
    // The first read is slow and overtaken by the three queued with it.
    let slow = 60 * MS;
    let script = Script::new().delay(MS).on(Which::Seq(0), Act::Delay(slow));
    let r = run_script(&cfg, script).unwrap();
    assert_eq!(r.ios, 8);
    let l = &r.latency;
    assert!(l.max_ns >= slow.as_nanos() as u64, "{l:?}");
    assert!(l.p50_ns < (slow / 2).as_nanos() as u64, "{l:?}");
    assert!(l.min_ns >= MS.as_nanos() as u64, "{l:?}");
}

#[test]
fn errors_and_short_reads_are_counted_with_their_offsets() {
    let f = prepared(64);
    let mut cfg = config(&f, 1);
    cfg.io_limit = Some(16 * BS); // one pass over blocks 0..16
    let script = Script::new()
        .on(Which::Offset(5 * BS), Act::Short(100))
        .on(Which::Offset(3 * BS), Act::Errno(libc::EIO));
    let r = run_script(&cfg, script).unwrap();
    assert_eq!(r.errors.count, 2);
    let first: Vec<_> = r
        .errors
        .first
        .iter()
        .map(|e| (e.offset, e.len, e.errno, e.message.as_str()))
        .collect();
    assert_eq!(
        first,
        [
            (3 * BS, BS, libc::EIO, "Input/output error (os error 5)"),
            (5 * BS, BS, 0, "short read: 100 of 4096 bytes"),
        ]
    );
    // Failed requests are counted as errors, not as measured I/Os.
    assert_eq!(r.ios, 14);
    assert_eq!(r.verify.as_ref().unwrap().checked_ios, 14);
    assert!(r.failed());
    assert!(problems(&r).is_empty(), "{:?}", r.warnings);
}

#[test]
fn a_worker_whose_first_reads_all_fail_stops_the_run() {
    let f = prepared(64);
    let cfg = config(&f, 1);
    let t = Instant::now();
    let e = run_script(&cfg, Script::new().on(Which::All, Act::Errno(libc::EIO))).unwrap_err();
    assert!(matches!(e, Error::ReadsFailed { .. }), "{e:?}");
    assert_eq!(
        e.to_string(),
        "every read failed (256 of 256), first at offset 0: Input/output error (os error 5)"
    );
    assert!(
        t.elapsed() < Duration::from_secs(5),
        "ran {:?}",
        t.elapsed()
    );
}

#[test]
fn one_good_read_keeps_a_failing_run_going() {
    let f = prepared(64);
    let mut cfg = config(&f, 1);
    cfg.runtime = Duration::from_millis(300);
    let script = Script::new().on(Which::Seqs(1..u64::MAX), Act::Errno(libc::EIO));
    let r = run_script(&cfg, script).unwrap();
    assert_eq!(r.ended_by, EndedBy::Runtime);
    assert!(r.errors.count > 256, "{} errors", r.errors.count);
    assert_eq!(r.errors.first.len(), 16);
    assert_eq!(r.ios, 1);
}

#[test]
fn a_run_whose_few_reads_all_failed_says_so() {
    let f = prepared(64);
    let mut cfg = config(&f, 1);
    cfg.io_limit = Some(10 * BS);
    let r = run_script(&cfg, Script::new().on(Which::All, Act::Errno(libc::EIO))).unwrap();
    assert_eq!((r.ios, r.errors.count), (0, 10));
    assert_eq!(
        problems(&r),
        ["every read failed; first at offset 0: Input/output error (os error 5)"]
    );
}

#[test]
fn a_corrupted_byte_is_reported_at_its_offset() {
    let f = prepared(64);
    let mut cfg = config(&f, 1);
    cfg.io_limit = Some(16 * BS);
    let r = run_script(
        &cfg,
        Script::new().on(Which::Offset(2 * BS), Act::Corrupt(100)),
    )
    .unwrap();
    let v = r.verify.as_ref().unwrap();
    assert_eq!((v.checked_ios, v.mismatches), (16, 1));
    assert_eq!(
        (v.first[0].offset, v.first[0].sector),
        (2 * BS + 100, 2 * BS)
    );
    assert_eq!(r.errors.count, 0);
    assert!(r.failed());
    // Without --verify nothing is checked.
    cfg.verify = false;
    let r = run_script(
        &cfg,
        Script::new().on(Which::Offset(2 * BS), Act::Corrupt(100)),
    )
    .unwrap();
    assert!(r.verify.is_none() && !r.failed());
}

#[test]
fn the_runtime_ends_the_window() {
    let f = prepared(64);
    let mut cfg = config(&f, 2);
    cfg.rw = Rw::Randread;
    cfg.runtime = Duration::from_millis(400);
    let t = Instant::now();
    let r = run_script(&cfg, Script::new().delay(MS)).unwrap();
    assert_eq!(r.ended_by, EndedBy::Runtime);
    assert!((0.39..=0.4).contains(&r.seconds), "{}", r.seconds);
    assert!(t.elapsed() < Duration::from_secs(5));
    assert!(r.ios > 0);
}

#[test]
fn an_io_limit_ends_the_window_at_the_last_completion() {
    // 20 reads of 1 ms each take ~20 ms; the runner's thread looks at the workers only every
    // 200 ms, and that wait once stretched the window (a scan read 25 % slow).
    let f = prepared(64);
    let mut cfg = config(&f, 1);
    cfg.io_limit = Some(20 * BS);
    // A sample per block: the last one is when the last read completed.
    cfg.sample_bytes = Some(BS);
    let r = run_script(&cfg, Script::new().delay(MS)).unwrap();
    assert_eq!(r.ended_by, EndedBy::IoLimit);
    assert_eq!(r.ios, 20);
    let last_read = r.offset_samples.iter().map(|s| s.t_s).fold(0.0, f64::max);
    assert!(last_read >= 0.02, "{last_read} s");
    assert!(
        (r.seconds - last_read).abs() < 1e-6,
        "window {} s, last read at {last_read} s",
        r.seconds
    );
    // Every rate is the run's bytes and requests over that one window.
    let want = r.bytes as f64 / r.seconds / 1e6;
    assert!((r.mb_s - want).abs() < want * 1e-9, "{} vs {want}", r.mb_s);
    assert!((r.iops - r.ios as f64 / r.seconds).abs() < 1e-6 * r.iops);
    let last = r.timeline.last().expect("a timeline");
    assert!((last.t_s - r.seconds).abs() < 1e-9, "{:?}", r.timeline);
    // The achieved depth is about one request in flight over the window, not diluted by the
    // idle time after it (a busy machine may deschedule the worker between reads).
    let depth = r.achieved_depth.unwrap();
    assert!(depth > 0.5, "achieved depth {depth}");
}

/// Cancels the run at its `n`-th tick and counts the ticks it saw.
struct CancelAt(usize, AtomicUsize);

impl Observer for CancelAt {
    fn tick(&self, _: &Tick) {
        self.1.fetch_add(1, Ordering::Relaxed);
    }
    fn cancelled(&self) -> bool {
        self.1.load(Ordering::Relaxed) >= self.0
    }
}

#[test]
fn an_observer_that_cancels_interrupts_the_run() {
    let f = prepared(64);
    let cfg = config(&f, 1);
    let obs = CancelAt(2, AtomicUsize::new(0));
    let t = Instant::now();
    let r = run_with(&cfg, &obs, &factory(Script::new().delay(MS)))
        .unwrap()
        .result;
    assert_eq!(r.ended_by, EndedBy::Interrupted);
    assert!(
        t.elapsed() < Duration::from_secs(5),
        "ran {:?}",
        t.elapsed()
    );
    assert!(
        r.seconds < 5.0 && r.ios > 0,
        "{} s, {} I/Os",
        r.seconds,
        r.ios
    );
    // Two progress ticks, then the drain tick.
    assert_eq!(obs.1.load(Ordering::Relaxed), 3);
}

#[test]
fn a_steady_run_stops_when_stable() {
    let f = prepared(64);
    let mut cfg = config(&f, 1);
    cfg.stop_when_stable = Some(StopRule {
        window: 3,
        band: 0.9,
        min_runtime: Duration::from_secs(1),
    });
    let r = run_script(&cfg, Script::new().delay(MS)).unwrap();
    assert_eq!(r.ended_by, EndedBy::Stable);
    assert!((2.5..8.0).contains(&r.seconds), "{} s", r.seconds);
}

#[test]
fn the_ramp_is_left_out_of_every_figure() {
    let f = prepared(64);
    let mut cfg = config(&f, 1);
    cfg.ramp = Duration::from_millis(400);
    cfg.runtime = Duration::from_millis(400);
    // The first reads, all inside the ramp, are slow; the measured ones are fast.
    let slow = 30 * MS;
    let script = Script::new()
        .delay(MS)
        .on(Which::Seqs(0..3), Act::Delay(slow));
    let r = run_script(&cfg, script).unwrap();
    assert!(r.ios > 0);
    assert!(r.latency.max_ns < slow.as_nanos() as u64, "{:?}", r.latency);
    assert!((0.39..=0.4).contains(&r.seconds), "{}", r.seconds);
    assert!(r.timeline.iter().all(|p| p.t_s <= 0.4), "{:?}", r.timeline);
}

#[test]
fn an_engine_that_cannot_start_fails_the_run() {
    let f = prepared(64);
    let mut cfg = config(&f, 1);
    cfg.threads = 2;
    let open = |i: usize, setup: EngineSetup| -> Result<Box<dyn Engine>> {
        if i == 1 {
            return Err(Error::Engine("no engine here".into()));
        }
        Ok(Box::new(Fake::new(setup, Script::new().delay(MS))?))
    };
    let t = Instant::now();
    let e = run_with(&cfg, &Silent, &open as &EngineFactory).unwrap_err();
    assert_eq!(e.to_string(), "no engine here");
    assert!(
        t.elapsed() < Duration::from_secs(5),
        "ran {:?}",
        t.elapsed()
    );
}

fn open_loop(iops: f64, service: Duration) -> RunResult {
    let f = prepared(64);
    let mut cfg = config(&f, 1);
    cfg.rw = Rw::Randread;
    cfg.runtime = Duration::from_secs(1);
    cfg.rate = Some(Rate {
        iops,
        arrivals: Arrivals::Fixed,
    });
    run_script(&cfg, Script::new().delay(service)).unwrap()
}

#[test]
fn open_loop_below_capacity_keeps_its_schedule() {
    let r = open_loop(200.0, MS);
    let o = r.open_loop.as_ref().expect("open-loop figures");
    assert_eq!(o.target_iops, 200.0);
    assert!((150.0..=205.0).contains(&o.achieved_iops), "{o:?}");
    assert!(o.late_pct < 50.0, "{o:?}");
    assert!(o.final_backlog < 5.0 && o.max_backlog < 20.0, "{o:?}");
    assert!(r.latency.min_ns >= MS.as_nanos() as u64);
    assert!(
        r.latency.p50_ns < (20 * MS).as_nanos() as u64,
        "{:?}",
        r.latency
    );
}

#[test]
fn open_loop_above_capacity_counts_late_issues_and_the_backlog() {
    // 1000 requests per second due, 100 per second possible.
    let r = open_loop(1000.0, 10 * MS);
    let o = r.open_loop.as_ref().expect("open-loop figures");
    assert!(o.achieved_iops <= 101.0, "{o:?}");
    assert!(o.late > 0 && o.late_pct > 80.0, "{o:?}");
    assert!(o.final_backlog > 500.0, "{o:?}");
    assert!(o.max_backlog > 500.0, "{o:?}");
    // Latency counts from the due time, so the backlog shows in it.
    assert!(
        r.latency.p50_ns > (100 * MS).as_nanos() as u64,
        "{:?}",
        r.latency
    );
    assert!(r.open_loop.is_some() && r.ended_by == EndedBy::Runtime);
}

/// The closed loop holds the depth it was asked for: with reads of 200 µs and submit calls of
/// 10 µs, reaping every completion and then submitting each freed slot in turn left slots idle
/// (QD16 ran at a mean depth near 10); one out, one in keeps it at 16.
#[test]
fn the_closed_loop_holds_the_requested_depth() {
    let f = prepared(256);
    for (depth, batch) in [(16, 1), (16, 4), (4, 1)] {
        let mut cfg = config(&f, depth);
        cfg.batch = batch;
        cfg.verify = false;
        cfg.runtime = Duration::from_millis(400);
        let script = Script::new()
            .delay(Duration::from_micros(200))
            .submit_cost(Duration::from_micros(10));
        let r = run_script(&cfg, script).unwrap();
        let got = r.achieved_depth.expect("achieved depth measured");
        assert!(
            got >= 0.95 * depth as f64 && got <= depth as f64 + 1e-9,
            "QD{depth} batch {batch}: achieved depth {got:.2}"
        );
        // Little's law agrees with the time-weighted count.
        let little = r.requests_per_s * r.latency.mean_ns / 1e9;
        assert!(
            (little - got).abs() < 0.05 * depth as f64,
            "QD{depth}: Little's law {little:.2} vs measured {got:.2}"
        );
    }
}

/// A result says when its figures cannot be trusted: too few samples for the tail, another
/// process busy on the machine, a target in memory.
#[test]
fn untrustworthy_figures_are_said_in_the_warnings() {
    let f = prepared(64);
    let mut cfg = config(&f, 1);
    cfg.runtime = Duration::from_millis(500);
    let mut spinner = std::process::Command::new("sh")
        .args(["-c", "while :; do :; done"])
        .spawn()
        .unwrap();
    let r = run_script(&cfg, Script::new().delay(Duration::from_millis(2)));
    spinner.kill().unwrap();
    spinner.wait().unwrap();
    let r = r.unwrap();
    let has = |s: &str| r.warnings.iter().any(|w| w.contains(s));
    assert!(r.latency.count < 1_000, "{} requests", r.latency.count);
    assert!(has("too few samples for the tail"), "{:?}", r.warnings);
    assert!(has("other processes used"), "{:?}", r.warnings);
    assert!(has("RAM"), "a just-written buffered file: {:?}", r.warnings);
}

/// A run whose measured window saw nothing says so, with zero CPU rather than a count divided by
/// an empty window; a window too short for CPU shares says that instead of judging other load.
#[test]
fn an_empty_or_tiny_window_is_marked_not_divided_by() {
    let f = prepared(64);
    let mut cfg = config(&f, 1);
    cfg.runtime = Duration::from_nanos(1);
    let r = run_script(&cfg, Script::new().delay(Duration::from_millis(20))).unwrap();
    assert_eq!(r.requests, 0);
    assert!(
        r.warnings
            .iter()
            .any(|w| w.starts_with("nothing was measured")),
        "{:?}",
        r.warnings
    );
    assert!(r.cpu.threads_pct_of_core() < 1e6, "{:?}", r.cpu);
    assert!(
        !r.warnings.iter().any(|w| w.starts_with("other processes")),
        "{:?}",
        r.warnings
    );
    cfg.runtime = Duration::from_millis(50);
    let r = run_script(&cfg, Script::new()).unwrap();
    assert!(r.requests > 0);
    assert!(
        r.warnings
            .iter()
            .any(|w| w.starts_with("the measured window was only")),
        "{:?}",
        r.warnings
    );
}

/// A CPU clock that moved between the window's edges is said in the warnings (where the machine
/// shows its clock); a steady one is not.
#[test]
fn a_changing_cpu_clock_is_warned_about() {
    let f = prepared(64);
    let mut cfg = config(&f, 1);
    cfg.runtime = Duration::from_millis(300);
    let mut r = run_script(&cfg, Script::new()).unwrap();
    let range = crate::config::Range {
        offset: 0,
        len: r.bytes.max(BS),
        blocks: 1,
    };
    let clock = |r: &RunResult| r.warnings.iter().any(|w| w.contains("CPU clock changed"));
    r.cpu.clock_mhz = Some([2600.0, 2590.0]);
    r.warnings.clear();
    super::checks::trust(&cfg, &range, &mut r);
    assert!(!clock(&r), "{:?}", r.warnings);
    r.cpu.clock_mhz = Some([2600.0, 1200.0]);
    r.warnings.clear();
    super::checks::trust(&cfg, &range, &mut r);
    assert!(clock(&r), "{:?}", r.warnings);
}

/// The completion interrupts of the target's device become the result's `completions`; a run
/// that asked for polling and got about one interrupt per I/O says so, a polled one does not.
#[test]
fn a_run_that_asked_for_polling_and_got_interrupts_says_so() {
    use crate::irq::{Queues, Snapshot};
    let f = prepared(64);
    let mut plain = config(&f, 1);
    plain.io_limit = Some(16 * BS);
    let mut cfg = plain.clone();
    let snap = |n: u64| {
        Snapshot::parse(&format!(
            "  CPU0\n 24: {n} PCI-MSIX-0000:00:02.0 1-edge nvme0q1\n 25: 7 PCI-MSIX-0000:00:03.0 1-edge nvme1q1\n"
        ))
    };
    let q = Queues::Nvme(vec!["nvme0".into()]);
    for (asked, interrupts, warned) in [
        ("hipri", 16, true),
        ("hipri", 0, false),
        ("iopoll", 15, true),
        ("none", 16, false),
    ] {
        Pvsync2Options::edit(&mut cfg.options, |o| o.hipri = asked == "hipri");
        UringOptions::edit(&mut cfg.options, |o| o.iopoll = asked == "iopoll");
        let mut r = run_script(&plain, Script::new()).unwrap();
        r.requests = 16;
        super::checks::trust_polling(
            &cfg,
            Some(&q),
            Some(&(snap(100), snap(100 + interrupts))),
            &mut r,
        );
        let c = r.completions.as_ref().expect("completions counted");
        assert_eq!((c.device.as_str(), c.interrupts), ("nvme0", interrupts));
        assert_eq!(c.polled(), interrupts == 0, "{asked} {interrupts}");
        let said = r
            .warnings
            .iter()
            .any(|w| w.contains(crate::warnings::NOT_POLLED));
        assert_eq!(said, warned, "{asked} {interrupts}: {:?}", r.warnings);
    }
    // no device lines to count (loop, null_blk, a file on tmpfs): nothing said
    let mut r = run_script(&plain, Script::new()).unwrap();
    super::checks::trust_polling(&cfg, None, Some(&(snap(0), snap(16))), &mut r);
    assert!(r.completions.is_none() && r.warnings.iter().all(|w| !w.contains("poll")));
}

/// A queued engine's refill is stamped by the clock read that saw the completions it replaces
/// (one read per I/O); a synchronous engine reads during submit, so its reads are bracketed by
/// two — and with verification on, the refill reads the clock afresh after checking the data.
#[test]
fn clock_reads_per_io_follow_the_engine_kind() {
    let f = prepared(256);
    let script = || Script::new().delay(Duration::from_micros(50));
    let reads = |depth: usize, verify: bool| {
        let mut cfg = config(&f, depth);
        cfg.verify = verify;
        cfg.runtime = Duration::from_millis(300);
        let r = run_script(&cfg, script()).unwrap();
        assert!(r.ios > 100, "{} I/Os", r.ios);
        r.timer.clock_reads_per_io
    };
    let queued = reads(8, false);
    assert!(
        (0.99..=1.05).contains(&queued),
        "QD8: {queued:.3} clock reads per I/O"
    );
    let verified = reads(8, true);
    assert!(
        (1.95..=2.05).contains(&verified),
        "QD8 verified: {verified:.3}"
    );
    let sync = reads(1, false);
    assert!((1.95..=2.05).contains(&sync), "sync: {sync:.3}");
}
