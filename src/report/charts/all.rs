//! The all-experiments charts: every point on one throughput × p99.9 scatter with the Pareto
//! frontier, latency CDFs, one run's timeline.

use super::*;

/// The all-experiments scatter of one target's points with its own Pareto frontier; `nth`
/// numbers the chart when the report has several targets (`all-scatter-2`).
fn scatter(report: &Report, target: &str, nth: Option<usize>) -> Option<Chart> {
    let mine: Vec<usize> = (0..report.points.len())
        .filter(|&i| report.points[i].plottable() && report.points[i].name == target)
        .collect();
    // A point whose p99.9 too few requests support has no place on a p99.9 axis (its tables
    // print `–`); the title says how many are in the tables only.
    let (idx, hidden): (Vec<usize>, Vec<usize>) = mine
        .into_iter()
        .partition(|&i| report.points[i].latency.shown(99.9).is_some());
    if idx.is_empty() {
        return None;
    }
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
                y: shown(p, 99.9),
                bs: p.bs,
                cpu: p.cpu_pct,
                big: report.highlights.contains(&i),
                label: report.display_label(i),
                fio: p.is_fio(),
                mark: mark(p, Some(MB_S), P999),
            }
        })
        .collect();
    let cpu_max = pts
        .iter()
        .map(|p| p.cpu_pct)
        .fold(100.0_f64, |a, b| if b.is_finite() { a.max(b) } else { a });
    let frontier = report
        .frontier_of(target)
        .into_iter()
        .map(|i| (report.points[i].mb_s, shown(&report.points[i], 99.9)))
        .collect();
    let (id, on) = match nth {
        Some(k) => (format!("all-scatter-{k}"), format!(" on {target}")),
        None => ("all-scatter".to_string(), String::new()),
    };
    let mut c = chart(
        id,
        format!(
            "All experiments{on}: throughput against p99.9 latency (shape: block size, colour: CPU; best of each block size enlarged and labelled; dashed: this target's Pareto frontier){}",
            match hidden.len() {
                0 => String::new(),
                n => format!(
                    "; {n} point{} with fewer than {} requests, too few for a p99.9, in the tables only",
                    if n == 1 { "" } else { "s" },
                    crate::stats::min_samples(99.9)
                ),
            }
        ),
        &pts,
        Kind::Scatter(Scatter {
            x: mb_axis(),
            y: p999_axis(),
            sizes,
            big_means: "best of its block size".into(),
            dots,
            frontier,
            cpu_max,
            target: target.to_string(),
        }),
    );
    c.height = 560;
    Some(c)
}

/// The all-experiments charts: a scatter with its frontier per target, latency CDFs, one run's
/// timeline.
pub fn all_charts(report: &Report) -> Vec<Chart> {
    let mut out = Vec::new();
    let targets = report.targets();
    for (k, target) in targets.iter().enumerate() {
        if let Some(c) = scatter(report, target, (targets.len() > 1).then_some(k + 1)) {
            out.push(c);
        }
    }
    let cdf = report.cdf_points(6);
    if !cdf.is_empty() {
        let pts: Vec<&Point> = cdf.iter().map(|&i| &report.points[i]).collect();
        let mut series: Vec<LineSeries> = cdf
            .iter()
            .enumerate()
            .map(|(k, &i)| {
                let p = &report.points[i];
                LineSeries {
                    name: format!(
                        "{}{} {}{}",
                        if targets.len() > 1 {
                            format!("{}: ", p.name)
                        } else {
                            String::new()
                        },
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
                    labels: Vec::new(),
                    marks: Vec::new(),
                }
            })
            .collect();
        let sizes: Vec<u64> = pts.iter().map(|p| p.bs).collect();
        style_by_block_size(&mut series, &sizes);
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
                labels: Vec::new(),
                marks: Vec::new(),
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
