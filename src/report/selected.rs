//! The report's "selected parameters" table, as the reference document ends §8.2, §9.1 and §10.3
//! (Storage · Threads · Queue size · Batch size): one row per target, block size and goal, from
//! the tuner's results — its `tune.json` (the re-measured finalists, with their spread) when the
//! tune directory has one, else its measured points (study tag `tune`) under the tuner's rule —
//! and the runs with the selected parameters across block sizes (Figures 73–75, 86–88, 103–105).

use crate::document::chart::{Axis, Chart, Kind, LineSeries, Lines, SHAPES, Unit, XAxis};
use crate::points::{Point, Report, caption};
use crate::table::{Column, Table};
use crate::tune::{Goal, Spread};
use crate::units::{Style, format_bytes, format_ns};
use std::collections::{BTreeMap, BTreeSet};

// One row of the table; the report's JSON (`selected`) is this type itself, so a new field is in
// both. Its name and its fields' descriptions in the JSON reference are those it has always had
// (`SelectedJson`; the `///` lines below are that reference's words).
/// What the tuner selected for a goal at a block size on a target.
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
#[schemars(rename = "SelectedJson")]
pub struct Selected {
    /// The target's name.
    pub name: String,
    pub bs: u64,
    /// throughput, latency or balanced.
    #[schemars(with = "String")]
    pub goal: Goal,
    /// True for the recommended goal's row.
    pub recommended: bool,
    pub label: String,
    pub engine: String,
    pub threads: usize,
    pub iodepth: usize,
    pub batch: usize,
    // io_uring features in words (`fixed files, SQ poll`), `-` without.
    pub features: String,
    pub iops: f64,
    pub mb_s: f64,
    pub p999_ns: f64,
    pub cpu_cores: f64,
    // The re-measured finalists' spread (from tune.json).
    pub spread: Option<Spread>,
}

/// The engine's options in words, from the engine's table (`fixed files, SQ poll`), `-` without.
fn features(engine: &str, o: &crate::engine::EngineOptions) -> String {
    let f = crate::engine::EngineKind::parse(engine)
        .map(|k| crate::engine::option::words(k, o))
        .unwrap_or_default();
    if f.is_empty() {
        "-".into()
    } else {
        f.join(", ")
    }
}

/// The selected rows of a report: from the tuners' reports it read, else from its tune points.
pub fn selected(report: &Report) -> Vec<Selected> {
    let mut out = Vec::new();
    let mut covered: BTreeSet<(String, u64)> = BTreeSet::new();
    for t in &report.tuned {
        // The tuner's points name the target as the report does.
        let target = crate::nbd::shown(&t.target.display().to_string());
        let name = report
            .points
            .iter()
            .find(|p| p.env.target == target)
            .map(|p| p.name.clone())
            .unwrap_or_else(|| crate::outdir::target_name(&t.target));
        for rec in &t.recommendations {
            covered.insert((name.clone(), rec.bs));
            for (goal, c) in &rec.per_goal {
                out.push(Selected {
                    name: name.clone(),
                    bs: rec.bs,
                    goal: *goal,
                    recommended: *goal == rec.goal,
                    label: c.label.clone(),
                    engine: c.config.engine.name().into(),
                    threads: c.config.threads,
                    iodepth: c.config.iodepth,
                    batch: c.config.batch,
                    features: features(c.config.engine.name(), &c.config.options),
                    iops: c.iops,
                    mb_s: c.mb_s,
                    p999_ns: c.p999_ns as f64,
                    cpu_cores: c.cpu_cores,
                    spread: c.spread.clone(),
                });
            }
        }
    }
    // Tune points without their tune.json: the tuner's rule over what it measured.
    let mut groups: BTreeMap<(String, u64), Vec<&Point>> = BTreeMap::new();
    for p in report
        .points
        .iter()
        .filter(|p| p.study.as_deref() == Some("tune") && crate::verdict::rankable(p))
    {
        if !covered.contains(&(p.name.clone(), p.bs)) {
            groups.entry((p.name.clone(), p.bs)).or_default().push(p);
        }
    }
    for ((name, bs), pts) in groups {
        let xy: Vec<(f64, f64)> = pts
            .iter()
            .map(|p| (p.iops, p.latency.p999_ns as f64))
            .collect();
        for goal in Goal::ALL {
            let Some(k) = crate::pareto::pick(&xy, goal.floor()) else {
                continue;
            };
            let p = pts[k];
            out.push(Selected {
                name: name.clone(),
                bs,
                goal,
                recommended: false,
                label: p.label.clone(),
                engine: p.engine.clone(),
                threads: p.threads,
                iodepth: p.iodepth,
                batch: p.batch,
                features: features(&p.engine, &p.options),
                iops: p.iops,
                mb_s: p.mb_s,
                p999_ns: p.latency.p999_ns as f64,
                cpu_cores: p.cpu_pct / 100.0,
                spread: None,
            });
        }
    }
    out
}

