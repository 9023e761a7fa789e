//! The pauses of `--thinktime` in one worker's closed loop, the way `schedule` paces the open
//! loop: when a pause falls due (the rule is [`ThinkTime::due`]), the worker stops refilling, lets
//! what it has in flight complete, then pauses here — spinning, then sleeping — and the pause is
//! measured, never counted in any read's latency.

use crate::clock::Tick;
use crate::think::ThinkTime;
use std::sync::OnceLock;
use std::time::Duration;

/// What one worker's pauses came to: those that began in the measured window.
#[derive(Default, Clone, Copy)]
pub(super) struct ThinkStats {
    pub(super) pauses: u64,
    /// Their length as measured (a clock read before and after), and the spinning part asked.
    pub(super) paused_ns: u64,
    pub(super) spun_ns: u64,
}

/// One worker's think time: I/Os completed since the last pause, and whether one is due.
pub(super) struct Thinker {
    t: ThinkTime,
    done: u64,
    since: Tick,
    /// A pause is due: the worker refills nothing until its queue is empty and it has paused.
    /// With the I/Os counted when it fell due (those completing while the queue empties count
    /// towards the next pause, as fio's `last_thinktime_blocks` keeps them).
    due: Option<u64>,
    granularity_ns: u64,
    pub(super) stats: ThinkStats,
}

/// The longest single sleep of a pause: a longer pause sleeps in stretches, so a worker told to
/// stop (Ctrl-C, another thread's error) notices within it.
const SLEEP_STRETCH: Duration = Duration::from_millis(100);

/// How far past its request `nanosleep` returns on this machine, ns: the largest overshoot of ten
/// 1 µs sleeps, measured once per process, as fio measures its `ns_granularity`. A pause sleeps
/// until this close to its end and spins the rest, as fio's `usec_sleep` does, so a pause lasts
/// what was asked (plus a few µs) rather than what was asked plus the overshoot.
fn granularity_ns() -> u64 {
    static G: OnceLock<u64> = OnceLock::new();
    *G.get_or_init(|| {
        (0..10)
            .map(|_| {
                let t = Tick::now();
                std::thread::sleep(Duration::from_micros(1));
                Tick::now().ns_since(t)
            })
            .max()
            .unwrap_or(0)
    })
}

impl Thinker {
    /// A worker's think time, its clock started at `t0` (the sleep granularity is measured here,
    /// before the run starts, the first time a process asks).
    pub(super) fn new(t: ThinkTime) -> Thinker {
        Thinker {
            t,
            done: 0,
            since: Tick::now(),
            due: None,
            granularity_ns: granularity_ns(),
            stats: ThinkStats::default(),
        }
    }

    /// The run began at `t0`: the I/O time of `thinktime_iotime` counts from there.
    pub(super) fn begin(mut self, t0: Tick) -> Thinker {
        self.since = t0;
        self
    }

    /// `n` I/Os completed at `now`.
    #[inline]
    pub(super) fn completed(&mut self, n: u64, now: Tick) {
        self.done += n;
        if self.due.is_none() && self.t.due(self.done, now.ns_since(self.since)) {
            self.due = Some(self.done);
        }
    }

    /// Whether a pause is due: the worker refills nothing until it has paused.
    #[inline]
    pub(super) fn holds(&self) -> bool {
        self.due.is_some()
    }

    /// Pause now (the worker's queue is empty), cut at `end`; counted when it began inside the
    /// window `[ramp_end, end)`. `stop` is asked between stretches of a long sleep: when it
    /// says so, the pause ends there.
    pub(super) fn pause(&mut self, (ramp_end, end): (Tick, Tick), stop: &dyn Fn() -> bool) {
        let counted = self.due.take().unwrap_or(self.done);
        self.done -= counted;
        let start = Tick::now();
        let left = if start < end { end.ns_since(start) } else { 0 };
        let (spin, sleep) = self.t.split(left);
        if spin + sleep == 0 {
            self.since = start;
            return;
        }
        let spun_until = start.plus_ns(spin);
        while Tick::now() < spun_until {
            std::hint::spin_loop();
        }
        spun_until
            .plus_ns(sleep)
            .wait_until(self.granularity_ns, SLEEP_STRETCH, stop);
        let stopped = Tick::now();
        self.since = stopped;
        if start >= ramp_end && start < end {
            self.stats.pauses += 1;
            self.stats.paused_ns += stopped.ns_since(start);
            self.stats.spun_ns += spin;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn thinker(think_us: u64, spin_us: u64, blocks: u64) -> Thinker {
        let us = |n| Some(Duration::from_micros(n));
        let t = ThinkTime::from_parts(us(think_us), us(spin_us), Some(blocks), None)
            .unwrap()
            .unwrap();
        Thinker::new(t)
    }

    /// Every 4th completion makes a pause due; completions while the queue empties count
    /// towards the next one (fio's counter), whatever the reaps' sizes.
    #[test]
    fn a_pause_falls_due_every_n_completions_and_the_drain_counts_towards_the_next() {
        let mut th = thinker(10, 0, 4);
        let now = Tick::now();
        let window = (now, now.plus_ns(60_000_000_000));
        let mut pauses = 0;
        for reap in [1, 2, 3, 1, 1, 4, 2, 2] {
            th.completed(reap, now);
            if th.holds() {
                th.pause(window, &|| false);
                pauses += 1;
            }
        }
        // 1+2+3 = 6 ≥ 4: pause, 6 counted; 1+1 = 2; +4 = 6: pause; +2+2 = 4: pause.
        assert_eq!((pauses, th.stats.pauses), (3, 3));
        assert_eq!(th.done, 0);
        th.completed(3, now);
        assert!(!th.holds(), "3 of 4");
    }

    /// The spinning part is spent on this thread's CPU; the sleeping part is not.
    #[test]
    fn the_spin_burns_cpu_and_the_sleep_does_not() {
        let cpu = || {
            let mut ts = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            // SAFETY: a valid timespec for the calling thread's CPU clock.
            unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
            ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
        };
        let now = Tick::now();
        let window = (now, now.plus_ns(60_000_000_000));
        let mut spinning = thinker(20_000, 20_000, 1);
        let before = cpu();
        spinning.completed(1, Tick::now());
        spinning.pause(window, &|| false);
        let spun = cpu() - before;
        let mut sleeping = thinker(20_000, 0, 1);
        let before = cpu();
        sleeping.completed(1, Tick::now());
        sleeping.pause(window, &|| false);
        let slept = cpu() - before;
        assert!(spun >= 5_000_000, "20 ms of spinning took {spun} ns of CPU");
        assert!(
            slept < spun / 2,
            "asleep {slept} ns of CPU, spinning {spun}"
        );
        assert_eq!(spinning.stats.spun_ns, 20_000_000);
        assert!(spinning.stats.paused_ns >= 20_000_000 && sleeping.stats.paused_ns >= 20_000_000);
    }

    /// A pause past the run's end is none, and one cut short by `stop` ends early.
    #[test]
    fn a_pause_ends_with_the_run() {
        let mut th = thinker(10_000_000, 0, 1);
        let now = Tick::now();
        th.completed(1, now);
        th.pause((now, now), &|| false);
        assert_eq!(th.stats.pauses, 0);
        th.completed(1, now);
        th.pause((now, now.plus_ns(60_000_000_000)), &|| true);
        assert_eq!(th.stats.pauses, 1);
        assert!(th.stats.paused_ns < 5_000_000_000, "{}", th.stats.paused_ns);
    }
}
