//! The `delay` study (the networked-flash document's Figure 4): 1 … 64 NBD clients with one read
//! in flight each against `readlab serve --null` (no storage) with 0, 10 and 100 µs injected per
//! read; the server's CPU per point gives IOPS per server core. Needs no target.
//!
//! It also checks the injection itself: one client at QD1 with each delay, once as usual and
//! once with client and server busy-polling their sockets, and says by how much each delay moved
//! the median. The second pair is there because on a VM an idle CPU's wake-up costs tens of
//! microseconds, and what it costs depends on how long the CPU slept, so a sleeping client and
//! server measure the delay plus a change in their own wake-ups; spinning, they measure the delay.
//!
//! With `--netem` delays (veth network only) the same points are measured again with each delay in
//! the network instead of the server: netem on the server's end of the veth pair holds back every
//! reply, the server injecting nothing; they are their own series beside the server's delays.

use super::net::{self, NetPoint, Served};
use super::plan::*;
use super::{Bare, Counts, Exec, StudyObserver, StudySpec, Summary};
use crate::engine::NbdOptions;
use crate::error::Result;
use crate::result::{Document, NetTag};
use crate::size::format_ns;
use crate::store::Store;
use std::fmt::Write as _;

/// The injected delays, µs.
const DELAYS: [u64; 3] = [0, 10, 100];

pub static SPEC: StudySpec = StudySpec {
    name: "delay",
    title: "Networked flash: injected delays on a null back end, IOPS per server core (NBD, Figure 4)",
    describe: "1 … 64 NBD clients against readlab serve --null with 0, 10, 100 us injected per \
               read (and --netem delays on the veth pair); IOPS and IOPS per server core (no \
               target needed)",
    in_all: false,
    exec: Exec::Standalone(run),
    summary: Summary::Custom(summary),
};

fn run(b: &Bare, store: &mut Store, obs: &dyn StudyObserver) -> Result<Counts> {
    let clients = if b.quick {
        vec![1, 4, 16]
    } else {
        powers_of_two(1, 64)
    };
    // Each delay, (in the server, in the network): the server's, then netem's.
    let delays: Vec<(u64, u64)> = DELAYS
        .iter()
        .map(|&d| (d, 0))
        .chain(b.netem_us.iter().map(|&n| (0, n)))
        .collect();
    // The sweep, sleeping for data as usual; then one client per delay, busy-polling.
    let sweep = delays
        .iter()
        .flat_map(|&d| clients.iter().map(move |&n| (d, n, 0)));
    let polled = delays.iter().map(|&d| (d, 1, NbdOptions::BUSY_POLL_US));
    let points: Vec<NetPoint> = sweep
        .chain(polled)
        .map(|((delay_us, netem_us), n, busy_poll_us)| {
            let served = Served {
                target: None,
                buffered: false,
                model: "thread",
                delay_us,
                busy_poll_us,
                netem_us,
            };
            net::remote(SPEC.study_name(), served, 4 * K, n, b.timing, false)
        })
        .collect();
    net::run_net_points(SPEC.study_name(), b.network, &points, store, obs)
}

/// The networked summary, then what each injected delay (the server's, then netem's) added to the
/// QD1 median.
fn summary(docs: &[&Document]) -> String {
    let mut s = net::summary(docs);
    let tags = || docs.iter().filter_map(|d| d.study.as_ref()?.net.as_ref());
    let netem = NetTag::netem_delays(tags());
    let p50 = |(delay, netem): (u64, u64), poll: bool| {
        docs.iter().find_map(|d| {
            let t = d.study.as_ref()?.net.as_ref()?;
            (t.side == "remote"
                && t.backend == "null"
                && d.config.threads == 1
                && t.delay_us == delay
                && t.netem_us == netem
                && (t.busy_poll_us > 0) == poll)
                .then_some(d.result.latency.p50_ns as f64)
        })
    };
    let added_delays: Vec<((u64, u64), String)> = DELAYS[1..]
        .iter()
        .map(|&d| ((d, 0), format!("{d} us")))
        .chain(netem.iter().map(|&n| ((0, n), format!("netem {n} us"))))
        .collect();
    let mut lines = Vec::new();
    for (poll, how) in [
        (false, "client and server sleeping for data"),
        (true, "client and server busy-polling"),
    ] {
        let Some(base) = p50((0, 0), poll) else {
            continue;
        };
        let added: Vec<String> = added_delays
            .iter()
            .filter_map(|(d, name)| {
                p50(*d, poll).map(|v| {
                    let sign = if v < base { "−" } else { "+" };
                    format!("{name} → {sign}{}", format_ns((v - base).abs()))
                })
            })
            .collect();
        if !added.is_empty() {
            lines.push(format!(
                "- {how}: QD1 p50 {} with no delay; {}",
                format_ns(base),
                added.join(", ")
            ));
        }
    }
    if !lines.is_empty() {
        let _ = writeln!(
            s,
            "\nInjected delay as one client sees it (QD1 median minus the no-delay median):\n{}\n\n\
             Sleeping, the figures include a change in the cost of waking an idle CPU (tens of \
             microseconds on a VM, more the longer it slept); busy-polling, they are the delay.",
            lines.join("\n")
        );
        if !netem.is_empty() {
            let _ = writeln!(
                s,
                "\nA `netem N us` delay is in the network, not in the server: netem on the \
                 server's end of the veth pair held back each reply by N us, the server \
                 injecting nothing (rows `netem +N us`)."
            );
        }
    }
    s
}
