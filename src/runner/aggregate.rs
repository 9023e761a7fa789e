//! The workers' outputs merged into one [`RunResult`]: latency per request from the per-second
//! intervals (which also make the timeline), errors and mismatches in offset order, service and
//! hand-off times, open-loop figures, CPU per I/O and the clock's own cost, and how precise the
//! headline figures are (`super::windows`).

use super::Ended;
use super::checks::{self, KEEP_FIRST};
use super::schedule::OpenLoopStats;
use super::think::ThinkStats;
use super::worker::WorkerOut;
use crate::config::RunConfig;
use crate::error::Result;
use crate::result::{
    ErrorSummary, OpenLoopSummary, RunResult, SizeFigures, ThinkSummary, TimerInfo, VerifySummary,
};
use crate::stats::{self, Recorder, TimelinePoint};
use std::collections::BTreeMap;

/// Open-loop figures summed over workers.
#[derive(Default)]
struct OpenLoopTotals {
    delay: Recorder,
    late: u64,
    /// Sum of each worker's largest backlog, in requests.
    max_backlog: f64,
    final_backlog: f64,
}

impl OpenLoopTotals {
    fn add(&mut self, ol: &OpenLoopStats) {
        self.delay.merge(&ol.delay);
        self.late += ol.late;
        self.max_backlog += ol.max_lag.as_nanos() as f64 * ol.per_thread_rate / 1e9;
        self.final_backlog += ol.final_backlog;
    }
}

/// Each stretch of the target read, in offset order: its throughput from the time between the
/// last read of the stretch before it (the window's start for the first) and its own last read.
fn offset_samples(
    cfg: &RunConfig,
    stretches: &BTreeMap<u64, (u64, u64)>,
) -> Vec<crate::stats::OffsetSample> {
    let Some(every) = cfg.sample_bytes else {
        return Vec::new();
    };
    let mut prev = 0u64;
    stretches
        .iter()
        .map(|(&k, &(bytes, last))| {
            let ns = last.saturating_sub(prev).max(1);
            prev = prev.max(last);
            crate::stats::OffsetSample {
                offset: cfg.offset + k * every,
                bytes,
                t_s: last as f64 / 1e9,
                mb_s: bytes as f64 / ns as f64 * 1e3,
            }
        })
        .collect()
}

/// Merge what the workers handed back (the first worker's error, if any, is the run's) with the
/// window's intervals, CPU and ending into the run's figures.
pub(super) fn result(
    cfg: &RunConfig,
    outs: Vec<Result<WorkerOut>>,
    intervals: &BTreeMap<u64, Recorder>,
    ended: Ended,
    timer_ns: f64,
    mut warnings: Vec<String>,
) -> Result<RunResult> {
    let last_done = outs.iter().filter_map(|o| o.as_ref().ok()?.last_done).max();
    let window = ended.window_until(last_done);
    let until = ended
        .ramp_end
        .checked_add(std::time::Duration::from_secs_f64(window.max(0.0)))
        .unwrap_or(ended.ramp_end);
    let Ended {
        cpu,
        ended_by,
        samples,
        ..
    } = ended;
    let Merged {
        errors,
        verify,
        service,
        handoff,
        features,
        clock_reads,
        ios_all,
        open,
        depth_area,
        stretches,
        by_size,
        think,
    } = Merged::of(outs)?;
    let mut lat = Recorder::default();
    let bpr = cfg.blocks_per_request as u64;
    let timeline = timeline(intervals, window, bpr, &mut lat);

    let offset_samples = offset_samples(cfg, &stretches);
    let secs = window.max(1e-9);
    let total_cpu = cpu.process_total_s();
    let requests = lat.count;
    let ios = requests * bpr;
    let reads_per_io = if ios > 0 {
        clock_reads as f64 / (ios_all.max(1)) as f64
    } else {
        2.0
    };
    let open_loop = match (open, cfg.rate) {
        (Some(o), Some(rate)) => Some(OpenLoopSummary {
            target_iops: rate.iops,
            achieved_iops: requests as f64 / secs,
            issue_delay: o.delay.summary(),
            late: o.late,
            late_pct: 100.0 * o.late as f64 / o.delay.count.max(1) as f64,
            max_backlog: o.max_backlog,
            final_backlog: o.final_backlog,
        }),
        _ => None,
    };
    // Asked more than the run could issue: said once, in every output.
    warnings.extend(open_loop.as_ref().and_then(|o| o.shortfall()));
    checks::after_run(&errors, ios, &mut warnings);
    let iops = ios as f64 / secs;
    let cpu_us_per_io = if ios > 0 {
        total_cpu * 1e6 / ios as f64
    } else {
        0.0
    };
    Ok(RunResult {
        label: cfg.label(),
        seconds: window,
        ios,
        requests,
        bytes: lat.bytes,
        iops,
        requests_per_s: requests as f64 / secs,
        mb_s: lat.bytes as f64 / secs / 1e6,
        mib_s: lat.bytes as f64 / secs / (1u64 << 20) as f64,
        latency: lat.summary(),
        achieved_depth: (window > 0.0).then(|| depth_area / (window * 1e9) / cfg.threads as f64),
        timeline,
        offset_samples,
        cpu_us_per_io,
        cpu,
        timer: TimerInfo {
            clock: crate::clock::Tick::clock_name().into(),
            ns_per_clock_read: timer_ns,
            clock_reads_per_io: reads_per_io,
            overhead_ns_per_io: reads_per_io * timer_ns,
        },
        // Measured apart, after the run (`selfcost`).
        runner_cost: None,
        service_latency: (service.count > 0).then(|| service.summary()),
        handoff_latency: (handoff.count > 0).then(|| handoff.summary()),
        engine_features: features,
        completions: None,
        open_loop,
        think: think_summary(cfg, think),
        errors,
        verify: cfg.verify.then_some(verify),
        ended_by,
        warnings,
        repeat: None,
        histogram: stats::encode_histogram(&lat.hist),
        precision: samples.precision(until, iops, cpu_us_per_io, &lat),
        race: None,
        by_size: sizes(cfg, &by_size, requests, secs),
    })
}

