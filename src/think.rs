//! fio's think time (`thinktime`, `thinktime_spin`, `thinktime_blocks`, `thinktime_iotime`) as a
//! validated setting, its one rule of when a pause falls due and how a pause splits into spinning
//! and sleeping: read by the job-file reader and the command line, carried by a run's
//! configuration, followed by the runner's workers (`runner::think`), written back in fio's words.

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Pauses between a worker's I/Os, as fio's `thinktime` makes them: once `blocks` I/Os have
/// completed since the last pause (or, with `iotime`, once that long was spent issuing), the
/// worker waits for every I/O it has in flight to complete (fio's quiesce: nothing is in flight
/// during a pause, whatever the depth), then pauses `think`, of which the first `spin` is spent
/// spinning on the CPU and the rest asleep (the last stretch of the sleep, shorter than the
/// system's sleep granularity, spun, as fio's `usec_sleep` does). A pause is never latency: each
/// read's latency is its own; IOPS falls. The counter is of completed I/Os (fio's default
/// `thinktime_blocks_type=complete`), ramp included; the last pause of a run that reads a fixed
/// amount (`--io-limit`, `loops`) comes after its last read and counts in its window, as fio's
/// runtime counts it; a pause is cut short at the runtime's end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ThinkTime {
    /// The pause, µs (fio's `thinktime`).
    pub think_us: u64,
    /// Of it, spent spinning on the CPU, µs (fio's `thinktime_spin`; 0: all asleep).
    #[serde(default)]
    pub spin_us: u64,
    /// Completed I/Os between two pauses (fio's `thinktime_blocks`); absent with `iotime_us`
    /// alone, which then is the only trigger (as in fio).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocks: Option<u64>,
    /// Time spent issuing between two pauses, µs (fio's `thinktime_iotime`): a pause falls due
    /// after this long, or after `blocks` I/Os when both are given, whichever comes first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iotime_us: Option<u64>,
}

/// The longest pause readlab takes: a minute (fio has no bound; a longer pause between reads is
/// a typo of its unit, fio reading a bare number as µs).
pub const MAX_THINK: Duration = Duration::from_secs(60);

impl ThinkTime {
    /// The one rule for think time, wherever it comes from (flags in readlab's spelling, `--thinktime`
    /// …, or fio's job-file words): a positive `thinktime` (0 is none, as in fio: then the others
    /// shape nothing and are refused), at most [`MAX_THINK`]; a spin within it; a positive count
    /// of blocks; a positive I/O time (its length is a run's rule, `RunConfig::think_problem`).
    /// `None` when no think time was asked.
    pub fn from_parts(
        think: Option<Duration>,
        spin: Option<Duration>,
        blocks: Option<u64>,
        iotime: Option<Duration>,
    ) -> Result<Option<ThinkTime>> {
        let think = think.filter(|d| !d.is_zero());
        let Some(think) = think else {
            if spin.is_some() || blocks.is_some() || iotime.is_some() {
                return Err(Error::invalid(
                    "--thinktime-spin, --thinktime-blocks and --thinktime-iotime shape the pauses of --thinktime; add --thinktime TIME or drop them",
                ));
            }
            return Ok(None);
        };
        if think > MAX_THINK {
            return Err(Error::invalid(format!(
                "--thinktime {} s is longer than readlab pauses (a minute); a bare number is µs, e.g. 100 or 100us",
                think.as_secs()
            )));
        }
        let spin = spin.unwrap_or_default();
        if spin > think {
            return Err(Error::invalid(format!(
                "--thinktime-spin {} µs is longer than --thinktime {} µs: the spin is the first part of the pause; give at most the pause",
                spin.as_micros(),
                think.as_micros()
            )));
        }
        if blocks == Some(0) {
            return Err(Error::invalid("--thinktime-blocks must be at least 1"));
        }
        if iotime.is_some_and(|i| i.is_zero()) {
            return Err(Error::invalid(
                "--thinktime-iotime must be positive (e.g. 9s), or left out",
            ));
        }
        let us = |d: Duration| d.as_micros() as u64;
        Ok(Some(ThinkTime {
            think_us: us(think).max(1),
            spin_us: us(spin),
            blocks: match (blocks, iotime) {
                (None, None) => Some(1),
                (b, _) => b,
            },
            iotime_us: iotime.map(|d| us(d).max(1)),
        }))
    }

    /// A think time from a profile or a result, checked again by [`ThinkTime::from_parts`]'s
    /// rule (it never went through the command line's parser).
    pub fn check(&self) -> Result<()> {
        let us = Duration::from_micros;
        let same = ThinkTime::from_parts(
            Some(us(self.think_us)),
            Some(us(self.spin_us)),
            self.blocks,
            self.iotime_us.map(us),
        )?;
        match same {
            Some(_) if self.blocks.is_some() || self.iotime_us.is_some() => Ok(()),
            _ => Err(Error::invalid(
                "a think time needs a positive --thinktime and --thinktime-blocks or --thinktime-iotime",
            )),
        }
    }

    /// Whether a pause is due: `done` I/Os completed since the last one, `issuing_ns` spent since
    /// it ended (or since the run began). fio's `handle_thinktime`.
    pub fn due(&self, done: u64, issuing_ns: u64) -> bool {
        self.blocks.is_some_and(|b| done >= b)
            || self.iotime_us.is_some_and(|t| issuing_ns >= t * 1000)
    }

