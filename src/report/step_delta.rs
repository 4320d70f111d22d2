//! Like with like: the steps of two sessions matched by drive, label and workload (the n-th
//! of a kind with the n-th), each figure beside its base with the change in percent, and
//! the baseline gate's verdict: which matched steps lost IOPS, or gained p99 latency, by
//! more than a bound.

use std::fmt;

use crate::session::StepResult;
use crate::ui::format::{bw, iops, lat, shown, us};

/// A step of the base session and the same step of the new one.
#[derive(Debug, Clone, Copy)]
pub struct Pair<'a> {
    pub base: &'a StepResult,
    pub new: &'a StepResult,
}

/// The steps of `new` matched with those of `base`, in `new`'s order: the same drive,
/// label and workload, the n-th such step of one with the n-th of the other; then a step
/// left over with one of the same drive and workload whose label differs (a plain run at
/// another rate is labelled with its rate). Steps without a match are left out.
pub fn matched<'a>(base: &'a [StepResult], new: &'a [StepResult]) -> Vec<Pair<'a>> {
    let mut used = vec![false; base.len()];
    let mut found: Vec<Option<usize>> = vec![None; new.len()];
    let same_step = |b: &StepResult, n: &StepResult| b.key() == n.key();
    let same_workload = |b: &StepResult, n: &StepResult| {
        (b.drive.as_deref(), &b.workload) == (n.drive.as_deref(), &n.workload)
    };
    for rule in [
        &same_step as &dyn Fn(&StepResult, &StepResult) -> bool,
        &same_workload,
    ] {
        for (j, n) in new.iter().enumerate() {
            if found[j].is_some() {
                continue;
            }
            let hit = (0..base.len()).find(|&i| !used[i] && rule(&base[i], n));
            if let Some(i) = hit {
                used[i] = true;
                found[j] = Some(i);
            }
        }
    }
    new.iter()
        .zip(found)
        .filter_map(|(n, i)| {
            Some(Pair {
                base: &base[i?],
                new: n,
            })
        })
        .collect()
}

/// The change from `base` to `new` in percent of `base`; none when `base` is zero.
pub fn delta_pct(base: f64, new: f64) -> Option<f64> {
    (base != 0.0 && base.is_finite() && new.is_finite()).then(|| (new - base) / base * 100.0)
}

/// What got worse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Figure {
    /// IOPS fell (reads and writes together).
    Iops,
    /// p99 latency rose (the worse direction's).
    P99,
}

/// A matched step that got worse by more than the bound.
#[derive(Debug, Clone, PartialEq)]
pub struct Regression {
    pub drive: Option<String>,
    pub step: u32,
    pub label: String,
    pub figure: Figure,
    pub base: f64,
    pub new: f64,
    /// The change in percent (negative for IOPS that fell).
    pub pct: f64,
}

impl fmt::Display for Regression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(d) = &self.drive {
            write!(f, "drive {}, ", shown(d))?;
        }
        write!(f, "step {} ({}): ", self.step, shown(&self.label))?;
        match self.figure {
            Figure::Iops => write!(
                f,
                "IOPS fell from {} to {} ({:+.1}%)",
                iops(self.base),
                iops(self.new),
                self.pct
            ),
            Figure::P99 => write!(
                f,
                "response p99 latency rose from {} to {} ({:+.1}%)",
                us(self.base),
                us(self.new),
                self.pct
            ),
        }
    }
}

