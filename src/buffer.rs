//! Page-aligned I/O memory: the one place that owns raw buffers handed to the kernel (O_DIRECT, aio, io_uring).
//!
//! `AlignedBuf` is one zeroed, aligned allocation. `BufferPool` splits one `AlignedBuf` into equal slots,
//! one per I/O in flight; it tracks which slots the kernel may be writing so that safe code can only
//! look at a slot whose I/O has completed.

use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::ptr::NonNull;

/// Alignment of every buffer: a page, which satisfies any device's direct-I/O memory alignment.
pub const BUF_ALIGN: usize = 4096;

/// One zeroed allocation aligned to `BUF_ALIGN`.
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: AlignedBuf uniquely owns its allocation, like a Box<[u8]>.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    /// Allocate `len` zeroed bytes (at least one page).
    pub fn new(len: usize) -> Self {
        let size = len.max(1).next_multiple_of(BUF_ALIGN);
        let layout = Layout::from_size_align(size, BUF_ALIGN).expect("buffer size overflows");
        // SAFETY: layout has a non-zero size.
        let raw = unsafe { alloc_zeroed(layout) };
        let ptr = NonNull::new(raw).unwrap_or_else(|| std::alloc::handle_alloc_error(layout));
        AlignedBuf { ptr, len }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Base address, for registering the region with the kernel (io_uring fixed buffers).
    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    fn layout(&self) -> Layout {
        Layout::from_size_align(self.len.max(1).next_multiple_of(BUF_ALIGN), BUF_ALIGN).unwrap()
    }
}

impl std::ops::Deref for AlignedBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: ptr is valid for len initialised (zeroed) bytes for as long as self lives.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl std::ops::DerefMut for AlignedBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in deref, and &mut self guarantees exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this same layout.
        unsafe { dealloc(self.ptr.as_ptr(), self.layout()) }
    }
}

/// Equal, aligned slots for the I/Os of one worker; slot `i` is the buffer of token `i`.
pub struct BufferPool {
    mem: AlignedBuf,
    slot_len: usize,
    stride: usize,
    lent: Vec<bool>,
}

impl BufferPool {
    pub fn new(slots: usize, slot_len: usize) -> Self {
        let stride = slot_len.next_multiple_of(BUF_ALIGN);
        BufferPool {
            mem: AlignedBuf::new(stride * slots.max(1)),
            slot_len,
            stride,
            lent: vec![false; slots.max(1)],
        }
    }

    pub fn slots(&self) -> usize {
        self.lent.len()
    }

    pub fn slot_len(&self) -> usize {
        self.slot_len
    }

    /// The whole region (base, length), for registering it once with the kernel.
    pub fn region(&mut self) -> (*mut u8, usize) {
        let len = self.mem.len();
        (self.mem.as_mut_ptr(), len)
    }

    /// Borrow slot `i` for a synchronous read that finishes before the borrow ends.
    pub fn slot_mut(&mut self, i: usize, len: usize) -> &mut [u8] {
        assert!(!self.lent[i], "slot {i} is in flight");
        // SAFETY: the slot lies inside the allocation (slot_start checks i), no I/O is in flight
        // on it (asserted above), and &mut self makes this the only reference. The slice covers
        // this slot alone, never memory the kernel may be writing for another slot.
        unsafe { std::slice::from_raw_parts_mut(self.slot_start(i), len.min(self.slot_len)) }
    }

    fn slot_start(&self, i: usize) -> *mut u8 {
        assert!(i < self.lent.len(), "slot {i} out of range");
        // SAFETY: i < slots, so the offset stays inside the allocation.
        unsafe { self.mem.ptr.as_ptr().add(i * self.stride) }
    }

    /// Hand slot `i` to the kernel for an asynchronous read; it stays untouchable until `reclaim(i)`.
    /// The pointer is valid for `slot_len` bytes for as long as the pool lives.
    pub fn lend(&mut self, i: usize) -> *mut u8 {
        assert!(!self.lent[i], "slot {i} is already in flight");
        self.lent[i] = true;
        self.slot_start(i)
    }

    /// The kernel has finished with slot `i` (its completion was reaped).
    ///
    /// # Safety
    ///
    /// Nothing may write to slot `i` any more: the read lent it to (by [`lend`](Self::lend)) has
    /// completed and been reaped, or was never handed to the kernel. Reclaiming a slot the kernel
    /// is still writing lets [`slot`](Self::slot) hand out a slice that changes under the reader.
    pub unsafe fn reclaim(&mut self, i: usize) {
        self.lent[i] = false;
    }

    /// Read the data of a completed I/O.
    pub fn slot(&self, i: usize, len: usize) -> &[u8] {
        assert!(!self.lent[i], "slot {i} is still in flight");
        // SAFETY: inside the allocation and initialised (zeroed at allocation); no I/O is in
        // flight on this slot, and the slice covers this slot only, so it never overlaps memory
        // the kernel is writing for other slots.
        unsafe { std::slice::from_raw_parts(self.slot_start(i), len.min(self.slot_len)) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_and_zeroed() {
        let b = AlignedBuf::new(10_000);
        assert_eq!(b.as_ptr() as usize % BUF_ALIGN, 0);
        assert!(b.iter().all(|&x| x == 0));
        assert_eq!(b.len(), 10_000);
    }

    #[test]
    fn pool_slots_are_aligned_and_disjoint() {
        let mut p = BufferPool::new(4, 512);
        let a = p.lend(0) as usize;
        let b = p.lend(1) as usize;
        assert_eq!(a % BUF_ALIGN, 0);
        assert_eq!(b - a, BUF_ALIGN);
        // SAFETY: slot 0 was lent to no one but this test.
        unsafe { p.reclaim(0) };
        assert_eq!(p.slot(0, 512).len(), 512);
    }

    #[test]
    #[should_panic(expected = "in flight")]
    fn lent_slot_cannot_be_read() {
        let mut p = BufferPool::new(2, 4096);
        p.lend(1);
        let _ = p.slot(1, 4096);
    }
}
