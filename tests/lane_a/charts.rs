//! End-to-end (issue 20, item 7): the report's charts read at a glance, checked on the SVG the
//! page inlines, for a report built from stored study results (real runs' documents with their
//! figures set): a block size has one colour and one marker in every chart; no two texts of a
//! chart cover each other (point labels are placed, merged or dropped); lines whose peaks are
//! more than 10× apart are on a log axis that says so; whole-number axes have no fractional
//! ticks and a fleet of one size is drawn as a bar; the tuner's search is points, not a line.

use crate::common;

use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};

fn fixture() -> Vec<Value> {
    include_str!("../fixtures/results-small.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A copy of `base` as a point of `study` with these figures.
#[allow(clippy::too_many_arguments)]
fn point(
    base: &Value,
    study: &str,
    engine: &str,
    bs: u64,
    threads: u64,
    qd: u64,
    label: &str,
    iops: f64,
    p99_us: f64,
) -> Value {
    let mut d = base.clone();
    d["study"] = json!({"study": study, "scheduler": null});
    let c = &mut d["config"];
    c["engine"] = json!(engine);
    c["bs"] = json!(bs);
    c["threads"] = json!(threads);
    c["iodepth"] = json!(qd);
    let r = &mut d["result"];
    r["label"] = json!(label);
    r["iops"] = json!(iops);
    r["requests_per_s"] = json!(iops);
    r["mb_s"] = json!(iops * bs as f64 / 1e6);
    r["mib_s"] = json!(iops * bs as f64 / 1_048_576.0);
    r["bytes"] = json!((iops * bs as f64) as u64);
    let ns = (p99_us * 1000.0) as u64;
    let l = &mut r["latency"];
    for (k, f) in [
        ("p50_ns", 0.4),
        ("p90_ns", 0.7),
        ("p99_ns", 1.0),
        ("p999_ns", 1.3),
        ("p9999_ns", 1.6),
        ("max_ns", 2.0),
    ] {
        l[k] = json!((ns as f64 * f) as u64);
    }
    l["mean_ns"] = json!(ns as f64 * 0.45);
    l["min_ns"] = json!(ns / 10);
    d
}

/// Studies where the old charts failed at a glance: threads at 4K beside 256K (20× apart), the
/// queue's hockey stick with two queue sizes at one spot and one measured twice, a tuner's
/// search of close points, and a fleet of one size.
fn documents() -> Vec<Value> {
    let f = fixture();
    let base = &f[3];
    let mut v = Vec::new();
    for (t, a, b) in [
        (1u64, 11_000.0, 3_900.0),
        (2, 24_000.0, 7_000.0),
        (4, 25_000.0, 9_000.0),
        (8, 25_500.0, 9_500.0),
    ] {
        let l = if t == 1 {
            "P".to_string()
        } else {
            format!("PT{t}")
        };
        v.push(point(base, "threads", "psync", 4096, t, 1, &l, a, 900.0));
        v.push(point(
            base, "threads", "psync", 262_144, t, 1, &l, b, 3000.0,
        ));
        for (sched, f) in [("none", 1.0), ("mq-deadline", 0.9), ("bfq", 0.7)] {
            for (bs, iops) in [(4096, a), (262_144, b)] {
                let mut d = point(base, "scheduler", "psync", bs, t, 1, &l, iops * f, 900.0);
                d["study"]["scheduler"] = json!(sched);
                v.push(d);
            }
        }
    }
    for (qd, iops, p99) in [
        (1u64, 12_000.0, 120.0),
        (2, 22_000.0, 130.0),
        (4, 40_000.0, 150.0),
        (8, 60_000.0, 300.0),
        (16, 75_000.0, 600.0),
        (16, 75_500.0, 602.0),
        (32, 76_000.0, 610.0),
        (64, 76_500.0, 1250.0),
    ] {
        let l = format!("U{qd}B1");
        v.push(point(base, "queue", "uring", 4096, 1, qd, &l, iops, p99));
        let l = format!("A{qd}B1");
        v.push(point(
            base,
            "queue",
            "libaio",
            4096,
            1,
            qd,
            &l,
            iops * 0.97,
            p99 * 1.02,
        ));
    }
    for (k, (label, qd, t)) in [
        ("U4B1", 4u64, 1u64),
        ("U8B1", 8, 1),
        ("U16B1", 16, 1),
        ("U32B1", 32, 1),
        ("U16B1T2", 16, 2),
        ("U32B1T2", 32, 2),
        ("A16B1", 16, 1),
        ("A32B1", 32, 1),
        ("A32B1T2", 32, 2),
        ("P", 1, 1),
        ("PT2", 1, 2),
    ]
    .iter()
    .enumerate()
    {
        let engine = match &label[..1] {
            "U" => "uring",
            "A" => "libaio",
            _ => "psync",
        };
        let iops = 70_000.0 + 1500.0 * k as f64;
        let p99 = 500.0 + 8.0 * k as f64;
        v.push(point(base, "tune", engine, 4096, *t, *qd, label, iops, p99));
    }
    v
}

/// Two ranks on one host: a fleet of one size.
fn fleet_of_one_size() -> Value {
    let f = fixture();
    let members: Vec<Value> = [0usize, 1]
        .iter()
        .map(|&rank| {
            json!({
                "rank": rank,
                "host": "node-a",
                "local_rank": rank,
                "target": format!("/dev/t{rank}"),
                "clock_offset_ns": 0,
                "clock_uncertainty_ns": 0,
                "start_ns": 0,
                "late_ns": 0,
                "environment": f[rank]["environment"],
                "result": f[rank]["result"],
            })
        })
        .collect();
    let mut d = f[0].clone();
    d.as_object_mut().unwrap().remove("study");
    d["fleet"] = json!({
        "ranks": 2,
        "hosts": ["node-a"],
        "target": "/dev/t{rank}",
        "start": {"skew_ns": 1500, "clock_uncertainty_ns": 0, "notice_ns": 20000000},
        "common_window_s": 1.0,
        "aggregate": "",
        "members": members,
    });
    d
}

/// One element of an SVG: its tag, attributes and (for text) content.
#[derive(Debug, Clone)]
struct El {
    tag: String,
    attrs: BTreeMap<String, String>,
    text: String,
}

impl El {
    fn num(&self, k: &str) -> f64 {
        self.attrs
            .get(k)
            .and_then(|v| v.parse().ok())
            .unwrap_or(f64::NAN)
    }

    fn points(&self) -> Vec<(f64, f64)> {
        self.attrs
            .get("points")
            .map(|p| {
                p.split_whitespace()
                    .filter_map(|xy| {
                        let (x, y) = xy.split_once(',')?;
                        Some((x.parse().ok()?, y.parse().ok()?))
                    })
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// The elements of plotters' SVG, in order.
fn elements(svg: &str) -> Vec<El> {
    let mut out = Vec::new();
    let mut rest = svg;
    while let Some(i) = rest.find('<') {
        rest = &rest[i + 1..];
        if rest.starts_with('/') {
            continue;
        }
        let end = rest.find('>').unwrap();
        let head = &rest[..end];
        let tag: String = head.chars().take_while(|c| c.is_alphanumeric()).collect();
        let mut attrs = BTreeMap::new();
        let mut a = &head[tag.len()..];
        while let Some(eq) = a.find("=\"") {
            let key = a[..eq].trim().to_string();
            let v_end = a[eq + 2..].find('"').unwrap();
            attrs.insert(key, a[eq + 2..eq + 2 + v_end].to_string());
            a = &a[eq + 2 + v_end + 1..];
        }
        let mut text = String::new();
        if tag == "text" {
            let close = rest.find("</text>").unwrap();
            text = rest[end + 1..close].trim().replace("&amp;", "&");
        }
        out.push(El { tag, attrs, text });
        rest = &rest[end..];
    }
    out
}

/// Every chart of the page: its id and elements.
fn charts(html: &str) -> Vec<(String, Vec<El>)> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(i) = rest.find("<svg id=\"chart-") {
        rest = &rest[i..];
        let end = rest.find("</svg>").unwrap();
        let svg = &rest[..end];
        let id = svg["<svg id=\"chart-".len()..]
            .split('"')
            .next()
            .unwrap()
            .to_string();
        out.push((id, elements(svg)));
        rest = &rest[end..];
    }
    out
}

/// The box a text takes in the browser (DejaVu Sans widths by kind of character), as left, top,
/// right, bottom; None for turned text.
fn text_box(e: &El) -> Option<(f64, f64, f64, f64)> {
    if e.attrs.contains_key("transform") || e.text.is_empty() {
        return None;
    }
    let size = e.num("font-size");
    let w: f64 = e
        .text
        .chars()
        .map(|c| match c {
            'i' | 'l' | 'j' | '.' | ',' | ':' | ';' | '\'' | '|' | '!' => 0.28,
            ' ' | 'f' | 't' | 'r' | '(' | ')' | '-' => 0.36,
            'm' | 'w' | 'M' | 'W' | '%' | '…' => 0.9,
            c if c.is_ascii_uppercase() => 0.7,
            c if c.is_ascii_digit() => 0.64,
            _ => 0.6,
        })
        .sum::<f64>()
        * size;
    let (x, y) = (e.num("x"), e.num("y"));
    let left = match e.attrs.get("text-anchor").map(String::as_str) {
        Some("middle") => x - w / 2.0,
        Some("end") => x - w,
        _ => x,
    };
    // plotters' vertical anchors: top (0.76em), centre (0.5ex), bottom (-0.5ex).
    let top = match e.attrs.get("dy").map(String::as_str) {
        Some("0.76em") => y,
        Some("0.5ex") => y - size * 0.5,
        _ => y - size,
    };
    Some((left, top, left + w, top + size))
}

/// Left, top, right, bottom.
type Box4 = (f64, f64, f64, f64);

fn overlap(a: Box4, b: Box4) -> bool {
    a.0 < b.2 - 0.5 && b.0 < a.2 - 0.5 && a.1 < b.3 - 0.5 && b.1 < a.3 - 0.5
}

/// A block size named by a legend entry (`4K`, `256K aggregate`, `local 4K`), if one.
fn block_size(text: &str) -> Option<String> {
    text.split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
        .find(|w| {
            w.len() >= 2
                && (w.ends_with('K') || w.ends_with('M'))
                && w[..w.len() - 1].chars().all(|c| c.is_ascii_digit())
        })
        .map(str::to_string)
}

/// A marker polygon's shape whatever its size: its corners' directions from its centre, in
/// eighths of a turn.
fn shape(p: &[(f64, f64)]) -> String {
    let n = p.len() as f64;
    let cx = p.iter().map(|q| q.0).sum::<f64>() / n;
    let cy = p.iter().map(|q| q.1).sum::<f64>() / n;
    let dirs: Vec<String> = p
        .iter()
        .map(|q| {
            let a = (q.1 - cy).atan2(q.0 - cx).to_degrees();
            format!("{:.0}", (a / 45.0).round())
        })
        .collect();
    format!("{} corners: {}", p.len(), dirs.join(" "))
}

/// Per legend entry that names a block size: its swatch's colour and marker shape.
fn legend_styles(els: &[El]) -> Vec<(String, String, Option<String>)> {
    let mut out = Vec::new();
    for (i, e) in els.iter().enumerate() {
        if e.tag != "text" || e.attrs.get("text-anchor").map(String::as_str) != Some("start") {
            continue;
        }
        let Some(bs) = block_size(&e.text) else {
            continue;
        };
        let (x, y) = (e.num("x"), e.num("y"));
        // The swatch is drawn just before the entry's text, left of it on its row.
        let mut color = None;
        let mut marker = None;
        for s in els[i.saturating_sub(8)..i].iter().rev() {
            match s.tag.as_str() {
                "polyline" if s.attrs.get("stroke-width").map(String::as_str) == Some("2") => {
                    let p = s.points();
                    if p.iter()
                        .all(|q| (q.1 - y).abs() < 1.0 && q.0 < x && q.0 > x - 40.0)
                    {
                        color.get_or_insert(s.attrs["stroke"].clone());
                    }
                }
                "polygon" => {
                    let p = s.points();
                    let cy = p.iter().map(|q| q.1).sum::<f64>() / p.len() as f64;
                    if (cy - y).abs() < 2.0 && p.iter().all(|q| q.0 < x && q.0 > x - 40.0) {
                        marker.get_or_insert(shape(&p));
                    }
                }
                "polyline" if s.attrs.contains_key("stroke-width") => {
                    // A marker's outline (scatter legends: the block size's colour).
                    let p = s.points();
                    if p.len() > 3
                        && p.iter()
                            .all(|q| q.0 < x && q.0 > x - 40.0 && (q.1 - y).abs() < 12.0)
                    {
                        color.get_or_insert(s.attrs["stroke"].clone());
                    }
                }
                "rect"
                    if (s.num("y") + s.num("height") / 2.0 - y).abs() < 3.0
                        && s.num("x") < x
                        && s.num("x") > x - 40.0 =>
                {
                    color.get_or_insert(s.attrs["fill"].clone());
                }
                _ => {}
            }
        }
        if let Some(c) = color {
            out.push((bs, c, marker));
        }
    }
    out
}

/// A tick label's value (`250µs`, `1.5k`, `64 MiB`, `40%`), in the axis' own unit.
fn tick_value(s: &str) -> Option<f64> {
    let s = s.trim();
    let units = [
        ("µs", 1e3),
        ("us", 1e3),
        ("ms", 1e6),
        ("ns", 1.0),
        (" MiB", 1048576.0),
        (" KiB", 1024.0),
        (" GiB", 1073741824.0),
        ("%", 1.0),
        ("k", 1e3),
        ("M", 1e6),
        ("s", 1e9),
    ];
    for (u, m) in units {
        if let Some(n) = s.strip_suffix(u) {
            return n.trim().parse::<f64>().ok().map(|v| v * m);
        }
    }
    s.parse().ok()
}

/// Each plot's y axis (a panel's): its vertical axis line (x, top, bottom), its tick labels
/// (pixel y, value) and whether its title says it is a log scale.
struct YAxis {
    x: f64,
    top: f64,
    bottom: f64,
    ticks: Vec<(f64, f64)>,
    log: bool,
}

fn y_axes(els: &[El]) -> Vec<YAxis> {
    let mut axes: Vec<YAxis> = els
        .iter()
        .filter(|e| {
            e.tag == "polyline"
                && e.attrs.get("stroke").map(String::as_str) == Some("#5A5A5A")
                && e.points().len() == 2
                && e.points()[0].0 == e.points()[1].0
                && (e.points()[0].1 - e.points()[1].1).abs() > 40.0
        })
        .map(|e| {
            let p = e.points();
            YAxis {
                x: p[0].0,
                top: p[0].1.min(p[1].1),
                bottom: p[0].1.max(p[1].1),
                ticks: Vec::new(),
                log: false,
            }
        })
        .collect();
    for a in &mut axes {
        for e in els.iter().filter(|e| e.tag == "text") {
            let (x, y) = (e.num("x"), e.num("y"));
            if e.attrs.get("text-anchor").map(String::as_str) == Some("end")
                && x < a.x
                && x > a.x - 20.0
                && y >= a.top - 1.0
                && y <= a.bottom + 1.0
                && let Some(v) = tick_value(&e.text)
            {
                a.ticks.push((y, v));
            }
            // The axis title, turned, left of the ticks and within the axis' height.
            if e.attrs.contains_key("transform")
                && x < a.x - 20.0
                && y >= a.top - 1.0
                && y <= a.bottom + 1.0
                && e.text.contains("log scale")
            {
                a.log = true;
            }
        }
    }
    axes
}

impl YAxis {
    /// The value at pixel `y`, from the first and last ticks (linear or logarithmic).
    fn value(&self, y: f64) -> Option<f64> {
        let (a, b) = (self.ticks.first()?, self.ticks.last()?);
        if a.0 == b.0 {
            return None;
        }
        let f = (y - a.0) / (b.0 - a.0);
        Some(if self.log {
            10f64.powf(a.1.log10() + f * (b.1.log10() - a.1.log10()))
        } else {
            a.1 + f * (b.1 - a.1)
        })
    }
}

fn report_html() -> String {
    let dir = common::disk_dir();
    let input = dir.path().join("results.jsonl");
    let docs: Vec<String> = documents().iter().map(Value::to_string).collect();
    std::fs::write(&input, docs.join("\n") + "\n").unwrap();
    let fleet = dir.path().join("fleet.json");
    std::fs::write(&fleet, fleet_of_one_size().to_string()).unwrap();
    let out = dir.path().join("report.html");
    let o = common::run(&[
        "report",
        input.to_str().unwrap(),
        fleet.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    std::fs::read_to_string(&out).unwrap()
}

#[test]
fn the_chart_rules_hold_in_the_svg() {
    let html = report_html();
    let charts = charts(&html);
    assert!(charts.len() > 12, "{} charts", charts.len());
    let ids: BTreeSet<&str> = charts.iter().map(|c| c.0.as_str()).collect();
    for want in [
        "threads-throughput",
        "queue-hockey-stick",
        "tune-search",
        "fleet-scaling",
        "scheduler-throughput",
    ] {
        assert!(ids.contains(want), "no chart {want}: {ids:?}");
    }

    // One colour and one marker per block size across every chart of the report.
    let mut colors: BTreeMap<String, BTreeSet<(String, String)>> = BTreeMap::new();
    let mut markers: BTreeMap<String, BTreeSet<(String, String)>> = BTreeMap::new();
    for (id, els) in &charts {
        for (bs, c, m) in legend_styles(els) {
            colors
                .entry(bs.clone())
                .or_default()
                .insert((c, id.clone()));
            if let Some(m) = m {
                markers.entry(bs).or_default().insert((m, id.clone()));
            }
        }
    }
    assert!(
        colors.contains_key("4K") && colors.contains_key("256K"),
        "{colors:?}"
    );
    for (bs, seen) in &colors {
        let distinct: BTreeSet<&String> = seen.iter().map(|s| &s.0).collect();
        assert_eq!(distinct.len(), 1, "{bs} has several colours: {seen:?}");
    }
    let c4: &String = &colors["4K"].iter().next().unwrap().0;
    assert_ne!(c4, &colors["256K"].iter().next().unwrap().0);
    for (bs, seen) in &markers {
        let distinct: BTreeSet<&String> = seen.iter().map(|s| &s.0).collect();
        assert_eq!(distinct.len(), 1, "{bs} has several markers: {seen:?}");
    }

    for (id, els) in &charts {
        // No two texts' boxes overlap: point labels, ticks, legends.
        let boxes: Vec<(&str, Box4)> = els
            .iter()
            .filter(|e| e.tag == "text")
            .filter_map(|e| Some((e.text.as_str(), text_box(e)?)))
            .collect();
        for (i, a) in boxes.iter().enumerate() {
            for b in &boxes[i + 1..] {
                assert!(!overlap(a.1, b.1), "{id}: {:?} covers {:?}", a, b);
            }
        }

        // Lines whose peaks are more than 10× apart are on a log axis.
        let axes = y_axes(els);
        let mut peaks: BTreeMap<(usize, String), f64> = BTreeMap::new();
        for e in els.iter().filter(|e| {
            e.tag == "polyline" && e.attrs.get("stroke-width").map(String::as_str) == Some("2")
        }) {
            let p = e.points();
            let Some(k) = axes.iter().position(|a| {
                p.iter()
                    .all(|q| q.0 > a.x && q.1 >= a.top - 1.0 && q.1 <= a.bottom + 1.0)
            }) else {
                continue;
            };
            // Grid and legend swatches are not series (a swatch is one short segment).
            if p.len() == 2 && (p[0].0 - p[1].0).abs() <= 26.0 && p[0].1 == p[1].1 {
                continue;
            }
            let top = p.iter().map(|q| q.1).fold(f64::INFINITY, f64::min);
            let e = peaks.entry((k, e.attrs["stroke"].clone())).or_insert(top);
            *e = e.min(top);
        }
        for (k, a) in axes.iter().enumerate() {
            let values: Vec<f64> = peaks
                .iter()
                .filter(|((j, _), _)| *j == k)
                .filter_map(|(_, &y)| a.value(y))
                .filter(|v| *v > 0.0)
                .collect();
            if values.len() < 2 {
                continue;
            }
            let hi = values.iter().copied().fold(f64::MIN, f64::max);
            let lo = values.iter().copied().fold(f64::MAX, f64::min);
            assert!(
                a.log || hi / lo <= 10.5,
                "{id}: lines {:.1}× apart on a linear axis ({lo} … {hi})",
                hi / lo
            );
        }

        // Whole-number axes have whole-number ticks.
        let texts: Vec<&El> = els.iter().filter(|e| e.tag == "text").collect();
        if texts
            .iter()
            .any(|e| e.text == "ranks" || e.text == "targets read at once")
        {
            for e in &texts {
                if e.attrs.get("dy").map(String::as_str) == Some("0.76em")
                    && let Ok(v) = e.text.parse::<f64>()
                {
                    assert_eq!(v.fract(), 0.0, "{id}: tick {v}");
                }
            }
        }
    }

    // Threads at 4K and 256K are 20× apart: a log axis, said in the axis title.
    let threads = &charts
        .iter()
        .find(|c| c.0 == "threads-throughput")
        .unwrap()
        .1;
    assert!(
        threads
            .iter()
            .any(|e| e.text == "throughput (MB/s) (log scale)"),
        "no log axis on threads-throughput"
    );
    // The title says what to read from it.
    assert!(
        html.contains("4K stops growing past 2 threads"),
        "no finding in the threads title"
    );
    assert!(
        html.contains("IOPS of every line stops growing past QD 16"),
        "no finding in the hockey stick's title"
    );
    // The hockey stick's queue depths: each once, QD16 measured twice merged into one label.
    let hockey = &charts
        .iter()
        .find(|c| c.0 == "queue-hockey-stick")
        .unwrap()
        .1;
    let qd16 = hockey.iter().filter(|e| e.text == "QD16").count();
    assert!(qd16 <= 2, "QD16 labelled {qd16} times for two series");
    // The tuner's search: points (no line through them), its picks enlarged and labelled.
    let tune = &charts.iter().find(|c| c.0 == "tune-search").unwrap().1;
    assert!(
        !tune.iter().any(|e| e.tag == "polyline"
            && e.attrs.get("stroke-width").map(String::as_str) == Some("2")
            && e.points().len() > 2
            && e.points().first() != e.points().last()),
        "the search is joined by a line"
    );
    assert!(
        tune.iter().any(|e| e.text.contains(": throughput")),
        "the tuner's throughput pick is not labelled"
    );
    // A fleet of one size: a bar, no axis of ranks with fractional ticks.
    let fleet = &charts.iter().find(|c| c.0 == "fleet-scaling").unwrap().1;
    assert!(
        !fleet.iter().any(|e| e.tag == "text" && e.text == "1.5"),
        "fractional ranks"
    );
    assert!(
        fleet
            .iter()
            .any(|e| e.tag == "rect" && e.num("height") > 20.0)
    );
}

/// Issue 41, item 4: each point of a chart names itself when hovered and draws how well its
/// figures are known. Queue points with their runs' precision (one without, one whose p99.9 has
/// no upper bound), checked on the SVG: every mark group's `<title>` names its label in words and
/// its figures with their intervals; whiskers reach the intervals' ends (to a pixel or two);
/// an unbounded side ends in an open arrow; a point without intervals has no whisker.
#[test]
fn points_name_themselves_and_draw_their_intervals() {
    let f = fixture();
    let mut docs = Vec::new();
    for (qd, iops, p99) in [
        (1u64, 12_000.0, 120.0),
        (4, 40_000.0, 150.0),
        (16, 75_000.0, 600.0),
    ] {
        for (engine, prefix, k) in [("uring", "U", 1.0), ("libaio", "A", 0.97)] {
            let label = format!("{prefix}{qd}B1");
            let mut d = point(
                &f[3],
                "queue",
                engine,
                4096,
                1,
                qd,
                &label,
                iops * k,
                p99 * k,
            );
            if label != "A4B1" {
                d["result"]["precision"] = precision(&d, label != "U16B1");
            }
            docs.push(d);
        }
    }
    let dir = common::disk_dir();
    let input = dir.path().join("results.jsonl");
    let lines: Vec<String> = docs.iter().map(Value::to_string).collect();
    std::fs::write(&input, lines.join("\n") + "\n").unwrap();
    let out = dir.path().join("report.html");
    let o = common::run(&[
        "report",
        input.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let html = std::fs::read_to_string(&out).unwrap();
    let svg = |id: &str| -> String {
        let start = html.find(&format!("<svg id=\"chart-{id}\"")).expect(id);
        html[start..start + html[start..].find("</svg>").unwrap()].to_string()
    };
    // The scatter: MB/s (linear) across, p99.9 (log) up; both have intervals.
    let scatter = marks(&svg("all-scatter"));
    assert_eq!(scatter.len(), 6, "{scatter:?}");
    let by_label = |m: &[Marked], l: &str| -> Marked {
        m.iter()
            .find(|g| g.title.starts_with(&format!("{l} — ")))
            .unwrap_or_else(|| panic!("no mark of {l}: {m:?}"))
            .clone()
    };
    let u16 = by_label(&scatter, "U16B1");
    assert!(
        u16.title
            .starts_with("U16B1 — io_uring, queue depth 16, batch 1, 4K random reads"),
        "{}",
        u16.title
    );
    assert!(
        u16.title.contains("75,000 IOPS (71,250–78,750, 95 %)"),
        "{}",
        u16.title
    );
    assert!(u16.title.contains("MB/s (292–323, 95 %)"), "{}", u16.title);
    assert!(
        u16.title
            .contains("p99.9 780µs (at least 546µs; no upper bound, 95 %)"),
        "{}",
        u16.title
    );
    let a4 = by_label(&scatter, "A4B1");
    assert!(
        !a4.title.contains('%') && a4.title.contains("IOPS"),
        "{}",
        a4.title
    );
    assert!(
        a4.whiskers().is_empty(),
        "no interval, no whisker: {:?}",
        a4.whiskers()
    );
    // Pixels per decade of p99.9 and per MB/s, from two points' centres.
    let (u1, u4) = (by_label(&scatter, "U1B1"), by_label(&scatter, "U4B1"));
    let (c1, c4) = (u1.centre(), u4.centre());
    let mb = |iops: f64| iops * 4096.0 / 1e6;
    let per_decade = (c1.1 - c4.1) / (195.0f64.log10() - 156.0f64.log10());
    let per_mb = (c4.0 - c1.0) / (mb(40_000.0) - mb(12_000.0));
    for (m, iops) in [(&u1, 12_000.0), (&u4, 40_000.0)] {
        let (left, right, up, down) = m.extents();
        let close = |a: f64, b: f64, what: &str| {
            assert!((a - b).abs() <= 2.0, "{}: {what} {a} px, want {b}", m.title)
        };
        close(left, per_mb * mb(iops) * 0.05, "left");
        close(right, per_mb * mb(iops) * 0.05, "right");
        close(up, per_decade * 1.5f64.log10(), "up");
        close(down, per_decade * -(0.7f64.log10()), "down");
        assert!(!m.open_arrow(), "{}", m.title);
    }
    assert!(u16.open_arrow(), "an unbounded side ends in an open arrow");
    // Bars: the queue study's throughput per queue size; each bar's whisker against its height.
    let bars = marks(&svg("queue-throughput"));
    assert_eq!(bars.len(), 6, "{bars:?}");
    for b in &bars {
        let rect = b.els.iter().find(|e| e.tag == "rect").expect("a bar");
        let (h, whiskers) = (rect.num("height"), b.whiskers());
        if b.title.starts_with("A4B1 — ") {
            assert!(whiskers.is_empty(), "{whiskers:?}");
            continue;
        }
        // The bar's height is its MB/s; the interval is ±5 % of it.
        let x = rect.num("x") + rect.num("width") / 2.0;
        let top = rect.num("y");
        let ys: Vec<f64> = whiskers
            .iter()
            .filter(|w| (w[0].0 - x).abs() <= 1.0 && (w[1].0 - x).abs() <= 1.0)
            .flat_map(|w| [w[0].1, w[1].1])
            .collect();
        let (hi, lo) = (
            ys.iter().copied().fold(f64::INFINITY, f64::min),
            ys.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        );
        assert!(
            (top - hi - h * 0.05).abs() <= 2.0,
            "{}: up {}",
            b.title,
            top - hi
        );
        assert!(
            (lo - top - h * 0.05).abs() <= 2.0,
            "{}: down {}",
            b.title,
            lo - top
        );
    }
}

/// A run's precision for a point document: IOPS ±5 %, p99 −20 % +25 %, p99.9 −30 % +50 % (or
/// no upper bound).
fn precision(d: &Value, p999_bounded: bool) -> Value {
    let r = &d["result"];
    let l = &r["latency"];
    let est = |v: f64, lo: f64, hi: Option<f64>| json!({"value": v, "lo": v * lo, "hi": hi.map(|h| v * h)});
    let ns = |k: &str| l[k].as_f64().unwrap();
    json!({
        "confidence": 0.95, "window_s": 0.01, "windows": 100, "batches": 10,
        "iops": est(r["iops"].as_f64().unwrap(), 0.95, Some(1.05)),
        "cpu_us_per_io": null,
        "p50_ns": est(ns("p50_ns"), 0.9, Some(1.1)),
        "p99_ns": est(ns("p99_ns"), 0.8, Some(1.25)),
        "p999_ns": est(ns("p999_ns"), 0.7, p999_bounded.then_some(1.5)),
    })
}

/// One mark of a chart: its title and its elements.
#[derive(Debug, Clone)]
struct Marked {
    title: String,
    els: Vec<El>,
}

/// The marks (`<g class="mark"><title>…</title>…</g>`) of a chart that draw a point: a
/// polygon (a marker) or a rect (a bar).
fn marks(svg: &str) -> Vec<Marked> {
    let mut out = Vec::new();
    for part in svg.split("<g class=\"mark\"><title>").skip(1) {
        let (title, rest) = part.split_once("</title>").unwrap();
        let body = &rest[..rest.find("</g>").unwrap()];
        let els = elements(body);
        if els.iter().any(|e| e.tag == "polygon" || e.tag == "rect") {
            out.push(Marked {
                title: title.replace("&amp;", "&"),
                els,
            });
        }
    }
    out
}

impl Marked {
    /// The marker's centre: the mean of its polygon's corners.
    fn centre(&self) -> (f64, f64) {
        let p = self
            .els
            .iter()
            .find(|e| e.tag == "polygon")
            .unwrap()
            .points();
        let n = p.len() as f64;
        (
            p.iter().map(|q| q.0).sum::<f64>() / n,
            p.iter().map(|q| q.1).sum::<f64>() / n,
        )
    }

    /// The straight two-point lines: whiskers and their caps.
    fn whiskers(&self) -> Vec<Vec<(f64, f64)>> {
        self.els
            .iter()
            .filter(|e| e.tag == "polyline")
            .map(El::points)
            .filter(|p| p.len() == 2)
            .collect()
    }

    /// How far the whiskers reach from the centre: left, right, up, down (pixels).
    fn extents(&self) -> (f64, f64, f64, f64) {
        let (cx, cy) = self.centre();
        let (mut e, lines) = ([0.0f64; 4], self.whiskers());
        for w in lines {
            for (x, y) in w {
                let across = w_is(&[(x, y)], cx, cy);
                if across.1 {
                    e[0] = e[0].max(cx - x);
                    e[1] = e[1].max(x - cx);
                }
                if across.0 {
                    e[2] = e[2].max(cy - y);
                    e[3] = e[3].max(y - cy);
                }
            }
        }
        (e[0], e[1], e[2], e[3])
    }

    /// Whether an open arrow (three points, a V) ends a whisker.
    fn open_arrow(&self) -> bool {
        self.els
            .iter()
            .any(|e| e.tag == "polyline" && e.points().len() == 3)
    }
}

/// Whether points lie on the vertical through `cx` and on the horizontal through `cy` (a pixel
/// either way): a whisker's own line, not its caps.
fn w_is(p: &[(f64, f64)], cx: f64, cy: f64) -> (bool, bool) {
    (
        p.iter().all(|q| (q.0 - cx).abs() <= 1.0),
        p.iter().all(|q| (q.1 - cy).abs() <= 1.0),
    )
}
