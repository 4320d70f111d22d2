//! A cut that took the whole machine down, finished after the restart: `drivescope verify`
//! finds the marker the cutter left in the verify state's folder, checks that the drive is
//! the record's drive, judges every block against the last completed flush (the map in
//! memory at the cut went with the machine), and adds the cycle to the power-cut record.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::check::{check_after_cut, Judging};
use super::identity::identity;
use super::record::{load_record, resave_record, CycleRecord, PowerCutRecord};
use super::{pending, PowerCutError};
use crate::run::RunError;

/// A cycle finished after a restart, and the record it was added to.
#[derive(Debug)]
pub struct Finished {
    pub cycle: CycleRecord,
    pub record: PowerCutRecord,
    /// Where the record is saved.
    pub saved: PathBuf,
}

/// [`finish_after_restart`] in the verify state named (`--verify-state`), else the
/// target's own.
pub fn finish_for(target: &Path, state: Option<&Path>) -> Result<Option<Finished>, RunError> {
    let dir = state.map_or_else(
        || crate::run::verify::dir_for_target(target),
        Path::to_path_buf,
    );
    finish_after_restart(&dir, target)
}

/// Finishes the cut under way in the verify state `dir` of `target`, if there is one.
pub fn finish_after_restart(dir: &Path, target: &Path) -> Result<Option<Finished>, RunError> {
    let Some((cut, marker)) = pending::read(dir)? else {
        return Ok(None);
    };
    let gone = |why: String| PowerCutError::RecordGone {
        state: dir.to_path_buf(),
        record: cut.record.clone(),
        why,
    };
    let mut record = load_record(&cut.record).map_err(|e| gone(e.to_string()))?;
    if record.cycles.iter().any(|c| c.cycle == cut.cycle) {
        return Err(gone(format!("already holds cycle {}", cut.cycle)).into());
    }
    let now = identity(target).map_err(|source| PowerCutError::Io {
        what: format!("reading the identity of {}", target.display()),
        source,
    })?;
    if let Some(what) = record.identity.as_ref().and_then(|id| id.differs(&now)) {
        return Err(PowerCutError::OtherDrive {
            cycle: cut.cycle,
            path: target.to_path_buf(),
            what,
        }
        .into());
    }
    // Read before the check opens the state (the journal of an unclean end is kept).
    let epoch = crate::verify::state::last_flushed(dir).unwrap_or(0);
    let judging = Judging {
        atomic: record.atomic_unit,
        plp: record.plp,
    };
    let (tally, findings) = check_after_cut(dir, target, None, judging, &mut BTreeMap::new())?;
    let cycle = CycleRecord {
        cycle: cut.cycle,
        cut_at: cut.cut_at,
        cut_after_s: cut.cut_after_s,
        epoch,
        machine_down: true,
        tally,
        findings,
        ..CycleRecord::default()
    };
    record.cycles.push(cycle.clone());
    if record.cycles.len() < record.cycles_asked as usize {
        record.stopped = Some(format!(
            "cycle {}: the cut took the machine down; finished by verify after the restart",
            cut.cycle
        ));
    }
    record.sum();
    resave_record(&record, &cut.record)?;
    marker.remove()?;
    Ok(Some(Finished {
        cycle,
        saved: cut.record,
        record,
    }))
}
