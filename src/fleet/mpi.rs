//! The fleet's collectives over MPI (rsmpi, feature `mpi`). Every collective first meets at a
//! non-blocking barrier polled against its deadline, so a rank stuck in set-up or gone turns into
//! an error instead of a hang; once everybody has arrived, the data moves with ordinary blocking
//! collectives. Only the thread that initialised MPI calls it (MPI_THREAD_FUNNELED).

use super::comm::Comm;
use crate::error::{Error, Result};
use mpi::collective::{CommunicatorCollectives, Root};
use mpi::datatype::PartitionMut;
use mpi::environment::Universe;
use mpi::point_to_point::{Destination, Source};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::{Count, Threading};
use std::time::{Duration, Instant};

pub struct Mpi {
    /// Finalises MPI when dropped.
    _universe: Universe,
    world: SimpleCommunicator,
    local_rank: usize,
}

impl Mpi {
    pub fn init() -> Result<Mpi> {
        let (universe, _) = mpi::initialize_with_threading(Threading::Funneled)
            .ok_or_else(|| Error::Mpi("MPI was initialised twice in one process".into()))?;
        let world = universe.world();
        let local_rank = world.split_shared(world.rank()).rank() as usize;
        Ok(Mpi {
            _universe: universe,
            world,
            local_rank,
        })
    }

    /// Meet every rank at a non-blocking barrier, or give up after `within`.
    fn arrive(&self, within: Duration, at: &str) -> Result<()> {
        let start = Instant::now();
        let mut req = self.world.immediate_barrier();
        let mut pause = Duration::from_micros(1);
        loop {
            req = match req.test() {
                Ok(_) => return Ok(()),
                Err(r) => r,
            };
            if start.elapsed() > within {
                // The barrier can never complete now; it is left to the abort that follows.
                std::mem::forget(req);
                return Err(Error::FleetStuck(format!(
                    "rank {}: not every rank reached the {at} step within {} s (a rank is stuck or gone); aborting the job",
                    self.world.rank(),
                    within.as_secs()
                )));
            }
            if pause > Duration::from_micros(1) {
                std::thread::sleep(pause);
            } else {
                std::thread::yield_now();
            }
            if start.elapsed() > Duration::from_millis(2) {
                pause = (pause * 2).min(Duration::from_millis(1));
            }
        }
    }

    fn counts(&self, len: usize) -> Result<Count> {
        Count::try_from(len)
            .map_err(|_| Error::Mpi(format!("{len} bytes are too many for one MPI message")))
    }
}

/// Byte counts and their displacements, as MPI's varcount collectives want them.
fn layout(lens: &[Count]) -> (Vec<Count>, usize) {
    let mut displs = Vec::with_capacity(lens.len());
    let mut at: Count = 0;
    for &n in lens {
        displs.push(at);
        at += n;
    }
    (displs, at as usize)
}

fn split(buf: &[u8], lens: &[Count], displs: &[Count]) -> Vec<Vec<u8>> {
    lens.iter()
        .zip(displs)
        .map(|(&n, &d)| buf[d as usize..(d + n) as usize].to_vec())
        .collect()
}

impl Comm for Mpi {
    fn rank(&self) -> usize {
        self.world.rank() as usize
    }

    fn size(&self) -> usize {
        self.world.size() as usize
    }

    fn local_rank(&self) -> usize {
        self.local_rank
    }

    fn all_gather(&self, mine: &[u8], within: Duration, at: &str) -> Result<Vec<Vec<u8>>> {
        self.arrive(within, at)?;
        let n = self.counts(mine.len())?;
        let mut lens = vec![0 as Count; self.size()];
        self.world.all_gather_into(&n, &mut lens[..]);
        let (displs, total) = layout(&lens);
        let mut buf = vec![0u8; total];
        {
            let mut part = PartitionMut::new(&mut buf[..], &lens[..], &displs[..]);
            self.world.all_gather_varcount_into(mine, &mut part);
        }
        Ok(split(&buf, &lens, &displs))
    }

    fn gather(&self, mine: &[u8], within: Duration, at: &str) -> Result<Option<Vec<Vec<u8>>>> {
        self.arrive(within, at)?;
        let n = self.counts(mine.len())?;
        let root = self.world.process_at_rank(0);
        if self.rank() != 0 {
            root.gather_into(&n);
            root.gather_varcount_into(mine);
            return Ok(None);
        }
        let mut lens = vec![0 as Count; self.size()];
        root.gather_into_root(&n, &mut lens[..]);
        let (displs, total) = layout(&lens);
        let mut buf = vec![0u8; total];
        {
            let mut part = PartitionMut::new(&mut buf[..], &lens[..], &displs[..]);
            root.gather_varcount_into_root(mine, &mut part);
        }
        Ok(Some(split(&buf, &lens, &displs)))
    }

    fn broadcast(&self, root_bytes: &[u8], within: Duration, at: &str) -> Result<Vec<u8>> {
        self.arrive(within, at)?;
        let root = self.world.process_at_rank(0);
        let mut n: Count = if self.rank() == 0 {
            self.counts(root_bytes.len())?
        } else {
            0
        };
        root.broadcast_into(&mut n);
        let mut buf = if self.rank() == 0 {
            root_bytes.to_vec()
        } else {
            vec![0u8; n as usize]
        };
        root.broadcast_into(&mut buf[..]);
        Ok(buf)
    }

    fn clock_exchanges(
        &self,
        n: usize,
        clock: fn() -> i64,
        within: Duration,
        at: &str,
    ) -> Result<Vec<[i64; 3]>> {
        self.arrive(within, at)?;
        let mut out = Vec::new();
        if self.rank() == 0 {
            for r in 1..self.world.size() {
                let p = self.world.process_at_rank(r);
                for _ in 0..n {
                    let _: (i64, _) = p.receive();
                    p.send(&clock());
                }
            }
        } else {
            let p = self.world.process_at_rank(0);
            for _ in 0..n {
                let sent = clock();
                p.send(&sent);
                let (root, _): (i64, _) = p.receive();
                out.push([sent, root, clock()]);
            }
        }
        Ok(out)
    }

    fn abort(&self, code: i32) -> ! {
        self.world.abort(code)
    }
}