/// The table people read: the document's columns (target, Threads, Queue size, Batch size)
/// with the goal, block size, interface and what the pick measured.
pub fn table(rows: &[Selected]) -> Table {
    let mut t = Table::new(
        ["target", "goal", "block"]
            .map(Column::left)
            .into_iter()
            .chain(["Threads", "Queue size", "Batch size"].map(Column::right))
            .chain(["engine", "features", "label"].map(Column::left))
            .chain(["MB/s", "IOPS", "p99.9", "CPU (cores)"].map(Column::right))
            .chain([Column::left("spread (IOPS, p99.9)")])
            .collect(),
    );
    for r in rows {
        t.push([
            r.name.clone(),
            format!(
                "{}{}",
                r.goal.name(),
                if r.recommended { " (recommended)" } else { "" }
            ),
            format_bytes(r.bs as f64, Style::Table),
            r.threads.to_string(),
            r.iodepth.to_string(),
            r.batch.to_string(),
            r.engine.clone(),
            r.features.clone(),
            r.label.clone(),
            format!("{:.1}", r.mb_s),
            format!("{:.0}", r.iops),
            format_ns(r.p999_ns, Style::Table),
            format!("{:.2}", r.cpu_cores),
            r.spread.as_ref().map_or_else(
                || "single measurement".into(),
                |s| {
                    format!(
                        "±{:.0} %, ±{:.0} % over {} runs",
                        100.0 * s.iops.relative_half_width(),
                        100.0 * s.p999_ns.relative_half_width(),
                        s.runs
                    )
                },
            ),
        ]);
    }
    t
}

/// Runs with the selected parameters across block sizes: for each target and goal, the selected
/// configuration's throughput, CPU and p99.9 at every block size the report measured it (the
/// tuner's own picks and any run of the same configuration at other block sizes).
pub fn charts(report: &Report, rows: &[Selected]) -> Vec<Chart> {
    let several_targets = rows.iter().map(|r| &r.name).collect::<BTreeSet<_>>().len() > 1;
    let mut series: Vec<(String, Values)> = Vec::new();
    let mut drawn: Vec<&Point> = Vec::new();
    let mut sizes: BTreeSet<u64> = BTreeSet::new();
    for (name, label, goals) in &selected_lines(rows) {
        let v = line_values(report, rows, (name, label), &mut drawn);
        sizes.extend(v.keys());
        let who = if several_targets {
            format!("{name} ")
        } else {
            String::new()
        };
        series.push((format!("{who}{label} ({})", goals.join(", ")), v));
    }
    if series.is_empty() {
        return Vec::new();
    }
    let sizes: Vec<u64> = sizes.into_iter().collect();
    let cap = if drawn.is_empty() {
        format!(
            "From the tuner's picks on {}.",
            rows.iter()
                .map(|r| r.name.as_str())
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect::<Vec<_>>()
                .join(", ")
        )
    } else {
        caption(&drawn)
    };
    let chart = |id: &str, title: &str, pick: fn(&(f64, f64, f64)) -> f64, y: Axis| Chart {
        id: format!("selected-{id}"),
        title: title.into(),
        caption: cap.clone(),
        width: 960,
        height: 400,
        kind: Kind::Lines(lines_of(&series, &sizes, pick, y)),
    };
    vec![
        chart(
            "throughput",
            "Runs with the selected parameters across block sizes: throughput",
            |t| t.0,
            Axis::linear("throughput (MB/s)", Unit::Number),
        ),
        chart(
            "cpu",
            "Runs with the selected parameters across block sizes: CPU",
            |t| t.1,
            Axis::linear("CPU (% of one core)", Unit::Pct),
        ),
        chart(
            "p999",
            "Runs with the selected parameters across block sizes: p99.9 latency",
            |t| t.2,
            Axis::log("p99.9 latency (log scale)", Unit::Ns),
        ),
    ]
}

