//! The adapter that turns any synchronous `read_at` into an engine: a queued I/O is read during
//! `submit`, and `reap` hands back what was read.

use super::spec::{Completion, Engine, Io};
use crate::buffer::BufferPool;
use crate::error::Result;

/// A synchronous read interface: read `buf.len()` bytes at `offset` of file `file` (an index
/// into the job's files, as [`Io::file`] counts them).
pub trait SyncRead {
    fn read_at(&mut self, file: usize, buf: &mut [u8], offset: u64) -> std::io::Result<usize>;
}

pub struct SyncEngine<R> {
    reader: R,
    pool: BufferPool,
    queued: Vec<Io>,
    done: Vec<Completion>,
}

impl<R: SyncRead> SyncEngine<R> {
    pub fn new(reader: R, pool: BufferPool) -> Self {
        SyncEngine {
            reader,
            queued: Vec::with_capacity(pool.slots()),
            done: Vec::with_capacity(pool.slots()),
            pool,
        }
    }
}

impl<R: SyncRead> Engine for SyncEngine<R> {
    fn queue(&mut self, io: Io) -> Result<()> {
        self.queued.push(io);
        Ok(())
    }

    fn submit(&mut self) -> Result<usize> {
        let n = self.queued.len();
        for io in self.queued.drain(..) {
            let buf = self.pool.slot_mut(io.token as usize, io.len as usize);
            let res = match self.reader.read_at(io.file as usize, buf, io.offset) {
                Ok(n) => n as i64,
                Err(e) => -(e.raw_os_error().unwrap_or(libc::EIO) as i64),
            };
            self.done.push(Completion::new(io.token, res));
        }
        Ok(n)
    }

    fn reap_at_most(
        &mut self,
        _min: usize,
        max: usize,
        out: &mut Vec<Completion>,
    ) -> Result<usize> {
        let n = self.done.len().min(max);
        out.extend(self.done.drain(..n));
        Ok(n)
    }

    fn buffer(&self, token: u32, len: usize) -> &[u8] {
        self.pool.slot(token as usize, len)
    }
}
