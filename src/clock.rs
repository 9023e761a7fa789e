//! The clock that times every I/O, and what it costs: [`Tick`] reads the CPU's time-stamp counter
//! where the kernel itself keeps time with it (as fio does), and users comparing tools need to know
//! what one read costs here. Also the one sleep-then-spin wait ([`wait_until`]) of the runner's
//! timed waits and the NBD server's injected delay, on whichever clock the deadline is.

use std::hint::black_box;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// A point in time, in nanoseconds on the process's clock: what the runner's hot path stamps I/Os
/// with. On x86-64, when the kernel's clocksource is the TSC (so the counter is
/// invariant and synchronised across CPUs), a read is one `rdtsc` scaled to nanoseconds, against
/// CLOCK_MONOTONIC's vDSO read (which reads the same counter, then its parameters from shared
/// memory); the arithmetic on it is on integers. Elsewhere it reads `Instant`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Tick(u64);

/// Tick of the anchor (the clock's first use): the room before it, about 18 minutes, for the
/// `Instant`s taken earlier that [`Tick::from_instant`] converts.
const BEFORE: u64 = 1 << 40;

/// How ticks relate to the counter and to `Instant`.
struct Anchor {
    at: Instant,
    /// The counter at `at`, and nanoseconds per count as a 32.32 fixed-point number: `None` when
    /// the counter is not used.
    tsc: Option<(u64, u64)>,
}

static ANCHOR: OnceLock<Anchor> = OnceLock::new();

fn anchor() -> &'static Anchor {
    ANCHOR.get_or_init(|| {
        let tsc = if tsc::trusted() {
            tsc::calibrate()
        } else {
            None
        };
        Anchor {
            at: tsc.map_or_else(Instant::now, |(at, _, _)| at),
            tsc: tsc.map(|(_, c, m)| (c, m)),
        }
    })
}

impl Tick {
    /// Now.
    #[inline]
    pub fn now() -> Tick {
        let a = anchor();
        match a.tsc {
            Some((c0, mult)) => Tick(BEFORE + tsc::to_ns(tsc::read(), c0, mult)),
            None => Tick(BEFORE + a.at.elapsed().as_nanos() as u64),
        }
    }

    /// The tick of `t` (tick 0 for an `Instant` more than 18 minutes before the clock's first use).
    pub fn from_instant(t: Instant) -> Tick {
        let at = anchor().at;
        match t.checked_duration_since(at) {
            Some(d) => Tick(BEFORE + d.as_nanos() as u64),
            None => Tick(BEFORE.saturating_sub(at.duration_since(t).as_nanos() as u64)),
        }
    }

    /// The `Instant` of this tick.
    pub fn to_instant(self) -> Instant {
        let at = anchor().at;
        match self.0.checked_sub(BEFORE) {
            Some(ns) => at + Duration::from_nanos(ns),
            None => at - Duration::from_nanos(BEFORE - self.0),
        }
    }

    /// Nanoseconds from `earlier` to `self`, 0 if `earlier` is later.
    #[inline]
    pub fn ns_since(self, earlier: Tick) -> u64 {
        self.0.saturating_sub(earlier.0)
    }

    /// `ns` nanoseconds later.
    #[inline]
    pub fn plus_ns(self, ns: u64) -> Tick {
        Tick(self.0.saturating_add(ns))
    }

    /// `d` later.
    #[inline]
    pub fn plus(self, d: Duration) -> Tick {
        self.plus_ns(d.as_nanos().min(u64::MAX as u128) as u64)
    }

    /// [`wait_until`] on ticks: the runner's timed waits (an open loop's next due time, a
    /// think-time pause).
    pub fn wait_until(self, spin_ns: u64, stretch: Duration, stop: &dyn Fn() -> bool) {
        wait_until(self, spin_ns, stretch, stop)
    }

    /// Whether ticks come from the time-stamp counter.
    pub fn from_tsc() -> bool {
        anchor().tsc.is_some()
    }

