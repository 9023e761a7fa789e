//! Several targets in one run: per-target and aggregate rows, the aggregate the exact sum of the
//! targets (I/Os, bytes, histogram counts, the merged histogram itself), names in every output,
//! the same target twice refused, a target that fails reported beside the others' results.

use crate::common;

use common::{LoopDev, disk_dir, flip_byte, prepare, run, stderr, stdout};
use serde_json::Value;

fn read_json(p: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

#[test]
fn three_loop_devices_aggregate_is_the_sum_of_the_targets() {
    let devs = [
        LoopDev::prepared("128M"),
        LoopDev::prepared("128M"),
        LoopDev::prepared("128M"),
    ];
    let dir = disk_dir();
    let out = dir.path().join("three.json");
    let o = run(&[
        "run",
        "--engine",
        "uring",
        "--iodepth",
        "32",
        "--runtime",
        "3s",
        "--json",
        out.to_str().unwrap(),
        &devs[0].dev,
        &devs[1].dev,
        &devs[2].dev,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    for d in &devs {
        let name = d.dev.trim_start_matches("/dev/");
        assert!(
            text.lines().any(|l| l.starts_with(name)),
            "no row for {name}: {text}"
        );
    }
    assert!(text.lines().any(|l| l.starts_with("all ")), "{text}");

    let doc = read_json(&out);
    let targets = doc["targets"].as_array().unwrap();
    assert_eq!(targets.len(), 3);
    let sum = |f: &dyn Fn(&Value) -> u64| -> u64 { targets.iter().map(|t| f(&t["result"])).sum() };
    let agg = &doc["result"];
    assert_eq!(
        agg["ios"].as_u64().unwrap(),
        sum(&|r| r["ios"].as_u64().unwrap())
    );
    assert_eq!(
        agg["bytes"].as_u64().unwrap(),
        sum(&|r| r["bytes"].as_u64().unwrap())
    );
    let count_sum = sum(&|r| r["latency"]["count"].as_u64().unwrap());
    assert_eq!(agg["latency"]["count"].as_u64().unwrap(), count_sum);
    let iops_sum: f64 = targets
        .iter()
        .map(|t| t["result"]["iops"].as_f64().unwrap())
        .sum();
    let iops = agg["iops"].as_f64().unwrap();
    assert!(
        (iops - iops_sum).abs() <= 1e-6 * iops,
        "{iops} vs {iops_sum}"
    );
    for t in targets {
        assert!(t["result"]["ios"].as_u64().unwrap() > 1000, "{t}");
    }

    // The stored histograms merge exactly: the aggregate's is the targets' merged.
    let hist = |v: &Value| readlab::stats::decode_histogram(v.as_str().unwrap()).unwrap();
    let merged_here = targets
        .iter()
        .fold(readlab::stats::new_histogram(), |mut h, t| {
            h.add(hist(&t["result"]["histogram"])).unwrap();
            h
        });
    let agg_hist = hist(&agg["histogram"]);
    assert_eq!(agg_hist.len(), count_sum);
    assert_eq!(merged_here.len(), count_sum);
    for q in [0.5, 0.9, 0.99, 0.999] {
        assert_eq!(
            agg_hist.value_at_quantile(q),
            merged_here.value_at_quantile(q)
        );
    }
    // One timeline for all, each second the sum of the targets' seconds.
    let tl = agg["timeline"].as_array().unwrap();
    for (i, tp) in tl.iter().enumerate() {
        let s: u64 = targets
            .iter()
            .filter_map(|t| t["result"]["timeline"].as_array().unwrap().get(i))
            .map(|p| p["ios"].as_u64().unwrap())
            .sum();
        assert_eq!(tp["ios"].as_u64().unwrap(), s, "second {i}");
    }
}

#[test]
fn names_come_from_the_prefix_and_the_name_option() {
    let dir = disk_dir();
    let a = prepare(dir.path(), "a.dat", "8M");
    let b = prepare(dir.path(), "b.dat", "8M");
    let o = run(&[
        "run",
        "--runtime",
        "500ms",
        "--output",
        "json",
        "--name",
        &format!("{}=first", a.display()),
        a.to_str().unwrap(),
        &format!("second:{}", b.display()),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = common::json(&o);
    let names: Vec<&str> = doc["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["first", "second"]);
    assert_eq!(doc["config"]["target"], "first+second");
    assert_eq!(
        doc["targets"][1]["config"]["target"].as_str().unwrap(),
        b.to_str().unwrap()
    );
}

#[test]
fn the_same_target_twice_is_refused() {
    let dir = disk_dir();
    let a = prepare(dir.path(), "a.dat", "8M");
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&a, &link).unwrap();
    for second in [a.to_str().unwrap(), link.to_str().unwrap()] {
        let o = run(&["run", "--runtime", "500ms", a.to_str().unwrap(), second]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains("same target"), "{}", stderr(&o));
        assert!(stderr(&o).contains("--numjobs"), "{}", stderr(&o));
    }
}

#[test]
fn bad_input_for_one_target_runs_nothing() {
    let dir = disk_dir();
    let a = prepare(dir.path(), "a.dat", "8M");
    let missing = dir.path().join("missing.dat");
    let o = run(&[
        "run",
        "--runtime",
        "500ms",
        a.to_str().unwrap(),
        missing.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("missing.dat"), "{}", stderr(&o));
    assert!(stdout(&o).is_empty());
}

#[test]
fn a_failing_target_does_not_hide_the_others() {
    let dir = disk_dir();
    let good = prepare(dir.path(), "good.dat", "1M");
    let bad = prepare(dir.path(), "bad.dat", "1M");
    flip_byte(&bad, 3 * 4096 + 100);
    let out = dir.path().join("two.json");
    let o = run(&[
        "run",
        "--rw",
        "read",
        "--verify",
        "--runtime",
        "1s",
        "--json",
        out.to_str().unwrap(),
        good.to_str().unwrap(),
        bad.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("target bad.dat failed"),
        "{}",
        stderr(&o)
    );
    let doc = read_json(&out);
    let t = doc["targets"].as_array().unwrap();
    assert_eq!(t[0]["name"], "good.dat");
    assert_eq!(t[0]["result"]["verify"]["mismatches"], 0);
    assert!(t[0]["result"]["ios"].as_u64().unwrap() > 100);
    assert!(t[1]["result"]["verify"]["mismatches"].as_u64().unwrap() > 0);
    assert_eq!(
        t[1]["result"]["verify"]["first"][0]["offset"]
            .as_u64()
            .unwrap(),
        3 * 4096 + 100
    );
    assert!(stdout(&o).contains("good.dat") && stdout(&o).contains("bad.dat"));
}
