//! The fio JSON writer's tests: its document has fio's shape, and fio's reader (`points::fio`)
//! reads back readlab's figures.

use super::*;
use crate::points::Point;

fn docs() -> Vec<Document> {
    include_str!("../../../tests/fixtures/results-small.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * a.abs().max(b.abs()).max(1e-12)
}

/// Each run written as fio's JSON and read back by fio's reader gives the run's own figures:
/// configuration, counts, rates, every percentile readlab reports, CPU.
#[test]
fn the_reader_of_fio_json_reads_back_readlabs_figures() {
    for d in docs() {
        let text = FioJsonExporter.render(std::slice::from_ref(&d)).unwrap();
        let back = crate::points::fio::import(&text, "x.json").unwrap();
        assert_eq!(back.points.len(), 1, "{:?}", back.notes);
        let (p, want) = (&back.points[0], Point::from_document(&d, "x"));
        // fio has no word for several blocks per request: its job reads as one block each.
        let mut one_block = d.config.clone();
        one_block.blocks_per_request = 1;
        assert_eq!(p.label, format!("fio:{}", one_block.label()));
        assert_eq!(
            (&p.engine, &p.rw, p.bs, p.threads, p.iodepth, p.batch),
            (
                &want.engine,
                &want.rw,
                want.bs,
                want.threads,
                want.iodepth,
                want.batch
            )
        );
        // The options fio has (fio has no SQ poll thread idle time: the label leaves it out too).
        let mut options = want.options.clone();
        options.sqpoll_idle_ms = 0;
        assert_eq!(
            (&p.options, p.direct, p.ios),
            (&options, want.direct, want.ios)
        );
        assert_eq!(p.iops, want.iops);
        assert_eq!(p.latency, want.latency, "{}", want.label);
        assert!(close(p.mb_s, want.mb_s, 1e-6), "{} {}", p.mb_s, want.mb_s);
        assert!(
            close(p.cpu_pct, want.cpu_pct, 1e-12),
            "{} {}",
            p.cpu_pct,
            want.cpu_pct
        );
        assert!((p.seconds - want.seconds).abs() <= 0.0005);
        assert!(p.env.tool.starts_with("readlab-"), "{}", p.env.tool);
        assert_eq!(p.env.target, d.config.target.display().to_string());
    }
}

/// The kind of every value in `fio` (object, string, number…) is the kind at the same place in
/// `ours`, recursively; `percentile` maps and `job options` are fio's own choice of keys.
fn same_shape(fio: &Value, ours: &Value, at: &str, missing: &mut Vec<String>) {
    let kind = |v: &Value| match v {
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Object(_) => "object",
        Value::Array(_) => "array",
        Value::Bool(_) => "bool",
        Value::Null => "null",
    };
    match (fio, ours) {
        (Value::Object(f), Value::Object(o)) => {
            for (k, v) in f {
                if ["job options", "percentile", "disk_util"].contains(&k.as_str()) {
                    continue;
                }
                match o.get(k) {
                    Some(w) => same_shape(v, w, &format!("{at}.{k}"), missing),
                    None => missing.push(format!("{at}.{k}")),
                }
            }
        }
        (Value::Array(f), Value::Array(o)) => {
            if let (Some(f), Some(o)) = (f.first(), o.first()) {
                same_shape(f, o, &format!("{at}[0]"), missing);
            }
        }
        // fio writes a whole-valued float as 0.000000 and serde as 0.0: the same kind.
        (f, o) if kind(f) != kind(o) => missing.push(format!("{at}: {} vs {}", kind(f), kind(o))),
        _ => {}
    }
}

/// Every field fio 3.33 writes for a job (tests/fixtures/fio-normal.json) is in readlab's
/// document, with the same JSON type.
#[test]
fn the_document_has_fios_fields_and_types() {
    let fio: Value =
        serde_json::from_str(include_str!("../../../tests/fixtures/fio-normal.json")).unwrap();
    let ours: Value = serde_json::from_str(&FioJsonExporter.render(&docs()[..2]).unwrap()).unwrap();
    let mut wrong = Vec::new();
    same_shape(&fio, &ours, "", &mut wrong);
    assert!(wrong.is_empty(), "{wrong:#?}");
    assert_eq!(ours["jobs"].as_array().unwrap().len(), 2);
    let job = &ours["jobs"][0];
    for k in ["rw", "bs", "iodepth", "numjobs", "ioengine"] {
        assert!(job["job options"][k].is_string(), "{k}: {job:#}");
    }
    let pct = job["read"]["lat_ns"]["percentile"].as_object().unwrap();
    assert_eq!(pct.len(), PERCENTILES.len());
    assert!(pct.contains_key("99.900000") && pct.contains_key("1.000000"));
    let mut v: Vec<(f64, u64)> = pct
        .iter()
        .map(|(k, v)| (k.parse().unwrap(), v.as_u64().unwrap()))
        .collect();
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    assert!(v.windows(2).all(|w| w[0].1 <= w[1].1), "{v:?}");
}

/// The latency buckets count every request once: their shares add up to 100 %, and the share
/// under a bound agrees with the histogram's count under it.
#[test]
fn latency_buckets_share_out_every_request() {
    let d = &docs()[0];
    let (ns, us, ms) = buckets(&d.result);
    let sum = |v: &Value| {
        v.as_object()
            .unwrap()
            .values()
            .map(|x| x.as_f64().unwrap())
            .sum::<f64>()
    };
    assert!(close(sum(&ns) + sum(&us) + sum(&ms), 100.0, 1e-9));
    let h = crate::stats::decode_histogram(&d.result.histogram).unwrap();
    let under_100us = h.count_between(0, 99_999) as f64 * 100.0 / h.len() as f64;
    let ours = sum(&ns)
        + ["2", "4", "10", "20", "50", "100"]
            .iter()
            .map(|k| us[*k].as_f64().unwrap())
            .sum::<f64>();
    assert!((ours - under_100us).abs() < 0.5, "{ours} vs {under_100us}");
    // No readlab run of a real read is under 2 µs: the ns buckets are empty.
    assert_eq!(sum(&ns), 0.0);
}

#[test]
fn time_is_written_as_ctime() {
    // fio 3.33's own pair (TZ=UTC), from tests/fixtures/fio-normal.json.
    assert_eq!(ctime(1_795_291_857), "Sat Nov 21 20:10:57 2026");
    assert_eq!(ctime(0), "Thu Jan  1 00:00:00 1970");
    assert_eq!(ctime(951_782_400), "Tue Feb 29 00:00:00 2000");
    assert_eq!(unix_ms("2026-11-21T20:10:57.971Z"), 1_795_291_857_971);
    assert_eq!(unix_ms("not a date"), 0);
}

/// A run that completed nothing has no latency to give: fio's unmeasured block, which the
/// reader leaves out with a note (never a point at 0 ns).
#[test]
fn a_run_without_reads_is_left_out_by_the_reader() {
    let mut d = docs()[0].clone();
    d.result.latency = LatencySummary::default();
    d.result.ios = 0;
    d.result.histogram.clear();
    let text = FioJsonExporter.render(&[d]).unwrap();
    let back = crate::points::fio::import(&text, "x").unwrap();
    assert!(back.points.is_empty());
    assert_eq!(back.notes.len(), 1, "{:?}", back.notes);
}
