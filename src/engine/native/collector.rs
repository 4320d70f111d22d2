//! Runs one step: checks it, opens the target once per job, starts the workers on a shared
//! clock, merges their per-interval messages into [`IntervalReport`]s (handed to the caller
//! as they complete) and builds the step's [`StepSummary`] from the measured intervals.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Barrier, OnceLock};
use std::time::{Duration, Instant};

use super::discard::TrimKind;
use super::failure::{self, DeviceWatch, KernelCompletions};
use super::nvme::{self, Namespace};
use super::schedule::Schedule;
use super::stopclock::StopClock;
use super::suspend::SuspendWatch;
use super::uring::{build_ring, RingIo};
use super::{WorkerCtx, WorkerMsg};
use crate::engine::EngineError;
use crate::engine::RingOption;
use crate::engine::{Control, StepControl, StepObserver};
use crate::engine::{
    InvalidStep, StepTarget, MAX_BUFFER_BYTES, MAX_IODEPTH, MAX_JOBS, MIN_STEP_DURATION,
};
use crate::outcome::{EndedBy, FaultKind, VerifyUnsaved};
use crate::stats::{
    ArrivalGaps, DirCounts, IntervalReport, IoErrorRecord, LatHists, LatSummary, StepSummary,
};
use crate::workload::{EngineKind, EngineOptions, StepSpec, Workload};

/// Checks what a workload asks for that no target can change: queue shape, block sizes,
/// buffer memory, rate. Runs before anything touches a target.
pub fn validate_shape(w: &Workload) -> Result<(), EngineError> {
    let bad = |why: InvalidStep| Err(EngineError::Invalid(why));
    if w.iodepth == 0 || w.iodepth > MAX_IODEPTH {
        return bad(InvalidStep::Iodepth(w.iodepth));
    }
    if w.jobs == 0 || w.jobs > MAX_JOBS {
        return bad(InvalidStep::Jobs(w.jobs));
    }
    for &(bs, _) in &w.bs.split {
        if bs == 0 || bs > 1 << 30 {
            return bad(InvalidStep::BlockSize(bs));
        }
    }
    let mem = u64::from(w.iodepth) * u64::from(w.jobs) * w.bs.max();
    if mem > MAX_BUFFER_BYTES {
        return bad(InvalidStep::BufferMemory(mem));
    }
    if let Some(r) = w.rate_iops {
        if !(r.is_finite() && r > 0.0) {
            return bad(InvalidStep::Rate(r));
        }
    }
    Ok(())
}

/// Checks a step against the target before any I/O.
pub fn validate(target: &StepTarget, spec: &StepSpec) -> Result<(), EngineError> {
    let w = &spec.workload;
    validate_shape(w)?;
    let bad = |why: InvalidStep| Err(EngineError::Invalid(why));
    for &(bs, _) in &w.bs.split {
        if w.direct && bs % target.align != 0 {
            return bad(InvalidStep::Unaligned {
                bs,
                path: target.path.clone(),
                align: target.align,
            });
        }
    }
    if w.direct && !w.region.offset.is_multiple_of(target.align) {
        return bad(InvalidStep::OffsetUnaligned {
            offset: w.region.offset,
            align: target.align,
        });
    }
    let end = w.region.offset.checked_add(w.region.len);
    if end.is_none_or(|e| e > target.size) {
        return bad(InvalidStep::PastEnd {
            offset: w.region.offset,
            len: w.region.len,
            path: target.path.clone(),
            size: target.size,
        });
    }
    if w.region.len < w.bs.max() {
        return bad(InvalidStep::RegionSmall {
            len: w.region.len,
            bs: w.bs.max(),
        });
    }
    if spec.end.duration.is_none() && spec.end.bytes.is_none() {
        return bad(InvalidStep::NoEnd);
    }
    if let Some(d) = spec.end.duration.filter(|d| *d < MIN_STEP_DURATION) {
        return bad(InvalidStep::TooShort(d));
    }
    check_engine(target, spec)
}