/// A line's figures by block size: MB/s, CPU (% of one core) and p99.9 (ns).
type Values = BTreeMap<u64, (f64, f64, f64)>;

/// One line per target and distinct selected configuration (goals sharing one share a line):
/// its target, its label and its goals.
fn selected_lines(rows: &[Selected]) -> Vec<(String, String, Vec<&'static str>)> {
    let mut lines: Vec<(String, String, Vec<&'static str>)> = Vec::new();
    for r in rows {
        match lines
            .iter_mut()
            .find(|(n, l, _)| *n == r.name && *l == r.label)
        {
            Some(e) => {
                if !e.2.contains(&r.goal.name()) {
                    e.2.push(r.goal.name());
                }
            }
            None => lines.push((r.name.clone(), r.label.clone(), vec![r.goal.name()])),
        }
    }
    lines
}

/// A line's points: at a block size the table has a row for, that row's figures (the
/// re-measured median the table prints, not the tuner's single search run of the same
/// configuration); at other block sizes, the report's random direct reads of that configuration
/// on that target (the median IOPS of several), each added to `drawn`.
fn line_values<'a>(
    report: &'a Report,
    rows: &[Selected],
    (name, label): (&str, &str),
    drawn: &mut Vec<&'a Point>,
) -> Values {
    let mut v: Values = BTreeMap::new();
    for r in rows.iter().filter(|r| r.name == name && r.label == label) {
        v.entry(r.bs)
            .or_insert((r.mb_s, 100.0 * r.cpu_cores, r.p999_ns));
    }
    let mut by_bs: BTreeMap<u64, Vec<&Point>> = BTreeMap::new();
    for p in report.points.iter().filter(|p| {
        p.name == name
            && p.label == label
            && p.rw == "randread"
            && p.direct
            && !p.is_fio()
            && !v.contains_key(&p.bs)
    }) {
        if p.plottable() {
            by_bs.entry(p.bs).or_default().push(p);
        }
    }
    for (bs, mut ps) in by_bs {
        ps.sort_by(|a, b| a.iops.total_cmp(&b.iops));
        let p = ps[(ps.len() - 1) / 2];
        // A p99.9 its tables withhold (too few requests) is not drawn.
        let p999 = p.latency.shown(99.9).map_or(f64::NAN, |ns| ns as f64);
        v.insert(bs, (p.mb_s, p.cpu_pct, p999));
        drawn.push(p);
    }
    v
}

