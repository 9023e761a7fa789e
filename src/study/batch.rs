//! The `batch` study: Linux aio and io_uring, batch size for the two best queue sizes (§8.2, §9.1).

use super::plan::*;
use super::{Exec, Key, Metric::*, StudySpec, Summary, Table};
use crate::config::{RunConfig, Rw};
use crate::engine::EngineKind;
use crate::result::Document;

pub static SPEC: StudySpec = StudySpec {
    name: "batch",
    title: "Asynchronous reading: batch size (§8.2, §9.1)",
    describe: "Linux aio and io_uring, batch size 1 … queue size for the two best queue sizes, 1–3 threads (§8.2, §9.1)",
    in_all: true,
    exec: Exec::Plan(plan),
    summary: Summary::Pivot(Table {
        rows: Key::Batch,
        cols: Key::EngineIodepthThreads,
        metrics: &[MBs, P999, Cpu],
        title: "batch size × interface and queue size → MB/s, p99.9, CPU %",
    }),
};

fn plan(ctx: &Context, docs: &[Document]) -> Vec<RunConfig> {
    let mut points = Vec::new();
    for engine in [EngineKind::Libaio, EngineKind::Uring] {
        let sizes = super::queue::best_queue_sizes(docs, engine, 2);
        let largest = sizes.iter().copied().max().unwrap_or(1);
        // One list of batch sizes for every queue size, so no queue size leaves a slot empty
        // that another fills (only batches above a queue size are missing, as they must be):
        // every power of two (of four with --quick) up to the largest queue, and each queue size.
        let mut common: Vec<usize> = if ctx.quick {
            std::iter::successors(Some(1usize), |&x| Some(x * 4))
                .take_while(|&x| x <= largest)
                .collect()
        } else {
            powers_of_two(1, largest)
        };
        common.extend(&sizes);
        common.sort_unstable();
        common.dedup();
        for &qs in &sizes {
            for threads in 1..=3 {
                for &batch in common.iter().filter(|&&b| b <= qs) {
                    let mut c = ctx.base(engine, Rw::Randread, 4 * K);
                    c.iodepth = qs;
                    c.batch = batch;
                    c.threads = threads;
                    points.push(c);
                }
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
