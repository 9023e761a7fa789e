//! What a fleet needs from MPI, and nothing more: byte-level collectives that give up after a
//! deadline (a rank stuck in set-up or gone must never hang the others), ping-pong clock
//! exchanges with rank 0, and ending the whole job. [`Solo`] is the fleet of one process.

use crate::error::Result;
use std::time::Duration;

/// The collectives a fleet uses. Every rank calls the same ones in the same order; each waits at
/// most `within` for every rank to arrive, then fails with
/// [`Error::FleetStuck`](crate::error::Error::FleetStuck) naming `at`, after which the job can
/// only be aborted.
pub trait Comm {
    fn rank(&self) -> usize;
    fn size(&self) -> usize;
    /// Rank among the ranks sharing this node.
    fn local_rank(&self) -> usize;
    /// Every rank's bytes, in rank order, on every rank.
    fn all_gather(&self, mine: &[u8], within: Duration, at: &str) -> Result<Vec<Vec<u8>>>;
    /// Every rank's bytes on rank 0, in rank order; None on the others.
    fn gather(&self, mine: &[u8], within: Duration, at: &str) -> Result<Option<Vec<Vec<u8>>>>;
    /// Rank 0's bytes (`root`, ignored elsewhere) on every rank.
    fn broadcast(&self, root: &[u8], within: Duration, at: &str) -> Result<Vec<u8>>;
    /// `n` ping-pong exchanges of every rank with rank 0, reading `clock`: on a rank r > 0 the
    /// triples (r's clock when sent, rank 0's clock when it answered, r's clock when the answer
    /// came); on rank 0 nothing, once it has answered every rank.
    fn clock_exchanges(
        &self,
        n: usize,
        clock: fn() -> i64,
        within: Duration,
        at: &str,
    ) -> Result<Vec<[i64; 3]>>;
    /// End every rank of the job at once.
    fn abort(&self, code: i32) -> !;
}

/// A fleet of one process: every collective returns at once.
pub struct Solo;

impl Comm for Solo {
    fn rank(&self) -> usize {
        0
    }

    fn size(&self) -> usize {
        1
    }

    fn local_rank(&self) -> usize {
        0
    }

    fn all_gather(&self, mine: &[u8], _: Duration, _: &str) -> Result<Vec<Vec<u8>>> {
        Ok(vec![mine.to_vec()])
    }

    fn gather(&self, mine: &[u8], _: Duration, _: &str) -> Result<Option<Vec<Vec<u8>>>> {
        Ok(Some(vec![mine.to_vec()]))
    }

    fn broadcast(&self, root: &[u8], _: Duration, _: &str) -> Result<Vec<u8>> {
        Ok(root.to_vec())
    }

    fn clock_exchanges(
        &self,
        _: usize,
        _: fn() -> i64,
        _: Duration,
        _: &str,
    ) -> Result<Vec<[i64; 3]>> {
        Ok(Vec::new())
    }

    fn abort(&self, code: i32) -> ! {
        std::process::exit(code)
    }
}
