//! The monitor's samples drawn on a run's timeline, one panel each, as the reference document
//! reads dstat and psn beside fio: throughput (the run's and its devices'), CPU user/system/iowait,
//! page cache and dirty pages, the process's threads by kind (io_uring workers among them), and
//! runnable and blocked tasks.

use super::*;
use crate::monitor::{Kind as ThreadKind, MonitorRecord, Sample};

pub(super) fn series(
    name: &str,
    points: Vec<(f64, f64)>,
    color: usize,
    dashed: bool,
) -> LineSeries {
    LineSeries {
        name: name.into(),
        points: thin(&points, MAX_LINE_POINTS),
        color,
        dashed,
        marker: None,
        fio: false,
        step: false,
        labels: Vec::new(),
        marks: Vec::new(),
    }
}

/// The samples of the measured window (the ramp left out).
fn measured(rec: &MonitorRecord) -> Vec<&Sample> {
    rec.samples.iter().filter(|s| s.t_s > 0.0).collect()
}

fn over(samples: &[&Sample], f: impl Fn(&Sample) -> f64) -> Vec<(f64, f64)> {
    samples.iter().map(|s| (s.t_s, f(s))).collect()
}

fn kind(s: &Sample, k: ThreadKind, f: impl Fn(&crate::monitor::threads::KindCount) -> f64) -> f64 {
    s.kind(k).map_or(0.0, f)
}

/// The monitor panels of point `p` (None when it has no monitor samples in its window).
pub fn monitor_timeline(p: &Point, id: String, title: String) -> Option<Chart> {
    let rec = p.monitor.as_ref()?;
    let samples = measured(rec);
    if samples.is_empty() {
        return None;
    }
    let x = XAxis::Numeric(Axis {
        desc: "time since measuring began (s)".into(),
        scale: Scale::Linear,
        unit: Unit::Seconds,
        from_zero: true,
    });
    let panel = |y: Axis, series: Vec<LineSeries>| Lines {
        x: x.clone(),
        y,
        series,
    };
    let tput = throughput(p, rec, &samples);
    let cpu = vec![
        series("user", over(&samples, |s| s.machine.usr_pct), 0, false),
        series("system", over(&samples, |s| s.machine.sys_pct), 1, false),
        series("iowait", over(&samples, |s| s.machine.iowait_pct), 2, true),
    ];
    let mem = memory(&samples);
    let threads = threads(&samples);
    let tasks = vec![
        series(
            "runnable",
            over(&samples, |s| s.machine.running as f64),
            0,
            false,
        ),
        series(
            "blocked",
            over(&samples, |s| s.machine.blocked as f64),
            1,
            true,
        ),
    ];
    let mut c = chart(
        id,
        title,
        &[p],
        Kind::Stack(vec![
            panel(Axis::linear("throughput (MB/s)", Unit::Number), tput),
            panel(Axis::linear("CPU (% of all CPUs)", Unit::Pct), cpu),
            panel(Axis::linear("memory", Unit::Bytes), mem),
            panel(
                Axis::linear("threads (mean per sample)", Unit::Number),
                threads,
            ),
            panel(Axis::linear("tasks (machine)", Unit::Number), tasks),
        ]),
    );
    c.height = 900;
    c.caption = format!(
        "{}; monitor: {} samples, its sampler {:.2} % of a core.",
        c.caption.trim_end_matches('.'),
        rec.samples.len(),
        rec.sampler_cpu_pct
    );
    Some(c)
}

/// The monitor chart of the run the all-experiments timeline shows (or else of the first run
/// that had the monitor).
pub fn run_monitor(report: &Report) -> Option<Chart> {
    let i = report
        .timeline_point()
        .filter(|&i| report.points[i].monitor.is_some())
        .or_else(|| report.points.iter().position(|p| p.monitor.is_some()))?;
    let p = &report.points[i];
    monitor_timeline(
        p,
        "all-monitor".into(),
        format!(
            "What the monitor saw during {} {} {}: devices, CPU, page cache, threads, tasks",
            report.display_label(i),
            p.access(),
            format_size(p.bs)
        ),
    )
}

/// The run's throughput and each watched device's reads (MB/s).
fn throughput(p: &Point, rec: &MonitorRecord, samples: &[&Sample]) -> Vec<LineSeries> {
    let mut tput = vec![series(
        "run",
        p.timeline
            .iter()
            .map(|t| (t.t_s, t.mib_s * 1.048_576))
            .collect(),
        0,
        false,
    )];
    for (i, name) in rec.options.devices.iter().enumerate() {
        tput.push(series(
            &format!("device {name}"),
            over(samples, |s| s.device(name).map_or(0.0, |d| d.read_mb_s)),
            i + 1,
            true,
        ));
    }
    tput
}

/// The page cache (with and without block devices' buffers) and dirty pages (bytes).
fn memory(samples: &[&Sample]) -> Vec<LineSeries> {
    vec![
        series(
            "page cache",
            over(samples, |s| s.machine.page_cache_kib as f64 * 1024.0),
            0,
            false,
        ),
        series(
            "dirty",
            over(samples, |s| s.machine.dirty_kib as f64 * 1024.0),
            1,
            true,
        ),
        series(
            "page cache with buffers (block devices)",
            over(samples, |s| s.machine.file_cache_bytes() as f64),
            2,
            true,
        ),
    ]
}

/// The process's threads by kind: the app's busy, io_uring's workers, the kernel's.
fn threads(samples: &[&Sample]) -> Vec<LineSeries> {
    vec![
        series(
            "app on CPU or in disk wait",
            over(samples, |s| {
                kind(s, ThreadKind::App, |k| k.running + k.disk)
            }),
            0,
            false,
        ),
        series(
            "iou-wrk workers",
            over(samples, |s| kind(s, ThreadKind::IouWrk, |k| k.threads)),
            1,
            false,
        ),
        series(
            "iou-wrk in disk wait",
            over(samples, |s| kind(s, ThreadKind::IouWrk, |k| k.disk)),
            2,
            true,
        ),
        series(
            "kernel threads active",
            over(samples, |s| kind(s, ThreadKind::Other, |k| k.threads)),
            3,
            true,
        ),
    ]
}
