//! What the networked studies (`clients`, `delay`, `latency-breakdown`, `server-model`) share:
//! a `readlab serve` server started for each remote point as a child process of this executable
//! (so its CPU is its own, not the client's), read by readlab's nbd engine over the study's
//! network (the server in one network namespace and the clients in another, joined by a veth
//! pair, when root; else loopback), stopped by PID with SIGTERM (see `server`), its JSON summary
//! giving the server's CPU stored in the point's tag; local points read the same device directly
//! at the same concurrency; a summary table of both.

mod server;

use super::plan::{Context, powers_of_two};
use super::{Counts, Point, StudyName, StudyObserver};
use crate::config::{RunConfig, Rw, Timing};
use crate::engine::{EngineKind, NbdOptions};
use crate::error::Result;
use crate::netns::{Network, VethPair};
use crate::result::{Document, NetTag, ServerCpu};
use crate::runner;
use crate::serve::ServeSummary;
use crate::size::{format_ns, format_size};
use crate::store::Store;
pub use server::Served;
use server::ServerProcess;
use std::fmt::Write as _;
use std::path::Path;

/// What is said when the study reads a server it was given.
pub const GIVEN_SERVER: &str = "the server is not readlab's: no server CPU is measured, and with no \
                                local target there is no equivalent local line";

/// One point of a networked study: local (no server) or remote (a server started for it).
#[derive(Debug, Clone)]
pub struct NetPoint {
    pub point: Point,
    pub served: Option<Served>,
}

/// A local point: the device read by `threads` psync threads, one read in flight each.
pub fn local(name: StudyName, cfg: RunConfig) -> NetPoint {
    let net = NetTag {
        side: "local".into(),
        network: "none".into(),
        model: String::new(),
        backend: "target".into(),
        delay_us: 0,
        busy_poll_us: 0,
        netem_us: 0,
        server: None,
        ranks: None,
    };
    net_point(name, net, cfg, None)
}

/// A point of study `name` tagged with `net`, served by `served` (None: local, or a server
/// readlab does not start).
fn net_point(name: StudyName, net: NetTag, cfg: RunConfig, served: Option<Served>) -> NetPoint {
    let mut point = Point::of(name, cfg);
    point.tag.net = Some(net);
    NetPoint { point, served }
}

/// A remote point: `clients` connections with one request in flight each, `bs` random reads.
pub fn remote(
    name: StudyName,
    served: Served,
    bs: u64,
    clients: usize,
    timing: Timing,
    verify: bool,
) -> NetPoint {
    let mut cfg = RunConfig::new("nbd://127.0.0.1/");
    cfg.engine = EngineKind::parse("nbd").expect("the nbd engine is registered");
    cfg.rw = Rw::Randread;
    cfg.bs = bs;
    cfg.threads = clients;
    cfg.iodepth = 1;
    cfg.direct = false;
    cfg.verify = verify && served.target.is_some();
    cfg.runtime = timing.runtime;
    cfg.ramp = timing.ramp;
    cfg.stop_when_stable = timing.stable;
    NbdOptions::edit(&mut cfg.options, |n| n.busy_poll_us = served.busy_poll_us);
    let net = NetTag {
        side: "remote".into(),
        // Set when the study's network is known (run_net_points).
        network: Network::Loopback.tag().into(),
        model: served.model.into(),
        backend: if served.target.is_some() {
            "target"
        } else {
            "null"
        }
        .into(),
        delay_us: served.delay_us,
        busy_poll_us: served.busy_poll_us,
        netem_us: served.netem_us,
        server: None,
        ranks: None,
    };
    net_point(name, net, cfg, Some(served))
}

/// The client counts of a networked sweep: 1 … 64 by powers of two (1, 4 and 16 with --quick).
pub fn client_counts(ctx: &Context) -> Vec<usize> {
    ctx.pick(&powers_of_two(1, 64), &[1, 4, 16])
}

/// A sweep of study `name` over [`client_counts`] at block size `bs`: per count `n`, the local
/// point `local(n)` makes (when given), then a remote point of `n` clients against `served`.
pub fn sweep(
    name: StudyName,
    ctx: &Context,
    served: &Served,
    bs: u64,
    local_cfg: Option<&dyn Fn(usize) -> RunConfig>,
) -> Vec<NetPoint> {
    let mut points = Vec::new();
    for n in client_counts(ctx) {
        if let Some(cfg) = local_cfg {
            points.push(local(name, cfg(n)));
        }
        points.push(remote(name, served.clone(), bs, n, ctx.timing, ctx.verify));
    }
    points
}

