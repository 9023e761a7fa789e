//! The injected service time (`--delay`): a plain sleep overshoots by tens of microseconds (the
//! timer slack and the wake-up), so the wait sleeps until shortly before the deadline and spins
//! the rest, with the thread's timer slack set to 1 ns. Accurate to a few microseconds at the
//! cost of a spinning core for the last stretch of each wait.

use std::num::NonZeroU64;
use std::time::{Duration, Instant};

/// How much of each wait is spun rather than slept.
pub const SPIN: Duration = Duration::from_micros(60);

/// What the output says about how delays are made.
pub const METHOD: &str = "sleep until 60 us before the deadline (timer slack 1 ns), then spin";

/// Make this thread's sleeps wake on time (timer slack 1 ns instead of 50 us).
pub fn precise_timers() {
    let _ = rustix::thread::set_current_timer_slack(NonZeroU64::new(1));
}

/// Return at `deadline`, not before and only a few microseconds after; with `spin_all` (a
/// busy-polling server, which holds its core anyway) without sleeping at all. The clock's
/// sleep-then-spin wait, on `Instant`: the deadline is the request's, on its clock.
pub fn wait_until(deadline: Instant, spin_all: bool) {
    let spin_ns = if spin_all {
        u64::MAX
    } else {
        SPIN.as_nanos() as u64
    };
    crate::clock::wait_until(deadline, spin_ns, Duration::MAX, &|| false);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_are_never_short_and_rarely_long() {
        precise_timers();
        let mut over = Vec::new();
        for (us, spin_all) in [
            (0u64, false),
            (10, false),
            (100, false),
            (1000, false),
            (100, true),
        ] {
            for _ in 0..20 {
                let t = Instant::now();
                let d = Duration::from_micros(us);
                wait_until(t + d, spin_all);
                let took = t.elapsed();
                assert!(took >= d, "{took:?} < {d:?}");
                over.push((took - d).as_micros());
            }
        }
        over.sort();
        // The median overshoot is a few microseconds even on a loaded machine.
        assert!(over[over.len() / 2] < 20, "overshoots {over:?}");
    }
}
