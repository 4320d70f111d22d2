//! The generation map: one byte per block of the target, in memory while a run goes on and
//! saved by the flusher ([`super::state`]). Each byte: bits 0..6 the block's generation
//! (0: never written under this verify state), bit 6 `BUSY` (a write of ours is in flight
//! now; only meaningful in memory, cleared on load), bit 7 `PENDING` (a write may have been
//! in flight: the block holds the generation or the one before; saved). 4 TB at 4 KiB
//! blocks: 2^30 blocks, 1 GiB of map (in memory and on disk).
//!
//! Workers share it without locks: a write claims its blocks with a compare-and-swap (two
//! jobs never write one block at once), a read notes the byte when it is issued and again
//! when it completes, and checks loosely if a write of the block raced it.

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};

use super::classify::{Expect, Window};
use super::gen::Generation;

const GEN: u8 = 0x3f;
/// A write of ours is in flight now (in memory only).
pub const BUSY: u8 = 0x40;
const PENDING: u8 = 0x80;
/// Either flag: the block's contents are not settled.
pub const BUSY_OR_PENDING: u8 = BUSY | PENDING;
/// Bytes of the map per dirty bit: the flusher writes whole pages.
pub const PAGE: usize = 4096;

/// One byte per block, and a dirty bit per page of them.
pub struct GenMap {
    bytes: Vec<AtomicU8>,
    dirty: Vec<AtomicU64>,
}

impl GenMap {
    /// A map of `blocks` never-written blocks.
    pub fn new(blocks: u64) -> GenMap {
        Self::from_bytes(vec![0; blocks as usize])
    }

