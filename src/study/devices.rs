//! The `devices` study, after the six-SSD document: the same 4 KiB and 512 KiB io_uring
//! workloads on 1, 2 … N targets at once (`readlab study devices T1 T2 … TN`), each target with
//! its own job behind one start barrier. Its summary and charts show the aggregate and each
//! target's throughput, the CPU each I/O cost, and where adding a target stops adding throughput.

use super::plan::*;
use super::{Counts, Exec, StudyObserver, StudySpec, Summary};
use crate::config::Rw;
use crate::engine::EngineKind;
use crate::error::Result;
use crate::result::{Document, StudyTag};
use crate::size::format_size;
use crate::store::Store;
use std::collections::BTreeMap;
use std::fmt::Write;

pub static SPEC: StudySpec = StudySpec {
    name: "devices",
    title: "Several devices at once",
    describe: "the same 4 KiB and 512 KiB io_uring reads on 1, 2 … N targets at once: aggregate \
               and per-target throughput, CPU per I/O, where scaling stops",
    in_all: false,
    exec: Exec::Custom(run_devices_study),
    summary: Summary::Custom(summary),
};

/// Adding a target that adds less than this share of one target's throughput ends scaling.
pub const SCALING_GAIN: f64 = 0.5;

fn run_devices_study(ctx: &Context, store: &mut Store, obs: &dyn StudyObserver) -> Result<Counts> {
    let targets = ctx.targets;
    // Verification needs every target prepared by readlab.
    let verify = ctx.verify
        && targets.iter().all(|t| {
            crate::source::Target::inspect(&t.path).is_ok_and(|x| x.prepared_id.is_some())
        });
    let mut points = Vec::new();
    for bs in ctx.sizes(&[4 * K, 512 * K], &[4 * K, 512 * K]) {
        for n in 1..=targets.len() {
            let mut c = ctx.base(EngineKind::Uring, Rw::Randread, bs);
            c.iodepth = if bs <= 4 * K { 32 } else { 8 };
            c.verify = verify;
            // Stored under the run's name: its targets' names joined.
            c.target = crate::targets::joined(&targets[..n]);
            let tag = StudyTag {
                study: SPEC.study_name(),
                scheduler: None,
                setting: Some(format!("{n} target(s)")),
                net: None,
            };
            points.push((n, Point { tag, cfg: c }));
        }
    }
    if ctx.repeat > 1 {
        obs.note(
            "devices: --repeat is not applied to runs on several targets; each point runs once",
        );
    }
    super::run_each(
        SPEC.study_name(),
        &points,
        |(_, p)| p,
        |(n, p)| crate::runner::run_targets(&p.cfg, &targets[..*n], obs),
        store,
        obs,
    )
}

/// One block size's runs by number of targets: (targets, aggregate MB/s, CPU µs per I/O,
/// per-target MB/s by name).
pub type Scaling = Vec<(usize, f64, f64, Vec<(String, f64)>)>;

/// The study's runs by block size, then by number of targets.
pub fn scaling(docs: &[&Document]) -> BTreeMap<u64, Scaling> {
    let mut out: BTreeMap<u64, Scaling> = BTreeMap::new();
    for d in docs {
        let n = d.targets.len().max(1);
        let per = d
            .targets
            .iter()
            .map(|t| (t.name.clone(), t.result.as_ref().map_or(0.0, |r| r.mb_s)))
            .collect();
        out.entry(d.config.bs)
            .or_default()
            .push((n, d.result.mb_s, d.result.cpu_us_per_io, per));
    }
    for v in out.values_mut() {
        v.sort_by_key(|r| r.0);
    }
    out
}

/// The first number of targets that added less than [`SCALING_GAIN`] of one target's
/// throughput over one target fewer (None: throughput grew with every target).
pub fn scaling_stops(runs: &Scaling) -> Option<usize> {
    let one = runs.iter().find(|r| r.0 == 1)?.1;
    runs.windows(2)
        .find(|w| w[1].0 == w[0].0 + 1 && w[1].1 - w[0].1 < SCALING_GAIN * one)
        .map(|w| w[1].0)
}

fn summary(docs: &[&Document]) -> String {
    let mut s = String::new();
    for (bs, runs) in scaling(docs) {
        let _ = writeln!(
            s,
            "\n{} random reads, io_uring, one job per target:\n\n| targets | aggregate MB/s | per target MB/s | CPU µs/IO |\n|---:|---:|---|---:|",
            format_size(bs)
        );
        for (n, mb, cpu, per) in &runs {
            let per: Vec<String> = per.iter().map(|(t, m)| format!("{t} {m:.0}")).collect();
            let _ = writeln!(s, "| {n} | {mb:.1} | {} | {cpu:.2} |", per.join(", "));
        }
        let _ = match scaling_stops(&runs) {
            Some(n) => writeln!(
                s,
                "\nScaling stops at {n} targets: going from {} to {n} added less than {:.0} % of \
                 one target's throughput.\n",
                n - 1,
                100.0 * SCALING_GAIN
            ),
            None => writeln!(
                s,
                "\nThroughput grew with every target added (up to {}).\n",
                runs.last().map_or(0, |r| r.0)
            ),
        };
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scaling_stops_where_a_target_adds_little() {
        let r = |n, mb| (n, mb, 1.0, Vec::new());
        assert_eq!(
            scaling_stops(&vec![r(1, 100.0), r(2, 190.0), r(3, 220.0)]),
            Some(3)
        );
        assert_eq!(
            scaling_stops(&vec![r(1, 100.0), r(2, 190.0), r(3, 280.0)]),
            None
        );
        assert_eq!(scaling_stops(&vec![r(2, 100.0)]), None);
    }
}
