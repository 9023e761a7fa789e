use super::render;
use super::*;
use crate::estimate::Estimate;
use crate::points::tests::point;

/// A figure within ±`rel` of `v`.
fn within(v: f64, rel: f64) -> Estimate {
    Estimate {
        value: v,
        lo: Some(v * (1.0 - rel)),
        hi: Some(v * (1.0 + rel)),
    }
}

/// A point of `iops` whose run measured its own interval: IOPS and CPU within ±`rel`, p99.9
/// within ±`tail`.
fn measured(label: &str, iops: f64, rel: f64, p999_us: f64, tail: f64) -> Point {
    let mut p = point(label, 4096, iops * 4096.0 / 1e6, p999_us);
    p.iops = iops;
    p.precision = Some(crate::result::Precision {
        confidence: 0.95,
        window_s: 0.1,
        windows: 100,
        batches: 10,
        iops: within(iops, rel),
        cpu_us_per_io: Some(within(p.cpu_us_per_io, rel)),
        p50_ns: within(p.latency.p50_ns as f64, tail),
        p99_ns: within(p.latency.p99_ns as f64, tail),
        p999_ns: within(p.latency.p999_ns as f64, tail),
    });
    p
}

/// A point of `iops` with no interval (older results, a run too short).
fn steady(label: &str, iops: f64) -> Point {
    let mut p = point(label, 4096, iops * 4096.0 / 1e6, 100.0);
    p.iops = iops;
    p
}

/// Two runs of one configuration, the same figures give or take their noise (their intervals
/// overlap): no change beyond the noise, nothing marked — where the old rule (the two
/// per-second spreads added) would have had nothing to go on, or called a change.
#[test]
fn the_same_within_the_noise_is_no_change() {
    let a = [measured("U1B1", 50_000.0, 0.02, 100.0, 0.05)];
    let b = [measured("U1B1", 50_500.0, 0.02, 103.0, 0.05)];
    let c = compare(&a, &b);
    let r = &c.rows[0];
    assert_eq!(r.call(), Call::Same);
    assert_eq!(
        r.sentence(),
        "U1B1 4K random: no change beyond the noise (95 % interval −3.0–5.1 %, one run each)"
    );
    assert!(r.deltas.iter().all(|d| d.beyond_noise() == Some(false)));
    assert_eq!(render::cell(&r.deltas[0]), "+1.0 %");
    let json = render::json(&c);
    assert_eq!(json["rows"][0]["call"], "no_change");
    assert_eq!(json["rows"][0]["figures"]["iops"]["beyond_noise"], false);
    assert!(json["rows"][0]["figures"]["iops"]["lo"].as_f64().unwrap() < 0.0);
}

/// 10 % apart with tight intervals: slower, by how much and with what interval; MB/s takes
/// IOPS's interval; p99.9 named when it moved beyond the noise too.
#[test]
fn ten_percent_apart_with_tight_intervals_is_slower() {
    let a = [measured("U1B1", 50_000.0, 0.01, 100.0, 0.02)];
    let b = [measured("U1B1", 45_000.0, 0.01, 100.0, 0.02)];
    let c = compare(&a, &b);
    let r = &c.rows[0];
    assert_eq!(r.call(), Call::Slower);
    assert_eq!(
        r.sentence(),
        "U1B1 4K random: 10 % slower (95 % interval 8.2–12 %, one run each)"
    );
    assert_eq!(render::cell(&r.deltas[0]), "-10.0 %*");
    assert_eq!(r.deltas[1].beyond_noise(), Some(true), "MB/s as IOPS");
    assert_eq!(r.deltas[4].beyond_noise(), Some(false), "p99.9 the same");
    // The tail rose by a third as well: said after the throughput.
    let b = [measured("U1B1", 45_000.0, 0.01, 133.0, 0.02)];
    let c = compare(&a, &b);
    assert_eq!(
        c.rows[0].finding(),
        "10 % slower (95 % interval 8.2–12 %, one run each); p99.9 33 % higher (95 % interval \
         28–38 %, one run each)"
    );
    // B against A the other way round: faster.
    let c = compare(&b, &a);
    assert_eq!(c.rows[0].call(), Call::Faster);
    assert!(
        c.rows[0]
            .finding()
            .starts_with("11 % faster (95 % interval 8.9–13 %"),
        "{}",
        c.rows[0].finding()
    );
    let text = render::text_within(&c, 100);
    assert!(text.contains("- U1B1 4K random: 11 % faster"), "{text}");
    assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");
    let json = render::json(&c);
    assert_eq!(json["rows"][0]["call"], "faster");
    assert!(
        json["rows"][0]["finding"]
            .as_str()
            .unwrap()
            .starts_with("11 % faster")
    );
}

