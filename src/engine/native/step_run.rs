//! Runs one step: checks it, opens the target once per job ([`StepRun::open`]), starts the
//! workers on a shared clock ([`StepRun::spawn`]), merges their per-interval messages into
//! [`IntervalReport`](crate::stats::IntervalReport)s handed to the caller as they complete
//! ([`StepRun::merge`]) and builds the step's [`StepSummary`] from the measured intervals
//! ([`StepRun::finish`]).

use std::collections::BTreeSet;
use std::fs::File;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Barrier, OnceLock};
use std::time::{Duration, Instant};

use super::crew::Crew;
use super::discard::TrimKind;
use super::failure::{self, DeviceWatch, KernelCounts};
use super::merger::Merger;
use super::notes::Notes;
use super::open;
use super::schedule::Schedule;
use super::sqe::RingIo;
use super::stopclock::{Seen, DRAIN_CAP};
use super::timeline::Timeline;
use super::totals::Totals;
use super::validate::validate;
use super::{WorkerCtx, WorkerMsg};
use crate::engine::{Control, EngineError, StepControl, StepObserver, StepTarget};
use crate::outcome::{EndedBy, FaultKind, Pacing, VerifyUnsaved};
use crate::stats::{LatSummary, StepSummary};
use crate::verify::state::Flusher;
use crate::workload::{EngineKind, StepSpec};

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
    validate(target, spec)?;
    let mut run = StepRun::open(target, spec, kind, obs)?;
    let crew = run.spawn(&ctl.pause)?;
    let abandoned = run.merge(&crew, ctl, obs);
    run.finish(crew, abandoned, obs)
}

/// One step from its opened target to its summary.
struct StepRun<'a> {
    target: &'a StepTarget,
    spec: &'a StepSpec,
    notes: Notes,
    /// The engine that runs the I/O: the one asked for, or the sync engine instead.
    ran: EngineKind,
    /// The target opened per job (taken by the workers).
    files: Vec<Option<File>>,
    trim: Option<TrimKind>,
    ring_io: RingIo,
    device: Option<DeviceWatch>,
    kernel: Option<KernelCounts>,
    /// Held until the step returns.
    _claim: Option<super::target_lock::TargetLock>,
    schedule: Schedule,
    end_ns: Option<u64>,
    byte_budget: Option<u64>,
    /// Each job's share of the step's rate (IOPS).
    rate: Option<f64>,
    flusher: Option<Flusher>,
    merger: Merger,
    totals: Totals,
    pacing: Option<Pacing>,
    failure: Option<EngineError>,
    ended_by: Option<EndedBy>,
    /// I/Os failed since the last interval with a success ([`failure::fatal`]).
    failed_in_a_row: u64,
    /// Once the collector asked the workers left for what they measured: the jobs that
    /// answered, so ran since (a starved process runs none of them).
    answered: Option<BTreeSet<usize>>,
}

impl<'a> StepRun<'a> {
    /// Picks the engine and opens everything the step's workers need, in the order the
    /// checks must come: the engine, the target, its trims, its claim, the verify state.
    fn open(
        target: &'a StepTarget,
        spec: &'a StepSpec,
        kind: EngineKind,
        obs: &mut dyn StepObserver,
    ) -> Result<Self, EngineError> {
        let w = &spec.workload;
        let mut notes = Notes::default();
        let mut use_uring = open::uses_uring(kind, target, w.iodepth, &mut notes, obs)?;
        let files = open::open_files(target, spec, kind)?;
        let first = files.first().and_then(Option::as_ref);
        let trim = open::trim_kind(target, spec, first)?;
        if let (Some(TrimKind::Discard), true, Some(f)) = (trim, use_uring, first) {
            use_uring = open::uring_discards(target, spec, f, &mut notes, obs);
        }
        let ring_io = open::ring_io(kind, target, spec, first, trim)?;
        let (device, kernel) = open::watches(target, first);
        let claim = open::claim(kind, target, spec)?;
        let schedule = Schedule::new(spec.interval, spec.ramp);
        let jobs = files.len();
        let rate = w.rate_iops.map(|r| r / jobs as f64);
        let paced = rate.is_some();
        let flusher = open::flusher(target, spec)?;
        Ok(StepRun {
            target,
            spec,
            notes,
            ran: if use_uring { kind } else { EngineKind::Sync },
            files,
            trim,
            ring_io,
            device,
            kernel,
            _claim: claim,
            schedule,
            end_ns: spec
                .end
                .duration
                .map(|d| schedule.ramp_ns + d.as_nanos() as u64),
            byte_budget: spec.end.bytes.map(|b| b.div_ceil(jobs as u64)),
            rate,
            flusher,
            merger: Merger::new(jobs, schedule, paced),
            totals: Totals::new(paced, schedule),
            pacing: None,
            failure: None,
            ended_by: None,
            failed_in_a_row: 0,
            answered: None,
        })
    }