/// The lines of `series` over the block sizes `sizes`, y from `pick`.
fn lines_of(
    series: &[(String, Values)],
    sizes: &[u64],
    pick: fn(&(f64, f64, f64)) -> f64,
    y: Axis,
) -> Lines {
    Lines {
        x: XAxis::Categories {
            desc: "block size".into(),
            names: sizes
                .iter()
                .map(|&b| format_bytes(b as f64, Style::Table))
                .collect(),
        },
        y,
        series: series
            .iter()
            .enumerate()
            .map(|(k, (n, v))| LineSeries {
                name: n.clone(),
                points: v
                    .iter()
                    .map(|(bs, t)| {
                        (
                            sizes.iter().position(|s| s == bs).unwrap_or(0) as f64,
                            pick(t),
                        )
                    })
                    .filter(|p| p.1.is_finite())
                    .collect(),
                color: k,
                dashed: false,
                marker: Some(SHAPES[k % SHAPES.len()]),
                fio: false,
                step: false,
                labels: Vec::new(),
                marks: Vec::new(),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::points::tests::point;

    #[test]
    fn tune_points_give_a_row_per_goal_and_block_size() {
        let mut pts = Vec::new();
        for (label, t, qs, iops, p999) in [
            ("U32B1T2", 2, 32, 100_000.0, 900.0),
            ("U16B1", 1, 16, 95_000.0, 300.0),
            ("U4B1", 1, 4, 60_000.0, 100.0),
        ] {
            let mut p = point(label, 4096, iops * 4096.0 / 1e6, p999);
            p.study = Some("tune".into());
            p.engine = "uring".into();
            p.iops = iops;
            p.threads = t;
            p.iodepth = qs;
            pts.push(p);
        }
        let mut other = pts[1].clone();
        other.study = None;
        other.bs = 65536;
        other.mb_s = 900.0;
        pts.push(other);
        let r = Report::from_points(pts);
        let rows = selected(&r);
        let picks: Vec<(&str, &str)> = rows
            .iter()
            .map(|s| (s.goal.name(), s.label.as_str()))
            .collect();
        assert_eq!(
            picks,
            [
                ("throughput", "U32B1T2"),
                ("balanced", "U16B1"),
                ("latency", "U4B1")
            ]
        );
        let text = table(&rows).markdown();
        assert!(
            text.contains("| x | balanced | 4K | 1 | 16 | 1 | uring | - | U16B1 |"),
            "{text}"
        );
        let c = charts(&r, &rows);
        assert_eq!(c.len(), 3);
        let Kind::Lines(l) = &c[0].kind else { panic!() };
        let u16 = l
            .series
            .iter()
            .find(|s| s.name.starts_with("U16B1"))
            .unwrap();
        assert_eq!(
            u16.points.len(),
            2,
            "4K from tune, 64K from a run of the same configuration"
        );
        assert_eq!(u16.points[1], (1.0, 900.0));
    }

    /// The charts draw the figures of the table above them: at the tuned block size, the
    /// re-measured median, never the tuner's single search run of the same configuration.
    #[test]
    fn the_charts_draw_the_tables_medians() {
        let mut search = point("U32B1", 4096, 1348.0, 2750.0);
        search.study = Some("tune".into());
        search.engine = "uring".into();
        search.iodepth = 32;
        let r = Report::from_points(vec![search.clone()]);
        let mut rows = selected(&r);
        assert!(!rows.is_empty());
        // What tune.json's re-measured finalists say of that configuration.
        for row in &mut rows {
            row.mb_s = 1276.7;
            row.iops = 1276.7e6 / 4096.0;
            row.p999_ns = 3.69e6;
            row.cpu_cores = 0.5;
        }
        let text = table(&rows).markdown();
        assert!(text.contains("| 1276.7 |"), "{text}");
        let c = charts(&r, &rows);
        let values = |k: usize| -> Vec<(f64, f64)> {
            let Kind::Lines(l) = &c[k].kind else { panic!() };
            l.series.iter().flat_map(|s| s.points.clone()).collect()
        };
        assert_eq!(values(0), [(0.0, 1276.7)], "throughput");
        assert_eq!(values(1), [(0.0, 50.0)], "CPU");
        assert_eq!(values(2), [(0.0, 3.69e6)], "p99.9");
    }
}
