//! What a block read back after a power cut says about the drive: judged against the map
//! as saved by the last completed flush epoch (what the drive promised to keep) and the map
//! in memory at the cut (what was acknowledged since, what was in flight). Pure; every
//! check goes through [`classify_block`], so a block is judged by the one classifier.

use serde::{Deserialize, Serialize};

use super::classify::{classify_block, BlockCheck, Expect, Finding, FindingKind, Window};
use super::gen::Generation;
use super::header::{Sector, SECTOR};
use super::map::{expect_of, BUSY_OR_PENDING};

/// A finding of a power-cut cycle, in a power-loss test's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CutKind {
    /// Acknowledged before the last completed flush, found older (or zeros): the drive
    /// broke its flush promise.
    LostAfterFlush,
    /// Sectors of one atomic write unit from different writes.
    Torn,
    /// Acknowledged after the last flush and found older: a finding only when the drive is
    /// said to have power-loss protection (`--plp`); otherwise only counted.
    NotDurable,
    /// A sector's checksum fails.
    Corrupt,
    /// Our header naming another address or another verify state.
    Misdirected,
    /// Our data where none was written, a generation never written.
    Unexpected,
}

impl CutKind {
    pub const ALL: [CutKind; 6] = [
        CutKind::LostAfterFlush,
        CutKind::Torn,
        CutKind::NotDurable,
        CutKind::Corrupt,
        CutKind::Misdirected,
        CutKind::Unexpected,
    ];

    /// The name used in JSON, YAML and text.
    pub fn name(self) -> &'static str {
        match self {
            CutKind::LostAfterFlush => "lost_after_flush",
            CutKind::Torn => "torn",
            CutKind::NotDurable => "not_durable",
            CutKind::Corrupt => "corrupt",
            CutKind::Misdirected => "misdirected",
            CutKind::Unexpected => "unexpected",
        }
    }

    /// The finding against the last completed flush, named for a power cut.
    fn of(k: FindingKind) -> CutKind {
        match k {
            FindingKind::Lost => CutKind::LostAfterFlush,
            FindingKind::Torn => CutKind::Torn,
            FindingKind::Corrupt => CutKind::Corrupt,
            FindingKind::Misdirected => CutKind::Misdirected,
            FindingKind::Unexpected => CutKind::Unexpected,
        }
    }
}

impl std::fmt::Display for CutKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A finding of a power-cut cycle: its kind in power-loss words, and the block's finding
/// as the classifier gave it (`block`: its offset, the sector at fault, what was expected
/// and found).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CutFinding {
    pub kind: CutKind,
    #[serde(rename = "block")]
    pub finding: Finding,
}

/// What one block holds after the cut.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Judgement {
    /// What the map says it must hold (nothing written since the flush, or what was
    /// acknowledged since).
    Intact,
    /// A write of it was in flight at the cut: old or new, both allowed (counted).
    InFlight,
    /// Acknowledged after the last flush and found older: counted (a finding with `--plp`).
    NotDurable,
    /// Something the drive must not do.
    Finding(CutFinding),
}

/// One block to judge.
#[derive(Debug, Clone, Copy)]
pub struct CutBlock {
    /// The block's byte address.
    pub offset: u64,
    /// The verify state's id.
    pub id: u64,
    /// The atomic write unit, bytes (the logical block; NVMe AWUPF when known).
    pub atomic: usize,
    /// The block's map byte as saved by the last completed flush epoch.
    pub saved: u8,
    /// Its map byte in memory at the cut (busy or pending: a write was in flight).
    pub at_cut: u8,
    /// The drive is said to keep acknowledged writes across a power loss (`--plp`).
    pub plp: bool,
}

/// Judges the bytes read back of one block after a cut.
pub fn judge(b: &CutBlock, data: &[u8]) -> Judgement {
    let check = |expect| BlockCheck {
        offset: b.offset,
        id: b.id,
        atomic: b.atomic,
        expect,
    };
    // What the last completed flush made durable: that generation or a newer one, every
    // atomic unit whole. Older is the drive breaking its flush promise.
    let promised = expect_of(b.saved, false);
    if let Some(f) = classify_block(&check(promised), data) {
        // Zeros where a flushed write was: the write is gone, as a drive that never
        // wrote the block leaves it; torn when sectors of ours share the zeros' unit.
        let zeros = f.kind == FindingKind::Unexpected
            && f.found.is_none()
            && matches!(promised, Expect::Written { .. });
        let kind = match zeros {
            true if unit_has_ours(b, data, f.sector) => CutKind::Torn,
            true => CutKind::LostAfterFlush,
            false => CutKind::of(f.kind),
        };
        return Judgement::Finding(CutFinding { kind, finding: f });
    }
    if b.at_cut == b.saved {
        return Judgement::Intact;
    }
    if b.at_cut & BUSY_OR_PENDING != 0 {
        return Judgement::InFlight;
    }
    // Acknowledged after the last flush, not in flight: it holds that write, or, not yet
    // made durable, something between it and what was flushed.
    let Some(g) = Generation::new(b.at_cut) else {
        return Judgement::Intact;
    };
    let acked = Expect::Written {
        generation: g,
        window: Window::Newer { old_unknown: false },
    };
    match classify_block(&check(acked), data) {
        None => Judgement::Intact,
        Some(f) if b.plp => Judgement::Finding(CutFinding {
            kind: CutKind::NotDurable,
            finding: f,
        }),
        Some(_) => Judgement::NotDurable,
    }
}

