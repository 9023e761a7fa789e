//! The report's tables and charts on a fixed results file (tests/fixtures/results-small.jsonl:
//! real quick-study points of every sync study, plus aio/io_uring/scheduler points derived from
//! them so every section has data) and the fio fixtures: CSV and Markdown are compared with
//! checked-in files (set READLAB_BLESS=1 to rewrite them after an intended change), every chart
//! must draw, and odd inputs must give notes or clean errors, never a panic.

use readlab::report::{self, ReportFormat};
use std::path::{Path, PathBuf};

const RESULTS: &str = "tests/fixtures/results-small.jsonl";
const FIO_PLUS: &str = "tests/fixtures/fio-jsonplus.json";
const FIO_NORMAL: &str = "tests/fixtures/fio-normal.json";
const FIO_ZERO: &str = "tests/fixtures/fio-zero-reads.json";

fn fixture_report() -> report::Report {
    report::load(
        &[PathBuf::from(RESULTS)],
        &[
            PathBuf::from(FIO_PLUS),
            PathBuf::from(FIO_NORMAL),
            PathBuf::from(FIO_ZERO),
        ],
    )
    .expect("fixtures load")
}

/// Compare with a checked-in file, or rewrite it when blessing.
fn snapshot(name: &str, actual: &str) {
    let path = Path::new("tests/fixtures").join(name);
    if std::env::var_os("READLAB_BLESS").is_some() {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (run with READLAB_BLESS=1 to create it)",
            path.display()
        )
    });
    if expected != actual {
        let first = expected
            .lines()
            .zip(actual.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(expected.lines().count().min(actual.lines().count()));
        panic!(
            "{} differs from the output at line {}:\nexpected: {:?}\nactual:   {:?}\n(run with READLAB_BLESS=1 if the change is intended)",
            path.display(),
            first + 1,
            expected.lines().nth(first),
            actual.lines().nth(first)
        );
    }
}

#[test]
fn every_study_has_a_section_and_fio_joins_where_it_fits() {
    let r = fixture_report();
    let names: Vec<&str> = r.sections.iter().map(|s| s.study.name()).collect();
    assert_eq!(
        names,
        [
            "latency",
            "scan",
            "stream",
            "threads",
            "queue",
            "batch",
            "multiblock",
            "uring-features",
            "scheduler"
        ]
    );
    assert_eq!(
        r.points.len(),
        22,
        "20 readlab points, 2 fio jobs that read"
    );
    assert!(
        r.notes.iter().any(|n| n.contains("read nothing")),
        "{:?}",
        r.notes
    );
    let fio_in = |study: &str| {
        let s = r.sections.iter().find(|s| s.study.name() == study).unwrap();
        s.points.iter().filter(|&&i| r.points[i].is_fio()).count()
    };
    assert_eq!(fio_in("latency"), 2);
    assert_eq!(fio_in("threads"), 2);
    assert_eq!(fio_in("queue"), 0, "psync fio jobs are not queue points");
    assert!(!r.frontier.is_empty());
    assert!(
        r.frontier
            .windows(2)
            .all(|w| r.points[w[0]].mb_s < r.points[w[1]].mb_s)
    );
}

#[test]
fn csv_snapshot() {
    let csv = report::render(&fixture_report(), ReportFormat::Csv).unwrap();
    let header = csv.lines().next().unwrap();
    for k in [
        "lat_min_ns",
        "lat_mean_ns",
        "lat_p50_ns",
        "lat_p90_ns",
        "lat_p99_ns",
        "lat_p99_9_ns",
        "lat_p99_99_ns",
        "lat_max_ns",
    ] {
        assert!(header.split(',').any(|c| c == k), "{k} in {header}");
    }
    // Every row has as many fields as the header.
    let n = header.split(',').count();
    assert!(csv.lines().all(|l| l.split(',').count() == n));
    snapshot("report-small.csv", &csv);
}

#[test]
fn markdown_snapshot() {
    let md = report::render(&fixture_report(), ReportFormat::Markdown).unwrap();
    assert!(md.contains("## Single-read latency"));
    assert!(md.contains("| p99.99 |"));
    snapshot("report-small.md", &md);
}

#[test]
fn json_has_the_same_tables() {
    let r = fixture_report();
    let text = report::render(&r, ReportFormat::Json).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let tables = v["tables"].as_array().unwrap();
    assert_eq!(tables.len(), r.sections.len() + 1);
    let all = tables.last().unwrap();
    assert_eq!(all["id"], "all");
    assert_eq!(all["rows"].as_array().unwrap().len(), r.points.len());
    let cols = all["columns"].as_array().unwrap();
    let p999 = cols.iter().position(|c| c == "lat_p99_9_ns").unwrap();
    assert!(all["rows"][0][p999].as_f64().unwrap() > 0.0);
}

