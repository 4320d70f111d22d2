//! The io_uring worker's thread and its loop, as methods of the [`Worker`] that owns its state: each turn
//! it looks at its clock and flags ([`Worker::tick`]), reaps what completed
//! ([`Worker::reap`]), fills the free slots ([`Worker::refill`]) and hands them to the
//! kernel with the wait for the next completion ([`Worker::enter`]), no longer than the
//! next thing it must do on time ([`Worker::pace`]); with nothing in flight it sleeps
//! ([`Worker::idle`]). Nothing here locks, allocates or sends per I/O.

use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use io_uring::{cqueue, squeue, types};

use super::append::Landings;
use super::buffers::Buffers;
use super::iogen::{IoDir, IoGen, NextIo};
use super::pacer::Pacer;
use super::pause::{Holds, PAUSE_NAP_NS};
use super::sqe::{io_result, BigCqe, MakeSqe, RingIo};
use super::tally::IntervalTally;
use super::uring::{setup, transient, RingBufs, Setup, UringError, SUBMIT_CHUNK};
use super::verifier::Verifier;
use super::wake::WakeLead;
use super::{ns_since, paced_lead, WorkerCtx, WorkerMsg, MAX_WAIT_NS};

/// How many I/Os a verified write tries before it waits: each whose blocks another job is
/// writing now is passed over for the next.
const CLAIM_TRIES: usize = 16;

/// Shortest wait between paced submissions with I/O in flight when the worker may not spin
/// (ns).
const PACE_GRAIN_NS: u64 = 20_000;

/// Per-slot state of an I/O in flight.
#[derive(Clone, Copy, Default)]
struct SlotIo {
    offset: u64,
    len: u32,
    dir: IoDir,
    t_submit: u64,
    t_intended: u64,
}

/// The io_uring worker thread of one job: sets its ring up, waits for the step's start
/// with the others, runs the loop and reports a failure.
pub(crate) fn run(ctx: WorkerCtx) {
    match ctx.ring_io {
        RingIo::Block | RingIo::Nop | RingIo::Trim(_) => {
            run_on::<squeue::Entry, cqueue::Entry>(ctx)
        }
        RingIo::NvmeCmd(_) | RingIo::ZoneAppend(_) => {
            run_on::<squeue::Entry128, cqueue::Entry32>(ctx)
        }
    }
}

fn run_on<S: MakeSqe, C: BigCqe>(ctx: WorkerCtx) {
    let set = setup::<S, C>(&ctx);
    let lead = paced_lead(&ctx);
    if let Err(e) = &set {
        let _ = ctx.tx.send(WorkerMsg::Failed {
            job: ctx.job,
            message: e.to_string(),
        });
    }
    ctx.ready.wait();
    ctx.go.wait();
    let Ok((mut s, notes)) = set else { return };
    for n in notes {
        let _ = ctx.tx.send(WorkerMsg::Note(n));
    }
    let Some(t0) = ctx.t0.get().copied() else {
        return;
    };
    if let Err(e) = io_loop(&ctx, &mut s, t0, lead) {
        let _ = ctx.tx.send(WorkerMsg::Failed {
            job: ctx.job,
            message: e.to_string(),
        });
    }
    // `s` drops here: after an error return it waits (bounded) for the I/Os still in
    // flight before the buffers are freed, or leaks them (`Setup::release`).
}

/// Runs the step. Returns with I/Os in flight only on an error (or unwinds on a panic); the
/// caller's `Setup` then drains them before freeing the buffers.
fn io_loop<S: MakeSqe, C: BigCqe>(
    ctx: &WorkerCtx,
    s: &mut Setup<S, C>,
    t0: Instant,
    lead: WakeLead,
) -> Result<(), UringError> {
    Worker::new(ctx, s, t0, lead)?.run()
}

/// What the worker issues next: the offsets, the schedule of a paced job and a verified
/// step's checks.
struct Source {
    gen: IoGen,
    pacer: Option<Pacer>,
    verifier: Option<Verifier>,
    /// A paced I/O taken from the schedule but not issued (a verified write found its
    /// blocks claimed by another job): issued next, with its own intended time.
    carried: Option<u64>,
}

impl Source {
    /// The intended issue time of the next I/O; `None` while a paced job has none due.
    #[inline(always)]
    fn intended(&mut self, now: u64, rec: &mut IntervalTally) -> Option<u64> {
        match (&mut self.pacer, self.carried.take()) {
            (None, _) => Some(now),
            (Some(_), Some(t)) => Some(t),
            (Some(p), None) => {
                let t = p.take_due(now)?;
                rec.arrived(t);
                Some(t)
            }
        }
    }

