//! End-to-end (issue 13): the reference document's figures that were missing, each drawn in its
//! study's section of the report from real quick-study data on a loop device: aio and io_uring
//! per block size × threads (46–51), queue-size latency per thread count (76–80) and the
//! latency-against-IOPS curve with queue depths marked, batch 1 … queue size for every queue
//! size with threads 1–3 (68–72, 81–85), io_uring features per block size with stacked CPU
//! (89–105), the schedulers' CPU, buffered against direct sequential reading (13), and the scan
//! sampled every N MiB with offsets on its axis.

use crate::common;
use common::*;
use std::collections::{BTreeMap, BTreeSet};

/// The element with `id="{id}"` up to its closing tag.
fn element<'a>(html: &'a str, tag: &str, id: &str) -> &'a str {
    let start = html
        .find(&format!("<{tag} id=\"{id}\""))
        .unwrap_or_else(|| panic!("no <{tag} id=\"{id}\"> in the page"));
    let end = html[start..].find(&format!("</{tag}>")).unwrap();
    &html[start..start + end]
}

/// The `<text>` contents of an SVG, one per line.
fn texts(svg: &str) -> String {
    let mut out = Vec::new();
    let mut rest = svg;
    while let Some(i) = rest.find("<text") {
        rest = &rest[i..];
        let (Some(open), Some(close)) = (rest.find('>'), rest.find("</text>")) else {
            break;
        };
        out.push(rest[open + 1..close].to_string());
        rest = &rest[close..];
    }
    out.join("\n")
}

#[test]
fn every_missing_figure_is_drawn_from_quick_studies() {
    let d = disk_dir();
    let lo = LoopDev::prepared("64M");
    let out = d.path().join("all");
    let o = run(&[
        "study",
        "all",
        "--quick",
        "--runtime",
        "150ms",
        "--max-threads",
        "2",
        "--out",
        s(&out),
        &lo.dev,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let docs: Vec<serde_json::Value> = std::fs::read_to_string(out.join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let of = |study: &str| -> Vec<&serde_json::Value> {
        docs.iter()
            .filter(|d| d["study"]["study"] == study)
            .collect()
    };

    // The plans behind the figures.
    let sizes: BTreeSet<(String, u64, u64)> = of("async-sizes")
        .iter()
        .map(|d| {
            let c = &d["config"];
            (
                c["engine"].to_string(),
                c["bs"].as_u64().unwrap(),
                c["threads"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        sizes.len(),
        2 * 3 * 3,
        "2 engines × 3 block sizes × 1–3 threads: {sizes:?}"
    );
    // Batch: for every engine and thread count, each queue size has every batch size of the
    // common list up to itself (no empty slot another queue size fills).
    let mut batches: BTreeMap<(String, u64, u64), BTreeSet<u64>> = BTreeMap::new();
    for d in of("batch") {
        let c = &d["config"];
        batches
            .entry((
                c["engine"].to_string(),
                c["threads"].as_u64().unwrap(),
                c["iodepth"].as_u64().unwrap(),
            ))
            .or_default()
            .insert(c["batch"].as_u64().unwrap());
    }
    let all: BTreeSet<u64> = batches.values().flatten().copied().collect();
    for ((e, t, qs), have) in &batches {
        let want: BTreeSet<u64> = all.iter().copied().filter(|b| b <= qs).collect();
        assert_eq!(have, &want, "{e} T{t} QS{qs}");
    }
    let threads: BTreeSet<u64> = batches.keys().map(|k| k.1).collect();
    assert_eq!(threads, BTreeSet::from([1, 2, 3]));
    // The scan: sampled every MiB of the 64 MiB target.
    for d in of("scan") {
        let n = d["result"]["offset_samples"].as_array().map_or(0, Vec::len);
        assert!(n >= 60, "{n} samples of a 64 MiB scan every 1 MiB");
    }

    let page = d.path().join("figures.html");
    let o = run(&["report", s(&out), "-o", s(&page)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let html = std::fs::read_to_string(&page).unwrap();
    // Each figure in its own study's section, drawn with text that says what it is.
    for (section, chart, must) in [
        (
            "sec-async-sizes",
            "chart-async-sizes-throughput-libaio",
            &["T1", "T2", "T3", "16K"][..],
        ),
        (
            "sec-async-sizes",
            "chart-async-sizes-cpu-uring",
            &["T3"][..],
        ),
        (
            "sec-async-sizes",
            "chart-async-sizes-latency-T3",
            &["p99.9", "libaio", "uring"][..],
        ),
        ("sec-queue", "chart-queue-latency-T2", &["p99.9", "max"][..]),
        (
            "sec-queue",
            "chart-queue-hockey-stick",
            &["QD1", "QD64", "uring T1"][..],
        ),
        ("sec-batch", "chart-batch-throughput-libaio", &["T3"][..]),
        ("sec-batch", "chart-batch-latency-uring-T3", &["p99.9"][..]),
        (
            "sec-uring-features",
            "chart-uring-features-cpu",
            &["+ SQ poll thread", "application threads", "64K"][..],
        ),
        (
            "sec-uring-features",
            "chart-uring-features-throughput",
            &["fixed files", "plain"][..],
        ),
        (
            "sec-uring-features",
            "chart-uring-features-latency",
            &["SQ poll"][..],
        ),
        ("sec-scheduler", "chart-scheduler-cpu", &["CPU"][..]),
        (
            "sec-stream",
            "chart-stream-buffered-direct",
            &["4K buffered", "4K direct", "8K direct", "offset"][..],
        ),
        ("sec-scan", "chart-scan-bandwidth", &["offset", "MiB"][..]),
    ] {
        let sec = element(&html, "section", section);
        let t = texts(element(sec, "svg", chart));
        for m in must {
            assert!(t.contains(m), "{chart}: no '{m}' in its text:\n{t}");
        }
    }
    assert!(element(&html, "figure", "fig-scan-bandwidth").contains("every 1M"));
}
