//! A PTS method's own live figure, from its finished steps: the recovery over time of a
//! host idle or cross-stimulus recovery run (HIR, XSR), or the demand-intensity curve of
//! DIRTH. The runtime says which view a plan has ([`MethodKind`]) and sends one
//! [`MethodPoint`] per finished step; the panel draws what [`MethodState`] derives here.

use crate::plan::operating::{keep_latest, Shaped};

/// Which figure a plan's method has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MethodKind {
    /// Phases of runs (bursts, access groups): each run's rate over time, per phase,
    /// against a baseline. `by_bytes`: the runs differ in block size, so the rate is
    /// bytes per second (XSR's throughput), else IOPS (HIR's).
    Recovery { by_bytes: bool },
    /// Rounds of a threads x queue depth matrix: latency against IOPS per combination.
    DemandIntensity,
}

/// What a finished step was in its plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepRole {
    /// A step of SNIA rounds; `tracked` is the one the steady-state rule follows.
    Round { round: u32, tracked: bool },
    /// One run of a phase of runs (a HIR burst, an XSR test).
    Run,
    /// Any other step (continuous I/O such as HIR's return to baseline).
    Other,
}

/// One finished step, as the method's figure needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct MethodPoint {
    pub kind: MethodKind,
    /// The SNIA rounds' steady-state window (values), for the baseline.
    pub window: usize,
    pub phase: String,
    pub role: StepRole,
    pub jobs: u32,
    pub iodepth: u32,
    /// When the step ended, seconds since the run started.
    pub t_s: f64,
    pub iops: f64,
    pub bw_bytes: f64,
    /// Service latency, µs.
    pub mean_us: f64,
    pub p99_us: f64,
    /// The five nines, when the step's histogram gives them (µs).
    pub p99_999_us: Option<f64>,
}

impl MethodPoint {
    /// The rate the recovery view plots: bytes per second or IOPS.
    pub fn rate(&self) -> f64 {
        match self.kind {
            MethodKind::Recovery { by_bytes: true } => self.bw_bytes,
            _ => self.iops,
        }
    }
}

/// Where a recovery view's baseline comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BaselineFrom {
    /// The mean of the tracked value over the last steady-state window of rounds.
    SteadyWindow,
    /// No rounds: the mean of the first phase of runs (XSR's first access group).
    FirstGroup,
}

/// One series of the recovery view: a phase's points (run clock s, rate).
pub type Series = (String, Vec<(f64, f64)>);

/// The demand-intensity curve's point of one threads x queue depth combination: its
/// latest round's figures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Combination {
    pub jobs: u32,
    pub iodepth: u32,
    pub round: u32,
    pub iops: f64,
    pub mean_us: f64,
    pub p99_us: f64,
}

/// A run's method points so far.
#[derive(Debug, Clone, PartialEq)]
pub struct MethodState {
    pub kind: MethodKind,
    pub points: Vec<MethodPoint>,
}

/// The most points kept (a HIR run has 5 x 360 bursts plus its rounds).
const MAX_POINTS: usize = 8192;

impl MethodState {
    pub fn push(&mut self, p: MethodPoint) {
        if self.points.len() < MAX_POINTS {
            self.points.push(p);
        }
    }

    /// The recovery view's series: one per phase of runs or rounds in order of first
    /// appearance; the other steps together in `other` (named by the caller).
    pub fn recovery_series(&self, other: &str) -> Vec<Series> {
        let mut out: Vec<Series> = Vec::new();
        for p in &self.points {
            let name = match p.role {
                StepRole::Round { tracked: false, .. } => continue,
                StepRole::Other => other,
                _ => p.phase.as_str(),
            };
            let xy = (p.t_s, p.rate());
            match out.iter_mut().find(|(n, _)| n == name) {
                Some((_, v)) => v.push(xy),
                None => out.push((name.to_string(), vec![xy])),
            }
        }
        out
    }

    /// The baseline and where it came from: the tracked rounds' last window when there
    /// are rounds, else the first phase of runs' mean; `None` before either has a point.
    pub fn baseline(&self) -> Option<(f64, BaselineFrom)> {
        let tracked: Vec<&MethodPoint> = self
            .points
            .iter()
            .filter(|p| matches!(p.role, StepRole::Round { tracked: true, .. }))
            .collect();
        if let Some(last) = tracked.last() {
            let n = last.window.max(1).min(tracked.len());
            let w = &tracked[tracked.len() - n..];
            let mean = w.iter().map(|p| p.rate()).sum::<f64>() / n as f64;
            return Some((mean, BaselineFrom::SteadyWindow));
        }
        let first = self.points.iter().find(|p| p.role == StepRole::Run)?;
        let group: Vec<f64> = self
            .points
            .iter()
            .filter(|p| p.role == StepRole::Run && p.phase == first.phase)
            .map(MethodPoint::rate)
            .collect();
        let mean = group.iter().sum::<f64>() / group.len() as f64;
        Some((mean, BaselineFrom::FirstGroup))
    }