    /// Starts one worker thread per job and releases them together on the step's clock.
    fn spawn(&mut self, pause: &Arc<AtomicBool>) -> Result<Crew, EngineError> {
        let files = std::mem::take(&mut self.files);
        let jobs = files.len();
        let (tx, rx) = mpsc::channel::<WorkerMsg>();
        let shared = Shared {
            tx,
            ready: Arc::new(Barrier::new(jobs + 1)),
            go: Arc::new(Barrier::new(jobs + 1)),
            t0: Arc::new(OnceLock::new()),
            stop: Arc::new(AtomicBool::new(false)),
            send_now: Arc::new(AtomicBool::new(false)),
            pause: pause.clone(),
        };
        let progress: Vec<Arc<AtomicU64>> =
            (0..jobs).map(|_| Arc::new(AtomicU64::new(0))).collect();
        let mut spares = Vec::with_capacity(jobs);
        let mut handles = Vec::with_capacity(jobs);
        for (job, file) in files.into_iter().enumerate() {
            let (spare_tx, spare_rx) = mpsc::channel();
            spares.push(spare_tx);
            let ctx = self.worker_ctx(job, file, &shared, progress[job].clone(), spare_rx);
            let builder = std::thread::Builder::new().name(format!("ds-job{job}"));
            let spawned = if self.ran != EngineKind::Sync {
                builder.spawn(move || super::uring_worker::run(ctx))
            } else {
                builder.spawn(move || super::sync::run(ctx))
            };
            match spawned {
                Ok(h) => handles.push(h),
                Err(e) => {
                    // Threads already started stay parked on the barrier; the process is
                    // about to report this error and exit.
                    shared.stop.store(true, Ordering::Relaxed);
                    return Err(EngineError::Spawn(e));
                }
            }
        }
        let Shared {
            tx,
            ready,
            go,
            t0,
            stop,
            send_now,
            ..
        } = shared;
        drop(tx);
        ready.wait();
        let _ = t0.set(Instant::now());
        go.wait();
        Ok(Crew {
            rx,
            handles,
            spares,
            stop,
            send_now,
            progress,
            started: t0.get().copied().unwrap_or_else(Instant::now),
        })
    }

    /// Everything worker `job` needs, moved into its thread.
    fn worker_ctx(
        &self,
        job: usize,
        file: Option<File>,
        shared: &Shared,
        progress: Arc<AtomicU64>,
        spare: mpsc::Receiver<Box<crate::stats::LatHists>>,
    ) -> WorkerCtx {
        let w = &self.spec.workload;
        WorkerCtx {
            job,
            file,
            ring_io: self.ring_io,
            trim: self.trim,
            options: self.spec.options,
            workload: w.clone(),
            align: w.bs.min().max(self.target.align),
            schedule: self.schedule,
            end_ns: self.end_ns,
            byte_budget: self.byte_budget,
            rate: self.rate,
            stop: shared.stop.clone(),
            pause: shared.pause.clone(),
            progress,
            send_now: shared.send_now.clone(),
            tx: shared.tx.clone(),
            spare,
            ready: shared.ready.clone(),
            go: shared.go.clone(),
            t0: shared.t0.clone(),
            verify: self.target.verify.clone(),
        }
    }

