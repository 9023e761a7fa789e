//! The `uring-features` study: io_uring plain vs fixed files vs fixed buffers vs both vs SQ poll
//! (§10), at the batch study's best point.

use super::plan::*;
use super::{Exec, Key, Metric::*, StudySpec, Summary, Table};
use crate::config::{RunConfig, Rw};
use crate::engine::EngineKind;
use crate::result::Document;

pub static SPEC: StudySpec = StudySpec {
    name: "uring-features",
    title: "io_uring features (§10)",
    describe: "io_uring plain vs fixed files vs fixed buffers vs both vs SQ poll (§10)",
    in_all: true,
    exec: Exec::Plan(plan),
    summary: Summary::Pivot(Table {
        rows: Key::Label,
        cols: Key::One,
        metrics: &[MBs, Iops, P999, Cpu, SqPollCpu],
        title: "io_uring features → MB/s, IOPS, p99.9, CPU % (SQ poll thread included)",
    }),
    fio_fits: |_| false,
    charts: crate::report::charts::studies::uring_features,
};

fn plan(ctx: &Context, docs: &[Document]) -> Vec<RunConfig> {
    let (qs, batch) = super::batch::best_uring_point(docs);
    let variants: [(bool, bool, bool); 6] = [
        (false, false, false),
        (true, false, false),
        (false, true, false),
        (true, true, false),
        (false, false, true),
        (true, true, true),
    ];
    let mut points = Vec::new();
    for (files, bufs, sqpoll) in variants {
        let mut c = ctx.base(EngineKind::Uring, Rw::Randread, 4 * K);
        c.iodepth = qs;
        c.batch = batch;
        c.options.uring.fixed_files = files;
        c.options.uring.fixed_bufs = bufs;
        c.options.uring.sqpoll = sqpoll;
        points.push(c);
    }
    points
}