    /// The map as saved; nothing is in flight now.
    pub fn from_bytes(v: Vec<u8>) -> GenMap {
        let pages = v.len().div_ceil(PAGE);
        GenMap {
            bytes: v.into_iter().map(|b| AtomicU8::new(b & !BUSY)).collect(),
            dirty: (0..pages.div_ceil(64)).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    pub fn blocks(&self) -> u64 {
        self.bytes.len() as u64
    }

    /// Block `i`'s byte now.
    #[inline]
    pub fn load(&self, i: u64) -> u8 {
        self.bytes[i as usize].load(Ordering::Acquire)
    }

    #[inline]
    fn store(&self, i: u64, v: u8) {
        self.bytes[i as usize].store(v, Ordering::Release);
        self.mark(i);
    }

    #[inline]
    fn mark(&self, i: u64) {
        self.mark_page(i as usize / PAGE);
    }

    fn mark_page(&self, page: usize) {
        self.dirty[page / 64].fetch_or(1 << (page % 64), Ordering::AcqRel);
    }

    /// Marks pages taken by [`take_dirty`](Self::take_dirty) dirty again: their save failed,
    /// the next flush writes them (as they are then).
    pub fn redirty(&self, pages: impl IntoIterator<Item = usize>) {
        for page in pages {
            self.mark_page(page);
        }
    }

    /// Claims blocks `first..first + n` for a write: each gets its next generation, busy
    /// and pending. `saved` (at least `n` bytes) keeps what they held, to give them back if
    /// one is busy (another job writes it now): then nothing is claimed (false).
    pub fn begin_write(&self, first: u64, n: u64, saved: &mut [u8]) -> bool {
        for k in 0..n {
            let i = first + k;
            let cell = &self.bytes[i as usize];
            let mut cur = cell.load(Ordering::Acquire);
            loop {
                if cur & BUSY != 0 {
                    for j in 0..k {
                        self.store(first + j, saved[j as usize]);
                    }
                    return false;
                }
                let next = Generation::new(cur & GEN).map_or(Generation::FIRST, Generation::next);
                match cell.compare_exchange_weak(
                    cur,
                    BUSY | PENDING | next.get(),
                    Ordering::AcqRel,
                    Ordering::Acquire,
                ) {
                    Ok(_) => break,
                    Err(now) => cur = now,
                }
            }
            saved[k as usize] = cur;
            self.mark(i);
        }
        true
    }

    /// Ends a write begun with [`begin_write`](Self::begin_write): acknowledged (`ok`) the
    /// blocks hold their new generation; failed, the old or the new one (pending).
    pub fn end_write(&self, first: u64, n: u64, ok: bool) {
        for i in first..first + n {
            let g = self.load(i) & GEN;
            self.store(i, if ok { g } else { g | PENDING });
        }
    }

    /// Sets block `i` to generation `g`, acknowledged (a verify pass settling what it found).
    pub fn settle(&self, i: u64, g: Option<Generation>) {
        self.store(i, g.map_or(0, Generation::get));
    }

    /// Sets block `i` to generation `g` or the one before (pending): a torn block settled
    /// as the newer of its two writes.
    pub fn settle_pending(&self, i: u64, g: Generation) {
        self.store(i, PENDING | g.get());
    }

    /// The generation a block's write claimed (its byte after [`begin_write`](Self::begin_write)).
    #[inline]
    pub fn generation(&self, i: u64) -> Option<Generation> {
        Generation::new(self.load(i) & GEN)
    }

    /// Every block's byte now, flags and all (a power cut's picture of the map).
    pub fn raw(&self) -> Vec<u8> {
        self.bytes
            .iter()
            .map(|c| c.load(Ordering::Acquire))
            .collect()
    }

    /// Takes the dirty pages: (page index, its bytes now), clearing their bits.
    pub fn take_dirty(&self) -> Vec<(usize, Vec<u8>)> {
        let mut out = Vec::new();
        for (w, word) in self.dirty.iter().enumerate() {
            let mut bits = word.swap(0, Ordering::AcqRel);
            while bits != 0 {
                let b = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let page = w * 64 + b;
                let end = ((page + 1) * PAGE).min(self.bytes.len());
                let bytes = self.bytes[page * PAGE..end]
                    .iter()
                    .map(|c| c.load(Ordering::Acquire) & !BUSY)
                    .collect();
                out.push((page, bytes));
            }
        }
        out
    }
}

/// What a block of byte `raw` must hold when read back: `clean` is false when the state's
/// last run did not end cleanly (its blocks may have been written since the map was saved).
pub fn expect_of(raw: u8, clean: bool) -> Expect {
    let Some(g) = Generation::new(raw & GEN) else {
        return Expect::Never {
            may_be_ours: !clean,
        };
    };
    let in_flight = raw & (PENDING | BUSY) != 0;
    let window = match (in_flight, clean) {
        (false, true) => Window::Exact,
        (true, true) => Window::OldOrNew,
        (false, false) => Window::Newer { old_unknown: false },
        // The generation before the one in flight, or newer. Generation 1 is a block's first
        // write or the cycle come round (63 before it): whatever was there, or 63 on.
        (true, false) => {
            return Expect::Written {
                generation: g.prev(),
                window: Window::Newer {
                    old_unknown: g == Generation::FIRST,
                },
            }
        }
    };
    Expect::Written {
        generation: g,
        window,
    }
}

/// What a read may find when a write of the block raced it (the byte changed between the
/// read's issue, `before`, and its completion, or a write was in flight at its issue): the
/// generation before the write or any newer one.
pub fn expect_raced(before: u8) -> Expect {
    match Generation::new(before & GEN) {
        None => Expect::Written {
            generation: Generation::FIRST,
            window: Window::Newer { old_unknown: true },
        },
        Some(_) if before & (BUSY | PENDING) != 0 => expect_of(before, false),
        Some(g) => Expect::Written {
            generation: g,
            window: Window::Newer { old_unknown: false },
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_claim_bump_and_acknowledge() {
        let m = GenMap::new(10_000);
        let mut saved = [0u8; 4];
        assert!(m.begin_write(2, 3, &mut saved));
        assert_eq!(m.generation(3), Some(Generation::FIRST));
        let mut other = [0u8; 4];
        assert!(!m.begin_write(4, 2, &mut other), "block 4 is busy");
        assert_eq!(m.load(5), 0, "nothing claimed when one block is busy");
        m.end_write(2, 3, true);
        assert_eq!(m.load(3), 1);
        assert!(m.begin_write(3, 1, &mut saved));
        m.end_write(3, 1, false);
        assert_eq!(m.load(3), PENDING | 2, "a failed write leaves old-or-new");
        assert_eq!(
            expect_of(m.load(3), true),
            Expect::Written {
                generation: Generation::new(2).unwrap(),
                window: Window::OldOrNew
            }
        );
        let dirty = m.take_dirty();
        assert_eq!(dirty.len(), 1);
        assert_eq!(dirty[0].1[2..6], [1, PENDING | 2, 1, 0]);
        assert!(m.take_dirty().is_empty());
        m.settle(9_000, Generation::new(7));
        let taken = m.take_dirty();
        assert_eq!(taken[0].0, 2);
        // A save that failed gives its pages back to the next flush.
        m.redirty(taken.iter().map(|(p, _)| *p));
        assert_eq!(m.take_dirty(), taken);
    }

    #[test]
    fn a_read_racing_the_write_that_wraps_the_cycle_accepts_the_generation_before() {
        use crate::verify::{classify_block, stamp_block, BlockCheck};
        let mut before = vec![7u8; 4096];
        stamp_block(&mut before, 0, 1, Generation::new(63).unwrap(), 0);
        let mut after = vec![7u8; 4096];
        stamp_block(&mut after, 0, 1, Generation::FIRST, 0);
        // A write of generation 1 in flight (63 before it), and one just acknowledged.
        for raw in [BUSY | PENDING | 1, PENDING | 1] {
            let c = BlockCheck {
                offset: 0,
                id: 1,
                atomic: 512,
                expect: expect_raced(raw),
            };
            assert_eq!(classify_block(&c, &before), None, "{raw:#x}");
            assert_eq!(classify_block(&c, &after), None, "{raw:#x}");
        }
    }

    #[test]
    fn loaded_maps_have_nothing_busy() {
        let m = GenMap::from_bytes(vec![BUSY | PENDING | 3, 5]);
        assert_eq!(m.load(0), PENDING | 3);
        assert_eq!(expect_of(0, false), Expect::Never { may_be_ours: true });
        assert_eq!(
            expect_of(5, false),
            Expect::Written {
                generation: Generation::new(5).unwrap(),
                window: Window::Newer { old_unknown: false }
            }
        );
    }
}