/// The matched steps whose IOPS fell, or whose p99 latency rose, by more than
/// `max_pct` percent.
pub fn regressions(pairs: &[Pair<'_>], max_pct: f64) -> Vec<Regression> {
    let mut out = Vec::new();
    for p in pairs {
        let at = |figure, base, new, pct| Regression {
            drive: p.new.drive.clone(),
            step: p.new.step,
            label: p.new.label.clone(),
            figure,
            base,
            new,
            pct,
        };
        let (bi, ni) = (p.base.iops(), p.new.iops());
        if let Some(d) = delta_pct(bi, ni).filter(|d| -d > max_pct) {
            out.push(at(Figure::Iops, bi, ni, d));
        }
        if let (Some(b), Some(n)) = (p.base.p99_us(), p.new.p99_us()) {
            if let Some(d) = delta_pct(b, n).filter(|d| *d > max_pct) {
                out.push(at(Figure::P99, b, n, d));
            }
        }
    }
    out
}

/// The columns of the steps side by side: each figure as base, new and change.
pub const COLUMNS: [&str; 13] = [
    "step",
    "label",
    "workload",
    "IOPS",
    "new",
    "Δ",
    "MB/s",
    "new",
    "Δ",
    "response mean",
    "new",
    "response p99",
    "new",
];

fn pct(d: Option<f64>) -> String {
    d.map(|d| format!("{d:+.1}%")).unwrap_or_else(|| "-".into())
}

/// Latency with its change, e.g. `412 µs (+3.2%)`.
fn lat_with_delta(base: Option<f64>, new: Option<f64>) -> String {
    match (base, new) {
        (Some(b), Some(n)) => format!("{} ({})", us(n), pct(delta_pct(b, n))),
        (_, Some(n)) => us(n),
        _ => "-".into(),
    }
}

/// One row per matched step: drive (when any), step, label, workload, then IOPS, MB/s,
/// mean and p99 latency of the base and the new session with the change in percent.
pub fn rows(pairs: &[Pair<'_>]) -> Vec<Vec<String>> {
    pairs
        .iter()
        .map(|p| {
            let (b, n) = (p.base, p.new);
            let step = match &n.drive {
                Some(d) => format!("{} {}", shown(d), n.step),
                None => n.step.to_string(),
            };
            let (bm, nm) = (b.mean_us(), n.mean_us());
            vec![
                step,
                shown(&n.label),
                shown(&n.workload),
                iops(b.iops()),
                iops(n.iops()),
                pct(delta_pct(b.iops(), n.iops())),
                bw(b.mbps() * 1e6),
                bw(n.mbps() * 1e6),
                pct(delta_pct(b.mbps(), n.mbps())),
                lat(bm),
                lat_with_delta(bm, nm),
                lat(b.p99_us()),
                lat_with_delta(b.p99_us(), n.p99_us()),
            ]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::results::{DirResult, LatFigures};

    fn result(label: &str, iops: f64, p99: f64) -> StepResult {
        StepResult {
            step: 1,
            label: label.into(),
            workload: "randread 4KiB QD32×1".into(),
            read: DirResult {
                ios: 100,
                iops,
                mbps: iops * 4096.0 / 1e6,
                lat_us: Some(LatFigures {
                    mean: p99 / 2.0,
                    p50: p99 / 2.0,
                    p99,
                    p99_9: p99,
                    p99_99: p99,
                    p99_999: None,
                    max: p99,
                }),
            },
            measured_s: 1.0,
            ..Default::default()
        }
    }

    #[test]
    fn steps_match_by_label_and_workload_in_order() {
        let base = [
            result("a", 1.0, 1.0),
            result("b", 2.0, 1.0),
            result("a", 3.0, 1.0),
        ];
        let new = [
            result("a", 10.0, 1.0),
            result("c", 1.0, 1.0),
            result("a", 30.0, 1.0),
        ];
        let m = matched(&base, &new);
        let seen: Vec<_> = m.iter().map(|p| (p.base.iops(), p.new.iops())).collect();
        assert_eq!(
            seen,
            [(1.0, 10.0), (2.0, 1.0), (3.0, 30.0)],
            "c: b's workload"
        );
        let mut other = result("c", 1.0, 1.0);
        other.workload = "seqwrite 128KiB QD1×1".into();
        assert_eq!(
            matched(&base, &[other]).len(),
            0,
            "another workload: no match"
        );
    }

    #[test]
    fn the_gate_names_what_fell_or_rose_past_the_bound() {
        let base = [result("a", 1000.0, 100.0), result("b", 1000.0, 100.0)];
        let new = [result("a", 960.0, 104.0), result("b", 900.0, 120.0)];
        let m = matched(&base, &new);
        assert!(regressions(&m, 5.0).iter().all(|r| r.label == "b"));
        let r = regressions(&m, 5.0);
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!((r[0].figure, r[1].figure), (Figure::Iops, Figure::P99));
        assert!((r[0].pct + 10.0).abs() < 1e-9);
        assert!(
            r[0].to_string().contains("step 1 (b): IOPS fell"),
            "{}",
            r[0]
        );
        assert!(regressions(&m, 25.0).is_empty());
        assert!(regressions(&matched(&base, &base), 0.0).is_empty());
    }

    #[test]
    fn a_trim_steps_mean_is_its_trims() {
        let mut t = result("t", 100.0, 80.0);
        (t.trim, t.read) = (t.read, DirResult::default());
        let rows = rows(&matched(std::slice::from_ref(&t), std::slice::from_ref(&t)));
        assert_eq!(rows[0][9], us(40.0), "{:?}", rows[0]);
        assert_eq!(t.mean_us(), Some(40.0));
        let mut mixed = t.clone();
        mixed.read = result("r", 100.0, 20.0).read;
        assert_eq!(mixed.mean_us(), Some(25.0), "weighted by the I/Os");
    }

    #[test]
    fn deltas_in_percent_of_the_base() {
        assert_eq!(delta_pct(200.0, 150.0), Some(-25.0));
        assert_eq!(delta_pct(0.0, 1.0), None);
        let base = [result("a", 1000.0, 100.0)];
        let new = [result("a", 1500.0, 50.0)];
        let rows = rows(&matched(&base, &new));
        assert_eq!(rows[0].len(), COLUMNS.len());
        assert_eq!(rows[0][5], "+50.0%");
        assert!(rows[0][12].ends_with("(-50.0%)"), "{:?}", rows[0]);
    }
}