#[test]
fn every_chart_draws() {
    let r = fixture_report();
    let charts = report::charts::every_chart(&r);
    let ids: Vec<&str> = charts.iter().map(|c| c.id.as_str()).collect();
    for want in [
        "latency-bars",
        "scan-bandwidth",
        "stream-throughput",
        "stream-latency",
        "threads-throughput",
        "threads-cpu",
        "threads-latency-4K",
        "queue-throughput",
        "queue-cpu",
        "queue-p999",
        "batch-throughput-uring",
        "queue-latency-T1",
        "queue-hockey-stick",
        "scheduler-cpu",
        "multiblock-latency",
        "uring-features-cpu",
        "scheduler-throughput",
        "all-scatter",
        "all-cdf",
        "all-timeline",
    ] {
        assert!(ids.contains(&want), "{want} missing from {ids:?}");
    }
    let mut seen = std::collections::HashSet::new();
    for c in &charts {
        assert!(seen.insert(c.id.clone()), "duplicate chart id {}", c.id);
        let svg = readlab::document::draw::svg(c).unwrap();
        assert!(svg.contains("<svg") && svg.contains("</svg>"), "{}", c.id);
        assert!(
            svg.matches("<text").count() > 5,
            "{}: axes have labels",
            c.id
        );
        assert!(c.caption.contains("kernel"), "{}: {}", c.id, c.caption);
    }
    // The scatter names the fio points.
    let scatter = charts.iter().find(|c| c.id == "all-scatter").unwrap();
    let svg = readlab::document::draw::svg(scatter).unwrap();
    assert!(
        svg.contains("fio:P"),
        "fio labels on the all-experiments chart"
    );
}

#[test]
fn png_export() {
    let dir = tempfile::tempdir().unwrap();
    let r = report::load(&[PathBuf::from(RESULTS)], &[PathBuf::from(FIO_PLUS)]).unwrap();
    let files = report::write_pngs(&r, dir.path()).unwrap();
    assert_eq!(files.len(), report::charts::every_chart(&r).len());
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        assert!(bytes.starts_with(b"\x89PNG"), "{}", f.display());
    }
}

#[test]
fn odd_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // An empty results file: a note, and a page that says there is nothing.
    let empty = d.join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    let r = report::load(std::slice::from_ref(&empty), &[]).unwrap();
    assert!(r.points.is_empty() && r.notes.iter().any(|n| n.contains("empty")));
    let html = report::render(&r, ReportFormat::Html).unwrap();
    assert!(html.contains("No measured points"));
    assert!(
        report::render(&r, ReportFormat::Csv)
            .unwrap()
            .lines()
            .count()
            == 1
    );

    // One point: every chart still draws.
    let one = d.join("one.jsonl");
    let first = std::fs::read_to_string(RESULTS)
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_string();
    std::fs::write(&one, format!("{first}\n")).unwrap();
    let r = report::load(std::slice::from_ref(&one), &[]).unwrap();
    assert_eq!(r.points.len(), 1);
    for c in report::charts::every_chart(&r) {
        readlab::document::draw::svg(&c).unwrap();
    }
    report::render(&r, ReportFormat::Html).unwrap();

    // fio only, with a job that read nothing; and a fio file with zero jobs that read.
    let r = report::load(&[], &[PathBuf::from(FIO_ZERO)]).unwrap();
    assert!(r.points.is_empty() && !r.notes.is_empty());
    report::render(&r, ReportFormat::Html).unwrap();
    let r = report::load(&[], &[PathBuf::from(FIO_PLUS)]).unwrap();
    assert!(
        report::render(&r, ReportFormat::Html)
            .unwrap()
            .contains("chart-all-scatter")
    );

    // Bad input is an error the CLI maps to exit code 2.
    let garbage = d.join("garbage.json");
    std::fs::write(&garbage, "{\"not\": \"readlab\"}").unwrap();
    for (results, fio) in [
        (vec![garbage.clone()], vec![]),
        (vec![], vec![garbage.clone()]),
        (vec![d.join("missing")], vec![]),
        (vec![d.to_path_buf()], vec![]),
        (vec![], vec![]),
    ] {
        let e = report::load(&results, &fio).unwrap_err();
        assert!(e.is_bad_input(), "{e}");
    }
    // A torn last line (a crash mid-write) is ignored, as the store does.
    let torn = d.join("torn.jsonl");
    std::fs::write(&torn, format!("{first}\n{{\"schema\":\"readl")).unwrap();
    assert_eq!(report::load(&[torn], &[]).unwrap().points.len(), 1);
}
