//! A power-cut run's record: each cycle as a power-loss test reads it, the totals and the
//! verdict; as text, JSON lines and a YAML file beside the cycles' sessions.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::Serialize;

use super::{CutAt, DriveIdentity};
use crate::run::RunError;
use crate::verify::power_cut::{CutFinding, CutTally};

/// One cycle, as a power-loss test reads it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CycleRecord {
    pub cycle: u32,
    /// When the cut command was started, RFC 3339.
    pub cut_at: String,
    /// Seconds from the workload's start to the cut command's start.
    pub cut_after_s: f64,
    /// Seconds the cut command took.
    pub cut_took_s: f64,
    /// The last flush epoch completed before the cut (counted from the cycle's start).
    pub epoch: u64,
    /// Blocks with a write in flight at the cut (issued, not acknowledged).
    pub blocks_in_flight: u64,
    /// Seconds from the end of the cut (and restore) command to the drive open again as
    /// the same drive.
    pub ready_after_s: f64,
    #[serde(flatten)]
    pub tally: CutTally,
    /// The first findings ([`crate::verify::state::MAX_KEPT`] at most a cycle).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<CutFinding>,
}

/// The whole run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PowerCutRecord {
    pub target: PathBuf,
    pub cut_command: String,
    pub restore_command: Option<String>,
    pub cut_at: CutAt,
    pub plp: bool,
    pub identity: Option<DriveIdentity>,
    pub cycles: Vec<CycleRecord>,
    pub totals: CutTally,
    /// Pass: no block lost after a flush, torn or damaged (with `--plp`, none not durable).
    pub verdict: Verdict,
    /// Why the loop stopped before its cycles were done.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Pass,
    Fail,
    /// Fewer cycles than asked (the loop stopped), none failing.
    Incomplete,
}

impl PowerCutRecord {
    pub(super) fn sum(&mut self, asked: u32) {
        let mut t = CutTally::default();
        for c in &self.cycles {
            t.add_tally(&c.tally);
        }
        self.verdict = if !t.passes() {
            Verdict::Fail
        } else if self.cycles.len() < asked as usize || self.stopped.is_some() {
            Verdict::Incomplete
        } else {
            Verdict::Pass
        };
        self.totals = t;
    }
}

/// The power-cut record as a file: YAML, known as ours by its first line.
pub const RECORD: crate::session::Output = crate::session::Output {
    what: "power-cut record",
    ours: |b| b.starts_with(RECORD_HEAD.as_bytes()),
};
const RECORD_HEAD: &str = "# drivescope power-cut record\n";

impl PowerCutRecord {
    /// The record as its file holds it.
    pub fn to_yaml(&self) -> String {
        let body = serde_yaml::to_string(self).unwrap_or_default();
        format!("{RECORD_HEAD}{body}")
    }
}

/// One line of text for a cycle.
pub fn cycle_line(c: &CycleRecord) -> String {
    let t = &c.tally;
    format!(
        "power cut {}: at {:.3}s (epoch {}), {} blocks in flight, ready after {:.3}s; {} blocks checked: {} lost after flush, {} torn, {} not durable{}, {} other findings",
        c.cycle,
        c.cut_after_s,
        c.epoch,
        c.blocks_in_flight,
        c.ready_after_s,
        t.blocks_checked,
        t.lost_after_flush,
        t.torn,
        t.not_durable + t.not_durable_findings,
        if t.not_durable_findings > 0 { " (findings: --plp)" } else { "" },
        t.corrupt + t.misdirected + t.unexpected,
    )
}

/// A cycle as one JSON line (`"type": "power_cut_cycle"`).
pub fn cycle_json(c: &CycleRecord) -> String {
    typed_json("power_cut_cycle", c)
}

/// The whole run as one JSON line (`"type": "power_cut"`).
pub fn record_json(r: &PowerCutRecord) -> String {
    typed_json("power_cut", r)
}

fn typed_json(t: &str, v: &impl Serialize) -> String {
    let mut v = serde_json::to_value(v).unwrap_or_default();
    if let Some(o) = v.as_object_mut() {
        o.insert("type".into(), t.into());
    }
    v.to_string()
}

/// Saves the record in `folder` as `<date>-power-cut.yaml`; its path.
pub fn save_record(r: &PowerCutRecord, folder: &Path) -> Result<PathBuf, RunError> {
    let name = crate::session::paths::dated_file_name(SystemTime::now(), "power-cut");
    let path = folder.join(name);
    crate::session::ensure_parent(&path)?;
    crate::session::write_atomic(&path, RECORD, r.to_yaml().as_bytes())?;
    Ok(path)
}

/// Where the record was saved, as a note.
pub fn saved_note(path: &Path) -> String {
    format!("note: power-cut record saved to {}", path.display())
}

/// The verdict line.
pub fn verdict_line(r: &PowerCutRecord) -> String {
    let t = &r.totals;
    format!(
        "power-loss test {}: {} cycles, {} lost after flush, {} torn, {} not durable, {} other findings, {} blocks in flight at the cuts",
        match r.verdict {
            Verdict::Pass => "PASS",
            Verdict::Fail => "FAIL",
            Verdict::Incomplete => "INCOMPLETE",
        },
        r.cycles.len(),
        t.lost_after_flush,
        t.torn,
        t.not_durable + t.not_durable_findings,
        t.corrupt + t.misdirected + t.unexpected,
        r.cycles.iter().map(|c| c.blocks_in_flight).sum::<u64>(),
    )
}
