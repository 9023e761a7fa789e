//! End-to-end (issue 43): the old unclean command lines, each a flag that was silently ignored
//! (it only applies with another flag, or the command or engine ignores it), a value beyond
//! sense accepted, or a failure that exited 0 or 1. Each is now refused before anything runs:
//! exit 2, exactly one stderr line saying what to do, nothing on stdout, no file written, and
//! in seconds (a regression that runs instead is killed at [`LIMIT`] and fails).

use crate::common;
use common::*;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// A refusal comes before any I/O; a run or a server that starts instead is killed here.
const LIMIT: Duration = Duration::from_secs(10);

/// A directory with a prepared 16 MiB file `d.dat`, the target of the cases.
fn setup() -> (tempfile::TempDir, String) {
    let d = disk_dir();
    let f = prepare(d.path(), "d.dat", "16M");
    (d, f.to_str().unwrap().to_string())
}

/// Run `cmd` in `cwd`: it must exit 2 with one stderr line containing `want`, print nothing on
/// stdout and leave `cwd` as it was.
fn refused_cmd(cmd: Command, cwd: &Path, want: &str) {
    let before = tree(cwd);
    let what = format!("{cmd:?}");
    let o = output_within(cmd, cwd, LIMIT);
    let line = one_line(&o, 2, &["readlab: error: ", want]);
    assert!(line.starts_with("readlab: error: "), "{what}: {line}");
    assert!(stdout(&o).is_empty(), "{what} printed: {}", stdout(&o));
    assert_eq!(tree(cwd), before, "{what} changed its directory");
}

fn refused(cwd: &Path, args: &[&str], want: &str) {
    let mut cmd = bin();
    cmd.args(args);
    refused_cmd(cmd, cwd, want);
}

/// `readlab run` on the prepared file with `args`.
fn run_refused(args: &[&str], want: &str) {
    let (d, f) = setup();
    let mut all = vec!["run", f.as_str(), "--runtime", "300ms", "-q"];
    all.extend_from_slice(args);
    refused(d.path(), &all, want);
}

#[test]
fn run_arrivals_without_rate() {
    run_refused(
        &["--arrivals", "fixed"],
        "add --rate IOPS or drop --arrivals",
    );
}

#[test]
fn run_runtime_beyond_a_week() {
    let (d, f) = setup();
    refused(
        d.path(),
        &["run", &f, "-q", "--runtime", "200d"],
        "use at most 7d",
    );
}

#[test]
fn run_ramp_beyond_a_week() {
    run_refused(
        &["--ramp", "200d"],
        "--ramp 17,280,000 s is longer than readlab allows",
    );
}

/// A tolerance holds `--check`'s replay to it: alone it would be silently ignored.
#[test]
fn run_tolerance_without_check() {
    run_refused(&["--tolerance", "5%"], "--check");
}

#[test]
fn run_stable_window_without_stop_when_stable() {
    run_refused(&["--stable-window", "3"], "add --stop-when-stable");
}

#[test]
fn run_stable_band_without_stop_when_stable() {
    run_refused(&["--stable-band", "0.5"], "add --stop-when-stable");
}

#[test]
fn run_min_runtime_without_stop_when_stable() {
    run_refused(&["--min-runtime", "1s"], "add --stop-when-stable");
}

#[test]
fn run_sqpoll_idle_without_sqpoll() {
    run_refused(
        &["--engine", "uring", "--sqpoll-idle", "2s"],
        "add --engine uring --sqpoll or drop --sqpoll-idle",
    );
}

#[test]
fn run_budget_with_one_configuration() {
    run_refused(&["--budget", "10s"], "nothing is raced here");
}

#[test]
fn run_margin_with_one_configuration() {
    run_refused(&["--margin", "3%"], "nothing is raced here");
}

#[test]
fn run_margin_with_repeat() {
    run_refused(
        &[
            "--engine",
            "psync,pvsync2",
            "--repeat",
            "2",
            "--margin",
            "3%",
        ],
        "--repeat measures each configuration on its own",
    );
}

#[test]
fn run_io_limit_below_a_block() {
    run_refused(&["--io-limit", "1k"], "less than one block");
}

#[test]
fn info_of_an_empty_loop_device() {
    if !is_root() {
        eprintln!("skipped: needs root for a loop device");
        return;
    }
    let free = Command::new("losetup").arg("-f").output().expect("losetup");
    let dev = String::from_utf8_lossy(&free.stdout).trim().to_string();
    if !free.status.success() || dev.is_empty() {
        eprintln!("skipped: no free loop device");
        return;
    }
    let d = disk_dir();
    refused(d.path(), &["info", &dev], "nothing attached");
}

