//! A run's thermal watch: the starting temperature, the thresholds crossed, throttling
//! begun and ended, and each step's thermal ends (steady temperature, throttled long
//! enough, cooled down), judged on each reading as it arrives.

use super::event::ThermalEvent;
use super::steady::TempSteady;
use super::throttle::ThrottleTracker;
use crate::outcome::EndedBy;
use crate::plan::ThermalEnd;
use crate::telemetry::reading::SmartReading;

/// The running step's rules and where it stands.
#[derive(Debug, Clone)]
struct StepRules {
    name: String,
    rules: ThermalEnd,
    idle: bool,
    /// The first reading's time in this step.
    began_s: Option<f64>,
    steady: Option<TempSteady>,
    reached: bool,
    last_c: Option<i32>,
}

/// A throttle ends only after this long of readings without any sign of it: counters of
/// whole seconds and a reading every second or two do not grow at every reading even while
/// the drive throttles throughout.
pub const THROTTLE_END_HOLD_S: f64 = 3.0;

/// Watches the drive for a whole run.
#[derive(Debug, Clone, Default)]
pub struct ThermalWatch {
    /// Say the starting temperature (a run with thermal rules: a cool-down goes back to it).
    say_start: bool,
    tracker: ThrottleTracker,
    start_c: Option<i32>,
    warned: bool,
    critical: bool,
    throttle_since: Option<f64>,
    /// The last reading that showed the throttle.
    throttle_seen: f64,
    step: Option<StepRules>,
}

impl ThermalWatch {
    /// A watch for a run; `say_start`: report the starting temperature as an event.
    pub fn new(say_start: bool) -> Self {
        ThermalWatch {
            say_start,
            ..Default::default()
        }
    }

    /// The run's first temperature.
    pub fn start_c(&self) -> Option<i32> {
        self.start_c
    }

    /// A step begins; `idle`: it does no I/O.
    pub fn begin_step(&mut self, name: &str, rules: ThermalEnd, idle: bool) {
        self.step = Some(StepRules {
            name: name.to_string(),
            rules,
            idle,
            began_s: None,
            steady: rules
                .steady
                .map(|s| TempSteady::new(s.limit_c, s.window.as_secs_f64())),
            reached: false,
            last_c: None,
        });
    }

    /// The step ended: what its thermal rules did not reach.
    pub fn end_step(&mut self) -> Vec<ThermalEvent> {
        let Some(s) = self.step.take() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        if s.reached {
            return out;
        }
        if let Some(d) = &s.steady {
            out.push(ThermalEvent::NotSteady {
                step: s.name.clone(),
                moved_c: d.last_moved(),
                limit_c: d.limit_c(),
            });
        }
        if let (Some(_), Some(start_c)) = (s.rules.cooled_within_c, self.start_c) {
            out.push(ThermalEvent::NotCooled {
                temp_c: s.last_c,
                start_c,
            });
        }
        out
    }

