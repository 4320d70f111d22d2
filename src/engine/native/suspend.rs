//! Telling a suspended process from a stalled device. When the whole process stops
//! (SIGSTOP, Ctrl-Z) or the machine sleeps, every thread stands still and the device is
//! not to blame for the gap. Each thread that keeps time (the collector, every worker)
//! sees it as a turn of its loop that came seconds late, together with evidence of the
//! suspension: a SIGCONT since its last turn, CLOCK_BOOTTIME having run ahead of
//! CLOCK_MONOTONIC, or the whole process having stood still (no thread of it turned in the
//! gap) while this thread was not waiting for a CPU (its run-queue wait, from the kernel's
//! schedstat, grew by less than half the gap). Workers then shift their rate schedule and
//! end, as after a pause; the collector marks the intervals the span touches and leaves
//! them out of the step's figures. A thread that was merely starved of CPU, or blocked on
//! a device while the others turned, has no such evidence and changes nothing.
//!
//! The SIGCONT alone is not enough: its handler runs on whichever thread the kernel picks,
//! and on a busy machine that thread may get a CPU long after the others have resumed.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Once;
use std::time::Duration;

/// A turn later than this (loops turn at least every 100 ms) is a gap worth explaining.
pub(crate) const SUSPEND_GAP_NS: u64 = 1_000_000_000;

/// How long a late turn waits for SIGCONT's handler to have run.
const SIGCONT_WAIT: Duration = Duration::from_millis(50);

/// SIGCONTs received so far.
static CONTINUED: AtomicU64 = AtomicU64::new(0);

fn continued() -> u64 {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        // SAFETY: the handler only increments an atomic, which is async-signal-safe; it
        // allocates nothing, takes no lock and touches no other state. SIGCONT still
        // continues the process: a handler does not change that.
        let _ = unsafe {
            signal_hook::low_level::register(signal_hook::consts::SIGCONT, || {
                CONTINUED.fetch_add(1, Ordering::Relaxed);
            })
        };
    });
    CONTINUED.load(Ordering::Relaxed)
}

/// A thread says it turned at most this often (ns of its own clock).
const BEAT_EVERY_NS: u64 = 10_000_000;

/// A thread reads its run-queue wait at most this often (ns of its own clock): about 11 µs
/// a read (a file of /proc), so ten a second; a reading this old moves the comparison
/// with half a gap of at least [`SUSPEND_GAP_NS`] by at most this much.
const WAIT_EVERY_NS: u64 = 100_000_000;

/// CLOCK_MONOTONIC (ns) of the latest turn any thread of the process said it made.
static LAST_BEAT: AtomicU64 = AtomicU64::new(0);

/// The latest span (CLOCK_MONOTONIC ns, start and end) in which no thread of the process
/// turned, of at least half [`SUSPEND_GAP_NS`].
static STILL: std::sync::Mutex<(u64, u64)> = std::sync::Mutex::new((0, 0));

fn monotonic_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec into the valid, exclusively borrowed `ts`;
    // both clock ids used here exist on every Linux this runs on.
    let rc = unsafe { libc::clock_gettime(clock, &mut ts) };
    if rc != 0 {
        return 0;
    }
    (ts.tv_sec.max(0) as u64) * 1_000_000_000 + ts.tv_nsec.clamp(0, 999_999_999) as u64
}

/// Says this thread turned at `mono`; records the span before it in which none did.
fn beat(mono: u64) {
    let prev = LAST_BEAT.swap(mono, Ordering::Relaxed);
    if prev != 0 && mono.saturating_sub(prev) >= SUSPEND_GAP_NS / 2 {
        if let Ok(mut still) = STILL.lock() {
            *still = (prev, mono);
        }
    }
}

/// The nanoseconds of `[from, to]` (CLOCK_MONOTONIC) in which no thread of the process
/// turned, as far as the latest such span tells.
fn stood_still(from: u64, to: u64) -> u64 {
    let (s, e) = STILL.lock().map(|g| *g).unwrap_or((0, 0));
    e.min(to).saturating_sub(s.max(from))
}

/// This thread's time waiting for a CPU so far (ns), from `/proc/thread-self/schedstat`
/// (its second field); None where the kernel does not keep it.
fn run_queue_wait_ns() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    text.split_whitespace().nth(1)?.parse().ok()
}

