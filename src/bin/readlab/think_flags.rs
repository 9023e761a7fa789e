//! `readlab run`'s think-time and loop flags, in fio's spelling (`--thinktime 100us`,
//! `--thinktime-blocks 4`, `--thinktime-spin 20us`, `--thinktime-iotime 9s`, `--loops 3`; fio's
//! underscores too), turned into the library's validated types (`readlab::think`).

use crate::args::{REPLAYS, count};
use clap::Args;
use readlab::error::Error;
use readlab::think::ThinkTime;
use std::time::Duration;

/// A think-time flag's value: a bare number is µs, as in fio (`--thinktime 100`).
fn usecs(s: &str) -> Result<Duration, Error> {
    readlab::think::fio_time(s, false)
}

/// `--thinktime-iotime`'s value: a bare number is seconds, as in fio.
fn secs(s: &str) -> Result<Duration, Error> {
    readlab::think::fio_time(s, true)
}

/// Pauses between a worker's I/Os, and reading the range several times (fio's words).
#[derive(Args, Debug)]
pub struct ThinkFlags {
    /// Pause this long after every --thinktime-blocks completed I/Os (a bare number is µs, as
    /// in fio: 100, 100us, 2ms): the worker lets its queue empty, then pauses; no read's latency
    /// holds the pause, IOPS falls. fio's --thinktime.
    #[arg(long, allow_hyphen_values = true, value_parser = usecs, conflicts_with_all = REPLAYS)]
    pub thinktime: Option<Duration>,
    /// Of each pause, spin on the CPU this long first, then sleep the rest (µs when bare).
    #[arg(long, alias = "thinktime_spin", allow_hyphen_values = true, value_parser = usecs, conflicts_with_all = REPLAYS)]
    pub thinktime_spin: Option<Duration>,
    /// Completed I/Os between two pauses [default: 1].
    #[arg(long, alias = "thinktime_blocks", allow_hyphen_values = true, value_parser = count, conflicts_with_all = REPLAYS)]
    pub thinktime_blocks: Option<usize>,
    /// Pause after this long of I/O too (seconds when bare), or after --thinktime-blocks I/Os
    /// when both are given, whichever comes first.
    #[arg(long, alias = "thinktime_iotime", allow_hyphen_values = true, value_parser = secs, conflicts_with_all = REPLAYS)]
    pub thinktime_iotime: Option<Duration>,
    /// Read a fixed amount N times, then end (--runtime is then the upper bound): each thread
    /// its --io-limit, else its part of the range (its stripe in order, the range's size at
    /// random). Not --repeat, which measures N runs. fio's --loops.
    #[arg(long, allow_hyphen_values = true, value_parser = count, conflicts_with_all = REPLAYS)]
    pub loops: Option<usize>,
}

impl ThinkFlags {
    /// The think time the flags ask for (the others refused without --thinktime).
    pub fn think(&self) -> Result<Option<ThinkTime>, Error> {
        ThinkTime::from_parts(
            self.thinktime,
            self.thinktime_spin,
            self.thinktime_blocks.map(|b| b as u64),
            self.thinktime_iotime,
        )
    }
}
