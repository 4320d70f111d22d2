//! The io_uring worker, modelled on fio's `t/io_uring.c`: one ring per thread, a registered
//! file and registered buffers (READ_FIXED / WRITE_FIXED), SQEs prepared into free slots
//! and handed to the kernel in chunks of [`SUBMIT_CHUNK`] as they are prepared, the last
//! chunk with the `io_uring_enter` that also waits for the first completion; all ready
//! completions are reaped together. One clock read per loop iteration stamps the
//! completions just reaped and the submissions prepared next (and one more per chunk).
//!
//! The same loop runs the nop engine (every I/O an IORING_OP_NOP) and NVMe passthrough
//! (IORING_OP_URING_CMD with 128-byte SQEs and 32-byte CQEs, see [`super::nvme`]): the ring's
//! entry types are its type parameters, and [`RingIo`] says what each I/O is.

use std::io;
use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use io_uring::{cqueue, opcode, squeue, types, IoUring};
use thiserror::Error;

use super::buffers::Buffers;
use super::discard::{trim_sqe, TrimKind};
use super::iogen::IoGen;
use super::nvme::{self, Namespace};
use super::pacer::Pacer;
use super::pause::{PauseTracker, PAUSE_NAP_NS};
use super::rng::Rng;
use super::suspend::SuspendWatch;
use super::tally::IntervalTally;
use super::verifier::Verifier;
use super::wake::WakeLead;
use super::{ns_since, paced_lead, WorkerCtx, WorkerMsg, MAX_WAIT_NS};
use crate::workload::EngineOptions;

/// How many I/Os a verified write tries before it waits: each whose blocks another job is
/// writing now is passed over for the next.
const CLAIM_TRIES: usize = 16;

/// Shortest wait between paced submissions with I/O in flight when the worker may not spin
/// (ns).
const PACE_GRAIN_NS: u64 = 20_000;

/// How many prepared SQEs go to the kernel together while more are being prepared. Handing
/// a whole refill over at once (up to the queue depth) keeps the device idle until the last
/// one is built and gives it a burst; chunks of 4 start the device early and keep it fed.
/// Measured against one batch per loop: 4k random reads on a virtio disk 72-75k -> 81-91k
/// IOPS (fio: 82-90k), on a loop device over /dev/shm 242-246k -> 290-303k with the same
/// CPU per I/O; chunks of 1 or 2 cost more system time, 8 or 16 were no better.
pub const SUBMIT_CHUNK: usize = 4;

/// What each I/O of a ring is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RingIo {
    /// Reads and writes of the target (READ_FIXED / WRITE_FIXED).
    Block,
    /// IORING_OP_NOP: no target, no data; the engine's own cost per I/O.
    Nop,
    /// NVMe read and write commands on an NVMe generic character device.
    NvmeCmd(Namespace),
    /// Trims of the target: block discard commands or punched holes; no data.
    Trim(TrimKind),
}

/// How long a worker that stops with I/Os in flight (an `io_uring_enter` error, a panic)
/// waits for them before it gives up and leaks its ring and buffers. The collector joins a
/// failed worker, so this bounds how much later the step reports the failure.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(2);

/// Longest single wait while draining, and the nap after an enter the kernel refused.
const DRAIN_POLL: Duration = Duration::from_millis(10);

/// Why the io_uring worker could not start or had to stop; the worker reports it as text.
#[derive(Debug, Error)]
enum UringError {
    #[error("io_uring setup failed: {0}")]
    Setup(io::Error),
    #[error("cannot allocate I/O buffers")]
    Buffers,
    #[error("io_uring_enter failed: {0}")]
    Enter(io::Error),
    #[error("the ring was released before the I/O loop ran")]
    Released,
}

