//! The `threads` study: pread from 1 … N threads per block size (§6).

use super::plan::*;
use super::{Exec, Key, Metric::*, StudySpec, Summary, Table};
use crate::config::{RunConfig, Rw};
use crate::engine::EngineKind;
use crate::result::Document;

pub static SPEC: StudySpec = StudySpec {
    name: "threads",
    title: "Reading from several threads (§6)",
    describe: "pread from 1 … N threads per block size (§6)",
    in_all: true,
    exec: Exec::Plan(plan),
    summary: Summary::Pivot(Table {
        rows: Key::Threads,
        cols: Key::Bs,
        metrics: &[MBs, P999, Cpu],
        title: "threads × block size → MB/s, p99.9, CPU %",
    }),
};

fn plan(ctx: &Context, _docs: &[Document]) -> Vec<RunConfig> {
    let max = ctx
        .max_threads
        .unwrap_or(4 * crate::env::cpus())
        .clamp(1, 256);
    let threads = if ctx.quick {
        powers_of_two(1, max.min(8))
    } else {
        powers_of_two(1, max)
    };
    let mut points = Vec::new();
    for bs in ctx.sizes(&[4 * K, 64 * K, 256 * K, M], &[4 * K, 256 * K]) {
        for &t in &threads {
            let mut c = ctx.base(EngineKind::Psync, Rw::Randread, bs);
            c.threads = t;
            points.push(c);
        }
    }
    points
}
