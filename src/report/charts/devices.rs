//! The devices study's charts: for each block size, each target's throughput and the aggregate
//! as bars against the number of targets read at once; the aggregate against the number of
//! targets beside perfect scaling (n × one target); the CPU each I/O cost.

use super::*;

fn targets(p: &Point) -> usize {
    p.multi.as_ref().map_or(1, |m| m.targets)
}

fn is_aggregate(p: &Point) -> bool {
    p.multi.as_ref().is_none_or(|m| m.name.is_none())
}

/// The charts of the devices study.
pub fn charts(c: &Ctx) -> Vec<Chart> {
    let mut out = Vec::new();
    let sizes: BTreeSet<u64> = c.pts.iter().map(|p| p.bs).collect();
    let numeric = |desc: &str| {
        XAxis::Numeric(Axis {
            desc: desc.into(),
            scale: Scale::Linear,
            unit: Unit::Whole,
            from_zero: true,
        })
    };
    let mut scaling = Vec::new();
    let mut cpu = Vec::new();
    for &bs in &sizes {
        let pts: Vec<&Point> = c.pts.iter().copied().filter(|p| p.bs == bs).collect();
        out.push(chart(
            c.id(&format!("bars-{}", format_size(bs))),
            format!(
                "{} reads on several targets at once: each target's throughput and the aggregate",
                format_size(bs)
            ),
            &pts,
            Kind::Bars(bars(
                &pts,
                "targets read at once",
                targets,
                |n| n.to_string(),
                |p| match p.multi.as_ref().and_then(|m| m.name.clone()) {
                    Some(name) => name,
                    None => "aggregate".into(),
                },
                Measure::one(mb_axis(), MB_S),
            )),
        ));
        let mut agg: Vec<(f64, f64, f64)> = pts
            .iter()
            .filter(|p| is_aggregate(p))
            .map(|p| {
                let us = if p.iops > 0.0 {
                    p.cpu_pct / 100.0 / p.iops * 1e6
                } else {
                    0.0
                };
                (targets(p) as f64, p.mb_s, us)
            })
            .collect();
        agg.sort_by(|a, b| a.0.total_cmp(&b.0));
        agg.dedup_by(|a, b| a.0 == b.0);
        let name = format_size(bs);
        let line = |name: String, points: Vec<(f64, f64)>, color: usize, dashed: bool| LineSeries {
            name,
            points,
            color,
            dashed,
            marker: (!dashed).then_some(bs_marker(bs)),
            fio: false,
            step: false,
            labels: Vec::new(),
            marks: Vec::new(),
        };
        scaling.push(line(
            format!("{name} aggregate"),
            agg.iter().map(|a| (a.0, a.1)).collect(),
            bs_color(bs),
            false,
        ));
        if let Some(one) = agg.iter().find(|a| a.0 == 1.0) {
            scaling.push(line(
                format!("{name} n × one target"),
                agg.iter().map(|a| (a.0, a.0 * one.1)).collect(),
                bs_color(bs),
                true,
            ));
        }
        cpu.push(line(
            name.clone(),
            agg.iter().map(|a| (a.0, a.2)).collect(),
            bs_color(bs),
            false,
        ));
    }
    let all: Vec<&Point> = c.pts.iter().copied().filter(|p| is_aggregate(p)).collect();
    let scaling = Lines {
        x: numeric("targets read at once"),
        y: mb_axis(),
        series: scaling,
    };
    let stops = |x: f64| {
        let s = crate::units::sig(x);
        if x == 1.0 {
            "1 target".to_string()
        } else {
            format!("{s} targets")
        }
    };
    out.push(chart(
        c.id("scaling"),
        title_with_knees(
            "Aggregate throughput against targets read at once (dashed: perfect scaling)",
            &scaling,
            "",
            &stops,
        ),
        &all,
        Kind::Lines(scaling),
    ));
    out.push(chart(
        c.id("cpu"),
        "CPU per I/O against targets read at once (whole process, io_uring helpers included)"
            .into(),
        &all,
        Kind::Lines(Lines {
            x: numeric("targets read at once"),
            y: Axis::linear("CPU per I/O (µs)", Unit::Number),
            series: cpu,
        }),
    ));
    out
}
