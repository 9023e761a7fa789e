//! Devices side by side, when a report holds several targets: per block size and access, each
//! target's best (the verdict's findings) in one table, and bars of every configuration measured
//! on more than one target, one bar per target, so devices are compared on equal terms and never
//! on one scatter where one device's points look dominated by the other's.

use crate::document::chart::{Axis, BarSeries, Bars, Chart, Kind, Unit};
use crate::points::{Point, Report, caption};
use crate::table::{Column, Table};
use crate::units::{Style, format_bytes, format_ns};
use crate::verdict::{Kind as Finding, Verdict};
use std::collections::BTreeMap;

/// The targets measured by readlab, when there are several (else none: nothing to compare).
pub fn targets(report: &Report) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for p in report.points.iter().filter(|p| !p.is_fio()) {
        if !v.contains(&p.name) {
            v.push(p.name.clone());
        }
    }
    if v.len() > 1 { v } else { Vec::new() }
}

/// One row per block size, access and target: its fastest, lowest tail at QD1, cheapest and
/// balanced pick.
pub fn table(v: &Verdict, points: &[Point]) -> Table {
    let mut t = Table::new(
        ["reads", "target", "fastest"]
            .map(Column::left)
            .into_iter()
            .chain(["IOPS", "MB/s"].map(Column::right))
            .chain([Column::left("lowest tail at QD1")])
            .chain([Column::right("tail")])
            .chain([Column::left("cheapest CPU/IO")])
            .chain([Column::right("µs/IO")])
            .chain([Column::left("balanced pick")])
            .collect(),
    );
    type PerTarget<'a> = Vec<(&'a str, &'a crate::verdict::Group)>;
    let mut groups: BTreeMap<(u64, String, bool), PerTarget> = BTreeMap::new();
    for tv in &v.targets {
        for g in &tv.groups {
            groups
                .entry((g.bs, g.access.clone(), !g.direct))
                .or_default()
                .push((&tv.name, g));
        }
    }
    for ((_, _, _), per) in groups {
        for (name, g) in per {
            let find = |k: Finding| g.findings.iter().find(|f| f.kind == k);
            let label = |k: Finding| find(k).map_or_else(|| "–".into(), |f| f.named());
            let fastest = find(Finding::Fastest).map(|f| v.point(points, f.point));
            let qd1 = find(Finding::LowestTailQd1).map(|f| v.point(points, f.point));
            let cheap = find(Finding::CheapestCpu).map(|f| v.point(points, f.point));
            t.push([
                g.title(),
                name.to_string(),
                label(Finding::Fastest),
                fastest.map_or_else(String::new, |p| format!("{:.0}", p.iops)),
                fastest.map_or_else(String::new, |p| format!("{:.1}", p.mb_s)),
                label(Finding::LowestTailQd1),
                qd1.map_or_else(String::new, |p| {
                    format!(
                        "{} {}",
                        format_ns(g.tail.ns(p), Style::Table),
                        g.tail.name()
                    )
                }),
                label(Finding::CheapestCpu),
                cheap.map_or_else(String::new, |p| format!("{:.2}", p.cpu_us_per_io)),
                label(Finding::Recommended(crate::tune::Goal::Balanced)),
            ]);
        }
    }
    t
}

/// Bars of the configurations measured on at least two of `names`: throughput, p99.9 and CPU
/// per I/O, one bar per target.
pub fn charts(report: &Report, names: &[String]) -> Vec<Chart> {
    type Key = (u64, String, bool, String);
    let mut by: BTreeMap<Key, BTreeMap<&str, Vec<&Point>>> = BTreeMap::new();
    for p in report
        .points
        .iter()
        .filter(|p| !p.is_fio() && p.plottable() && names.contains(&p.name))
    {
        by.entry((p.bs, p.access().to_string(), !p.direct, p.label.clone()))
            .or_default()
            .entry(&p.name)
            .or_default()
            .push(p);
    }
    by.retain(|_, per| per.len() > 1);
    if by.is_empty() {
        return Vec::new();
    }
    let categories: Vec<String> = by
        .keys()
        .map(|(bs, access, buffered, label)| {
            format!(
                "{label} {} {access}{}",
                format_bytes(*bs as f64, Style::Table),
                if *buffered { " buffered" } else { "" }
            )
        })
        .collect();
    // The median-IOPS point of each configuration on each target.
    let median = |ps: &Vec<&Point>| -> Point {
        let mut v = ps.clone();
        v.sort_by(|a, b| a.iops.total_cmp(&b.iops));
        v[(v.len() - 1) / 2].clone()
    };
    let drawn: Vec<&Point> = by
        .values()
        .flat_map(|m| m.values().flatten())
        .copied()
        .collect();
    let bars = |y: Axis, f: fn(&Point) -> f64| Bars {
        x_desc: "configuration measured on several targets".into(),
        categories: categories.clone(),
        y,
        layers: vec!["value".into()],
        series: names
            .iter()
            .map(|n| BarSeries {
                name: n.clone(),
                fio: false,
                marks: Vec::new(),
                values: by
                    .values()
                    .map(|per| per.get(n.as_str()).map(|ps| vec![f(&median(ps))]))
                    .collect(),
            })
            .collect(),
    };
    let chart = |id: &str, title: &str, kind| Chart {
        id: format!("devices-{id}"),
        title: title.into(),
        caption: caption(&drawn),
        width: 960,
        height: 420,
        kind,
    };
    vec![
        chart(
            "throughput",
            "Devices side by side: throughput of each configuration measured on several targets",
            Kind::Bars(bars(Axis::linear("throughput (MB/s)", Unit::Number), |p| {
                p.mb_s
            })),
        ),
        chart(
            "p999",
            "Devices side by side: p99.9 latency",
            Kind::Bars(bars(
                Axis::log("p99.9 latency (log scale)", Unit::Ns),
                |p| p.latency.p999_ns as f64,
            )),
        ),
        chart(
            "cpu",
            "Devices side by side: CPU per I/O",
            Kind::Bars(bars(Axis::linear("CPU per I/O (µs)", Unit::Number), |p| {
                p.cpu_us_per_io
            })),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::points::tests::point;

    #[test]
    fn configurations_on_several_targets_are_drawn_per_target() {
        let a = point("P", 4096, 40.0, 100.0);
        let mut b = point("P", 4096, 400.0, 10.0);
        b.name = "loop0".into();
        let mut c = point("U32B1", 4096, 500.0, 50.0);
        c.name = "loop0".into();
        let r = Report::from_points(vec![a, b, c]);
        let names = targets(&r);
        assert_eq!(names, ["x", "loop0"]);
        let charts = charts(&r, &names);
        assert_eq!(charts.len(), 3);
        let Kind::Bars(b) = &charts[0].kind else {
            panic!()
        };
        assert_eq!(b.categories, ["P 4K random"], "U32B1 is on one target only");
        assert_eq!(b.series[0].name, "x");
        assert_eq!(b.series[1].values, [Some(vec![400.0])]);
        let v = crate::verdict::of_report(&r);
        let t = table(&v, &r.points).markdown();
        assert!(
            t.contains("| 4K random | x | P |") && t.contains("| 4K random | loop0 | U32B1 ~ P |"),
            "{t}"
        );
        assert!(targets(&Report::from_points(vec![point("P", 4096, 1.0, 1.0)])).is_empty());
    }
}