    /// Merges the workers' messages and hands each interval on as soon as every live
    /// worker has sent it, until the step ends. Returns how many workers were left behind
    /// on a device that did not complete their I/O.
    fn merge(&mut self, crew: &Crew, ctl: &StepControl, obs: &mut dyn StepObserver) -> usize {
        // A worker whose I/Os the device does not complete within the grace after the
        // stop is left behind (the step ends without it).
        let mut time = Timeline::new(crew.started, self.end_ns, self.spec.interval);
        loop {
            self.receive(crew.recv(), crew, obs);
            self.turn(&mut time, crew, ctl, obs);
            self.emit(&time, crew, obs);
            if self.merger.finished() {
                return 0;
            }
            if crew.stopping() {
                time.clock.asked();
                // A stop of the user's (even one that came while the step's end drained
                // the queue) or a failure waits for no drain.
                let interrupted = self.ended_by.as_ref().is_some_and(EndedBy::is_interruption);
                if interrupted || ctl.stop.load(Ordering::Relaxed) {
                    time.clock.hurry();
                }
                if let Some(waited) = time.clock.given_up() {
                    // Before leaving draining workers behind, ask them once for what they
                    // measured and give them a moment to send it.
                    if crew.ask_send_now() {
                        self.answered = Some(BTreeSet::new());
                        time.clock.extend(Duration::from_millis(200));
                        continue;
                    }
                    // Every worker left answered: each ran, reaped what had completed and
                    // still waits on the device. One that did not answer was not running
                    // (a starved or stopped process): it is waited for up to the drain
                    // cap of time seen, and its lateness is never the device's.
                    let answered = self.answered.as_ref();
                    let ran = self
                        .merger
                        .unfinished_jobs()
                        .all(|j| answered.is_some_and(|a| a.contains(&j)));
                    if !ran && !time.clock.is_hurried() && waited < DRAIN_CAP {
                        continue;
                    }
                    let abandoned = self.merger.unfinished();
                    let evidence = Evidence {
                        progressing: time.clock.progressing(),
                        kernel_holds: time.clock.device_stalled() == Some(true),
                        // Only where a device is there to hold the I/O (the kernel
                        // keeps its counts) and no io_uring worker thread of ours is
                        // waiting for a CPU (tmpfs and punted I/O run on those threads).
                        workers_ran: ran
                            && self.kernel.is_some()
                            && !failure::io_workers_want_cpu(),
                    };
                    self.leave_behind(abandoned, waited, evidence, obs);
                    return abandoned;
                }
            }
            if self.merger.stranded() {
                // Intervals left behind by failed workers: nothing more will complete them.
                return 0;
            }
        }
    }