/// Builds a ring for `depth` I/Os with `opts` (polled completions, an SQ polling thread),
/// preferring the single-issuer / deferred-task-run setup (completions are posted when we
/// wait for them, batching the work) where the kernel has it. SQPOLL rings do without it
/// (the kernel refuses deferred task work with an SQ thread), and so do IOPOLL rings, as a
/// precaution: Linux 6.1's polling wait (`io_iopoll_check`) runs plain task work but not
/// deferred task work, which a polled read the kernel re-issues (after an EAGAIN) would
/// wait for. (The stall in the QEMU guest first blamed on this was the emulated poll
/// queue: a liburing loop without deferred task work hangs there too.)
pub(crate) fn build_ring<S: squeue::EntryMarker, C: cqueue::EntryMarker>(
    depth: u32,
    opts: &EngineOptions,
) -> io::Result<IoUring<S, C>> {
    let entries = depth.next_power_of_two().max(8);
    let base = || {
        let mut b = IoUring::<S, C>::builder();
        b.setup_cqsize(entries * 2);
        if opts.hipri {
            b.setup_iopoll();
        }
        if let Some(p) = opts.sqpoll {
            b.setup_sqpoll(p.idle_ms);
            if let Some(cpu) = p.cpu {
                b.setup_sqpoll_cpu(cpu);
            }
        }
        b
    };
    if opts.sqpoll.is_none() && !opts.hipri {
        let mut tuned = base();
        tuned
            .setup_single_issuer()
            .setup_defer_taskrun()
            .setup_coop_taskrun();
        if let Ok(r) = tuned.build(entries) {
            return Ok(r);
        }
    }
    base().build(entries)
}

/// A ring and the buffers its I/Os read into and write from. Fields drop in declaration
/// order: the ring (and the buffer registration with it) goes before the buffers.
struct RingBufs<S: squeue::EntryMarker, C: cqueue::EntryMarker> {
    ring: IoUring<S, C>,
    bufs: Buffers,
}

impl<S: squeue::EntryMarker, C: cqueue::EntryMarker> RingBufs<S, C> {
    /// Reaps completions until `inflight` is zero (true) or `timeout` has passed (false).
    /// SQEs pushed but not yet consumed by the kernel are counted in `inflight`, so they are
    /// handed over by the first wait and waited for like the others.
    fn drain(&mut self, inflight: &mut usize, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let ext_arg = self.ring.params().is_feature_ext_arg();
        loop {
            let reaped = self.ring.completion().count();
            *inflight = inflight.saturating_sub(reaped);
            if *inflight == 0 {
                return true;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            let wait = left.min(DRAIN_POLL);
            let res = if ext_arg {
                let ts = types::Timespec::from(wait);
                let args = types::SubmitArgs::new().timespec(&ts);
                self.ring.submitter().submit_with_args(1, &args)
            } else {
                // No timed wait before Linux 5.11 (nor deferred task work, which needs
                // 6.1): an enter that does not block posts what has completed as it
                // returns; then a nap.
                let res = self.ring.submit();
                std::thread::sleep(wait);
                res
            };
            if let Err(e) = res {
                if e.raw_os_error() != Some(libc::ETIME) && !transient(&e) {
                    // The kernel refuses the ring now; completions may still be posted
                    // (or not, and the deadline decides). Do not spin.
                    std::thread::sleep(wait);
                }
            }
        }
    }
}

/// The worker's ring and buffers with the count of I/Os the kernel may still be working on.
/// Dropping it frees the buffers only once nothing is in flight: the normal end of the loop
/// reaps every I/O, and an early end (an error return, a panic) drains here.
struct Setup<S: squeue::EntryMarker, C: cqueue::EntryMarker> {
    /// `None` only once `release` has run.
    io: Option<RingBufs<S, C>>,
    /// I/Os pushed to the submission queue and not reaped yet.
    inflight: usize,
    fixed_file: bool,
    fixed_bufs: bool,
}

impl<S: squeue::EntryMarker, C: cqueue::EntryMarker> Setup<S, C> {
    /// Waits up to `timeout` for the I/Os still in flight, then drops the ring and the
    /// buffers (true), or, if the device has not completed them, leaks both (false).
    fn release(&mut self, timeout: Duration) -> bool {
        let Some(mut io) = self.io.take() else {
            return true;
        };
        if self.inflight > 0 && !io.drain(&mut self.inflight, timeout) {
            // The kernel still holds I/Os on these buffers and the device has not completed
            // them: freeing the buffers would let a read land in memory already reused for
            // something else. Leak them, and the ring with them, on purpose (depth x block
            // size bytes and one fd until the process exits); nothing will use them again.
            std::mem::forget(io);
            return false;
        }
        // Nothing in flight: `io` drops here, the ring first, then the buffers.
        true
    }
}

impl<S: squeue::EntryMarker, C: cqueue::EntryMarker> Drop for Setup<S, C> {
    fn drop(&mut self) {
        self.release(DRAIN_TIMEOUT);
    }
}

fn setup<S: squeue::EntryMarker, C: cqueue::EntryMarker>(
    ctx: &WorkerCtx,
) -> Result<(Setup<S, C>, Vec<String>), UringError> {
    let depth = ctx.workload.iodepth;
    let ring = build_ring(depth, &ctx.options).map_err(UringError::Setup)?;
    let mut rng = Rng::new(ctx.workload.seed ^ 0xB0F_FE25 ^ ctx.job as u64);
    // NOPs and trims move no data: no buffers.
    let slots = match ctx.ring_io {
        RingIo::Nop | RingIo::Trim(_) => 0,
        RingIo::Block | RingIo::NvmeCmd(_) => depth as usize,
    };
    let bufs =
        Buffers::new(slots, ctx.workload.bs.max() as usize, &mut rng).ok_or(UringError::Buffers)?;
    let io = RingBufs { ring, bufs };
    let mut notes = Vec::new();
    let Some(file) = &ctx.file else {
        let s = Setup {
            io: Some(io),
            inflight: 0,
            fixed_file: false,
            fixed_bufs: false,
        };
        return Ok((s, notes));
    };
    let fixed_file = io
        .ring
        .submitter()
        .register_files(&[file.as_raw_fd()])
        .is_ok();
    if !fixed_file {
        notes.push("could not register the file with io_uring; using a plain fd".to_string());
    }
    let iovecs = io.bufs.iovecs();
    // A ring without buffers (NOPs, trims) has none to register.
    let registered = match slots {
        0 => Err(None),
        // SAFETY: each iovec covers one slot inside the buffers' allocation (`iovecs`), and
        // that allocation stays valid while the registration lasts: the buffers live in the
        // same `RingBufs` as the ring and drop after it, once no I/O is in flight, or are
        // leaked with it (`Setup::release`).
        _ => unsafe { io.ring.submitter().register_buffers(&iovecs) }.map_err(Some),
    };
    let fixed_bufs = match registered {
        Ok(()) => true,
        Err(None) => false,
        Err(Some(e)) => {
            notes.push(format!(
                "could not register I/O buffers ({e}; raise `ulimit -l` or run as root); \
                 using unregistered buffers"
            ));
            false
        }
    };
    Ok((
        Setup {
            io: Some(io),
            inflight: 0,
            fixed_file,
            fixed_bufs,
        },
        notes,
    ))
}

/// An `io_uring_enter` error to retry on the next turn: interrupted, or the kernel is
/// short of room for completions or requests right now.
fn transient(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EINTR) | Some(libc::EBUSY) | Some(libc::EAGAIN)
    )
}

