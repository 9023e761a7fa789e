//! The measured window cut into short windows by the runner's thread, and what they say about how
//! well the run measured ([`Precision`]): the rate's interval from the windows' I/Os (batch
//! means), CPU per I/O's from their CPU, the percentiles' from the run's histogram.
//!
//! Samples fall on a grid aligned on the ramp's end (`ramp_end + k · step`, `step` 100 ms); the
//! thread may wake late, so each window runs between the actual instants of its two samples.
//! Each sample holds every target's completion counters and the process's CPU clock
//! ([`crate::cpu::process_cpu_s`]). Memory stays bounded: past [`MAX_SAMPLES`] samples,
//! neighbouring windows are merged pairwise and the step doubles.

use crate::estimate::{self, CONFIDENCE, Estimate};
use crate::result::Precision;
use crate::stats::Recorder;
use std::time::{Duration, Instant};

/// The windows' length when a run begins.
pub(super) const STEP: Duration = Duration::from_millis(100);

/// The most samples kept (about 7 minutes of 100 ms windows); past it neighbouring windows are
/// merged pairwise, so a run of hours keeps between 2,048 and 4,096 windows.
pub(super) const MAX_SAMPLES: usize = 4096;

/// One sample: when it was taken, each target's I/Os completed so far (ramp included), the
/// process's CPU seconds so far.
#[derive(Debug, Clone)]
struct Sample {
    at: Instant,
    done: Vec<u64>,
    cpu_s: f64,
}

/// The samples of one run's measured window.
#[derive(Debug, Clone)]
pub(super) struct Samples {
    /// The grid's origin: the ramp's end.
    origin: Instant,
    step: Duration,
    samples: Vec<Sample>,
}

/// One window between two samples: its length, the I/Os completed in it, the process's CPU.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Window {
    pub(super) seconds: f64,
    pub(super) ios: u64,
    pub(super) cpu_s: f64,
}

impl Samples {
    /// No sample yet, on a grid aligned on `origin` (the ramp's end).
    pub(super) fn new(origin: Instant) -> Samples {
        Samples {
            origin,
            step: STEP,
            samples: Vec::new(),
        }
    }

    /// When the next sample is due: the first grid point more than half a step after the last
    /// sample (a late wake-up skips a grid point rather than leave a sliver of a window); none
    /// before the first sample.
    pub(super) fn next_due(&self) -> Option<Instant> {
        let last = self.samples.last()?;
        let step = self.step.as_nanos().max(1);
        let after = (last.at + self.step / 2).saturating_duration_since(self.origin);
        let k = after.as_nanos() / step + 1;
        let ns = u64::try_from(k * step).unwrap_or(u64::MAX);
        Some(
            self.origin
                .checked_add(Duration::from_nanos(ns))
                .unwrap_or(last.at + self.step),
        )
    }

    /// The first sample of a run without a ramp, at its start `t0`: no I/O completed yet (the
    /// workers start at the barrier after it), the process's CPU clock read just before the
    /// barrier as `cpu_s`. Exact, where a sample the runner's thread took once it ran again
    /// could miss the first milliseconds of I/O.
    pub(super) fn start_at(&mut self, t0: Instant, targets: usize, cpu_s: f64) {
        self.push(t0, vec![0; targets], cpu_s);
    }

    /// Record the counters `done` (one per target) at `at`, with the process's CPU clock now.
    pub(super) fn take(&mut self, at: Instant, done: Vec<u64>) {
        self.push(at, done, crate::cpu::process_cpu_s());
    }

    fn push(&mut self, at: Instant, done: Vec<u64>, cpu_s: f64) {
        self.samples.push(Sample { at, done, cpu_s });
        if self.samples.len() > MAX_SAMPLES {
            // Every other sample goes: each window merges with its neighbour. The last sample
            // may go too; the next one closes its window on the doubled grid.
            let mut i = 0;
            self.samples.retain(|_| {
                i += 1;
                i % 2 == 1
            });
            self.step *= 2;
        }
    }

