//! The classifier: what a block read back holds, against what the generation map expects
//! of it, as at most one typed [`Finding`] per block. Pure; the caller reads the bytes and
//! counts I/O errors as errors (a failed read never reaches here).

use serde::{Deserialize, Serialize};

use super::gen::Generation;
use super::header::{each_sector_crc, hex_excerpt, HeaderFields, Sector, SECTOR};

/// What kind of wrong data a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FindingKind {
    /// A sector's checksum fails: its bytes are not what was written.
    Corrupt,
    /// A valid header names another byte address or another verify state.
    Misdirected,
    /// A valid older generation where a newer one was acknowledged (a lost or stale write).
    Lost,
    /// Sectors of one write unit (or of a block written whole) from different generations.
    Torn,
    /// Zeros where data was written, our own data where nothing was, or a generation never
    /// written.
    Unexpected,
}

impl FindingKind {
    pub const ALL: [FindingKind; 5] = [
        FindingKind::Corrupt,
        FindingKind::Misdirected,
        FindingKind::Lost,
        FindingKind::Torn,
        FindingKind::Unexpected,
    ];

    /// The name used in JSON and text.
    pub fn name(self) -> &'static str {
        match self {
            FindingKind::Corrupt => "corrupt",
            FindingKind::Misdirected => "misdirected",
            FindingKind::Lost => "lost",
            FindingKind::Torn => "torn",
            FindingKind::Unexpected => "unexpected",
        }
    }
}

impl std::fmt::Display for FindingKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Which generations a written block may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Window {
    /// Exactly the acknowledged one (written before the last completed flush, or a run that
    /// ended cleanly).
    Exact,
    /// The write of this generation was in flight: each atomic write unit holds it or the
    /// one before (before the first write: anything).
    OldOrNew,
    /// This generation or a newer one, each atomic unit whole (units may mix): after an
    /// unclean end, a block may have been written again since the last saved map; in a
    /// run, a read raced a write of the block. With `old_unknown`, what was there before
    /// its first write too.
    Newer { old_unknown: bool },
}

/// What the generation map expects of a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// Never written under this verify state: only our own header there is wrong, unless
    /// `may_be_ours` (after an unclean end, written since the last saved map), and then
    /// only our header naming another address.
    Never { may_be_ours: bool },
    Written {
        generation: Generation,
        window: Window,
    },
}

/// One block to check: where, under which id, with which atomic write unit.
#[derive(Debug, Clone, Copy)]
pub struct BlockCheck {
    /// The block's byte address.
    pub offset: u64,
    pub id: u64,
    /// The device's atomic write unit, bytes (a multiple of 512): within it, sectors never
    /// come from different writes.
    pub atomic: usize,
    pub expect: Expect,
}

/// What was expected of the sector a finding names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExpectedFields {
    pub lba: u64,
    pub id: u64,
    /// `None`: never written under this state.
    pub generation: Option<u8>,
}

/// Wrong data in one block.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    pub kind: FindingKind,
    /// The block's byte address and length.
    pub offset: u64,
    pub length: u64,
    /// The byte address of the first sector at fault.
    pub sector: u64,
    pub expected: ExpectedFields,
    /// The header found there, if the sector has one of ours (checksum good or not).
    pub found: Option<HeaderFields>,
    /// The sector's first 48 bytes, hex.
    pub excerpt: String,
}

impl Finding {
    /// What was found, in words: the header of ours there, or the start of the bytes.
    pub fn found_text(&self) -> String {
        match &self.found {
            Some(h) => format!("lba {} id {:x} generation {}", h.lba, h.id, h.generation),
            // A session's excerpt is text anyone may have edited: cut at a character.
            None => self.excerpt.chars().take(32).collect(),
        }
    }
}

/// Bytes of a sector in a finding's excerpt.
const EXCERPT: usize = 48;

/// What one atomic unit holds: one generation of ours, or old data of unknown origin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unit {
    Ours(Generation),
    Old,
}

