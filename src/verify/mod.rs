//! Data integrity verification: every 512-byte sector a verified run writes carries a
//! self-describing [`header`] (its byte address, the verify state's random id, the block's
//! write generation, a timestamp and a CRC32C over the sector); [`classify`] turns the
//! bytes read back, with what the generation map expects, into typed [`Finding`]s; the
//! [`power_cut`] judges what a block holds after a power cut; the
//! [`state`] module keeps the generation map and the journal of flush epochs on disk.
//! Pure except for `state` (files); I/O errors never become findings.

pub mod classify;
pub mod gen;
pub mod header;
pub mod map;
pub mod power_cut;
pub mod state;

/// When a verified run checks: on every read of its workload (`--verify`), or in a
/// read-back pass of the whole region after it (`--verify=readback`).
/// The one parser of the mode's name ([`VerifyMode::parse`]) serves the command line and
/// presets alike.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase", try_from = "String")]
pub enum VerifyMode {
    #[default]
    Reads,
    Readback,
}

impl VerifyMode {
    /// The mode named `s` (`reads`, `readback`).
    pub fn parse(s: &str) -> Result<VerifyMode, String> {
        match s {
            "reads" => Ok(VerifyMode::Reads),
            "readback" => Ok(VerifyMode::Readback),
            _ => Err(format!("`{s}` is not a verify mode (reads, readback)")),
        }
    }
}

impl TryFrom<String> for VerifyMode {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        VerifyMode::parse(&s)
    }
}

pub use classify::{classify_block, BlockCheck, Expect, Finding, FindingKind, Window};
pub use gen::Generation;
pub use header::{stamp_block, HeaderFields, Sector, SECTOR};
pub use state::{Retirement, VerifyError, VerifyState, VerifyTotals};
