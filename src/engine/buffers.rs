//! I/O buffers: one aligned allocation per worker, a slot per queue entry, filled once with
//! random bytes. Before each write the slot is "scrambled": a 16-byte stamp (a per-worker
//! sequence number and the offset) is written at the start of every 512-byte sector, so no
//! two written blocks are alike (defeating dedupe) while the random remainder stays
//! incompressible, without refilling whole buffers from the generator on every I/O.

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::ptr::NonNull;

use super::rng::Rng;

/// Buffer alignment: a page, enough for O_DIRECT on every device we meet.
pub const BUF_ALIGN: usize = 4096;
/// Granularity of the scramble stamp.
const STAMP_EVERY: usize = 512;

/// `slots` buffers of `slot_len` bytes each, page-aligned, contiguous.
pub struct Buffers {
    ptr: NonNull<u8>,
    layout: Layout,
    slot_len: usize,
    slots: usize,
    stamp: u64,
}

// The buffers are owned by one worker thread at a time; the raw pointer is only shared
// with the kernel for I/O the worker waits for.
unsafe impl Send for Buffers {}

impl Buffers {
    /// Allocates and fills with random bytes from `rng`. None if the allocation fails.
    pub fn new(slots: usize, slot_len: usize, rng: &mut Rng) -> Option<Self> {
        let slot_len = slot_len.div_ceil(BUF_ALIGN) * BUF_ALIGN;
        let size = slots.checked_mul(slot_len)?.max(BUF_ALIGN);
        let layout = Layout::from_size_align(size, BUF_ALIGN).ok()?;
        // SAFETY: layout has non-zero size.
        let ptr = NonNull::new(unsafe { alloc_zeroed(layout) })?;
        let mut b = Buffers {
            ptr,
            layout,
            slot_len,
            slots,
            stamp: rng.next_u64(),
        };
        rng.fill(b.all_mut());
        Some(b)
    }

    fn all_mut(&mut self) -> &mut [u8] {
        // SAFETY: ptr/layout describe one live allocation we own.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.layout.size()) }
    }

    pub fn slot_len(&self) -> usize {
        self.slot_len
    }

    pub fn slots(&self) -> usize {
        self.slots
    }

    /// Start of slot `i`'s buffer.
    #[inline]
    pub fn slot_ptr(&self, i: usize) -> *mut u8 {
        debug_assert!(i < self.slots);
        // SAFETY: i < slots, so the offset stays inside the allocation.
        unsafe { self.ptr.as_ptr().add(i * self.slot_len) }
    }

    /// One iovec per slot, for io_uring buffer registration.
    pub fn iovecs(&self) -> Vec<libc::iovec> {
        (0..self.slots)
            .map(|i| libc::iovec {
                iov_base: self.slot_ptr(i).cast(),
                iov_len: self.slot_len,
            })
            .collect()
    }

    /// Makes the first `len` bytes of slot `i` unlike anything written before.
    #[inline]
    pub fn scramble(&mut self, i: usize, len: usize, offset: u64) {
        self.stamp = self.stamp.wrapping_add(1);
        let base = self.slot_ptr(i);
        let mut at = 0;
        while at + 16 <= len {
            // SAFETY: at + 16 <= len <= slot_len, inside slot i; unaligned writes are fine.
            unsafe {
                base.add(at).cast::<u64>().write_unaligned(self.stamp);
                base.add(at + 8)
                    .cast::<u64>()
                    .write_unaligned(offset.wrapping_add(at as u64));
            }
            at += STAMP_EVERY;
        }
    }

    /// Slot `i` as a shared slice.
    pub fn slot(&self, i: usize) -> &[u8] {
        // SAFETY: inside the allocation; no I/O is in flight on this slot when called.
        unsafe { std::slice::from_raw_parts(self.slot_ptr(i), self.slot_len) }
    }

    /// Slot `i` as a mutable slice.
    pub fn slot_mut(&mut self, i: usize) -> &mut [u8] {
        // SAFETY: as above, and &mut self guarantees exclusivity.
        unsafe { std::slice::from_raw_parts_mut(self.slot_ptr(i), self.slot_len) }
    }
}

impl Drop for Buffers {
    fn drop(&mut self) {
        // SAFETY: allocated with this layout in `new`.
        unsafe { dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_random_and_scrambled() {
        let mut rng = Rng::new(1);
        let mut b = Buffers::new(4, 4096, &mut rng).unwrap();
        for i in 0..4 {
            assert_eq!(b.slot_ptr(i) as usize % BUF_ALIGN, 0);
        }
        let before = b.slot(0).to_vec();
        b.scramble(0, 4096, 0);
        let first = b.slot(0).to_vec();
        b.scramble(0, 4096, 0);
        let second = b.slot(0).to_vec();
        assert_ne!(before, first);
        assert_ne!(first, second, "the same slot written twice must differ");
        // Each 512-byte sector differs from every other one in the slot.
        let sectors: Vec<&[u8]> = second.chunks(512).collect();
        for i in 0..sectors.len() {
            for j in i + 1..sectors.len() {
                assert_ne!(sectors[i], sectors[j]);
            }
        }
        // Incompressible: nearly all byte values present, roughly evenly.
        let mut counts = [0u32; 256];
        for &x in &second {
            counts[x as usize] += 1;
        }
        assert!(counts.iter().filter(|&&c| c > 0).count() > 240);
    }
}