    /// One pause with `left_ns` before the run's end: how long to spin, then to sleep, ns (a
    /// pause is cut at the end, the spin first, as fio's is at its runtime).
    pub fn split(&self, left_ns: u64) -> (u64, u64) {
        let spin = (self.spin_us * 1000).min(left_ns);
        let sleep = ((self.think_us - self.spin_us) * 1000).min(left_ns - spin);
        (spin, sleep)
    }

    /// The pause in words, as the report says it: `2 ms every 4 I/Os, 500 µs of it spinning`.
    pub fn words(&self) -> String {
        let t = |us: u64| crate::units::format_ns(us as f64 * 1e3, crate::units::Style::Table);
        let mut s = t(self.think_us);
        match (self.blocks, self.iotime_us) {
            (Some(1), None) => s.push_str(" after every I/O"),
            (Some(b), None) => s.push_str(&format!(" every {b} I/Os")),
            (None, Some(i)) => s.push_str(&format!(" every {} of I/O", t(i))),
            (Some(b), Some(i)) => s.push_str(&format!(" every {b} I/Os or {} of I/O", t(i))),
            (None, None) => {}
        }
        if self.spin_us == self.think_us {
            s.push_str(", all spinning");
        } else if self.spin_us > 0 {
            s.push_str(&format!(", {} of it spinning", t(self.spin_us)));
        }
        s
    }
}

/// fio's time of a think-time option: a bare number is µs (`thinktime=100`), or seconds for
/// `thinktime_iotime` (`seconds`); with a unit, as readlab reads durations (`100us`, `2ms`).
pub fn fio_time(word: &str, seconds: bool) -> Result<Duration> {
    let t = word.trim();
    if let Ok(n) = t.parse::<u64>() {
        return Ok(if seconds {
            Duration::from_secs(n)
        } else {
            Duration::from_micros(n)
        });
    }
    crate::size::parse_duration(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(n: u64) -> Option<Duration> {
        Some(Duration::from_micros(n))
    }

    #[test]
    fn a_pause_is_due_every_n_blocks_or_after_its_io_time() {
        let t = ThinkTime::from_parts(us(2000), None, Some(4), None)
            .unwrap()
            .unwrap();
        let due: Vec<u64> = (0..10).filter(|&n| t.due(n, u64::MAX)).collect();
        assert_eq!(due, (4..10).collect::<Vec<_>>());
        // Without a count, one pause per I/O (fio's default of 1).
        let every = ThinkTime::from_parts(us(10), None, None, None)
            .unwrap()
            .unwrap();
        assert_eq!(every.blocks, Some(1));
        assert!(!every.due(0, 0) && every.due(1, 0));
        // thinktime_iotime alone: the count does not trigger (fio's default 1 is dropped).
        let io = ThinkTime::from_parts(us(10), None, None, Some(Duration::from_millis(5)))
            .unwrap()
            .unwrap();
        assert_eq!(io.blocks, None);
        assert!(!io.due(1000, 4_999_999) && io.due(0, 5_000_000));
        // Both: whichever comes first.
        let both = ThinkTime::from_parts(us(10), None, Some(8), Some(Duration::from_millis(5)))
            .unwrap()
            .unwrap();
        assert!(both.due(8, 0) && both.due(1, 5_000_000) && !both.due(7, 4_000_000));
    }

    #[test]
    fn a_pause_spins_first_then_sleeps_and_stops_at_the_end() {
        let t = ThinkTime::from_parts(us(2000), us(500), None, None)
            .unwrap()
            .unwrap();
        assert_eq!(t.split(u64::MAX), (500_000, 1_500_000));
        assert_eq!(t.split(1_000_000), (500_000, 500_000));
        assert_eq!(t.split(100_000), (100_000, 0));
        let all = ThinkTime::from_parts(us(2000), us(2000), None, None)
            .unwrap()
            .unwrap();
        assert_eq!(all.split(u64::MAX), (2_000_000, 0));
        assert_eq!(all.words(), "2.00ms after every I/O, all spinning");
        assert_eq!(t.words(), "2.00ms after every I/O, 500.0us of it spinning");
    }

    #[test]
    fn what_cannot_be_is_refused_and_zero_is_none() {
        let bad = |t, s, b, i| ThinkTime::from_parts(t, s, b, i).unwrap_err().to_string();
        assert!(bad(us(100), us(200), None, None).contains("longer than --thinktime"));
        assert!(bad(us(100), None, Some(0), None).contains("at least 1"));
        assert!(bad(None, us(10), None, None).contains("add --thinktime"));
        assert!(bad(Some(Duration::from_secs(61)), None, None, None).contains("a minute"));
        assert_eq!(
            ThinkTime::from_parts(us(0), None, None, None).unwrap(),
            None
        );
        assert_eq!(ThinkTime::from_parts(None, None, None, None).unwrap(), None);
    }

    #[test]
    fn a_bare_number_is_fios_unit() {
        assert_eq!(fio_time("100", false).unwrap(), Duration::from_micros(100));
        assert_eq!(fio_time("9", true).unwrap(), Duration::from_secs(9));
        assert_eq!(fio_time("2ms", false).unwrap(), Duration::from_millis(2));
        assert_eq!(fio_time("100us", true).unwrap(), Duration::from_micros(100));
        assert!(fio_time("soon", false).is_err());
    }
}
