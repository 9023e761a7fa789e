//! Time across ranks: the wall clock (CLOCK_REALTIME, the one clock hosts keep in step), the
//! offset of a rank's clock from rank 0's estimated from ping-pong exchanges (the exchange with
//! the shortest round trip bounds the error by half of it), and waiting for an agreed instant
//! with a final spin, since a sleep alone overshoots by tens of microseconds, at real-time
//! priority where permitted, since a wake-up on a busy core can otherwise wait milliseconds.

use std::time::Duration;

/// CLOCK_REALTIME in nanoseconds since the epoch.
pub fn realtime_ns() -> i64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Realtime);
    t.tv_sec * 1_000_000_000 + t.tv_nsec
}

/// A rank's clock against rank 0's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Offset {
    /// This rank's clock minus rank 0's.
    pub ns: i64,
    /// The estimate is within ± this of the truth.
    pub uncertainty_ns: u64,
}

/// The offset from exchanges (sent, rank 0's clock, received): the one with the shortest round
/// trip, assuming the answer came halfway through it. None without exchanges.
pub fn estimate(exchanges: &[[i64; 3]]) -> Option<Offset> {
    exchanges
        .iter()
        .filter(|[sent, _, back]| back >= sent)
        .min_by_key(|[sent, _, back]| back - sent)
        .map(|&[sent, root, back]| Offset {
            ns: sent + (back - sent) / 2 - root,
            uncertainty_ns: ((back - sent) as u64).div_ceil(2),
        })
}

/// The last stretch before an instant is spun rather than slept when the host has a core to
/// spare for it.
const SPIN: Duration = Duration::from_micros(300);

/// Wait until CLOCK_REALTIME reads `at_ns` (at once if it is past). The thread sleeps on an
/// absolute timer with no timer slack (the default 50 µs slack would be the start skew); with
/// `spin`, it wakes a little early and spins to the instant. Spinning is precise on an idle
/// core and harmful on a crowded one: a spinner holds a core another rank needs to wake on.
pub fn wait_until(at_ns: i64, spin: bool) {
    let slack = rustix::thread::current_timer_slack().ok();
    let _ = rustix::thread::set_current_timer_slack(std::num::NonZeroU64::new(1));
    let wake = if spin {
        at_ns - SPIN.as_nanos() as i64
    } else {
        at_ns
    };
    let ts = rustix::time::Timespec {
        tv_sec: wake.div_euclid(1_000_000_000),
        tv_nsec: wake.rem_euclid(1_000_000_000),
    };
    while realtime_ns() < wake {
        if rustix::thread::clock_nanosleep_absolute(rustix::time::ClockId::Realtime, &ts).is_err() {
            std::thread::yield_now();
        }
    }
    if let Some(s) = slack {
        let _ = rustix::thread::set_current_timer_slack(std::num::NonZeroU64::new(s));
    }
    while realtime_ns() < at_ns {
        std::hint::spin_loop();
    }
}

/// The waiting thread raised to real-time priority (SCHED_FIFO, the lowest real-time level)
/// while it lives, so that its wake-up at the instant preempts whatever holds the core — on a
/// host with more ranks than cores, the workers of a rank that already started. Where that is
/// not permitted (no CAP_SYS_NICE, RLIMIT_RTPRIO 0) the thread keeps its policy and
/// [`Urgent::raised`] says so. Dropped, the thread gets its own policy back.
pub struct Urgent {
    old: Option<(libc::c_int, libc::sched_param)>,
    /// Scheduling policy is the thread's own: an Urgent stays on the thread that made it.
    _here: std::marker::PhantomData<*const ()>,
}

impl Urgent {
    pub fn raise() -> Urgent {
        let mut param = libc::sched_param { sched_priority: 0 };
        // SAFETY: pid 0 is the calling thread; both calls only read or write `param`, a live
        // `sched_param` owned by this frame.
        let old = unsafe {
            let policy = libc::sched_getscheduler(0);
            if policy < 0 || libc::sched_getparam(0, &mut param) != 0 {
                None
            } else {
                let rt = libc::sched_param { sched_priority: 1 };
                (libc::sched_setscheduler(0, libc::SCHED_FIFO, &rt) == 0).then_some((policy, param))
            }
        };
        Urgent {
            old,
            _here: std::marker::PhantomData,
        }
    }

    /// Whether the thread runs at real-time priority now.
    pub fn raised(&self) -> bool {
        self.old.is_some()
    }
}

impl Drop for Urgent {
    fn drop(&mut self) {
        if let Some((policy, param)) = self.old.take() {
            // SAFETY: pid 0 is the calling thread, the one raised (an Urgent is not Send);
            // `param` is a live `sched_param`.
            unsafe {
                libc::sched_setscheduler(0, policy, &param);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shortest_round_trip_wins() {
        // Rank 0's clock is 1_000 ns behind ours; one-way trips 50 ns, then a slow exchange.
        let ex = [[10_000, 9_050, 10_100], [20_000, 19_500, 21_000]];
        let o = estimate(&ex).unwrap();
        assert_eq!(
            o,
            Offset {
                ns: 1_000,
                uncertainty_ns: 50
            }
        );
        // An asymmetric trip moves the estimate, but never beyond the uncertainty.
        let o = estimate(&[[0, -1_000 + 10, 100]]).unwrap();
        assert!((o.ns - 1_000).unsigned_abs() <= o.uncertainty_ns, "{o:?}");
        assert_eq!(estimate(&[]), None);
    }

    #[test]
    fn a_raised_thread_gets_its_policy_back() {
        // SAFETY: pid 0 is the calling thread; no memory is passed.
        let policy = || unsafe { libc::sched_getscheduler(0) };
        let before = policy();
        {
            let u = Urgent::raise();
            if u.raised() {
                assert_eq!(policy(), libc::SCHED_FIFO);
            } else {
                eprintln!("SCHED_FIFO not permitted here: the thread keeps its policy");
                assert_eq!(policy(), before);
            }
        }
        assert_eq!(policy(), before);
    }

    #[test]
    fn waiting_for_an_instant_is_not_early_and_barely_late() {
        for spin in [false, true] {
            let at = realtime_ns() + 2_000_000;
            wait_until(at, spin);
            let late = realtime_ns() - at;
            assert!(late >= 0, "woke {late} ns early");
            assert!(late < 5_000_000, "woke {late} ns late");
            wait_until(at - 1_000_000_000, spin);
        }
    }
}
