//! Whether the drive throttles now, from consecutive readings: the OCP SMART extended log's
//! throttling status (the drive says so), NVMe's host-controlled thermal management
//! counters (a transition or seconds at TMT1/TMT2 added since the last reading) or, under
//! load, a power state with a lower ceiling than the highest seen.

use super::event::ThrottleSignal;
use crate::telemetry::reading::{SmartReading, ThermalThrottle, ThrottleStatus};

/// Remembers the last counters and the highest power ceiling seen under load.
#[derive(Debug, Clone, Default)]
pub struct ThrottleTracker {
    prev: Option<ThermalThrottle>,
    top_w: Option<f64>,
}

impl ThrottleTracker {
    /// The throttle `r` shows, against the readings before it; `loaded`: I/O is running
    /// (an idle drive lowering its power state saves power, it does not throttle).
    pub fn observe(&mut self, r: &SmartReading, loaded: bool) -> Option<ThrottleSignal> {
        let mut signal = match r.ocp_smart.map(|o| o.throttle_status) {
            Some(ThrottleStatus::Throttled { level }) => Some(ThrottleSignal::Ocp { level }),
            _ => None,
        };
        if let Some(now) = r.thermal_throttle {
            if let Some(prev) = self.prev {
                if now.tmt2_transitions > prev.tmt2_transitions
                    || now.tmt2_seconds > prev.tmt2_seconds
                {
                    signal = Some(ThrottleSignal::Hctm { level: 2 });
                } else if now.tmt1_transitions > prev.tmt1_transitions
                    || now.tmt1_seconds > prev.tmt1_seconds
                {
                    signal = Some(ThrottleSignal::Hctm { level: 1 });
                }
            }
            self.prev = Some(now);
        }
        if let (Some(w), Some(state)) =
            (r.power_state_max_w.filter(|w| w.is_finite()), r.power_state)
        {
            if loaded {
                match self.top_w {
                    Some(top) if w < top => {
                        signal = signal.or(Some(ThrottleSignal::PowerState { state, max_w: w }));
                    }
                    _ => self.top_w = Some(w),
                }
            }
        }
        signal
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(t1: u32, s1: u32, t2: u32, s2: u32) -> SmartReading {
        SmartReading {
            thermal_throttle: Some(ThermalThrottle {
                tmt1_transitions: t1,
                tmt1_seconds: s1,
                tmt2_transitions: t2,
                tmt2_seconds: s2,
            }),
            ..Default::default()
        }
    }

    #[test]
    fn counters_that_grow_are_a_throttle_and_old_counts_are_not() {
        let mut t = ThrottleTracker::default();
        // A drive that throttled before the run: its counts are history.
        assert_eq!(t.observe(&reading(3, 100, 0, 0), true), None);
        assert_eq!(t.observe(&reading(3, 100, 0, 0), true), None);
        assert_eq!(
            t.observe(&reading(4, 100, 0, 0), true),
            Some(ThrottleSignal::Hctm { level: 1 })
        );
        assert_eq!(
            t.observe(&reading(4, 102, 0, 0), true),
            Some(ThrottleSignal::Hctm { level: 1 })
        );
        assert_eq!(
            t.observe(&reading(4, 104, 1, 1), true),
            Some(ThrottleSignal::Hctm { level: 2 })
        );
        assert_eq!(t.observe(&reading(4, 104, 1, 1), true), None, "stopped");
    }

    #[test]
    fn the_ocp_logs_status_is_a_throttle_while_it_says_so() {
        use crate::telemetry::reading::OcpSmartHealth;
        let ocp = |status| SmartReading {
            ocp_smart: Some(OcpSmartHealth {
                media_written_bytes: None,
                media_read_bytes: None,
                throttle_status: status,
                throttle_events: 1,
                max_temperature_c: None,
                pcie_correctable_errors: 0,
                incomplete_shutdowns: 0,
                log_page_version: 4,
            }),
            ..Default::default()
        };
        let mut t = ThrottleTracker::default();
        assert_eq!(t.observe(&ocp(ThrottleStatus::Unthrottled), true), None);
        assert_eq!(
            t.observe(&ocp(ThrottleStatus::Throttled { level: 2 }), true),
            Some(ThrottleSignal::Ocp { level: 2 })
        );
        assert_eq!(
            t.observe(&ocp(ThrottleStatus::Reserved { value: 9 }), true),
            None
        );
    }

    #[test]
    fn a_lower_power_ceiling_under_load_is_a_throttle_and_at_idle_is_not() {
        let ps = |state: u8, w: f64| SmartReading {
            power_state: Some(state),
            power_state_max_w: Some(w),
            ..Default::default()
        };
        let mut t = ThrottleTracker::default();
        assert_eq!(t.observe(&ps(0, 8.25), true), None);
        assert_eq!(
            t.observe(&ps(2, 5.5), true),
            Some(ThrottleSignal::PowerState {
                state: 2,
                max_w: 5.5
            })
        );
        assert_eq!(t.observe(&ps(3, 0.05), false), None, "idle power saving");
        assert_eq!(t.observe(&ps(0, 8.25), true), None);
    }
}
