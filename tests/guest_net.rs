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

/// The text of the report section whose heading starts with `heading` (up to the next heading of
/// the same level).
fn section<'a>(g: &Guest, text: &'a str, open: &str, heading: &str) -> &'a str {
    let start = text
        .find(&format!("{open}{heading}"))
        .unwrap_or_else(|| panic!("the report has no section '{heading}'\n{}", g.context()));
    let rest = &text[start + open.len()..];
    &rest[..rest.find(open).unwrap_or(rest.len())]
}

#[test]
fn netem_delay_in_the_network_stands_beside_the_servers_delay() {
    // the delays of tests/guest/netem.sh's --netem
    const NETEM_US: [u64; 2] = [100, 1000];
    let g = guest_common::run("netem");
    g.assert_ok();
    assert!(
        g.text("delay.out").contains("study exit 0"),
        "the delay study failed\n{}",
        g.context()
    );
    let docs = results(&g, "delay");
    let net = |d: &Value| d["study"]["net"].clone();
    let us = |v: &Value, k: &str| v[k].as_u64().unwrap_or(0);
    for d in &docs {
        assert_eq!(
            net(d)["network"],
            "netns-veth",
            "a point did not run over the veth pair\n{}",
            g.context()
        );
    }
    let netem: Vec<&Value> = docs
        .iter()
        .filter(|d| us(&net(d), "netem_us") > 0)
        .collect();
    let server: Vec<&Value> = docs
        .iter()
        .filter(|d| us(&net(d), "delay_us") > 0)
        .collect();
    for n in NETEM_US {
        let with = netem.iter().filter(|d| us(&net(d), "netem_us") == n);
        let (count, delayed) = (
            with.clone().count(),
            with.filter(|d| us(&net(d), "delay_us") > 0).count(),
        );
        assert!(
            count >= 4 && delayed == 0,
            "want the quick sweep (1, 4, 16 clients) and a busy-polled QD1 point with netem {n} \
             us and no server delay; got {count} point(s), {delayed} with a server delay\n{}",
            g.context()
        );
    }
    assert!(
        server.len() >= 8,
        "the server's --delay series is missing: {} point(s)\n{}",
        server.len(),
        g.context()
    );
    // The path's floor without netem, per way of waiting (sleeping, busy-polling): the fastest
    // single read of a QD1 point without it, less the server's own delay (spun to be exact), over
    // every such point so that one disturbed point cannot raise it. netem holds every reply back,
    // so no read with it can beat that floor plus the delay (TCG's timers only overshoot); 80 %
    // of it leaves room for jitter (1 ms is there because 100 µs is within TCG's noise when
    // other guests share the machine).
    let qd1 = |d: &Value| d["config"]["threads"] == 1;
    let polled = |d: &Value| us(&net(d), "busy_poll_us") > 0;
    let min = |d: &Value| us(&d["result"]["latency"], "min_ns");
    for d in netem.iter().filter(|d| qd1(d)) {
        let poll = polled(d);
        let floor = docs
            .iter()
            .filter(|e| qd1(e) && polled(e) == poll && us(&net(e), "netem_us") == 0)
            .map(|e| min(e).saturating_sub(us(&net(e), "delay_us") * 1000))
            .min()
            .unwrap_or_else(|| panic!("no QD1 point without netem\n{}", g.context()));
        let (n, m, p50) = (
            us(&net(d), "netem_us"),
            min(d),
            us(&d["result"]["latency"], "p50_ns"),
        );
        assert!(
            m >= floor + n * 1000 * 8 / 10,
            "netem {n} us ({}): fastest read {:.1} us, p50 {:.1} us; the floor without netem is \
             {:.1} us: want at least the floor + ~{n} us (80 %)\n{}",
            if poll { "busy-polling" } else { "sleeping" },
            m as f64 / 1e3,
            p50 as f64 / 1e3,
            floor as f64 / 1e3,
            g.context()
        );
    }
    // The summary says what netem added beside what the server's delays added.
    let summary = g.text("delay/summary.md");
    assert!(
        NETEM_US.iter().all(|n| {
            summary.contains(&format!("netem {n} us →"))
                && summary.contains(&format!("netem +{n}us"))
        }) && summary.contains(", 100 us →"),
        "summary.md does not set netem's delay beside the server's\n{}",
        g.context()
    );
    // One report section holds both series: the HTML chart's legend, the Markdown's figures.
    let heading = "Networked flash: injected delays";
    let html = g.text("report.html");
    let sec = section(&g, &html, "<h2>", heading);
    assert!(
        sec.contains("\n+100 µs\n")
            && NETEM_US
                .iter()
                .all(|n| sec.contains(&format!("\nnetem +{n} µs\n"))),
        "the HTML report's delay section lacks the server's +100 µs or netem's {NETEM_US:?} µs \
         series\n{}",
        g.context()
    );
    let md = g.text("report.md");
    let sec = section(&g, &md, "\n## ", heading);
    assert!(
        sec.contains("the server's +10 µs, +100 µs; netem's +100 µs, +1000 µs on the veth"),
        "the Markdown report's delay section does not name both series\n{}",
        g.context()
    );
    // The study's namespaces (and the veth pair with its netem) are gone.
    let left = g.text("netns-after.txt");
    assert!(
        !left.contains("rl"),
        "namespaces left after the study: {left}\n{}",
        g.context()
    );
}
