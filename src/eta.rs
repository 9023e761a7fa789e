//! How long is left of a series of measurements (a study's points, a multi-configuration run, its
//! repetitions): one estimate for every display, on a terminal or in plain lines, so the time a
//! study says it needs is computed once. Each point is planned at its ramp plus runtime; the
//! points already finished say how far the real time (set-up, verification, stopping once stable,
//! repetitions) strays from the plan, and the rest are scaled by that. The clock is the caller's
//! (instants passed in), so the estimate is tested with a scripted clock.

use crate::config::RunConfig;
use std::time::{Duration, Instant};

/// Set-up a point is assumed to cost beyond its ramp and runtime until one has been measured.
pub const FIRST_GUESS_OVERHEAD: Duration = Duration::from_millis(300);

/// What a point is planned to take: its ramp and its runtime (an upper bound for a point that
/// stops once stable or after an I/O limit).
pub fn planned(cfg: &RunConfig) -> Duration {
    cfg.ramp + cfg.runtime
}

/// What each point of a series (in the order they run) is planned to take: its ramp and runtime,
/// and for the first of each shape readlab's own cost is measured in, that measurement's window
/// (the later points of the shape take its figure: `crate::runner::null_cost`). Planning every
/// point alike would have the estimate scaled by the first points, which measure, and the rest
/// overestimated.
pub fn planned_series<'a>(cfgs: impl IntoIterator<Item = &'a RunConfig>) -> Vec<Duration> {
    use crate::runner::{SELF_COST_WINDOW, measures_self, same_shape};
    let mut measured: Vec<&RunConfig> = Vec::new();
    cfgs.into_iter()
        .map(|c| {
            let first = measures_self(c) && !measured.iter().any(|m| same_shape(m, c));
            if first {
                measured.push(c);
                planned(c) + SELF_COST_WINDOW
            } else {
                planned(c)
            }
        })
        .collect()
}

/// The estimate of what is left of a series of points.
#[derive(Debug, Clone)]
pub struct Eta {
    /// Every point's planned duration, in the order they run.
    planned: Vec<Duration>,
    /// Points finished (measured, skipped or failed).
    done: usize,
    /// The finished points' planned and real durations, summed.
    planned_done: Duration,
    took_done: Duration,
    /// When the point in flight started (the previous one ended), None before [`Eta::begin`].
    mark: Option<Instant>,
}

impl Eta {
    /// A series of points, each planned to take its duration.
    pub fn new(planned: Vec<Duration>) -> Eta {
        Eta {
            planned,
            done: 0,
            planned_done: Duration::ZERO,
            took_done: Duration::ZERO,
            mark: None,
        }
    }

    /// The first point starts at `at`.
    pub fn begin(&mut self, at: Instant) {
        self.mark = Some(at);
    }

    /// The point in flight ended at `at` (measured, skipped or failed: the time it took counts).
    pub fn point_done(&mut self, at: Instant) {
        let Some(&p) = self.planned.get(self.done) else {
            return;
        };
        let started = self.mark.unwrap_or(at);
        self.took_done += at.saturating_duration_since(started);
        self.planned_done += p;
        self.done += 1;
        self.mark = Some(at);
    }

    /// Points finished, and how many there are.
    pub fn progress(&self) -> (usize, usize) {
        (self.done, self.planned.len())
    }

    /// What point `p` is expected to take: its plan scaled by how the finished points compared
    /// with theirs, or before any finished, its plan and a first guess at the set-up.
    fn expected(&self, p: Duration) -> Duration {
        if self.done == 0 || self.planned_done.is_zero() {
            return p + FIRST_GUESS_OVERHEAD;
        }
        let scale = self.took_done.as_secs_f64() / self.planned_done.as_secs_f64();
        Duration::from_secs_f64(p.as_secs_f64() * scale).max(Duration::from_secs_f64(
            self.took_done.as_secs_f64() / self.done as f64 * 0.1,
        ))
    }

    /// The time left at `at`: the point in flight's expected rest, then every later point's.
    pub fn remaining(&self, at: Instant) -> Duration {
        let Some(&current) = self.planned.get(self.done) else {
            return Duration::ZERO;
        };
        let in_flight = self
            .mark
            .map_or(Duration::ZERO, |m| at.saturating_duration_since(m));
        let rest: Duration = self.planned[self.done + 1..]
            .iter()
            .map(|&p| self.expected(p))
            .sum();
        self.expected(current).saturating_sub(in_flight) + rest
    }
}