/// A remote point against a server given by URL, which readlab neither starts nor measures (no
/// server CPU): `clients` connections with one request in flight each, `bs` random reads, the
/// clients spread over `ranks` MPI ranks when given.
#[allow(clippy::too_many_arguments)]
pub fn at_server(
    name: StudyName,
    url: &str,
    bs: u64,
    clients: usize,
    timing: Timing,
    verify: bool,
    ranks: Option<usize>,
) -> Point {
    let served = Served {
        target: None,
        buffered: false,
        model: "",
        delay_us: 0,
        busy_poll_us: 0,
        netem_us: 0,
    };
    let mut p = remote(name, served, bs, clients, timing, verify).point;
    p.cfg.target = url.into();
    p.cfg.verify = verify;
    if let Some(t) = p.tag.net.as_mut() {
        t.network = network_of(url).into();
        t.backend = "export".into();
        t.ranks = ranks;
    }
    p
}

/// How clients reach the server a URL names: `unix` (a Unix socket), `loopback` (this
/// machine's own address), or `tcp` (another host, as far as the URL tells).
pub fn network_of(url: &str) -> &'static str {
    match crate::nbd::NbdUrl::parse(url).map(|u| u.address) {
        Ok(crate::nbd::Address::Unix(_)) => "unix",
        Ok(crate::nbd::Address::Tcp(a)) => {
            let host = a.rsplit_once(':').map_or(a.as_str(), |(h, _)| h);
            let host = host.trim_start_matches('[').trim_end_matches(']');
            let loopback = host.eq_ignore_ascii_case("localhost")
                || host
                    .parse::<std::net::IpAddr>()
                    .is_ok_and(|ip| ip.is_loopback());
            if loopback { "loopback" } else { "tcp" }
        }
        Err(_) => "tcp",
    }
}

/// Whether the store already holds this point (remote URLs differ run to run: the server's
/// port is chosen when it starts, so points are matched on what was asked, not the URL).
pub fn stored(store: &Store, p: &Point) -> bool {
    let (tag, cfg) = (&p.tag, &p.cfg);
    store.docs().iter().any(|d| {
        let (Some(t), c) = (&d.study, &d.config) else {
            return false;
        };
        t.study == tag.study
            && matches!((&t.net, &tag.net), (Some(a), Some(b)) if a.same_point(b))
            && (c.engine, c.bs, c.threads, c.iodepth)
                == (cfg.engine, cfg.bs, cfg.threads, cfg.iodepth)
    })
}

/// The study's network: the one asked for, or (None) a veth pair when one can be made, else
/// loopback; with the pair, which lives as long as the study.
fn network(asked: Option<Network>, obs: &dyn StudyObserver) -> Result<(Network, Option<VethPair>)> {
    let cores = crate::env::cpus();
    let veth = |p: VethPair| {
        obs.note(&format!(
            "remote points over netns-veth: readlab serve in network namespace {} at {}, its \
             clients in {} at {}, joined by a veth pair on this machine, sharing its {cores} \
             core(s)",
            p.server,
            crate::netns::SERVER_ADDR,
            p.client,
            crate::netns::CLIENT_ADDR
        ));
        (Network::Veth, Some(p))
    };
    let loopback = format!(
        "remote points over loopback: readlab serve and its clients on 127.0.0.1 (no network \
         namespace), sharing this machine's {cores} core(s)"
    );
    Ok(match asked {
        Some(Network::Veth) => veth(VethPair::create()?),
        Some(Network::Loopback) => {
            obs.note(&format!("{loopback} (--network loopback)"));
            (Network::Loopback, None)
        }
        None => match VethPair::create() {
            Ok(p) => veth(p),
            Err(e) => {
                obs.note(&format!("{loopback}: no veth network ({e})"));
                (Network::Loopback, None)
            }
        },
    })
}