/// Checks what the step's engine and its ring options need of the target and the kernel:
/// passthrough needs an NVMe generic device, polled I/O a device with poll queues, SQPOLL
/// a kernel that lets this process have an SQ thread.
fn check_engine(target: &StepTarget, spec: &StepSpec) -> Result<(), EngineError> {
    let bad = |why: InvalidStep| Err(EngineError::Invalid(why));
    let o = &spec.options;
    if !o.is_default() && !spec.engine.uses_rings() {
        return bad(InvalidStep::RingOptions(spec.engine));
    }
    if spec.workload.rw.is_trim() && spec.engine == EngineKind::UringCmd {
        return bad(InvalidStep::TrimPassthrough);
    }
    if spec.workload.rw.is_trim() && target.verify.is_some() {
        return bad(InvalidStep::TrimVerify);
    }
    if spec.engine == EngineKind::UringCmd && !nvme::is_generic_device(&target.path) {
        return bad(InvalidStep::NotNvmeGeneric(target.path.clone()));
    }
    if o.hipri && spec.engine.targetless() {
        return bad(InvalidStep::HipriWithoutDevice(spec.engine));
    }
    if o.hipri {
        if let Some(why) = super::polling::no_polling(&target.path) {
            return bad(InvalidStep::NoPolling {
                path: target.path.clone(),
                why,
            });
        }
    }
    if let Some(p) = o.sqpoll {
        // An SQPOLL ring alone (no IOPOLL): what the kernel says of the SQ thread.
        let sq = EngineOptions {
            hipri: false,
            sqpoll: Some(p),
        };
        if let Err(e) = build_ring::<io_uring::squeue::Entry, io_uring::cqueue::Entry>(8, &sq) {
            return bad(InvalidStep::Ring {
                option: RingOption::SqPoll,
                errno: e.raw_os_error().unwrap_or(0),
            });
        }
    }
    Ok(())
}

/// Opens the target for one job.
fn open_target(target: &StepTarget, spec: &StepSpec) -> Result<File, EngineError> {
    let w = &spec.workload;
    let writes = w.rw.read_percent(w.rwmixread) < 100;
    let mut o = OpenOptions::new();
    o.read(true).write(writes);
    // Passthrough commands bypass the page cache anyway; a character device takes no
    // O_DIRECT.
    if w.direct && spec.engine != EngineKind::UringCmd {
        o.custom_flags(libc::O_DIRECT);
    }
    o.open(&target.path).map_err(|source| {
        let hint = if w.direct && source.raw_os_error() == Some(libc::EINVAL) {
            " (this filesystem refuses O_DIRECT; run with --direct 0 to go through the page cache)"
        } else if source.kind() == std::io::ErrorKind::PermissionDenied {
            " (run as root or get write access to it)"
        } else {
            ""
        };
        EngineError::Open {
            path: target.path.display().to_string(),
            mode: if writes {
                "reading and writing"
            } else {
                "reading"
            },
            source,
            hint,
        }
    })
}

/// Starts the verify state's flusher with a descriptor of the target of its own (its
/// fdatasync is each flush epoch).
fn start_flusher(
    state: &Arc<crate::verify::VerifyState>,
    target: &StepTarget,
) -> Result<crate::verify::state::Flusher, EngineError> {
    let open = |source| EngineError::Open {
        path: state.dir().display().to_string(),
        mode: "saving the verify state",
        source,
        hint: "",
    };
    let file = File::open(&target.path).map_err(open)?;
    crate::verify::state::Flusher::start(state.clone(), file).map_err(open)
}

fn io_uring_unavailable_reason(depth: u32) -> Option<String> {
    match build_ring::<io_uring::squeue::Entry, io_uring::cqueue::Entry>(
        depth,
        &EngineOptions::default(),
    ) {
        Ok(_) => None,
        Err(e) => {
            let sysctl = std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled")
                .ok()
                .and_then(|s| s.trim().parse::<u32>().ok())
                .filter(|v| *v > 0)
                .map(|v| format!(", kernel.io_uring_disabled = {v}"))
                .unwrap_or_default();
            Some(format!("io_uring unavailable ({e}{sysctl})"))
        }
    }
}

#[derive(Default)]
struct Partial {
    dirs: [DirCounts; 2],
    errors: u64,
    error_records: Vec<IoErrorRecord>,
    hists: Option<(usize, Box<LatHists>)>,
    gaps: ArrivalGaps,
    end_ns: u64,
}

#[derive(Clone, Copy, Default)]
struct WorkerState {
    last_index: Option<u64>,
    done: bool,
}

