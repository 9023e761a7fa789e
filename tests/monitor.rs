//! The monitor against the kernel's own counters and readlab's: a run on a loop device with
//! `--monitor` sees the same IOPS on the device each second; a buffered io_uring run shows its
//! `iou-wrk` workers; `readlab monitor --count 3 --json` covers every device named; bad input
//! (unknown device, missing PID) is refused and a PID that ends mid-monitor ends it cleanly.

mod common;

use common::{LoopDev, json, run, stderr, stdout};
use serde_json::Value;

fn read_json(p: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn dev_name(dev: &str) -> &str {
    dev.trim_start_matches("/dev/")
}

#[test]
fn run_monitor_on_a_loop_device_agrees_with_the_run_within_5_percent() {
    let l = LoopDev::prepared("256M");
    let dir = common::disk_dir();
    let out = dir.path().join("run.json");
    let o = run(&[
        "run",
        "--engine",
        "uring",
        "--iodepth",
        "32",
        "--runtime",
        "4s",
        "--monitor",
        "--json",
        out.to_str().unwrap(),
        &l.dev,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // The check's line as one, though the terminal's width wrapped it.
    let said = stdout(&o).replace("\n    ", " ");
    assert!(
        said.contains("monitor") && said.contains("per second within"),
        "{said}"
    );
    let doc = read_json(&out);
    let samples = doc["monitor"]["samples"]
        .as_array()
        .expect("monitor samples");
    let timeline = doc["result"]["timeline"].as_array().unwrap();
    let mut compared = 0;
    for tp in timeline {
        let t = tp["t_s"].as_f64().unwrap();
        if t.fract() != 0.0 {
            continue;
        }
        let s = samples
            .iter()
            .find(|s| (s["t_s"].as_f64().unwrap() - t).abs() < 0.5)
            .unwrap_or_else(|| panic!("no monitor sample for second {t}"));
        let d = s["devices"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["name"] == dev_name(&l.dev))
            .expect("the loop device is watched");
        let (run_iops, dev_iops) = (
            tp["iops"].as_f64().unwrap(),
            d["read_iops"].as_f64().unwrap(),
        );
        assert!(run_iops > 1000.0, "second {t}: {run_iops} IOPS");
        let gap = (dev_iops / run_iops - 1.0).abs();
        assert!(
            gap < 0.05,
            "second {t}: device {dev_iops:.0} reads/s vs run {run_iops:.0} IOPS ({:.1} %)",
            100.0 * gap
        );
        // Direct 4 KiB random reads reach the device one request each, unmerged.
        assert!(
            (d["read_kib_per_io"].as_f64().unwrap() - 4.0).abs() < 0.01,
            "{d}"
        );
        compared += 1;
    }
    assert!(
        compared >= 3,
        "only {compared} seconds compared: {timeline:?}"
    );
    // The sampler's own thread is not in the run's CPU, and it says what it cost.
    assert!(doc["monitor"]["sampler_cpu_pct"].as_f64().unwrap() < 10.0);
}

#[test]
fn buffered_uring_shows_its_io_workers_by_kind_and_state() {
    // On tmpfs io_uring cannot read without blocking, so every buffered read goes to its
    // io-wq workers (iou-wrk-*): the monitor must see them, with their states.
    let path =
        std::path::PathBuf::from(format!("/dev/shm/readlab-mon-test-{}", std::process::id()));
    let _rm = Remove(path.clone());
    let o = run(&["prepare", path.to_str().unwrap(), "--size", "64M"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(&[
        "run",
        "--engine",
        "uring",
        "--buffered",
        "--iodepth",
        "16",
        "--runtime",
        "2s",
        "--monitor",
        "--output",
        "json",
        path.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = json(&o);
    assert!(
        doc["result"]["cpu"]["io_worker"]["threads"]
            .as_u64()
            .unwrap()
            > 0
    );
    let samples = doc["monitor"]["samples"].as_array().unwrap();
    let wrk: Vec<&Value> = samples
        .iter()
        .flat_map(|s| s["threads"]["kinds"].as_array().unwrap())
        .filter(|k| k["kind"] == "iou-wrk")
        .collect();
    assert!(!wrk.is_empty(), "no iou-wrk threads seen: {samples:?}");
    assert!(wrk.iter().any(|k| k["threads"].as_f64().unwrap() > 0.0));
    for k in &wrk {
        let states = ["running", "disk", "sleeping"]
            .iter()
            .map(|s| k[*s].as_f64().unwrap())
            .sum::<f64>();
        assert!(states <= k["threads"].as_f64().unwrap() + 1e-9, "{k}");
    }
    let groups: Vec<&Value> = samples
        .iter()
        .flat_map(|s| s["threads"]["top"].as_array().unwrap())
        .filter(|g| g["kind"] == "iou-wrk")
        .collect();
    assert!(!groups.is_empty(), "no iou-wrk group among the top ones");
    assert!(groups.iter().all(|g| {
        ["running", "disk", "sleeping", "other"].contains(&g["state"].as_str().unwrap())
    }));
    // No block device behind tmpfs: said, not hidden.
    assert!(
        doc["monitor"]["notes"][0]
            .as_str()
            .unwrap()
            .contains("no block device"),
        "{}",
        doc["monitor"]
    );
}

struct Remove(std::path::PathBuf);
impl Drop for Remove {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[test]
fn monitor_count_3_json_parses_and_covers_every_device_named() {
    let (a, b) = (LoopDev::prepared("16M"), LoopDev::prepared("16M"));
    let dir = common::disk_dir();
    let out = dir.path().join("mon.json");
    let o = run(&[
        "monitor",
        dev_name(&a.dev),
        &b.dev,
        "--count",
        "3",
        "--interval",
        "300ms",
        "--pid",
        &std::process::id().to_string(),
        "--width",
        "200",
        "--json",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 5, "two header lines and three samples: {text}");
    // What the columns are, once, on stderr; iostat's aqu-sz and r_await beside the sampled qd.
    let legend = stderr(&o);
    for w in [
        "qd = requests in flight",
        "aqu-sz = iostat's",
        "r_await = iostat's",
    ] {
        assert!(legend.contains(w), "{w}: {legend}");
    }
    assert!(
        lines[1].contains(" aqu-sz ") && lines[1].contains(" r_await"),
        "{text}"
    );
    assert!(lines[0].contains(dev_name(&a.dev)) && lines[0].contains(dev_name(&b.dev)));
    assert!(lines.iter().all(|l| l.chars().count() <= 200));
    let rec = read_json(&out);
    let samples = rec["samples"].as_array().unwrap();
    assert_eq!(samples.len(), 3, "{rec}");
    for (i, s) in samples.iter().enumerate() {
        let names: Vec<&str> = s["devices"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, [dev_name(&a.dev), dev_name(&b.dev)]);
        let t = s["t_s"].as_f64().unwrap();
        assert!((t - 0.3 * (i + 1) as f64).abs() < 0.05, "sample {i} at {t}");
        assert!(s["threads"]["thread_samples"].as_u64().unwrap() >= 2, "{s}");
        assert!(s["machine"]["page_cache_kib"].as_u64().unwrap() > 0);
    }
    assert!(stderr(&o).contains("% of a core"), "{}", stderr(&o));
}

#[test]
fn bad_input_unknown_device_and_missing_pid_exit_2() {
    let o = run(&["monitor", "no-such-disk", "--count", "1"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("unknown device 'no-such-disk'"),
        "{}",
        stderr(&o)
    );
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));

    // A PID that cannot exist (above pid_max).
    let o = run(&["monitor", "--pid", "2147483647", "--count", "1"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("no process with PID 2147483647"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_pid_that_ends_mid_monitor_ends_the_monitor() {
    let mut child = std::process::Command::new("sleep")
        .arg("0.7")
        .spawn()
        .unwrap();
    let dir = common::disk_dir();
    let out = dir.path().join("mon.json");
    let started = std::time::Instant::now();
    let o = run(&[
        "monitor",
        "--pid",
        &child.id().to_string(),
        "--interval",
        "200ms",
        "--count",
        "50",
        "--json",
        out.to_str().unwrap(),
    ]);
    child.wait().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "the monitor went on after the process ended"
    );
    assert!(stderr(&o).contains("ended"), "{}", stderr(&o));
    let rec = read_json(&out);
    let samples = rec["samples"].as_array().unwrap();
    assert!(samples.len() < 50 && !samples.is_empty(), "{rec}");
    assert_eq!(samples.last().unwrap()["process_ended"], true, "{rec}");
}

/// 2 MiB direct reads on a loop device that takes at most `max_sectors_kb` per request: the
/// device sees each read as several requests, and `run --monitor` says so in requests with the
/// split factor, never "within 100 %".
#[test]
fn run_monitor_counts_device_requests_per_readlab_request() {
    let l = LoopDev::prepared("256M");
    let o = run(&[
        "run",
        "--engine",
        "psync",
        "--bs",
        "2m",
        "--runtime",
        "3s",
        "--monitor",
        &l.dev,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // The line as one, though the terminal's width wrapped it.
    let out = stdout(&o).replace("\n    ", " ");
    let line = out
        .lines()
        .find(|l| l.contains("requests/s for readlab's"))
        .unwrap_or_else(|| panic!("no monitor line: {out}"));
    assert!(!line.contains("within 100"), "{line}");
    // The split the device's own request size implies (its queue limits decide: 512 KiB here).
    let kib: f64 = line
        .split("; ")
        .find_map(|p| p.strip_suffix(" KiB per device request, 0 merges/s"))
        .and_then(|k| k.trim().parse().ok())
        .unwrap_or_else(|| panic!("no request size: {line}"));
    let split = (2048.0 / kib).round();
    assert!(split >= 2.0, "the device did not split 2 MiB reads: {line}");
    let factor: f64 = line
        .split(": ")
        .nth(2)
        .and_then(|s| s.split_whitespace().next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no split factor: {line}"));
    assert!(
        (factor / split - 1.0).abs() < 0.1,
        "{factor} vs {split}: {line}"
    );
    assert!(
        line.contains("device requests per readlab request (2048 KiB each, split into"),
        "{line}"
    );
    assert!(line.contains("of that (largest gap"), "{line}");
}
