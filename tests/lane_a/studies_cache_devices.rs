//! The cache and devices studies on loop devices: `--quick` finishes, every point stored, the
//! cache study's points carry the monitor's samples and put readahead back, the devices study
//! reads 1, 2, 3 targets at once, and the report draws both (monitor timelines, per-target bars,
//! scaling).

use crate::common;

use common::{LoopDev, disk_dir, run, stderr};
use serde_json::Value;

fn docs(dir: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn report_html(inputs: &[&std::path::Path]) -> String {
    let dir = disk_dir();
    let out = dir.path().join("r.html");
    let mut args = vec!["report".to_string()];
    args.extend(inputs.iter().map(|p| p.display().to_string()));
    args.extend(["-o".into(), out.display().to_string()]);
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = run(&a);
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::read_to_string(out).unwrap()
}

#[test]
fn cache_study_quick_with_the_monitor_and_readahead_put_back() {
    let l = LoopDev::prepared("64M");
    let ra = format!(
        "/sys/block/{}/queue/read_ahead_kb",
        l.dev.trim_start_matches("/dev/")
    );
    std::fs::write(&ra, "96").unwrap();
    let dir = disk_dir();
    let out = dir.path().join("cache");
    let o = run(&[
        "study",
        "cache",
        "--quick",
        "--allow-device-changes",
        "--out",
        out.to_str().unwrap(),
        &l.dev,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&ra).unwrap().trim(), "96");
    let d = docs(&out);
    let settings: Vec<&str> = d
        .iter()
        .map(|d| d["study"]["setting"].as_str().unwrap())
        .collect();
    assert_eq!(
        settings,
        [
            "direct",
            "buffered, read_ahead_kb=96",
            "buffered, read_ahead_kb=0",
            "whole target, direct",
            "whole target, buffered, read_ahead_kb=96"
        ]
    );
    // The whole-target passes cover the target, by offset.
    for doc in &d[3..] {
        let covered: u64 = doc["result"]["offset_samples"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["bytes"].as_u64().unwrap())
            .sum();
        assert_eq!(covered, 64 << 20);
    }
    for (i, doc) in d.iter().enumerate() {
        assert_eq!(doc["config"]["bs"], 1 << 20);
        let samples = doc["monitor"]["samples"]
            .as_array()
            .expect("monitor samples");
        // The timed points run seconds; a whole-target pass of 64 MiB may end within one.
        let least = if i < 3 { 3 } else { 1 };
        assert!(samples.len() >= least, "{}", doc["monitor"]);
        assert!(samples[0]["machine"]["page_cache_kib"].as_u64().unwrap() > 0);
    }
    // The readahead-off point ran with readahead off.
    assert_eq!(d[2]["environment"]["device"]["read_ahead_kb"], 0);
    let html = report_html(&[&out]);
    for id in [
        "cache-throughput",
        "cache-offset",
        "cache-monitor-1",
        "cache-monitor-3",
    ] {
        assert!(html.contains(id), "no chart {id}");
    }
    assert!(html.contains("page cache") && html.contains("iou-wrk workers"));

    // Without --allow-device-changes the readahead point is skipped, and said so.
    let out2 = dir.path().join("cache2");
    let o = run(&[
        "study",
        "cache",
        "--quick",
        "--out",
        out2.to_str().unwrap(),
        &l.dev,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--allow-device-changes"),
        "{}",
        stderr(&o)
    );
    assert_eq!(docs(&out2).len(), 4);
}

#[test]
fn devices_study_quick_on_three_loop_devices() {
    let devs = [
        LoopDev::prepared("32M"),
        LoopDev::prepared("32M"),
        LoopDev::prepared("32M"),
    ];
    let dir = disk_dir();
    let out = dir.path().join("devices");
    let o = run(&[
        "study",
        "devices",
        "--quick",
        "--out",
        out.to_str().unwrap(),
        &devs[0].dev,
        &format!("second:{}", devs[1].dev),
        &devs[2].dev,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let d = docs(&out);
    assert_eq!(d.len(), 6, "4 KiB and 512 KiB on 1, 2, 3 targets");
    for (i, doc) in d.iter().enumerate() {
        let n = i % 3 + 1;
        let t = doc["targets"].as_array().unwrap();
        assert_eq!(t.len(), n);
        let sum: u64 = t.iter().map(|t| t["result"]["ios"].as_u64().unwrap()).sum();
        assert_eq!(doc["result"]["ios"].as_u64().unwrap(), sum);
        if n >= 2 {
            assert_eq!(t[1]["name"], "second");
        }
    }
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(
        summary.contains("| targets | aggregate MB/s |"),
        "{summary}"
    );
    let html = report_html(&[&out]);
    for id in [
        "devices-bars-4K",
        "devices-bars-512K",
        "devices-scaling",
        "devices-cpu",
    ] {
        assert!(html.contains(id), "no chart {id}");
    }
    assert!(html.contains("second"));

    // Only the devices study reads several targets.
    let o = run(&[
        "study",
        "latency",
        "--quick",
        "--out",
        dir.path().join("x").to_str().unwrap(),
        &devs[0].dev,
        &devs[1].dev,
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("only the devices study"),
        "{}",
        stderr(&o)
    );
    assert!(!dir.path().join("x").exists(), "bad input touched nothing");
}
