//! The monitor's own thread: a baseline when asked to begin, thread samples on a grid of
//! `1/thread_hz` and a full sample (devices first, so their counters are read as close to the
//! grid point as possible) at every `interval` from an epoch the caller chooses, until told when
//! to end. It measures its own CPU time, so its cost is part of what it reports.

use super::devices::{self, DeviceSample, DiskCounters, Watched};
use super::machine::{self, MachineCounters, MachineSample};
use super::threads::ThreadSampler;
use super::{MAX_THREAD_HZ, MonitorOptions, MonitorRecord, Sample};
use crate::error::Result;
use std::collections::HashMap;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// The longest `--interval` between two samples.
const MAX_INTERVAL: Duration = Duration::from_secs(3600);

/// Counters at one instant.
struct Snapshot {
    at: Instant,
    disks: HashMap<String, DiskCounters>,
    machine: MachineCounters,
}

impl Snapshot {
    fn take() -> Snapshot {
        let at = Instant::now();
        Snapshot {
            at,
            disks: devices::read_diskstats(),
            machine: machine::read(),
        }
    }
}

#[derive(Default)]
struct Control {
    baseline: Option<Snapshot>,
    epoch: Option<Instant>,
    end: Option<Instant>,
}

/// A monitor ready to run: devices resolved, the process found. [`Monitor::run`] is its loop,
/// meant for its own thread; [`begin`](Monitor::begin), [`set_epoch`](Monitor::set_epoch) and
/// [`end_at`](Monitor::end_at) steer it from another.
pub struct Monitor {
    opts: MonitorOptions,
    sampler: Mutex<Option<ThreadSampler>>,
    control: Mutex<Control>,
    wake: Condvar,
    notes: Vec<String>,
}

/// Seconds from `epoch` to `at`, negative before it.
fn since(epoch: Instant, at: Instant) -> f64 {
    if at >= epoch {
        at.duration_since(epoch).as_secs_f64()
    } else {
        -epoch.duration_since(at).as_secs_f64()
    }
}

fn thread_cpu() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// The first point of the grid `epoch + k × step` (k any integer) strictly after `after`.
fn next_on_grid(epoch: Instant, step: Duration, after: Instant) -> Instant {
    let step_s = step.as_secs_f64().max(1e-6);
    let k = (since(epoch, after) / step_s).floor() + 1.0;
    let t = if k >= 0.0 {
        epoch + step.mul_f64(k)
    } else {
        epoch - step.mul_f64(-k)
    };
    if t <= after { t + step } else { t }
}

impl Monitor {
    /// Check what to watch: every device must be one the kernel counts (names as
    /// [`devices::resolve`] returns them), the process must exist. Bad input otherwise.
    pub fn new(mut opts: MonitorOptions, notes: Vec<String>) -> Result<Monitor> {
        let mut names = Vec::new();
        for d in &opts.devices {
            let n = devices::resolve(d)?;
            if !names.contains(&n) {
                names.push(n);
            }
        }
        opts.devices = names;
        if opts.interval < Duration::from_millis(100) {
            return Err(crate::Error::invalid(
                "--interval must be at least 100ms (the devices count in milliseconds)",
            ));
        }
        if opts.interval > MAX_INTERVAL {
            return Err(crate::Error::invalid(format!(
                "--interval {} s is longer than the monitor samples (at most an hour between lines); use at most 1h",
                opts.interval.as_secs()
            )));
        }
        if !(1..=MAX_THREAD_HZ).contains(&opts.thread_hz) {
            return Err(crate::Error::invalid(format!(
                "--thread-hz {} is outside 1 … {MAX_THREAD_HZ} thread samples per second (the \
                 default is {})",
                opts.thread_hz,
                super::DEFAULT_THREAD_HZ
            )));
        }
        let sampler = ThreadSampler::new(opts.pid)?;
        Ok(Monitor {
            opts,
            sampler: Mutex::new(Some(sampler)),
            control: Mutex::new(Control::default()),
            wake: Condvar::new(),
            notes,
        })
    }