/// An SQE of a ring's entry type for one I/O.
trait MakeSqe: squeue::EntryMarker {
    #[allow(clippy::too_many_arguments)]
    fn make(
        io: RingIo,
        bufs: &Buffers,
        fixed: (bool, bool),
        fd: i32,
        slot: usize,
        write: bool,
        len: u32,
        offset: u64,
    ) -> Self;
}

impl MakeSqe for squeue::Entry {
    #[inline]
    fn make(
        io: RingIo,
        bufs: &Buffers,
        fixed: (bool, bool),
        fd: i32,
        slot: usize,
        write: bool,
        len: u32,
        offset: u64,
    ) -> Self {
        match io {
            RingIo::Nop => opcode::Nop::new().build().user_data(slot as u64),
            RingIo::Trim(k) => trim_sqe(k, fixed.0, fd, offset, len).user_data(slot as u64),
            RingIo::Block | RingIo::NvmeCmd(_) => {
                build_sqe(bufs, fixed, fd, slot, write, len, offset)
            }
        }
    }
}

impl MakeSqe for squeue::Entry128 {
    #[inline]
    fn make(
        io: RingIo,
        bufs: &Buffers,
        fixed: (bool, bool),
        fd: i32,
        slot: usize,
        write: bool,
        len: u32,
        offset: u64,
    ) -> Self {
        match io {
            RingIo::NvmeCmd(ns) => {
                // The command moves `len` bytes at `ptr`: both checks keep that inside
                // slot `slot`.
                assert!(
                    len as usize <= bufs.slot_len(),
                    "I/O larger than its buffer"
                );
                let ptr = bufs.slot_ptr(slot);
                let idx = fixed.1.then_some(slot as u16);
                nvme::cmd_sqe(ns, fixed.0, fd, write, ptr as u64, len, offset, idx)
                    .user_data(slot as u64)
            }
            RingIo::Block | RingIo::Nop | RingIo::Trim(_) => {
                squeue::Entry::make(io, bufs, fixed, fd, slot, write, len, offset).into()
            }
        }
    }
}

