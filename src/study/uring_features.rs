//! The `uring-features` study: io_uring plain vs fixed files vs fixed buffers vs both vs SQ poll
//! (§10), at the batch study's best point; on a device with poll queues, also polled completions
//! (IOPOLL) alone, with fixed files and buffers, and with SQ poll.

use super::plan::*;
use super::{Exec, Key, Metric::*, StudySpec, Summary, Table};
use crate::config::{RunConfig, Rw};
use crate::engine::{EngineKind, UringOptions};
use crate::result::Document;

pub static SPEC: StudySpec = StudySpec {
    name: "uring-features",
    title: "io_uring features (§10)",
    describe: "io_uring plain vs fixed files vs fixed buffers vs both vs SQ poll (and IOPOLL on a device with poll queues), per block size (§10)",
    in_all: true,
    exec: Exec::Plan(plan),
    summary: Summary::Pivot(Table {
        rows: Key::Label,
        cols: Key::Bs,
        metrics: &[MBs, Iops, P999, Cpu, SqPollCpu],
        title: "io_uring features → MB/s, IOPS, p99.9, CPU % (SQ poll thread included)",
    }),
};

fn plan(ctx: &Context, docs: &[Document]) -> Vec<RunConfig> {
    let (qs, batch) = super::batch::best_uring_point(docs);
    // (fixed files, fixed buffers, SQ poll, IOPOLL)
    let mut variants = vec![
        (false, false, false, false),
        (true, false, false, false),
        (false, true, false, false),
        (true, true, false, false),
        (false, false, true, false),
        (true, true, true, false),
    ];
    // IOPOLL fails every read on a device without poll queues: its points only where it works.
    if crate::env::DeviceInfo::of(&ctx.target.path).io_poll == Some(true) {
        variants.extend([
            (false, false, false, true),
            (true, true, false, true),
            (false, false, true, true),
        ]);
    }
    let mut points = Vec::new();
    // Each feature against plain io_uring at every block size (Figures 89–105).
    let sizes = ctx.sizes(
        &[4 * K, 8 * K, 16 * K, 32 * K, 64 * K, 128 * K, 256 * K],
        &[4 * K, 16 * K, 64 * K],
    );
    for &bs in &sizes {
        for &(files, bufs, sqpoll, iopoll) in &variants {
            let mut c = ctx.base(EngineKind::Uring, Rw::Randread, bs);
            c.iodepth = qs;
            c.batch = batch;
            UringOptions::edit(&mut c.options, |u| {
                (u.fixed_files, u.fixed_bufs, u.sqpoll, u.iopoll) = (files, bufs, sqpoll, iopoll)
            });
            points.push(c);
        }
    }
    points
}
