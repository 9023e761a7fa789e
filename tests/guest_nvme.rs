//! readlab on the guest's NVMe driver (tests/guest/nvme-poll.sh, schedulers.sh, devices.sh):
//! polled completions shown polled by the device's own interrupt counts (IOPOLL, SQPOLL + IOPOLL)
//! and RWF_HIPRI's truth told (this kernel completes synchronous HIPRI reads by interrupt, as
//! fio's pvsync2 shows on the same device); the scheduler study across the four schedulers with
//! the original put back, also after Ctrl-C; three drives at once, the monitor's per-device IOPS
//! against readlab's per target. Timing under TCG is emulated: relations only, never speeds.
mod guest_common;

use guest_common::Guest;
use serde_json::Value;

/// `interrupts_per_io` of a run's result (or of one target's), failing with the guest's context.
fn per_io(g: &Guest, what: &str, r: &Value) -> f64 {
    r["completions"]["interrupts_per_io"]
        .as_f64()
        .unwrap_or_else(|| {
            panic!(
                "{what}: no completion interrupts in the result: {}\n{}",
                r["completions"],
                g.context()
            )
        })
}

/// Every read of a run checked against the prepared data, none wrong, no error.
fn verified(g: &Guest, what: &str, r: &Value) {
    let checked = r["verify"]["checked_ios"].as_u64().unwrap_or(0);
    let ios = r["ios"].as_u64().unwrap_or(0);
    assert!(
        ios > 0 && checked >= ios,
        "{what}: {checked} reads checked of {ios}\n{}",
        g.context()
    );
    assert_eq!(
        (
            r["verify"]["mismatches"].as_u64(),
            r["errors"]["count"].as_u64()
        ),
        (Some(0), Some(0)),
        "{what}: mismatches / I/O errors\n{}",
        g.context()
    );
}