    pub fn options(&self) -> &MonitorOptions {
        &self.opts
    }

    /// Take the baseline now (before the I/O to be watched starts).
    pub fn begin(&self) {
        let snap = Snapshot::take();
        self.control.lock().unwrap().baseline = Some(snap);
        self.wake.notify_all();
    }

    /// Samples fall at `epoch + k × interval`; their `t_s` counts from `epoch`.
    pub fn set_epoch(&self, epoch: Instant) {
        self.control.lock().unwrap().epoch = Some(epoch);
        self.wake.notify_all();
    }

    /// Begin now with the epoch now, for a monitor on its own; returns the epoch.
    pub fn start_now(&self) -> Instant {
        self.begin();
        let at = self.control.lock().unwrap().baseline.as_ref().map(|b| b.at);
        let epoch = at.unwrap_or_else(Instant::now);
        self.set_epoch(epoch);
        epoch
    }

    /// Take the last sample at `at` (at once if it has passed) and stop. Before `begin`, the
    /// monitor stops with no sample.
    pub fn end_at(&self, at: Instant) {
        let mut c = self.control.lock().unwrap();
        c.end = Some(c.end.map_or(at, |e| e.min(at)));
        drop(c);
        self.wake.notify_all();
    }

    /// Wait until `deadline` or a change of the control; returns the end if one is set.
    fn wait_until(&self, deadline: Instant) -> Option<Instant> {
        let mut c = self.control.lock().unwrap();
        loop {
            let limit = c.end.map_or(deadline, |e| e.min(deadline));
            let now = Instant::now();
            if now >= limit {
                return c.end;
            }
            c = self.wake.wait_timeout(c, limit - now).unwrap().0;
        }
    }

