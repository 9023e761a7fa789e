//! The cache study's charts: mean throughput of each setting (direct, buffered, buffered with
//! readahead off), then each point's monitor timeline — throughput beside device reads, CPU,
//! page cache, io_uring workers, tasks — the document's dstat and psn views in one figure — and
//! the whole-target passes' throughput against offset above the page cache and reclaim seen while
//! each stretch was read (`crate::study::cache::by_offset`).

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
            Measure::one(mb_axis(), MB_S),
        )),
    )];
    out.extend(by_offset(c));
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

/// A line of one panel, drawn as the monitor's lines are.
fn line(name: String, points: Vec<(f64, f64)>, color: usize, dashed: bool) -> LineSeries {
    super::monitor::series(&name, points, color, dashed)
}

/// The whole-target passes: throughput, page cache and reclaim against offset, one panel each.
fn by_offset(c: &Ctx) -> Option<Chart> {
    use crate::study::{CACHE_WHOLE_TARGET as WHOLE, OffsetCache, cache_by_offset as by_offset};
    let whole: Vec<&Point> = c
        .pts
        .iter()
        .filter(|p| setting(p).starts_with(WHOLE) && !p.offset_samples.is_empty())
        .copied()
        .collect();
    if whole.is_empty() {
        return None;
    }
    let x = XAxis::Numeric(Axis::linear("offset (bytes)", Unit::Bytes));
    let (mut tput, mut cache, mut reclaim) = (Vec::new(), Vec::new(), Vec::new());
    for (k, p) in whole.iter().enumerate() {
        let name = setting(p).trim_start_matches(WHOLE).to_string();
        let rows = by_offset(&p.offset_samples, p.monitor.as_deref());
        let at = |f: &dyn Fn(&OffsetCache) -> Option<f64>| {
            rows.iter()
                .filter_map(|r| Some((r.offset as f64, f(r)?)))
                .collect::<Vec<_>>()
        };
        tput.push(line(name.clone(), at(&|r| Some(r.mb_s)), k, false));
        if p.direct || p.monitor.is_none() {
            continue;
        }
        cache.push(line(
            format!("{name}: page cache (with buffers)"),
            at(&|r| r.page_cache.map(|b| b as f64)),
            k,
            false,
        ));
        cache.push(line(
            format!("{name}: memory available"),
            at(&|r| r.available.map(|b| b as f64)),
            k,
            true,
        ));
        reclaim.push(line(
            format!("{name}: reclaimed"),
            at(&|r| r.reclaim_pages_s.map(|p| p * 4096.0 / 1e6)),
            k,
            false,
        ));
        reclaim.push(line(
            format!("{name}: scanned"),
            at(&|r| r.scan_pages_s.map(|p| p * 4096.0 / 1e6)),
            k,
            true,
        ));
    }
    let panel = |y: Axis, series: Vec<LineSeries>| Lines {
        x: x.clone(),
        y,
        series,
    };
    // Direct runs at the drive's speed, buffered at the copies': a log axis shows both.
    let mut y = mb_axis();
    if whole.iter().any(|p| p.direct) && whole.iter().any(|p| !p.direct) {
        to_log(&mut y);
    }
    let mut panels = vec![panel(y, tput)];
    if !cache.is_empty() {
        panels.push(panel(Axis::linear("memory", Unit::Bytes), cache));
        panels.push(panel(
            Axis::linear("page reclaim (MB/s of 4 KiB pages)", Unit::Number),
            reclaim,
        ));
    }
    let mut ch = chart(
        c.id("offset"),
        "The whole target read once, 1 MiB blocks: throughput against offset, the page cache \
         and reclaim while each stretch was read"
            .into(),
        &whole,
        Kind::Stack(panels),
    );
    ch.height = 620;
    Some(ch)
}
