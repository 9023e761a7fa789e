//! The `latency` study: single random reads, one at a time, pread and preadv2, per block size (§4).

use super::plan::*;
use super::{Exec, Key, Metric::*, StudySpec, Summary, Table};
use crate::config::{RunConfig, Rw};
use crate::engine::EngineKind;
use crate::result::Document;

pub static SPEC: StudySpec = StudySpec {
    name: "latency",
    title: "Single-read latency (§4)",
    describe: "single random reads, one at a time, pread and preadv2, per block size (§4)",
    in_all: true,
    exec: Exec::Plan(plan),
    summary: Summary::Pivot(Table {
        rows: Key::Bs,
        cols: Key::Engine,
        metrics: &[Min, Mean, P99, P999, Max],
        title: "block size × interface → single-read latency",
    }),
};

fn plan(ctx: &Context, _docs: &[Document]) -> Vec<RunConfig> {
    let sizes = ctx.sizes(
        &powers_of_two(4, 32 * 1024)
            .iter()
            .map(|&k| k as u64 * K)
            .collect::<Vec<_>>(),
        &[4 * K, 16 * K, 64 * K, 256 * K, M, 4 * M],
    );
    let mut points = Vec::new();
    for bs in sizes {
        for engine in [EngineKind::Psync, EngineKind::Pvsync2] {
            points.push(ctx.base(engine, Rw::Randread, bs));
        }
    }
    points
}
