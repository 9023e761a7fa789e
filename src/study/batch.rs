//! The `batch` study: Linux aio and io_uring, batch size for the two best queue sizes (§8.2, §9.1).

use super::plan::*;
use super::{Exec, Key, Metric::*, StudySpec, Summary, Table};
use crate::config::{RunConfig, Rw};
use crate::engine::EngineKind;
use crate::result::Document;

pub static SPEC: StudySpec = StudySpec {
    name: "batch",
    title: "Asynchronous reading: batch size (§8.2, §9.1)",
    describe: "Linux aio and io_uring, batch size for the two best queue sizes (§8.2, §9.1)",
    in_all: true,
    exec: Exec::Plan(plan),
    summary: Summary::Pivot(Table {
        rows: Key::Batch,
        cols: Key::EngineIodepth,
        metrics: &[MBs, P999, Cpu],
        title: "batch size × interface and queue size → MB/s, p99.9, CPU %",
    }),
    fio_fits: |_| false,
    charts: crate::report::charts::studies::queue_batch,
};

fn plan(ctx: &Context, docs: &[Document]) -> Vec<RunConfig> {
    let mut points = Vec::new();
    for engine in [EngineKind::Libaio, EngineKind::Uring] {
        for qs in super::queue::best_queue_sizes(docs, engine, 2) {
            let batches = if ctx.quick {
                let mut b = vec![1, 4.min(qs), qs];
                b.dedup();
                b
            } else {
                powers_of_two(1, qs)
            };
            for batch in batches {
                let mut c = ctx.base(engine, Rw::Randread, 4 * K);
                c.iodepth = qs;
                c.batch = batch;
                points.push(c);
            }
        }
    }
    points
}

/// The best (queue size, batch) this study found for io_uring, or (32, 1).
pub(super) fn best_uring_point(docs: &[Document]) -> (usize, usize) {
    let mine = SPEC.study_name();
    docs.iter()
        .filter(|d| {
            d.study.as_ref().is_some_and(|t| t.study == mine)
                && d.config.engine == EngineKind::Uring
                && d.config.threads == 1
        })
        .max_by(|a, b| a.result.mb_s.total_cmp(&b.result.mb_s))
        .map(|d| (d.config.iodepth, d.config.batch))
        .unwrap_or((32, 1))
}
