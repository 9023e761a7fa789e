//! The `clients` study (the networked-flash document's Figures 1–2): 1 … 64 clients, each with
//! one request in flight, reading the target through `readlab serve` (1 KiB and 4 KiB for IOPS,
//! 64 KiB for bandwidth), with the same device read locally by as many threads beside it (the
//! "equivalent local performance" line) and the server's CPU stored with every remote point.
//! Given a server's URL instead of a target, the clients read that server: remote points only,
//! without server CPU (the server is not readlab's to measure); under MPI the clients of each
//! point are spread over the ranks (`crate::fleet::study`).

use super::net::{self, GIVEN_SERVER, NetPoint};
use super::plan::*;
use super::{Counts, Exec, StudyObserver, StudySpec, Summary};
use crate::config::Rw;
use crate::engine::EngineKind;
use crate::error::Result;
use crate::source::TargetKind;
use crate::store::Store;

pub static SPEC: StudySpec = StudySpec {
    name: "clients",
    title: "Networked flash: IOPS and bandwidth against clients (NBD, Figures 1–2)",
    describe: "1 … 64 NBD clients with one read in flight each against readlab serve, beside the \
               device read locally at the same concurrency; server CPU per point (or against the \
               server an nbd:// URL names, clients spread over the ranks under mpirun)",
    in_all: false,
    exec: Exec::Custom(run),
    summary: Summary::Custom(net::summary),
};

fn sizes(ctx: &Context) -> Vec<u64> {
    ctx.sizes(&[K, 4 * K, 64 * K], &[K, 4 * K, 64 * K])
}

fn run(ctx: &Context, store: &mut Store, obs: &dyn StudyObserver) -> Result<Counts> {
    if ctx.target.kind == TargetKind::Nbd {
        obs.note(&format!(
            "clients study against {}: {GIVEN_SERVER}",
            ctx.target.path.display()
        ));
        let points: Vec<NetPoint> = at_server(ctx, None)
            .into_iter()
            .map(|point| NetPoint {
                point,
                served: None,
            })
            .collect();
        return net::run_net_points(SPEC.study_name(), None, &points, store, obs);
    }
    let served = net::served_target(&ctx.target.path, ctx.target.direct_supported, "thread");
    let mut points: Vec<NetPoint> = Vec::new();
    for bs in sizes(ctx) {
        let local = |n| {
            let mut c = ctx.base(EngineKind::Psync, Rw::Randread, bs);
            c.threads = n;
            c
        };
        points.extend(net::sweep(
            SPEC.study_name(),
            ctx,
            &served,
            bs,
            Some(&local),
        ));
    }
    net::run_net_points(SPEC.study_name(), ctx.network, &points, store, obs)
}

/// The points against the server `ctx.target` names (an NBD URL): every block size and client
/// count of the study, remote only; `ranks` when the clients are spread over MPI ranks.
pub fn at_server(ctx: &Context, ranks: Option<usize>) -> Vec<Point> {
    let url = ctx.target.path.display().to_string();
    let mut points = Vec::new();
    for bs in sizes(ctx) {
        for n in net::client_counts(ctx) {
            points.push(net::at_server(
                SPEC.study_name(),
                &url,
                bs,
                n,
                ctx.timing,
                ctx.verify,
                ranks,
            ));
        }
    }
    points
}