    /// The clock's name in results: `tsc` or `monotonic`.
    pub fn clock_name() -> &'static str {
        if Tick::from_tsc() { "tsc" } else { "monotonic" }
    }
}

/// A clock a timed wait reads: the runner's [`Tick`], or `Instant` where the deadline is one
/// (the NBD server's `--delay`, timed on the clock its requests are).
pub trait Deadline: Copy + Ord {
    /// Now, on this clock.
    fn now() -> Self;
    /// Nanoseconds from `now` to `self` (0 once it has passed).
    fn ns_after(self, now: Self) -> u64;
}

impl Deadline for Tick {
    #[inline]
    fn now() -> Tick {
        Tick::now()
    }
    #[inline]
    fn ns_after(self, now: Tick) -> u64 {
        self.ns_since(now)
    }
}

impl Deadline for Instant {
    #[inline]
    fn now() -> Instant {
        Instant::now()
    }
    #[inline]
    fn ns_after(self, now: Instant) -> u64 {
        self.saturating_duration_since(now)
            .as_nanos()
            .min(u64::MAX as u128) as u64
    }
}

/// Return at `deadline`, not before and only a little after: sleep until `spin_ns` before it (a
/// sleep overshoots by tens of µs) in sleeps of at most `stretch`, asking `stop` between them
/// (true ends the wait there), then spin the rest (`spin_ns` of `u64::MAX`: spin it all). Every
/// sleep-then-spin wait of readlab's, on the clock its deadline is on.
pub fn wait_until<D: Deadline>(
    deadline: D,
    spin_ns: u64,
    stretch: Duration,
    stop: &dyn Fn() -> bool,
) {
    loop {
        let now = D::now();
        if now >= deadline || stop() {
            return;
        }
        let rest = deadline.ns_after(now);
        if rest <= spin_ns {
            while D::now() < deadline {
                std::hint::spin_loop();
            }
            return;
        }
        std::thread::sleep(Duration::from_nanos(rest - spin_ns).min(stretch));
    }
}

#[cfg(target_arch = "x86_64")]
mod tsc {
    use std::time::{Duration, Instant};

    /// The kernel keeps time with the TSC only once it found it invariant and synchronised
    /// across CPUs (it switches away from it otherwise): trust the counter exactly then.
    pub(super) fn trusted() -> bool {
        let src = std::fs::read_to_string(
            "/sys/devices/system/clocksource/clocksource0/current_clocksource",
        );
        let flags = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let has = |f: &str| flags.split_whitespace().any(|w| w == f);
        src.is_ok_and(|s| s.trim() == "tsc") && has("constant_tsc") && has("nonstop_tsc")
    }

    #[inline]
    pub(super) fn read() -> u64 {
        // SAFETY: `rdtsc` only reads the time-stamp counter; every x86-64 CPU has it.
        unsafe { core::arch::x86_64::_rdtsc() }
    }

    #[inline]
    pub(super) fn to_ns(c: u64, c0: u64, mult: u64) -> u64 {
        // A read on another CPU just after calibration may be a few counts behind `c0`.
        ((c.saturating_sub(c0) as u128 * mult as u128) >> 32) as u64
    }

    /// A counter reading and the `Instant` it was taken at: the pair of the closest of a few
    /// tries (an interrupt between the reads would skew it).
    fn pair() -> (Instant, u64) {
        let mut best = (u64::MAX, Instant::now(), 0);
        for _ in 0..16 {
            let a = read();
            let t = Instant::now();
            let b = read();
            if b.wrapping_sub(a) < best.0 {
                best = (b.wrapping_sub(a), t, a / 2 + b / 2 + (a & b & 1));
            }
        }
        (best.1, best.2)
    }