/// A sector of ours (this address, this state) in the atomic unit holding byte `sector`.
fn unit_has_ours(b: &CutBlock, data: &[u8], sector: u64) -> bool {
    let atomic = b.atomic.max(SECTOR);
    let start = (sector - b.offset) as usize / atomic * atomic;
    let end = (start + atomic).min(data.len());
    data[start..end]
        .chunks_exact(SECTOR)
        .enumerate()
        .any(|(i, s)| {
            matches!(Sector::parse(s), Sector::Valid(h)
                if h.id == b.id && h.lba == b.offset + (start + i * SECTOR) as u64)
        })
}

/// The newest generation of ours in a block's sectors (a torn block's, to settle it as
/// that write or the one before).
pub fn newest_generation(offset: u64, id: u64, data: &[u8]) -> Option<Generation> {
    data.chunks_exact(SECTOR)
        .enumerate()
        .filter_map(|(i, s)| match Sector::parse(s) {
            Sector::Valid(h) if h.id == id && h.lba == offset + (i * SECTOR) as u64 => {
                Generation::new(h.generation)
            }
            _ => None,
        })
        .reduce(|a, g| if a.is_older_than(g) { g } else { a })
}

/// Blocks and findings of one cycle's check.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CutTally {
    /// Blocks read back and judged (every block written under the state).
    pub blocks_checked: u64,
    /// Blocks a write of which was in flight at the cut (old or new allowed).
    pub in_flight: u64,
    /// Blocks acknowledged after the last flush and found older (not a finding without
    /// `--plp`).
    pub not_durable: u64,
    pub lost_after_flush: u64,
    pub torn: u64,
    /// Not-durable blocks counted as findings (`--plp`).
    pub not_durable_findings: u64,
    pub corrupt: u64,
    pub misdirected: u64,
    pub unexpected: u64,
}

impl CutTally {
    /// Counts one judgement.
    pub fn add(&mut self, j: &Judgement) {
        self.blocks_checked += 1;
        match j {
            Judgement::Intact => {}
            Judgement::InFlight => self.in_flight += 1,
            Judgement::NotDurable => self.not_durable += 1,
            Judgement::Finding(f) => *self.count_mut(f.kind) += 1,
        }
    }

    fn count_mut(&mut self, k: CutKind) -> &mut u64 {
        match k {
            CutKind::LostAfterFlush => &mut self.lost_after_flush,
            CutKind::Torn => &mut self.torn,
            CutKind::NotDurable => &mut self.not_durable_findings,
            CutKind::Corrupt => &mut self.corrupt,
            CutKind::Misdirected => &mut self.misdirected,
            CutKind::Unexpected => &mut self.unexpected,
        }
    }

    /// The findings of one kind.
    pub fn of(&self, k: CutKind) -> u64 {
        match k {
            CutKind::LostAfterFlush => self.lost_after_flush,
            CutKind::Torn => self.torn,
            CutKind::NotDurable => self.not_durable_findings,
            CutKind::Corrupt => self.corrupt,
            CutKind::Misdirected => self.misdirected,
            CutKind::Unexpected => self.unexpected,
        }
    }

    /// All findings.
    pub fn findings(&self) -> u64 {
        CutKind::ALL.iter().map(|k| self.of(*k)).sum()
    }

    /// Adds another cycle's.
    pub fn add_tally(&mut self, o: &CutTally) {
        self.blocks_checked += o.blocks_checked;
        self.in_flight += o.in_flight;
        self.not_durable += o.not_durable;
        for k in CutKind::ALL {
            *self.count_mut(k) += o.of(k);
        }
    }

