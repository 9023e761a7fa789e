//! The server's memory, bounded whatever its clients do: payload buffers in power-of-two size
//! classes, each mapped and unmapped whole (so a freed buffer goes back to the system at once,
//! never into an allocator's free lists), a byte-capped cache of idle buffers that releases what
//! went unused for a while, and the budget of payload bytes in flight that every connection of
//! both models draws from. A connection over the budget is not read until replies drain.
//!
//! What the server may hold, at most: `--max-in-flight` of payload (128 MiB by default), plus one
//! request of up to [`FLOOR`] per connection outside it (so a client reading 4 KiB at a time is
//! served even while others hold the whole budget), plus a [`CACHE_CAP`] cache per event loop of
//! the uring model, plus a 64 KiB receive buffer per connection.

use std::collections::VecDeque;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// Payload bytes in flight across all connections unless `--max-in-flight` says otherwise.
pub const DEFAULT_MAX_IN_FLIGHT: u64 = 128 << 20;
/// Bytes of idle buffers one event loop keeps for reuse.
pub const CACHE_CAP: usize = 32 << 20;
/// A cached buffer unused this long is released.
pub const CACHE_IDLE: Duration = Duration::from_secs(1);
/// One request (or the thread model's first buffer slot) of up to this many bytes per connection
/// is outside the budget: every connection can always make progress.
pub const FLOOR: usize = 256 << 10;
/// The smallest size class.
const MIN_CLASS: usize = 4096;
/// Size classes from 4 KiB to 2^(12 + CLASSES - 1) B (the 32 MiB largest request fits).
const CLASSES: usize = 14;

/// The size class of a `len`-byte payload: the next power of two, at least 4 KiB.
pub fn class(len: usize) -> usize {
    len.max(MIN_CLASS).next_power_of_two()
}

fn class_index(size: usize) -> usize {
    (size.trailing_zeros() - MIN_CLASS.trailing_zeros()) as usize
}

