//! `run --verify --power-cut CMD`: cycles of a verified write workload, each ended by the
//! user's power cut at a chosen moment; the instant, the last completed flush epoch and
//! the writes in flight recorded; the drive waited for (the same drive: serial, WWN, size);
//! every block written under the verify state read back and judged
//! ([`crate::verify::power_cut`]); the state settled to what was found; the next cycle.

mod ask;
mod check;
mod finish;
mod identity;
mod pending;
mod record;

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use super::control::{RunCmd, RunControl, RunHandle};
use super::cut_error::{run_command, succeeded};
pub use super::cut_error::{CommandStatus, PowerCutError};
use super::error::RunError;
use super::hub::Finished;
use super::request::{Prepared, RunRequest};
use crate::verify::map::BUSY;
use crate::verify::power_cut::CutTally;
use crate::verify::VerifyState;
pub use ask::{CutAt, PowerCutAsk};
use check::check_after_cut;
pub use finish::{finish_after_restart, finish_for, Finished as FinishedCut};
use identity::{check_elsewhere, existing, wait_ready};
pub use identity::{identity, DriveIdentity};
use pending::PendingCut;
pub use pending::PENDING_FILE;
pub use record::{
    cycle_json, cycle_line, is_record, load_record, record_json, saved_note, verdict_line,
    CycleRecord, PowerCutRecord, RecordError, RecordFile, Verdict, RECORD,
};

/// What the cutter thread saw.
enum Cut {
    Done(CutDone),
    Failed(CommandStatus),
    /// The run ended first.
    RunEnded,
    /// Stopped by a signal before the cut.
    Interrupted,
}

/// A cut made: when, how long into the run and how long it took, the last completed flush
/// epoch and the map of blocks at the cut.
struct CutDone {
    at: SystemTime,
    after: Duration,
    took: Duration,
    epoch: u64,
    at_cut: Vec<u8>,
    /// The marker of the cut under way, removed once the cycle is recorded.
    marker: crate::session::Written,
}

/// How often the cutter looks at the clock, the epochs and the stop flag.
const TICK: Duration = Duration::from_millis(5);

/// Blocks with a write in flight in the map taken at a cut.
fn in_flight(at_cut: &[u8]) -> u64 {
    at_cut.iter().filter(|b| *b & BUSY != 0).count() as u64
}

/// The cycle a cutter cuts: its number and the record it belongs to.
struct CutCycle {
    cycle: u32,
    record: std::path::PathBuf,
}

/// Waits for the moment, marks the cut under way, cuts, freezes the state, stops the run.
fn cutter(
    ask: PowerCutAsk,
    moment: Option<Duration>,
    state: Arc<VerifyState>,
    handle: RunHandle,
    stop: Arc<AtomicBool>,
    ended: mpsc::Receiver<()>,
    of: CutCycle,
) -> Result<Cut, RunError> {
    let start = Instant::now();
    loop {
        let due = match (ask.at, moment) {
            (CutAt::Epochs(n), _) => state.epoch() >= n,
            (_, Some(m)) => start.elapsed() >= m,
            (_, None) => true,
        };
        if due {
            break;
        }
        if stop.load(Ordering::Relaxed) {
            handle.send(RunCmd::Stop);
            return Ok(Cut::Interrupted);
        }
        match ended.recv_timeout(TICK) {
            Err(RecvTimeoutError::Timeout) => {}
            _ => return Ok(Cut::RunEnded),
        }
    }
    let at = SystemTime::now();
    let after = start.elapsed();
    // Durable before the cut: a cut that takes this machine down is finished by `verify`.
    let cut = PendingCut {
        record: of.record,
        cycle: of.cycle,
        cut_at: crate::session::time::LocalTime::of(at).rfc3339(),
        cut_after_s: after.as_secs_f64(),
    };
    let marker = pending::write(state.dir(), &cut).inspect_err(|_| handle.send(RunCmd::Stop))?;
    let status = run_command(&ask.cut);
    let took = start.elapsed().saturating_sub(after);
    if !succeeded(&status) {
        handle.send(RunCmd::Stop);
        let _ = marker.remove();
        return Ok(Cut::Failed(status));
    }
    let (epoch, at_cut) = state.cut();
    handle.send(RunCmd::PowerCut(crate::session::PowerCutData {
        cycle: of.cycle,
        epoch,
        blocks_in_flight: in_flight(&at_cut),
    }));
    handle.send(RunCmd::Stop);
    Ok(Cut::Done(CutDone {
        at,
        after,
        took,
        epoch,
        at_cut,
        marker,
    }))
}

