//! `readlab report` on a fleet run's document (several MPI ranks measured as one): the page gets
//! its fleet section — aggregate against ranks, each host's IOPS per rank, each host's latency
//! CDF — and the per-host table. The document is made from real runs' results, as rank 0 writes
//! it, so this runs without MPI.

use crate::common;

use serde_json::{Value, json};

/// Three ranks on two hosts, each with a real run's result.
fn fleet_document() -> Value {
    let docs: Vec<Value> = include_str!("../fixtures/results-small.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let members: Vec<Value> = [0usize, 1, 3]
        .iter()
        .enumerate()
        .map(|(rank, &i)| {
            json!({
                "rank": rank,
                "host": if rank < 2 { "node-a" } else { "node-b" },
                "local_rank": rank % 2,
                "target": format!("/dev/t{rank}"),
                "clock_offset_ns": 0,
                "clock_uncertainty_ns": 0,
                "start_ns": 0,
                "late_ns": 0,
                "environment": docs[i]["environment"],
                "result": docs[i]["result"],
            })
        })
        .collect();
    let mut d = docs[0].clone();
    d.as_object_mut().unwrap().remove("study");
    d["fleet"] = json!({
        "ranks": 3,
        "hosts": ["node-a", "node-b"],
        "target": "/dev/t{rank}",
        "start": {"skew_ns": 1500, "clock_uncertainty_ns": 0, "notice_ns": 20000000},
        "common_window_s": 1.0,
        "aggregate": "",
        "members": members,
    });
    d
}

#[test]
fn a_fleet_run_gets_its_section_charts_and_host_table() {
    let dir = common::disk_dir();
    let input = dir.path().join("fleet.json");
    std::fs::write(&input, fleet_document().to_string()).unwrap();
    let out = dir.path().join("report.html");
    let o = common::run(&[
        "report",
        input.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.contains("<section id=\"sec-fleet\">"));
    assert!(html.contains("href=\"#sec-fleet\""));
    for id in ["fleet-scaling", "fleet-hosts", "fleet-cdf"] {
        assert!(html.contains(&format!("id=\"chart-{id}\"")), "no {id}");
    }
    assert!(
        html.contains("Each host of the 3-rank run"),
        "no host table"
    );
    assert!(html.contains("node-b"));
    // A run of one process has no fleet section.
    let single = dir.path().join("single.json");
    let mut d = fleet_document();
    d.as_object_mut().unwrap().remove("fleet");
    std::fs::write(&single, d.to_string()).unwrap();
    let o = common::run(&[
        "report",
        single.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    assert!(!std::fs::read_to_string(&out).unwrap().contains("sec-fleet"));
}

/// The fleet of `fleet_document` on block devices loop6, loop7 and loop8 (rank 0 read loop6;
/// the document carries its configuration and environment, as rank 0 writes it), with an
/// aggregate no device reached alone.
fn fleet_on_loop_devices() -> Value {
    let mut d = fleet_document();
    for (rank, m) in d["fleet"]["members"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .enumerate()
    {
        let dev = format!("loop{}", 6 + rank);
        m["target"] = json!(format!("/dev/{dev}"));
        let e = &mut m["environment"];
        e["target"]["kind"] = json!("block");
        e["target"]["path"] = json!(format!("/dev/{dev}"));
        e["filesystem"] = Value::Null;
        e["device"]["name"] = json!(dev);
    }
    d["fleet"]["target"] = json!("/dev/loop{rank}");
    d["config"]["target"] = json!("/dev/loop6");
    d["environment"] = d["fleet"]["members"][0]["environment"].clone();
    d["result"]["iops"] = json!(213908.0);
    d
}

/// A fleet's aggregate is its own target: after a run of several ranks, the verdict and
/// "devices side by side" never credit its summed IOPS to rank 0's device, which keeps its own
/// run's figures.
#[test]
fn a_fleet_is_never_credited_to_rank_0s_device() {
    let dir = common::disk_dir();
    let fleet = dir.path().join("fleet.json");
    std::fs::write(&fleet, fleet_on_loop_devices().to_string()).unwrap();
    // A run of one process on loop6 alone.
    let mut single = fleet_on_loop_devices();
    single.as_object_mut().unwrap().remove("fleet");
    single["result"]["iops"] = json!(97000.0);
    let one = dir.path().join("loop6.json");
    std::fs::write(&one, single.to_string()).unwrap();
    let o = common::run(&[
        "report",
        fleet.to_str().unwrap(),
        one.to_str().unwrap(),
        "--format",
        "md",
        "-o",
        "-",
    ]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let md = common::stdout(&o);
    let name = "fleet of 3 ranks: loop6, loop7, loop8";
    assert!(md.contains(&format!("### Verdict for {name}")), "{md}");
    assert!(md.contains("### Verdict for loop6"), "{md}");
    // Every line with the fleet's IOPS names the fleet; loop6's lines carry its own run's.
    let fleet_iops = ["213908", "213,908", "213 908"];
    let mut seen = false;
    let mut section = String::new();
    for line in md.lines() {
        if line.starts_with('#') {
            section = line.to_string();
        }
        if fleet_iops.iter().any(|n| line.contains(n)) {
            seen = true;
            assert!(
                line.contains("fleet") || section.to_lowercase().contains("fleet"),
                "the fleet's IOPS credited to a device: {line}\n(in {section})"
            );
        }
    }
    assert!(seen, "the fleet's IOPS are nowhere: {md}");
    let loop6 = md.split("### Verdict for loop6").nth(1).unwrap();
    let loop6 = loop6.split("\n#").next().unwrap();
    assert!(
        !fleet_iops.iter().any(|n| loop6.contains(n)),
        "loop6's verdict holds the fleet's IOPS: {loop6}"
    );
}