/// A page-aligned buffer of one size class, mapped on its own.
pub struct PayloadBuf {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: PayloadBuf uniquely owns its mapping, like a Box<[u8]>.
unsafe impl Send for PayloadBuf {}

impl PayloadBuf {
    /// Map `size` bytes (a size class); zeroed by the kernel.
    fn new(size: usize) -> PayloadBuf {
        // SAFETY: a fresh anonymous private mapping aliases nothing.
        let p = unsafe {
            rustix::mm::mmap_anonymous(
                std::ptr::null_mut(),
                size,
                rustix::mm::ProtFlags::READ | rustix::mm::ProtFlags::WRITE,
                rustix::mm::MapFlags::PRIVATE,
            )
        }
        .unwrap_or_else(|e| panic!("cannot map a {size} B buffer: {e}"));
        PayloadBuf {
            ptr: NonNull::new(p.cast()).expect("mmap returns a non-null address"),
            len: size,
        }
    }
}

impl std::ops::Deref for PayloadBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: the mapping is `len` bytes, readable, and lives as long as `self`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl std::ops::DerefMut for PayloadBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as for `deref`, and `&mut self` makes this the only reference.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for PayloadBuf {
    fn drop(&mut self) {
        // SAFETY: the mapping was made by `new` with this length and nothing refers to it now.
        let _ = unsafe { rustix::mm::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}

/// Idle buffers by size class, newest last, at most `cap` bytes; one per event loop.
pub struct BufCache {
    classes: Vec<VecDeque<(PayloadBuf, Instant)>>,
    bytes: usize,
    cap: usize,
}

impl BufCache {
    pub fn new(cap: usize) -> BufCache {
        BufCache {
            classes: (0..CLASSES).map(|_| VecDeque::new()).collect(),
            bytes: 0,
            cap,
        }
    }

    /// A buffer of at least `len` bytes: the most recently used of its class, or a new one.
    pub fn get(&mut self, len: usize) -> PayloadBuf {
        let size = class(len);
        match self
            .classes
            .get_mut(class_index(size))
            .and_then(|c| c.pop_back())
        {
            Some((b, _)) => {
                self.bytes -= b.len;
                b
            }
            None => PayloadBuf::new(size),
        }
    }

    /// Keep `b` for reuse (it was last used at `now`), making room by releasing the buffers
    /// unused longest; a buffer larger than the cap is released.
    pub fn put(&mut self, b: PayloadBuf, now: Instant) {
        if b.len > self.cap || class_index(b.len) >= CLASSES {
            return;
        }
        while self.bytes + b.len > self.cap {
            let oldest = self
                .classes
                .iter()
                .enumerate()
                .filter_map(|(k, c)| c.front().map(|(_, t)| (*t, k)))
                .min();
            let Some((_, k)) = oldest else { break };
            let (old, _) = self.classes[k].pop_front().expect("a front buffer");
            self.bytes -= old.len;
        }
        self.bytes += b.len;
        self.classes[class_index(b.len)].push_back((b, now));
    }

    /// Release the buffers unused for `idle` or longer.
    pub fn trim(&mut self, now: Instant, idle: Duration) {
        for c in &mut self.classes {
            while c
                .front()
                .is_some_and(|(_, t)| now.duration_since(*t) >= idle)
            {
                let (b, _) = c.pop_front().expect("a front buffer");
                self.bytes -= b.len;
            }
        }
    }

    /// Bytes held.
    #[cfg(test)]
    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

/// Payload bytes in flight across every connection, at most `limit`.
pub struct Budget {
    limit: u64,
    used: AtomicU64,
    /// Threads blocked in [`Budget::take_blocking`].
    waiting: AtomicUsize,
    lock: Mutex<()>,
    freed: Condvar,
}

impl Budget {
    pub fn new(limit: u64) -> Budget {
        Budget {
            limit,
            used: AtomicU64::new(0),
            waiting: AtomicUsize::new(0),
            lock: Mutex::new(()),
            freed: Condvar::new(),
        }
    }

    /// Take `n` bytes if the budget has them.
    pub fn try_take(&self, n: u64) -> bool {
        self.used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |u| {
                (u + n <= self.limit).then_some(u + n)
            })
            .is_ok()
    }

    /// Give back `n` bytes taken before.
    pub fn give(&self, n: u64) {
        self.used.fetch_sub(n, Ordering::AcqRel);
        if self.waiting.load(Ordering::Acquire) > 0 {
            let _g = self.lock.lock().unwrap();
            self.freed.notify_all();
        }
    }

    /// Wait until `n` bytes are free and take them; false (nothing taken) once `stop` says so.
    pub fn take_blocking(&self, n: u64, stop: impl Fn() -> bool) -> bool {
        loop {
            if self.try_take(n) {
                return true;
            }
            if stop() {
                return false;
            }
            self.waiting.fetch_add(1, Ordering::AcqRel);
            let g = self.lock.lock().unwrap();
            // A bounded wait: a stop request is seen, and a wake-up lost to the race between
            // `try_take` and taking the lock costs at most this long.
            let _ = self.freed.wait_timeout(g, Duration::from_millis(50));
            self.waiting.fetch_sub(1, Ordering::AcqRel);
        }
    }

    /// Bytes in flight now.
    #[cfg(test)]
    pub fn used(&self) -> u64 {
        self.used.load(Ordering::Relaxed)
    }
}

/// Bytes taken from a [`Budget`], given back when dropped.
pub struct Lease<'a> {
    budget: &'a Budget,
    bytes: u64,
}

impl<'a> Lease<'a> {
    /// Wait for `bytes` of `budget` (None once `stop` says so).
    pub fn wait(budget: &'a Budget, bytes: u64, stop: impl Fn() -> bool) -> Option<Lease<'a>> {
        budget
            .take_blocking(bytes, stop)
            .then_some(Lease { budget, bytes })
    }
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        if self.bytes > 0 {
            self.budget.give(self.bytes);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_are_powers_of_two_from_4k() {
        assert_eq!(class(1), 4096);
        assert_eq!(class(4096), 4096);
        assert_eq!(class(4097), 8192);
        assert_eq!(class(65_509), 65536);
        assert_eq!(class(32 << 20), 32 << 20);
        assert_eq!(class_index(class(32 << 20)), CLASSES - 1);
    }

    /// Before: a spare list per distinct length, never freed. Every length from 4 KiB to 8 MiB
    /// now lands in 12 classes, the cache never holds more than its cap, and what is idle goes.
    #[test]
    fn the_cache_holds_at_most_its_cap_and_releases_idle_buffers() {
        let mut c = BufCache::new(32 << 20);
        let t0 = Instant::now();
        let mut held = Vec::new();
        for k in 0..2000usize {
            let len = 4096 + (k * 7919 * 4096) % (8 << 20);
            let b = c.get(len);
            assert!(b.len() >= len && b.len() < 2 * len.max(4096));
            held.push(b);
            if held.len() > 2 {
                c.put(held.remove(0), t0);
            }
            assert!(c.bytes() <= 32 << 20, "{} B cached", c.bytes());
        }
        for b in held {
            c.put(b, t0 + Duration::from_secs(5));
        }
        assert!(c.bytes() > 0);
        c.trim(t0 + Duration::from_millis(5500), Duration::from_secs(1));
        assert!(c.bytes() > 0, "recent buffers stay");
        c.trim(t0 + Duration::from_secs(7), Duration::from_secs(1));
        assert_eq!(c.bytes(), 0, "idle buffers are released");
    }

    #[test]
    fn the_budget_is_never_exceeded_and_waiters_wake_when_bytes_come_back() {
        let b = std::sync::Arc::new(Budget::new(100));
        assert!(b.try_take(60));
        assert!(!b.try_take(41));
        assert!(b.try_take(40));
        let waiter = {
            let b = b.clone();
            std::thread::spawn(move || {
                let l = Lease::wait(&b, 50, || false).expect("bytes come back");
                assert!(b.used() <= 100);
                drop(l);
            })
        };
        std::thread::sleep(Duration::from_millis(20));
        b.give(60);
        waiter.join().unwrap();
        assert_eq!(b.used(), 40);
        assert!(
            Lease::wait(&b, 70, || true).is_none(),
            "a stop ends the wait"
        );
    }
}