    /// The samples of the targets `gs` alone (their counters summed; the CPU stays the
    /// process's).
    pub(super) fn only(&self, gs: &[usize]) -> Samples {
        Samples {
            origin: self.origin,
            step: self.step,
            samples: self
                .samples
                .iter()
                .map(|s| Sample {
                    at: s.at,
                    done: vec![gs.iter().filter_map(|&g| s.done.get(g)).sum()],
                    cpu_s: s.cpu_s,
                })
                .collect(),
        }
    }

    /// The windows between consecutive samples up to `until` (the measured window's end): one
    /// that runs past it is cut there (its I/Os all completed before: the window ends at the
    /// last completion, or the run's end, after which nothing counts); one beginning after it
    /// is left out.
    pub(super) fn windows(&self, until: Instant) -> Vec<Window> {
        let total = |s: &Sample| s.done.iter().sum::<u64>();
        self.samples
            .windows(2)
            .filter(|w| w[0].at < until)
            .map(|w| Window {
                seconds: w[1].at.min(until).duration_since(w[0].at).as_secs_f64(),
                ios: total(&w[1]).saturating_sub(total(&w[0])),
                cpu_s: (w[1].cpu_s - w[0].cpu_s).max(0.0),
            })
            .collect()
    }

    /// How well the run measured, from its windows up to `until`, its IOPS and CPU per I/O and
    /// its merged latencies `lat`. None when nothing was measured, or when the windows make
    /// fewer than [`estimate::MIN_BATCHES`] batches (a measured window under about 0.4 s, or a
    /// run stopped in its ramp): no interval rather than one from two or three numbers.
    pub(super) fn precision(
        &self,
        until: Instant,
        iops: f64,
        cpu_us_per_io: f64,
        lat: &Recorder,
    ) -> Option<Precision> {
        if lat.count == 0 {
            return None;
        }
        let step = self.step.as_secs_f64();
        let mut ws = self.windows(until);
        // A last window cut short (the run ended between two samples) would weigh as much as a
        // full one with fewer I/Os behind it.
        if ws.last().is_some_and(|w| w.seconds < 0.9 * step) {
            ws.pop();
        }
        let rates: Vec<f64> = ws
            .iter()
            .map(|w| w.ios as f64 / w.seconds.max(1e-9))
            .collect();
        let (iops_e, batches) = estimate::rate_interval(iops, &rates, CONFIDENCE)?;
        let cpu_us: Vec<f64> = ws.iter().map(|w| w.cpu_s * 1e6).collect();
        let ios: Vec<f64> = ws.iter().map(|w| w.ios as f64).collect();
        let cpu = estimate::ratio_interval(&cpu_us, &ios, CONFIDENCE)
            .and_then(|e| recentred(e, cpu_us_per_io));
        let bins = bins(lat);
        let pct = |p: f64| estimate::percentile_interval(&bins, p, lat.percentile(p), CONFIDENCE);
        Some(Precision {
            confidence: CONFIDENCE,
            window_s: step,
            windows: ws.len(),
            batches,
            iops: iops_e,
            cpu_us_per_io: cpu,
            p50_ns: pct(50.0),
            p99_ns: pct(99.0),
            p999_ns: pct(99.9),
        })
    }
}

/// The windows' CPU per I/O interval held around the run's own figure: the windows count the
/// process's CPU clock (the monitor's thread included), the run its threads' schedstat, so the
/// two figures differ a little; the interval keeps its relative width and moves to the run's.
fn recentred(e: Estimate, value: f64) -> Option<Estimate> {
    if !(e.value > 0.0 && value.is_finite() && value > 0.0) {
        return None;
    }
    let k = value / e.value;
    Some(Estimate {
        value,
        lo: e.lo.map(|v| v * k),
        hi: e.hi.map(|v| v * k),
    })
}