/// The result of a completion as bytes moved or -errno: NOPs and NVMe commands complete
/// with 0 (an NVMe command with its status code when the device refused it).
#[inline]
fn io_result(io: RingIo, res: i32, len: u32) -> i64 {
    match (io, res) {
        (RingIo::Block, r) => i64::from(r),
        (RingIo::Nop | RingIo::NvmeCmd(_) | RingIo::Trim(_), 0) => i64::from(len),
        (RingIo::Nop | RingIo::NvmeCmd(_) | RingIo::Trim(_), r) if r < 0 => i64::from(r),
        // An NVMe status (a positive value): the device failed the command.
        (RingIo::Nop | RingIo::NvmeCmd(_) | RingIo::Trim(_), _) => -i64::from(libc::EIO),
    }
}

#[inline]
fn build_sqe(
    bufs: &Buffers,
    fixed: (bool, bool),
    fd: i32,
    slot: usize,
    write: bool,
    len: u32,
    offset: u64,
) -> squeue::Entry {
    // The kernel moves `len` bytes at `ptr`: both checks keep that inside slot `slot`.
    assert!(
        len as usize <= bufs.slot_len(),
        "I/O larger than its buffer"
    );
    let ptr = bufs.slot_ptr(slot);
    let idx = slot as u16;
    let e = match (fixed.0, fixed.1, write) {
        (true, true, false) => opcode::ReadFixed::new(types::Fixed(0), ptr, len, idx)
            .offset(offset)
            .build(),
        (true, true, true) => opcode::WriteFixed::new(types::Fixed(0), ptr, len, idx)
            .offset(offset)
            .build(),
        (false, true, false) => opcode::ReadFixed::new(types::Fd(fd), ptr, len, idx)
            .offset(offset)
            .build(),
        (false, true, true) => opcode::WriteFixed::new(types::Fd(fd), ptr, len, idx)
            .offset(offset)
            .build(),
        (true, false, false) => opcode::Read::new(types::Fixed(0), ptr, len)
            .offset(offset)
            .build(),
        (true, false, true) => opcode::Write::new(types::Fixed(0), ptr, len)
            .offset(offset)
            .build(),
        (false, false, false) => opcode::Read::new(types::Fd(fd), ptr, len)
            .offset(offset)
            .build(),
        (false, false, true) => opcode::Write::new(types::Fd(fd), ptr, len)
            .offset(offset)
            .build(),
    };
    e.user_data(slot as u64)
}

/// Per-slot state of an I/O in flight.
#[derive(Clone, Copy, Default)]
struct SlotIo {
    offset: u64,
    len: u32,
    write: bool,
    t_submit: u64,
    t_intended: u64,
}

pub(crate) fn run(ctx: WorkerCtx) {
    match ctx.ring_io {
        RingIo::Block | RingIo::Nop | RingIo::Trim(_) => {
            run_on::<squeue::Entry, cqueue::Entry>(ctx)
        }
        RingIo::NvmeCmd(_) => run_on::<squeue::Entry128, cqueue::Entry32>(ctx),
    }
}