    /// The sampler loop: call on the monitor's own thread. Every sample goes to `sink` as it is
    /// taken; all of them come back at the end.
    pub fn run(&self, sink: &(dyn Fn(&Sample) + Sync)) -> MonitorRecord {
        let mut record = MonitorRecord {
            options: self.opts.clone(),
            samples: Vec::new(),
            sampler_cpu_pct: 0.0,
            notes: self.notes.clone(),
        };
        // Wait for the baseline and the epoch (or an end before either).
        let (mut prev, epoch) = {
            let mut c = self.control.lock().unwrap();
            loop {
                if c.baseline.is_some() && c.epoch.is_some() {
                    break (c.baseline.take().unwrap(), c.epoch.unwrap());
                }
                if c.end.is_some() {
                    return record;
                }
                c = self.wake.wait(c).unwrap();
            }
        };
        let Some(mut threads) = self.sampler.lock().unwrap().take() else {
            return record;
        };
        threads.exclude(rustix::thread::gettid().as_raw_nonzero().get() as u32);
        let mut watched: Vec<Watched> = self.opts.devices.iter().map(|d| Watched::new(d)).collect();
        let mut buf = vec![0u8; 256];
        let (cpu0, wall0) = (thread_cpu(), prev.at);
        let mut cpu_prev = cpu0;
        let interval = self.opts.interval;
        let tick = Duration::from_secs_f64(1.0 / self.opts.thread_hz as f64);
        // The first sample covers at least a tenth of an interval (a baseline taken just before
        // the epoch belongs to the epoch's first interval).
        let mut next_emit = next_on_grid(epoch, interval, prev.at + interval / 10);
        let mut next_tick = next_on_grid(epoch, tick, prev.at.checked_sub(tick).unwrap_or(prev.at));
        let mut ended = false;
        loop {
            let end = if ended {
                None
            } else {
                self.wait_until(next_emit.min(next_tick))
            };
            let now = Instant::now();
            let finishing = end.is_some_and(|e| e <= now) && next_emit > end.unwrap();
            if now >= next_emit || finishing || ended {
                let snap = Snapshot::take();
                let dt = snap.at.duration_since(prev.at).as_secs_f64();
                let cpu = thread_cpu();
                let sample = Sample {
                    t_s: since(epoch, snap.at),
                    interval_s: dt,
                    devices: watched
                        .iter_mut()
                        .map(|w| {
                            let a = prev.disks.get(&w.name).copied().unwrap_or_default();
                            let b = snap.disks.get(&w.name).copied().unwrap_or_default();
                            let inflight = w.take_inflight();
                            DeviceSample::between(&w.name, &a, &b, dt, inflight)
                        })
                        .collect(),
                    machine: MachineSample::between(&prev.machine, &snap.machine, dt),
                    threads: threads.take(dt),
                    process_ended: ended,
                    sampler_cpu_pct: 100.0 * (cpu - cpu_prev).as_secs_f64() / dt.max(1e-9),
                };
                cpu_prev = cpu;
                // A last sample shorter than a tenth of an interval says nothing but noise.
                if dt >= interval.as_secs_f64() / 10.0 || record.samples.is_empty() || ended {
                    sink(&sample);
                    record.samples.push(sample);
                }
                prev = snap;
                if finishing || ended {
                    break;
                }
                while next_emit <= now {
                    next_emit += interval;
                }
                threads.rescan_kernel();
            }
            if Instant::now() >= next_tick {
                if !threads.sample() && self.opts.pid.is_some() {
                    ended = true;
                    record.notes.push(format!(
                        "process {} ended after {:.1} s",
                        self.opts.pid.unwrap_or(0),
                        since(epoch, Instant::now())
                    ));
                }
                for w in &mut watched {
                    w.sample_inflight(&mut buf);
                }
                while next_tick <= Instant::now() {
                    next_tick += tick;
                }
            }
        }
        let wall = prev.at.duration_since(wall0).as_secs_f64();
        record.sampler_cpu_pct = 100.0 * (thread_cpu() - cpu0).as_secs_f64() / wall.max(1e-9);
        record
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_points() {
        let e = Instant::now() + Duration::from_secs(10);
        let s = Duration::from_secs(1);
        assert_eq!(next_on_grid(e, s, e), e + s);
        assert_eq!(
            next_on_grid(e, s, e - Duration::from_millis(2500)),
            e - Duration::from_secs(2)
        );
        assert_eq!(
            next_on_grid(e, s, e + Duration::from_millis(300)),
            e + Duration::from_secs(1)
        );
    }

    #[test]
    fn samples_on_the_grid_until_the_end() {
        let mut o = MonitorOptions::new(vec![], Some(std::process::id()));
        o.interval = Duration::from_millis(200);
        o.thread_hz = 50;
        let m = Monitor::new(o, vec![]).unwrap();
        let seen = std::sync::atomic::AtomicUsize::new(0);
        let rec = std::thread::scope(|s| {
            let h = s.spawn(|| {
                m.run(&|_| {
                    seen.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                })
            });
            m.begin();
            let epoch = Instant::now();
            m.set_epoch(epoch);
            m.end_at(epoch + Duration::from_millis(1000));
            h.join().unwrap()
        });
        assert_eq!(rec.samples.len(), 5, "{:?}", rec.samples);
        assert_eq!(seen.into_inner(), 5);
        for (i, s) in rec.samples.iter().enumerate() {
            let want = 0.2 * (i + 1) as f64;
            assert!((s.t_s - want).abs() < 0.05, "sample {i} at {}", s.t_s);
            assert!(s.threads.thread_samples >= 5, "{:?}", s.threads);
            // This test's own thread is in the process, sleeping or running.
            assert!(s.kind(super::super::Kind::App).is_some());
        }
    }

    #[test]
    fn an_end_before_the_beginning_stops_at_once() {
        let m = Monitor::new(MonitorOptions::new(vec![], None), vec![]).unwrap();
        m.end_at(Instant::now());
        assert!(m.run(&|_| {}).samples.is_empty());
    }
}
