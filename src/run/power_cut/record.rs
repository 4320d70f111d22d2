//! A power-cut run's record: each cycle as a power-loss test reads it, the totals and the
//! verdict; as text, JSON lines and a YAML file beside the cycles' sessions, saved again
//! after every cycle (a cut that takes the machine down keeps the cycles before it).

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use super::{CutAt, DriveIdentity};
use crate::run::RunError;
use crate::verify::power_cut::{CutFinding, CutTally};

/// One cycle, as a power-loss test reads it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CycleRecord {
    pub cycle: u32,
    /// When the cut command was started, RFC 3339.
    pub cut_at: String,
    /// Seconds from the workload's start to the cut command's start.
    pub cut_after_s: f64,
    /// Seconds the cut command took; `None` when it took the machine down with it.
    pub cut_took_s: Option<f64>,
    /// The last flush epoch completed before the cut (counted from the cycle's start).
    pub epoch: u64,
    /// Blocks with a write in flight at the cut (issued, not acknowledged); `None` when
    /// the cut took the machine down with the map in memory (`machine_down`).
    pub blocks_in_flight: Option<u64>,
    /// Seconds from the end of the cut (and restore) command to the drive open again as
    /// the same drive; `None` when the machine went down.
    pub ready_after_s: Option<f64>,
    /// The cut took this machine down; `drivescope verify` finished the cycle after the
    /// restart, judging every block against the last completed flush only (what was in
    /// flight or acknowledged after it is unknown: counted as neither).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub machine_down: bool,
    /// The cycle's workload session (a file name beside the record).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    #[serde(flatten)]
    pub tally: CutTally,
    /// The first findings ([`crate::verify::state::MAX_KEPT`] at most a cycle).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<CutFinding>,
}

/// The whole run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PowerCutRecord {
    pub target: PathBuf,
    pub cut_command: String,
    pub restore_command: Option<String>,
    pub cut_at: CutAt,
    pub plp: bool,
    /// The atomic write unit on power fail the check used, bytes (`None`: the logical
    /// block).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub atomic_unit: Option<u64>,
    /// The cycles asked for (`--cycles`).
    #[serde(default)]
    pub cycles_asked: u32,
    /// The verify state's folder (where a cut that takes the machine down is finished).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify_state: Option<PathBuf>,
    pub identity: Option<DriveIdentity>,
    pub cycles: Vec<CycleRecord>,
    pub totals: CutTally,
    /// Pass: no block lost after a flush, torn or damaged (with `--plp`, none not durable).
    pub verdict: Verdict,
    /// Why the loop stopped before its cycles were done.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Pass,
    Fail,
    /// Fewer cycles than asked (the loop stopped), none failing.
    Incomplete,
}

impl Verdict {
    /// As the verdict line and the report say it.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::Fail => "FAIL",
            Verdict::Incomplete => "INCOMPLETE",
        }
    }
}