    /// The next I/O for slot `slot`; `None` when a verified write finds every try's blocks
    /// claimed by another job (it is held, with its intended time). Inlined always: it is
    /// a call per I/O otherwise, which the loop did not have before it was split.
    #[inline(always)]
    fn next_io(
        &mut self,
        slot: usize,
        t_intended: u64,
        now: u64,
        bufs: &mut Buffers,
    ) -> Option<NextIo> {
        let Some(v) = &mut self.verifier else {
            return Some(self.gen.next_io());
        };
        // A write whose blocks another job is writing now is passed over.
        let gen = &mut self.gen;
        let claimed = (0..CLAIM_TRIES)
            .map(|_| gen.next_io())
            .find(|n| !n.is_write() || v.claim_write(slot, n.offset, n.len));
        let Some(n) = claimed else {
            self.carried = self.pacer.as_ref().map(|_| t_intended);
            return None;
        };
        if n.is_write() {
            let buf = &mut bufs.slot_mut(slot)[..n.len as usize];
            v.stamp(buf, n.offset, now);
        } else {
            v.note_read(slot, n.offset, n.len);
        }
        Some(n)
    }
}

/// How long the next `io_uring_enter` may wait.
struct Wait {
    /// The time (ns since the start) to be back by.
    wake: u64,
    /// Poll the ring without blocking: the next paced I/O is due within the wake lead.
    spin: bool,
    /// A wait that ends at the lead before the next paced I/O: its gap and end (to learn
    /// from how late it ends).
    paced: Option<(f64, u64)>,
}

/// One io_uring worker in its loop.
struct Worker<'a, S: MakeSqe, C: BigCqe> {
    ctx: &'a WorkerCtx,
    io: &'a mut RingBufs<S, C>,
    /// I/Os pushed to the submission queue and not reaped yet (the caller's `Setup`
    /// drains them on an early end).
    inflight: &'a mut usize,
    t0: Instant,
    lead: WakeLead,
    fd: i32,
    ring_io: RingIo,
    /// How many SQEs go to the kernel together while more are prepared.
    chunk: usize,
    /// A registered file, registered buffers.
    fixed: (bool, bool),
    ext_arg: bool,
    src: Source,
    rec: IntervalTally<'a>,
    slots: Vec<SlotIo>,
    free: Vec<usize>,
    issued_bytes: u64,
    stopping: bool,
    end_ns: Option<u64>,
    holds: Holds,
    paused: bool,
    drain_sent: bool,
    /// A zone-append step's appends and where the device placed them.
    landings: Option<Landings>,
    /// The time of this turn (ns since the start): stamps the completions just reaped and
    /// the submissions prepared next.
    now: u64,
}

impl<'a, S: MakeSqe, C: BigCqe> Worker<'a, S, C> {
    fn new(
        ctx: &'a WorkerCtx,
        s: &'a mut Setup<S, C>,
        t0: Instant,
        lead: WakeLead,
    ) -> Result<Self, UringError> {
        let Setup {
            io,
            inflight,
            fixed_file,
            fixed_bufs,
        } = s;
        let io = io.as_mut().ok_or(UringError::Released)?;
        let depth = ctx.workload.iodepth as usize;
        let ring_io = ctx.ring_io;
        // NOPs complete in the kernel as they are submitted: a chunk would only add a
        // system call; the whole refill goes with the wait.
        let chunk = match ring_io {
            RingIo::Nop => usize::MAX,
            RingIo::Block | RingIo::NvmeCmd(_) | RingIo::ZoneAppend(_) | RingIo::Trim(_) => {
                SUBMIT_CHUNK
            }
        };
        let gen = IoGen::new(&ctx.workload, ctx.job, ctx.align);
        let rec = IntervalTally::new(
            ctx.job,
            ctx.schedule,
            ctx.rate.is_some(),
            ctx.tx.clone(),
            &ctx.spare,
        );
        let pacer = Pacer::for_job(&ctx.workload, ctx.job, ctx.rate);
        if let (Some(p), 0) = (&pacer, ctx.job) {
            let _ = ctx.tx.send(WorkerMsg::Paced(lead.pacing(p.period_ns())));
        }
        let holds = Holds::new(ns_since(t0));
        let ext_arg = io.ring.params().is_feature_ext_arg();
        let verifier = match (&ctx.verify, ring_io) {
            (Some(state), RingIo::Block) => Some(Verifier::new(
                state.clone(),
                depth,
                ctx.workload.bs.max(),
                ns_since(t0),
            )),
            _ => None,
        };
        Ok(Worker {
            ctx,
            fixed: (*fixed_file, *fixed_bufs),
            io,
            inflight,
            t0,
            lead,
            fd: ctx.file.as_ref().map_or(-1, |f| f.as_raw_fd()),
            ring_io,
            chunk,
            ext_arg,
            src: Source {
                gen,
                pacer,
                verifier,
                carried: None,
            },
            rec,
            slots: vec![SlotIo::default(); depth],
            free: (0..depth).rev().collect(),
            issued_bytes: 0,
            stopping: false,
            end_ns: ctx.end_ns,
            holds,
            paused: false,
            drain_sent: false,
            landings: matches!(ring_io, RingIo::ZoneAppend(_)).then(Landings::default),
            now: ns_since(t0),
        })
    }