/// Without an interval on a side, nothing is called: the change is marked `?` and the sentence
/// says why.
#[test]
fn no_interval_is_said_not_guessed() {
    let a = [steady("P", 10_000.0), steady("U32B1", 50_000.0)];
    let mut fio = steady("U32B1", 40_000.0);
    fio.source = crate::points::Source::Fio;
    let b = [measured("P", 12_000.0, 0.01, 100.0, 0.02), fio];
    let c = compare(&a, &b);
    assert!(c.rows.iter().all(|r| r.call() == Call::Unmeasured));
    assert_eq!(
        c.rows[0].finding(),
        "no interval measured (A: a run too short for one, or results older than readlab's \
         intervals); IOPS +20 %"
    );
    assert_eq!(
        c.rows[1].finding(),
        "no interval measured (A: a run too short for one, or results older than readlab's \
         intervals; B: imported from fio); IOPS −20 %"
    );
    assert_eq!(render::cell(&c.rows[1].deltas[0]), "-20.0 %?");
    let json = render::json(&c);
    assert_eq!(json["rows"][1]["call"], "unmeasured");
    assert!(json["rows"][1]["figures"]["iops"]["lo"].is_null());
    assert!(json["rows"][1]["figures"]["iops"]["beyond_noise"].is_null());
}

#[test]
fn changes_beyond_the_noise_are_marked() {
    let a = vec![
        measured("P", 10_000.0, 0.02, 100.0, 0.05),
        measured("U32B1", 50_000.0, 0.02, 100.0, 0.05),
        steady("A8B1", 1.0),
    ];
    let mut slower = measured("U32B1", 40_000.0, 0.02, 100.0, 0.05);
    slower.name = "ext4 on vda".into();
    let b = vec![
        measured("P", 10_100.0, 0.02, 100.0, 0.05),
        slower,
        steady("X4B1", 1.0),
    ];
    let c = compare(&a, &b);
    // Both sides come from an input named `test`: named by their whole paths (the same here).
    assert_eq!(c.a_name, "test: x");
    assert_eq!(c.b_name, "test: x, ext4 on vda");
    let rows: Vec<&str> = c.rows.iter().map(|r| r.what.as_str()).collect();
    assert_eq!(rows, ["P 4K random", "U32B1 4K random"]);
    let p = &c.rows[0].deltas[0];
    assert!((p.change - 0.01).abs() < 1e-9);
    assert_eq!(p.beyond_noise(), Some(false), "1 % within the noise");
    let u = &c.rows[1].deltas[0];
    assert_eq!(u.beyond_noise(), Some(true));
    assert!(u.worse());
    assert_eq!(render::cell(u), "-20.0 %*");
    assert_eq!(c.only_a, ["A8B1 4K random"]);
    assert_eq!(c.only_b, ["X4B1 4K random"]);
    let text = render::text(&c);
    assert!(
        text.contains("U32B1 4K random") && text.contains("-20.0 %*"),
        "{text}"
    );
    assert!(
        text.contains("U32B1 4K random: 20 % slower (95 % interval"),
        "{text}"
    );
    assert!(text.contains("only in A: A8B1 4K random"), "{text}");
    let json = render::json(&c);
    assert_eq!(json["rows"][1]["figures"]["iops"]["beyond_noise"], true);
    let md = render::markdown(&c);
    assert!(md.contains("U32B1 4K random: 20 % slower"), "{md}");
    let html = render::html(&c).unwrap();
    assert!(
        html.contains("<svg id=\"chart-compare-iops\"") && html.contains("A: test: x"),
        "html"
    );
    assert!(html.contains("U32B1 4K random: 20 % slower"), "html");
}

#[test]
fn several_targets_on_both_sides_match_by_name() {
    let mut a1 = steady("P", 1.0);
    a1.name = "loop0".into();
    let a2 = steady("P", 2.0);
    let c = compare(&[a1.clone(), a2.clone()], &[a2.clone(), a1.clone()]);
    assert_eq!(c.rows.len(), 2);
    assert!(c.rows.iter().all(|r| r.deltas[0].change == 0.0));
    assert!(c.rows[0].what.ends_with("on loop0"), "{}", c.rows[0].what);
}

/// Two runs of the same device from two inputs and two kernels: each side is named by its input
/// and says what differs, never both just "loop3".
#[test]
fn each_side_is_named_by_its_input_and_what_differs() {
    let side = |origin: &str, kernel: &str| {
        let mut p = steady("P", 1000.0);
        p.name = "loop3".into();
        p.origin = origin.into();
        p.env.kernel = kernel.into();
        p.env.target = "/dev/loop3".into();
        p
    };
    let c = compare(
        &[side("runs/before.json", "6.1.0")],
        &[side("runs/after/results.jsonl", "6.18.44")],
    );
    assert_eq!(
        (c.a_input.as_str(), c.b_input.as_str()),
        ("before", "after")
    );
    assert_eq!(c.a_name, "before: loop3, kernel 6.1.0");
    assert_eq!(c.b_name, "after: loop3, kernel 6.18.44");
    assert_eq!(c.differs.len(), 1);
    let text = render::text(&c);
    assert!(
        text.contains("A: before: loop3, kernel 6.1.0. B: after: loop3, kernel 6.18.44."),
        "{text}"
    );
    assert_eq!(render::json(&c)["b_input"], "after");
    // Inputs of the same name go by their paths.
    let c = compare(&[side("a/run.json", "k")], &[side("b/run.json", "k")]);
    assert_eq!(c.a_name, "a/run.json: loop3");
    assert_eq!(c.b_name, "b/run.json: loop3");
}