/// A time left as people read it: `45s`, `1m20s`, `2h05m`.
pub fn format(d: Duration) -> String {
    let s = d.as_secs_f64().round() as u64;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A clock that only moves when the test says so.
    struct Scripted {
        origin: Instant,
        now: Duration,
    }

    impl Scripted {
        fn new() -> Scripted {
            Scripted {
                origin: Instant::now(),
                now: Duration::ZERO,
            }
        }
        fn advance(&mut self, d: Duration) -> Instant {
            self.now += d;
            self.at()
        }
        fn at(&self) -> Instant {
            self.origin + self.now
        }
    }

    fn secs(s: f64) -> Duration {
        Duration::from_secs_f64(s)
    }

    fn within(got: Duration, want: Duration, frac: f64) -> bool {
        (got.as_secs_f64() - want.as_secs_f64()).abs() <= frac * want.as_secs_f64()
    }

    #[test]
    fn the_estimate_after_the_first_points_ends_within_a_fifth_of_the_real_time() {
        // 16 points planned at 1.2 s (1 s runtime, 0.2 s ramp), each really taking 1.5 s
        // (set-up, verification, storing), with a little jitter.
        let plan = vec![secs(1.2); 16];
        let real: Vec<Duration> = (0..16)
            .map(|i| secs(1.5 + if i % 2 == 0 { 0.1 } else { -0.1 }))
            .collect();
        let total: Duration = real.iter().sum();
        let mut clock = Scripted::new();
        let mut eta = Eta::new(plan);
        eta.begin(clock.at());
        // Before anything finished: the plan plus a first guess.
        assert!(within(eta.remaining(clock.at()), total, 0.2));
        let mut elapsed = Duration::ZERO;
        for (i, r) in real.iter().enumerate() {
            // Half-way through this point.
            let half = clock.advance(*r / 2);
            let left = total - elapsed - *r / 2;
            if i >= 1 {
                assert!(
                    within(eta.remaining(half), left, 0.2),
                    "point {i}: said {:?}, really {left:?}",
                    eta.remaining(half)
                );
            }
            eta.point_done(clock.advance(*r - *r / 2));
            elapsed += *r;
        }
        assert_eq!(eta.remaining(clock.at()), Duration::ZERO);
        assert_eq!(eta.progress(), (16, 16));
    }

    #[test]
    fn points_that_stop_early_shrink_the_estimate_and_a_late_point_never_goes_negative() {
        // Planned at 32 s (stop once stable), really stopping after 8 s.
        let mut clock = Scripted::new();
        let mut eta = Eta::new(vec![secs(32.0); 5]);
        eta.begin(clock.at());
        assert!(eta.remaining(clock.at()) > secs(160.0));
        for _ in 0..2 {
            eta.point_done(clock.advance(secs(8.0)));
        }
        assert!(within(eta.remaining(clock.at()), secs(24.0), 0.01));
        // The third point runs long: its rest is nothing, the two after it still count.
        let late = clock.advance(secs(20.0));
        assert!(within(eta.remaining(late), secs(16.0), 0.01));
    }

    #[test]
    fn times_left_read_as_people_say_them() {
        assert_eq!(format(secs(0.4)), "0s");
        assert_eq!(format(secs(45.0)), "45s");
        assert_eq!(format(secs(80.0)), "1m20s");
        assert_eq!(format(secs(3600.0 + 5.0 * 60.0)), "1h05m");
    }

    #[test]
    fn the_first_point_of_each_shape_is_planned_with_its_self_measurement() {
        use crate::engine::EngineKind;
        use crate::runner::SELF_COST_WINDOW as W;
        let at = |engine: EngineKind, iodepth: usize| {
            let mut c = RunConfig::new("/t");
            (c.engine, c.iodepth, c.runtime) = (engine, iodepth, Duration::from_secs(1));
            c
        };
        let cfgs = [
            at(EngineKind::Psync, 1),
            at(EngineKind::Pvsync2, 1),
            at(EngineKind::Libaio, 8),
            at(EngineKind::Uring, 8),
            at(EngineKind::Null, 1),
            at(EngineKind::Libaio, 16),
        ];
        let s = Duration::from_secs(1);
        // pvsync2 QD1 is psync's shape, uring QD8 libaio's; the null engine measures nothing.
        assert_eq!(planned_series(&cfgs), [s + W, s, s + W, s, s, s + W]);
    }
}
