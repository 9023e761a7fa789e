use super::render;
use super::*;
use crate::interval::RepeatSummary;
use crate::report::model::tests::point;

fn at(label: &str, engine: &str, iops: f64, p999_us: f64, cpu_us: f64) -> Point {
    let mut p = point(label, 4096, iops * 4096.0 / 1e6, p999_us);
    p.engine = engine.into();
    p.iops = iops;
    p.cpu_us_per_io = cpu_us;
    p
}

fn repeated(mut p: Point, rel: f64) -> Point {
    let iv = |m: f64| Interval {
        median: m,
        lo: m * (1.0 - rel),
        hi: m * (1.0 + rel),
    };
    p.spread = Some(RepeatSummary {
        runs: 5,
        confidence: 0.94,
        iops: iv(p.iops),
        mb_s: iv(p.mb_s),
        p50_ns: iv(p.latency.p50_ns as f64),
        p99_ns: iv(p.latency.p99_ns as f64),
        p999_ns: iv(p.latency.p999_ns as f64),
        cpu_us_per_io: iv(p.cpu_us_per_io),
        achieved_depth: None,
    });
    p
}

fn finding(g: &Group, kind: Kind) -> &Finding {
    g.findings.iter().find(|f| f.kind == kind).unwrap()
}

#[test]
fn the_null_engine_is_shown_apart_and_never_ranked() {
    let mut psync = at("P", "psync", 10_000.0, 200.0, 5.0);
    psync.iodepth = 1;
    let mut uring = at("U32B1", "uring", 80_000.0, 900.0, 2.0);
    uring.iodepth = 32;
    let null = at("N", "null", 9_500_000.0, 1.0, 0.1);
    let pts = vec![psync, uring, null];
    let v = verdict(&pts, &|i| pts[i].label.clone());
    assert_eq!(v.targets.len(), 1);
    let t = &v.targets[0];
    assert_eq!(t.groups.len(), 1);
    let g = &t.groups[0];
    assert_eq!(g.configurations, 2, "null is not a configuration of reads");
    assert!(g.findings.iter().all(|f| f.label != "N"));
    assert_eq!(finding(g, Kind::Fastest).label, "U32B1");
    assert_eq!(
        finding(g, Kind::LowestTailQd1).label,
        "P",
        "only QD1 points"
    );
    assert_eq!(finding(g, Kind::CheapestCpu).label, "U32B1");
    assert_eq!(finding(g, Kind::Recommended(Goal::Latency)).label, "U32B1");
    assert_eq!(t.own.null_points, [2]);
    assert_eq!(t.own.timer_ns_per_io, Some(40.0));
    let text = render::text(&v, &pts);
    assert!(
        text.contains("Self-measurement, not ranked: null engine N"),
        "{text}"
    );
    assert!(text.contains("clock reads cost 40ns per I/O"), "{text}");
    assert!(text.starts_with("Verdict\nVerdict for x\n"), "{text}");
}

#[test]
fn sureness_weighs_the_margin_against_the_spread() {
    let a = repeated(at("U32B1", "uring", 100_000.0, 900.0, 2.0), 0.02);
    let close = repeated(at("A32B1", "libaio", 98_000.0, 900.0, 2.5), 0.02);
    let pts = vec![a.clone(), close];
    let v = verdict(&pts, &|i| pts[i].label.clone());
    let f = finding(&v.targets[0].groups[0], Kind::Fastest);
    assert!(matches!(f.sure, Sureness::Tie { .. }), "{:?}", f.sure);
    assert!(
        f.sure
            .phrase(Kind::Fastest)
            .starts_with("a tie: A32B1 is within 2.0 %"),
        "{}",
        f.sure.phrase(Kind::Fastest)
    );
    let far = repeated(at("A32B1", "libaio", 50_000.0, 900.0, 2.5), 0.02);
    let pts = vec![a.clone(), far];
    let v = verdict(&pts, &|i| pts[i].label.clone());
    let f = finding(&v.targets[0].groups[0], Kind::Fastest);
    assert_eq!(
        f.sure.phrase(Kind::Fastest),
        "clear: 100 % more IOPS than A32B1 (spread ±4 % over 5 runs)"
    );
    // Single runs without a timeline: the margin, and that no spread was measured.
    let pts = vec![
        at("U32B1", "uring", 100.0, 9.0, 2.0),
        at("P", "psync", 50.0, 9.0, 2.0),
    ];
    let v = verdict(&pts, &|i| pts[i].label.clone());
    let f = finding(&v.targets[0].groups[0], Kind::Fastest);
    assert!(matches!(f.sure, Sureness::Unmeasured { .. }));
    let pts = vec![at("U32B1", "uring", 100.0, 9.0, 2.0)];
    let v = verdict(&pts, &|i| pts[i].label.clone());
    assert_eq!(
        finding(&v.targets[0].groups[0], Kind::Fastest).sure,
        Sureness::Alone
    );
}

#[test]
fn targets_and_block_sizes_are_judged_apart() {
    let a = at("P", "psync", 10_000.0, 200.0, 5.0);
    let mut b = at("P", "psync", 90_000.0, 20.0, 5.0);
    b.name = "loop0".into();
    let mut c = at("P", "psync", 1_000.0, 2000.0, 5.0);
    c.bs = 1 << 20;
    c.rw = "read".into();
    let mut fio = at("fio:P", "psync", 1e9, 1.0, 1.0);
    fio.source = crate::report::Source::Fio;
    let mut failed = at("U1B1", "uring", 1e9, 1.0, 1.0);
    failed.note = Some("FAILED: run failed: 1 I/O error(s)".into());
    let pts = vec![a, b, c, fio, failed];
    let v = verdict(&pts, &|i| pts[i].label.clone());
    let names: Vec<&str> = v.targets.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["x", "loop0"]);
    let titles: Vec<String> = v.targets[0].groups.iter().map(Group::title).collect();
    assert_eq!(titles, ["4K random", "1M sequential"]);
    assert!(
        v.targets[0].groups[0].findings.iter().all(|f| f.point == 0),
        "fio and failed runs are not ranked"
    );
    assert_eq!(v.targets[1].groups[0].findings[0].point, 1);
    let md = render::markdown(&v, &pts);
    assert!(md.contains("### Verdict for x") && md.contains("### Verdict for loop0"));
    let html = render::html(&v, &pts);
    assert!(
        html.contains("4K random: throughput P, balanced P, latency P"),
        "{html}"
    );
    let json = render::json(&v, &pts);
    assert_eq!(json[1]["groups"][0]["findings"][0]["iops"], 90_000.0);
}
