//! What the networked studies (`clients`, `delay`, `latency-breakdown`, `server-model`) share:
//! a `readlab serve` server started for each remote point as a child process of this executable
//! (so its CPU is its own, not the client's), read by readlab's nbd engine over the study's
//! network (the server in one network namespace and the clients in another, joined by a veth
//! pair, when root; else loopback), stopped by PID with SIGTERM, its JSON summary giving the server's CPU stored in the point's tag; local
//! points read the same device directly at the same concurrency; a summary table of both.

use super::{Counts, Point, StudyName, StudyObserver};
use crate::config::{RunConfig, Rw, Timing};
use crate::engine::EngineKind;
use crate::error::{Error, Result};
use crate::netns::{Network, VethPair};
use crate::result::{Document, NetTag, ServerCpu, StudyTag};
use crate::runner;
use crate::serve::ServeSummary;
use crate::size::{format_ns, format_size};
use crate::store::Store;
use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Size of the null back end's export.
pub const NULL_SIZE: u64 = 1 << 30;

/// What a remote point's server serves and how.
#[derive(Debug, Clone)]
pub struct Served {
    /// A file or device, or None for zeros (`--null`).
    pub target: Option<PathBuf>,
    /// Read the target through the page cache (it takes no O_DIRECT).
    pub buffered: bool,
    pub model: &'static str,
    pub delay_us: u64,
    /// Server and client spin on their sockets for up to this many µs before sleeping.
    pub busy_poll_us: u32,
}

/// One point of a networked study: local (no server) or remote (a server started for it).
#[derive(Debug, Clone)]
pub struct NetPoint {
    pub point: Point,
    pub served: Option<Served>,
}

/// A local point: the device read by `threads` psync threads, one read in flight each.
pub fn local(name: StudyName, cfg: RunConfig) -> NetPoint {
    NetPoint {
        point: Point {
            tag: StudyTag {
                study: name,
                scheduler: None,
                setting: None,
                net: Some(NetTag {
                    side: "local".into(),
                    network: "none".into(),
                    model: String::new(),
                    backend: "target".into(),
                    delay_us: 0,
                    busy_poll_us: 0,
                    server: None,
                    ranks: None,
                }),
            },
            cfg,
        },
        served: None,
    }
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
    cfg.options.nbd.busy_poll_us = served.busy_poll_us;
    NetPoint {
        point: Point {
            tag: StudyTag {
                study: name,
                scheduler: None,
                setting: None,
                net: Some(NetTag {
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
                    server: None,
                    ranks: None,
                }),
            },
            cfg,
        },
        served: Some(served),
    }
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
/// and stopped around each remote one.
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

/// A `readlab serve` child process; killed if dropped without [`ServerProcess::stop`].
pub struct ServerProcess {
    child: Child,
    json: PathBuf,
    pub url: String,
}

/// How long a server may take to print its address, and to stop.
const START_TIMEOUT: Duration = Duration::from_secs(10);
const STOP_TIMEOUT: Duration = Duration::from_secs(10);

impl ServerProcess {
    /// Start `readlab serve` on port 0 and wait for the address it prints: on 127.0.0.1, or
    /// inside the pair's server namespace (`ip netns exec`), its URL then connecting from inside
    /// the client namespace.
    pub fn start(s: &Served, pair: Option<&VethPair>) -> Result<ServerProcess> {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let exe = std::env::current_exe()
            .map_err(|e| Error::invalid(format!("cannot find readlab's own executable: {e}")))?;
        let json = std::env::temp_dir().join(format!(
            "readlab-serve-{}-{}.json",
            std::process::id(),
            NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        let mut cmd = match pair {
            Some(p) => {
                // `ip netns exec` execs readlab in place: the child's PID is the server's.
                let mut c = Command::new("ip");
                c.args(["netns", "exec", &p.server]).arg(&exe);
                c
            }
            None => Command::new(&exe),
        };
        let listen = match pair {
            Some(_) => format!("{}:0", crate::netns::SERVER_ADDR),
            None => "127.0.0.1:0".into(),
        };
        cmd.arg("serve");
        match &s.target {
            Some(t) => {
                cmd.arg(t);
                if s.buffered {
                    cmd.arg("--buffered");
                }
            }
            None => {
                cmd.arg("--null").arg(NULL_SIZE.to_string());
            }
        }
        cmd.args(["--listen", &listen, "--model", s.model, "-q"])
            .arg("--delay")
            .arg(format!("{}us", s.delay_us))
            .arg("--json")
            .arg(&json);
        if s.busy_poll_us > 0 {
            cmd.arg(format!("--busy-poll={}us", s.busy_poll_us));
        }
        if s.model == "uring" {
            cmd.arg("--threads").arg(crate::env::cpus().to_string());
        }
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| Error::io(&exe, "cannot start readlab serve", e))?;
        let stdout = child.stdout.take().expect("stdout is piped");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            let mut line = String::new();
            let _ = r.read_line(&mut line);
            let _ = tx.send(line);
            // Keep reading so the server never blocks on a full pipe.
            let _ = std::io::copy(&mut r, &mut std::io::sink());
        });
        let mut srv = ServerProcess {
            child,
            json,
            url: String::new(),
        };
        let line = rx.recv_timeout(START_TIMEOUT).unwrap_or_default();
        match address_of(&line) {
            Some(a) => {
                srv.url = match pair {
                    Some(p) => format!("nbd://{a}/?netns={}", p.client),
                    None => format!("nbd://{a}/"),
                };
                Ok(srv)
            }
            None => {
                srv.kill();
                let mut err = String::new();
                if let Some(mut e) = srv.child.stderr.take() {
                    let _ = e.read_to_string(&mut err);
                }
                Err(Error::invalid(format!(
                    "readlab serve did not start: {}",
                    err.trim().lines().last().unwrap_or("no address printed")
                )))
            }
        }
    }

    /// Stop it with SIGTERM (SIGKILL if it lingers) and read its summary.
    pub fn stop(mut self) -> Result<ServeSummary> {
        let pid = rustix::process::Pid::from_child(&self.child);
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
        let end = Instant::now() + STOP_TIMEOUT;
        loop {
            match self.child.try_wait() {
                Ok(Some(_)) => break,
                Ok(None) if Instant::now() < end => std::thread::sleep(Duration::from_millis(5)),
                _ => {
                    self.kill();
                    return Err(Error::invalid("readlab serve did not stop on SIGTERM"));
                }
            }
        }
        let text = std::fs::read_to_string(&self.json)
            .map_err(|e| Error::io(&self.json, "cannot read the server's summary", e))?;
        serde_json::from_str(&text)
            .map_err(|e| Error::invalid(format!("the server's summary is not readable: {e}")))
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            self.kill();
        }
        let _ = std::fs::remove_file(&self.json);
    }
}

/// The address in `readlab serve: listening on ADDR — …`.
fn address_of(line: &str) -> Option<&str> {
    let rest = line.split("listening on ").nth(1)?;
    rest.split_whitespace().next().filter(|a| a.contains(':'))
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
    }
}

#[cfg(test)]
mod tests {
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

    #[test]
    fn finds_the_printed_address() {
        let l = "readlab serve: listening on 127.0.0.1:40123 — export '', 1 B, read-only\n";
        assert_eq!(super::address_of(l), Some("127.0.0.1:40123"));
        assert_eq!(super::address_of("error: no\n"), None);
        assert_eq!(super::address_of(""), None);
    }
}
