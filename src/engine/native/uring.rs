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
//!
//! This file sets a worker up (its ring, buffers and registrations) and tears it down (no
//! buffer is freed while the kernel may still write into it); the worker's thread and loop
//! are [`super::uring_worker`], the SQEs and what each I/O is [`super::sqe`].

use std::io;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use io_uring::{cqueue, squeue, types, IoUring};
use thiserror::Error;

use super::buffers::Buffers;
use super::sqe::RingIo;
use super::WorkerCtx;
use crate::engine::Rng;
use crate::workload::EngineOptions;

/// How many prepared SQEs go to the kernel together while more are being prepared. Handing
/// a whole refill over at once (up to the queue depth) keeps the device idle until the last
/// one is built and gives it a burst; chunks of 4 start the device early and keep it fed.
/// Measured against one batch per loop: 4k random reads on a virtio disk 72-75k -> 81-91k
/// IOPS (fio: 82-90k), on a loop device over /dev/shm 242-246k -> 290-303k with the same
/// CPU per I/O; chunks of 1 or 2 cost more system time, 8 or 16 were no better.
pub const SUBMIT_CHUNK: usize = 4;

/// How long a worker that stops with I/Os in flight (an `io_uring_enter` error, a panic)
/// waits for them before it gives up and leaks its ring and buffers. The collector joins a
/// failed worker, so this bounds how much later the step reports the failure.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(2);

/// Longest single wait while draining, and the nap after an enter the kernel refused.
const DRAIN_POLL: Duration = Duration::from_millis(10);

/// Why the io_uring worker could not start or had to stop; the worker reports it as text.
#[derive(Debug, Error)]
pub(super) enum UringError {
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
pub(super) struct RingBufs<S: squeue::EntryMarker, C: cqueue::EntryMarker> {
    pub ring: IoUring<S, C>,
    pub bufs: Buffers,
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
pub(super) struct Setup<S: squeue::EntryMarker, C: cqueue::EntryMarker> {
    /// `None` only once `release` has run.
    pub io: Option<RingBufs<S, C>>,
    /// I/Os pushed to the submission queue and not reaped yet.
    pub inflight: usize,
    pub fixed_file: bool,
    pub fixed_bufs: bool,
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

pub(super) fn setup<S: squeue::EntryMarker, C: cqueue::EntryMarker>(
    ctx: &WorkerCtx,
) -> Result<(Setup<S, C>, Vec<String>), UringError> {
    let depth = ctx.workload.iodepth;
    let ring = build_ring(depth, &ctx.options).map_err(UringError::Setup)?;
    let mut rng = Rng::new(ctx.workload.seed ^ 0xB0F_FE25 ^ ctx.job as u64);
    // NOPs and trims move no data: no buffers (`trimwrite`'s writes have theirs).
    let slots = match ctx.ring_io {
        RingIo::Nop => 0,
        RingIo::Trim(_) if ctx.workload.rw.is_trim() => 0,
        RingIo::Block | RingIo::NvmeCmd(_) | RingIo::ZoneAppend(_) | RingIo::Trim(_) => {
            depth as usize
        }
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
pub(super) fn transient(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EINTR) | Some(libc::EBUSY) | Some(libc::EAGAIN)
    )
}

#[cfg(test)]
mod tests {
    use super::super::sqe::build_sqe;
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
