//! A soak's figures, from what a session (or the dashboard) holds: the temperatures, the
//! intervals and the thermal events. One function serves the report and the live view.

use super::event::{ThermalEvent, ThrottleSignal};

/// One interval of the run, for the soak's throughput figures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Load {
    /// End of the interval, seconds since the run started.
    pub t: f64,
    /// Its length, seconds.
    pub dt: f64,
    pub iops: f64,
    pub mbps: f64,
    /// Measured I/O (not a ramp, not an idle step).
    pub loaded: bool,
}

/// Throughput over a stretch of the run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Throughput {
    pub iops: f64,
    pub mbps: f64,
    /// Seconds of intervals it is the mean of.
    pub secs: f64,
}

/// What a soak found.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SoakSummary {
    pub start_c: Option<i32>,
    /// The hottest reading: (time, °C).
    pub peak: Option<(f64, f64)>,
    /// When I/O began (the first loaded interval's start).
    pub load_start_s: Option<f64>,
    /// Seconds from the start of I/O to the warning threshold, and the temperature then.
    pub to_warning: Option<(f64, i32)>,
    /// Seconds from the start of I/O to the first throttle, the temperature then, and what
    /// said so.
    pub onset: Option<(f64, Option<i32>, ThrottleSignal)>,
    /// Before the throttle (the whole load when it never throttled).
    pub before: Option<Throughput>,
    /// While throttled (from the onset to its end or the end of the load).
    pub throttled: Option<Throughput>,
    /// Seconds of idle it took to come back to the starting temperature.
    pub cooled_s: Option<f64>,
    /// The idle phase ended before the drive was back.
    pub not_cooled: bool,
}

impl SoakSummary {
    /// Throughput while throttled over before it: the cliff (IOPS, MB/s).
    pub fn cliff(&self) -> Option<(f64, f64)> {
        let (b, t) = (self.before?, self.throttled?);
        let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { f64::NAN };
        Some((ratio(t.iops, b.iops), ratio(t.mbps, b.mbps)))
    }

    /// Anything to show: a temperature or a thermal event was seen.
    pub fn is_empty(&self) -> bool {
        self.start_c.is_none() && self.peak.is_none() && self.onset.is_none()
    }

    /// The soak's figures from `temps` (time, °C), `loads` and `events` (time, event).
    pub fn build(temps: &[(f64, f64)], loads: &[Load], events: &[(f64, &ThermalEvent)]) -> Self {
        let mut s = SoakSummary {
            peak: temps
                .iter()
                .copied()
                .filter(|(t, c)| t.is_finite() && c.is_finite())
                .fold(None, |best: Option<(f64, f64)>, p| match best {
                    Some(b) if b.1 >= p.1 => Some(b),
                    _ => Some(p),
                }),
            load_start_s: loads.iter().find(|l| l.loaded).map(|l| l.t - l.dt),
            ..Default::default()
        };
        let from_load = |t: f64| t - s.load_start_s.unwrap_or(0.0);
        let mut onset_t = None;
        let mut throttle_end = None;
        for (t, e) in events {
            match e {
                ThermalEvent::Start { temp_c } => {
                    s.start_c.get_or_insert(*temp_c);
                }
                ThermalEvent::Warning { temp_c, .. } if s.to_warning.is_none() => {
                    s.to_warning = Some((from_load(*t), *temp_c));
                }
                ThermalEvent::ThrottleStarted { temp_c, signal } if onset_t.is_none() => {
                    onset_t = Some(*t);
                    s.onset = Some((from_load(*t), *temp_c, *signal));
                }
                ThermalEvent::ThrottleEnded { .. } if onset_t.is_some() => {
                    throttle_end.get_or_insert(*t);
                }
                ThermalEvent::Cooled { after_s, .. } => s.cooled_s = Some(*after_s),
                ThermalEvent::NotCooled { .. } => s.not_cooled = true,
                _ => {}
            }
        }
        let mean = |keep: &dyn Fn(&Load) -> bool| {
            let (mut n, mut io, mut mb) = (0.0, 0.0, 0.0);
            for l in loads.iter().filter(|l| l.loaded && l.dt > 0.0 && keep(l)) {
                n += l.dt;
                io += l.iops * l.dt;
                mb += l.mbps * l.dt;
            }
            (n > 0.0).then(|| Throughput {
                iops: io / n,
                mbps: mb / n,
                secs: n,
            })
        };
        match onset_t {
            None => s.before = mean(&|_| true),
            Some(on) => {
                s.before = mean(&|l| l.t <= on);
                let end = throttle_end.unwrap_or(f64::INFINITY);
                s.throttled = mean(&|l| l.t - l.dt >= on && l.t <= end);
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cliff_is_the_throttled_mean_over_the_mean_before() {
        // Load from t=10: 100k IOPS until 40 s, throttled at 40 s, 25k IOPS after, then idle.
        let mut loads = vec![Load {
            t: 10.0,
            dt: 1.0,
            iops: 0.0,
            mbps: 0.0,
            loaded: false,
        }];
        for i in 11..=80 {
            let t = f64::from(i);
            let iops = if t <= 40.0 { 100_000.0 } else { 25_000.0 };
            loads.push(Load {
                t,
                dt: 1.0,
                iops,
                mbps: iops * 4096.0 / 1e6,
                loaded: true,
            });
        }
        let signal = ThrottleSignal::Hctm { level: 1 };
        let ev = [
            ThermalEvent::Start { temp_c: 38 },
            ThermalEvent::Warning {
                temp_c: 70,
                threshold_c: 70,
            },
            ThermalEvent::ThrottleStarted {
                temp_c: Some(73),
                signal,
            },
            ThermalEvent::Cooled {
                temp_c: 39,
                start_c: 38,
                within_c: 1.0,
                after_s: 95.0,
            },
        ];
        let events = [
            (9.0, &ev[0]),
            (30.0, &ev[1]),
            (40.0, &ev[2]),
            (180.0, &ev[3]),
        ];
        let temps = [(9.0, 38.0), (40.0, 73.0), (60.0, 75.0), (180.0, 39.0)];
        let s = SoakSummary::build(&temps, &loads, &events);
        assert_eq!(s.start_c, Some(38));
        assert_eq!(s.peak, Some((60.0, 75.0)));
        assert_eq!(s.load_start_s, Some(10.0));
        assert_eq!(s.to_warning, Some((20.0, 70)));
        assert_eq!(s.onset, Some((30.0, Some(73), signal)));
        let b = s.before.unwrap();
        assert_eq!((b.iops, b.secs), (100_000.0, 30.0));
        let t = s.throttled.unwrap();
        assert_eq!((t.iops, t.secs), (25_000.0, 40.0));
        let (ci, cm) = s.cliff().unwrap();
        assert!((ci - 0.25).abs() < 1e-12 && (cm - 0.25).abs() < 1e-12);
        assert_eq!(s.cooled_s, Some(95.0));
    }

    #[test]
    fn no_throttle_means_no_cliff_and_the_whole_load_is_before() {
        let loads: Vec<Load> = (1..=10)
            .map(|i| Load {
                t: f64::from(i),
                dt: 1.0,
                iops: f64::from(i) * 10.0,
                mbps: 1.0,
                loaded: true,
            })
            .collect();
        let s = SoakSummary::build(&[], &loads, &[]);
        assert_eq!(s.before.unwrap().iops, 55.0);
        assert_eq!(s.throttled, None);
        assert_eq!(s.cliff(), None);
        assert!(s.is_empty(), "no temperature, no events");
    }
}
