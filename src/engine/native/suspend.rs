//! Telling a suspended process from a stalled device. When the whole process stops
//! (SIGSTOP, Ctrl-Z) or the machine sleeps, every thread stands still and the device is
//! not to blame for the gap. Each thread that keeps time (the collector, every worker)
//! sees it as a turn of its loop that came seconds late, together with evidence of the
//! suspension: a SIGCONT since its last turn, or CLOCK_BOOTTIME having run ahead of
//! CLOCK_MONOTONIC. Workers then shift their rate schedule and end, as after a pause; the
//! collector marks the intervals the span touches and leaves them out of the step's
//! figures. A thread that was merely starved of CPU has no such evidence and changes
//! nothing.

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

/// CLOCK_BOOTTIME minus CLOCK_MONOTONIC: grows only while the machine sleeps.
fn sleep_offset() -> Duration {
    let read = |clock| {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: clock_gettime writes one timespec into the valid, exclusively borrowed
        // `ts`; both clock ids exist on every Linux this runs on.
        let rc = unsafe { libc::clock_gettime(clock, &mut ts) };
        if rc != 0 {
            return Duration::ZERO;
        }
        Duration::new(
            ts.tv_sec.max(0) as u64,
            ts.tv_nsec.clamp(0, 999_999_999) as u32,
        )
    };
    read(libc::CLOCK_BOOTTIME).saturating_sub(read(libc::CLOCK_MONOTONIC))
}

/// One thread's watch on its own turns, on its own clock (ns).
#[derive(Debug)]
pub(crate) struct SuspendWatch {
    last_turn: u64,
    last_offset: Duration,
    seen: u64,
}

impl SuspendWatch {
    pub fn new(now: u64) -> Self {
        SuspendWatch {
            last_turn: now,
            last_offset: sleep_offset(),
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
            return None;
        }
        let offset = sleep_offset();
        let slept = offset.saturating_sub(self.last_offset).as_nanos() as u64;
        self.last_offset = offset;
        // SIGCONT's handler runs on whichever thread the kernel picks, perhaps after this
        // one has woken: give it a moment before concluding there was none.
        let mut conts = continued();
        let deadline = std::time::Instant::now() + SIGCONT_WAIT;
        while conts == self.seen && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
            conts = continued();
        }
        let signalled = conts != self.seen;
        self.seen = conts;
        (signalled || slept >= gap / 2).then_some((from, gap))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The SIGCONT count is the process's: the tests that move it run one at a time.
    static COUNT: std::sync::Mutex<()> = std::sync::Mutex::new(());

    #[test]
    fn a_late_turn_without_evidence_is_not_a_suspension() {
        let _one = COUNT
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut w = SuspendWatch::new(0);
        assert_eq!(w.turn(50_000_000), None, "on time");
        assert_eq!(
            w.turn(3_050_000_000),
            None,
            "late, but starved, not suspended"
        );
    }

    #[test]
    fn a_late_turn_after_sigcont_is_a_suspension() {
        let _one = COUNT
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut w = SuspendWatch::new(0);
        CONTINUED.fetch_add(1, Ordering::Relaxed);
        assert_eq!(w.turn(10_000_000), None, "a SIGCONT alone is not a gap");
        CONTINUED.fetch_add(1, Ordering::Relaxed);
        assert_eq!(w.turn(3_010_000_000), Some((10_000_000, 3_000_000_000)));
        assert_eq!(w.turn(3_020_000_000), None, "said once");
    }
}
