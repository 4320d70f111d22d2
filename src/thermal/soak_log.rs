//! A soak's figures gathered as its run goes: the temperatures, the intervals and the
//! typed thermal events, each as the session records it, so that the run's soak summary is
//! made in memory (never read back from the session's YAML).

use super::event::ThermalEvent;
use super::summary::{Load, SoakSummary};

/// What one drive's soak has seen so far.
#[derive(Debug, Clone, Default)]
pub struct SoakLog {
    temps: Vec<(f64, f64)>,
    loads: Vec<Load>,
    events: Vec<(f64, ThermalEvent)>,
}

impl SoakLog {
    /// A temperature reading (°C) at `t`, seconds since the session started.
    pub fn temperature(&mut self, t: f64, temp_c: f64) {
        self.temps.push((t, temp_c));
    }

    /// One interval of the run.
    pub fn load(&mut self, load: Load) {
        self.loads.push(load);
    }

    /// A thermal event at `t`.
    pub fn event(&mut self, t: f64, event: ThermalEvent) {
        self.events.push((t, event));
    }

    /// The soak's figures, when a thermal event was seen.
    pub fn summary(&self) -> Option<SoakSummary> {
        if self.events.is_empty() {
            return None;
        }
        let refs: Vec<(f64, &ThermalEvent)> = self.events.iter().map(|(t, e)| (*t, e)).collect();
        Some(SoakSummary::build(&self.temps, &self.loads, &refs))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_thermal_event_means_no_summary() {
        let mut log = SoakLog::default();
        log.temperature(1.0, 40.0);
        assert_eq!(log.summary(), None);
        log.event(2.0, ThermalEvent::Start { temp_c: 40 });
        let s = log.summary().expect("a summary");
        assert_eq!((s.start_c, s.peak), (Some(40), Some((1.0, 40.0))));
    }
}
