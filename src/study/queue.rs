//! The `queue` study: Linux aio and io_uring, queue size × threads at 4 KiB (§8.2, §9.1).

use super::plan::*;
use super::{Exec, Key, Metric::*, StudySpec, Summary, Table};
use crate::config::{RunConfig, Rw};
use crate::engine::EngineKind;
use crate::result::Document;

pub static SPEC: StudySpec = StudySpec {
    name: "queue",
    title: "Asynchronous reading: queue size (§8.2, §9.1)",
    describe: "Linux aio and io_uring, queue size × threads at 4 KiB (§8.2, §9.1)",
    in_all: true,
    exec: Exec::Plan(plan),
    summary: Summary::Pivot(Table {
        rows: Key::Iodepth,
        cols: Key::EngineThreads,
        metrics: &[MBs, P999, Cpu],
        title: "queue size × interface and threads → MB/s, p99.9, CPU %",
    }),
};

fn plan(ctx: &Context, _docs: &[Document]) -> Vec<RunConfig> {
    let sizes = ctx.pick(&powers_of_two(1, 256), &[1, 4, 16, 64]);
    let threads = ctx.pick(&[1, 2, 3], &[1, 2]);
    let mut points = Vec::new();
    for engine in [EngineKind::Libaio, EngineKind::Uring] {
        for &t in &threads {
            for &qs in &sizes {
                let mut c = ctx.base(engine, Rw::Randread, 4 * K);
                c.iodepth = qs;
                c.threads = t;
                points.push(c);
            }
        }
    }
    points
}

/// The best `n` queue sizes this study found (highest throughput at any thread count), or the
/// report's choice of 16 and 32 when there is none yet.
pub(super) fn best_queue_sizes(docs: &[Document], engine: EngineKind, n: usize) -> Vec<usize> {
    let mine = SPEC.study_name();
    let mut found: Vec<(usize, f64)> = Vec::new();
    for d in docs
        .iter()
        .filter(|d| d.study.as_ref().is_some_and(|t| t.study == mine) && d.config.engine == engine)
    {
        match found.iter_mut().find(|(qs, _)| *qs == d.config.iodepth) {
            Some(e) => e.1 = e.1.max(d.result.mb_s),
            None => found.push((d.config.iodepth, d.result.mb_s)),
        }
    }
    if found.len() < n {
        return vec![16, 32];
    }
    found.sort_by(|a, b| b.1.total_cmp(&a.1));
    let mut best: Vec<usize> = found.into_iter().take(n).map(|(qs, _)| qs).collect();
    best.sort();
    best
}
