//! Networked reads inside a throwaway guest (tests/guest/kernel-nbd.sh, tests/guest/netem.sh): the
//! Linux kernel's own NBD client reading `readlab serve` (both server models) through /dev/nbd0,
//! and the delay study with a network delay made by netem on the veth pair beside the server's
//! injected delay. Every network lives inside the guest (it has no network device).
mod guest_common;

use guest_common::Guest;
use serde_json::Value;

/// The documents of a study's results.jsonl.
fn results(g: &Guest, dir: &str) -> Vec<Value> {
    g.text(&format!("{dir}/results.jsonl"))
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            serde_json::from_str(l).unwrap_or_else(|e| {
                panic!(
                    "{dir}/results.jsonl: a line is not JSON: {e}\n{}",
                    g.context()
                )
            })
        })
        .collect()
}

#[test]
fn the_kernels_nbd_client_reads_readlab_serve_and_detaches() {
    let g = guest_common::run("kernel-nbd");
    g.assert_ok();
    for model in ["thread", "uring"] {
        // attached: the kernel saw the 256 MiB export (512-byte sectors)
        let attached = g.text(&format!("attached-{model}.txt"));
        assert_eq!(
            attached.trim(),
            "size=524288",
            "{model}: /dev/nbd0 after nbd-client attached\n{}",
            g.context()
        );
        // run --verify through the kernel's driver
        let run = g.json(&format!("run-{model}.json"));
        assert_eq!(
            run["config"]["target"],
            "/dev/nbd0",
            "{model}: the run read something else\n{}",
            g.context()
        );
        let v = &run["result"]["verify"];
        let checked = v["checked_ios"].as_u64().unwrap_or(0);
        assert!(
            checked > 0 && v["mismatches"] == 0,
            "{model}: readlab run --verify /dev/nbd0: {checked} reads checked, {} mismatches \
             (want > 0 and 0)\n{}",
            v["mismatches"],
            g.context()
        );
        // the reads reached the server: it served at least what the run checked
        let served = g.json(&format!("serve-{model}.json"));
        assert_eq!(served["model"], model, "{}", g.context());
        let reads = served["reads"].as_u64().unwrap_or(0);
        assert!(
            reads >= checked,
            "{model}: readlab serve counted {reads} reads, fewer than the {checked} the run \
             checked through /dev/nbd0\n{}",
            g.context()
        );
        // the latency study's points, every one read and verified through /dev/nbd0
        let docs = results(&g, &format!("study-{model}"));
        assert!(
            docs.len() >= 12,
            "{model}: the latency study stored {} points (want 6 sizes × pread/preadv2)\n{}",
            docs.len(),
            g.context()
        );
        for d in &docs {
            let (c, r) = (&d["config"], &d["result"]);
            assert!(
                c["target"] == "/dev/nbd0"
                    && r["ios"].as_u64().unwrap_or(0) > 0
                    && r["verify"]["mismatches"] == 0
                    && r["errors"]["count"] == 0
                    && r["latency"]["p50_ns"].as_u64().unwrap_or(0) > 0,
                "{model}: a latency point through /dev/nbd0 read nothing, failed or mismatched: \
                 {} {} ios {} verify {} errors {}\n{}",
                c["engine"],
                c["bs"],
                r["ios"],
                r["verify"],
                r["errors"],
                g.context()
            );
        }
        // nbd-client -d: the kernel let go of the device
        let detached = g.text(&format!("detached-{model}.txt"));
        assert!(
            g.text(&format!("detach-{model}.out"))
                .contains("detach exit 0")
                && detached.trim() == "size=0 pid=absent",
            "{model}: after nbd-client -d: {} (want size=0 pid=absent, exit 0)\n{}",
            detached.trim(),
            g.context()
        );
    }
    // both models' points in one report
    let md = g.text("report.md");
    assert!(
        md.contains("study-thread") && md.contains("study-uring") && md.contains("nbd0"),
        "the report does not hold both models' points\n{}",
        g.context()
    );
}
