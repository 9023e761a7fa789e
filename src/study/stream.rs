//! The `stream` study: one thread, sequential vs random, per block size (§5.2–5.3).

use super::plan::*;
use super::{Exec, Key, Metric::*, StudySpec, Summary, Table};
use crate::config::{RunConfig, Rw};
use crate::engine::EngineKind;
use crate::result::Document;

pub static SPEC: StudySpec = StudySpec {
    name: "stream",
    title: "Sequential and random reading, one thread (§5.2–5.3)",
    describe: "one thread, sequential vs random per block size, and buffered vs direct sequential reading (§5.2–5.3)",
    in_all: true,
    exec: Exec::Plan(plan),
    summary: Summary::Pivot(Table {
        rows: Key::Bs,
        cols: Key::RwMode,
        metrics: &[MBs, P50, P999],
        title: "block size × access, direct or buffered → throughput and latency",
    }),
};

/// Sequential points sample their throughput every 4 MiB of the target (bandwidth against offset).
const SAMPLE: u64 = 4 * M;

fn plan(ctx: &Context, _docs: &[Document]) -> Vec<RunConfig> {
    let mut points = Vec::new();
    for bs in ctx.sizes(
        &[4 * K, 16 * K, 64 * K, 256 * K, M, 4 * M],
        &[4 * K, 64 * K, M],
    ) {
        for rw in [Rw::Read, Rw::Randread] {
            let mut c = ctx.base(EngineKind::Psync, rw, bs);
            if rw == Rw::Read {
                c.sample_bytes = Some(SAMPLE);
            }
            points.push(c);
        }
    }
    // Figure 13: buffered (with readahead, POSIX_FADV_SEQUENTIAL) against direct sequential
    // reading from the start of the target in small blocks, throughput against offset.
    for bs in ctx.sizes(&[4 * K, 8 * K], &[4 * K, 8 * K]) {
        for direct in [true, false] {
            if direct && !ctx.target.direct_supported {
                continue;
            }
            let mut c = ctx.base(EngineKind::Psync, Rw::Read, bs);
            c.direct = direct;
            c.sample_bytes = Some(SAMPLE);
            if !direct {
                c.fadvise = Some(crate::config::Fadvise::Sequential);
            }
            if !points.contains(&c) {
                points.push(c);
            }
        }
    }
    points
}