/// Runs one step to its end (duration, bytes, `ctl.stop`, or a [`Control::Stop`] from the
/// observer), handing it each merged interval in order and each thing the engine had to
/// work around, once. While `ctl.pause` is set the workers issue nothing, and the step's
/// duration and rate schedule are extended by the time paused.
pub(super) fn run(
    target: &StepTarget,
    spec: &StepSpec,
    kind: EngineKind,
    ctl: &StepControl,
    obs: &mut dyn StepObserver,
) -> Result<StepSummary, EngineError> {
    let stop = &ctl.stop;
    let pause = &ctl.pause;
    validate(target, spec)?;
    let w = &spec.workload;
    let mut notes: Vec<String> = Vec::new();
    let mut pacing = None;
    let note = |n: String, notes: &mut Vec<String>, obs: &mut dyn StepObserver| {
        if !notes.contains(&n) {
            obs.note(&n);
            notes.push(n);
        }
    };
    if matches!(kind, EngineKind::Nop | EngineKind::UringCmd) {
        // No fallback: these engines are io_uring operations.
        if let Some(reason) = io_uring_unavailable_reason(w.iodepth) {
            return Err(EngineError::NeedsUring {
                engine: kind,
                reason,
            });
        }
    }
    let mut use_uring = kind != EngineKind::Sync;
    if kind == EngineKind::IoUring {
        if let Some(reason) = io_uring_unavailable_reason(w.iodepth) {
            note(
                format!("{reason}: running the sync engine (queue depth 1 per job)"),
                &mut notes,
                obs,
            );
            use_uring = false;
        }
    }
    if !use_uring && w.iodepth > 1 && kind == EngineKind::Sync {
        note(
            format!(
                "the sync engine runs one I/O at a time per job; iodepth {} is not used",
                w.iodepth
            ),
            &mut notes,
            obs,
        );
    }
    if target.verify.is_some() && (!use_uring || kind != EngineKind::IoUring) {
        return Err(EngineError::NeedsUring {
            engine: kind,
            reason: "--verify runs on the io_uring engine only".to_string(),
        });
    }

    let jobs = w.jobs as usize;
    let files: Vec<Option<File>> = if kind.targetless() {
        (0..jobs).map(|_| None).collect()
    } else {
        (0..jobs)
            .map(|_| open_target(target, spec).map(Some))
            .collect::<Result<_, _>>()?
    };
    // A trim workload's every I/O is a discard (block device) or a punched hole (file).
    let trim = match (w.rw.is_trim(), files.first()) {
        (true, Some(Some(f))) => Some(TrimKind::of(f).map_err(|source| EngineError::Open {
            path: target.path.display().to_string(),
            mode: "its file type",
            source,
            hint: "",
        })?),
        _ => None,
    };
    if let (Some(k), Some(Some(f))) = (trim, files.first()) {
        // One trim of the region's first block (the step trims it anyway): a target that
        // takes none is refused before the step, not counted as a step of errors.
        let len = w.bs.min().max(target.align);
        if let Err(e) = super::discard::trim_sync(f, k, w.region.offset, len) {
            return Err(EngineError::Invalid(InvalidStep::NoTrim {
                path: target.path.clone(),
                kind: k.word(),
                errno: e.raw_os_error().unwrap_or(libc::EIO),
            }));
        }
    }
    if let (Some(TrimKind::Discard), true, Some(Some(f))) = (trim, use_uring, files.first()) {
        let len = w.bs.min().max(target.align) as u32;
        if let Some(e) = super::discard::uring_discard_refused(f, w.region.offset, len) {
            note(
                format!(
                    "this kernel refuses io_uring's block discard command ({e}; it needs \
                     Linux 6.12+): trims go through BLKDISCARD in the sync engine (queue \
                     depth 1 per job)"
                ),
                &mut notes,
                obs,
            );
            use_uring = false;
        }
    }
    let engine_ran = if use_uring { kind } else { EngineKind::Sync };
    let trims = trim.is_some();
    let ring_io = match (kind, files.first(), trim) {
        (EngineKind::Nop, _, _) => RingIo::Nop,
        (_, _, Some(k)) => RingIo::Trim(k),
        (EngineKind::UringCmd, Some(Some(f)), None) => RingIo::NvmeCmd(Namespace {
            nsid: nvme::namespace_id(f).map_err(|source| EngineError::Open {
                path: target.path.display().to_string(),
                mode: "its NVMe namespace id",
                source,
                hint: " (an NVMe generic device, /dev/ngXnY, answers NVME_IOCTL_ID)",
            })?,
            lba_shift: target.align.max(1).trailing_zeros(),
        }),
        _ => RingIo::Block,
    };
    let meta = files
        .first()
        .and_then(Option::as_ref)
        .and_then(|f| f.metadata().ok());
    let device = meta
        .as_ref()
        .filter(|m| m.file_type().is_block_device())
        .map(|m| DeviceWatch::new(&target.path, m.rdev()));
    // What the kernel completes on the device under the target: a device still working
    // through a deep queue is not stalled, even while our workers have not reaped yet.
    let kernel = meta.as_ref().and_then(KernelCompletions::of);
    // Held until the step returns (dropped with this frame). Our own jobs' plain opens
    // above do not stand in its way; anyone else's exclusive use does.
    let _claim = match (kind, super::claim::namespace_target(target)) {
        (EngineKind::Nop, _) => None,
        // A passthrough write is claimed on the namespace behind the generic device.
        (EngineKind::UringCmd, Some(ns)) => super::claim::claim(&ns, spec, true)?,
        _ => super::claim::claim(target, spec, device.is_some())?,
    };
    let schedule = Schedule::new(spec.interval, spec.ramp);
    let end_ns = spec
        .end
        .duration
        .map(|d| schedule.ramp_ns + d.as_nanos() as u64);
    let byte_budget = spec.end.bytes.map(|b| b.div_ceil(jobs as u64));
    let rate = w.rate_iops.map(|r| r / jobs as f64);
    let paced = rate.is_some();

    // A verified step that writes saves the generation map in flush epochs while it runs.
    let flusher = match (&target.verify, w.rw.read_percent(w.rwmixread) < 100) {
        (Some(state), true) => Some(start_flusher(state, target)?),
        _ => None,
    };
    let (tx, rx) = mpsc::channel::<WorkerMsg>();
    let ready = Arc::new(Barrier::new(jobs + 1));
    let go = Arc::new(Barrier::new(jobs + 1));
    let t0: Arc<OnceLock<Instant>> = Arc::new(OnceLock::new());
    let worker_stop = Arc::new(AtomicBool::new(false));
    let send_now = Arc::new(AtomicBool::new(false));
    let progress: Vec<Arc<AtomicU64>> = (0..jobs).map(|_| Arc::new(AtomicU64::new(0))).collect();
    let mut spares: Vec<Sender<Box<LatHists>>> = Vec::with_capacity(jobs);
    let mut handles = Vec::with_capacity(jobs);
    for (job, file) in files.into_iter().enumerate() {
        let (spare_tx, spare_rx) = mpsc::channel();
        spares.push(spare_tx);
        let ctx = WorkerCtx {
            job,
            file,
            ring_io,
            trim,
            options: spec.options,
            workload: w.clone(),
            align: w.bs.min().max(target.align),
            schedule,
            end_ns,
            byte_budget,
            rate,
            stop: worker_stop.clone(),
            pause: pause.clone(),
            progress: progress[job].clone(),
            send_now: send_now.clone(),
            tx: tx.clone(),
            spare: spare_rx,
            ready: ready.clone(),
            go: go.clone(),
            t0: t0.clone(),
            verify: target.verify.clone(),
        };
        let builder = std::thread::Builder::new().name(format!("ds-job{job}"));
        let spawned = if use_uring {
            builder.spawn(move || super::uring::run(ctx))
        } else {
            builder.spawn(move || super::sync::run(ctx))
        };
        match spawned {
            Ok(h) => handles.push(h),
            Err(e) => {
                // Threads already started stay parked on the barrier; the process is
                // about to report this error and exit.
                worker_stop.store(true, Ordering::Relaxed);
                return Err(EngineError::Spawn(e));
            }
        }
    }
    drop(tx);
    ready.wait();
    let _ = t0.set(Instant::now());
    go.wait();

    let mut workers = vec![WorkerState::default(); jobs];
    let mut pending: BTreeMap<u64, Partial> = BTreeMap::new();
    let mut next_emit = 0u64;
    let mut failure: Option<EngineError> = None;
    let mut ended_by: Option<EndedBy> = None;
    let mut total = LatHists::new(paced);
    let mut tot_dirs = [DirCounts::default(); 2];
    let mut tot_errors = 0u64;
    let mut tot_gaps = ArrivalGaps::default();
    let mut last_end_ns = schedule.ramp_ns;
    let mut measured_any = false;
    // A worker whose I/Os the device does not complete within the grace after the stop
    // is left behind (the step ends without it).
    let started = t0.get().copied().unwrap_or_else(Instant::now);
    let mut clock = StopClock::new(started, end_ns, spec.interval);
    let mut abandoned = 0usize;
    // Spans (ns since the start) the whole process was suspended, and the measured time
    // that left out.
    let since_start = || Instant::now().saturating_duration_since(started).as_nanos() as u64;
    let mut watch = SuspendWatch::new(since_start());
    let mut suspensions: Vec<(u64, u64)> = Vec::new();
    let mut suspended_measured_ns = 0u64;
    // Spans the user paused the step (sampled each turn), left out of its measured time.
    let mut pauses: Vec<(u64, u64)> = Vec::new();
    let mut paused_since: Option<u64> = None;

    loop {
        match rx.recv_timeout(Duration::from_millis(20)) {
            Ok(WorkerMsg::Interval(wi)) => {
                let st = &mut workers[wi.job];
                st.last_index = Some(wi.index);
                st.done |= wi.last;
                let p = pending.entry(wi.index).or_default();
                p.dirs[0].add(&wi.dirs[0]);
                p.dirs[1].add(&wi.dirs[1]);
                p.errors += wi.errors;
                p.error_records.extend(wi.error_records);
                p.gaps.add(&wi.gaps);
                p.end_ns = p.end_ns.max(wi.end_ns);
                match &mut p.hists {
                    None => p.hists = Some((wi.job, wi.hists)),
                    Some((_, base)) => {
                        base.add(&wi.hists);
                        let mut h = wi.hists;
                        h.reset();
                        let _ = spares[wi.job].send(h);
                    }
                }
            }
            Ok(WorkerMsg::Note(n)) => note(n, &mut notes, obs),
            Ok(WorkerMsg::Paced(p)) => pacing = Some(p),
            Ok(WorkerMsg::Failed { job, message }) => {
                workers[job].done = true;
                if failure.is_none() {
                    failure = Some(EngineError::Worker { job, message });
                }
                worker_stop.store(true, Ordering::Relaxed);
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => {
                for st in &mut workers {
                    st.done = true;
                }
            }
        }
        if let Some((from, gap)) = watch.turn(since_start()) {
            suspensions.push((from, from + gap));
            clock.suspended(Duration::from_nanos(gap));
            note(
                format!(
                    "the process was suspended for {:.1}s (SIGSTOP, or the machine slept): \
                     the intervals it spans are marked and left out of the step's figures",
                    gap as f64 / 1e9
                ),
                &mut notes,
                obs,
            );
        }
        // Completions counted on every turn (the workers' atomics and one small sysfs read,
        // 50 a second): whether the device completed anything in the last grace is what
        // tells a device draining its queue after the step's end from a stalled one, and
        // that needs the count from before the end too.
        {
            let reaped: u64 = progress.iter().map(|p| p.load(Ordering::Relaxed)).sum();
            let done = kernel
                .as_ref()
                .and_then(KernelCompletions::read)
                .unwrap_or(0);
            clock.progress(reaped.wrapping_add(done));
        }
        let paused = pause.load(Ordering::Relaxed);
        match (paused, paused_since) {
            (true, None) => paused_since = Some(since_start()),
            (false, Some(from)) => {
                pauses.push((from, since_start()));
                paused_since = None;
            }
            _ => {}
        }
        // The duration is up but a worker is still waiting on the device: stop it too.
        if clock.overdue(paused) {
            ended_by.get_or_insert(EndedBy::Duration);
            worker_stop.store(true, Ordering::Relaxed);
        }
        if stop.load(Ordering::Relaxed) && ended_by.is_none() {
            ended_by = Some(EndedBy::Stopped);
            worker_stop.store(true, Ordering::Relaxed);
        }

        // Emit every interval all live workers have delivered.
        loop {
            let complete = workers.iter().all(|st| {
                st.last_index.is_some_and(|l| l >= next_emit)
                    || (st.done && st.last_index.is_none_or(|l| l < next_emit))
            });
            if !complete {
                break;
            }
            let Some(p) = pending.remove(&next_emit) else {
                break;
            };
            let k = next_emit;
            next_emit += 1;
            let ramp = schedule.is_ramp(k);
            let start_ns = schedule.start(k);
            let secs = (p.end_ns.saturating_sub(start_ns)).max(1) as f64 / 1e9;
            let (origin, hists) = match p.hists {
                Some((j, h)) => (Some(j), h),
                None => (None, Box::new(LatHists::new(paced))),
            };
            let lat = LatSummary::from_hist(&hists.response_all());
            let suspended = overlap_ns(&suspensions, start_ns, p.end_ns);
            // The workers count a trim in the write slot: a trim step's are trims.
            let (write, trim) = split_trims(trims, p.dirs[1]);
            let report = IntervalReport {
                index: k,
                start_s: start_ns as f64 / 1e9,
                end_s: p.end_ns as f64 / 1e9,
                ramp,
                suspended_s: suspended as f64 / 1e9,
                read: p.dirs[0],
                write,
                read_iops: p.dirs[0].ios as f64 / secs,
                write_iops: write.ios as f64 / secs,
                read_bw_bytes: p.dirs[0].bytes as f64 / secs,
                write_bw_bytes: write.bytes as f64 / secs,
                trim,
                trim_iops: trim.ios as f64 / secs,
                trim_bw_bytes: trim.bytes as f64 / secs,
                errors: p.errors,
                lat_us: lat,
                service_lat_us: paced.then(|| LatSummary::from_hist(&hists.service_all())),
                error_records: p.error_records,
                hists: Some(hists),
            };
            if suspended > 0 && !ramp {
                suspended_measured_ns += p.end_ns.saturating_sub(start_ns);
                last_end_ns = last_end_ns.max(p.end_ns);
            } else if !ramp {
                measured_any = true;
                tot_dirs[0].add(&report.read);
                tot_dirs[1].add(&report.write);
                tot_dirs[1].add(&report.trim);
                tot_errors += report.errors;
                tot_gaps.add(&p.gaps);
                last_end_ns = last_end_ns.max(p.end_ns);
                if let Some(h) = &report.hists {
                    total.add(h);
                }
            }
            let answer = obs.interval(&report);
            if ended_by.is_none() {
                if let Some(reason) = failure::fatal(&report, device.as_ref()) {
                    ended_by = Some(reason);
                    worker_stop.store(true, Ordering::Relaxed);
                }
            }
            if let Control::Stop(reason) = answer {
                if ended_by.is_none() {
                    ended_by = Some(reason);
                }
                worker_stop.store(true, Ordering::Relaxed);
            }
            if let (Some(j), Some(mut h)) = (origin, report.hists) {
                h.reset();
                let _ = spares[j].send(h);
            }
        }
        if workers.iter().all(|st| st.done) && pending.is_empty() {
            break;
        }
        if worker_stop.load(Ordering::Relaxed) {
            clock.asked();
            if let Some(waited) = clock.given_up() {
                // Before leaving draining workers behind, ask them once for what they
                // measured and give them a moment to send it.
                if !send_now.swap(true, Ordering::Relaxed) {
                    clock.extend(Duration::from_millis(200));
                    continue;
                }
                abandoned = workers.iter().filter(|st| !st.done).count();
                if abandoned > 0 && clock.progressing() {
                    // Still completing I/O, just not all of it yet (a deep queue on a
                    // slow device): not a stall. The step keeps its reason.
                    note(
                        format!(
                            "{abandoned} job(s) still had I/O in flight {:.1}s after the stop; {} is still \
                             completing it (not stalled); stopped without waiting",
                            waited.as_secs_f64(),
                            target.path.display()
                        ),
                        &mut notes,
                        obs,
                    );
                } else if abandoned > 0 {
                    let what = format!(
                        "{abandoned} job(s) still had I/O in flight {:.1}s after the stop \
                         ({} is not completing it)",
                        waited.as_secs_f64(),
                        target.path.display()
                    );
                    note(
                        format!("{what}; stopped without waiting for it"),
                        &mut notes,
                        obs,
                    );
                    // A step that reached its own end (duration, bytes) while the device
                    // sat on its I/O did not measure the device: that is the device
                    // failing, not a result. A stop, skip, steady state or failure keeps
                    // its reason.
                    if ended_by.as_ref().is_none_or(EndedBy::is_own_end) {
                        ended_by = Some(EndedBy::device(FaultKind::Stalled, what));
                    }
                }
                break;
            }
        }
        if workers.iter().all(|st| st.done) && !pending.is_empty() {
            // Intervals left behind by failed workers: nothing more will complete them.
            let complete_any = pending.keys().next().is_some_and(|&k| k == next_emit);
            if !complete_any {
                break;
            }
        }
    }
    for h in handles {
        // A worker still waiting on the device is left to finish on its own: its ring and
        // buffers stay alive until the kernel completes (or the process exits).
        if abandoned == 0 || h.is_finished() {
            let _ = h.join();
        }
    }
    // The last flush epoch, once every write has completed; a worker left behind on a
    // stalled device leaves the state open (its next check takes it as an unclean end).
    let mut verify_unsaved = None;
    if let (Some(f), Some(state)) = (flusher, &target.verify) {
        if abandoned == 0 {
            verify_unsaved = f.finish().err().map(|e| VerifyUnsaved {
                dir: state.dir().to_path_buf(),
                error: e.to_string(),
            });
        } else {
            f.abandon();
        }
    }
    if let Some(f) = failure {
        return Err(f);
    }

    if let Some(from) = paused_since {
        pauses.push((from, since_start()));
    }
    let runtime_s = if measured_any {
        (last_end_ns
            .saturating_sub(schedule.ramp_ns)
            .saturating_sub(suspended_measured_ns)
            .saturating_sub(overlap_ns(&pauses, schedule.ramp_ns, last_end_ns))) as f64
            / 1e9
    } else {
        0.0
    };
    let per_s = |n: u64| {
        if runtime_s > 0.0 {
            n as f64 / runtime_s
        } else {
            0.0
        }
    };
    let ended_by = ended_by.unwrap_or_else(|| {
        if end_ns.is_some_and(|e| last_end_ns >= e) {
            EndedBy::Duration
        } else if spec.end.bytes.is_some() {
            EndedBy::Bytes
        } else {
            EndedBy::Stopped
        }
    });
    let ios = tot_dirs[0].ios + tot_dirs[1].ios;
    let (write, trim) = split_trims(trims, tot_dirs[1]);
    let (write_lat, trim_lat) = {
        let lat = LatSummary::from_hist(total.response_dir(1));
        if trims {
            (LatSummary::default(), lat)
        } else {
            (lat, LatSummary::default())
        }
    };
    if ios == 0 && abandoned > 0 && ended_by.is_own_end() {
        // The device was working (else this would be a stall), but no job got to reap an
        // I/O within the step: the queue was too deep for the step's length here.
        note(
            format!(
                "no job completed an I/O within the step: {} job(s) × QD{} took longer than \
                 the step to get their I/O going on this machine; give a longer duration or \
                 a smaller queue",
                w.jobs, w.iodepth
            ),
            &mut notes,
            obs,
        );
    }
    Ok(StepSummary {
        engine: engine_ran,
        engine_note: (!notes.is_empty()).then(|| notes.join("; ")),
        engine_options: spec.options,
        runtime_s,
        ios,
        read_ios: tot_dirs[0].ios,
        write_ios: write.ios,
        read_bytes: tot_dirs[0].bytes,
        write_bytes: write.bytes,
        iops: per_s(ios),
        read_iops: per_s(tot_dirs[0].ios),
        write_iops: per_s(write.ios),
        read_bw_bytes: per_s(tot_dirs[0].bytes),
        write_bw_bytes: per_s(write.bytes),
        trim_ios: trim.ios,
        trim_bytes: trim.bytes,
        trim_iops: per_s(trim.ios),
        trim_bw_bytes: per_s(trim.bytes),
        trim_lat_us: trim_lat,
        errors: tot_errors,
        target_iops: w.rate_iops,
        lat_us: LatSummary::from_hist(&total.response_all()),
        read_lat_us: LatSummary::from_hist(total.response_dir(0)),
        write_lat_us: write_lat,
        service_lat_us: paced.then(|| LatSummary::from_hist(&total.service_all())),
        arrival_cv: tot_gaps.cv().filter(|_| paced),
        fio_series: Vec::new(),
        verify_unsaved,
        pacing,
        ended_by,
    })
}

/// The write slot's counts as (writes, trims): a trim step's workers count its trims there.
fn split_trims(trims: bool, slot: DirCounts) -> (DirCounts, DirCounts) {
    if trims {
        (DirCounts::default(), slot)
    } else {
        (slot, DirCounts::default())
    }
}

/// How much of [from, to) the spans cover, ns.
fn overlap_ns(spans: &[(u64, u64)], from: u64, to: u64) -> u64 {
    spans
        .iter()
        .map(|&(a, b)| b.min(to).saturating_sub(a.max(from)))
        .sum()
}