    fn run(mut self) -> Result<(), UringError> {
        loop {
            self.tick();
            self.reap();
            self.answer();
            // A trimwrite's held write goes out even at the end (its trim went out).
            let held = self.src.gen.holds_write();
            if self.stopping && *self.inflight == 0 && !held {
                break;
            }
            if (!self.stopping && !self.paused) || (self.stopping && held) {
                self.refill()?;
            }
            if *self.inflight == 0 {
                if self.stopping {
                    break;
                }
                self.idle();
                continue;
            }
            let wait = self.pace();
            self.enter(wait)?;
        }
        if let Some(l) = self.landings.filter(|l| l.appends > 0) {
            // Before the last interval: the collector ends the step on that one.
            let _ = self.ctx.tx.send(WorkerMsg::Note(l.to_string()));
        }
        self.holds.close(self.now, &mut self.rec);
        self.rec.flush(self.now, true);
        Ok(())
    }

    /// The turn's look at the clock and the flags: a pause or suspension (which moves the
    /// step's end and schedule on by its length), the step's end, the stop, the intervals
    /// due.
    #[inline]
    fn tick(&mut self) {
        let now = self.now;
        if !self.stopping {
            let resumed;
            (self.paused, resumed) =
                self.holds
                    .turn(self.ctx.pause.load(Ordering::Relaxed), now, &mut self.rec);
            if resumed > 0 {
                self.end_ns = self.end_ns.map(|e| e + resumed);
                if let Some(p) = &mut self.src.pacer {
                    p.shift(resumed);
                }
            }
            // While paused the step's end is not due: it moves by the paused span on resume.
            if (!self.paused && self.end_ns.is_some_and(|e| now >= e))
                || self.ctx.stop.load(Ordering::Relaxed)
            {
                self.stopping = true;
            } else {
                self.rec.maybe_flush(now);
            }
        }
    }

    /// While stopping, the collector's ask to send what was measured, answered after this
    /// turn's reap: the collector is about to stop waiting for the last I/Os (a deep queue)
    /// and must not lose what was measured; the rest of the drain follows as one more
    /// interval if the collector is still there. An answer also tells it this worker ran
    /// and reaped every completion there was, so what it still waits on, the device holds.
    #[inline]
    fn answer(&mut self) {
        if self.stopping && !self.drain_sent && self.ctx.send_now.load(Ordering::Relaxed) {
            self.rec.flush(self.now, false);
            self.drain_sent = true;
        }
    }

    /// Reaps every ready completion, stamped with this turn's time.
    #[inline]
    fn reap(&mut self) {
        let mut cq = self.io.ring.completion();
        let mut reaped = 0u64;
        for entry in &mut cq {
            // A zone append's 64-bit result (the LBA the device wrote at) is in the ring's
            // own 32-byte entry, read before it becomes a plain entry, which has no room for
            // it; no other step reads it.
            let lba = match self.ring_io {
                RingIo::ZoneAppend(_) => entry.result64(),
                _ => 0,
            };
            let cqe: cqueue::Entry = entry.into();
            *self.inflight -= 1;
            reaped += 1;
            let slot = cqe.user_data() as usize;
            let done = self.slots[slot];
            let mut res = io_result(self.ring_io, done.dir, cqe.result(), done.len);
            if let (RingIo::ZoneAppend(za), IoDir::Write, Some(l)) =
                (self.ring_io, done.dir, &mut self.landings)
            {
                // Where the device placed the append: outside the zone it was sent to, the
                // write is an error (its bytes are not where the step put them).
                if res == i64::from(done.len) && !l.land(&za, done.offset, done.len, lba) {
                    res = -i64::from(libc::EIO);
                }
            }
            if let Some(v) = &mut self.src.verifier {
                let whole = res == i64::from(done.len);
                if matches!(done.dir, IoDir::Write) {
                    v.write_done(done.offset, done.len, whole);
                } else if whole {
                    v.read_done(
                        slot,
                        done.offset,
                        &self.io.bufs.slot(slot)[..done.len as usize],
                    );
                }
            }
            self.rec.complete(
                done.dir,
                done.len,
                done.offset,
                res,
                done.t_submit,
                done.t_intended,
                self.now,
            );
            self.free.push(slot);
        }
        drop(cq);
        if reaped > 0 {
            self.ctx.progress.fetch_add(reaped, Ordering::Relaxed);
        }
    }

