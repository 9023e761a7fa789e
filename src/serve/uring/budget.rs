//! The uring loop's side of the buffer budget (the budget itself and the buffers are in
//! `serve/budget.rs`): the memory a read takes (the connection's one request outside the budget,
//! or bytes from it, or a wait and a retry), and what a finished request gives back.

use super::Loop;
use crate::serve::budget::{FLOOR, class};
use std::time::Duration;

/// How soon a connection waiting for the in-flight budget tries again.
pub(super) const STARVED_RETRY: Duration = Duration::from_millis(1);

impl Loop<'_> {
    /// Memory for a `len`-byte read on connection `i`: (outside the budget, bytes taken from it),
    /// or None when the budget has not got it (the connection waits, retried shortly).
    pub(super) fn memory(&mut self, i: usize, len: u32) -> Option<(bool, u64)> {
        let size = class(len as usize);
        let c = self.conns[i].as_mut().unwrap();
        if !c.floor_used && size <= FLOOR {
            c.floor_used = true;
            return Some((true, 0));
        }
        if self.ctx.budget.try_take(size as u64) {
            return Some((false, size as u64));
        }
        c.starved = true;
        self.starved.push(i);
        None
    }

    /// Request `r` of connection `i` is done with: its bytes, its buffer and its share of the
    /// budget go back.
    pub(super) fn release(&mut self, i: usize, r: usize) {
        let c = self.conns[i].as_mut().unwrap();
        let q = c.reqs[r].take().unwrap();
        c.free.push(r);
        c.bytes_in_flight -= q.len as u64;
        if q.floor {
            c.floor_used = false;
        }
        if q.charged > 0 {
            self.ctx.budget.give(q.charged);
        }
        if let Some(b) = q.buf {
            self.cache.put(b, self.active);
        }
    }

    /// The connections that waited for the budget try again.
    pub(super) fn retry_starved(&mut self) {
        for i in std::mem::take(&mut self.starved) {
            if let Some(c) = self.conns[i].as_mut() {
                c.starved = false;
                self.touched.push(i);
            }
        }
    }
}
