//! The `server-model` study: `readlab serve --model thread` (a thread per connection, the
//! networked-flash document's design) against `--model uring` (io_uring event loops driving
//! sockets and reads), 1 … 64 NBD clients with one 4 KiB read in flight each, server CPU per point.

use super::net::{self, NetPoint};
use super::plan::*;
use super::{Counts, Exec, StudyObserver, StudySpec, Summary};
use crate::error::Result;
use crate::store::Store;

pub static SPEC: StudySpec = StudySpec {
    name: "server-model",
    title: "Networked flash: thread against io_uring server (NBD)",
    describe: "readlab serve's thread and uring models at 1 … 64 NBD clients with one 4 KiB read \
               in flight each; IOPS, latency and server CPU",
    in_all: false,
    exec: Exec::Custom(run),
    summary: Summary::Custom(net::summary),
};

fn run(ctx: &Context, store: &mut Store, obs: &dyn StudyObserver) -> Result<Counts> {
    let mut points: Vec<NetPoint> = Vec::new();
    for bs in ctx.sizes(&[4 * K], &[4 * K]) {
        for model in ["thread", "uring"] {
            let served = net::served_target(&ctx.target.path, ctx.target.direct_supported, model);
            points.extend(net::sweep(SPEC.study_name(), ctx, &served, bs, None));
        }
    }
    net::run_net_points(SPEC.study_name(), ctx.network, &points, store, obs)
}
