//! After a run of `drivescope verify`: a verify state the pass read in full is settled.

use super::error::RunError;
use super::hub::Finished;
use super::request::Prepared;
use crate::verify::VerifyError;

/// After a complete `drivescope verify` pass over the whole target, a state left by an
/// unclean end holds what the pass found good: saved, and closed cleanly. A pass over part
/// of the target leaves the state as it was (unclean).
pub fn settle_verify(prepared: &[Prepared], finished: &Finished) -> Result<(), RunError> {
    if !matches!(
        finished.result,
        Ok(crate::outcome::RunOutcome::Completed { .. })
    ) {
        return Ok(());
    }
    for p in prepared {
        let Some(state) = p.verify.as_ref().filter(|s| !s.clean()) else {
            continue;
        };
        // Only a pass over every block settles the state: blocks outside a partial pass
        // keep what the unclean end left, and must still be checked by the looser rule.
        let b = state.meta.block;
        let whole = p.plan.steps.iter().all(|s| {
            s.workload.region.offset == 0 && s.workload.region.len / b >= p.target.size / b
        });
        if !whole {
            continue;
        }
        let io = |source| VerifyError::Io {
            path: state.dir().to_path_buf(),
            source,
        };
        let file = std::fs::File::open(&p.target.path).map_err(io)?;
        state.close(&file).map_err(io)?;
    }
    Ok(())
}
