//! The points a report is made of: every measured point, from readlab results or fio JSON
//! ([`fio`]), in one shape ([`point`]), read from the inputs the user named ([`load`]), grouped
//! into the report's studies and ranked on the throughput/latency Pareto frontier
//! ([`analysis`]), and captioned with where and when it was measured ([`caption`]).
//!
//! The data layer of what readlab shows: it reads results (`crate::result`, `crate::store`), the
//! studies' registry and the tuner's answer, and is read by what compares, judges and composes
//! (`crate::compare`, `crate::verdict`, `crate::report`); it names none of them, nor the document
//! layer (`crate::document`) they draw with.

pub mod analysis;
pub mod caption;
pub mod figure;
pub mod fio;
pub mod fleet;
pub mod load;
pub mod point;

pub use analysis::{Report, Section};
pub use caption::caption;
pub use load::{load, require_points};
pub use point::{Env, Multi, Point, Source, origin_name};

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::stats::LatencySummary;

    /// A plausible point for tests.
    pub fn point(label: &str, bs: u64, mb_s: f64, p999_us: f64) -> Point {
        let ns = (p999_us * 1000.0) as u64;
        Point {
            source: Source::Readlab,
            name: "x".into(),
            origin: "test".into(),
            study: None,
            scheduler: None,
            net: None,
            setting: None,
            label: label.into(),
            engine: "psync".into(),
            rw: "randread".into(),
            random_distribution: None,
            bssplit: None,
            bs,
            threads: 1,
            iodepth: 1,
            achieved_depth: 1.0,
            batch: 1,
            blocks_per_request: 1,
            options: Default::default(),
            direct: true,
            offset: 0,
            seconds: 1.0,
            ios: 1000,
            iops: mb_s * 1e6 / bs as f64,
            mb_s,
            cpu_pct: 10.0,
            sqpoll_cpu_pct: 0.0,
            open_loop: None,
            cpu_us_per_io: 1.0,
            timer_ns_per_io: Some(40.0),
            runner_cost: None,
            spread: None,
            precision: None,
            race: None,
            latency: LatencySummary {
                count: 1_000_000,
                min_ns: ns / 10,
                mean_ns: ns as f64 / 4.0,
                stdev_ns: 1.0,
                p50_ns: ns / 5,
                p90_ns: ns / 3,
                p99_ns: ns / 2,
                p999_ns: ns,
                p9999_ns: ns,
                max_ns: ns * 2,
            },
            timeline: Vec::new(),
            offset_samples: Vec::new(),
            bins: Vec::new(),
            env: Env {
                target: "/dev/x".into(),
                kernel: "6.1".into(),
                date: "2026-01-02T03:04:05Z".into(),
                tool: "readlab 0.1.0".into(),
                ..Env::default()
            },
            note: None,
            monitor: None,
            multi: None,
        }
    }
}