    /// The latest `n` steps that are neither rounds nor runs (DIRTH's operating points'
    /// pre-writes and histograms), oldest first.
    pub fn others(&self, n: usize) -> Vec<&MethodPoint> {
        let all: Vec<&MethodPoint> = self
            .points
            .iter()
            .filter(|p| p.role == StepRole::Other)
            .collect();
        all[all.len().saturating_sub(n)..].to_vec()
    }

    /// The demand-intensity curve: each combination of the matrix rounds' phase (the
    /// first phase of rounds with more than one combination), its latest round, in the
    /// order first run (high to low outstanding I/O).
    pub fn combinations(&self) -> Vec<Combination> {
        let rounds = |p: &&MethodPoint| matches!(p.role, StepRole::Round { .. });
        let phase = self.points.iter().filter(rounds).find(|p| {
            self.points
                .iter()
                .filter(rounds)
                .any(|q| q.phase == p.phase && (q.jobs, q.iodepth) != (p.jobs, p.iodepth))
        });
        let Some(phase) = phase.map(|p| p.phase.as_str()) else {
            return Vec::new();
        };
        let mut out: Vec<Combination> = Vec::new();
        for p in self
            .points
            .iter()
            .filter(rounds)
            .filter(|p| p.phase == phase)
        {
            let StepRole::Round { round, .. } = p.role else {
                continue;
            };
            let c = Combination {
                jobs: p.jobs,
                iodepth: p.iodepth,
                round,
                iops: p.iops,
                mean_us: p.mean_us,
                p99_us: p.p99_us,
            };
            keep_latest(&mut out, c);
        }
        out
    }
}

impl Shaped for Combination {
    fn shape(&self) -> (u32, u32) {
        (self.jobs, self.iodepth)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pt(kind: MethodKind, phase: &str, role: StepRole, t_s: f64, iops: f64) -> MethodPoint {
        MethodPoint {
            kind,
            window: 2,
            phase: phase.into(),
            role,
            jobs: 1,
            iodepth: 1,
            t_s,
            iops,
            bw_bytes: iops * 4096.0,
            mean_us: 100.0,
            p99_us: 200.0,
            p99_999_us: None,
        }
    }

    #[test]
    fn baseline_is_the_last_window_of_tracked_rounds_else_the_first_group() {
        let k = MethodKind::Recovery { by_bytes: false };
        let r = |round, tracked| StepRole::Round { round, tracked };
        let mut s = MethodState {
            kind: k,
            points: vec![
                pt(k, "pre", r(1, true), 1.0, 900.0),
                pt(k, "pre", r(1, false), 1.5, 5.0),
                pt(k, "pre", r(2, true), 2.0, 100.0),
                pt(k, "pre", r(3, true), 3.0, 300.0),
                pt(k, "wait-5s", StepRole::Run, 4.0, 50.0),
                pt(k, "baseline-after-5s", StepRole::Other, 5.0, 60.0),
            ],
        };
        assert_eq!(s.baseline(), Some((200.0, BaselineFrom::SteadyWindow)));
        let series = s.recovery_series("continuous");
        let names: Vec<&str> = series.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["pre", "wait-5s", "continuous"]);
        assert_eq!(series[0].1, [(1.0, 900.0), (2.0, 100.0), (3.0, 300.0)]);

        s.points = vec![
            pt(k, "g1", StepRole::Run, 1.0, 10.0),
            pt(k, "g1", StepRole::Run, 2.0, 30.0),
            pt(k, "g2", StepRole::Run, 3.0, 1.0),
        ];
        assert_eq!(s.baseline(), Some((20.0, BaselineFrom::FirstGroup)));
        let by = MethodKind::Recovery { by_bytes: true };
        assert_eq!(pt(by, "g", StepRole::Run, 0.0, 2.0).rate(), 8192.0);
    }

    #[test]
    fn combinations_keep_each_ones_latest_round_of_the_matrix_phase() {
        let k = MethodKind::DemandIntensity;
        let mk = |phase: &str, round, jobs, iodepth, iops| MethodPoint {
            jobs,
            iodepth,
            ..pt(
                k,
                phase,
                StepRole::Round {
                    round,
                    tracked: false,
                },
                0.0,
                iops,
            )
        };
        let s = MethodState {
            kind: k,
            points: vec![
                mk("precondition", 1, 32, 32, 1.0),
                mk("di", 1, 32, 32, 100.0),
                mk("di", 1, 1, 1, 10.0),
                mk("di", 2, 32, 32, 120.0),
                pt(k, "min-point", StepRole::Other, 0.0, 5.0),
            ],
        };
        let c = s.combinations();
        assert_eq!(c.len(), 2);
        assert_eq!(
            (c[0].jobs, c[0].iodepth, c[0].round, c[0].iops),
            (32, 32, 2, 120.0)
        );
        assert_eq!(
            (c[1].jobs, c[1].iodepth, c[1].round, c[1].iops),
            (1, 1, 1, 10.0)
        );
    }
}
