use super::render;
use super::*;
use crate::points::tests::point;
use crate::stats::TimelinePoint;

/// A point whose per-second IOPS wander by ±`rel` around `iops`.
fn steady(label: &str, iops: f64, rel: f64) -> Point {
    let mut p = point(label, 4096, iops * 4096.0 / 1e6, 100.0);
    p.iops = iops;
    p.timeline = (0..5)
        .map(|k| TimelinePoint {
            t_s: k as f64 + 1.0,
            ios: iops as u64,
            iops: iops * (1.0 + rel * [-1.0, -0.5, 0.0, 0.5, 1.0][k]),
            mib_s: 0.0,
            p50_ns: 20_000,
            p99_ns: 50_000,
            max_ns: 100_000,
        })
        .collect();
    p
}

#[test]
fn changes_beyond_the_spread_are_marked() {
    let a = vec![
        steady("P", 10_000.0, 0.02),
        steady("U32B1", 50_000.0, 0.02),
        steady("A8B1", 1.0, 0.0),
    ];
    let mut slower = steady("U32B1", 40_000.0, 0.02);
    slower.name = "ext4 on vda".into();
    let b = vec![
        steady("P", 10_100.0, 0.02),
        slower,
        steady("X4B1", 1.0, 0.0),
    ];
    let c = compare(&a, &b);
    // Both sides come from an input named `test`: named by their whole paths (the same here).
    assert_eq!(c.a_name, "test: x");
    assert_eq!(c.b_name, "test: x, ext4 on vda");
    let rows: Vec<&str> = c.rows.iter().map(|r| r.what.as_str()).collect();
    assert_eq!(rows, ["P 4K random", "U32B1 4K random"]);
    let p = &c.rows[0].deltas[0];
    assert!((p.change - 0.01).abs() < 1e-9);
    assert_eq!(p.beyond_spread(), Some(false), "1 % within ±4 %");
    let u = &c.rows[1].deltas[0];
    assert_eq!(u.beyond_spread(), Some(true));
    assert!(u.worse());
    assert_eq!(render::cell(u), "-20.0 %*");
    // CPU of single runs has no spread.
    assert_eq!(c.rows[1].deltas[5].beyond_spread(), None);
    assert_eq!(render::cell(&c.rows[1].deltas[5]), "+0.0 %?");
    assert_eq!(c.only_a, ["A8B1 4K random"]);
    assert_eq!(c.only_b, ["X4B1 4K random"]);
    let text = render::text(&c);
    assert!(
        text.contains("U32B1 4K random") && text.contains("-20.0 %*"),
        "{text}"
    );
    assert!(text.contains("only in A: A8B1 4K random"), "{text}");
    let json = render::json(&c);
    assert_eq!(json["rows"][1]["figures"]["iops"]["beyond_spread"], true);
    let html = render::html(&c).unwrap();
    assert!(
        html.contains("<svg id=\"chart-compare-iops\"") && html.contains("A: test: x"),
        "html"
    );
}

#[test]
fn several_targets_on_both_sides_match_by_name() {
    let mut a1 = steady("P", 1.0, 0.0);
    a1.name = "loop0".into();
    let a2 = steady("P", 2.0, 0.0);
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
        let mut p = steady("P", 1000.0, 0.0);
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