#[test]
fn info_of_an_empty_file() {
    let d = disk_dir();
    std::fs::write(d.path().join("empty"), b"").unwrap();
    refused(d.path(), &["info", "empty"], "the file is empty");
}

/// `readlab serve --null 1M` with `args`, listening on a free port of 127.0.0.1.
fn serve_refused(args: &[&str], want: &str) {
    let d = disk_dir();
    let mut all = vec!["serve", "--listen", "127.0.0.1:0", "--null", "1M", "-q"];
    all.extend_from_slice(args);
    refused(d.path(), &all, want);
}

#[test]
fn serve_threads_with_the_thread_model() {
    serve_refused(&["--threads", "4"], "add --model uring or drop --threads");
}

#[test]
fn serve_threads_beyond_what_readlab_starts() {
    serve_refused(&["--model", "uring", "--threads", "100000"], "at most 4096");
}

#[test]
fn serve_threads_beyond_the_open_files_limit() {
    let d = disk_dir();
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg("ulimit -n 256 && exec \"$0\" serve --listen 127.0.0.1:0 --null 1M -q --model uring --threads 200")
        .arg(env!("CARGO_BIN_EXE_readlab"));
    refused_cmd(cmd, d.path(), "RLIMIT_NOFILE); raise it (`ulimit -n");
}

#[test]
fn serve_null_with_an_engine() {
    serve_refused(&["--engine", "libaio"], "drop --engine or serve a TARGET");
}

#[test]
fn serve_null_buffered() {
    serve_refused(&["--buffered"], "drop --buffered or serve a TARGET");
}

#[test]
fn serve_null_with_an_engine_option() {
    serve_refused(
        &["--pool-threads", "2"],
        "drop --pool-threads or serve a TARGET",
    );
}

#[test]
fn serve_runtime_zero() {
    serve_refused(&["--runtime", "0s"], "--runtime must be positive");
}

#[test]
fn serve_runtime_beyond_a_week() {
    serve_refused(&["--runtime", "200d"], "use at most 7d");
}

#[test]
fn serve_delay_beyond_a_second() {
    serve_refused(&["--delay", "200d"], "at most 1s");
}

#[test]
fn tune_budget_beyond_a_week() {
    let (d, f) = setup();
    refused(
        d.path(),
        &["tune", &f, "--budget", "200d"],
        "use at most 7d",
    );
}

#[test]
fn tune_p999_max_zero() {
    let (d, f) = setup();
    refused(
        d.path(),
        &["tune", &f, "--p999-max", "0s", "--budget", "10s"],
        "admits no configuration",
    );
}

#[test]
fn tune_the_null_engine() {
    let (d, f) = setup();
    refused(
        d.path(),
        &["tune", &f, "--engines", "null"],
        "nothing to tune",
    );
}

/// `readlab study NAME` on the prepared file with `args` (its results in the directory).
fn study_refused(name: &str, args: &[&str], want: &str) {
    let (d, f) = setup();
    let mut all = vec!["study", name, f.as_str(), "--quick", "--out", "out"];
    all.extend_from_slice(args);
    refused(d.path(), &all, want);
}

#[test]
fn study_allow_device_changes_where_nothing_changes() {
    study_refused(
        "latency",
        &["--allow-device-changes"],
        "applies to the cache study only",
    );
}

#[test]
fn study_network_without_a_networked_study() {
    study_refused(
        "latency",
        &["--network", "loopback"],
        "the latency study takes none: drop --network",
    );
}

#[test]
fn study_max_threads_without_a_thread_sweep() {
    study_refused(
        "scan",
        &["--max-threads", "2"],
        "applies to the threads or scheduler study only",
    );
}

#[test]
fn study_runtime_beyond_a_week() {
    study_refused("latency", &["--runtime", "200d"], "use at most 7d");
}

#[test]
fn monitor_interval_beyond_an_hour() {
    let d = disk_dir();
    refused(
        d.path(),
        &["monitor", "--interval", "200d", "--count", "1"],
        "use at most 1h",
    );
}

#[test]
fn quick_budget_beyond_a_week() {
    let d = disk_dir();
    refused(
        d.path(),
        &[
            "quick",
            "--dir",
            ".",
            "--runtime",
            "100ms",
            "--budget",
            "200d",
        ],
        "use at most 7d",
    );
}

#[test]
fn quick_margin_that_calls_everything_equal() {
    let d = disk_dir();
    refused(
        d.path(),
        &[
            "quick",
            "--dir",
            ".",
            "--runtime",
            "100ms",
            "--margin",
            "200%",
        ],
        "would call every gap equal",
    );
}