/// A power-cut run's end: the cycles recorded (none when it was refused before the first
/// cut), and what ended it early.
#[derive(Debug)]
pub struct PowerCutRun {
    pub record: Option<PowerCutRecord>,
    /// Where the record is saved (saved again after every cycle).
    pub saved: Option<std::path::PathBuf>,
    pub ended: Option<RunError>,
}

/// A power-cut run's (or a finished cycle's) end as a run's: its findings counted, the
/// record as what was saved.
pub fn finished(record: Option<&PowerCutRecord>, saved: Option<std::path::PathBuf>) -> Finished {
    Finished {
        result: Ok(crate::outcome::RunOutcome::Completed {
            errors: 0,
            first_error: None,
        }),
        tally: super::Tally {
            findings: record.map_or(0, |r| r.totals.findings()),
            ..Default::default()
        },
        saved,
    }
}

/// The caller's side of a cycle: runs one cycle's prepared workload under the given
/// control (with its printer and session).
pub type RunOne<'a> = dyn FnMut(&[Prepared], &RunControl) -> Result<Finished, RunError> + 'a;

/// Runs the cycles; `on_cycle` hears each cycle as it is recorded.
pub fn run_cycles(
    reqs: &[RunRequest],
    ask: &PowerCutAsk,
    sessions: &Path,
    stop: &Arc<AtomicBool>,
    run_one: &mut RunOne<'_>,
    on_cycle: &mut dyn FnMut(&CycleRecord),
) -> PowerCutRun {
    let mut kept = (None, None);
    let mut ended = cycles(&mut kept, reqs, ask, sessions, stop, run_one, on_cycle).err();
    let (mut record, mut file) = kept;
    if let Some(r) = &mut record {
        r.stopped = ended.as_ref().map(ToString::to_string);
        r.sum();
        if let Some(f) = &mut file {
            if let Err(e) = f.save(r) {
                ended.get_or_insert(e);
            }
        }
    }
    PowerCutRun {
        record,
        saved: file.as_ref().map(RecordFile::path),
        ended,
    }
}

