//! The networked studies' charts (the networked-flash document's figures): IOPS and bandwidth
//! against clients with the equivalent local line (Figures 1–2), IOPS and IOPS per server core
//! with injected delays (Figure 4), the QD1 latency breakdown (Table 3) and the server models.

use super::*;
use crate::result::NetTag;

/// How a remote point's client reached its server, in words.
fn network_words(network: &str) -> &str {
    match network {
        "loopback" => "loopback",
        "netns-veth" => "veth between network namespaces",
        other => other,
    }
}

/// A chart whose title says over which network(s) its remote points ran, and whose caption names
/// the servers once: every remote point of a server readlab started has its own port (a server
/// given by URL keeps its address).
fn chart(id: String, title: String, pts: &[&Point], kind: Kind) -> Chart {
    let mut networks: Vec<&str> = pts
        .iter()
        .filter_map(|p| net(p))
        .filter(|t| t.side == "remote")
        .map(|t| network_words(&t.network))
        .collect();
    networks.sort_unstable();
    networks.dedup();
    let title = if networks.is_empty() {
        title
    } else {
        format!("{title} — over {}", networks.join(" and "))
    };
    let shown: Vec<Point> = pts
        .iter()
        .map(|p| {
            let mut q = (*p).clone();
            if q.env.target.starts_with("nbd://") && !given(p) {
                q.env.target = match net(p).map(|t| t.network.as_str()) {
                    Some("netns-veth") => {
                        "readlab serve in a network namespace, read from another \
                                           over a veth pair (a server per point)"
                            .into()
                    }
                    _ => "readlab serve at nbd://127.0.0.1:* (a server per point)".into(),
                };
            }
            q
        })
        .collect();
    super::chart(id, title, &shown.iter().collect::<Vec<_>>(), kind)
}

fn net(p: &Point) -> Option<&NetTag> {
    p.net.as_ref()
}

/// A point read from a server given by URL (not started, nor measured, by readlab).
fn given(p: &Point) -> bool {
    net(p).is_some_and(|t| t.backend == "export")
}

/// What a title says of how the points' clients ran: spread over MPI ranks, against a server
/// given by URL (no server CPU, no local line); empty for the study's own servers.
fn how_run(pts: &[&Point]) -> String {
    let mut s = String::new();
    if let Some(r) = pts.iter().filter_map(|p| net(p)?.ranks).max() {
        s.push_str(&format!(", the clients spread over {r} MPI ranks"));
    }
    if pts.iter().any(|p| given(p)) {
        s.push_str(" (a server given by URL: no server CPU measured)");
    }
    s
}

/// Whether the points hold the device read locally (the equivalent local line).
fn with_local(pts: &[&Point]) -> bool {
    pts.iter()
        .any(|p| net(p).is_some_and(|t| t.side == "local"))
}

/// `remote 4 KiB`, `local 4 KiB (equivalent local)`, `remote uring`, `+10us` …
fn side(p: &Point, with_bs: bool) -> String {
    let Some(t) = net(p) else {
        return p.label.clone();
    };
    let mut s = if t.side == "local" || t.model.is_empty() {
        t.side.clone()
    } else {
        format!("{} {}", t.side, t.model)
    };
    if with_bs {
        s.push(' ');
        s.push_str(&format_size(p.bs));
    }
    if t.side == "local" {
        s.push_str(" (equivalent local)");
    }
    if let Some(r) = t.ranks {
        s.push_str(&format!(" (over {r} ranks)"));
    }
    s
}

fn iops_axis() -> Axis {
    Axis::linear("IOPS", Unit::Count)
}

/// Lines against clients; with `by_bs` (series of one block size each) in the block sizes'
/// colours and markers.
fn clients_lines(
    pts: &[&Point],
    series: impl Fn(&Point) -> String,
    y: Axis,
    value: Fig,
    by_bs: bool,
) -> Lines {
    let mut l = lines_over(
        pts,
        "clients (one request in flight each)",
        |p| p.threads,
        |t: &usize| t.to_string(),
        series,
        y,
        value,
        by_bs,
    );
    for s in &mut l.series {
        s.dashed = s.name.starts_with("local");
    }
    l
}

fn server_pct(p: &Point) -> f64 {
    net(p)
        .and_then(|t| t.server.as_ref())
        .map_or(0.0, |s| s.pct_of_core)
}

fn per_core(p: &Point) -> f64 {
    net(p)
        .and_then(|t| t.server.as_ref())
        .map_or(0.0, |s| s.iops_per_core)
}

fn has_server(p: &&Point) -> bool {
    net(p).is_some_and(|t| t.server.is_some())
}