impl PowerCutRecord {
    /// Totals and the verdict again, from the cycles.
    pub(super) fn sum(&mut self) {
        let asked = self.cycles_asked;
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

    /// The record as its file holds it.
    pub fn to_yaml(&self) -> String {
        let body = serde_yaml::to_string(self).unwrap_or_default();
        format!("{RECORD_HEAD}{body}")
    }

    /// Blocks in flight at the cuts whose count is known.
    pub fn blocks_in_flight(&self) -> u64 {
        self.cycles.iter().filter_map(|c| c.blocks_in_flight).sum()
    }
}

/// The power-cut record as a file: YAML, known as ours by its first line.
pub const RECORD: crate::session::Output = crate::session::Output {
    what: "power-cut record",
    ours: is_record,
};
const RECORD_HEAD: &str = "# drivescope power-cut record\n";

/// The file's first bytes are a power-cut record's.
pub fn is_record(head: &[u8]) -> bool {
    head.starts_with(RECORD_HEAD.as_bytes())
}

/// The largest record read: thousands of cycles with their findings.
const MAX_RECORD_BYTES: u64 = 64 * crate::user_file::MIB;

/// Why a power-cut record could not be read.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error(transparent)]
    Read(#[from] crate::user_file::InputError),
    #[error("{}: not a power-cut record (its first line is not `# drivescope power-cut record`)", .0.display())]
    NotARecord(PathBuf),
    #[error("{}:{line}:{column}: {message}", path.display())]
    Yaml {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
}

/// Reads the power-cut record at `path`.
pub fn load_record(path: &Path) -> Result<PowerCutRecord, RecordError> {
    let bytes = crate::user_file::read_input(path, MAX_RECORD_BYTES, "power-cut record")?;
    if !is_record(&bytes) {
        return Err(RecordError::NotARecord(path.to_path_buf()));
    }
    let text = String::from_utf8_lossy(&bytes);
    // A hostile nesting is turned down before the parser (its time grows with the square).
    let yaml = |(line, column), message| RecordError::Yaml {
        path: path.to_path_buf(),
        line,
        column,
        message,
    };
    let cap = crate::session::MAX_FLOW_DEPTH;
    if let Some(at) = crate::user_file::flow_depth_over(&text, cap) {
        return Err(yaml(at, format!("collections nested deeper than {cap}")));
    }
    serde_yaml::from_str(&text).map_err(|e| {
        // serde_yaml ends its message with the place, which the error puts first.
        let message = e.to_string();
        let message = message.split(" at line ").next().unwrap_or_default();
        yaml(crate::yaml_pos::of_error(&e), message.to_string())
    })
}

/// One line of text for a cycle.
pub fn cycle_line(c: &CycleRecord) -> String {
    let t = &c.tally;
    let in_flight = match c.blocks_in_flight {
        Some(n) => format!("{n} blocks in flight"),
        None => "blocks in flight unknown".into(),
    };
    let ready = match (c.machine_down, c.ready_after_s) {
        (true, _) => "the machine went down, finished by verify after the restart".into(),
        (false, Some(s)) => format!("ready after {s:.3}s"),
        (false, None) => "ready time unknown".into(),
    };
    format!(
        "power cut {}: at {:.3}s (epoch {}), {in_flight}, {ready}; {} blocks checked: {} lost after flush, {} torn, {} not durable{}, {} other findings",
        c.cycle,
        c.cut_after_s,
        c.epoch,
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

/// The record's file, made new and written again (whole) after every cycle, only while
/// its name still holds the file made.
pub struct RecordFile {
    file: crate::session::Written,
}

impl RecordFile {
    /// Saves the record in `folder` as a new `<date>-power-cut.yaml` (made exclusively:
    /// `-2`, `-3`… when a record of the same second is there).
    pub fn create(r: &PowerCutRecord, folder: &Path) -> Result<RecordFile, RunError> {
        let path =
            crate::session::paths::claim_session_file(folder, SystemTime::now(), "power-cut")?;
        let file = crate::session::write_atomic(&path, RECORD, r.to_yaml().as_bytes())?;
        Ok(RecordFile { file })
    }

    /// Saves it again.
    pub fn save(&mut self, r: &PowerCutRecord) -> Result<(), RunError> {
        let text = r.to_yaml();
        self.file.rewrite(|w| w.write_all(text.as_bytes()))?;
        Ok(())
    }

    pub fn path(&self) -> PathBuf {
        self.file.path()
    }
}

/// Saves the record at `path` again (a record of ours: `verify` finishing a cycle after a
/// restart).
pub fn resave_record(r: &PowerCutRecord, path: &Path) -> Result<(), RunError> {
    crate::session::write_atomic(path, RECORD, r.to_yaml().as_bytes())?;
    Ok(())
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
        r.verdict.word(),
        r.cycles.len(),
        t.lost_after_flush,
        t.torn,
        t.not_durable + t.not_durable_findings,
        t.corrupt + t.misdirected + t.unexpected,
        r.blocks_in_flight(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_nested_past_the_cap_is_refused_at_its_position() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.yaml");
        let text = format!("{RECORD_HEAD}target: {}\n", "[".repeat(200));
        std::fs::write(&p, text).unwrap();
        match load_record(&p) {
            Err(RecordError::Yaml { line, message, .. }) => {
                assert_eq!(line, 2);
                assert!(message.contains("nested deeper"), "{message}");
            }
            other => panic!("{other:?}"),
        }
        // Not a record at all: named as such, not parsed.
        std::fs::write(&p, "schema_version: 2\n").unwrap();
        assert!(matches!(load_record(&p), Err(RecordError::NotARecord(_))));
    }
}
