//! smartctl's JSON: the real outputs (`real`), hand-made ones derived from them for the
//! cases the real ones lack (`derived`: health, SAS, RAID, ATA temperature), input that
//! is not what it claims (`input`), a smartctl that never answers (`hung`), and the text
//! of every fixture (`tables`).

mod derived;
mod edges;
mod hung;
mod input;
mod real;
mod tables;

use std::path::PathBuf;

use drivescope::telemetry::smartctl::decode_file;
use drivescope::telemetry::SmartReading;

/// The real outputs in tests/fixtures/smartctl.
pub const REAL: [&str; 7] = [
    "nvme_intel_p4510_SSDPE2KX080T8.json",
    "nvme_micron_7450_MTFDKCC3T2TFS.json",
    "nvme_samsung_970_evo_plus_250GB.json",
    "sas_toshiba_mg08_behind_megaraid_1.json",
    "sata_micron_5300_MTFDDAK1T9TDS.json",
    "sata_samsung_860_evo_500GB_full_x.json",
    "sata_seagate_exos_x16_ST16000NM001G.json",
];

/// A fixture's path: `name` under tests/fixtures/smartctl (`derived/…` for the hand-made).
pub fn path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/smartctl")
        .join(name)
}

/// A fixture decoded.
pub fn fixture(name: &str) -> SmartReading {
    decode_file(&path(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}
