//! The `multiblock` study: N random 4 KiB blocks per request: pread vs aio vs io_uring (§7.2).

use super::plan::*;
use super::{Exec, Key, Metric::*, StudySpec, Summary, Table};
use crate::config::{RunConfig, Rw};
use crate::engine::EngineKind;
use crate::result::Document;

pub static SPEC: StudySpec = StudySpec {
    name: "multiblock",
    title: "Several blocks per request (§7.2)",
    describe: "N random 4 KiB blocks per request: pread vs aio vs io_uring (§7.2)",
    in_all: true,
    exec: Exec::Plan(plan),
    summary: Summary::Pivot(Table {
        rows: Key::Blocks,
        cols: Key::Engine,
        metrics: &[P50, P99, P999],
        title: "blocks per request × interface → request latency",
    }),
};

fn plan(ctx: &Context, _docs: &[Document]) -> Vec<RunConfig> {
    let mut points = Vec::new();
    for n in ctx.pick(&[1, 2, 4, 8, 16, 32, 64], &[1, 4, 16, 64]) {
        for engine in [EngineKind::Psync, EngineKind::Libaio, EngineKind::Uring] {
            let mut c = ctx.base(engine, Rw::Randread, 4 * K);
            c.blocks_per_request = n;
            if engine != EngineKind::Psync {
                // One request in flight; its n blocks go out in one submit.
                c.iodepth = 1;
            }
            points.push(c);
        }
    }
    points
}
