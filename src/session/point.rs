//! A recorded step's place in its preset's plan: [`StepPoint`], saved as a step's `point`.

use serde::{Deserialize, Serialize};

use crate::workload::RunOf;

/// Where a preset's step sits in its plan: its phase, round, sweep point, rate and run, and
/// whether it prepares the drive. A step of a plain run or an fio job file has none.
///
/// Written with the keys (and in the order) sessions have always had: a preset's step has
/// `closed_loop`, `phase`, `round`, `run`, `sweep_point` and `target_iops` (each `null`
/// when it has none), and `preparation` and `prewrite` only when true. Every key may be
/// missing when read; a key of no field is ignored.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct StepPoint {
    /// It had a target but ran closed-loop (a sweep point at or above 100%).
    pub closed_loop: bool,
    /// The preset's phase (from 0) it comes from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phase: Option<u64>,
    /// It is a step of a phase that prepares the drive (`preparation: true`, SNIA's WIPC).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub preparation: bool,
    /// It is the write that opens its round (`rounds.prewrite`), none of its combinations.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub prewrite: bool,
    /// Its round (from 1) of a phase run in SNIA rounds.
    pub round: Option<u32>,
    /// Which run it is of a step that runs several times (`runs`).
    pub run: Option<RunOf>,
    /// The sweep percentage it ran at; none for the probe and other steps.
    pub sweep_point: Option<f64>,
    /// The rate it was given, I/Os per second; none for a closed-loop step.
    pub target_iops: Option<f64>,
}

impl StepPoint {
    /// The step prepared the drive for the test (a phase of `preparation: true` or a
    /// round's pre-write).
    pub fn prepares(&self) -> bool {
        self.preparation || self.prewrite
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::RunPick;

    /// A point written and read back is the same point, and written again the same text.
    fn round_trip(p: &StepPoint) -> String {
        let text = serde_yaml::to_string(p).unwrap();
        let back: StepPoint = serde_yaml::from_str(&text).unwrap();
        assert_eq!(&back, p, "{text}");
        assert_eq!(serde_yaml::to_string(&back).unwrap(), text);
        text
    }

    fn preset(phase: u64) -> StepPoint {
        StepPoint {
            phase: Some(phase),
            ..StepPoint::default()
        }
    }

    #[test]
    fn each_kind_of_point_round_trips_with_the_keys_sessions_have() {
        // A sweep's probe.
        assert_eq!(
            round_trip(&preset(0)),
            "closed_loop: false\nphase: 0\nround: null\nrun: null\nsweep_point: null\ntarget_iops: null\n"
        );
        // A paced sweep point, and one at or above 100% that ran closed-loop.
        let paced = StepPoint {
            sweep_point: Some(50.0),
            target_iops: Some(12345.0),
            ..preset(0)
        };
        assert!(round_trip(&paced).contains("sweep_point: 50.0\ntarget_iops: 12345.0\n"));
        let closed = StepPoint {
            closed_loop: true,
            sweep_point: Some(110.0),
            target_iops: Some(27159.0),
            ..preset(0)
        };
        assert!(round_trip(&closed).starts_with("closed_loop: true\n"));
        // A round's combination, its pre-write, and a step of a preparation phase.
        let combo = StepPoint {
            round: Some(3),
            ..preset(1)
        };
        assert!(round_trip(&combo).contains("\nround: 3\n"));
        let prewrite = StepPoint {
            prewrite: true,
            ..combo
        };
        assert_eq!(
            round_trip(&prewrite),
            "closed_loop: false\nphase: 1\nprewrite: true\nround: 3\nrun: null\nsweep_point: null\ntarget_iops: null\n"
        );
        assert!(prewrite.prepares() && !combo.prepares());
        let wipc = StepPoint {
            preparation: true,
            ..preset(0)
        };
        assert!(round_trip(&wipc).contains("phase: 0\npreparation: true\n"));
        assert!(wipc.prepares());
        // A run of a repeated step, picked or standing alone.
        for pick in [None, Some(RunPick::Best)] {
            let run = StepPoint {
                run: Some(RunOf { n: 2, of: 3, pick }),
                ..preset(2)
            };
            assert!(round_trip(&run).contains("\nrun:\n  n: 2\n  of: 3\n"));
        }
    }

    #[test]
    fn an_old_steps_point_reads_with_its_keys_and_without_the_missing_ones() {
        // As drivescope wrote it before the point had a type (serde_json's object through
        // serde_yaml), and a hand-written one of some keys and one of no field.
        let old = "closed_loop: false\nphase: 3\nprewrite: true\nround: 2\nrun: null\nsweep_point: null\ntarget_iops: null\n";
        let p: StepPoint = serde_yaml::from_str(old).unwrap();
        assert_eq!(
            p,
            StepPoint {
                phase: Some(3),
                round: Some(2),
                prewrite: true,
                ..StepPoint::default()
            }
        );
        let some: StepPoint = serde_yaml::from_str(
            "{rate_percent: 50, sweep_point: 50, run: {n: 1, of: 3, pick: best}}",
        )
        .unwrap();
        assert_eq!(some.sweep_point, Some(50.0));
        assert_eq!(some.phase, None);
        assert_eq!(
            some.run,
            Some(RunOf {
                n: 1,
                of: 3,
                pick: Some(RunPick::Best)
            })
        );
    }
}
