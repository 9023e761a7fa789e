//! The uring loop's side of the buffer budget (the budget itself and the buffers are in
//! `serve/budget.rs`): the memory a read takes (the connection's one request outside the budget,
//! or bytes from it, or a wait and a retry), and what a finished request gives back.

use crate::serve::budget::{Budget, BufCache, CACHE_CAP, FLOOR, PayloadBuf, class};
use std::time::{Duration, Instant};

/// How soon a connection waiting for the in-flight budget tries again.
pub(super) const STARVED_RETRY: Duration = Duration::from_millis(1);

/// One loop's buffers and who waits for the budget.
pub(super) struct Memory {
    /// Idle buffers by size class, byte-capped, released when unused.
    pub(super) cache: BufCache,
    /// Connections waiting for the in-flight budget.
    pub(super) starved: Vec<usize>,
}

impl Memory {
    pub(super) fn new() -> Memory {
        Memory {
            cache: BufCache::new(CACHE_CAP),
            starved: Vec::new(),
        }
    }

    /// Memory for a `len`-byte read on connection `i`, whose one request outside the budget is
    /// in use when `floor_used`: (outside the budget, bytes taken from it), or None when the
    /// budget has not got it (the connection waits, retried shortly).
    pub(super) fn take(
        &mut self,
        budget: &Budget,
        i: usize,
        len: u32,
        floor_used: &mut bool,
    ) -> Option<(bool, u64)> {
        let size = class(len as usize);
        if !*floor_used && size <= FLOOR {
            *floor_used = true;
            return Some((true, 0));
        }
        if budget.try_take(size as u64) {
            return Some((false, size as u64));
        }
        self.starved.push(i);
        None
    }

    /// What a finished request held goes back: the bytes `charged` to the budget, and its
    /// buffer to the cache.
    pub(super) fn give(
        &mut self,
        budget: &Budget,
        charged: u64,
        buf: Option<PayloadBuf>,
        now: Instant,
    ) {
        if charged > 0 {
            budget.give(charged);
        }
        if let Some(b) = buf {
            self.cache.put(b, now);
        }
    }
}