/// The histogram's bins as (latency ns, count) in increasing latency, as
/// [`crate::points::Point`] decodes them from a document, each value held within the exact
/// extremes as the percentiles are.
fn bins(lat: &Recorder) -> Vec<(u64, u64)> {
    lat.hist
        .iter_recorded()
        .map(|v| {
            (
                v.value_iterated_to().clamp(lat.min, lat.max),
                v.count_at_value(),
            )
        })
        .filter(|&(_, n)| n > 0)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn samples_fall_on_the_grid_and_late_wake_ups_skip_a_point() {
        let o = Instant::now();
        let mut s = Samples::new(o);
        assert_eq!(s.next_due(), None);
        s.push(o + Duration::from_micros(80), vec![0], 0.0);
        assert_eq!(s.next_due(), Some(o + ms(100)));
        s.push(o + ms(101), vec![100], 0.01);
        assert_eq!(s.next_due(), Some(o + ms(200)));
        // Woke at 260 ms: 300 ms is only 40 ms away, so the next is 400 ms.
        s.push(o + ms(260), vec![250], 0.02);
        assert_eq!(s.next_due(), Some(o + ms(400)));
        let w = s.windows(o + ms(1000));
        assert_eq!(w.len(), 2);
        assert_eq!((w[0].ios, w[1].ios), (100, 150));
        assert!((w[1].seconds - 0.159).abs() < 1e-9);
        // Cut at the window's end; nothing after it.
        let w = s.windows(o + ms(150));
        assert_eq!(w.len(), 2);
        assert!((w[1].seconds - 0.049).abs() < 1e-9);
        assert_eq!(s.windows(o + ms(50)).len(), 1);
    }

    #[test]
    fn a_long_run_merges_its_windows_and_keeps_every_io() {
        let o = Instant::now();
        let mut s = Samples::new(o);
        let mut last = o;
        for k in 0..3 * MAX_SAMPLES as u64 {
            // Sample where the grid says, as the runner's thread does.
            let at = s.next_due().unwrap_or(o);
            s.push(at, vec![k, 2 * k], k as f64 * 0.01);
            last = at;
        }
        assert!(s.samples.len() <= MAX_SAMPLES);
        assert!(s.step >= 4 * STEP, "{:?}", s.step);
        let w = s.windows(last + ms(1));
        let first = s.samples[0].done.iter().sum::<u64>();
        let end = s.samples.last().unwrap().done.iter().sum::<u64>();
        assert_eq!(w.iter().map(|w| w.ios).sum::<u64>(), end - first);
        assert!(
            w.iter()
                .all(|w| (w.seconds - s.step.as_secs_f64()).abs() < 1e-6)
        );
        // One target's counters alone.
        let one = s.only(&[1]).windows(last + ms(1));
        assert_eq!(one.len(), w.len());
        assert_eq!(
            3 * one.iter().map(|w| w.ios).sum::<u64>(),
            2 * (end - first)
        );
    }

    /// A steady run's windows give an interval around its rate and CPU per I/O, and intervals
    /// around its percentiles; too few windows give none.
    #[test]
    fn precision_brackets_the_figures() {
        let o = Instant::now();
        let mut s = Samples::new(o);
        let mut lat = Recorder::default();
        for i in 0..20_000u64 {
            lat.record(1_000 + (i * 7919) % 100_000, 4096);
        }
        s.push(o, vec![0], 0.0);
        let mut done = 0;
        for k in 1..=20u64 {
            done += 1000 + (k % 3) * 50;
            s.push(o + STEP * k as u32, vec![done], k as f64 * 0.0021);
        }
        let iops = done as f64 / 2.0;
        let cpu_us = 2.0 * 0.021 * 1e6 / done as f64;
        let p = s.precision(o + ms(2000), iops, cpu_us, &lat).unwrap();
        assert_eq!((p.windows, p.window_s), (20, 0.1));
        assert!(p.batches >= estimate::MIN_BATCHES);
        let within = |e: &Estimate| e.lo.unwrap() <= e.value && e.value <= e.hi.unwrap();
        assert!(within(&p.iops) && p.iops.value == iops, "{:?}", p.iops);
        let c = p.cpu_us_per_io.unwrap();
        assert!(within(&c) && c.value == cpu_us, "{c:?}");
        for (e, q) in [(&p.p50_ns, 50.0), (&p.p99_ns, 99.0), (&p.p999_ns, 99.9)] {
            assert!(within(e), "{e:?}");
            assert_eq!(e.value, lat.percentile(q) as f64);
            assert!(e.lo.unwrap() < e.hi.unwrap(), "{e:?}");
        }
        // The same run cut at 0.25 s: two full windows and a half one dropped.
        assert!(s.precision(o + ms(250), iops, cpu_us, &lat).is_none());
        assert!(
            s.precision(o + ms(2000), iops, cpu_us, &Recorder::default())
                .is_none()
        );
    }
}
