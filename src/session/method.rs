//! How a session's run left its method's protocol (time-scaled durations, stopped before
//! its end), said in the description, the report's summary and pages, the text output
//! and compare: a conforming run has none.

use std::fmt;

use super::model::{Session, SessionState};

/// One way a run is off its method.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum OffMethod {
    /// Every duration of the preset multiplied by this (`--time-scale`).
    TimeScaled(f64),
    /// Stopped before its planned end (a signal, a key).
    Stopped,
}

impl fmt::Display for OffMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OffMethod::TimeScaled(x) => write!(f, "time-scaled ×{x}: not the method's durations"),
            OffMethod::Stopped => write!(f, "stopped before its end: not the method's whole run"),
        }
    }
}

impl OffMethod {
    /// How a run at `time_scale` is off its method's durations (none at 1).
    pub fn of_scale(time_scale: f64) -> Option<OffMethod> {
        (time_scale != 1.0).then_some(OffMethod::TimeScaled(time_scale))
    }
}

/// The plan's time scale as the session recorded it (1 where it recorded none: an unscaled
/// plan, a plain run, or a session from before the scale was recorded).
pub fn time_scale(s: &Session) -> f64 {
    s.plan_info()
        .time_scale
        .filter(|x| x.is_finite() && *x > 0.0)
        .unwrap_or(1.0)
}

/// Every way `s`'s run is off its method, in the order they are said; empty for a run
/// that kept to it.
pub fn off_method(s: &Session) -> Vec<OffMethod> {
    let mut out: Vec<OffMethod> = OffMethod::of_scale(time_scale(s)).into_iter().collect();
    if s.state == SessionState::Stopped {
        out.push(OffMethod::Stopped);
    }
    out
}

/// The ways joined for one line (`time-scaled ×0.02: not the method's durations; stopped
/// …`); none when it kept to its method.
pub fn off_method_text(s: &Session) -> Option<String> {
    let ways = off_method(s);
    (!ways.is_empty()).then(|| {
        ways.iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("; ")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scaled_or_stopped_run_says_so_and_a_conforming_one_says_nothing() {
        let mut s = Session {
            state: SessionState::Complete,
            ..Session::default()
        };
        assert_eq!(off_method_text(&s), None);
        s.plan = serde_yaml::from_str("preset_id: x\ntime_scale: 0.02\n").expect("yaml");
        assert_eq!(
            off_method_text(&s).as_deref(),
            Some("time-scaled ×0.02: not the method's durations")
        );
        s.state = SessionState::Stopped;
        assert_eq!(
            off_method(&s),
            [OffMethod::TimeScaled(0.02), OffMethod::Stopped]
        );
        s.plan = serde_yaml::from_str("preset_id: x\n").expect("yaml");
        assert_eq!(off_method(&s), [OffMethod::Stopped], "no scale recorded: 1");
    }
}
