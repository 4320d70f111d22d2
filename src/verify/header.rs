//! The sector header: the first 40 bytes of every 512-byte sector a verified run writes,
//! little-endian:
//!
//! | bytes | field |
//! | --- | --- |
//! | 0..4 | magic `DSV1` |
//! | 4..8 | CRC32C over bytes 0..4 and 8..512 (the whole sector but the CRC itself) |
//! | 8..16 | the sector's own byte address (LBA × 512) on the target |
//! | 16..24 | the verify state's random id |
//! | 24..25 | the block's write generation (1..=63) |
//! | 25..32 | zero |
//! | 32..40 | when the write was prepared, ns since the Unix epoch |
//!
//! The other 472 bytes are the I/O buffer's random bytes: incompressible. CRC32C runs on
//! the CPU's CRC instructions (SSE 4.2, ARMv8 CRC) where it has them (the `crc32c` crate);
//! on x86_64 the sectors of a block are summed four at a time ([`each_sector_crc`]): four
//! independent chains of the CRC instruction hide its latency. (What `--verify` costs as
//! a whole is in docs/PERFORMANCE.md; the four chains' own gain was not measured apart.)

use serde::{Deserialize, Serialize};

use super::gen::Generation;

/// Bytes per sector: each carries its own header.
pub const SECTOR: usize = 512;
/// Bytes of the header.
pub const HEADER_LEN: usize = 40;
const MAGIC: [u8; 4] = *b"DSV1";

/// The fields a header names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeaderFields {
    /// The byte address the sector says it was written at.
    pub lba: u64,
    /// The verify state's id it was written under.
    pub id: u64,
    pub generation: u8,
    pub timestamp_ns: u64,
}

/// What one sector read back holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sector {
    /// A header whose checksum holds.
    Valid(HeaderFields),
    /// Our magic, but the checksum fails (the fields as found).
    BadChecksum(HeaderFields),
    /// All zeros.
    Zeros,
    /// Anything else: no header of ours.
    Other,
}

#[inline]
fn u64_at(s: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&s[at..at + 8]);
    u64::from_le_bytes(b)
}

#[inline]
fn checksum(s: &[u8]) -> u32 {
    crc32c::crc32c_append(crc32c::crc32c(&s[0..4]), &s[8..SECTOR])
}

