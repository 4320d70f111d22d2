//! I/O buffers: one aligned allocation per worker, a slot per queue entry, filled once with
//! random bytes. Before each write the slot is "scrambled": a 16-byte stamp (a per-worker
//! sequence number and the offset) is written at the start of every 512-byte sector, so no
//! two written blocks are alike (defeating dedupe) while the random remainder stays
//! incompressible, without refilling whole buffers from the generator on every I/O.

use crate::engine::{AlignedBuf, Rng, BUF_ALIGN};

/// Granularity of the scramble stamp.
const STAMP_EVERY: usize = 512;

/// `slots` buffers of `slot_len` bytes each, page-aligned, contiguous.
pub struct Buffers {
    mem: AlignedBuf,
    slot_len: usize,
    slots: usize,
    stamp: u64,
}

impl Buffers {
    /// Allocates and fills with random bytes from `rng`. None if the allocation fails.
    pub fn new(slots: usize, slot_len: usize, rng: &mut Rng) -> Option<Self> {
        let slot_len = slot_len.div_ceil(BUF_ALIGN) * BUF_ALIGN;
        let mut mem = AlignedBuf::zeroed(slots.checked_mul(slot_len)?)?;
        // The stamp is drawn first: a seed's buffers are what they always were.
        let stamp = rng.next_u64();
        rng.fill(&mut mem);
        Some(Buffers {
            mem,
            slot_len,
            slots,
            stamp,
        })
    }

    pub fn slot_len(&self) -> usize {
        self.slot_len
    }

    pub fn slots(&self) -> usize {
        self.slots
    }

    /// Start of slot `i`'s buffer: `slot_len` bytes, page-aligned, valid as long as `self`
    /// lives. Safe to call; only dereferencing the pointer (or handing it to the kernel)
    /// needs `unsafe`, and whoever does that must keep the slot alive and unaliased for as
    /// long as the access (or the kernel's I/O) lasts.
    ///
    /// # Panics
    ///
    /// If `i >= self.slots()`.
    #[inline]
    pub fn slot_ptr(&self, i: usize) -> *mut u8 {
        assert!(
            i < self.slots,
            "slot {i} out of range ({} slots)",
            self.slots
        );
        // SAFETY: i < slots (checked above), so i * slot_len <= (slots - 1) * slot_len,
        // which is inside the allocation of at least slots * slot_len bytes; that product
        // was checked for overflow in `new`.
        unsafe { self.mem.as_ptr().add(i * self.slot_len) }
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
    ///
    /// # Panics
    ///
    /// If `i >= self.slots()` or `len > self.slot_len()`.
    #[inline]
    pub fn scramble(&mut self, i: usize, len: usize, offset: u64) {
        assert!(
            len <= self.slot_len,
            "scramble of {len} bytes in a {}-byte slot",
            self.slot_len
        );
        self.stamp = self.stamp.wrapping_add(1);
        let base = self.slot_ptr(i);
        let mut at = 0;
        while at + 16 <= len {
            // SAFETY: `base` is slot i's start (in range, checked by slot_ptr) and
            // at + 16 <= len <= slot_len (checked above), so both 8-byte writes stay inside
            // slot i; `&mut self` excludes every other Rust access to the buffers, and
            // memory in flight to or from the kernel is never a slot being scrambled (the
            // caller prepares a write in a free slot). Unaligned writes are allowed.
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
    ///
    /// # Panics
    ///
    /// If `i >= self.slots()`.
    pub fn slot(&self, i: usize) -> &[u8] {
        let ptr = self.slot_ptr(i);
        // SAFETY: `ptr` starts slot i (in range, checked by slot_ptr), followed by slot_len
        // initialised bytes (zeroed, then filled in `new`) inside our allocation, which
        // lives as long as the `&self` borrow the slice is tied to; Rust code writes to it
        // only through `&mut self`. The kernel writes into a slot only for a read that
        // unsafe code submitted, and that code must not look at the slot until the read
        // completes (the contract of the io_uring push in uring_worker.rs).
        unsafe { std::slice::from_raw_parts(ptr, self.slot_len) }
    }

    /// Slot `i` as a mutable slice.
    ///
    /// # Panics
    ///
    /// If `i >= self.slots()`.
    pub fn slot_mut(&mut self, i: usize) -> &mut [u8] {
        let ptr = self.slot_ptr(i);
        // SAFETY: as in `slot`, and the `&mut self` borrow makes this slice the only
        // reference into the buffers while it lives.
        unsafe { std::slice::from_raw_parts_mut(ptr, self.slot_len) }
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

    fn two_slots() -> Buffers {
        Buffers::new(2, 4096, &mut Rng::new(2)).unwrap()
    }

    #[test]
    fn last_slot_is_in_range() {
        let mut b = two_slots();
        assert_eq!(b.slot_ptr(1) as usize - b.slot_ptr(0) as usize, 4096);
        assert_eq!(b.slot(1).len(), 4096);
        b.slot_mut(1)[4095] = 7;
        b.scramble(1, 4096, 0);
        assert_eq!(
            b.slot(1)[4095],
            7,
            "the stamp covers only each sector's first 16 bytes"
        );
    }

    #[test]
    #[should_panic(expected = "slot 2 out of range (2 slots)")]
    fn slot_ptr_refuses_an_out_of_range_slot() {
        two_slots().slot_ptr(2);
    }

    #[test]
    #[should_panic(expected = "out of range")]
    fn slot_refuses_an_out_of_range_slot() {
        let b = two_slots();
        let _ = b.slot(2);
    }

    #[test]
    #[should_panic(expected = "out of range")]
    fn slot_mut_refuses_an_out_of_range_slot() {
        let mut b = two_slots();
        let _ = b.slot_mut(usize::MAX);
    }

    #[test]
    #[should_panic(expected = "out of range")]
    fn scramble_refuses_an_out_of_range_slot() {
        two_slots().scramble(2, 16, 0);
    }

    #[test]
    #[should_panic(expected = "scramble of 4097 bytes in a 4096-byte slot")]
    fn scramble_refuses_a_length_past_the_slot() {
        two_slots().scramble(1, 4097, 0);
    }

    #[test]
    #[should_panic(expected = "out of range")]
    fn no_slot_is_in_range_without_slots() {
        let b = Buffers::new(0, 4096, &mut Rng::new(3)).unwrap();
        let _ = b.slot(0);
    }
}