    /// Passes a power-loss test: nothing lost after a flush, nothing torn (other findings
    /// are data damage and fail it too).
    pub fn passes(&self) -> bool {
        self.findings() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::header::stamp_block;
    use CutKind::*;

    const ID: u64 = 0xC07;
    const BUSY: u8 = 0x40;
    const PENDING: u8 = 0x80;

    fn g(v: u8) -> Generation {
        Generation::new(v).unwrap()
    }

    fn block(offset: u64, gen: u8) -> Vec<u8> {
        let mut b = vec![0x5au8; 4096];
        stamp_block(&mut b, offset, ID, g(gen), 1);
        b
    }

    fn cut(saved: u8, at_cut: u8) -> CutBlock {
        CutBlock {
            offset: 8192,
            id: ID,
            atomic: 4096,
            saved,
            at_cut,
            plp: false,
        }
    }

    fn kind(j: Judgement) -> Option<CutKind> {
        match j {
            Judgement::Finding(f) => Some(f.kind),
            _ => None,
        }
    }

    #[test]
    fn flushed_and_found_older_is_lost_after_flush_at_its_offset() {
        let j = judge(&cut(5, 5), &block(8192, 4));
        let Judgement::Finding(f) = j else {
            panic!("no finding: {j:?}")
        };
        assert_eq!((f.kind, f.finding.offset), (LostAfterFlush, 8192));
        assert_eq!(judge(&cut(5, 5), &block(8192, 5)), Judgement::Intact);
        // Written again after the flush, and that write lost too: still the flushed one lost.
        assert_eq!(
            kind(judge(&cut(5, 7), &block(8192, 4))),
            Some(LostAfterFlush)
        );
    }

    #[test]
    fn in_flight_at_the_cut_is_allowed_old_or_new() {
        for found in [5, 6] {
            assert_eq!(
                judge(&cut(5, BUSY | PENDING | 6), &block(8192, found)),
                Judgement::InFlight
            );
            // A write that failed after the cut: pending.
            assert_eq!(
                judge(&cut(5, PENDING | 6), &block(8192, found)),
                Judgement::InFlight
            );
        }
        // Older than what was flushed is still lost after the flush.
        assert_eq!(
            kind(judge(&cut(5, BUSY | PENDING | 6), &block(8192, 4))),
            Some(LostAfterFlush)
        );
        // A first write in flight: whatever was there before.
        assert_eq!(
            judge(&cut(0, BUSY | PENDING | 1), &[0u8; 4096]),
            Judgement::InFlight
        );
    }

    #[test]
    fn acknowledged_after_the_flush_and_lost_is_not_durable_a_finding_only_with_plp() {
        assert_eq!(judge(&cut(5, 7), &block(8192, 7)), Judgement::Intact);
        assert_eq!(judge(&cut(5, 7), &block(8192, 6)), Judgement::NotDurable);
        assert_eq!(judge(&cut(5, 7), &block(8192, 5)), Judgement::NotDurable);
        let plp = CutBlock {
            plp: true,
            ..cut(5, 7)
        };
        assert_eq!(kind(judge(&plp, &block(8192, 5))), Some(NotDurable));
        // Never written before the flush: the old contents are allowed, unless `--plp`.
        assert_eq!(judge(&cut(0, 1), &[0u8; 4096]), Judgement::NotDurable);
        assert_eq!(judge(&cut(0, 1), &block(8192, 1)), Judgement::Intact);
    }

    #[test]
    fn a_unit_mixing_two_writes_is_torn_and_whole_units_may_mix() {
        let mut mixed = block(8192, 5);
        mixed[2048..].copy_from_slice(&block(8192, 6)[2048..]);
        let j = judge(&cut(5, BUSY | 6), &mixed);
        let Judgement::Finding(f) = j else {
            panic!("not torn: {j:?}")
        };
        assert_eq!((f.kind, f.finding.sector), (Torn, 8192 + 2048));
        // With 512-byte atomic units, a multi-sector write may land in part.
        let small = CutBlock {
            atomic: 512,
            ..cut(5, BUSY | 6)
        };
        assert_eq!(judge(&small, &mixed), Judgement::InFlight);
    }

    #[test]
    fn a_unit_half_zeros_half_ours_is_torn() {
        let mut half = block(8192, 5);
        half[2048..].fill(0);
        let j = judge(&cut(5, 5), &half);
        let Judgement::Finding(f) = j else {
            panic!("not torn: {j:?}")
        };
        assert_eq!((f.kind, f.finding.sector), (Torn, 8192 + 2048));
        assert_eq!(newest_generation(8192, ID, &half), Some(g(5)));
        let mut mixed = block(8192, 5);
        mixed[2048..].copy_from_slice(&block(8192, 6)[2048..]);
        assert_eq!(newest_generation(8192, ID, &mixed), Some(g(6)));
    }

    #[test]
    fn damage_is_named_as_the_classifier_names_it() {
        let mut bad = block(8192, 5);
        bad[700] ^= 1;
        assert_eq!(kind(judge(&cut(5, 5), &bad)), Some(Corrupt));
        assert_eq!(kind(judge(&cut(5, 5), &block(0, 5))), Some(Misdirected));
        // Zeros where a flushed write was: that write is gone.
        assert_eq!(kind(judge(&cut(5, 5), &[0u8; 4096])), Some(LostAfterFlush));
    }

    #[test]
    fn the_tally_passes_only_without_findings() {
        let mut t = CutTally::default();
        t.add(&Judgement::Intact);
        t.add(&Judgement::InFlight);
        t.add(&Judgement::NotDurable);
        assert!(t.passes());
        assert_eq!((t.blocks_checked, t.in_flight, t.not_durable), (3, 1, 1));
        t.add(&judge(&cut(5, 5), &block(8192, 4)));
        assert!(!t.passes());
        let mut all = CutTally::default();
        all.add_tally(&t);
        all.add_tally(&t);
        assert_eq!((all.lost_after_flush, all.blocks_checked), (2, 8));
    }
}
