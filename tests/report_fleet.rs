//! `readlab report` on a fleet run's document (several MPI ranks measured as one): the page gets
//! its fleet section — aggregate against ranks, each host's IOPS per rank, each host's latency
//! CDF — and the per-host table. The document is made from real runs' results, as rank 0 writes
//! it, so this runs without MPI.

mod common;

use serde_json::{Value, json};

/// Three ranks on two hosts, each with a real run's result.
fn fleet_document() -> Value {
    let docs: Vec<Value> = include_str!("fixtures/results-small.jsonl")
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
