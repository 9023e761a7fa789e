//! Which charts each part of the report draws: a study's section (the report owns each study's
//! presentation, keyed by the study's name, so the study registry needs nothing of the report),
//! the fleet's and the all-experiments figures. Kept apart from `charts/mod.rs`, whose chart
//! types and helpers every chart module uses, so that the modules drawing each study's charts
//! and the one choosing among them do not name each other.

use super::{Chart, Ctx, Namer, all_charts, cache, devices, figures, fleet_charts, net, studies};
use crate::points::{Point, Report, Section};
use crate::study::StudyName;
use std::collections::BTreeMap;

/// The chart function of study `study`'s report section (a test checks every registered study
/// has one).
pub fn study_charts(study: StudyName) -> Option<ChartFn> {
    Some(match study.name() {
        "async-sizes" => figures::async_sizes,
        "batch" => figures::batch,
        "cache" => cache::charts,
        "clients" => net::clients,
        "delay" => net::delay,
        "devices" => devices::charts,
        "latency" => studies::latency,
        "latency-breakdown" => net::latency_breakdown,
        "multiblock" => studies::multiblock,
        "queue" => figures::queue,
        "scan" => studies::scan,
        "scheduler" => figures::scheduler,
        "server-model" => net::server_model,
        "stream" => figures::stream,
        "threads" => studies::threads,
        "tune" => figures::tune_search,
        "uring-features" => figures::uring_features,
        _ => return None,
    })
}

/// The charts of one study section.
pub fn section_charts(report: &Report, s: &Section) -> Vec<Chart> {
    let all = report.section_points(s);
    let pts: Vec<&Point> = all.into_iter().filter(|p| p.plottable()).collect();
    if pts.is_empty() {
        return Vec::new();
    }
    let c = Ctx {
        namer: Namer::new(&pts),
        pts,
        study: s.study.name(),
        report,
    };
    study_charts(s.study).map_or_else(Vec::new, |f| f(&c))
}

/// A study's chart function (see [`study_charts`]).
pub type ChartFn = fn(&Ctx) -> Vec<Chart>;

/// Every chart of a report, section by section, all-experiments last.
pub fn every_chart(report: &Report) -> Vec<Chart> {
    let mut v: Vec<Chart> = report
        .sections
        .iter()
        .flat_map(|s| section_charts(report, s))
        .collect();
    v.extend(fleet_charts(report));
    v.extend(all_charts(report));
    v
}

/// Group charts by section id, for the HTML page.
pub fn charts_by_section(report: &Report) -> BTreeMap<String, Vec<Chart>> {
    let mut m = BTreeMap::new();
    for s in &report.sections {
        m.insert(s.study.name().to_string(), section_charts(report, s));
    }
    m.insert("fleet".to_string(), fleet_charts(report));
    m.insert("all".to_string(), all_charts(report));
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::chart::{Chart, Kind, Lines};
    use crate::points::{Point, Report};

    /// Every value a chart could draw, with where it is.
    fn drawn(c: &Chart) -> Vec<f64> {
        let lines = |l: &Lines| -> Vec<f64> {
            l.series
                .iter()
                .flat_map(|s| s.points.iter().map(|p| p.1))
                .collect()
        };
        match &c.kind {
            Kind::Bars(b) => b
                .series
                .iter()
                .flat_map(|s| s.values.iter().flatten().flatten().copied())
                .collect(),
            Kind::Lines(l) => lines(l),
            Kind::Stack(v) => v.iter().flat_map(lines).collect(),
            Kind::Scatter(s) => s
                .dots
                .iter()
                .map(|d| d.y)
                .chain(s.frontier.iter().map(|f| f.1))
                .collect(),
        }
    }

    /// A report built from stored study results: no chart draws a percentile its tables print
    /// as `–` (the threads and multiblock figures drew p99.9 from 1,503 and 7,483 requests).
    #[test]
    fn charts_hide_the_percentiles_tables_hide() {
        let mut points = Vec::new();
        for d in crate::fixture::documents::<crate::result::Document>() {
            points.extend(Point::from_run(&d, "study/results.jsonl"));
        }
        let report = Report::from_points(points);
        // Values the tables withhold, less any the tables show elsewhere.
        let mut shown: Vec<f64> = Vec::new();
        let mut hidden: Vec<f64> = Vec::new();
        for p in &report.points {
            let l = &p.latency;
            shown.extend([l.min_ns as f64, l.mean_ns, l.max_ns as f64]);
            for q in [50.0, 90.0, 99.0, 99.9, 99.99] {
                match l.shown(q) {
                    Some(v) => shown.push(v as f64),
                    None => hidden.push(match q {
                        50.0 => l.p50_ns,
                        90.0 => l.p90_ns,
                        99.0 => l.p99_ns,
                        99.9 => l.p999_ns,
                        _ => l.p9999_ns,
                    } as f64),
                }
            }
        }
        hidden.retain(|h| !shown.contains(h));
        assert!(
            hidden.len() >= 3,
            "the fixture has hidden tails: {hidden:?}"
        );
        let charts = every_chart(&report);
        assert!(charts.iter().any(|c| c.id.contains("multiblock")));
        for c in &charts {
            for v in drawn(c) {
                assert!(
                    !hidden.contains(&v),
                    "{} draws {v} ns, a percentile its table prints as –",
                    c.id
                );
            }
        }
        // The table prints them as –.
        let tables = crate::report::tables::tables(&report);
        assert!(
            tables
                .iter()
                .flat_map(|t| t.rows.iter().flatten())
                .any(|v| *v == crate::report::tables::Value::TooFew)
        );
    }

    #[test]
    fn every_registered_study_has_its_charts() {
        for spec in crate::study::registry() {
            assert!(study_charts(spec.study_name()).is_some(), "{}", spec.name);
        }
    }
}
