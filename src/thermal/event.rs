//! What a soak sees happen to the drive, as values; the text is made in `Display`.

use std::fmt;

use serde::{Deserialize, Serialize};

/// What says the drive is throttling.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "by")]
pub enum ThrottleSignal {
    /// NVMe host-controlled thermal management: the TMT1 or TMT2 transition count or time
    /// grew since the last reading (level 2 is the heavier throttle).
    Hctm { level: u8 },
    /// The drive's power state changed to one with a lower maximum power while under load.
    PowerState { state: u8, max_w: f64 },
    /// The OCP SMART extended log (C0h) says the drive throttles now, at this level.
    Ocp { level: u8 },
}

impl fmt::Display for ThrottleSignal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ThrottleSignal::Hctm { level } => {
                write!(f, "thermal management temperature {level} counters")
            }
            ThrottleSignal::PowerState { state, max_w } => {
                write!(f, "power state {state} ({max_w:.2} W ceiling)")
            }
            ThrottleSignal::Ocp { level } => {
                write!(f, "the OCP log's thermal throttling status, level {level}")
            }
        }
    }
}

/// Something a soak saw; times are the run's seconds, kept in the event's `t`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "event")]
pub enum ThermalEvent {
    /// The run's first temperature: where a cool-down has to come back to.
    Start { temp_c: i32 },
    /// The temperature reached the drive's warning threshold.
    Warning { temp_c: i32, threshold_c: i32 },
    /// The temperature reached the drive's critical threshold.
    Critical { temp_c: i32, threshold_c: i32 },
    /// The drive began to throttle.
    ThrottleStarted {
        temp_c: Option<i32>,
        signal: ThrottleSignal,
    },
    /// The drive stopped throttling after `after_s` seconds.
    ThrottleEnded { temp_c: Option<i32>, after_s: f64 },
    /// A step's temperature was steady: the line moved `moved_c` across `window_s`.
    Steady {
        step: String,
        moved_c: f64,
        limit_c: f64,
        window_s: f64,
    },
    /// A step with a temperature rule ended before the temperature was steady.
    NotSteady {
        step: String,
        /// How far the line moved across the last full window; `None` when no window
        /// was full.
        moved_c: Option<f64>,
        limit_c: f64,
    },
    /// Back within `within_c` of the starting temperature, `after_s` into the idle step.
    Cooled {
        temp_c: i32,
        start_c: i32,
        within_c: f64,
        after_s: f64,
    },
    /// An idle step ended before the drive was back to its starting temperature.
    NotCooled { temp_c: Option<i32>, start_c: i32 },
}

impl fmt::Display for ThermalEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = |c: &Option<i32>| c.map(|c| format!(" at {c} °C")).unwrap_or_default();
        match self {
            ThermalEvent::Start { temp_c } => write!(f, "starting temperature {temp_c} °C"),
            ThermalEvent::Warning {
                temp_c,
                threshold_c,
            } => write!(
                f,
                "temperature {temp_c} °C reached the warning threshold ({threshold_c} °C)"
            ),
            ThermalEvent::Critical {
                temp_c,
                threshold_c,
            } => write!(
                f,
                "temperature {temp_c} °C reached the critical threshold ({threshold_c} °C)"
            ),
            ThermalEvent::ThrottleStarted { temp_c, signal } => {
                write!(f, "throttling began{} (by {signal})", at(temp_c))
            }
            ThermalEvent::ThrottleEnded { temp_c, after_s } => {
                write!(f, "throttling ended{} after {after_s:.0} s", at(temp_c))
            }
            ThermalEvent::Steady {
                step,
                moved_c,
                limit_c,
                window_s,
            } => write!(
                f,
                "{step}: temperature steady: {moved_c:.2} °C across {window_s:.0} s (limit {limit_c} °C)"
            ),
            ThermalEvent::NotSteady {
                step,
                moved_c,
                limit_c,
            } => match moved_c {
                Some(m) => write!(
                    f,
                    "{step}: temperature not steady: {m:.2} °C across the last window (limit {limit_c} °C)"
                ),
                None => write!(
                    f,
                    "{step}: temperature not steady: no full window of readings"
                ),
            },
            ThermalEvent::Cooled {
                temp_c,
                start_c,
                within_c,
                after_s,
            } => write!(
                f,
                "cooled to {temp_c} °C (within {within_c} °C of the starting {start_c} °C) in {after_s:.0} s"
            ),
            ThermalEvent::NotCooled { temp_c, start_c } => write!(
                f,
                "not back to the starting {start_c} °C when the idle phase ended{}",
                at(temp_c)
            ),
        }
    }
}