/// CLOCK_BOOTTIME minus CLOCK_MONOTONIC: grows only while the machine sleeps.
fn sleep_offset() -> Duration {
    Duration::from_nanos(
        clock_ns(libc::CLOCK_BOOTTIME).saturating_sub(clock_ns(libc::CLOCK_MONOTONIC)),
    )
}

/// One thread's watch on its own turns, on its own clock (ns).
#[derive(Debug)]
pub(crate) struct SuspendWatch {
    last_turn: u64,
    last_beat: u64,
    last_offset: Duration,
    last_wait: Option<u64>,
    last_wait_at: u64,
    seen: u64,
}

impl SuspendWatch {
    pub fn new(now: u64) -> Self {
        beat(monotonic_ns());
        SuspendWatch {
            last_turn: now,
            last_beat: now,
            last_offset: sleep_offset(),
            last_wait: run_queue_wait_ns(),
            last_wait_at: now,
            seen: continued(),
        }
    }

    /// Called on every turn with the time; the span the process was suspended for since
    /// the last turn (its start and length, ns), if it was.
    pub fn turn(&mut self, now: u64) -> Option<(u64, u64)> {
        let from = self.last_turn;
        let gap = now.saturating_sub(from);
        self.last_turn = now;
        if gap < SUSPEND_GAP_NS {
            if now.saturating_sub(self.last_beat) >= BEAT_EVERY_NS {
                self.last_beat = now;
                beat(monotonic_ns());
                if now.saturating_sub(self.last_wait_at) >= WAIT_EVERY_NS {
                    self.last_wait_at = now;
                    self.last_wait = run_queue_wait_ns();
                }
            }
            return None;
        }
        let mono = monotonic_ns();
        beat(mono);
        self.last_beat = now;
        let wait = run_queue_wait_ns();
        // Waiting for a CPU for most of the gap: starved, not stopped.
        let starved = match (self.last_wait, wait) {
            (Some(a), Some(b)) => b.saturating_sub(a) >= gap / 2,
            _ => false,
        };
        self.last_wait = wait;
        self.last_wait_at = now;
        let still = !starved && stood_still(mono.saturating_sub(gap), mono) >= gap / 2;
        let offset = sleep_offset();
        let slept = offset.saturating_sub(self.last_offset).as_nanos() as u64;
        self.last_offset = offset;
        // SIGCONT's handler runs on whichever thread the kernel picks, perhaps after this
        // one has woken: give it a moment before concluding there was none.
        let mut conts = continued();
        let deadline = std::time::Instant::now() + SIGCONT_WAIT;
        while !still && conts == self.seen && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
            conts = continued();
        }
        let signalled = conts != self.seen;
        self.seen = conts;
        (signalled || slept >= gap / 2 || still).then_some((from, gap))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The SIGCONT count is the process's: the tests that move it run one at a time.
    fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
        static COUNT: std::sync::Mutex<()> = std::sync::Mutex::new(());
        COUNT
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    #[test]
    fn a_late_turn_without_evidence_is_not_a_suspension() {
        let _one = one_at_a_time();
        *STILL.lock().unwrap() = (0, 0);
        let mut w = SuspendWatch::new(0);
        assert_eq!(w.turn(50_000_000), None, "on time");
        assert_eq!(
            w.turn(3_050_000_000),
            None,
            "late, but starved, not suspended"
        );
    }

    #[test]
    fn a_late_turn_while_the_whole_process_stood_still_is_a_suspension() {
        let _one = one_at_a_time();
        let mut w = SuspendWatch::new(0);
        // No thread turned for the last 2 s (as after SIGSTOP, before SIGCONT's handler
        // has had a CPU), and this one did not wait for a CPU meanwhile.
        let now = monotonic_ns();
        *STILL.lock().unwrap() = (now - 2_000_000_000, now);
        w.last_wait = run_queue_wait_ns();
        assert_eq!(w.turn(2_000_000_000), Some((0, 2_000_000_000)));
        *STILL.lock().unwrap() = (0, 0);
    }

    #[test]
    fn a_late_turn_after_sigcont_is_a_suspension() {
        let _one = one_at_a_time();
        let mut w = SuspendWatch::new(0);
        CONTINUED.fetch_add(1, Ordering::Relaxed);
        assert_eq!(w.turn(10_000_000), None, "a SIGCONT alone is not a gap");
        CONTINUED.fetch_add(1, Ordering::Relaxed);
        assert_eq!(w.turn(3_010_000_000), Some((10_000_000, 3_000_000_000)));
        assert_eq!(w.turn(3_020_000_000), None, "said once");
    }
}
