//! How long the collector waits for workers once they should stop, and whether the device
//! stalled. A device that stalls (dm-delay, a hung controller) holds its I/Os; the step
//! does not wait for them beyond a grace of one interval (at least 1 s) after a stop was
//! asked or after the step's end was due, whichever comes first. A device that is still
//! completing I/O (a deep queue draining) is waited for longer, up to [`DRAIN_CAP`].
//!
//! The grace runs on the time the process was there to see: the collector's turns, each
//! counted up to [`SEEN_TURN`]. A process that was stopped, or starved of CPU on a loaded
//! machine, saw no completion because it was not running, not because the device held its
//! I/O: those spans count as no waiting. And only the kernel's own count says the device
//! stalled ([`StopClock::device_stalled`]): requests in flight at the device and no
//! completion through a whole grace. The process's lateness is never that evidence.

use std::time::{Duration, Instant};

/// The longest wait for a device that is still completing I/O after the stop.
pub(crate) const DRAIN_CAP: Duration = Duration::from_secs(10);

/// The most of one collector turn counted as time seen: its turns come every 20 ms, so a
/// longer one is the process stopped or off the CPU.
pub(crate) const SEEN_TURN: Duration = Duration::from_millis(100);

/// What the collector sees of the step on one turn.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Seen {
    /// Completions so far: the workers' reaped I/Os and the kernel's count for the device.
    pub done: u64,
    /// Requests the kernel holds in flight at the target's device; `None` where it keeps
    /// no count for it (a file on tmpfs or overlayfs, the nop engine).
    pub device_in_flight: Option<u64>,
}

pub(crate) struct StopClock {
    grace: Duration,
    started: Instant,
    /// The step's end, from its start (without pauses and suspensions).
    end: Option<Duration>,
    paused_for: Duration,
    last_tick: Instant,
    /// The time seen so far (the sum of the turns, each up to [`SEEN_TURN`]).
    seen: Duration,
    /// When (time seen) the stop was asked.
    asked: Option<Duration>,
    /// Completions counted so far, and when (time seen) that count last moved.
    /// `None` until the first count, which is only the baseline.
    progress: Option<u64>,
    progressed: Option<Duration>,
    /// Whether the kernel keeps a count for the device, and since when (time seen) the
    /// device has held requests in flight with no completion.
    device_counted: bool,
    held_since: Option<Duration>,
    /// The stop came from the user or from a failure, not from the step's own end: no
    /// drain is waited for (a stop must not wait on a device working through its queue).
    hurried: bool,
}

impl StopClock {
    pub fn new(started: Instant, end_ns: Option<u64>, interval: Duration) -> Self {
        StopClock {
            grace: interval.max(Duration::from_secs(1)),
            started,
            end: end_ns.map(Duration::from_nanos),
            paused_for: Duration::ZERO,
            last_tick: started,
            seen: Duration::ZERO,
            asked: None,
            progress: None,
            progressed: None,
            device_counted: false,
            held_since: None,
            hurried: false,
        }
    }

    /// The process was suspended for `gap`: the step's end moves by as much (the waits
    /// are on time seen, which the suspension was not).
    pub fn suspended(&mut self, gap: Duration) {
        self.paused_for += gap;
    }

    /// Waits `d` longer before giving up (once asked workers for their last figures).
    pub fn extend(&mut self, d: Duration) {
        self.asked = Some((self.seen + d).saturating_sub(self.grace));
    }

    /// One turn of the collector at `now`: what it sees and the pause flag (sampled: the
    /// grace covers the error). True when the step's end is more than the grace past due
    /// and the workers have not been told to stop: the caller tells them now.
    pub fn turn(&mut self, now: Instant, seen: Seen, paused: bool) -> bool {
        let gap = now.saturating_duration_since(self.last_tick);
        self.last_tick = now;
        self.seen += gap.min(SEEN_TURN);
        if paused {
            self.paused_for += gap;
        }
        let moved = self
            .progress
            .replace(seen.done)
            .is_some_and(|b| b != seen.done);
        if moved {
            self.progressed = Some(self.seen);
        }
        self.device_counted = seen.device_in_flight.is_some();
        self.held_since = match seen.device_in_flight {
            Some(n) if n > 0 && !moved => self.held_since.or(Some(self.seen)),
            Some(n) if n > 0 => Some(self.seen),
            _ => None,
        };
        if self.asked.is_some() {
            return false;
        }
        let Some(end) = self.end else { return false };
        let due = self.started + end + self.paused_for;
        if now > due + self.grace {
            // The grace has run since the end was due: do not wait another one.
            self.asked = Some(self.seen.saturating_sub(self.grace));
            return true;
        }
        false
    }