/// The charts of `clients`.
pub fn clients(c: &Ctx) -> Vec<Chart> {
    let id = |what: &str| c.id(what);
    let mut out = Vec::new();
    let small: Vec<&Point> = c.pts.iter().copied().filter(|p| p.bs < 64 << 10).collect();
    let big: Vec<&Point> = c.pts.iter().copied().filter(|p| p.bs >= 64 << 10).collect();
    let beside = if with_local(&c.pts) {
        ", beside the device read locally at the same concurrency"
    } else {
        ""
    };
    let how = how_run(&c.pts);
    if !small.is_empty() {
        let l = clients_lines(&small, |p| side(p, true), iops_axis(), IOPS, true);
        out.push(chart(
            id("iops"),
            title_with_knees(
                &format!("IOPS against clients over NBD{beside}{how}"),
                &l,
                "IOPS",
                &count_of("client"),
            ),
            &small,
            Kind::Lines(l),
        ));
    }
    if !big.is_empty() {
        let l = clients_lines(&big, |p| side(p, true), mb_axis(), MB_S, true);
        out.push(chart(
            id("bandwidth"),
            title_with_knees(
                &format!("Bandwidth against clients over NBD{beside}{how}"),
                &l,
                "bandwidth",
                &count_of("client"),
            ),
            &big,
            Kind::Lines(l),
        ));
    }
    out.push(chart(
        id("p99"),
        if with_local(&c.pts) {
            "p99 latency against clients, remote and local".to_string()
        } else {
            format!("p99 latency against clients{how}")
        },
        &c.pts,
        Kind::Lines(clients_lines(
            &c.pts,
            |p| side(p, true),
            Axis::log("p99 latency (log scale)", Unit::Ns),
            P99,
            true,
        )),
    ));
    let remote: Vec<&Point> = c.pts.iter().copied().filter(has_server).collect();
    if !remote.is_empty() {
        out.push(chart(
            id("server-cpu"),
            "Server CPU against clients (the server's own accounting)".into(),
            &remote,
            Kind::Lines(clients_lines(
                &remote,
                |p| side(p, true),
                cpu_axis(),
                Fig::plain("server CPU", Reads::Pct, server_pct),
                true,
            )),
        ));
    }
    out
}

/// `+10 µs` (injected by the server), `netem +100 µs` (made by netem in the network).
fn delay_name(p: &Point) -> String {
    net(p).map_or_else(
        || p.label.clone(),
        |t| {
            if t.netem_us > 0 {
                format!("netem +{} µs", t.netem_us)
            } else {
                format!("+{} µs", t.delay_us)
            }
        },
    )
}

/// The charts of `delay`: the sweep (points that slept for data, as usual), then what each
/// delay (the server's, then netem's in the network) added to one client's QD1 median, sleeping
/// and busy-polling.
pub fn delay(c: &Ctx) -> Vec<Chart> {
    let id = |what: &str| c.id(what);
    let polled = |p: &&Point| net(p).is_some_and(|t| t.busy_poll_us > 0);
    let netem = NetTag::netem_delays(c.pts.iter().filter_map(|p| net(p)));
    let which = if netem.is_empty() {
        "per injected delay"
    } else {
        "per delay: the server's injected delay (+N µs) and netem's on the veth (netem +N µs)"
    };
    let sweep: Vec<&Point> = c.pts.iter().copied().filter(|p| !polled(p)).collect();
    let mut out = vec![chart(
        id("iops"),
        format!("IOPS against clients on the null back end, {which}"),
        &sweep,
        Kind::Lines(clients_lines(&sweep, delay_name, iops_axis(), IOPS, false)),
    )];
    let remote: Vec<&Point> = sweep.iter().copied().filter(has_server).collect();
    if !remote.is_empty() {
        out.push(chart(
            id("per-core"),
            format!("IOPS per server core against clients, {which}"),
            &remote,
            Kind::Lines(clients_lines(
                &remote,
                delay_name,
                Axis::linear("IOPS per server core", Unit::Count),
                Fig::plain("IOPS per server core", Reads::Amount, per_core),
                false,
            )),
        ));
    }
    let qd1 = |(delay, netem): (u64, u64), poll: bool| {
        c.pts.iter().find(|p| {
            p.threads == 1
                && polled(p) == poll
                && net(p).is_some_and(|t| t.delay_us == delay && t.netem_us == netem)
        })
    };
    // (in the server, in the network), µs
    let delays: Vec<(u64, u64)> = [(10, 0), (100, 0)]
        .into_iter()
        .chain(netem.iter().map(|&n| (0, n)))
        .collect();
    let series: Vec<BarSeries> = [(false, "sleeping for data"), (true, "busy-polling")]
        .into_iter()
        .filter_map(|(poll, name)| {
            let base = qd1((0, 0), poll)?.latency.p50_ns as f64;
            Some(BarSeries {
                name: name.into(),
                fio: false,
                marks: Vec::new(),
                values: delays
                    .iter()
                    .map(|&d| Some(vec![(qd1(d, poll)?.latency.p50_ns as f64 - base).max(0.0)]))
                    .collect(),
            })
        })
        .collect();
    if series.iter().any(|s| s.values.iter().any(Option::is_some)) {
        let pts: Vec<&Point> = c.pts.iter().copied().filter(|p| p.threads == 1).collect();
        out.push(chart(
            id("added"),
            format!(
                "What each {} added to one client's QD1 median (p50 − the no-delay p50)",
                if netem.is_empty() {
                    "injected delay".to_string()
                } else {
                    let list = |v: Vec<String>| v.join(", ");
                    format!(
                        "delay — the server's {}; netem's {} on the veth —",
                        list(delays[..2].iter().map(|d| format!("+{} µs", d.0)).collect()),
                        list(netem.iter().map(|n| format!("+{n} µs")).collect())
                    )
                }
            ),
            &pts,
            Kind::Bars(Bars {
                x_desc: "injected delay".into(),
                categories: delays
                    .iter()
                    .map(|&(d, n)| {
                        if n > 0 {
                            format!("netem {n} µs")
                        } else {
                            format!("{d} µs")
                        }
                    })
                    .collect(),
                y: Axis::linear("added latency", Unit::Ns),
                layers: vec!["p50".into()],
                series,
            }),
        ));
    }
    out
}

