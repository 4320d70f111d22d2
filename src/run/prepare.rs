//! A run's targets made ready before any I/O: each request [`prepare`]d on its host (a
//! preset expanded for its target, one workload as a one-step plan, an fio job file read),
//! and a run of several checked as a whole ([`prepare_all`]: no two targets one file, no
//! drive written by two).

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use super::error::RunError;
use super::fio_job::prepare_fio_job;
use super::lock::RunLocks;
use super::request::{host_for, prepare_preset, prepare_single, Prepared, RunRequest, RunWhat};
use crate::test_target::{self, FileId, PreparedTarget, TargetKind};

/// Makes the target ready and the plan for it. A preset's target is prepared read-only
/// first (creating the default test file if needed), the plan expanded for its facts, and
/// the target checked again for writes if the plan writes; then the target is locked for
/// the run ([`lock`]).
pub fn prepare(req: &RunRequest) -> Result<Prepared, RunError> {
    let mut p = prepare_until(req, None)?;
    lock(&mut p)?;
    Ok(p)
}

/// [`prepare`], a wait for the target's host ending when `stop` is set.
fn prepare_until(req: &RunRequest, stop: Option<&Arc<AtomicBool>>) -> Result<Prepared, RunError> {
    let host = host_for(req, stop)?;
    match &req.what {
        RunWhat::Preset(p) => prepare_preset(req.clone(), p, host),
        RunWhat::Single(s) => prepare_single(req.clone(), s, host),
        RunWhat::FioJob(j) => prepare_fio_job(req, j),
    }
}

/// Prepares every target of a run of several before any is changed: the targets that
/// exist first (each checked by the write guard; one refusal refuses the run, naming its
/// target), then the test files to create.
pub fn prepare_many(reqs: &[RunRequest]) -> Result<Vec<Prepared>, RunError> {
    prepare_all(reqs, false, None).map(|(p, _)| p)
}

/// [`prepare_many`]; with `keep_going`, a target whose host cannot be reached (ssh fails,
/// no agent there) is left out rather than refuse the run, and said in the list returned
/// (the run refuses still when no target is left). A wait for a host (ssh, the handshake,
/// its guard) ends at once when `stop` is set (the dashboard's stop: its run's own flag;
/// the headless run's signals end it without), as [`RunError::Remote`] `Stopped`.
pub fn prepare_all(
    reqs: &[RunRequest],
    keep_going: bool,
    stop: Option<&Arc<AtomicBool>>,
) -> Result<(Vec<Prepared>, Vec<String>), RunError> {
    if reqs.len() > 1 {
        check_shared_drives(reqs)?;
    }
    let mut left_out = Vec::new();
    // A remote target is checked by its host's guard in the first pass.
    let exists = |r: &RunRequest| {
        r.target.at.is_remote() || r.target.path.as_ref().is_some_and(|p| p.exists())
    };
    let mut out: Vec<Option<Prepared>> = reqs.iter().map(|_| None).collect();
    for pass in [true, false] {
        for (slot, r) in out.iter_mut().zip(reqs) {
            if exists(r) == pass {
                match prepare_until(r, stop) {
                    Ok(p) => *slot = Some(p),
                    Err(RunError::Remote(e)) if keep_going && e.is_unreachable() => {
                        left_out.push(format!("left out (--keep-going): {e}"));
                    }
                    Err(e) => return Err(e),
                }
            }
        }
    }
    let prepared: Vec<Prepared> = out.into_iter().flatten().collect();
    if prepared.is_empty() && !left_out.is_empty() {
        return Err(RunError::NoneReachable(left_out.join("; ")));
    }
    check_shared_remote_drives(&prepared)?;
    check_same_file(&prepared)?;
    // Every target locked for the run once the run is known whole (two names of one file
    // are refused above, as such), before the session.
    let mut prepared = prepared;
    for p in &mut prepared {
        lock(p)?;
    }
    Ok((prepared, left_out))
}

/// Two targets that are one file or device, whatever host and path named them (a remote
/// host that is this machine, reached as `localhost`, an alias or a forwarded port), are
/// refused before any I/O: each drive's figures would be the other's, and one's writes
/// would land under the other's reads. Told by [`FileId`]: the machine's boot id, which no
/// name or address of it changes, with the file's device and inode as its own kernel says.
fn check_same_file(runs: &[Prepared]) -> Result<(), RunError> {
    let id = |p: &Prepared| match p.host.path_here(&p.target) {
        _ if p.target.kind == test_target::TargetKind::None => None,
        Some(path) => test_target::file_id(path),
        None => p.told.file.clone(),
    };
    let ids: Vec<Option<FileId>> = runs.iter().map(id).collect();
    for (i, a) in ids.iter().enumerate() {
        for (j, b) in ids.iter().enumerate().take(i) {
            if a.is_some() && a == b {
                return Err(RunError::SameFile {
                    first: runs[j].label.clone(),
                    second: runs[i].label.clone(),
                });
            }
        }
    }
    Ok(())
}

