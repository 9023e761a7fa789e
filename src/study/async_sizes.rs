//! The `async-sizes` study: Linux aio and io_uring per block size from one, two and three
//! threads, at the queue size the queue study found best (§7.1, Figures 46–51).

use super::plan::*;
use super::{Exec, Key, Metric::*, StudySpec, Summary, Table};
use crate::config::{RunConfig, Rw};
use crate::engine::EngineKind;
use crate::result::Document;

pub static SPEC: StudySpec = StudySpec {
    name: "async-sizes",
    title: "Asynchronous reading per block size (§7.1)",
    describe: "Linux aio and io_uring per block size from 1, 2 and 3 threads at the best queue size (§7.1)",
    in_all: true,
    exec: Exec::Plan(plan),
    summary: Summary::Pivot(Table {
        rows: Key::Bs,
        cols: Key::EngineThreads,
        metrics: &[MBs, P999, Cpu],
        title: "block size × interface and threads → MB/s, p99.9, CPU %",
    }),
};

fn plan(ctx: &Context, docs: &[Document]) -> Vec<RunConfig> {
    let sizes = ctx.sizes(
        &[4 * K, 8 * K, 16 * K, 32 * K, 64 * K, 128 * K, 256 * K, M],
        &[4 * K, 16 * K, 64 * K],
    );
    let mut points = Vec::new();
    for engine in [EngineKind::Libaio, EngineKind::Uring] {
        // The queue study's best queue size (32, the report's, before it ran).
        let qs = super::queue::best_queue_sizes(docs, engine, 1)
            .last()
            .copied()
            .unwrap_or(32);
        for &bs in &sizes {
            for threads in 1..=3 {
                let mut c = ctx.base(engine, Rw::Randread, bs);
                c.iodepth = qs;
                c.threads = threads;
                points.push(c);
            }
        }
    }
    points
}
