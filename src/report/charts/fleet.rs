//! The fleet section's charts (runs measured by several MPI ranks at once): the aggregate
//! against the number of ranks, each host's IOPS per rank with its run-to-run spread (the slow
//! hosts named), and each host's latency distribution from its ranks' merged histograms.

use super::*;
use crate::points::fleet::FleetRun;

/// The fleet section's charts; none without fleet runs.
pub fn fleet_charts(report: &Report) -> Vec<Chart> {
    let runs = &report.fleet;
    let Some(biggest) = runs.iter().rev().max_by_key(|r| r.ranks) else {
        return Vec::new();
    };
    let mut out = vec![scaling(report, runs)];
    out.push(hosts(report, biggest));
    if let Some(c) = host_cdfs(report, biggest) {
        out.push(c);
    }
    out
}

/// Aggregate IOPS against ranks, one line per configuration, beside linear scaling from its
/// smallest fleet.
fn scaling(report: &Report, runs: &[FleetRun]) -> Chart {
    let mut keys: Vec<&str> = Vec::new();
    for r in runs {
        if !keys.contains(&r.key.as_str()) {
            keys.push(&r.key);
        }
    }
    let mut series = Vec::new();
    for (k, key) in keys.iter().enumerate() {
        // The latest run of each size.
        let mut by_ranks: BTreeMap<usize, f64> = BTreeMap::new();
        for r in runs.iter().filter(|r| r.key == *key) {
            by_ranks.insert(r.ranks, r.iops);
        }
        let points: Vec<(f64, f64)> = by_ranks.iter().map(|(&n, &v)| (n as f64, v)).collect();
        let (n0, v0) = points[0];
        series.push(LineSeries {
            name: (*key).to_string(),
            points: points.clone(),
            color: k,
            dashed: false,
            marker: Some(SHAPES[k % SHAPES.len()]),
            fio: false,
            step: false,
            labels: Vec::new(),
            marks: Vec::new(),
        });
        if points.len() > 1 {
            series.push(LineSeries {
                name: format!("{key}: linear from {n0:.0} rank(s)"),
                points: points.iter().map(|&(n, _)| (n, v0 / n0 * n)).collect(),
                color: k,
                dashed: true,
                marker: None,
                fio: false,
                step: false,
                labels: Vec::new(),
                marks: Vec::new(),
            });
        }
    }
    let pts: Vec<&Point> = runs.iter().map(|r| &report.points[r.point]).collect();
    chart(
        "fleet-scaling".into(),
        "Fleet: aggregate IOPS against the number of ranks (dashed: linear scaling from the smallest fleet)".into(),
        &pts,
        Kind::Lines(Lines {
            x: XAxis::Numeric(Axis::linear("ranks", Unit::Whole)),
            y: Axis::linear("aggregate IOPS", Unit::Count),
            series,
        }),
    )
}

/// IOPS per rank of each host of one run, with its run-to-run spread when repeated.
fn hosts(report: &Report, run: &FleetRun) -> Chart {
    let spread = run.hosts();
    let banded = spread.iter().all(|h| h.band.is_some());
    let layers: Vec<String> = if banded {
        vec![
            "run-to-run high".into(),
            "IOPS per rank".into(),
            "run-to-run low".into(),
        ]
    } else {
        vec!["IOPS per rank".into()]
    };
    let values = spread
        .iter()
        .map(|h| {
            Some(match h.band {
                Some((lo, hi)) if banded => vec![hi, h.iops, lo],
                _ => vec![h.iops],
            })
        })
        .collect();
    let slow: Vec<String> = spread
        .iter()
        .filter(|h| h.slow == Some(true))
        .map(|h| format!("{} {:+.0} %", h.host, 100.0 * h.vs_median))
        .collect();
    let verdict = if !banded {
        "run-to-run spread not measured (run --repeat 3 to tell a slow host from a noisy one)"
            .to_string()
    } else if slow.is_empty() {
        "no host is slower than the median host beyond its own run-to-run spread".to_string()
    } else {
        format!("slow beyond their own spread: {}", slow.join(", "))
    };
    chart(
        "fleet-hosts".into(),
        format!(
            "Fleet: IOPS per rank, by {}, {}-rank run {}; {verdict}",
            run.per, run.ranks, run.key
        ),
        &[&report.points[run.point]],
        Kind::Bars(Bars {
            x_desc: run.per.into(),
            categories: spread.iter().map(|h| h.host.clone()).collect(),
            y: Axis::linear("IOPS per rank", Unit::Count),
            layers,
            series: vec![BarSeries {
                name: run.key.clone(),
                fio: false,
                marks: Vec::new(),
                values,
            }],
        }),
    )
}

/// Each host's latency CDF (its ranks' histograms merged), beside the fleet's.
fn host_cdfs(report: &Report, run: &FleetRun) -> Option<Chart> {
    let p = &report.points[run.point];
    let mut series: Vec<LineSeries> = run
        .host_bins
        .iter()
        .enumerate()
        .filter(|(_, (_, bins))| !bins.is_empty())
        .map(|(k, (host, bins))| LineSeries {
            name: host.clone(),
            points: tail_cdf(bins),
            color: k,
            dashed: false,
            marker: None,
            fio: false,
            step: true,
            labels: Vec::new(),
            marks: Vec::new(),
        })
        .collect();
    if series.is_empty() {
        return None;
    }
    if !p.bins.is_empty() {
        series.push(LineSeries {
            name: "whole fleet".into(),
            points: tail_cdf(&p.bins),
            color: series.len(),
            dashed: true,
            marker: None,
            fio: false,
            step: true,
            labels: Vec::new(),
            marks: Vec::new(),
        });
    }
    let mut c = chart(
        "fleet-cdf".into(),
        format!(
            "Fleet: latency distribution (CDF) of each {}, {}-rank run {}, from its histograms merged",
            run.per, run.ranks, run.key
        ),
        &[p],
        Kind::Lines(Lines {
            x: XAxis::Numeric(Axis::log("latency (log scale)", Unit::Ns)),
            y: Axis::linear("reads at or below (tail-stretched scale)", Unit::Tail),
            series,
        }),
    );
    c.height = 460;
    Some(c)
}
