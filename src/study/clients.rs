//! The `clients` study (the networked-flash document's Figures 1–2): 1 … 64 clients, each with
//! one request in flight, reading the target through `readlab serve` (1 KiB and 4 KiB for IOPS,
//! 64 KiB for bandwidth), with the same device read locally by as many threads beside it (the
//! "equivalent local performance" line) and the server's CPU stored with every remote point.

use super::net::{self, NetPoint};
use super::plan::*;
use super::{Counts, Exec, StudyObserver, StudySpec, Summary};
use crate::config::Rw;
use crate::engine::EngineKind;
use crate::error::Result;
use crate::store::Store;

pub static SPEC: StudySpec = StudySpec {
    name: "clients",
    title: "Networked flash: IOPS and bandwidth against clients (NBD, Figures 1–2)",
    describe: "1 … 64 NBD clients with one read in flight each against readlab serve, beside the \
               device read locally at the same concurrency; server CPU per point",
    in_all: false,
    exec: Exec::Custom(run),
    summary: Summary::Custom(net::summary),
    fio_fits: |_| false,
    charts: crate::report::charts::net::clients,
};

fn run(ctx: &Context, store: &mut Store, obs: &dyn StudyObserver) -> Result<Counts> {
    let clients = if ctx.quick {
        vec![1, 4, 16]
    } else {
        powers_of_two(1, 64)
    };
    let served = net::served_target(&ctx.target.path, ctx.target.direct_supported, "thread");
    let mut points: Vec<NetPoint> = Vec::new();
    for bs in ctx.sizes(&[K, 4 * K, 64 * K], &[K, 4 * K, 64 * K]) {
        for &n in &clients {
            let mut c = ctx.base(EngineKind::Psync, Rw::Randread, bs);
            c.threads = n;
            points.push(net::local(SPEC.study_name(), c));
            points.push(net::remote(
                SPEC.study_name(),
                served.clone(),
                bs,
                n,
                ctx.timing,
                ctx.verify,
            ));
        }
    }
    net::run_net_points(SPEC.study_name(), ctx.network, &points, store, obs)
}