    /// Prepares an I/O into every free slot (those due, for a paced job), handing them to
    /// the kernel a chunk at a time; the last chunk goes with the wait.
    #[inline]
    fn refill(&mut self) -> Result<(), UringError> {
        let io = &mut *self.io;
        let (submitter, mut sq, _) = io.ring.split();
        let mut in_chunk = 0usize;
        while let Some(&slot) = self.free.last() {
            if in_chunk == self.chunk {
                // Hand this chunk over now; the rest follow (the last with the wait).
                sq.sync();
                if let Err(e) = submitter.submit() {
                    if !transient(&e) {
                        return Err(UringError::Enter(e));
                    }
                }
                in_chunk = 0;
                self.now = ns_since(self.t0);
                // Submitting a deep queue can take long: keep intervals on time. Not past
                // the step's end, though: its last interval takes the drain (else the I/Os
                // in flight at the end came as an interval of a few µs).
                if self.end_ns.is_none_or(|e| self.now < e) {
                    self.rec.maybe_flush(self.now);
                }
            }
            // Stopping, only a trimwrite's held write is issued (at once, off the schedule).
            let held = self.src.gen.holds_write();
            if self.stopping && !held {
                break;
            }
            if !held && self.ctx.byte_budget.is_some_and(|b| self.issued_bytes >= b) {
                self.stopping = true;
                break;
            }
            let now = self.now;
            let t_intended = match self.stopping {
                true => now,
                false => match self.src.intended(now, &mut self.rec) {
                    Some(t) => t,
                    None => break,
                },
            };
            let Some(next) = self.src.next_io(slot, t_intended, now, &mut io.bufs) else {
                break;
            };
            self.free.pop();
            if next.is_write()
                && matches!(
                    self.ring_io,
                    RingIo::Block | RingIo::NvmeCmd(_) | RingIo::ZoneAppend(_) | RingIo::Trim(_)
                )
                && self.src.verifier.is_none()
            {
                io.bufs.scramble(slot, next.len as usize, next.offset);
            }
            let sqe = S::make(
                self.ring_io,
                &io.bufs,
                self.fixed,
                self.fd,
                slot,
                next.dir,
                next.len,
                next.offset,
            );
            // SAFETY: the SQE moves `len` bytes at slot `slot`'s buffer, inside the
            // buffers (build_sqe checks the slot and the length). The slot was just
            // taken from `free`, so no other I/O uses it, and nothing touches it until
            // its completion is reaped (only then does it go back to `free`). The
            // buffers outlive the I/O: the loop ends normally only with nothing in
            // flight, and on an early end `Setup` drains before freeing them, or leaks
            // them. `fd` is `ctx.file`'s, which `run` drops only after `s`, so an SQE
            // still waiting in the queue never names another file. A NOP names neither
            // a buffer nor a file; an NVMe command names the same slot's buffer (its
            // `addr` and length, checked in `make`) and the same file.
            if unsafe { sq.push(&sqe) }.is_err() {
                self.free.push(slot);
                break;
            }
            *self.inflight += 1;
            in_chunk += 1;
            self.slots[slot] = SlotIo {
                offset: next.offset,
                len: next.len,
                dir: next.dir,
                t_submit: now,
                t_intended,
            };
            self.issued_bytes += u64::from(next.len);
        }
        Ok(())
    }