/// The cycles, the record and its file kept in `kept` as they are made (saved, with why
/// the cycles stopped, by [`run_cycles`]).
fn cycles(
    kept: &mut (Option<PowerCutRecord>, Option<RecordFile>),
    reqs: &[RunRequest],
    ask: &PowerCutAsk,
    sessions: &Path,
    stop: &Arc<AtomicBool>,
    run_one: &mut RunOne<'_>,
    on_cycle: &mut dyn FnMut(&CycleRecord),
) -> Result<(), RunError> {
    let (record, file) = kept;
    let [req] = reqs else {
        return Err(PowerCutError::Needs("one target").into());
    };
    if req.verify.is_none() {
        return Err(PowerCutError::Needs("--verify").into());
    }
    // Before anything of the state is made: it and the sessions on another drive.
    let target = req
        .target
        .path
        .clone()
        .unwrap_or_else(crate::test_target::default_target_path);
    let state_dir = req
        .verify
        .as_ref()
        .and_then(|v| v.state.clone())
        .unwrap_or_else(|| super::verify::dir_for_target(&target));
    check_elsewhere(
        &existing(&target),
        &existing(&state_dir),
        &existing(sessions),
    )?;
    if pending::path_in(&state_dir).exists() {
        return Err(PowerCutError::Unfinished {
            state: state_dir,
            target,
        }
        .into());
    }
    let mut req = req.clone();
    let mut torn = std::collections::BTreeMap::new();
    let mut rng = crate::engine::Rng::new(ask.seed ^ 0x9e37_79b9_7f4a_7c15);
    for cycle in 1..=ask.cycles {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        // Each cycle writes its own sequence of offsets.
        let seed = ask.seed.wrapping_add(u64::from(cycle));
        req.plan.seed = seed;
        if let super::request::RunWhat::Single(s) = &mut req.what {
            s.workload.seed = seed;
        }
        let (prepared, _) = super::prepare::prepare_all(std::slice::from_ref(&req), false, None)?;
        // Only the first cycle starts a new state when asked to.
        if let Some(v) = &mut req.verify {
            v.reset = false;
        }
        let p = prepared.first().ok_or(PowerCutError::Needs("one target"))?;
        let state = p.verify.clone().ok_or(PowerCutError::Needs("--verify"))?;
        let path = p.target.path.clone();
        let dir = state.dir().to_path_buf();
        let io = |what: &str| {
            let what = format!("{what} {}", path.display());
            move |source| PowerCutError::Io { what, source }
        };
        let before = identity(&path).map_err(io("reading the identity of"))?;
        let rec = record.get_or_insert_with(|| PowerCutRecord {
            target: path.clone(),
            cut_command: ask.cut.clone(),
            restore_command: ask.restore.clone(),
            cut_at: ask.at,
            plp: ask.plp,
            atomic_unit: ask.atomic,
            cycles_asked: ask.cycles,
            verify_state: Some(dir.clone()),
            identity: Some(before.clone()),
            cycles: Vec::new(),
            totals: CutTally::default(),
            verdict: Verdict::Pass,
            stopped: None,
        });
        let rec_file = match file {
            Some(f) => f,
            None => file.insert(RecordFile::create(rec, sessions)?),
        };
        let moment = match ask.at {
            CutAt::Fixed(d) => Some(d),
            CutAt::Random(a, b) => {
                let span = (b - a).as_nanos() as u64;
                Some(a + Duration::from_nanos(rng.below(span.max(1))))
            }
            CutAt::Epochs(_) => None,
        };
        let (handle, ctl) = RunControl::new();
        let (ended_tx, ended_rx) = mpsc::channel::<()>();
        let cut = {
            let (ask, state, stop) = (ask.clone(), state.clone(), stop.clone());
            let of = CutCycle {
                cycle,
                record: rec_file.path(),
            };
            std::thread::Builder::new()
                .name("power-cut".into())
                .spawn(move || cutter(ask, moment, state, handle, stop, ended_rx, of))
                .map_err(io("starting the cutter for"))?
        };
        let finished = run_one(&prepared, &ctl);
        drop(ended_tx);
        let cut = cut.join().unwrap_or(Ok(Cut::Interrupted));
        // The run's hold on the state and the target ends here.
        drop(state);
        drop(prepared);
        let session = finished?
            .saved
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()));
        let done = match cut? {
            Cut::Done(done) => done,
            Cut::Failed(status) => {
                return Err(PowerCutError::CutFailed {
                    cycle,
                    cmd: ask.cut.clone(),
                    status,
                }
                .into())
            }
            Cut::RunEnded => return Err(PowerCutError::EndedFirst { cycle }.into()),
            Cut::Interrupted => break,
        };
        if let Some(cmd) = &ask.restore {
            let status = run_command(cmd);
            if !succeeded(&status) {
                return Err(PowerCutError::RestoreFailed {
                    cycle,
                    cmd: cmd.clone(),
                    status,
                }
                .into());
            }
        }
        let back = Instant::now();
        match wait_ready(&path, &before, cycle, ask.ready_within, stop) {
            Ok(()) => {}
            // Another drive: this cycle can never be finished, by this run or by `verify`.
            Err(e @ PowerCutError::OtherDrive { .. }) => {
                done.marker.remove()?;
                return Err(e.into());
            }
            // Not back yet: the marker stays, for `verify` once it is.
            Err(e) => return Err(e.into()),
        }
        let ready_after = back.elapsed();
        let (tally, findings) =
            check_after_cut(&dir, &path, Some(&done.at_cut), ask.into(), &mut torn)?;
        let c = CycleRecord {
            cycle,
            cut_at: crate::session::time::LocalTime::of(done.at).rfc3339(),
            cut_after_s: done.after.as_secs_f64(),
            cut_took_s: Some(done.took.as_secs_f64()),
            epoch: done.epoch,
            blocks_in_flight: Some(in_flight(&done.at_cut)),
            ready_after_s: Some(ready_after.as_secs_f64()),
            machine_down: false,
            session,
            tally,
            findings,
        };
        on_cycle(&c);
        rec.cycles.push(c);
        rec.sum();
        rec_file.save(rec)?;
        // Recorded: the cut is no longer under way.
        done.marker.remove()?;
    }
    Ok(())
}
