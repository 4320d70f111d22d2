//! The synchronous engine: pread/pwrite (or a trim: BLKDISCARD, a punched hole), one I/O at
//! a time per job (queue depth 1, like fio's psync). It runs where io_uring cannot be set up, or when `--engine sync` asks.

use std::os::unix::fs::FileExt;
use std::sync::atomic::Ordering;
use std::time::Duration;

use super::buffers::Buffers;
use super::discard::trim_sync;
use super::iogen::{IoDir, IoGen};
use super::pacer::Pacer;
use super::pause::{Holds, PAUSE_NAP_NS};
use super::tally::IntervalTally;
use super::{ns_since, paced_lead, WorkerCtx, WorkerMsg, MAX_WAIT_NS};
use crate::engine::Rng;

pub(crate) fn run(ctx: WorkerCtx) {
    let mut rng = Rng::new(ctx.workload.seed ^ 0xB0F_FE25 ^ ctx.job as u64);
    let bufs = Buffers::new(1, ctx.workload.bs.max() as usize, &mut rng);
    let failed = match (&bufs, &ctx.file) {
        (None, _) => Some("cannot allocate the I/O buffer"),
        (_, None) => Some("the sync engine needs a target"),
        (Some(_), Some(_)) => None,
    };
    if let Some(message) = failed {
        let _ = ctx.tx.send(WorkerMsg::Failed {
            job: ctx.job,
            message: message.into(),
        });
    }
    let mut lead = paced_lead(&ctx);
    ctx.ready.wait();
    ctx.go.wait();
    let (Some(mut bufs), Some(file), Some(t0)) = (bufs, &ctx.file, ctx.t0.get().copied()) else {
        return;
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
    let mut issued_bytes = 0u64;
    let mut end_ns = ctx.end_ns;
    let mut holds = Holds::new(ns_since(t0));
    let mut now = ns_since(t0);
    loop {
        let (paused, resumed) = holds.turn(ctx.pause.load(Ordering::Relaxed), now, &mut rec);
        if resumed > 0 {
            end_ns = end_ns.map(|e| e + resumed);
            if let Some(p) = &mut pacer {
                p.shift(resumed);
            }
        }
        // While paused the step's end is not due: it moves by the paused span on resume.
        let ending = (!paused && end_ns.is_some_and(|e| now >= e))
            || ctx.stop.load(Ordering::Relaxed)
            || ctx.byte_budget.is_some_and(|b| issued_bytes >= b);
        // A trimwrite's held write goes out even at the end (its trim went out), at once.
        if ending && !gen.holds_write() {
            break;
        }
        if !ending {
            rec.maybe_flush(now);
        }
        if paused && !ending {
            let ns = rec.next_boundary().saturating_sub(now).min(PAUSE_NAP_NS);
            std::thread::sleep(Duration::from_nanos(ns.max(1)));
            now = ns_since(t0);
            continue;
        }
        let t_intended = match &mut pacer {
            _ if ending => now,
            None => now,
            Some(p) => match p.take_due(now) {
                Some(t) => {
                    rec.arrived(t);
                    t
                }
                None => {
                    let due = p.next_due();
                    let mut wake = rec.next_boundary();
                    if let Some(e) = end_ns {
                        wake = wake.min(e);
                    }
                    if due <= wake {
                        // Wake on time for it (see `wake`).
                        now = lead.sleep_until(t0, now, due, p.period_ns());
                        continue;
                    }
                    let ns = wake.saturating_sub(now).min(MAX_WAIT_NS);
                    std::thread::sleep(Duration::from_nanos(ns));
                    now = ns_since(t0);
                    continue;
                }
            },
        };
        let io = gen.next_io();
        let len = io.len as usize;
        let res = match (io.dir, ctx.trim) {
            (IoDir::Trim, Some(kind)) => {
                trim_sync(file, kind, io.offset, u64::from(io.len)).map(|()| len)
            }
            (IoDir::Trim, None) => Err(std::io::Error::from_raw_os_error(libc::EOPNOTSUPP)),
            (IoDir::Write, _) => {
                bufs.scramble(0, len, io.offset);
                file.write_at(&bufs.slot(0)[..len], io.offset)
            }
            (IoDir::Read, _) => file.read_at(&mut bufs.slot_mut(0)[..len], io.offset),
        };
        let t_submit = now;
        now = ns_since(t0);
        let result = match res {
            Ok(n) => n as i64,
            Err(e) => -i64::from(e.raw_os_error().unwrap_or(libc::EIO)),
        };
        issued_bytes += u64::from(io.len);
        ctx.progress.fetch_add(1, Ordering::Relaxed);
        rec.complete(io.dir, io.len, io.offset, result, t_submit, t_intended, now);
    }
    holds.close(now, &mut rec);
    rec.flush(now, true);
}