/// [`check_shared_drives`] for targets on other hosts, by the drive each host resolved: two
/// targets on one host's one drive may be read together, never written.
fn check_shared_remote_drives(runs: &[Prepared]) -> Result<(), RunError> {
    let disk = |p: &Prepared| {
        let h = p.host.name()?;
        let d = p.told.drive.as_ref()?.primary()?.name.clone();
        Some((h, d))
    };
    for (i, a) in runs.iter().enumerate() {
        for b in &runs[..i] {
            if let (Some((ha, da)), Some((hb, db))) = (disk(a), disk(b)) {
                if ha == hb && da == db && (a.io().1 || b.io().1) {
                    return Err(RunError::SharedDriveWrites {
                        first: b.target.path.clone(),
                        second: a.target.path.clone(),
                        disk: format!("{da} of host {ha}"),
                    });
                }
            }
        }
    }
    Ok(())
}

/// Whether a request writes: a plain run's pattern, or any phase of its preset.
fn writes(r: &RunRequest) -> bool {
    match &r.what {
        RunWhat::Single(s) => s.workload.rw.read_percent(s.workload.rwmixread) < 100,
        // Its targets are its own: counted as written, so none is shared with another.
        RunWhat::FioJob(_) => true,
        RunWhat::Preset(p) => p.phases.iter().any(|ph| {
            ph.workload.io().is_some_and(|w| {
                let mixes: Vec<u8> = ph
                    .matrix
                    .as_ref()
                    .map(|m| m.rwmixread.iter().map(|r| r.0).collect())
                    .filter(|v: &Vec<u8>| !v.is_empty())
                    .unwrap_or_else(|| vec![w.rwmixread.map_or(50, |r| r.0)]);
                mixes.iter().any(|m| w.rw.read_percent(*m) < 100)
            })
        }),
    }
}

/// Two targets on one physical drive may be read together (shown as sharing it) but not
/// written: each drive's figures would be the other's too.
fn check_shared_drives(reqs: &[RunRequest]) -> Result<(), RunError> {
    let disk = |r: &RunRequest| {
        if r.target.at.is_remote() {
            return None;
        }
        let p = r.target.path.as_ref()?;
        let d = crate::drive::resolve(p).ok()?;
        Some((p.clone(), d.primary()?.name.clone()))
    };
    let disks: Vec<Option<(PathBuf, String)>> = reqs.iter().map(disk).collect();
    for (i, a) in disks.iter().enumerate() {
        for (j, b) in disks.iter().enumerate().take(i) {
            if let (Some((pa, da)), Some((pb, db))) = (a, b) {
                if da == db && (writes(&reqs[i]) || writes(&reqs[j])) {
                    return Err(RunError::SharedDriveWrites {
                        first: pb.clone(),
                        second: pa.clone(),
                        disk: da.clone(),
                    });
                }
            }
        }
    }
    Ok(())
}

/// A target the run fills before it reads it (a never-written file: the fill writes it).
fn fills(reads: bool, t: &PreparedTarget) -> bool {
    reads && t.kind == TargetKind::File && t.unwritten
}

/// Locks every target of `p` for its run: exclusively each one it writes or fills, the
/// others shared; a run without a target (the nop engine) locks nothing. Refused at once
/// when another run holds one (naming it), nothing locked then.
fn lock(p: &mut Prepared) -> Result<(), RunError> {
    let (reads, writes) = p.io();
    let locks = match &p.kind {
        // A job file's targets are this host's: each file once, however many jobs name it.
        RunWhat::FioJob(f) => {
            let prepared = std::iter::once(&p.target).chain(&f.also);
            let wanted: Vec<(PathBuf, bool)> = f
                .targets
                .iter()
                .zip(prepared)
                .map(|((path, w), t)| (path.clone(), *w || fills(reads, t)))
                .collect();
            crate::engine_list::lock_targets(&wanted)?
        }
        _ if p.target.kind == TargetKind::None => Vec::new(),
        _ => {
            let exclusive = writes || fills(reads, &p.target);
            p.host.lock(&p.target, exclusive)?.into_iter().collect()
        }
    };
    p.locks = RunLocks::new(locks);
    Ok(())
}
