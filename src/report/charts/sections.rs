//! Which charts each part of the report draws: a study's section (the report owns each study's
//! presentation, keyed by the study's name, so the study registry needs nothing of the report),
//! the fleet's and the all-experiments figures. Kept apart from `charts/mod.rs`, whose chart
//! types and helpers every chart module uses, so that the modules drawing each study's charts
//! and the one choosing among them do not name each other.

use super::{Chart, Ctx, Namer, all_charts, cache, devices, figures, fleet_charts, net, studies};
use crate::report::model::{Point, Report, Section};
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

    #[test]
    fn every_registered_study_has_its_charts() {
        for spec in crate::study::registry() {
            assert!(study_charts(spec.study_name()).is_some(), "{}", spec.name);
        }
    }
}