    /// A reading at `t_s`: what happened, and the reason to end the step now, if any.
    pub fn observe(&mut self, t_s: f64, r: &SmartReading) -> (Vec<ThermalEvent>, Option<EndedBy>) {
        let mut out = Vec::new();
        let temp = r.temperature_c;
        if let (None, Some(c)) = (self.start_c, temp) {
            self.start_c = Some(c);
            if self.say_start {
                out.push(ThermalEvent::Start { temp_c: c });
            }
        }
        if let (Some(c), Some(w)) = (temp, r.warning_temp_c) {
            if !self.warned && c >= w {
                self.warned = true;
                out.push(ThermalEvent::Warning {
                    temp_c: c,
                    threshold_c: w,
                });
            }
        }
        if let (Some(c), Some(w)) = (temp, r.critical_temp_c) {
            if !self.critical && c >= w {
                self.critical = true;
                out.push(ThermalEvent::Critical {
                    temp_c: c,
                    threshold_c: w,
                });
            }
        }
        let loaded = self.step.as_ref().is_some_and(|s| !s.idle);
        match (self.tracker.observe(r, loaded), self.throttle_since) {
            (Some(signal), None) => {
                self.throttle_since = Some(t_s);
                self.throttle_seen = t_s;
                out.push(ThermalEvent::ThrottleStarted {
                    temp_c: temp,
                    signal,
                });
            }
            (Some(_), Some(_)) => self.throttle_seen = t_s,
            (None, Some(since)) if t_s - self.throttle_seen >= THROTTLE_END_HOLD_S => {
                self.throttle_since = None;
                out.push(ThermalEvent::ThrottleEnded {
                    temp_c: temp,
                    after_s: self.throttle_seen - since,
                });
            }
            _ => {}
        }
        let mut end = None;
        let (start_c, since) = (self.start_c, self.throttle_since);
        if let Some(s) = self.step.as_mut().filter(|s| !s.reached) {
            let began = *s.began_s.get_or_insert(t_s);
            s.last_c = temp.or(s.last_c);
            if let (Some(d), Some(since)) = (s.rules.throttled_for, since) {
                if t_s - since >= d.as_secs_f64() {
                    end = Some(EndedBy::Throttled);
                }
            }
            if let (Some(det), Some(c)) = (s.steady.as_mut(), temp) {
                if let Some(moved) = det.push(t_s, f64::from(c)) {
                    out.push(ThermalEvent::Steady {
                        step: s.name.clone(),
                        moved_c: moved,
                        limit_c: det.limit_c(),
                        window_s: det.window_s(),
                    });
                    end = end.or(Some(EndedBy::TemperatureSteady));
                }
            }
            if let (Some(within), Some(c), Some(start)) = (s.rules.cooled_within_c, temp, start_c) {
                if s.idle && f64::from(c) <= f64::from(start) + within {
                    out.push(ThermalEvent::Cooled {
                        temp_c: c,
                        start_c: start,
                        within_c: within,
                        after_s: t_s - began,
                    });
                    end = end.or(Some(EndedBy::Cooled));
                }
            }
            s.reached = end.is_some();
        }
        (out, end)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::plan::TempSteadyRule;
    use crate::telemetry::reading::ThermalThrottle;
    use crate::thermal::ThrottleSignal;

    fn at(c: i32, tmt1_s: u32) -> SmartReading {
        SmartReading {
            temperature_c: Some(c),
            warning_temp_c: Some(70),
            critical_temp_c: Some(80),
            thermal_throttle: Some(ThermalThrottle {
                tmt1_transitions: u32::from(tmt1_s > 0),
                tmt1_seconds: tmt1_s,
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    /// A step that ends once the drive stayed throttled `secs`.
    fn throttled_for(secs: u64) -> ThermalEnd {
        let throttled_for = Some(Duration::from_secs(secs));
        ThermalEnd {
            throttled_for,
            ..Default::default()
        }
    }

    #[test]
    fn a_soak_sees_warning_throttle_and_ends_after_staying_throttled() {
        let mut w = ThermalWatch::new(true);
        w.begin_step("soak", throttled_for(6), false);
        let (ev, end) = w.observe(0.0, &at(40, 0));
        assert_eq!(ev, [ThermalEvent::Start { temp_c: 40 }]);
        assert_eq!(end, None);
        let (ev, _) = w.observe(2.0, &at(70, 0));
        assert_eq!(
            ev,
            [ThermalEvent::Warning {
                temp_c: 70,
                threshold_c: 70
            }]
        );
        let (ev, end) = w.observe(4.0, &at(72, 1));
        assert_eq!(
            ev,
            [ThermalEvent::ThrottleStarted {
                temp_c: Some(72),
                signal: ThrottleSignal::Hctm { level: 1 }
            }]
        );
        assert_eq!(end, None);
        assert_eq!(w.observe(8.0, &at(72, 5)), (vec![], None), "4 s of 6");
        assert_eq!(w.observe(10.0, &at(72, 7)).1, Some(EndedBy::Throttled));
        assert_eq!(w.end_step(), [], "it reached its end");
    }

    #[test]
    fn whole_second_counters_that_skip_a_reading_do_not_end_the_throttle() {
        let mut w = ThermalWatch::new(false);
        w.begin_step("soak", throttled_for(5), false);
        w.observe(0.0, &at(70, 0));
        // A reading a second: the seconds counter grows at most readings, not all.
        let counters = [1, 2, 2, 3, 4, 4];
        let mut ended = None;
        for (i, c) in counters.iter().enumerate() {
            let t = 1.0 + i as f64;
            let (ev, end) = w.observe(t, &at(72, *c));
            assert!(
                !ev.iter()
                    .any(|e| matches!(e, ThermalEvent::ThrottleEnded { .. })),
                "at {t}: {ev:?}"
            );
            ended = ended.or(end.map(|e| (t, e)));
        }
        assert_eq!(
            ended,
            Some((6.0, EndedBy::Throttled)),
            "5 s after the onset at 1 s"
        );
        // No growth for the hold time: then it ended, at the last reading that showed it.
        let mut w2 = ThermalWatch::new(false);
        w2.observe(0.0, &at(70, 0));
        w2.observe(1.0, &at(72, 1));
        assert_eq!(w2.observe(2.0, &at(72, 1)).0, []);
        assert_eq!(w2.observe(3.0, &at(72, 1)).0, []);
        assert_eq!(
            w2.observe(4.0, &at(71, 1)).0,
            [ThermalEvent::ThrottleEnded {
                temp_c: Some(71),
                after_s: 0.0
            }]
        );
    }

    #[test]
    fn a_cool_down_ends_within_its_tolerance_of_the_start_or_says_it_did_not() {
        let mut w = ThermalWatch::new(true);
        w.begin_step("load", ThermalEnd::default(), false);
        w.observe(0.0, &at(41, 0));
        w.observe(2.0, &at(60, 0));
        w.end_step();
        let cool = ThermalEnd {
            cooled_within_c: Some(1.0),
            ..Default::default()
        };
        w.begin_step("cool-down", cool, true);
        assert_eq!(w.observe(4.0, &at(55, 0)), (vec![], None));
        assert_eq!(w.observe(6.0, &at(43, 0)), (vec![], None));
        let (ev, end) = w.observe(10.0, &at(42, 0));
        assert_eq!(
            ev,
            [ThermalEvent::Cooled {
                temp_c: 42,
                start_c: 41,
                within_c: 1.0,
                after_s: 6.0
            }]
        );
        assert_eq!(end, Some(EndedBy::Cooled));

        w.begin_step("cool-down", cool, true);
        w.observe(12.0, &at(50, 0));
        assert_eq!(
            w.end_step(),
            [ThermalEvent::NotCooled {
                temp_c: Some(50),
                start_c: 41
            }]
        );
    }

    #[test]
    fn a_steady_temperature_ends_the_step_and_a_rising_one_says_how_far_it_moved() {
        let rule = ThermalEnd {
            steady: Some(TempSteadyRule {
                limit_c: 0.5,
                window: Duration::from_secs(10),
            }),
            ..Default::default()
        };
        let mut w = ThermalWatch::new(true);
        w.begin_step("soak", rule, false);
        for i in 0..=5 {
            let t = f64::from(i) * 2.0;
            let (_, end) = w.observe(t, &at(40 + i, 0));
            assert_eq!(end, None);
        }
        assert_eq!(
            w.end_step(),
            [ThermalEvent::NotSteady {
                step: "soak".into(),
                moved_c: Some(5.0),
                limit_c: 0.5
            }]
        );
        w.begin_step("soak", rule, false);
        let mut ended = None;
        for i in 6..=12 {
            let (_, end) = w.observe(f64::from(i) * 2.0, &at(45, 0));
            ended = ended.or(end.map(|e| (i, e)));
        }
        assert_eq!(ended, Some((11, EndedBy::TemperatureSteady)));
    }
}
