//! A worker's side of a verified step (`--verify`): each write claims its blocks in the
//! generation map and stamps every sector with a full header instead of the plain stamp;
//! each read notes what the map says of its blocks when issued and checks what it read
//! when it completes. Only the rare finding takes a lock; the counts go to the shared
//! state in batches.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::verify::map::{expect_of, expect_raced, BUSY_OR_PENDING};
use crate::verify::state::{now_ns, VerifyState};
use crate::verify::{classify_block, stamp_block, BlockCheck, Generation, Sector};

/// Counts added to the shared state every this many blocks.
const COUNT_BATCH: u64 = 4096;

/// One worker's verifier.
pub(crate) struct Verifier {
    state: Arc<VerifyState>,
    block: u64,
    /// The state's last run ended cleanly.
    clean: bool,
    /// Per slot: the map bytes of its I/O's blocks (saved by a write's claim, noted by a
    /// read at its issue).
    noted: Vec<Vec<u8>>,
    /// Wall time (ns since the Unix epoch) at the step's clock zero.
    wall0: u64,
    written: u64,
    checked: u64,
}

impl Verifier {
    /// For `slots` I/Os of at most `max_len` bytes; `since_t0` is the step clock now.
    pub fn new(state: Arc<VerifyState>, slots: usize, max_len: u64, since_t0: u64) -> Verifier {
        let block = state.meta.block;
        let per = max_len.div_ceil(block) as usize;
        Verifier {
            clean: state.clean(),
            state,
            block,
            noted: vec![vec![0u8; per]; slots],
            wall0: now_ns().saturating_sub(since_t0),
            written: 0,
            checked: 0,
        }
    }

    #[inline]
    fn span(&self, offset: u64, len: u32) -> (u64, u64) {
        (offset / self.block, u64::from(len) / self.block)
    }

    /// Claims a write's blocks; false if another job is writing one of them now.
    #[inline]
    pub fn claim_write(&mut self, slot: usize, offset: u64, len: u32) -> bool {
        let (first, n) = self.span(offset, len);
        self.state.map.begin_write(first, n, &mut self.noted[slot])
    }

    /// Stamps a claimed write's buffer: each block with the generation it claimed.
    #[inline]
    pub fn stamp(&self, buf: &mut [u8], offset: u64, now: u64) {
        let b = self.block as usize;
        for (k, chunk) in buf.chunks_exact_mut(b).enumerate() {
            let at = offset + (k * b) as u64;
            let g = self
                .state
                .map
                .generation(at / self.block)
                .unwrap_or(Generation::FIRST);
            stamp_block(chunk, at, self.state.meta.id, g, self.wall0 + now);
        }
    }

    /// Notes what the map says of a read's blocks as it is issued.
    #[inline]
    pub fn note_read(&mut self, slot: usize, offset: u64, len: u32) {
        let (first, n) = self.span(offset, len);
        for k in 0..n {
            self.noted[slot][k as usize] = self.state.map.load(first + k);
        }
    }

    /// A write completed (`ok`: acknowledged whole).
    #[inline]
    pub fn write_done(&mut self, offset: u64, len: u32, ok: bool) {
        let (first, n) = self.span(offset, len);
        self.state.map.end_write(first, n, ok);
        if ok {
            self.written += n;
        }
        if self.written >= COUNT_BATCH {
            self.state
                .counts
                .written
                .fetch_add(std::mem::take(&mut self.written), Ordering::Relaxed);
        }
    }

    /// A read completed whole: checks each block of `data` against the map.
    #[inline]
    pub fn read_done(&mut self, slot: usize, offset: u64, data: &[u8]) {
        let b = self.block as usize;
        for (k, chunk) in data.chunks_exact(b).enumerate() {
            let i = offset / self.block + k as u64;
            let before = self.noted[slot][k];
            let now = self.state.map.load(i);
            let expect = if before == now && before & BUSY_OR_PENDING == 0 {
                expect_of(before, self.clean)
            } else {
                expect_raced(before)
            };
            let check = BlockCheck {
                offset: offset + (k * b) as u64,
                id: self.state.meta.id,
                atomic: self.state.meta.atomic(),
                expect,
            };
            match classify_block(&check, chunk) {
                Some(f) => self.state.record(f),
                None if !self.clean => {
                    // An unclean state's pass settles what it found good.
                    let g = match Sector::parse(chunk) {
                        Sector::Valid(h) if h.id == self.state.meta.id => {
                            Generation::new(h.generation)
                        }
                        _ => None,
                    };
                    self.state.map.settle(i, g);
                }
                None => {}
            }
        }
        self.checked += (data.len() / b) as u64;
        if self.checked >= COUNT_BATCH {
            self.state
                .counts
                .checked
                .fetch_add(std::mem::take(&mut self.checked), Ordering::Relaxed);
        }
    }
}

impl Drop for Verifier {
    fn drop(&mut self) {
        let c = &self.state.counts;
        c.written.fetch_add(self.written, Ordering::Relaxed);
        c.checked.fetch_add(self.checked, Ordering::Relaxed);
    }
}