fn run_on<S: MakeSqe, C: cqueue::EntryMarker>(ctx: WorkerCtx) {
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
fn io_loop<S: MakeSqe, C: cqueue::EntryMarker>(
    ctx: &WorkerCtx,
    s: &mut Setup<S, C>,
    t0: Instant,
    mut lead: WakeLead,
) -> Result<(), UringError> {
    let Setup {
        io,
        inflight,
        fixed_file,
        fixed_bufs,
    } = s;
    let io = io.as_mut().ok_or(UringError::Released)?;
    let depth = ctx.workload.iodepth as usize;
    let fd = ctx.file.as_ref().map_or(-1, |f| f.as_raw_fd());
    let ring_io = ctx.ring_io;
    // NOPs complete in the kernel as they are submitted: a chunk would only add a system
    // call; the whole refill goes with the wait.
    let chunk = match ring_io {
        RingIo::Nop => usize::MAX,
        RingIo::Block | RingIo::NvmeCmd(_) | RingIo::Trim(_) => SUBMIT_CHUNK,
    };
    let mut gen = IoGen::new(&ctx.workload, ctx.job, ctx.align);
    let mut rec = IntervalTally::new(
        ctx.job,
        ctx.schedule,
        ctx.rate.is_some(),
        ctx.tx.clone(),
        &ctx.spare,
    );
    let mut pacer = Pacer::for_job(&ctx.workload, ctx.job, ctx.rate);
    if let (Some(p), 0) = (&pacer, ctx.job) {
        let _ = ctx.tx.send(WorkerMsg::Paced(lead.pacing(p.period_ns())));
    }
    let mut slots = vec![SlotIo::default(); depth];
    let mut free: Vec<usize> = (0..depth).rev().collect();
    let mut issued_bytes = 0u64;
    let mut stopping = false;
    // A paced I/O taken from the schedule but not issued (a verified write found its blocks
    // claimed by another job): issued next, with its own intended time.
    let mut carried: Option<u64> = None;
    let mut end_ns = ctx.end_ns;
    let mut pause = PauseTracker::default();
    let mut paused = false;
    let mut suspended = SuspendWatch::new(ns_since(t0));
    let mut drain_sent = false;
    let ext_arg = io.ring.params().is_feature_ext_arg();
    let fixed = (*fixed_file, *fixed_bufs);
    let mut verifier = match (&ctx.verify, ring_io) {
        (Some(state), RingIo::Block) => Some(Verifier::new(
            state.clone(),
            depth,
            ctx.workload.bs.max(),
            ns_since(t0),
        )),
        _ => None,
    };

    let mut now = ns_since(t0);
    loop {
        if !stopping {
            let resumed;
            (paused, resumed) = pause.update(ctx.pause.load(Ordering::Relaxed), now);
            let resumed = resumed + suspended.turn(now).map_or(0, |(_, gap)| gap);
            if resumed > 0 {
                end_ns = end_ns.map(|e| e + resumed);
                if let Some(p) = &mut pacer {
                    p.shift(resumed);
                }
            }
            // While paused the step's end is not due: it moves by the paused span on resume.
            if (!paused && end_ns.is_some_and(|e| now >= e)) || ctx.stop.load(Ordering::Relaxed) {
                stopping = true;
            } else {
                rec.maybe_flush(now);
            }
        } else if !drain_sent && ctx.send_now.load(Ordering::Relaxed) {
            // The collector is about to stop waiting for the last I/Os (a deep queue):
            // send what was measured, so it is not lost; the rest of the drain follows as
            // one more interval if the collector is still there.
            rec.flush(now, false);
            drain_sent = true;
        }

        // Reap.
        {
            let mut cq = io.ring.completion();
            let mut reaped = 0u64;
            for cqe in &mut cq {
                let cqe: cqueue::Entry = cqe.into();
                *inflight -= 1;
                reaped += 1;
                let slot = cqe.user_data() as usize;
                let done = slots[slot];
                let res = io_result(ring_io, cqe.result(), done.len);
                if let Some(v) = &mut verifier {
                    let whole = res == i64::from(done.len);
                    if done.write {
                        v.write_done(done.offset, done.len, whole);
                    } else if whole {
                        v.read_done(slot, done.offset, &io.bufs.slot(slot)[..done.len as usize]);
                    }
                }
                rec.complete(
                    done.write,
                    done.len,
                    done.offset,
                    res,
                    done.t_submit,
                    done.t_intended,
                    now,
                );
                free.push(slot);
            }
            if reaped > 0 {
                ctx.progress.fetch_add(reaped, Ordering::Relaxed);
            }
        }
        if stopping && *inflight == 0 {
            break;
        }

        // Prepare.
        if !stopping && !paused {
            let (submitter, mut sq, _) = io.ring.split();
            let mut in_chunk = 0usize;
            while let Some(&slot) = free.last() {
                if in_chunk == chunk {
                    // Hand this chunk over now; the rest follow (the last with the wait).
                    sq.sync();
                    if let Err(e) = submitter.submit() {
                        if !transient(&e) {
                            return Err(UringError::Enter(e));
                        }
                    }
                    in_chunk = 0;
                    now = ns_since(t0);
                    // Submitting a deep queue can take long: keep intervals on time. Not
                    // past the step's end, though: its last interval takes the drain (else
                    // the I/Os in flight at the end came as an interval of a few µs).
                    if end_ns.is_none_or(|e| now < e) {
                        rec.maybe_flush(now);
                    }
                }
                if ctx.byte_budget.is_some_and(|b| issued_bytes >= b) {
                    stopping = true;
                    break;
                }
                let t_intended = match (&mut pacer, carried.take()) {
                    (None, _) => now,
                    (Some(_), Some(t)) => t,
                    (Some(p), None) => match p.take_due(now) {
                        Some(t) => {
                            rec.arrived(t);
                            t
                        }
                        None => break,
                    },
                };
                let next = match &mut verifier {
                    None => gen.next_io(),
                    Some(v) => {
                        // A write whose blocks another job is writing now is passed over.
                        let claimed = (0..CLAIM_TRIES)
                            .map(|_| gen.next_io())
                            .find(|n| !n.write || v.claim_write(slot, n.offset, n.len));
                        let Some(n) = claimed else {
                            carried = pacer.as_ref().map(|_| t_intended);
                            break;
                        };
                        if n.write {
                            let buf = &mut io.bufs.slot_mut(slot)[..n.len as usize];
                            v.stamp(buf, n.offset, now);
                        } else {
                            v.note_read(slot, n.offset, n.len);
                        }
                        n
                    }
                };
                free.pop();
                if next.write
                    && matches!(ring_io, RingIo::Block | RingIo::NvmeCmd(_))
                    && verifier.is_none()
                {
                    io.bufs.scramble(slot, next.len as usize, next.offset);
                }
                let sqe = S::make(
                    ring_io,
                    &io.bufs,
                    fixed,
                    fd,
                    slot,
                    next.write,
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
                    free.push(slot);
                    break;
                }
                *inflight += 1;
                in_chunk += 1;
                slots[slot] = SlotIo {
                    offset: next.offset,
                    len: next.len,
                    write: next.write,
                    t_submit: now,
                    t_intended,
                };
                issued_bytes += u64::from(next.len);
            }
        }

        if *inflight == 0 {
            if stopping {
                break;
            }
            // Paused, or paced and nothing due yet: sleep until the next due I/O or
            // boundary.
            let mut wake = rec.next_boundary();
            if let Some(e) = end_ns.filter(|_| !paused) {
                wake = wake.min(e);
            }
            // Above a million I/Os a second a loop turn per I/O cannot keep up: the I/Os
            // due within a microsecond go together (less than the histograms' lowest
            // bucket late), as many as the turn's cost needs.
            let due = pacer
                .as_ref()
                .map(|p| p.next_due() + if p.period_ns() < 1_000.0 { 1_000 } else { 0 })
                .filter(|&d| !paused && carried.is_none() && d <= wake);
            if paused {
                wake = wake.min(now + PAUSE_NAP_NS);
            } else if carried.is_some() {
                // A held verified write waits on another job's blocks, not on a due time:
                // a nap of the pacing grain between tries, not a spin.
                wake = wake.min(now + PACE_GRAIN_NS);
            }
            if let (Some(due), Some(p)) = (due, &pacer) {
                // The next I/O is due first: wake on time for it (see `wake`).
                now = lead.sleep_until(t0, now, due, p.period_ns());
                continue;
            }
            let ns = wake.saturating_sub(now).min(MAX_WAIT_NS);
            if ns > 0 {
                std::thread::sleep(Duration::from_nanos(ns));
            }
            now = ns_since(t0);
            continue;
        }

        // Submit what was prepared and wait for at least one completion, but no longer
        // than the next thing this worker must do on time.
        let mut wake = now + MAX_WAIT_NS;
        let mut spin = false;
        // A wait that ends at the lead before the next paced I/O: its gap and end (to learn
        // from how late it ends).
        let mut paced_wait = None;
        if !stopping {
            wake = wake.min(rec.next_boundary());
            if let Some(e) = end_ns.filter(|_| !paused) {
                wake = wake.min(e);
            }
            if let (Some(p), false, false) = (&pacer, free.is_empty(), paused) {
                let due = p.next_due();
                // A held verified write waits on a completion (its blocks), not on a
                // due time: no spin for it.
                match lead.lead(p.period_ns()).filter(|_| carried.is_none()) {
                    // Wake for the next due I/O, but not more often than PACE_GRAIN: at
                    // high rates the I/Os that fell due meanwhile go out together, each
                    // keeping its intended time (the delay shows in response latency).
                    None => wake = wake.min(due.max(now + PACE_GRAIN_NS)),
                    // Too close to sleep for: poll the ring until it is due (see `wake`).
                    Some(l) if due <= now + l => spin = true,
                    Some(l) => {
                        if due - l < wake {
                            wake = due - l;
                            paced_wait = Some((p.period_ns(), wake));
                        }
                    }
                }
            }
        }
        let wait_ns = wake.saturating_sub(now).max(1_000);
        let res = if spin {
            // Hand over what was prepared and post what has completed, without blocking
            // (a polled ring polls once; a ring with deferred task work runs it). Nothing
            // prepared and completions to reap (NOPs complete as they are submitted): no
            // system call, the loop reaps them.
            if io.ring.submission().is_empty() && !io.ring.completion().is_empty() {
                Ok(0)
            } else if ext_arg && !io.ring.params().is_setup_iopoll() {
                let ts = types::Timespec::new();
                let args = types::SubmitArgs::new().timespec(&ts);
                io.ring.submitter().submit_with_args(1, &args)
            } else {
                io.ring.submit()
            }
        } else if ext_arg {
            let ts = types::Timespec::new()
                .sec(wait_ns / 1_000_000_000)
                .nsec((wait_ns % 1_000_000_000) as u32);
            let args = types::SubmitArgs::new().timespec(&ts);
            io.ring.submitter().submit_with_args(1, &args)
        } else {
            io.ring.submit_and_wait(1)
        };
        let timed_out = match res {
            Err(e) if e.raw_os_error() == Some(libc::ETIME) => true,
            Err(e) if !transient(&e) => return Err(UringError::Enter(e)),
            _ => false,
        };
        now = ns_since(t0);
        if let (Some((period, asked)), true) = (paced_wait, timed_out) {
            lead.woke(period, asked, now);
        }
    }
    rec.flush(now, true);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// A ring and `slots` one-block buffers; None where io_uring is not available.
    fn ring_bufs(slots: usize) -> Option<Setup<squeue::Entry, cqueue::Entry>> {
        let ring = match build_ring(slots as u32, &EngineOptions::default()) {
            Ok(r) => r,
            Err(e) => {
                crate::test_support::cannot(&format!("io_uring unavailable ({e})"));
                return None;
            }
        };
        let bufs = Buffers::new(slots, 4096, &mut Rng::new(5)).unwrap();
        Some(Setup {
            io: Some(RingBufs { ring, bufs }),
            inflight: 0,
            fixed_file: false,
            fixed_bufs: false,
        })
    }

    fn push_read(s: &mut Setup<squeue::Entry, cqueue::Entry>, fd: i32, slot: usize) {
        let io = s.io.as_mut().unwrap();
        let sqe = build_sqe(&io.bufs, (false, false), fd, slot, false, 4096, 0);
        // SAFETY: the slot is in range and used by this read only; `Setup::release` (or its
        // Drop) reaps the read or leaks the buffers, and the tests keep `fd` open until then.
        unsafe { io.ring.submission().push(&sqe) }.unwrap();
        s.inflight += 1;
    }

    #[test]
    fn release_reaps_what_is_in_flight_then_frees() {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&[7u8; 4096]).unwrap();
        let Some(mut s) = ring_bufs(4) else { return };
        for slot in 0..4 {
            push_read(&mut s, f.as_raw_fd(), slot);
        }
        // Not even submitted yet: the drain hands them over and waits for all four.
        assert!(s.release(Duration::from_secs(5)));
        assert_eq!(s.inflight, 0);
        assert!(s.io.is_none());
    }

    #[test]
    fn release_leaks_what_the_device_does_not_complete() {
        // A read from an empty pipe whose write end stays open never completes.
        let (rx, tx) = std::io::pipe().unwrap();
        let Some(mut s) = ring_bufs(2) else { return };
        push_read(&mut s, rx.as_raw_fd(), 1);
        let t = Instant::now();
        assert!(!s.release(Duration::from_millis(50)));
        assert!(t.elapsed() >= Duration::from_millis(50));
        assert_eq!(s.inflight, 1, "the read is still in flight");
        assert!(
            s.io.is_none(),
            "the ring and buffers were leaked, not dropped"
        );
        // The pipe outlives the test's last look at `s`; the leaked read may now complete
        // (end of file) into the leaked ring, never into freed memory.
        drop((rx, tx));
    }
}