    /// The device completed I/O within the last grace (of time seen).
    pub fn progressing(&self) -> bool {
        self.progressed
            .is_some_and(|p| self.seen.saturating_sub(p) <= self.grace)
    }

    /// Whether the device stalled, by the kernel's count: it has held requests in flight
    /// and completed none through the whole last grace (of time seen). `None` where the
    /// kernel keeps no count for the device: nothing then says the device stalled.
    pub fn device_stalled(&self) -> Option<bool> {
        self.device_counted.then(|| {
            self.held_since
                .is_some_and(|s| self.seen.saturating_sub(s) >= self.grace)
        })
    }

    /// The workers were told to stop (the first call counts).
    pub fn asked(&mut self) {
        self.asked.get_or_insert(self.seen);
    }

    /// The stop is the user's (a key, a signal, a skip) or a failure's: wait the grace for
    /// the workers, never a drain.
    pub fn hurry(&mut self) {
        self.hurried = true;
    }

    /// Whether the stop was hurried ([`StopClock::hurry`]).
    pub fn is_hurried(&self) -> bool {
        self.hurried
    }

    /// How long (time seen) since the stop was asked, once that is beyond the grace.
    ///
    /// At the step's own end a device still completing I/O is waited for longer, up to
    /// [`DRAIN_CAP`]: a deep queue drains, and its last I/Os belong to the step's figures.
    /// A hurried stop waits the grace only. Past the grace the collector decides whether
    /// its workers ran (a starved process's did not) before it blames the device.
    pub fn given_up(&self) -> Option<Duration> {
        let waited = self.seen.saturating_sub(self.asked?);
        let drain = self.progressing();
        let limit = if drain && !self.hurried {
            DRAIN_CAP
        } else {
            self.grace
        };
        (waited > limit).then_some(waited)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    /// A clock whose step started at `t0` and ends 2 s in, turned every 20 ms from `from`
    /// to `to` (after the start) with what `seen` says at each time.
    fn turns(
        c: &mut StopClock,
        t0: Instant,
        from: Duration,
        to: Duration,
        seen: impl Fn(Duration) -> Seen,
    ) -> Option<Duration> {
        let mut t = from;
        let mut overdue_at = None;
        while t <= to {
            if c.turn(t0 + t, seen(t), false) && overdue_at.is_none() {
                overdue_at = Some(t);
            }
            t += 20 * MS;
        }
        overdue_at
    }

    /// `done` completions so far, `in_flight` requests the kernel holds.
    fn seen(done: u64, in_flight: u64) -> Seen {
        Seen {
            done,
            device_in_flight: Some(in_flight),
        }
    }

    #[test]
    fn gives_up_a_grace_after_the_due_end_on_a_device_that_holds_its_io() {
        let t0 = Instant::now();
        let mut c = StopClock::new(t0, Some(2_000_000_000), Duration::from_millis(500));
        let held = |_| seen(5_000, 8);
        let due = turns(&mut c, t0, Duration::ZERO, 3_100 * MS, held);
        assert!(due.is_some_and(|t| t > 3_000 * MS), "overdue at {due:?}");
        assert!(!c.turn(t0 + 3_120 * MS, held(MS), false), "said once");
        c.asked();
        assert!(
            c.given_up().is_some(),
            "the grace ran before the end was due"
        );
        assert_eq!(c.device_stalled(), Some(true));

        let mut c = StopClock::new(t0, Some(60_000_000_000), Duration::ZERO);
        turns(&mut c, t0, Duration::ZERO, 500 * MS, held);
        c.asked();
        turns(&mut c, t0, 520 * MS, 1_400 * MS, held);
        assert!(c.given_up().is_none(), "within the 1 s grace");
        turns(&mut c, t0, 1_420 * MS, 1_600 * MS, held);
        assert!(c.given_up().is_some());
    }

    #[test]
    fn a_users_stop_waits_the_grace_even_for_a_device_still_completing() {
        // dm-delay with every read 10 s late: reads keep completing (a drain), and the user
        // pressed Ctrl-C 1 s into a 60 s step. The stop waits the 1 s grace, not the cap.
        let t0 = Instant::now();
        let mut c = StopClock::new(t0, Some(60_000_000_000), Duration::ZERO);
        let draining = |t: Duration| seen(t.as_millis() as u64 / 100, 4);
        turns(&mut c, t0, Duration::ZERO, 1_000 * MS, draining);
        c.asked();
        c.hurry();
        turns(&mut c, t0, 1_020 * MS, 1_900 * MS, draining);
        assert!(c.progressing());
        assert!(c.given_up().is_none(), "within the grace");
        turns(&mut c, t0, 1_920 * MS, 2_200 * MS, draining);
        assert!(c.given_up().is_some(), "the grace, not the 10 s cap");
    }

    #[test]
    fn a_device_still_completing_is_waited_for_up_to_the_cap() {
        let t0 = Instant::now();
        let mut c = StopClock::new(t0, Some(2_000_000_000), Duration::ZERO);
        let draining = |t: Duration| seen(t.as_millis() as u64, 8);
        turns(&mut c, t0, Duration::ZERO, 3_100 * MS, draining);
        c.asked();
        assert!(c.progressing());
        assert_eq!(c.device_stalled(), Some(false));
        assert!(c.given_up().is_none(), "still completing");
        turns(&mut c, t0, 3_120 * MS, 13_500 * MS, draining);
        assert!(c.given_up().is_some(), "the cap");
    }

    #[test]
    fn a_process_off_the_cpu_is_not_waiting_for_the_device() {
        // The step's end came and went while the process was stopped (or starved): the
        // first turn after it sees the end long past due, no new completion, the kernel
        // holding nothing. That is no stall, and no reason to give up on the workers yet.
        let t0 = Instant::now();
        let mut c = StopClock::new(t0, Some(1_000_000_000), Duration::ZERO);
        turns(&mut c, t0, Duration::ZERO, 900 * MS, |t| {
            seen(t.as_millis() as u64, 0)
        });
        assert!(c.turn(t0 + 6_000 * MS, seen(900, 0), false));
        c.asked();
        assert!(
            c.progressing(),
            "the gap was not seen: 0.1 s since the last completion"
        );
        assert_eq!(c.device_stalled(), Some(false), "the device holds nothing");
        assert!(c.given_up().is_none());
        // Turns come slowly (each 400 ms late): each counts 100 ms seen.
        let mut t = 6_000 * MS;
        for _ in 0..20 {
            t += 400 * MS;
            c.turn(t0 + t, seen(900, 0), false);
        }
        assert!(!c.progressing(), "2 s seen without a completion");
        assert!(
            c.given_up().is_some(),
            "a grace seen without a completion: the collector asks whether its workers ran"
        );
        assert_eq!(c.device_stalled(), Some(false));

        // Where the kernel keeps no count, nothing says the device stalled.
        let mut c = StopClock::new(t0, Some(1_000_000_000), Duration::ZERO);
        turns(&mut c, t0, Duration::ZERO, 3_000 * MS, |_| Seen::default());
        assert_eq!(c.device_stalled(), None);
    }

    #[test]
    fn a_stall_needs_a_whole_grace_of_requests_held_without_a_completion() {
        let t0 = Instant::now();
        let mut c = StopClock::new(t0, None, Duration::ZERO);
        // Held for 0.9 s, one completion, then held again for 0.9 s: no stall.
        turns(&mut c, t0, Duration::ZERO, 900 * MS, |_| seen(1, 4));
        turns(&mut c, t0, 920 * MS, 1_800 * MS, |_| seen(2, 4));
        assert_eq!(c.device_stalled(), Some(false));
        turns(&mut c, t0, 1_820 * MS, 2_000 * MS, |_| seen(2, 4));
        assert_eq!(c.device_stalled(), Some(true), "1 s held, none completed");
        // A stopped process's gap (one turn, 5 s late) counts 100 ms.
        let mut c = StopClock::new(t0, None, Duration::ZERO);
        let held = |_| seen(7, 4);
        turns(&mut c, t0, Duration::ZERO, 500 * MS, held);
        c.turn(t0 + 5_500 * MS, held(MS), false);
        assert_eq!(c.device_stalled(), Some(false), "0.6 s seen");
    }
}
