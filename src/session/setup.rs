//! What the session's readers take from its preset and plan, as types: [`PresetInfo`] and
//! [`PlanInfo`], read from the documents the session keeps (see `legacy`).

use serde::Deserialize;

use super::legacy::lenient;
use crate::workload::Workload;

/// The resolved preset as a session's readers know it: its id, name and text, and its
/// phases' names and steady-state windows. Each key may be missing, or of a shape this
/// release does not read: it is then none, and the others still read.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct PresetInfo {
    #[serde(deserialize_with = "lenient")]
    pub id: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub name: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub description: Option<String>,
    /// Where the preset came from, when the session says.
    #[serde(deserialize_with = "lenient")]
    pub source: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub phases: Option<Vec<PhaseInfo>>,
}

/// A phase of a preset or plan: its name and its SNIA rounds.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct PhaseInfo {
    #[serde(deserialize_with = "lenient")]
    pub name: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub rounds: Option<RoundsInfo>,
}

/// A phase's rounds: how many of the last ones judge steady state.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct RoundsInfo {
    #[serde(deserialize_with = "lenient")]
    pub window: Option<u64>,
}

/// The plan as a session's readers know it: its preset, time scale, phases' names, and
/// each step's workload and length (a plain run's plan has them).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct PlanInfo {
    #[serde(deserialize_with = "lenient")]
    pub preset_id: Option<String>,
    /// The factor its durations were scaled by (none: unscaled, or recorded before the
    /// scale was).
    #[serde(deserialize_with = "lenient")]
    pub time_scale: Option<f64>,
    #[serde(deserialize_with = "lenient")]
    pub phases: Option<Vec<PhaseInfo>>,
    #[serde(deserialize_with = "lenient")]
    pub steps: Option<Vec<PlanStepInfo>>,
}

/// A planned step: its workload and, for a plain run's one step, its length.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct PlanStepInfo {
    #[serde(deserialize_with = "lenient")]
    pub workload: Option<Workload>,
    #[serde(deserialize_with = "lenient")]
    pub duration_s: Option<f64>,
}

/// Phase `i` (from 0) of a list that may be missing.
fn nth(phases: &Option<Vec<PhaseInfo>>, i: u64) -> Option<&PhaseInfo> {
    phases.as_ref()?.get(usize::try_from(i).ok()?)
}

impl PresetInfo {
    /// Its phase `i` (from 0), when it has one.
    pub fn phase(&self, i: u64) -> Option<&PhaseInfo> {
        nth(&self.phases, i)
    }
}

impl PlanInfo {
    /// Its phase `i` (from 0), when it has one.
    pub fn phase(&self, i: u64) -> Option<&PhaseInfo> {
        nth(&self.phases, i)
    }

    /// Its first step, when it has one.
    pub fn first_step(&self) -> Option<&PlanStepInfo> {
        self.steps.as_ref()?.first()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_presets_id_names_and_window_read_and_an_odd_key_loses_only_itself() {
        let p: PresetInfo = serde_yaml::from_str(
            "id: snia-hir\nname: HIR\ndescription: |\n  text\nphases:\n- name: pre\n  rounds: {window: 4, max: 25}\n  workload: {rw: randwrite}\n- name: [odd]\n",
        )
        .unwrap();
        assert_eq!(p.id.as_deref(), Some("snia-hir"));
        assert_eq!(p.description.as_deref(), Some("text\n"));
        let first = p.phase(0).unwrap();
        assert_eq!(first.name.as_deref(), Some("pre"));
        assert_eq!(first.rounds.as_ref().and_then(|r| r.window), Some(4));
        assert_eq!(p.phase(1).map(|p| p.name.clone()), Some(None));
        assert!(p.phase(2).is_none());
    }

    #[test]
    fn a_plain_runs_plan_gives_its_steps_workload_and_length() {
        let p: PlanInfo = serde_yaml::from_str(
            "steps:\n- label: randread\n  workload: {rw: randread, rwmixread: 100, bs: {split: [[4096, 100]]}, iodepth: 8, jobs: 1, region: {offset: 0, len: 67108864}, rate_iops: null, seed: 1, direct: true}\n  ramp_s: 1.0\n  duration_s: 10.0\n  interval_s: 1.0\n",
        )
        .unwrap();
        let step = p.first_step().unwrap();
        assert_eq!(step.duration_s, Some(10.0));
        assert_eq!(step.workload.as_ref().map(|w| w.iodepth), Some(8));
        let scaled: PlanInfo = serde_yaml::from_str("preset_id: x\ntime_scale: 0.02\n").unwrap();
        assert_eq!(scaled.time_scale, Some(0.02));
        assert_eq!(scaled.preset_id.as_deref(), Some("x"));
        assert!(scaled.first_step().is_none());
    }
}