fn features(r: &Value) -> Vec<&str> {
    r["engine_features"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

fn lines(g: &Guest, file: &str) -> Vec<Value> {
    g.text(file)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

/// The interrupts of nvme0's queues between two copies of /proc/interrupts the guest kept.
fn nvme0_interrupts(g: &Guest, before: &str, after: &str) -> u64 {
    use readlab::irq::{Queues, Snapshot};
    let q = Queues::Nvme(vec!["nvme0".into()]);
    let count = |f: &str| q.count(&Snapshot::parse(&g.text(f)));
    count(after) - count(before)
}

#[test]
fn nvme_poll_queues_polled_completions_are_shown_polled_and_hipri_tells_the_truth() {
    let g = guest_common::run("nvme-poll");
    g.assert_ok();

    // info: the device polls, and the probe's polled checks say what the interrupts showed
    let info = g.json("info.json");
    assert_eq!(info["device"]["io_poll"], true, "{}", g.context());
    let check = |name: &str| {
        info["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name && c["direct"] == true)
            .unwrap_or_else(|| panic!("no {name} check in info.json\n{}", g.context()))
            .clone()
    };
    let iopoll_check = check("uring --iopoll");
    assert_eq!(iopoll_check["status"], "works", "{}", g.context());
    assert!(
        iopoll_check["detail"]
            .as_str()
            .unwrap_or("")
            .ends_with("polled"),
        "info's IOPOLL check: {iopoll_check}\n{}",
        g.context()
    );
    assert!(
        g.text("info.txt").contains("io_poll yes"),
        "{}",
        g.context()
    );
    // the block layer's hardware queues: nvme.poll_queues=2 made poll queues beside the others
    let hctx = g.text("hctx-types.txt");
    assert!(
        hctx.lines().any(|l| l.ends_with(" poll")) && hctx.lines().any(|l| l.ends_with(" default")),
        "no poll hctx in debugfs: {hctx}\n{}",
        g.context()
    );

    // every way of completing reads and verifies every byte
    let runs = [
        "uring",
        "iopoll",
        "sqpoll-iopoll",
        "uring-qd8",
        "iopoll-qd8",
        "pvsync2",
        "hipri",
    ];
    for name in runs {
        let d = g.json(&format!("{name}.json"));
        verified(&g, name, &d["result"]);
        assert_eq!(
            d["result"]["completions"]["device"],
            "nvme0",
            "{name}\n{}",
            g.context()
        );
    }
    let r = |name: &str| g.json(&format!("{name}.json"))["result"].clone();
    let buffered = g.json("buffered.json");
    verified(&g, "buffered", &buffered["result"]);
    assert!(
        buffered["result"]["completions"].is_null(),
        "a buffered run got a polling verdict: {}\n{}",
        buffered["result"]["completions"],
        g.context()
    );

    // IOPOLL: no interrupt per I/O; the same reads by interrupt: about one each (fewer at depth,
    // where one interrupt may complete several reads)
    for (polled, plain) in [("iopoll", "uring"), ("iopoll-qd8", "uring-qd8")] {
        let (p, i) = (r(polled), r(plain));
        assert!(
            features(&p).contains(&"IOPOLL"),
            "{polled}: no IOPOLL among its features {:?}\n{}",
            features(&p),
            g.context()
        );
        let (pp, ip) = (per_io(&g, polled, &p), per_io(&g, plain, &i));
        assert!(
            pp < readlab::irq::POLLED_BELOW && ip >= 10.0 * readlab::irq::POLLED_BELOW,
            "{polled}: {pp:.3} interrupts per I/O, {plain}: {ip:.3}: polling made no difference\n{}",
            g.context()
        );
        assert!(
            g.text(&format!("{polled}.txt"))
                .contains("interrupts per I/O")
                && g.text(&format!("{polled}.txt")).contains(": polled"),
            "{polled}: no terminal line\n{}",
            g.context()
        );
    }
    assert!(per_io(&g, "uring", &r("uring")) > 0.9, "{}", g.context());

    // SQPOLL + IOPOLL together: both features on, polled
    let sq = r("sqpoll-iopoll");
    assert!(
        features(&sq).contains(&"SQPOLL") && features(&sq).contains(&"IOPOLL"),
        "{:?}\n{}",
        features(&sq),
        g.context()
    );
    assert!(
        per_io(&g, "sqpoll-iopoll", &sq) < readlab::irq::POLLED_BELOW,
        "{}",
        g.context()
    );

    // RWF_HIPRI: readlab's verdict is fio's on the same device (this kernel does not poll
    // synchronous reads), and a run that asked for polling and got interrupts says so
    let hipri = r("hipri");
    let hp = per_io(&g, "hipri", &hipri);
    let fio = g.json("fio-hipri.json");
    let fio_ios = fio["jobs"][0]["read"]["total_ios"].as_u64().unwrap_or(0);
    let fio_irq = nvme0_interrupts(&g, "fio-hipri-irq-before.txt", "fio-hipri-irq-after.txt");
    let fio_per_io = fio_irq as f64 / fio_ios.max(1) as f64;
    assert!(fio_ios > 0, "{}", g.context());
    assert_eq!(
        hp < readlab::irq::POLLED_BELOW,
        fio_per_io < readlab::irq::POLLED_BELOW,
        "pvsync2 --hipri: readlab {hp:.3} interrupts per I/O, fio {fio_per_io:.3} ({fio_irq} in \
         {fio_ios}): they disagree on whether the kernel polled\n{}",
        g.context()
    );
    let warned = hipri["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .any(|w| w.contains(readlab::warnings::NOT_POLLED));
    assert_eq!(
        warned,
        hp >= readlab::irq::NOT_POLLED_FROM,
        "pvsync2 --hipri at {hp:.3} interrupts per I/O: warned {warned}\n{}",
        g.context()
    );
    for name in ["iopoll", "sqpoll-iopoll", "uring", "pvsync2"] {
        let w = r(name)["warnings"].to_string();
        assert!(
            !w.contains(readlab::warnings::NOT_POLLED),
            "{name} warned about polling: {w}\n{}",
            g.context()
        );
    }
    // the probe says the same of one HIPRI read as the run of many
    let hipri_check = check("pvsync2 --hipri");
    assert_eq!(
        hipri_check["status"] == "ignored",
        warned,
        "info's HIPRI check {hipri_check} against the run's verdict\n{}",
        g.context()
    );

    // the uring-features study: IOPOLL points at every block size, polled, beside the others
    let pts = lines(&g, "uf/results.jsonl");
    let sizes: std::collections::BTreeSet<u64> = pts
        .iter()
        .filter_map(|p| p["config"]["bs"].as_u64())
        .collect();
    let polled: Vec<&Value> = pts
        .iter()
        .filter(|p| p["config"]["options"]["iopoll"] == true)
        .collect();
    assert_eq!(
        polled.len(),
        3 * sizes.len(),
        "IOPOLL points of uring-features (sizes {sizes:?})\n{}",
        g.context()
    );
    assert!(pts.len() > polled.len(), "{}", g.context());
    for p in &polled {
        let label = p["result"]["label"].as_str().unwrap_or("?");
        verified(&g, label, &p["result"]);
        assert!(
            features(&p["result"]).contains(&"IOPOLL"),
            "{}",
            g.context()
        );
        assert!(
            per_io(&g, label, &p["result"]) < readlab::irq::POLLED_BELOW,
            "uring-features {label}\n{}",
            g.context()
        );
    }
    let report = g.text("uf-report.md");
    assert!(
        report.contains("polled completions"),
        "the report names no IOPOLL point\n{}",
        g.context()
    );
}

#[test]
fn nvme_scheduler_study_covers_every_scheduler_and_puts_the_original_back() {
    let g = guest_common::run("schedulers");
    g.assert_ok();
    let original = "none [mq-deadline] kyber bfq";
    assert_eq!(
        g.text("sched-before.txt").trim(),
        original,
        "{}",
        g.context()
    );
    assert_eq!(
        g.text("sched-after.txt").trim(),
        original,
        "not restored after the study\n{}",
        g.context()
    );
    let pts = lines(&g, "sched/results.jsonl");
    let report = g.text("sched-report.md");
    for s in ["none", "mq-deadline", "kyber", "bfq"] {
        let mine: Vec<&Value> = pts
            .iter()
            .filter(|p| p["study"]["scheduler"] == s)
            .collect();
        assert!(
            mine.len() >= 4,
            "{} points under {s}\n{}",
            mine.len(),
            g.context()
        );
        for p in mine {
            // the device really ran under it, and the reads were right
            assert_eq!(
                p["environment"]["device"]["scheduler"],
                s,
                "{}",
                g.context()
            );
            verified(&g, s, &p["result"]);
        }
        assert!(
            report.contains(&format!("| P | {s} | 4K |")),
            "the report has no {s} row\n{}",
            g.context()
        );
    }
    // Ctrl-C while another scheduler was set: the study stopped and put the original back
    let during = g.text("sched-during.txt");
    assert!(
        !during.contains("[mq-deadline]"),
        "the study never switched before SIGINT: {during}\n{}",
        g.context()
    );
    assert_eq!(g.text("sched-int.rc").trim(), "130", "{}", g.context());
    assert_eq!(
        g.text("sched-after-int.txt").trim(),
        original,
        "not restored after SIGINT (switched to {})\n{}",
        during.trim(),
        g.context()
    );
}

#[test]
fn three_nvme_drives_the_devices_study_and_the_monitor_agree_with_readlab_per_target() {
    let g = guest_common::run("devices");
    g.assert_ok();
    let names = ["nvme0n1", "nvme1n1", "nvme2n1"];

    // the devices study: 1, 2 and 3 targets at both sizes, each target's result beside the
    // aggregate
    let pts = lines(&g, "devs/results.jsonl");
    for n in 1..=3 {
        let at: Vec<&Value> = pts
            .iter()
            .filter(|p| p["study"]["setting"] == format!("{n} target(s)"))
            .collect();
        assert_eq!(at.len(), 2, "{n} target(s)\n{}", g.context());
        for p in at {
            let targets = p["targets"].as_array().map_or(0, Vec::len);
            assert_eq!(targets, n, "{n} target(s)\n{}", g.context());
            verified(&g, &format!("{n} target(s)"), &p["result"]);
        }
    }
    let report = g.text("devs-report.md");
    assert!(
        names.iter().all(|n| report.contains(n)),
        "the devices report does not name every drive\n{}",
        g.context()
    );

    // one run on all three with the monitor: per-target results and their sum
    let d = g.json("multi.json");
    let targets = d["targets"].as_array().expect("per-target results");
    assert_eq!(targets.len(), 3, "{}", g.context());
    let sum: u64 = targets
        .iter()
        .map(|t| t["result"]["ios"].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(
        d["result"]["ios"].as_u64(),
        Some(sum),
        "aggregate I/Os are not the targets' sum\n{}",
        g.context()
    );
    let samples = d["monitor"]["samples"].as_array().expect("monitor samples");
    for (t, name) in targets.iter().zip(names) {
        assert_eq!(t["environment"]["device"]["name"], name, "{}", g.context());
        let r = &t["result"];
        verified(&g, name, r);
        // each target's own controller's interrupts, about one per I/O or fewer at depth 8
        assert!(
            per_io(&g, name, r) > 0.0,
            "{name}: no interrupts counted\n{}",
            g.context()
        );
        // the monitor's reads of this device against readlab's, every full second of the run
        let mut secs = Vec::new();
        let mut prev = 0.0;
        for tp in r["timeline"].as_array().unwrap() {
            let t_s = tp["t_s"].as_f64().unwrap();
            let full = (t_s - prev - 1.0).abs() < 1e-6;
            prev = t_s;
            let dev = samples
                .iter()
                .filter(|s| (s["t_s"].as_f64().unwrap() - t_s).abs() < 0.5)
                .flat_map(|s| s["devices"].as_array().unwrap())
                .find(|x| x["name"] == name)
                .and_then(|x| x["read_iops"].as_f64());
            if let (true, Some(dev)) = (full, dev) {
                secs.push((t_s, tp["iops"].as_f64().unwrap(), dev));
            }
        }
        assert!(!secs.is_empty(), "{name}: no full second\n{}", g.context());
        // over the run's full seconds within 5 %; each second within 15 % (under TCG on a busy
        // machine the sampler's first interval can start a few tens of ms off the run's)
        let (run, dev) = secs
            .iter()
            .fold((0.0, 0.0), |(r, d), &(_, run, dev)| (r + run, d + dev));
        let gap = dev / run - 1.0;
        assert!(
            gap.abs() <= 0.05,
            "{name}: over {} s the monitor saw {:.0} IOPS, readlab {:.0} ({:+.1} %); every \
             second (t, readlab, monitor): {secs:?}\n{}",
            secs.len(),
            dev / secs.len() as f64,
            run / secs.len() as f64,
            100.0 * gap,
            g.context()
        );
        for &(t_s, run, dev) in &secs {
            let gap = dev / run - 1.0;
            assert!(
                gap.abs() <= 0.15,
                "{name}: in the second ending at {t_s} s the monitor saw {dev:.0} IOPS, readlab \
                 {run:.0} ({:+.1} %); every second (t, readlab, monitor): {secs:?}\n{}",
                100.0 * gap,
                g.context()
            );
        }
    }
    assert!(
        g.text("multi.txt").contains("monitor  nvme2n1"),
        "{}",
        g.context()
    );
}
