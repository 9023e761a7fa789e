//! The `scan` study: the whole target read sequentially in 1 MiB blocks, buffered and direct:
//! bandwidth against offset (§5.1).

use super::plan::*;
use super::{Exec, StudySpec, Summary};
use crate::config::{RunConfig, Rw};
use crate::engine::EngineKind;
use crate::result::Document;
use crate::size::format_size;
use std::fmt::Write;
use std::time::Duration;

pub static SPEC: StudySpec = StudySpec {
    name: "scan",
    title: "Whole-target read (§5.1)",
    describe: "the whole target read sequentially in 1 MiB blocks, buffered and direct: bandwidth against offset (§5.1)",
    in_all: true,
    exec: Exec::Plan(plan),
    summary: Summary::Custom(scan_table),
};

fn plan(ctx: &Context, _docs: &[Document]) -> Vec<RunConfig> {
    let mut directs = vec![false];
    if ctx.target.direct_supported {
        directs.insert(0, true);
    }
    let mut points = Vec::new();
    for direct in directs {
        let mut c = ctx.base(EngineKind::Psync, Rw::Read, M);
        c.direct = direct;
        c.ramp = Duration::ZERO;
        c.stop_when_stable = None;
        c.io_limit = Some(ctx.target.size / M * M);
        // Bandwidth against offset from 256 stretches of the target (at least 1 MiB each), not
        // once per second: a fast target read in seconds still draws a curve.
        c.sample_bytes = Some((ctx.target.size / 256 / M).max(1) * M);
        c.fadvise = Some(crate::config::Fadvise::Sequential);
        c.runtime = if ctx.quick {
            Duration::from_secs(20)
        } else {
            Duration::from_secs(24 * 3600)
        };
        points.push(c);
    }
    points
}

/// Bandwidth against offset for each scan, from the per-second timeline.
fn scan_table(docs: &[&Document]) -> String {
    let mut s = String::new();
    for d in docs {
        let mode = if d.config.direct {
            "direct"
        } else {
            "buffered"
        };
        let _ = writeln!(
            s,
            "**{mode}**: {:.1} MB/s over {} in {:.1} s ({})\n",
            d.result.mb_s,
            format_size(d.result.bytes),
            d.result.seconds,
            d.result.ended_by
        );
        let _ = writeln!(s, "| offset | MB/s |\n|---:|---:|");
        let mut offset = d.config.offset;
        for p in &d.result.timeline {
            let _ = writeln!(
                s,
                "| {} | {:.1} |",
                format_size(offset / (1 << 20) * (1 << 20)),
                p.mib_s * 1.048_576
            );
            offset += p.ios * d.config.bs;
        }
        let _ = writeln!(s);
    }
    s
}
