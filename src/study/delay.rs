//! The `delay` study (the networked-flash document's Figure 4): 1 … 64 NBD clients with one read
//! in flight each against `readlab serve --null` (no storage) with 0, 10 and 100 µs injected per
//! read; the server's CPU per point gives IOPS per server core. Needs no target.

use super::net::{self, NetPoint, Served};
use super::plan::*;
use super::{Bare, Counts, Exec, StudyObserver, StudySpec, Summary};
use crate::error::Result;
use crate::store::Store;

pub static SPEC: StudySpec = StudySpec {
    name: "delay",
    title: "Networked flash: injected delays on a null back end, IOPS per server core (NBD, Figure 4)",
    describe: "1 … 64 NBD clients against readlab serve --null with 0, 10, 100 us injected per \
               read; IOPS and IOPS per server core (no target needed)",
    in_all: false,
    exec: Exec::Standalone(run),
    summary: Summary::Custom(net::summary),
    fio_fits: |_| false,
    charts: crate::report::charts::net::delay,
};

fn run(b: &Bare, store: &mut Store, obs: &dyn StudyObserver) -> Result<Counts> {
    let clients = if b.quick {
        vec![1, 4, 16]
    } else {
        powers_of_two(1, 64)
    };
    let mut points: Vec<NetPoint> = Vec::new();
    for delay_us in [0, 10, 100] {
        for &n in &clients {
            let served = Served {
                target: None,
                buffered: false,
                model: "thread",
                delay_us,
            };
            points.push(net::remote(
                SPEC.study_name(),
                served,
                4 * K,
                n,
                b.timing,
                false,
            ));
        }
    }
    net::run_net_points(SPEC.study_name(), b.network, &points, store, obs)
}
