//! The all-experiments charts: every point on one throughput × p99.9 scatter with the Pareto
//! frontier, latency CDFs, one run's timeline.

use super::*;

/// The all-experiments charts: scatter with frontier, latency CDFs, one run's timeline.
pub fn all_charts(report: &Report) -> Vec<Chart> {
    let mut out = Vec::new();
    // A run on several targets counts once here (its aggregate); each target's own points get
    // a scatter of their own below.
    let idx: Vec<usize> = (0..report.points.len())
        .filter(|&i| report.points[i].plottable() && !report.is_target_part(i))
        .collect();
    if !idx.is_empty() {
        out.push(scatter(
            report,
            &idx,
            &report.frontier,
            &report.highlights,
            "all-scatter".into(),
            "All experiments: throughput against p99.9 latency (shape: block size, colour: CPU; best of each block size enlarged and labelled; dashed: Pareto frontier)".into(),
        ));
    }
    for (n, (name, idx)) in report.target_parts().into_iter().enumerate() {
        let xy: Vec<(f64, f64)> = idx
            .iter()
            .map(|&i| {
                (
                    report.points[i].mb_s,
                    report.points[i].latency.p999_ns as f64,
                )
            })
            .collect();
        let groups: Vec<u64> = idx.iter().map(|&i| report.points[i].bs).collect();
        let local = |v: Vec<usize>| v.into_iter().map(|k| idx[k]).collect::<Vec<_>>();
        let frontier = local(crate::pareto::throughput_latency(&xy));
        let highlights = local(crate::pareto::highlights(&xy, &groups, 3));
        out.push(scatter(
            report,
            &idx,
            &frontier,
            &highlights,
            format!("all-scatter-target-{}", n + 1),
            format!("Target {name} in runs on several targets: throughput against p99.9 latency (its own share of each run)"),
        ));
    }
    let cdf = report.cdf_points(6);
    if !cdf.is_empty() {
        let pts: Vec<&Point> = cdf.iter().map(|&i| &report.points[i]).collect();
        let series = cdf
            .iter()
            .enumerate()
            .map(|(k, &i)| {
                let p = &report.points[i];
                LineSeries {
                    name: format!(
                        "{} {}{}",
                        report.display_label(i),
                        format_size(p.bs),
                        if report.frontier.contains(&i) {
                            " (frontier)"
                        } else {
                            ""
                        }
                    ),
                    points: tail_cdf(&p.bins),
                    color: k,
                    dashed: p.is_fio(),
                    marker: None,
                    fio: p.is_fio(),
                    step: true,
                }
            })
            .collect();
        let mut c = chart(
            "all-cdf".into(),
            "Latency distribution (CDF) of the frontier points and fio json+ jobs, from their stored histograms".into(),
            &pts,
            Kind::Lines(Lines {
                x: XAxis::Numeric(Axis::log("latency (log scale)", Unit::Ns)),
                y: Axis::linear("reads at or below (tail-stretched scale)", Unit::Tail),
                series,
            }),
        );
        c.height = 460;
        out.push(c);
    }
    if let Some(i) = report.timeline_point() {
        let p = &report.points[i];
        let t = |f: &dyn Fn(&crate::stats::TimelinePoint) -> f64| -> Vec<(f64, f64)> {
            let v: Vec<(f64, f64)> = p.timeline.iter().map(|tp| (tp.t_s, f(tp))).collect();
            thin(&v, MAX_LINE_POINTS)
        };
        let x = Axis {
            desc: "time since measuring began (s)".into(),
            scale: Scale::Linear,
            unit: Unit::Seconds,
            from_zero: true,
        };
        let panel = |name: &str, points, color, y| Lines {
            x: XAxis::Numeric(x.clone()),
            y,
            series: vec![LineSeries {
                name: name.into(),
                points,
                color,
                dashed: false,
                marker: Some(Shape::Circle),
                fio: false,
                step: false,
            }],
        };
        let mut c = chart(
            "all-timeline".into(),
            format!(
                "Per-second timeline of one run: {} {} {} ({}{})",
                report.display_label(i),
                p.access(),
                format_size(p.bs),
                p.engine,
                p.study
                    .as_deref()
                    .map(|s| format!(", {s} study"))
                    .unwrap_or_default()
            ),
            &[p],
            Kind::Stack(vec![
                panel(
                    "IOPS",
                    t(&|tp| tp.iops),
                    0,
                    Axis::linear("IOPS", Unit::Count),
                ),
                panel(
                    "p99",
                    t(&|tp| tp.p99_ns as f64),
                    1,
                    Axis::log("p99 latency (log scale)", Unit::Ns),
                ),
            ]),
        );
        c.height = 480;
        out.push(c);
    }
    out.extend(super::monitor::run_monitor(report));
    out
}

/// The throughput × p99.9 scatter of points `idx`, with their frontier and highlights.
fn scatter(
    report: &Report,
    idx: &[usize],
    frontier: &[usize],
    highlights: &[usize],
    id: String,
    title: String,
) -> Chart {
    let pts: Vec<&Point> = idx.iter().map(|&i| &report.points[i]).collect();
    let sizes: Vec<u64> = pts
        .iter()
        .map(|p| p.bs)
        .collect::<BTreeSet<u64>>()
        .into_iter()
        .collect();
    let dots = idx
        .iter()
        .map(|&i| {
            let p = &report.points[i];
            Dot {
                x: p.mb_s,
                y: p.latency.p999_ns as f64,
                shape: sizes.iter().position(|&b| b == p.bs).unwrap_or(0),
                cpu: p.cpu_pct,
                big: highlights.contains(&i),
                label: report.display_label(i),
                fio: p.is_fio(),
            }
        })
        .collect();
    let cpu_max = pts
        .iter()
        .map(|p| p.cpu_pct)
        .fold(100.0_f64, |a, b| if b.is_finite() { a.max(b) } else { a });
    let frontier = frontier
        .iter()
        .map(|&i| {
            (
                report.points[i].mb_s,
                report.points[i].latency.p999_ns as f64,
            )
        })
        .collect();
    let mut c = chart(
        id,
        title,
        &pts,
        Kind::Scatter(Scatter {
            x: mb_axis(),
            y: p999_axis(),
            shapes: sizes.iter().map(bs_name).collect(),
            dots,
            frontier,
            cpu_max,
        }),
    );
    c.height = 560;
    c
}
