//! Steady state on temperature: the least-squares line through the readings of the last
//! window (by their own times, not one per interval) moves less than a limit across it.

use std::collections::VecDeque;

/// The fewest readings a window is judged on.
const MIN_POINTS: usize = 3;

/// A live detector: readings are pushed as they arrive.
#[derive(Debug, Clone)]
pub struct TempSteady {
    limit_c: f64,
    window_s: f64,
    points: VecDeque<(f64, f64)>,
    /// How far the line moved across the last full window.
    last_moved: Option<f64>,
}

impl TempSteady {
    pub fn new(limit_c: f64, window_s: f64) -> Self {
        TempSteady {
            limit_c,
            window_s,
            points: VecDeque::new(),
            last_moved: None,
        }
    }

    /// How far the line moved across the last full window, if one was full.
    pub fn last_moved(&self) -> Option<f64> {
        self.last_moved
    }

    pub fn limit_c(&self) -> f64 {
        self.limit_c
    }

    pub fn window_s(&self) -> f64 {
        self.window_s
    }

    /// Adds a reading at `t_s`; `Some(moved)` once the window is full and the line moved
    /// less than the limit across it.
    pub fn push(&mut self, t_s: f64, c: f64) -> Option<f64> {
        if !t_s.is_finite() || !c.is_finite() {
            return None;
        }
        if self.points.back().is_some_and(|&(t, _)| t_s <= t) {
            return None;
        }
        self.points.push_back((t_s, c));
        // Keep one reading at or before the window's start, so the window is covered.
        while self.points.len() > 1 && self.points[1].0 <= t_s - self.window_s {
            self.points.pop_front();
        }
        let covered = self.points[0].0 <= t_s - self.window_s;
        if !covered || self.points.len() < MIN_POINTS {
            return None;
        }
        let moved = slope_per_s(&self.points)?.abs() * self.window_s;
        self.last_moved = Some(moved);
        (moved < self.limit_c).then_some(moved)
    }
}

/// The least-squares slope of `points` (t, value), per second.
pub(crate) fn slope_per_s(points: &VecDeque<(f64, f64)>) -> Option<f64> {
    let n = points.len() as f64;
    let tm = points.iter().map(|p| p.0).sum::<f64>() / n;
    let vm = points.iter().map(|p| p.1).sum::<f64>() / n;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for &(t, v) in points {
        sxy += (t - tm) * (v - vm);
        sxx += (t - tm) * (t - tm);
    }
    (sxx > 0.0).then(|| sxy / sxx)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rising_temperature_is_not_steady_and_a_plateau_is() {
        // 2 s readings; +0.1 °C/s for 10 minutes, then flat at the top.
        let mut d = TempSteady::new(0.5, 300.0);
        let mut t: f64 = 0.0;
        let mut first_steady = None;
        while t <= 1200.0 {
            let c = 40.0 + 0.1 * t.min(600.0);
            if let Some(moved) = d.push(t, c) {
                first_steady.get_or_insert((t, moved));
            }
            t += 2.0;
        }
        let (at, moved) = first_steady.expect("the plateau is steady");
        // Never during the rise (30 °C per window); within one window of the knee (a window
        // with only a few rising readings at its start may already be under the limit).
        assert!(at > 600.0 && at <= 900.0, "steady at {at}");
        assert!(moved < 0.5, "{moved}");
    }

    #[test]
    fn the_window_must_be_covered_and_the_limit_is_strict() {
        let mut d = TempSteady::new(1.0, 10.0);
        // Flat, but only 8 s of readings: not yet.
        for t in [0.0, 2.0, 4.0, 6.0, 8.0] {
            assert_eq!(d.push(t, 50.0), None, "{t}");
        }
        assert_eq!(d.push(10.0, 50.0), Some(0.0));
        // 0.11 °C/s moves 1.1 °C across 10 s: over the limit.
        let mut d = TempSteady::new(1.0, 10.0);
        for i in 0..=10 {
            let t = f64::from(i) * 2.0;
            assert_eq!(d.push(t, 50.0 + 0.11 * t), None, "{t}");
        }
        assert!((d.last_moved().unwrap() - 1.1).abs() < 1e-9);
        // Out-of-order and non-finite readings are ignored.
        assert_eq!(d.push(5.0, 50.0), None);
        assert_eq!(d.push(f64::NAN, 50.0), None);
    }
}