    /// Nothing in flight (paused, or paced and nothing due yet): sleeps until the next due
    /// I/O or boundary.
    fn idle(&mut self) {
        let now = self.now;
        let paused = self.paused;
        let mut wake = self.rec.next_boundary();
        if let Some(e) = self.end_ns.filter(|_| !paused) {
            wake = wake.min(e);
        }
        // Above a million I/Os a second a loop turn per I/O cannot keep up: the I/Os due
        // within a microsecond go together (less than the histograms' lowest bucket late),
        // as many as the turn's cost needs.
        let carried = self.src.carried;
        let due = self
            .src
            .pacer
            .as_ref()
            .map(|p| p.next_due() + if p.period_ns() < 1_000.0 { 1_000 } else { 0 })
            .filter(|&d| !paused && carried.is_none() && d <= wake);
        if paused {
            wake = wake.min(now + PAUSE_NAP_NS);
        } else if carried.is_some() {
            // A held verified write waits on another job's blocks, not on a due time: a
            // nap of the pacing grain between tries, not a spin.
            wake = wake.min(now + PACE_GRAIN_NS);
        }
        if let (Some(due), Some(p)) = (due, &self.src.pacer) {
            // The next I/O is due first: wake on time for it (see `wake`).
            self.now = self.lead.sleep_until(self.t0, now, due, p.period_ns());
            return;
        }
        let ns = wake.saturating_sub(now).min(MAX_WAIT_NS);
        if ns > 0 {
            std::thread::sleep(Duration::from_nanos(ns));
        }
        self.now = ns_since(self.t0);
    }

    /// How long the next enter may wait for a completion: no longer than the next thing
    /// this worker must do on time (an interval's end, the step's end, a paced I/O).
    #[inline]
    fn pace(&self) -> Wait {
        let now = self.now;
        let mut w = Wait {
            wake: now + MAX_WAIT_NS,
            spin: false,
            paced: None,
        };
        if self.stopping {
            return w;
        }
        w.wake = w.wake.min(self.rec.next_boundary());
        if let Some(e) = self.end_ns.filter(|_| !self.paused) {
            w.wake = w.wake.min(e);
        }
        if let (Some(p), false, false) = (&self.src.pacer, self.free.is_empty(), self.paused) {
            let due = p.next_due();
            // A held verified write waits on a completion (its blocks), not on a due time:
            // no spin for it.
            match self
                .lead
                .lead(p.period_ns())
                .filter(|_| self.src.carried.is_none())
            {
                // Wake for the next due I/O, but not more often than PACE_GRAIN: at high
                // rates the I/Os that fell due meanwhile go out together, each keeping its
                // intended time (the delay shows in response latency).
                None => w.wake = w.wake.min(due.max(now + PACE_GRAIN_NS)),
                // Too close to sleep for: poll the ring until it is due (see `wake`).
                Some(l) if due <= now + l => w.spin = true,
                Some(l) => {
                    if due - l < w.wake {
                        w.wake = due - l;
                        w.paced = Some((p.period_ns(), w.wake));
                    }
                }
            }
        }
        w
    }

    /// Submits what was prepared and waits for at least one completion, until `w.wake`
    /// at the latest (or, spinning, not at all).
    #[inline]
    fn enter(&mut self, w: Wait) -> Result<(), UringError> {
        let wait_ns = w.wake.saturating_sub(self.now).max(1_000);
        let ring = &mut self.io.ring;
        let res = if w.spin {
            // Hand over what was prepared and post what has completed, without blocking
            // (a polled ring polls once; a ring with deferred task work runs it). Nothing
            // prepared and completions to reap (NOPs complete as they are submitted): no
            // system call, the loop reaps them.
            if ring.submission().is_empty() && !ring.completion().is_empty() {
                Ok(0)
            } else if self.ext_arg && !ring.params().is_setup_iopoll() {
                let ts = types::Timespec::new();
                let args = types::SubmitArgs::new().timespec(&ts);
                ring.submitter().submit_with_args(1, &args)
            } else {
                ring.submit()
            }
        } else if self.ext_arg {
            let ts = types::Timespec::new()
                .sec(wait_ns / 1_000_000_000)
                .nsec((wait_ns % 1_000_000_000) as u32);
            let args = types::SubmitArgs::new().timespec(&ts);
            ring.submitter().submit_with_args(1, &args)
        } else {
            ring.submit_and_wait(1)
        };
        let timed_out = match res {
            Err(e) if e.raw_os_error() == Some(libc::ETIME) => true,
            Err(e) if !transient(&e) => return Err(UringError::Enter(e)),
            _ => false,
        };
        self.now = ns_since(self.t0);
        if let (Some((period, asked)), true) = (w.paced, timed_out) {
            self.lead.woke(period, asked, self.now);
        }
        Ok(())
    }
}