/// A mix's figures per size, from each size's latencies over the window.
fn sizes(cfg: &RunConfig, by_size: &[Recorder], requests: u64, secs: f64) -> Vec<SizeFigures> {
    cfg.bssplit
        .shares()
        .iter()
        .zip(by_size)
        .map(|(s, r)| SizeFigures {
            bs: s.bs,
            percent: s.percent,
            requests: r.count,
            share_pct: 100.0 * r.count as f64 / requests.max(1) as f64,
            bytes: r.bytes,
            iops: r.count as f64 / secs,
            mib_s: r.bytes as f64 / secs / (1u64 << 20) as f64,
            latency: r.summary(),
        })
        .collect()
}

/// The workers' outputs summed; errors and mismatches the first [`KEEP_FIRST`] by offset.
#[derive(Default)]
struct Merged {
    errors: ErrorSummary,
    verify: VerifySummary,
    service: Recorder,
    handoff: Recorder,
    features: Vec<String>,
    clock_reads: u64,
    ios_all: u64,
    open: Option<OpenLoopTotals>,
    depth_area: f64,
    stretches: BTreeMap<u64, (u64, u64)>,
    by_size: Vec<Recorder>,
    think: ThinkStats,
}

impl Merged {
    /// Sum what the workers handed back; the first worker's error, if any, is the run's.
    fn of(outs: Vec<Result<WorkerOut>>) -> Result<Merged> {
        let mut m = Merged::default();
        let Merged {
            errors,
            verify,
            service,
            handoff,
            features,
            clock_reads,
            ios_all,
            open,
            depth_area,
            stretches,
            by_size,
            think,
        } = &mut m;
        for o in outs {
            let o = o?;
            for (k, (bytes, last)) in &o.samples {
                let e = stretches.entry(*k).or_insert((0, 0));
                e.0 += bytes;
                e.1 = e.1.max(*last);
            }
            service.merge(&o.service);
            by_size.resize_with(o.by_size.len().max(by_size.len()), Recorder::default);
            for (m, r) in by_size.iter_mut().zip(&o.by_size) {
                m.merge(r);
            }
            if let Some(ol) = &o.open_loop {
                open.get_or_insert_with(OpenLoopTotals::default).add(ol);
            }
            if let Some(t) = &o.think {
                think.pauses += t.pauses;
                think.paused_ns += t.paused_ns;
                think.spun_ns += t.spun_ns;
            }
            *clock_reads += o.clock_reads;
            *depth_area += o.depth_area;
            *ios_all += o.ios_all;
            handoff.merge(&o.handoff);
            if features.is_empty() {
                *features = o.features;
            }
            errors.count += o.errors.count;
            errors.eagain += o.errors.eagain;
            errors.first.extend(o.errors.first);
            verify.checked_ios += o.verify.checked_ios;
            verify.mismatches += o.verify.mismatches;
            verify.first.extend(o.verify.first);
        }
        errors.first.sort_by_key(|e| e.offset);
        errors.first.truncate(KEEP_FIRST);
        verify.first.sort_by_key(|m| m.offset);
        verify.first.truncate(KEEP_FIRST);
        Ok(m)
    }
}

/// The pauses of a run with think time, all workers together.
fn think_summary(cfg: &RunConfig, t: ThinkStats) -> Option<ThinkSummary> {
    Some(ThinkSummary {
        asked: cfg.thinktime?,
        pauses: t.pauses,
        mean_pause_us: t.paused_ns as f64 / t.pauses.max(1) as f64 / 1e3,
        spun_s: t.spun_ns as f64 / 1e9,
    })
}

/// The run's timeline, a point per second of the `window` (the last one as long as the window
/// ran into it), each second's latencies merged into `lat` too.
fn timeline(
    intervals: &BTreeMap<u64, Recorder>,
    window: f64,
    bpr: u64,
    lat: &mut Recorder,
) -> Vec<TimelinePoint> {
    let mut timeline = Vec::with_capacity(intervals.len());
    for (sec, rec) in intervals {
        lat.merge(rec);
        let t_end = ((sec + 1) as f64).min(window.max(1e-9));
        let len = (t_end - *sec as f64).max(1e-9);
        timeline.push(TimelinePoint {
            t_s: t_end,
            ios: rec.count * bpr,
            iops: (rec.count * bpr) as f64 / len,
            mib_s: rec.bytes as f64 / len / (1u64 << 20) as f64,
            p50_ns: rec.percentile(50.0),
            p99_ns: rec.percentile(99.0),
            max_ns: rec.max,
        });
    }
    timeline
}
