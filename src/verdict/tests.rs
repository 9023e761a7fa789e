use super::render;
use super::*;
use crate::interval::{Interval, RepeatSummary};
use crate::points::tests::point;

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
    assert!(
        text.starts_with("Verdict for x\n- 4K random"),
        "one heading: {text}"
    );
}

#[test]
fn sureness_weighs_the_margin_against_the_spread() {
    let a = repeated(at("U32B1", "uring", 100_000.0, 900.0, 2.0), 0.02);
    let close = repeated(at("A32B1", "libaio", 98_000.0, 900.0, 2.5), 0.02);
    let pts = vec![a.clone(), close];
    let v = verdict(&pts, &|i| pts[i].label.clone());
    let f = finding(&v.targets[0].groups[0], Kind::Fastest);
    assert!(matches!(f.sure, Sureness::Open { .. }), "{:?}", f.sure);
    assert!(
        f.sure.phrase(Kind::Fastest).starts_with(
            "too close to call: 2.0 % more IOPS than A32B1 (94 % interval −2.0–6.2 %, 5 runs \
             each); race them"
        ),
        "{}",
        f.sure.phrase(Kind::Fastest)
    );
    let far = repeated(at("A32B1", "libaio", 50_000.0, 900.0, 2.5), 0.02);
    let pts = vec![a.clone(), far];
    let v = verdict(&pts, &|i| pts[i].label.clone());
    let f = finding(&v.targets[0].groups[0], Kind::Fastest);
    assert_eq!(
        f.sure.phrase(Kind::Fastest),
        "100 % more IOPS than A32B1 (94 % interval 92–108 %, 5 runs each)"
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
    fio.source = crate::points::Source::Fio;
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

fn qd(mut p: Point, iodepth: usize) -> Point {
    p.iodepth = iodepth;
    p
}

/// After `--quick` (single one-second points, no spread): no winner is named, however small or
/// large the margin.
#[test]
fn without_a_spread_it_is_too_close_to_call() {
    // 0.3 % lower tail, no spread: the old verdict picked A32B1.
    let pts = vec![
        at("P", "psync", 10_000.0, 200.0, 5.0),
        qd(at("A32B1", "libaio", 10_030.0, 199.4, 5.0), 32),
    ];
    let v = verdict(&pts, &|i| pts[i].label.clone());
    let g = &v.targets[0].groups[0];
    let f = finding(g, Kind::Recommended(Goal::Balanced));
    assert!(f.sure.close() && f.close, "{:?}", f.sure);
    assert_eq!(f.named(), "A32B1 ~ P", "no winner in the label cell");
    assert!(
        f.sure
            .phrase(f.kind)
            .starts_with("too close to call: 0.3 % lower tail than P, no interval measured"),
        "{}",
        f.sure.phrase(f.kind)
    );
    let a = answer::answers(&v, &pts);
    assert_eq!(a.len(), 1);
    assert!(a[0].close);
    assert!(
        a[0].text
            .starts_with("x 4K random: too close to call (balanced: lowest p99.9 keeping 90 % of the best IOPS): A32B1 and P differ by 0.3 % lower p99.9, no interval measured;"),
        "{}",
        a[0].text
    );
    assert!(!a[0].text.contains("use "), "{}", a[0].text);
    assert!(
        render::headline(g).contains("balanced too close to call (A32B1 ~ P)"),
        "{}",
        render::headline(g)
    );
    // A large margin without a spread is not called either.
    let pts = vec![
        at("P", "psync", 10_000.0, 200.0, 5.0),
        qd(at("U32B1", "uring", 100_000.0, 900.0, 2.0), 32),
    ];
    let v = verdict(&pts, &|i| pts[i].label.clone());
    for goal in Goal::ALL {
        let a = answer::answers_for(&v, &pts, goal);
        assert!(a[0].close, "{goal:?}: {}", a[0].text);
        assert!(
            a[0].text.contains("no interval measured")
                || a[0].text.contains("no interval was measured"),
            "{}",
            a[0].text
        );
    }
}

#[test]
fn a_margin_inside_the_spread_is_too_close_to_call() {
    let pts = vec![
        repeated(qd(at("U32B1", "uring", 100_000.0, 900.0, 2.0), 32), 0.02),
        repeated(qd(at("A32B1", "libaio", 98_000.0, 900.0, 2.5), 32), 0.02),
    ];
    let v = verdict(&pts, &|i| pts[i].label.clone());
    let a = answer::answers_for(&v, &pts, Goal::Throughput);
    assert!(a[0].close, "{}", a[0].text);
    assert_eq!(
        a[0].text,
        format!(
            "x 4K random: too close to call (throughput: most IOPS (within 1 %, the lower p99.9)): \
             U32B1 and A32B1 differ by 2.0 % more IOPS, 94 % interval −2.0–6.2 %, 5 runs each; \
             {REPEAT_HINT}"
        )
    );
}

#[test]
fn a_clear_winner_is_still_named_in_words_with_its_rule() {
    let pts = vec![
        repeated(qd(at("U32B1", "uring", 100_000.0, 900.0, 2.0), 32), 0.02),
        repeated(qd(at("A32B1", "libaio", 50_000.0, 900.0, 2.5), 32), 0.02),
    ];
    let v = verdict(&pts, &|i| pts[i].label.clone());
    let a = answer::answers_for(&v, &pts, Goal::Throughput);
    assert!(!a[0].close);
    assert_eq!(
        a[0].text,
        "x 4K random: use U32B1 (io_uring, queue depth 32, batch 1; 100000 IOPS, p99.9 \
         900.0us) — throughput: most IOPS (within 1 %, the lower p99.9); 100 % more IOPS than A32B1 \
         (94 % interval 92–108 %, 5 runs each)"
    );
    // Balanced: the only one keeping 90 % of the best IOPS, with a measured spread.
    let a = answer::answers(&v, &pts);
    assert!(!a[0].close, "{}", a[0].text);
    assert!(
        a[0].text.starts_with(
            "x 4K random: use U32B1 (io_uring, queue depth 32, batch 1; 100000 IOPS, \
             p99.9 900.0us) — balanced: lowest p99.9 keeping 90 % of the best IOPS; the only configuration keeping 90 %"
        ),
        "{}",
        a[0].text
    );
    // A margin beyond the spread on the tail, among configurations keeping half the IOPS.
    let pts = vec![
        repeated(qd(at("U32B1", "uring", 100_000.0, 900.0, 2.0), 32), 0.02),
        repeated(qd(at("U8B1", "uring", 60_000.0, 300.0, 2.5), 8), 0.02),
    ];
    let v = verdict(&pts, &|i| pts[i].label.clone());
    let a = answer::answers_for(&v, &pts, Goal::Latency);
    assert!(!a[0].close, "{}", a[0].text);
    assert!(
        a[0].text.contains("use U8B1 (io_uring, queue depth 8, batch 1; 60000 IOPS, p99.9 300.0us) — latency: lowest p99.9 keeping half the best IOPS; 67 % lower p99.9 than U32B1 (94 % interval 65–68 %, 5 runs each)"),
        "{}",
        a[0].text
    );
    // Only one configuration: nothing to choose from, so no answer (the verdict's table says
    // so), and the verdict prints no rules.
    let one = vec![at("P", "psync", 10_000.0, 200.0, 5.0)];
    let v = verdict(&one, &|i| one[i].label.clone());
    // The answer leaves it to the verdict table: nothing was chosen.
    assert!(answer::answers(&v, &one).is_empty());
    assert!(render::text(&v, &one).contains("the only one measured"));
    assert!(!render::text(&v, &one).contains("Rules:"));
}

/// Each pick's rule is printed beside it on the terminal and in Markdown (the HTML had it alone).
#[test]
fn every_format_states_each_picks_rule() {
    let pts = vec![
        at("P", "psync", 10_000.0, 200.0, 5.0),
        qd(at("U32B1", "uring", 80_000.0, 900.0, 2.0), 32),
    ];
    let v = verdict(&pts, &|i| pts[i].label.clone());
    let rules = [
        "fastest: most IOPS",
        "lowest tail at QD1: lowest p99.9 with one request in flight and one thread",
        "cheapest: least CPU per I/O",
        "throughput: most IOPS (within 1 %, the lower p99.9)",
        "balanced: lowest p99.9 keeping 90 % of the best IOPS",
        "latency: lowest p99.9 keeping half the best IOPS",
    ];
    let text = render::text_within(&v, &pts, 100);
    let md = render::markdown(&v, &pts);
    let html = render::html(&v, &pts);
    for r in rules {
        assert!(md.contains(r), "{r} in:\n{md}");
        assert!(html.contains(r), "{r} in:\n{html}");
    }
    assert!(text.contains("\nRules: fastest: most IOPS; "), "{text}");
    for l in text
        .lines()
        .skip_while(|l| !l.contains("Rules:"))
        .take_while(|l| !l.contains("Self-measurement"))
    {
        assert!(l.chars().count() <= 100, "{l}");
    }
    let text = text.replace('\n', " ");
    for r in rules {
        assert!(text.contains(r), "{r} in:\n{text}");
    }
    let json = render::json(&v, &pts);
    assert_eq!(
        json[0]["groups"][0]["findings"][5]["rule"],
        "latency: lowest p99.9 keeping half the best IOPS"
    );
    // No spread: neither the fastest (against a runner-up) nor latency's pick (the only one
    // keeping half the best IOPS, by an unmeasured margin) is called.
    let latency = &json[0]["groups"][0]["findings"][5];
    assert_eq!(
        json[0]["groups"][0]["findings"][0]["too_close_to_call"],
        true
    );
    assert_eq!(latency["too_close_to_call"], true);
    assert_eq!(
        latency["how_sure"],
        format!(
            "too close to call: the only configuration keeping 50 % of the best IOPS, but no \
             interval was measured; {REPEAT_HINT}"
        )
    );
}

/// A configuration measured both once and repeatedly is ranked on its repetitions: a single
/// lucky run never outranks the median of several.
#[test]
fn repeated_measurements_outrank_single_ones_of_the_same_configuration() {
    let lucky = qd(at("U32B1", "uring", 130_000.0, 900.0, 2.0), 32);
    let median = repeated(qd(at("U32B1", "uring", 100_000.0, 900.0, 2.0), 32), 0.02);
    let other = repeated(qd(at("A32B1", "libaio", 110_000.0, 900.0, 2.0), 32), 0.01);
    let pts = vec![lucky, median, other];
    let v = verdict(&pts, &|i| pts[i].label.clone());
    let g = &v.targets[0].groups[0];
    let f = finding(g, Kind::Fastest);
    assert_eq!(f.label, "A32B1", "the single 130 000 does not count");
    assert!(
        matches!(f.sure, Sureness::Ahead { ref runner_up, .. } if runner_up == "U32B1"),
        "{:?}",
        f.sure
    );
    assert!(g.findings.iter().all(|f| f.point != 0));
    // Without the repetitions the single run stands.
    let pts = vec![pts[0].clone(), pts[2].clone()];
    let v = verdict(&pts, &|i| pts[i].label.clone());
    assert_eq!(finding(&v.targets[0].groups[0], Kind::Fastest).point, 0);
}

fn tuned(search: &[Point], medians: &[(usize, f64, f64)]) -> crate::tune::TuneReport {
    use crate::tune::{Candidate, Recommendation, Spread, TuneReport};
    let finalists: Vec<Candidate> = medians
        .iter()
        .map(|&(i, iops, rel)| {
            let p = &search[i];
            let iv = |m: f64| Interval {
                median: m,
                lo: m * (1.0 - rel),
                hi: m * (1.0 + rel),
            };
            Candidate {
                config: crate::config::RunConfig::new("/dev/x"),
                label: p.label.clone(),
                iops,
                mb_s: iops * 4096.0 / 1e6,
                p999_ns: p.latency.p999_ns,
                p50_ns: p.latency.p50_ns,
                cpu_cores: 0.5,
                spread: Some(Spread {
                    runs: 3,
                    confidence: 0.75,
                    iops: iv(iops),
                    p999_ns: iv(p.latency.p999_ns as f64),
                    cpu_cores: iv(0.5),
                }),
                requests: 1_000_000,
            }
        })
        .collect();
    TuneReport {
        warnings: Vec::new(),
        target: "/dev/x".into(),
        recommendations: vec![Recommendation {
            bs: 4096,
            goal: Goal::Balanced,
            pick: finalists.first().cloned(),
            per_goal: vec![(Goal::Throughput, finalists[0].clone())],
            frontier: Vec::new(),
            trade_offs: Vec::new(),
            closest: Vec::new(),
            points_measured: search.len(),
            finalists,
        }],
        seconds: 1.0,
        budget_s: 1.0,
        results: "results.jsonl".into(),
        failures: Default::default(),
    }
}

/// The tuner's re-measured finalists (tune.json) are ranked as the medians of their runs, in
/// place of their one-second search runs; every format shows the figures ranked.
#[test]
fn a_tuners_medians_replace_its_search_runs() {
    let mut search = qd(at("U32B1", "uring", 300_000.0, 900.0, 2.0), 32);
    search.study = Some("tune".into());
    let mut other = qd(at("U16B1", "uring", 200_000.0, 800.0, 2.0), 16);
    other.study = Some("tune".into());
    let mut r = crate::points::Report::from_points(vec![search, other]);
    r.tuned = vec![tuned(
        &r.points,
        &[(0, 250_000.0, 0.02), (1, 200_000.0, 0.02)],
    )];
    let v = of_report(&r);
    assert_eq!((v.given, v.extra.len()), (2, 2));
    let g = &v.targets[0].groups[0];
    let f = finding(g, Kind::Fastest);
    assert_eq!(f.label, "U32B1");
    assert!(f.point >= v.given, "the median, not the search run");
    assert_eq!(v.point(&r.points, f.point).iops, 250_000.0);
    assert!(
        matches!(f.sure, Sureness::Ahead { gap, .. } if (gap.value - 0.25).abs() < 1e-9),
        "{:?}",
        f.sure
    );
    let text = render::text(&v, &r.points);
    assert!(
        text.contains("250000") && !text.contains("300000"),
        "{text}"
    );
    let json = render::json(&v, &r.points);
    assert_eq!(json[0]["groups"][0]["findings"][0]["iops"], 250_000.0);
    // The tuner's answer weighs its finalists alone.
    let (fv, fpts) = of_finalists(&r);
    assert_eq!(fpts.len(), 2);
    let a = answer::answers_for(&fv, &fpts, Goal::Throughput);
    assert!(
        a[0].text.contains("use U32B1")
            && a[0]
                .text
                .contains("25 % more IOPS than U16B1 (75 % interval 20–30 %, 3 runs each)"),
        "{}",
        a[0].text
    );
    // A finalist the budget left unmeasured is still weighed by the tuner's answer (as its
    // search run, without a spread), never left out; the report ranks its search run already.
    let rec = &mut r.tuned[0].recommendations[0];
    rec.finalists[1].spread.as_mut().unwrap().runs = 1;
    let (fv, fpts) = of_finalists(&r);
    assert_eq!(fpts.len(), 2);
    let a = answer::answers_for(&fv, &fpts, Goal::Throughput);
    assert!(a[0].close, "{}", a[0].text);
    assert_eq!(of_report(&r).extra.len(), 1);
}

#[test]
fn the_runner_cost_is_the_median_over_the_targets_points() {
    let cost = |cpu: f64, run: f64| crate::result::RunnerCost::new(cpu, 5e6, run);
    let mut a = at("P", "psync", 10_000.0, 200.0, 1.0);
    a.runner_cost = cost(0.10, 1.0);
    let mut b = at("U32B1", "uring", 80_000.0, 900.0, 2.0);
    b.iodepth = 32;
    b.runner_cost = cost(0.30, 2.0);
    let mut c = at("A32B1", "libaio", 70_000.0, 900.0, 0.5);
    c.iodepth = 32;
    c.runner_cost = cost(0.20, 0.5);
    // A point that did not measure it (older results, fio) is left out of the medians.
    let d = at("A16B1", "libaio", 60_000.0, 900.0, 3.0);
    let pts = vec![a, b, c, d];
    let v = verdict(&pts, &|i| pts[i].label.clone());
    let r = v.targets[0].own.runner.clone().expect("runner cost");
    assert_eq!(r.points, 3);
    assert!((r.cpu_us_per_io - 0.20).abs() < 1e-12, "{r:?}");
    // Shares 10 %, 15 %, 40 %: the median share, not the share of the medians.
    assert!((r.share_of_cpu - 0.15).abs() < 1e-12, "{r:?}");
    let text = render::text(&v, &pts);
    assert!(
        text.contains(
            "readlab's own loop 0.20 µs CPU per I/O on the null engine in the same shapes, 15 % of \
             their CPU per I/O (medians of 3 points)"
        ),
        "{text}"
    );
    // None recorded: nothing said.
    let old: Vec<Point> = pts
        .iter()
        .cloned()
        .map(|mut p| {
            p.runner_cost = None;
            p
        })
        .collect();
    let v = verdict(&old, &|i| old[i].label.clone());
    assert_eq!(v.targets[0].own.runner, None);
    assert!(!render::text(&v, &old).contains("own loop"));
}

/// A point measured once with its own interval (batch means) of ±`rel`.
fn precise(mut p: Point, rel: f64) -> Point {
    let e = |v: f64| crate::estimate::Estimate {
        value: v,
        lo: Some(v * (1.0 - rel)),
        hi: Some(v * (1.0 + rel)),
    };
    p.precision = Some(crate::result::Precision {
        confidence: 0.95,
        window_s: 0.1,
        windows: 40,
        batches: 10,
        iops: e(p.iops),
        cpu_us_per_io: Some(e(p.cpu_us_per_io)),
        p50_ns: e(p.latency.p50_ns as f64),
        p99_ns: e(p.latency.p99_ns as f64),
        p999_ns: e(p.latency.p999_ns as f64),
    });
    p
}

/// Two configurations raced in one race: their figures per round.
fn raced(mut p: Point, id: &str, iops: &[f64]) -> Point {
    p.race = Some(crate::result::RaceRecord {
        id: id.into(),
        rounds: iops
            .iter()
            .enumerate()
            .map(|(round, &x)| crate::result::RoundFigures {
                round,
                seconds: 1.0,
                iops: x,
                cpu_us_per_io: p.cpu_us_per_io,
                p99_ns: p.latency.p99_ns,
                p999_ns: p.latency.p999_ns,
            })
            .collect(),
        confidence: 0.99,
        race_confidence: 0.95,
        margin: 0.05,
        seconds: 20.0,
        round_s: 2.5,
    });
    p.iops = iops.iter().sum::<f64>() / iops.len() as f64;
    p
}

/// One run each, with its own interval: a 3× gap is called in the first pass, with the
/// confidence shared among the comparisons; overlapping intervals are not.
#[test]
fn single_runs_with_intervals_are_called_or_not_by_their_intervals() {
    let pts = vec![
        precise(qd(at("U32B1", "uring", 90_000.0, 900.0, 2.0), 32), 0.05),
        precise(qd(at("U4B1", "uring", 60_000.0, 200.0, 2.5), 4), 0.05),
        precise(qd(at("U1B1", "uring", 30_000.0, 60.0, 3.0), 1), 0.05),
    ];
    let v = verdict(&pts, &|i| pts[i].label.clone());
    let f = finding(&v.targets[0].groups[0], Kind::Fastest);
    assert_eq!(f.label, "U32B1");
    let Sureness::Ahead { runner_up, gap } = &f.sure else {
        panic!("{:?}", f.sure)
    };
    assert_eq!(runner_up, "U4B1");
    assert_eq!(gap.basis, crate::decide::Basis::Runs);
    // Two comparisons, each at 97.5 %: 95 % for both together, as stated.
    assert!((gap.confidence - 0.95).abs() < 1e-12, "two comparisons");
    assert!(gap.lo.unwrap() > 0.3 && gap.hi.unwrap() < 0.8, "{gap:?}");
    // The old rule (margin against the per-second spread, none here) could not call it.
    assert!(!f.close);
    // 3 % apart with ±5 % each: too close, never a winner.
    let pts = vec![
        precise(qd(at("U32B1", "uring", 103_000.0, 900.0, 2.0), 32), 0.05),
        precise(qd(at("A32B1", "libaio", 100_000.0, 900.0, 2.5), 32), 0.05),
    ];
    let v = verdict(&pts, &|i| pts[i].label.clone());
    let f = finding(&v.targets[0].groups[0], Kind::Fastest);
    assert!(
        f.close && matches!(f.sure, Sureness::Open { .. }),
        "{:?}",
        f.sure
    );
    assert_eq!(f.named(), "U32B1 ~ A32B1");
}

/// Paired rounds of a race decide where the runs' own intervals could not: the machine's
/// drift touches both alike. Equal within the margin picks the one with less CPU per I/O.
#[test]
fn paired_rounds_decide_and_equals_are_picked_on_cpu() {
    let drift = [
        100_000.0, 80_000.0, 120_000.0, 90_000.0, 110_000.0, 95_000.0,
    ];
    let ahead: Vec<f64> = drift.iter().map(|x| x * 1.2).collect();
    let pts = vec![
        precise(
            raced(qd(at("U32B1", "uring", 0.0, 900.0, 2.0), 32), "r1", &ahead),
            0.3,
        ),
        precise(
            raced(qd(at("A32B1", "libaio", 0.0, 900.0, 2.5), 32), "r1", &drift),
            0.3,
        ),
    ];
    let v = verdict(&pts, &|i| pts[i].label.clone());
    let f = finding(&v.targets[0].groups[0], Kind::Fastest);
    let Sureness::Ahead { gap, .. } = &f.sure else {
        panic!("{:?}", f.sure)
    };
    // The rounds after the first pass, paired; stated at the race's own 95 % (its calls were
    // made at 99 %, its share for the looks and comparisons).
    assert_eq!(gap.basis, crate::decide::Basis::Rounds(5));
    assert!((gap.value - 0.2).abs() < 1e-9);
    assert!(
        f.phrase()
            .starts_with("20 % more IOPS than A32B1 (95 % interval 20–20 %, 5 paired rounds)"),
        "{}",
        f.phrase()
    );
    // Rounds from different races are never paired: each run's own interval (±30 %) then.
    let mut other = pts.clone();
    other[1].race.as_mut().unwrap().id = "r2".into();
    let v = verdict(&other, &|i| other[i].label.clone());
    assert!(finding(&v.targets[0].groups[0], Kind::Fastest).close);
    // Within 1 % round by round: equal, and the cheaper in CPU is picked.
    let near: Vec<f64> = drift
        .iter()
        .enumerate()
        .map(|(i, x)| x * if i % 2 == 0 { 1.01 } else { 0.995 })
        .collect();
    let pts = vec![
        raced(qd(at("U32B1", "uring", 0.0, 900.0, 2.0), 32), "r1", &near),
        raced(qd(at("A32B1", "libaio", 0.0, 900.0, 1.5), 32), "r1", &drift),
    ];
    let v = verdict(&pts, &|i| pts[i].label.clone());
    let f = finding(&v.targets[0].groups[0], Kind::Fastest);
    assert_eq!(f.label, "A32B1", "{:?}", f.sure);
    assert!(!f.close);
    assert!(
        f.phrase()
            .starts_with("equal to U32B1 within 5 % (95 % sure: 90 % interval")
            && f.phrase().ends_with("; picked for 25 % less CPU per I/O"),
        "{}",
        f.phrase()
    );
    let json = render::json(&v, &pts);
    let fj = &json[0]["groups"][0]["findings"][0];
    assert_eq!(fj["call"], "equal");
    assert_eq!(fj["gap"]["basis"], "rounds");
    assert_eq!(fj["gap"]["count"], 5);
    assert_eq!(fj["gap"]["confidence"], 0.95);
    assert!((fj["gap"]["eq_confidence"].as_f64().unwrap() - 0.90).abs() < 1e-12);
    // Open after the rounds: it says how much more would settle it.
    let noisy: Vec<f64> = drift
        .iter()
        .enumerate()
        .map(|(i, x)| x * if i % 2 == 0 { 1.12 } else { 0.96 })
        .collect();
    let pts = vec![
        raced(qd(at("U32B1", "uring", 0.0, 900.0, 2.0), 32), "r1", &noisy),
        raced(qd(at("A32B1", "libaio", 0.0, 900.0, 2.0), 32), "r1", &drift),
    ];
    let v = verdict(&pts, &|i| pts[i].label.clone());
    let f = finding(&v.targets[0].groups[0], Kind::Fastest);
    assert!(f.close, "{:?}", f.sure);
    assert!(
        f.phrase().contains("more paired rounds (~")
            && f.phrase().ends_with("would settle it (--budget)"),
        "{}",
        f.phrase()
    );
}
