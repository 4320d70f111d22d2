//! `drivescope verify`: the target's region read once by the io_uring engine, every block
//! checked against its verify state, as a run (session, printer, exit code); a state left
//! by an unclean end is settled by a complete pass.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use crate::cli::VerifyArgs;
use crate::output::{err_line, out_line};
use crate::plan::PlanOptions;
use crate::printer::{Format, PrintMode, Printer};
use crate::run::power_cut;
use crate::run::{
    self, Finished, RunControl, RunError, RunRequest, RunWhat, SessionPlan, SingleStep,
    TargetChoice, TelemetrySource, VerifyAsk,
};
use crate::session::RecorderOptions;
use crate::workload::{BlockSizes, Region, RwMode, Workload};

/// Runs the check; `stop` is the flag the signal handlers set.
pub fn run(a: &VerifyArgs, stop: Arc<AtomicBool>) -> Result<Finished, RunError> {
    // A power cut that took the machine down: its cycle finished instead.
    if let Some(done) = power_cut::finish_for(&a.target, a.verify_state.as_deref())? {
        let (cycle, verdict) = match a.json {
            true => (
                power_cut::cycle_json(&done.cycle),
                power_cut::record_json(&done.record),
            ),
            false => (
                power_cut::cycle_line(&done.cycle),
                power_cut::verdict_line(&done.record),
            ),
        };
        out_line(&cycle);
        out_line(&verdict);
        err_line(&power_cut::saved_note(&done.saved));
        return Ok(power_cut::finished(Some(&done.record), Some(done.saved)));
    }
    let options = crate::report::with_snapshot_files(RecorderOptions {
        replace: a.force,
        ..Default::default()
    });
    // Claimed (checked and locked) before the state or the target is opened.
    let lock = match &a.session {
        Some(p) => Some(run::claim_session(p, &options)?),
        None => None,
    };
    let req = RunRequest {
        verify: Some(VerifyAsk {
            state: a.verify_state.clone(),
            pass_only: true,
            ..Default::default()
        }),
        target: TargetChoice {
            path: Some(a.target.clone()),
            size: a.size,
            ..Default::default()
        },
        what: RunWhat::Single(SingleStep {
            workload: Workload::new(
                RwMode::Read,
                BlockSizes::single(4096),
                16,
                Region {
                    offset: a.offset,
                    len: 0,
                },
                0x5eed,
            ),
            ramp: std::time::Duration::ZERO,
            duration: std::time::Duration::from_secs(1),
            io_size: None,
        }),
        plan: PlanOptions::default(),
    };
    let prepared = run::prepare_many(std::slice::from_ref(&req))?;
    let format = if a.json { Format::Json } else { Format::Text };
    let mut printer = Printer::new(format, PrintMode::Single);
    let session = SessionPlan {
        path: a.session.clone(),
        options,
        command: Some(crate::ostext::command_line()),
        note: None,
        notes: Vec::new(),
        lock,
    };
    let (_handle, ctl) = RunControl::with_stop_flag(stop);
    let finished = run::execute_many(
        &prepared,
        session,
        TelemetrySource::Poll,
        &ctl,
        &mut [&mut printer],
    )?;
    run::settle_verify(&prepared, &finished)?;
    Ok(finished)
}