/// The charts of `server-model`.
pub fn server_model(c: &Ctx) -> Vec<Chart> {
    let id = |what: &str| c.id(what);
    let name = |p: &Point| side(p, false);
    let mut out = vec![
        chart(
            id("iops"),
            "IOPS against clients: thread and io_uring server models".into(),
            &c.pts,
            Kind::Lines(clients_lines(&c.pts, name, iops_axis(), IOPS, false)),
        ),
        chart(
            id("p99"),
            "p99 latency against clients: thread and io_uring server models".into(),
            &c.pts,
            Kind::Lines(clients_lines(
                &c.pts,
                name,
                Axis::log("p99 latency (log scale)", Unit::Ns),
                P99,
                false,
            )),
        ),
    ];
    let remote: Vec<&Point> = c.pts.iter().copied().filter(has_server).collect();
    if !remote.is_empty() {
        out.push(chart(
            id("per-core"),
            "IOPS per server core against clients: thread and io_uring server models".into(),
            &remote,
            Kind::Lines(clients_lines(
                &remote,
                name,
                Axis::linear("IOPS per server core", Unit::Count),
                Fig::plain("IOPS per server core", Reads::Amount, per_core),
                false,
            )),
        ));
    }
    out
}

/// Which part of the breakdown a point is.
fn part(p: &Point) -> Option<&'static str> {
    let t = net(p)?;
    Some(match (t.side.as_str(), t.backend.as_str()) {
        ("local", _) => "local device",
        (_, "null") => "network + server (null)",
        _ => "remote device",
    })
}

/// The charts of `latency-breakdown`: mean and p50 per part and block size, and remote − local.
pub fn latency_breakdown(c: &Ctx) -> Vec<Chart> {
    let (keys, names) = categories(&c.pts, |p| p.bs, bs_name);
    let find = |bs: u64, which: &str| {
        c.pts
            .iter()
            .find(|p| p.bs == bs && part(p) == Some(which))
            .map(|p| &p.latency)
    };
    let layers = |l: &crate::stats::LatencySummary| vec![l.p50_ns as f64, l.mean_ns];
    let mut series: Vec<BarSeries> = ["local device", "network + server (null)", "remote device"]
        .iter()
        .map(|which| BarSeries {
            name: which.to_string(),
            fio: false,
            marks: Vec::new(),
            values: keys.iter().map(|&bs| find(bs, which).map(layers)).collect(),
        })
        .collect();
    series.push(BarSeries {
        name: "remote − local".into(),
        fio: false,
        marks: Vec::new(),
        values: keys
            .iter()
            .map(|&bs| {
                let (l, r) = (find(bs, "local device")?, find(bs, "remote device")?);
                Some(vec![
                    (r.p50_ns as f64 - l.p50_ns as f64).max(0.0),
                    (r.mean_ns - l.mean_ns).max(0.0),
                ])
            })
            .collect(),
    });
    vec![chart(
        c.id("bars"),
        "QD1 latency: local, network + server on a null back end, remote, and remote − local (p50, avg)"
            .into(),
        &c.pts,
        Kind::Bars(Bars {
            x_desc: "block size".into(),
            categories: names,
            y: Axis::linear("latency", Unit::Ns),
            layers: vec!["p50".into(), "avg".into()],
            series,
        }),
    )]
}