    /// Takes in one message from the workers (or the lack of one).
    fn receive(
        &mut self,
        msg: Result<WorkerMsg, RecvTimeoutError>,
        crew: &Crew,
        obs: &mut dyn StepObserver,
    ) {
        match msg {
            Ok(WorkerMsg::Interval(wi)) => {
                let job = wi.job;
                if let Some(a) = &mut self.answered {
                    a.insert(job);
                }
                if let Some(h) = self.merger.add(wi) {
                    crew.give_back(job, h);
                }
            }
            Ok(WorkerMsg::Note(n)) => self.notes.say(n, obs),
            Ok(WorkerMsg::Paced(p)) => self.pacing = Some(p),
            Ok(WorkerMsg::Failed { job, message }) => {
                self.merger.failed(job);
                if self.failure.is_none() {
                    self.failure = Some(EngineError::Worker { job, message });
                }
                crew.stop();
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => self.merger.all_gone(),
        }
    }

    /// What the collector looks at on every turn: a suspension of the process, the
    /// device's progress, the user's pause, the step's end and the stop flag.
    fn turn(
        &mut self,
        time: &mut Timeline,
        crew: &Crew,
        ctl: &StepControl,
        obs: &mut dyn StepObserver,
    ) {
        if let Some(gap) = time.suspension() {
            self.notes.say(
                format!(
                    "the process was suspended for {:.1}s (SIGSTOP, or the machine slept): \
                     the intervals it spans are marked and left out of the step's figures",
                    gap as f64 / 1e9
                ),
                obs,
            );
        }
        // Completions counted on every turn (the workers' atomics and one small sysfs read,
        // 50 a second): whether the device completed anything in the last grace is what
        // tells a device draining its queue after the step's end from a stalled one, and
        // that needs the count from before the end too; the requests the kernel holds in
        // flight at the device are what tells a stalled device from a starved process.
        let device = self.kernel.as_ref().and_then(KernelCounts::read);
        let seen = Seen {
            done: crew
                .reaped()
                .wrapping_add(device.map_or(0, |d| d.completed)),
            device_in_flight: device.map(|d| d.in_flight),
        };
        let paused = ctl.pause.load(Ordering::Relaxed);
        // The duration is up but a worker is still waiting on the device: stop it too.
        if time.clock.turn(Instant::now(), seen, paused) {
            self.ended_by.get_or_insert(EndedBy::Duration);
            crew.stop();
        }
        if ctl.stop.load(Ordering::Relaxed) && self.ended_by.is_none() {
            self.ended_by = Some(EndedBy::Stopped);
            crew.stop();
        }
    }

    /// Hands on every interval all live workers have delivered.
    fn emit(&mut self, time: &Timeline, crew: &Crew, obs: &mut dyn StepObserver) {
        while let Some(m) = self.merger.next(time.suspensions()) {
            self.totals.count(&m);
            let answer = obs.interval(&m.report);
            let r = &m.report;
            self.failed_in_a_row = if r.read.ios + r.write.ios + r.trim.ios == 0 {
                self.failed_in_a_row + r.errors
            } else {
                0
            };
            if self.ended_by.is_none() {
                let fatal = failure::fatal(r, self.device.as_ref(), self.failed_in_a_row);
                if let Some(reason) = fatal {
                    self.ended_by = Some(reason);
                    crew.stop();
                }
            }
            if let Control::Stop(reason) = answer {
                if self.ended_by.is_none() {
                    self.ended_by = Some(reason);
                }
                crew.stop();
            }
            if let (Some(j), Some(mut h)) = (m.origin, m.report.hists) {
                h.reset();
                crew.give_back(j, h);
            }
        }
    }

    /// Says that `abandoned` workers were left with I/O in flight `waited` after the stop,
    /// and ends the step as a stall only on evidence about the device ([`Evidence`]):
    /// no completion through the last grace while the kernel held requests at the device
    /// or while every worker left was running and still waiting on it. Workers the process
    /// did not get to run (starved of CPU, stopped) are no stall.
    fn leave_behind(
        &mut self,
        abandoned: usize,
        waited: Duration,
        evidence: Evidence,
        obs: &mut dyn StepObserver,
    ) {
        if abandoned == 0 {
            return;
        }
        let path = self.target.path.display();
        let late = format!(
            "{abandoned} job(s) still had I/O in flight {:.1}s after the stop",
            waited.as_secs_f64()
        );
        let why = if evidence.progressing {
            // Still completing I/O, just not all of it yet (a deep queue on a slow
            // device): not a stall. The step keeps its reason.
            format!("{path} is still completing it (not stalled)")
        } else if evidence.kernel_holds || evidence.workers_ran {
            let what = format!("{late} ({path} is not completing it)");
            self.notes
                .say(format!("{what}; stopped without waiting for it"), obs);
            // A step that reached its own end (duration, bytes) while the device sat
            // on its I/O did not measure the device: that is the device failing, not
            // a result. A stop, skip, steady state or failure keeps its reason.
            if self.ended_by.as_ref().is_none_or(EndedBy::is_own_end) {
                self.ended_by = Some(EndedBy::device(FaultKind::Stalled, what));
            }
            return;
        } else {
            format!(
                "the process did not get to run them (starved of CPU or stopped), so \
                 nothing says {path} stalled"
            )
        };
        self.notes
            .say(format!("{late}; {why}; stopped without waiting"), obs);
    }

    /// Joins the workers, saves the verify state and builds the step's summary (or returns
    /// the first worker's failure).
    fn finish(
        mut self,
        crew: Crew,
        abandoned: usize,
        obs: &mut dyn StepObserver,
    ) -> Result<StepSummary, EngineError> {
        crew.join(abandoned);
        let verify_unsaved = self.save_verify(abandoned);
        if let Some(f) = self.failure.take() {
            return Err(f);
        }
        let runtime_s = self.totals.runtime_s(self.merger.held());
        let ended_by = self.ended_by.take().unwrap_or_else(|| {
            if self.end_ns.is_some_and(|e| self.totals.last_end_ns() >= e) {
                EndedBy::Duration
            } else if self.spec.end.bytes.is_some() {
                EndedBy::Bytes
            } else {
                EndedBy::Stopped
            }
        });
        let ios: u64 = self.totals.dirs.iter().map(|d| d.ios).sum();
        if ios == 0 && abandoned > 0 && ended_by.is_own_end() {
            // The device was working (else this would be a stall), but no job got to reap
            // an I/O within the step: the queue was too deep for the step's length here.
            let w = &self.spec.workload;
            self.notes.say(
                format!(
                    "no job completed an I/O within the step: {} job(s) × QD{} took longer than \
                     the step to get their I/O going on this machine; give a longer duration or \
                     a smaller queue",
                    w.jobs, w.iodepth
                ),
                obs,
            );
        }
        Ok(self.summary(runtime_s, ended_by, verify_unsaved))
    }

    /// The last flush epoch, once every write has completed; a worker left behind on a
    /// stalled device leaves the state open (its next check takes it as an unclean end).
    fn save_verify(&mut self, abandoned: usize) -> Option<VerifyUnsaved> {
        let (Some(f), Some(state)) = (self.flusher.take(), &self.target.verify) else {
            return None;
        };
        if abandoned == 0 {
            f.finish().err().map(|e| VerifyUnsaved {
                dir: state.dir().to_path_buf(),
                error: e.to_string(),
            })
        } else {
            f.abandon();
            None
        }
    }

    /// The step's summary over its measured intervals.
    fn summary(
        &mut self,
        runtime_s: f64,
        ended_by: EndedBy,
        verify_unsaved: Option<VerifyUnsaved>,
    ) -> StepSummary {
        let t = &self.totals;
        let paced = self.rate.is_some();
        let per_s = |n: u64| {
            if runtime_s > 0.0 {
                n as f64 / runtime_s
            } else {
                0.0
            }
        };
        let [read, write, trim] = t.dirs;
        let ios = read.ios + write.ios + trim.ios;
        let lat = |d: usize| LatSummary::from_hist(t.hists.response_dir(d));
        StepSummary {
            engine: self.ran,
            engine_note: self.notes.joined(),
            engine_options: self.spec.options,
            runtime_s,
            ios,
            read_ios: read.ios,
            write_ios: write.ios,
            read_bytes: read.bytes,
            write_bytes: write.bytes,
            iops: per_s(ios),
            read_iops: per_s(read.ios),
            write_iops: per_s(write.ios),
            read_bw_bytes: per_s(read.bytes),
            write_bw_bytes: per_s(write.bytes),
            trim_ios: trim.ios,
            trim_bytes: trim.bytes,
            trim_iops: per_s(trim.ios),
            trim_bw_bytes: per_s(trim.bytes),
            trim_lat_us: lat(2),
            errors: t.errors,
            target_iops: self.spec.workload.rate_iops,
            lat_us: LatSummary::from_hist(&t.hists.response_all()),
            read_lat_us: lat(0),
            write_lat_us: lat(1),
            service_lat_us: paced.then(|| LatSummary::from_hist(&t.hists.service_all())),
            arrival_cv: t.gaps.cv().filter(|_| paced),
            fio_series: Vec::new(),
            verify_unsaved,
            pacing: self.pacing.take(),
            ended_by,
        }
    }
}

/// What every worker of a step shares.
struct Shared {
    tx: mpsc::Sender<WorkerMsg>,
    ready: Arc<Barrier>,
    go: Arc<Barrier>,
    t0: Arc<OnceLock<Instant>>,
    stop: Arc<AtomicBool>,
    send_now: Arc<AtomicBool>,
    pause: Arc<AtomicBool>,
}

/// What the collector knows of the device when it gives up on the workers left.
#[derive(Debug, Clone, Copy)]
struct Evidence {
    /// A completion (the workers' or the kernel's) within the last grace.
    progressing: bool,
    /// The kernel held requests in flight at the device and completed none through the
    /// last grace (request-based devices count these; device-mapper may show none).
    kernel_holds: bool,
    /// Every worker left answered the last ask, so ran and still waits on the device (a
    /// block device, with no io_uring worker thread of ours waiting for a CPU).
    workers_ran: bool,
}