/// Calls `f(i, crc)` with the checksum of each sector `i` of `data` (whole sectors only).
#[inline]
pub fn each_sector_crc(data: &[u8], mut f: impl FnMut(usize, u32)) {
    let n = data.len() / SECTOR;
    let sector = |i: usize| &data[i * SECTOR..(i + 1) * SECTOR];
    let mut i = 0;
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("sse4.2") {
        while i + 4 <= n {
            // SAFETY: crc4 needs only SSE 4.2, which the CPU has (checked above).
            let c = unsafe { x86::crc4([sector(i), sector(i + 1), sector(i + 2), sector(i + 3)]) };
            for (k, crc) in c.into_iter().enumerate() {
                f(i + k, crc);
            }
            i += 4;
        }
    }
    while i < n {
        f(i, checksum(sector(i)));
        i += 1;
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::{_mm_crc32_u32, _mm_crc32_u64};

    use super::{u64_at, SECTOR};

    /// The checksums of four sectors (each at least [`SECTOR`] bytes), computed together.
    #[target_feature(enable = "sse4.2")]
    pub(super) fn crc4(s: [&[u8]; 4]) -> [u32; 4] {
        let mut c = [0u64; 4];
        for k in 0..4 {
            let magic = u32::from_le_bytes([s[k][0], s[k][1], s[k][2], s[k][3]]);
            c[k] = u64::from(_mm_crc32_u32(!0, magic));
        }
        let mut at = 8;
        while at < SECTOR {
            for k in 0..4 {
                c[k] = _mm_crc32_u64(c[k], u64_at(s[k], at));
            }
            at += 8;
        }
        c.map(|x| !(x as u32))
    }
}

fn fields(s: &[u8]) -> HeaderFields {
    HeaderFields {
        lba: u64_at(s, 8),
        id: u64_at(s, 16),
        generation: s[24],
        timestamp_ns: u64_at(s, 32),
    }
}

impl Sector {
    /// Reads the header of one sector (`s` is at least [`SECTOR`] bytes; only those count).
    pub fn parse(s: &[u8]) -> Sector {
        Self::parse_summed(s, || checksum(s))
    }

    /// [`parse`](Self::parse) with the sector's checksum given (computed only if asked).
    #[inline]
    pub fn parse_summed(s: &[u8], sum: impl FnOnce() -> u32) -> Sector {
        let s = &s[..SECTOR];
        if s[0..4] == MAGIC {
            let crc = u32::from_le_bytes([s[4], s[5], s[6], s[7]]);
            let f = fields(s);
            if crc == sum() && Generation::new(f.generation).is_some() {
                Sector::Valid(f)
            } else {
                Sector::BadChecksum(f)
            }
        } else if s.iter().all(|&b| b == 0) {
            Sector::Zeros
        } else {
            Sector::Other
        }
    }
}

/// Writes a header into every sector of `block` (a multiple of [`SECTOR`] bytes written at
/// byte address `offset`), keeping the rest of each sector.
#[inline]
pub fn stamp_block(block: &mut [u8], offset: u64, id: u64, generation: Generation, now_ns: u64) {
    for (i, s) in block.chunks_exact_mut(SECTOR).enumerate() {
        s[0..4].copy_from_slice(&MAGIC);
        s[8..16].copy_from_slice(&(offset + (i * SECTOR) as u64).to_le_bytes());
        s[16..24].copy_from_slice(&id.to_le_bytes());
        s[24] = generation.get();
        s[25..32].fill(0);
        s[32..40].copy_from_slice(&now_ns.to_le_bytes());
    }
    // The checksums, eight sectors at a time (the CRC field is not summed).
    for chunk in block.chunks_mut(8 * SECTOR) {
        let mut crcs = [0u32; 8];
        each_sector_crc(chunk, |i, c| crcs[i] = c);
        for (s, crc) in chunk.chunks_exact_mut(SECTOR).zip(crcs) {
            s[4..8].copy_from_slice(&crc.to_le_bytes());
        }
    }
}

/// The first `n` bytes of `s` as hex, for a finding's excerpt.
pub fn hex_excerpt(s: &[u8], n: usize) -> String {
    use std::fmt::Write;
    let mut out = String::with_capacity(n * 2);
    for b in s.iter().take(n) {
        let _ = write!(out, "{b:02x}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(n: usize) -> Vec<u8> {
        let mut rng = crate::engine::Rng::new(9);
        let mut b = vec![0u8; n];
        rng.fill(&mut b);
        b
    }

    #[test]
    fn stamped_sectors_read_back_with_their_own_address() {
        let mut b = block(4096);
        let tail = b[100..512].to_vec();
        stamp_block(&mut b, 8192, 0xABCD, Generation::new(3).unwrap(), 77);
        for (i, s) in b.chunks(SECTOR).enumerate() {
            assert_eq!(
                Sector::parse(s),
                Sector::Valid(HeaderFields {
                    lba: 8192 + i as u64 * 512,
                    id: 0xABCD,
                    generation: 3,
                    timestamp_ns: 77
                })
            );
        }
        assert_eq!(&b[100..512], &tail[..], "the random rest is kept");
    }

    #[test]
    fn any_flipped_bit_fails_the_checksum() {
        let mut b = block(512);
        stamp_block(&mut b, 0, 1, Generation::FIRST, 0);
        for byte in [8usize, 20, 24, 39, 40, 300, 511] {
            let mut c = b.clone();
            c[byte] ^= 0x10;
            assert!(
                matches!(Sector::parse(&c), Sector::BadChecksum(_)),
                "byte {byte}"
            );
        }
    }

    #[test]
    fn zeros_and_foreign_data() {
        assert_eq!(Sector::parse(&[0u8; 512]), Sector::Zeros);
        assert_eq!(Sector::parse(&block(512)), Sector::Other);
    }

    proptest::proptest! {
        #[test]
        fn the_sectors_summed_together_sum_as_one_by_one(
            data in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..9000),
        ) {
            let mut n = 0;
            each_sector_crc(&data, |i, c| {
                assert_eq!(c, checksum(&data[i * SECTOR..(i + 1) * SECTOR]), "sector {i}");
                assert_eq!(i, n);
                n += 1;
            });
            proptest::prop_assert_eq!(n, data.len() / SECTOR);
        }
    }

    #[test]
    fn excerpt_is_hex() {
        assert_eq!(hex_excerpt(&[0xde, 0xad, 0x01], 2), "dead");
    }
}
