//! The `stream` study: one thread, sequential vs random, per block size (§5.2–5.3).

use super::plan::*;
use super::{Exec, Key, Metric::*, StudySpec, Summary, Table};
use crate::config::{RunConfig, Rw};
use crate::engine::EngineKind;
use crate::result::Document;

pub static SPEC: StudySpec = StudySpec {
    name: "stream",
    title: "Sequential and random reading, one thread (§5.2–5.3)",
    describe: "one thread, sequential vs random, per block size (§5.2–5.3)",
    in_all: true,
    exec: Exec::Plan(plan),
    summary: Summary::Pivot(Table {
        rows: Key::Bs,
        cols: Key::Rw,
        metrics: &[MBs, P50, P999],
        title: "block size × access → throughput and latency",
    }),
    fio_fits: |p| p.threads == 1 && p.iodepth == 1 && (p.rw == "read" || p.rw == "randread"),
    charts: crate::report::charts::studies::stream,
};

fn plan(ctx: &Context, _docs: &[Document]) -> Vec<RunConfig> {
    let mut points = Vec::new();
    for bs in ctx.sizes(
        &[4 * K, 16 * K, 64 * K, 256 * K, M, 4 * M],
        &[4 * K, 64 * K, M],
    ) {
        for rw in [Rw::Read, Rw::Randread] {
            points.push(ctx.base(EngineKind::Psync, rw, bs));
        }
    }
    points
}
