//! After a cut: every block written under the verify state read back past the cache,
//! judged ([`crate::verify::power_cut::judge`]) and settled to what it holds, the state
//! closed cleanly for the next cycle.

use std::collections::BTreeMap;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;

use super::identity::identity;
use super::{PowerCutAsk, PowerCutError};
use crate::run::RunError;
use crate::verify::header::{Sector, SECTOR};
use crate::verify::power_cut::{
    judge, newest_generation, CutBlock, CutFinding, CutKind, CutTally, Judgement,
};
use crate::verify::state::MAX_KEPT;
use crate::verify::{Generation, VerifyError, VerifyState};

/// Bytes read at once by the check.
const CHUNK: u64 = 1 << 20;

/// How blocks are judged: the drive's atomic write unit on power fail (`None`: the logical
/// block) and whether it is said to have power-loss protection.
#[derive(Debug, Clone, Copy)]
pub(super) struct Judging {
    pub atomic: Option<u64>,
    pub plp: bool,
}

impl From<&PowerCutAsk> for Judging {
    fn from(a: &PowerCutAsk) -> Judging {
        Judging {
            atomic: a.atomic,
            plp: a.plp,
        }
    }
}

/// Reads back every block written under the state (as saved, or at the cut), judges it,
/// settles the state to what was found and closes it cleanly. `at_cut`: the map in memory
/// at the cut; `None` when it is lost with the machine (every block then judged against
/// the last completed flush only). `torn`: the blocks found torn in earlier cycles, with
/// the CRC32C of the bytes found then (a block found holding the same bytes again is not
/// reported again).
pub(super) fn check_after_cut(
    dir: &Path,
    path: &Path,
    at_cut: Option<&[u8]>,
    ask: Judging,
    torn: &mut BTreeMap<u64, u32>,
) -> Result<(CutTally, Vec<CutFinding>), RunError> {
    let name = path.display().to_string();
    let size = identity(path)
        .map_err(|source| PowerCutError::Io {
            what: format!("reading the size of {name}"),
            source,
        })?
        .size;
    let state = VerifyState::open(dir, &name, size, 512, 512, false, false)?;
    let io_err = |source| VerifyError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(path)
        .map_err(io_err)?;
    let block = state.meta.block;
    // Within one block: a unit larger than the block is checked block by block.
    let atomic = ask.atomic.map_or(state.meta.atomic(), |a| {
        (a.clamp(512, block) / 512 * 512) as usize
    });
    let per_chunk = (CHUNK / block).max(1);
    let mut buf = crate::engine::AlignedBuf::zeroed((per_chunk * block) as usize).ok_or(
        PowerCutError::Io {
            what: "allocating the read buffer".into(),
            source: std::io::ErrorKind::OutOfMemory.into(),
        },
    )?;
    let blocks = state.map.blocks();
    // Lost with the machine: the map as saved stands for it (nothing known since).
    let saved_map;
    let at_cut = match at_cut {
        Some(m) => m,
        None => {
            saved_map = state.map.raw();
            &saved_map[..]
        }
    };
    let written =
        |i: u64| state.map.load(i) != 0 || at_cut.get(i as usize).is_some_and(|b| *b != 0);
    let mut tally = CutTally::default();
    let mut findings = Vec::new();
    let mut i = 0;
    while i < blocks {
        if !written(i) {
            i += 1;
            continue;
        }
        let mut n = 1;
        while n < per_chunk && i + n < blocks && written(i + n) {
            n += 1;
        }
        let len = (n * block) as usize;
        let data = &mut buf[..len];
        file.read_exact_at(data, i * block).map_err(io_err)?;
        for k in 0..n {
            let b = i + k;
            let bytes = &data[(k * block) as usize..((k + 1) * block) as usize];
            let j = judge(
                &CutBlock {
                    offset: b * block,
                    id: state.meta.id,
                    atomic,
                    saved: state.map.load(b),
                    at_cut: at_cut.get(b as usize).copied().unwrap_or(0),
                    plp: ask.plp,
                },
                bytes,
            );
            let id = state.meta.id;
            // A tear reported in an earlier cycle, the block holding the very same bytes
            // (not written since, or its new write lost): the same tear, not a new one.
            let sum = crc32c::crc32c(bytes);
            if let Some(was) = torn.get(&b) {
                if *was == sum {
                    tally.add(&Judgement::Intact);
                    continue;
                }
                torn.remove(&b);
            }
            if matches!(&j, Judgement::Finding(f) if f.kind == CutKind::Torn) {
                torn.insert(b, sum);
            }
            tally.add(&j);
            match j {
                // Two writes in one block: the newer one or the one before, so the next
                // cycle does not find the same tear again.
                Judgement::Finding(f) if f.kind == CutKind::Torn => {
                    match newest_generation(b * block, id, bytes) {
                        Some(g) => state.map.settle_pending(b, g),
                        None => state.map.settle(b, None),
                    }
                    keep(&mut findings, f);
                }
                other => {
                    state.map.settle(b, found_generation(bytes, b * block, id));
                    if let Judgement::Finding(f) = other {
                        keep(&mut findings, f);
                    }
                }
            }
        }
        i += n;
    }
    // What was found is what the drive holds now: the next cycle starts from it.
    state.close(&file).map_err(io_err)?;
    Ok((tally, findings))
}

/// Keeps a finding while fewer than [`MAX_KEPT`] are kept.
fn keep(findings: &mut Vec<CutFinding>, f: CutFinding) {
    if findings.len() < MAX_KEPT {
        findings.push(f);
    }
}

/// The generation the block's first sector holds, if it is ours and of this address.
fn found_generation(bytes: &[u8], offset: u64, id: u64) -> Option<Generation> {
    match Sector::parse(bytes.get(..SECTOR)?) {
        Sector::Valid(h) if h.id == id && h.lba == offset => Generation::new(h.generation),
        _ => None,
    }
}
