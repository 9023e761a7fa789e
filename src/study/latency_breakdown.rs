//! The `latency-breakdown` study (the networked-flash document's Table 3): one client, one read
//! in flight, per block size: the device read locally, the null back end served over NBD (the
//! network, protocol and server without storage) and the device served over NBD; the summary sets
//! remote minus local beside the measured remote latency and the sum of its parts.

use super::net::{self, NetPoint, Served};
use super::plan::*;
use super::{Counts, Exec, StudyObserver, StudySpec, Summary};
use crate::config::Rw;
use crate::engine::EngineKind;
use crate::error::Result;
use crate::result::Document;
use crate::size::{format_ns, format_size};
use crate::store::Store;
use std::fmt::Write;

pub static SPEC: StudySpec = StudySpec {
    name: "latency-breakdown",
    title: "Networked flash: QD1 latency local against remote (NBD, Table 3)",
    describe: "one read in flight: local device, NBD null back end and NBD-served device latency \
               per block size; remote minus local against the sum of parts",
    in_all: false,
    exec: Exec::Custom(run),
    summary: Summary::Custom(summary),
};

fn run(ctx: &Context, store: &mut Store, obs: &dyn StudyObserver) -> Result<Counts> {
    let name = SPEC.study_name();
    let served = net::served_target(&ctx.target.path, ctx.target.direct_supported, "thread");
    let null = Served {
        target: None,
        buffered: false,
        model: "thread",
        delay_us: 0,
        busy_poll_us: 0,
        netem_us: 0,
    };
    let mut points: Vec<NetPoint> = Vec::new();
    for bs in ctx.sizes(&[4 * K, 16 * K, 64 * K, 256 * K], &[4 * K, 64 * K]) {
        points.push(net::local(
            name,
            ctx.base(EngineKind::Psync, Rw::Randread, bs),
        ));
        points.push(net::remote(name, null.clone(), bs, 1, ctx.timing, false));
        points.push(net::remote(
            name,
            served.clone(),
            bs,
            1,
            ctx.timing,
            ctx.verify,
        ));
    }
    net::run_net_points(name, ctx.network, &points, store, obs)
}

/// Which part of the breakdown a point is.
pub fn part(d: &Document) -> Option<&'static str> {
    let t = d.study.as_ref()?.net.as_ref()?;
    Some(match (t.side.as_str(), t.backend.as_str()) {
        ("local", _) => "local device",
        (_, "null") => "network + server (null)",
        _ => "remote device",
    })
}

/// Table 3: per block size, mean and p50 of each part, remote minus local, and the measured
/// remote latency against local + (network + server).
fn summary(docs: &[&Document]) -> String {
    let mut sizes: Vec<u64> = docs.iter().map(|d| d.config.bs).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let mut s = String::from(
        "| bs | local mean | null remote mean | remote mean | remote − local | local + null (sum of parts) | measured / sum | local p50 | remote p50 |\n|---|---|---|---|---|---|---|---|---|\n",
    );
    for bs in sizes {
        let get = |which: &str| {
            docs.iter()
                .find(|d| d.config.bs == bs && part(d) == Some(which))
                .map(|d| &d.result.latency)
        };
        let (Some(l), Some(r)) = (get("local device"), get("remote device")) else {
            continue;
        };
        let n = get("network + server (null)");
        let sum = n.map(|n| l.mean_ns + n.mean_ns);
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            format_size(bs),
            format_ns(l.mean_ns),
            n.map_or(String::new(), |n| format_ns(n.mean_ns)),
            format_ns(r.mean_ns),
            format_ns(r.mean_ns - l.mean_ns),
            sum.map_or(String::new(), format_ns),
            sum.map_or(String::new(), |x| format!("{:.2}", r.mean_ns / x)),
            format_ns(l.p50_ns as f64),
            format_ns(r.p50_ns as f64),
        );
    }
    s.push('\n');
    s.push_str(&net::summary(docs));
    s
}