/// Checks one block read back (`data`, a multiple of 512 bytes long) against what the map
/// expects of it. `None`: nothing wrong.
pub fn classify_block(c: &BlockCheck, data: &[u8]) -> Option<Finding> {
    let finding = |kind, i: usize, found: Option<HeaderFields>| {
        let s = &data[i * SECTOR..(i + 1) * SECTOR];
        Some(Finding {
            kind,
            offset: c.offset,
            length: data.len() as u64,
            sector: c.offset + (i * SECTOR) as u64,
            expected: ExpectedFields {
                lba: c.offset + (i * SECTOR) as u64,
                id: c.id,
                generation: match c.expect {
                    Expect::Never { .. } => None,
                    Expect::Written { generation, .. } => Some(generation.get()),
                },
            },
            found,
            excerpt: hex_excerpt(s, EXCERPT),
        })
    };
    let lba = |i: usize| c.offset + (i * SECTOR) as u64;
    // The common case, without allocating: every sector what was acknowledged.
    if let Expect::Written {
        generation,
        window: Window::Exact,
    } = c.expect
    {
        let mut intact = true;
        each_sector_crc(data, |i, crc| {
            let s = &data[i * SECTOR..(i + 1) * SECTOR];
            intact &= matches!(Sector::parse_summed(s, || crc), Sector::Valid(h)
                if h.id == c.id && h.lba == lba(i) && h.generation == generation.get());
        });
        if intact {
            return None;
        }
    }
    let sectors = data.chunks_exact(SECTOR);
    let (generation, window) = match c.expect {
        Expect::Never { may_be_ours } => {
            for (i, s) in sectors.enumerate() {
                if let Sector::Valid(h) = Sector::parse(s) {
                    if h.id == c.id && !(may_be_ours && h.lba == lba(i)) {
                        let kind = if h.lba == lba(i) {
                            FindingKind::Unexpected
                        } else {
                            FindingKind::Misdirected
                        };
                        return finding(kind, i, Some(h));
                    }
                }
            }
            return None;
        }
        Expect::Written { generation, window } => (generation, window),
    };
    // Before the first write of a block was acknowledged, its old contents are unknown.
    let old_unknown = match window {
        Window::OldOrNew => generation == Generation::FIRST,
        Window::Newer { old_unknown } => old_unknown,
        Window::Exact => false,
    };
    let per_unit = (c.atomic / SECTOR).max(1);
    let mut units: Vec<(usize, Unit, Option<HeaderFields>)> = Vec::new();
    for (i, s) in sectors.enumerate() {
        let (unit, found) = match Sector::parse(s) {
            Sector::Valid(h) if h.id == c.id && h.lba == lba(i) => {
                match Generation::new(h.generation) {
                    Some(g) => (Unit::Ours(g), Some(h)),
                    None => return finding(FindingKind::Corrupt, i, Some(h)),
                }
            }
            _ if old_unknown => (Unit::Old, None),
            Sector::Valid(h) => return finding(FindingKind::Misdirected, i, Some(h)),
            Sector::BadChecksum(h) => return finding(FindingKind::Corrupt, i, Some(h)),
            Sector::Other => return finding(FindingKind::Corrupt, i, None),
            Sector::Zeros => return finding(FindingKind::Unexpected, i, None),
        };
        if i % per_unit == 0 {
            units.push((i, unit, found));
        } else if units.last().is_some_and(|u| u.1 != unit) {
            return finding(FindingKind::Torn, i, found);
        }
    }
    let (first, head, _) = *units.first()?;
    match window {
        Window::Exact => {
            if let Some(&(i, _, found)) = units.iter().find(|u| u.1 != head) {
                return finding(FindingKind::Torn, i, found);
            }
            match head {
                Unit::Ours(g) if g == generation => None,
                Unit::Ours(g) if g.is_older_than(generation) => {
                    finding(FindingKind::Lost, first, units[0].2)
                }
                _ => finding(FindingKind::Unexpected, first, units[0].2),
            }
        }
        Window::OldOrNew => units.iter().find_map(|&(i, u, found)| match u {
            Unit::Old => None,
            Unit::Ours(g) if g == generation || (!old_unknown && g == generation.prev()) => None,
            Unit::Ours(g) if g.is_older_than(generation) => finding(FindingKind::Lost, i, found),
            Unit::Ours(_) => finding(FindingKind::Unexpected, i, found),
        }),
        Window::Newer { .. } => units.iter().find_map(|&(i, u, found)| match u {
            Unit::Ours(g) if g.is_older_than(generation) => finding(FindingKind::Lost, i, found),
            _ => None,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::header::stamp_block;
    use proptest::prelude::*;
    use FindingKind::*;

    const ID: u64 = 0x1D;

    fn g(v: u8) -> Generation {
        Generation::new(v).unwrap()
    }

    fn written(offset: u64, len: usize, gen: u8, seed: u64) -> Vec<u8> {
        let mut b = vec![0u8; len];
        crate::engine::Rng::new(seed).fill(&mut b);
        stamp_block(&mut b, offset, ID, g(gen), 1);
        b
    }

    fn check(offset: u64, expect: Expect) -> BlockCheck {
        BlockCheck {
            offset,
            id: ID,
            atomic: 512,
            expect,
        }
    }

    fn exact(gen: u8) -> Expect {
        Expect::Written {
            generation: g(gen),
            window: Window::Exact,
        }
    }

    fn kind(c: &BlockCheck, data: &[u8]) -> Option<FindingKind> {
        classify_block(c, data).map(|f| f.kind)
    }

    #[test]
    fn each_kind() {
        let b = written(4096, 4096, 5, 1);
        assert_eq!(kind(&check(4096, exact(5)), &b), None);
        // Lost: the map says 6 was acknowledged.
        let f = classify_block(&check(4096, exact(6)), &b).unwrap();
        assert_eq!(f.kind, Lost);
        assert_eq!(f.found.unwrap().generation, 5);
        assert_eq!(f.expected.generation, Some(6));
        // Misdirected: the block of another address, or of another verify state.
        assert_eq!(kind(&check(8192, exact(5)), &b), Some(Misdirected));
        let other = BlockCheck {
            id: 7,
            ..check(4096, exact(5))
        };
        assert_eq!(kind(&other, &b), Some(Misdirected));
        // Corrupt: one byte of the payload changed.
        let mut c = b.clone();
        c[1024 + 200] ^= 1;
        let f = classify_block(&check(4096, exact(5)), &c).unwrap();
        assert_eq!((f.kind, f.sector), (Corrupt, 4096 + 1024));
        // Zeros where data was written.
        let mut z = b.clone();
        z[512..1024].fill(0);
        assert_eq!(kind(&check(4096, exact(5)), &z), Some(Unexpected));
        // Torn: the second half from the generation before.
        let mut t = b.clone();
        t[2048..].copy_from_slice(&written(4096, 4096, 4, 2)[2048..]);
        let f = classify_block(&check(4096, exact(5)), &t).unwrap();
        assert_eq!((f.kind, f.sector), (Torn, 4096 + 2048));
        // Never written: foreign data is fine, our own header is not.
        assert_eq!(
            kind(
                &check(4096, Expect::Never { may_be_ours: false }),
                &[0u8; 4096]
            ),
            None
        );
        assert_eq!(
            kind(&check(4096, Expect::Never { may_be_ours: false }), &b),
            Some(Unexpected)
        );
        assert_eq!(
            kind(&check(0, Expect::Never { may_be_ours: false }), &b),
            Some(Misdirected)
        );
    }

    #[test]
    fn in_flight_blocks_may_hold_old_or_new_but_no_torn_unit() {
        let old = written(0, 4096, 4, 1);
        let new = written(0, 4096, 5, 2);
        let oon = check(
            0,
            Expect::Written {
                generation: g(5),
                window: Window::OldOrNew,
            },
        );
        assert_eq!(kind(&oon, &old), None);
        assert_eq!(kind(&oon, &new), None);
        let mut mixed = old.clone();
        mixed[2048..].copy_from_slice(&new[2048..]);
        assert_eq!(
            kind(&oon, &mixed),
            None,
            "units of 512 bytes: whole ones mix"
        );
        let unit4k = BlockCheck {
            atomic: 4096,
            ..oon
        };
        assert_eq!(kind(&unit4k, &mixed), Some(Torn));
        assert_eq!(kind(&oon, &written(0, 4096, 3, 3)), Some(Lost));
        // A first write in flight: whatever was there before.
        let first = check(
            0,
            Expect::Written {
                generation: Generation::FIRST,
                window: Window::OldOrNew,
            },
        );
        assert_eq!(kind(&first, &[0u8; 4096]), None);
    }

    #[test]
    fn after_an_unclean_end_newer_is_fine_older_is_lost() {
        let c = check(
            0,
            Expect::Written {
                generation: g(5),
                window: Window::Newer { old_unknown: false },
            },
        );
        assert_eq!(kind(&c, &written(0, 4096, 9, 1)), None);
        assert_eq!(kind(&c, &written(0, 4096, 5, 1)), None);
        assert_eq!(kind(&c, &written(0, 4096, 4, 1)), Some(Lost));
        assert_eq!(kind(&c, &[0u8; 4096]), Some(Unexpected));
        let first = BlockCheck {
            expect: Expect::Written {
                generation: Generation::FIRST,
                window: Window::Newer { old_unknown: true },
            },
            ..c
        };
        assert_eq!(kind(&first, &[0u8; 4096]), None);
        let maybe = check(0, Expect::Never { may_be_ours: true });
        assert_eq!(kind(&maybe, &written(0, 4096, 2, 1)), None);
        assert_eq!(kind(&maybe, &written(4096, 4096, 2, 1)), Some(Misdirected));
    }

    proptest! {
        #[test]
        fn intact_blocks_pass_and_any_damaged_sector_is_found(
            sectors in 1usize..17,
            block in 0u64..1 << 30,
            gen in 1u8..=63,
            seed: u64,
            hit in any::<prop::sample::Index>(),
            junk in prop::collection::vec(any::<u8>(), 512),
        ) {
            let offset = block * 512;
            let data = written(offset, sectors * 512, gen, seed);
            prop_assert_eq!(classify_block(&check(offset, exact(gen)), &data), None);
            let i = hit.index(sectors);
            let mut bad = data.clone();
            bad[i * 512..(i + 1) * 512].copy_from_slice(&junk);
            let f = classify_block(&check(offset, exact(gen)), &bad);
            // Random bytes are corrupt (or zeros: unexpected); never silently accepted.
            let f = f.expect("a damaged sector is found");
            prop_assert_eq!(f.sector, offset + i as u64 * 512);
            prop_assert!(matches!(f.kind, Corrupt | Unexpected));
        }

        #[test]
        fn a_stale_generation_is_lost_never_accepted(
            gen in 1u8..=63,
            back in 1u8..=31,
            seed: u64,
        ) {
            let now = g(gen);
            let mut old = now;
            for _ in 0..back { old = old.prev(); }
            let data = written(0, 4096, old.get(), seed);
            prop_assert_eq!(kind(&check(0, exact(gen)), &data), Some(Lost));
        }

        #[test]
        fn arbitrary_bytes_never_panic(
            data in prop::collection::vec(any::<u8>(), 512..=4096),
            gen in 1u8..=63,
            w in 0usize..3,
        ) {
            let len = data.len() / 512 * 512;
            let window = [Window::Exact, Window::OldOrNew, Window::Newer { old_unknown: true }][w];
            let c = check(0, Expect::Written { generation: g(gen), window });
            let _ = classify_block(&c, &data[..len]);
            let _ = classify_block(&check(0, Expect::Never { may_be_ours: false }), &data[..len]);
        }
    }
}