/// Run the points not yet stored over the network asked for (see [`network`]), a server started
/// and stopped around each remote one, with the point's netem delay on the veth pair (a point with
/// one needs the veth network).
pub fn run_net_points(
    name: StudyName,
    asked: Option<Network>,
    points: &[NetPoint],
    store: &mut Store,
    obs: &dyn StudyObserver,
) -> Result<Counts> {
    let (net, pair) = if points.iter().any(|p| p.served.is_some()) {
        network(asked, obs)?
    } else {
        (asked.unwrap_or(Network::Loopback), None)
    };
    let netem = |p: &NetPoint| p.served.as_ref().map_or(0, |s| s.netem_us);
    if pair.is_none() && points.iter().any(|p| netem(p) > 0) {
        return Err(crate::error::Error::invalid(format!(
            "a netem delay (--netem) is made on the veth pair between two network namespaces: it \
             needs the veth network (root, iproute2's ip and tc), not {}",
            net.tag()
        )));
    }
    let points: Vec<NetPoint> = points
        .iter()
        .cloned()
        .map(|mut p| {
            // A server given by URL keeps the network its URL names.
            if let Some(t) = p.point.tag.net.as_mut()
                && t.side == "remote"
                && p.served.is_some()
            {
                t.network = net.tag().into();
            }
            p
        })
        .collect();
    let todo: Vec<&NetPoint> = points.iter().filter(|p| !stored(store, &p.point)).collect();
    let skipped = points.len() - todo.len();
    obs.study_start(name, points.len(), skipped);
    let planned = crate::eta::planned_series(todo.iter().map(|p| &p.point.cfg));
    obs.points_planned(&planned);
    let mut counts = Counts {
        skipped,
        ..Counts::default()
    };
    for (i, p) in todo.iter().enumerate() {
        if obs.cancelled() {
            counts.interrupted = true;
            return Ok(counts);
        }
        let mut point = p.point.clone();
        if let Some(pair) = &pair
            && let Err(e) = pair.set_netem(netem(p))
        {
            obs.point_skipped(&point, &e);
            continue;
        }
        let server = match &p.served {
            Some(s) => match ServerProcess::start(s, pair.as_ref()) {
                Ok(srv) => {
                    point.cfg.target = srv.url.clone().into();
                    Some(srv)
                }
                Err(e) => {
                    obs.point_skipped(&point, &e);
                    continue;
                }
            },
            None => None,
        };
        obs.point_start(skipped + i, points.len(), &point);
        let run = runner::run(&point.cfg, obs);
        let summary = server.map(ServerProcess::stop).transpose();
        let mut doc = match run {
            Ok(d) => d,
            Err(e @ crate::error::Error::ReadsFailed { .. }) => {
                obs.point_failed(&point, &e);
                continue;
            }
            Err(e) => {
                obs.point_skipped(&point, &e);
                continue;
            }
        };
        if doc.result.ended_by == crate::result::EndedBy::Interrupted {
            counts.interrupted = true;
            return Ok(counts);
        }
        if let Some(net) = point.tag.net.as_mut() {
            match summary {
                Ok(Some(s)) => net.server = Some(server_cpu(&s, doc.result.iops)),
                Ok(None) => {}
                Err(e) => doc
                    .result
                    .warnings
                    .push(format!("the server's CPU is unknown: {e}")),
            }
        }
        doc.study = Some(point.tag.clone());
        obs.point_done(&doc);
        store.append(doc)?;
        counts.measured += 1;
    }
    Ok(counts)
}

/// The server's CPU from its summary, at the IOPS the client measured.
fn server_cpu(s: &ServeSummary, client_iops: f64) -> ServerCpu {
    let us = s.cpu_us_per_read;
    ServerCpu {
        us_per_read: us,
        pct_of_core: us * client_iops / 1e6 * 100.0,
        iops_per_core: if us > 0.0 { 1e6 / us } else { 0.0 },
        reads: s.reads,
    }
}

/// A point's row name: `local`, `remote thread`, `remote uring null +10us`.
pub fn side_name(t: &NetTag) -> String {
    let mut s = t.side.clone();
    if !t.model.is_empty() {
        s.push(' ');
        s.push_str(&t.model);
    }
    if t.backend == "null" {
        s.push_str(" null");
    }
    if t.delay_us > 0 {
        let _ = write!(s, " +{}us", t.delay_us);
    }
    if t.netem_us > 0 {
        let _ = write!(s, " netem +{}us", t.netem_us);
    }
    if t.busy_poll_us > 0 {
        s.push_str(" busy-poll");
    }
    if let Some(r) = t.ranks {
        let _ = write!(s, ", clients over {r} ranks");
    }
    s
}