    /// The counter's rate against CLOCK_MONOTONIC over 20 ms: (anchor, counter there, ns per
    /// count in 32.32 fixed point). An error of 100 ns in the pairs is 5 ppm, 0.5 ns of a
    /// 100 µs read. None when the counter does not advance with the clock.
    pub(super) fn calibrate() -> Option<(Instant, u64, u64)> {
        let (t0, c0) = pair();
        std::thread::sleep(Duration::from_millis(20));
        let (t1, c1) = pair();
        let ns = t1.duration_since(t0).as_nanos() as u64;
        let counts = c1.checked_sub(c0).filter(|&c| c > ns / 100)?;
        let mult = ((ns as u128) << 32) / counts as u128;
        Some((t0, c0, u64::try_from(mult).ok()?))
    }
}

#[cfg(not(target_arch = "x86_64"))]
mod tsc {
    use std::time::Instant;
    pub(super) fn trusted() -> bool {
        false
    }
    pub(super) fn read() -> u64 {
        0
    }
    pub(super) fn to_ns(_: u64, _: u64, _: u64) -> u64 {
        0
    }
    pub(super) fn calibrate() -> Option<(Instant, u64, u64)> {
        None
    }
}

/// Nanoseconds one [`Tick::now`] (the clock read that times every I/O) takes on this machine.
pub fn timer_cost_ns() -> f64 {
    for _ in 0..1_000 {
        black_box(Tick::now());
    }
    let n = 200_000u32;
    let t = Instant::now();
    for _ in 0..n {
        black_box(Tick::now());
    }
    t.elapsed().as_nanos() as f64 / n as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timer_cost_is_positive_and_small() {
        let c = super::timer_cost_ns();
        assert!(c > 0.0 && c < 100_000.0, "{c}");
    }

    /// The one wait returns at its deadline, not before, on either clock (sleeping then
    /// spinning, or spinning all of it); asked to stop, it returns at once.
    #[test]
    fn waits_end_at_their_deadline_on_either_clock_or_when_told_to_stop() {
        let t = Tick::now().plus_ns(2_000_000);
        wait_until(t, 100_000, Duration::from_micros(500), &|| false);
        assert!(Tick::now() >= t);
        for spin_ns in [60_000, u64::MAX] {
            let i = Instant::now() + Duration::from_millis(1);
            wait_until(i, spin_ns, Duration::MAX, &|| false);
            assert!(Instant::now() >= i);
        }
        let far = Instant::now() + Duration::from_secs(600);
        wait_until(far, 0, Duration::from_millis(1), &|| true);
        assert!(Instant::now() < far);
    }

    /// Ticks keep time with CLOCK_MONOTONIC: over 200 ms they agree within 0.1 % (a wrong
    /// calibration, e.g. the counter's rate taken as 1 GHz, is off by far more), and they never
    /// go backwards across threads. The probe-like line says which clock was used, so a machine
    /// without a trusted TSC shows it.
    #[test]
    fn ticks_follow_the_monotonic_clock() {
        eprintln!("ticks from the TSC: {}", Tick::from_tsc());
        let (i0, t0) = (Instant::now(), Tick::now());
        std::thread::sleep(Duration::from_millis(200));
        let (t1, i1) = (Tick::now(), Instant::now());
        let ticks = t1.ns_since(t0) as f64;
        let mono = i1.duration_since(i0).as_nanos() as f64;
        assert!(
            (ticks / mono - 1.0).abs() < 1e-3,
            "ticks {ticks} ns against CLOCK_MONOTONIC {mono} ns"
        );
        // Round trips through Instant, also for an Instant taken before the clock's first use.
        for t in [t1, Tick::from_instant(i0 - Duration::from_secs(5))] {
            let back = Tick::from_instant(t.to_instant());
            assert!(
                back.ns_since(t) < 1_000 && t.ns_since(back) < 1_000,
                "{t:?} {back:?}"
            );
        }
        assert_eq!(
            t0.ns_since(Tick::from_instant(i0 - Duration::from_secs(5))) / 1_000_000_000,
            5
        );
        // Monotonic across threads: a tick taken after another thread's is not earlier.
        for _ in 0..100 {
            let a = std::thread::spawn(Tick::now).join().unwrap();
            let b = Tick::now();
            assert!(b >= a, "{b:?} < {a:?}");
        }
    }
}
