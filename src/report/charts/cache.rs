//! The cache study's charts: mean throughput of each setting (direct, buffered, buffered with
//! readahead off), then each point's monitor timeline — throughput beside device reads, CPU,
//! page cache, io_uring workers, tasks — the document's dstat and psn views in one figure.

use super::*;

fn setting(p: &Point) -> String {
    p.setting.clone().unwrap_or_else(|| "?".into())
}

/// The charts of the cache study.
pub fn charts(c: &Ctx) -> Vec<Chart> {
    let pts = c.pts.clone();
    let namer = &c.namer;
    let mut out = vec![chart(
        c.id("throughput"),
        "1 MiB io_uring reads: mean throughput of each setting".into(),
        &pts,
        Kind::Bars(bars(
            &pts,
            "setting",
            setting,
            |s| s.clone(),
            |p| {
                let n = namer.name(p, "");
                if n.is_empty() { "io_uring".into() } else { n }
            },
            Measure::one(mb_axis(), |p| p.mb_s),
        )),
    )];
    for (k, p) in pts.iter().enumerate() {
        out.extend(super::monitor::monitor_timeline(
            p,
            c.id(&format!("monitor-{}", k + 1)),
            format!(
                "{} — {} {}: throughput, device reads, CPU, page cache, io_uring workers, tasks",
                setting(p),
                p.label,
                format_size(p.bs)
            ),
        ));
    }
    out
}