/// The summary of a networked study: one row per point, side by side, with the server's CPU
/// and, for remote points, the ratio to the local point at the same concurrency.
pub fn summary(docs: &[&Document]) -> String {
    let mut rows: Vec<&Document> = docs
        .iter()
        .copied()
        .filter(|d| d.study.as_ref().is_some_and(|t| t.net.is_some()))
        .collect();
    rows.sort_by_key(|d| {
        let t = d.study.as_ref().and_then(|t| t.net.as_ref()).unwrap();
        (d.config.bs, side_name(t), d.config.threads)
    });
    let network = rows
        .iter()
        .filter_map(|d| d.study.as_ref()?.net.as_ref())
        .find(|n| n.side == "remote")
        .map(|n| n.network.clone())
        .unwrap_or_else(|| "none".into());
    let given = rows
        .iter()
        .filter_map(|d| d.study.as_ref()?.net.as_ref())
        .any(|n| n.backend == "export");
    let mut s = format!("network: {network}\n\n");
    if given {
        let _ = writeln!(
            s,
            "Remote points read a server given by URL; {}.\n",
            super::GIVEN_SERVER
        );
    }
    let _ = write!(
        s,
        "| bs | side | clients | IOPS | MB/s | p50 | p99 | p99.9 | vs local | server CPU % | server µs/read | IOPS per server core |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n"
    );
    for d in &rows {
        let t = d.study.as_ref().and_then(|t| t.net.as_ref()).unwrap();
        let (c, r) = (&d.config, &d.result);
        let local = (t.side == "remote" && t.backend == "target")
            .then(|| {
                rows.iter().find(|l| {
                    l.study.as_ref().and_then(|t| t.net.as_ref()).unwrap().side == "local"
                        && l.config.bs == c.bs
                        && l.config.threads == c.threads
                })
            })
            .flatten();
        let ratio = local
            .filter(|l| l.result.iops > 0.0)
            .map_or(String::new(), |l| format!("{:.2}×", r.iops / l.result.iops));
        let (cpu, us, per_core) =
            t.server
                .as_ref()
                .map_or((String::new(), String::new(), String::new()), |s| {
                    (
                        format!("{:.0}", s.pct_of_core),
                        format!("{:.1}", s.us_per_read),
                        format!("{:.0}", s.iops_per_core),
                    )
                });
        let _ = writeln!(
            s,
            "| {} | {} | {} | {:.0} | {:.1} | {} | {} | {} | {ratio} | {cpu} | {us} | {per_core} |",
            format_size(c.bs),
            side_name(t),
            c.threads,
            r.iops,
            r.mb_s,
            format_ns(r.latency.p50_ns as f64),
            format_ns(r.latency.p99_ns as f64),
            format_ns(r.latency.p999_ns as f64),
        );
    }
    s
}

/// The served target of a local study target.
pub fn served_target(path: &Path, direct: bool, model: &'static str) -> Served {
    Served {
        target: Some(path.to_path_buf()),
        buffered: !direct,
        model,
        delay_us: 0,
        busy_poll_us: 0,
        netem_us: 0,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_netem_point_is_named_apart_from_a_server_delay() {
        use super::{Served, remote, side_name};
        let served = |delay_us, netem_us| Served {
            target: None,
            buffered: false,
            model: "thread",
            delay_us,
            busy_poll_us: 0,
            netem_us,
        };
        let tag = |delay_us, netem_us| {
            let p = remote(
                crate::study::StudyName::registered("delay"),
                served(delay_us, netem_us),
                4096,
                1,
                crate::config::Timing::full(),
                false,
            );
            p.point.tag.net.unwrap()
        };
        let (server, netem) = (tag(100, 0), tag(0, 100));
        assert_eq!(side_name(&server), "remote thread null +100us");
        assert_eq!(side_name(&netem), "remote thread null netem +100us");
        assert!(!server.same_point(&netem));
        assert_eq!(
            crate::result::NetTag::netem_delays([&server, &netem, &tag(0, 10)].into_iter()),
            [10, 100]
        );
    }

    #[test]
    fn a_url_tells_the_network() {
        use super::network_of;
        assert_eq!(network_of("nbd://127.0.0.1:10809/"), "loopback");
        assert_eq!(network_of("nbd://localhost/x"), "loopback");
        assert_eq!(network_of("nbd://[::1]:5000/"), "loopback");
        assert_eq!(network_of("nbd://10.0.0.7:10809/"), "tcp");
        assert_eq!(network_of("nbd://storage1/"), "tcp");
        assert_eq!(network_of("nbd+unix:///e?socket=/tmp/s"), "unix");
    }
}
