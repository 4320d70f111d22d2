//! What a run did to the drive: the difference of two SMART readings of it (before and
//! after a run or a step) in bytes, errors, minutes and percent. A field is `None` where
//! the drive does not report it (or a counter went backwards: reset, or another drive).
//!
//! Host bytes: NVMe data units (1000 × 512 bytes, rounded up by the drive); ATA
//! `Total_LBAs_Written`/`Total_LBAs_Read` (LBAs, Samsung 241, Seagate 241/242, Micron and
//! Crucial 246), Intel `Host_Writes_32MiB`/`Host_Reads_32MiB` (225, 241/242) and Kingston,
//! Phison and SanDisk `Lifetime_Writes_GiB`/`Lifetime_Reads_GiB` (241/242).
//!
//! Media (NAND) writes: NVMe, the OCP C0h log's physical media units written (bytes);
//! ATA, Intel `NAND_Writes_1GiB` (249) and Kingston/Phison `Flash_Writes_GiB` (233), in
//! GiB; Micron and Crucial count NAND pages programmed for the host (247,
//! `Host_Program_Page_Count`) and by the drive itself (248, `Bckgnd_Program_Page_Cnt` or
//! `FTL_Program_Page_Count`), of a page size they do not report: those give the write
//! amplification ((247 + 248) / 247, as Micron documents it) but no bytes.

use serde::{Deserialize, Serialize};

use super::attributes::{AtaAttribute, AtaDecoded};
use super::reading::{SmartReading, DATA_UNIT_BYTES};

const GIB: u64 = 1 << 30;
const MIB32: u64 = 32 << 20;

/// Which counter the media writes come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MediaCounter {
    /// NVMe: the OCP C0h log's physical media units written.
    OcpC0,
    /// ATA: an attribute of NAND writes in GiB (Intel 249, Kingston/Phison 233).
    AtaNandGib,
    /// ATA: Micron/Crucial NAND pages programmed, host (247) and drive (248).
    AtaProgramPages,
}

/// The change between two readings of one drive. Field names are the session's keys.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct DriveWear {
    /// What the host wrote, as the drive counted it.
    pub host_written_bytes: Option<u64>,
    /// What the host read, as the drive counted it.
    pub host_read_bytes: Option<u64>,
    /// The host counters' step (NVMe: a data unit; ATA: an LBA, 32 MiB or a GiB): a
    /// difference is exact to within one of it.
    pub host_unit_bytes: Option<u64>,
    /// What the drive wrote to its media, its own writes included.
    pub media_written_bytes: Option<u64>,
    pub media_counter: Option<MediaCounter>,
    /// Media writes over host writes.
    pub write_amplification: Option<f64>,
    /// New media and data integrity errors (NVMe); new uncorrectable errors (ATA 187).
    pub media_errors: Option<u64>,
    /// New error log entries.
    pub error_log_entries: Option<u64>,
    /// Minutes added at or above the warning temperature (NVMe).
    pub warning_temp_minutes: Option<u64>,
    /// Minutes added at or above the critical temperature (NVMe).
    pub critical_temp_minutes: Option<u64>,
    /// Change of the percentage of rated endurance used.
    pub percentage_used: Option<i64>,
}

fn sub(before: Option<u64>, after: Option<u64>) -> Option<u64> {
    after?.checked_sub(before?)
}

/// An attribute named one of `names`, in a reading's table.
fn attr<'a>(r: &'a SmartReading, names: &[&str]) -> Option<&'a AtaAttribute> {
    r.ata_attributes
        .iter()
        .find(|a| a.name.as_deref().is_some_and(|n| names.contains(&n)))
}

/// A counter of ATA attributes: the names it goes by, and the bytes one raw count is
/// (`None`: the attribute's decoded LBA bytes).
type AtaCounter = (&'static [&'static str], Option<u64>);

const HOST_WRITES: &[AtaCounter] = &[
    (&["Total_LBAs_Written"], None),
    (&["Host_Writes_32MiB"], Some(MIB32)),
    (&["Lifetime_Writes_GiB", "Host_Writes_GiB"], Some(GIB)),
];

const HOST_READS: &[AtaCounter] = &[
    (&["Total_LBAs_Read"], None),
    (&["Host_Reads_32MiB"], Some(MIB32)),
    (&["Lifetime_Reads_GiB", "Host_Reads_GiB"], Some(GIB)),
];

/// A counter's value in bytes and its step.
fn ata_bytes(r: &SmartReading, counters: &[AtaCounter]) -> Option<(u64, u64)> {
    counters.iter().find_map(|&(names, unit)| {
        let a = attr(r, names)?;
        match (unit, a.decoded) {
            (Some(unit), _) => Some((a.raw.saturating_mul(unit), unit)),
            (None, Some(AtaDecoded::Bytes { bytes, lba_bytes })) => Some((
                u64::try_from(bytes).unwrap_or(u64::MAX),
                u64::from(lba_bytes),
            )),
            (None, _) => None,
        }
    })
}

fn ata_delta(before: &SmartReading, after: &SmartReading, c: &[AtaCounter]) -> Option<(u64, u64)> {
    let (b, unit) = ata_bytes(before, c)?;
    let (a, _) = ata_bytes(after, c)?;
    Some((a.checked_sub(b)?, unit))
}

fn raw_delta(before: &SmartReading, after: &SmartReading, names: &[&str]) -> Option<u64> {
    after_raw(after, names)?.checked_sub(after_raw(before, names)?)
}

fn after_raw(r: &SmartReading, names: &[&str]) -> Option<u64> {
    attr(r, names).map(|a| a.raw)
}

impl DriveWear {
    /// What happened to the drive between `before` and `after`; nothing when they are
    /// readings of different drives (their serials differ).
    pub fn between(before: &SmartReading, after: &SmartReading) -> DriveWear {
        if let (Some(b), Some(a)) = (&before.serial, &after.serial) {
            if a != b {
                return DriveWear::default();
            }
        }
        let mut w = DriveWear {
            media_errors: sub(before.media_errors, after.media_errors),
            error_log_entries: sub(before.error_log_entries, after.error_log_entries),
            warning_temp_minutes: sub(before.warning_temp_minutes, after.warning_temp_minutes),
            critical_temp_minutes: sub(before.critical_temp_minutes, after.critical_temp_minutes),
            percentage_used: match (before.percentage_used, after.percentage_used) {
                (Some(b), Some(a)) => Some(i64::from(a) - i64::from(b)),
                _ => None,
            },
            ..DriveWear::default()
        };
        let units = |d: Option<u64>| d.map(|d| d.saturating_mul(DATA_UNIT_BYTES));
        w.host_written_bytes = units(sub(before.data_units_written, after.data_units_written));
        w.host_read_bytes = units(sub(before.data_units_read, after.data_units_read));
        if w.host_written_bytes.is_some() || w.host_read_bytes.is_some() {
            w.host_unit_bytes = Some(DATA_UNIT_BYTES);
        }
        if let Some((bytes, unit)) = ata_delta(before, after, HOST_WRITES) {
            w.host_written_bytes = w.host_written_bytes.or(Some(bytes));
            w.host_unit_bytes = w.host_unit_bytes.or(Some(unit));
        }
        if let Some((bytes, unit)) = ata_delta(before, after, HOST_READS) {
            w.host_read_bytes = w.host_read_bytes.or(Some(bytes));
            w.host_unit_bytes = w.host_unit_bytes.or(Some(unit));
        }
        if w.media_errors.is_none() {
            w.media_errors = raw_delta(
                before,
                after,
                &["Reported_Uncorrect", "Uncorrectable_Error_Cnt"],
            );
        }
        w.media(before, after);
        w
    }

    /// The media writes and the write amplification they give.
    fn media(&mut self, before: &SmartReading, after: &SmartReading) {
        let ocp = |r: &SmartReading| r.ocp_smart.and_then(|o| o.media_written_bytes);
        let nand_gib = |r: &SmartReading| {
            after_raw(r, &["NAND_Writes_1GiB", "Flash_Writes_GiB"]).map(|g| g.saturating_mul(GIB))
        };
        if let Some(d) = sub(ocp(before), ocp(after)) {
            self.media_written_bytes = Some(d);
            self.media_counter = Some(MediaCounter::OcpC0);
        } else if let Some(d) = sub(nand_gib(before), nand_gib(after)) {
            self.media_written_bytes = Some(d);
            self.media_counter = Some(MediaCounter::AtaNandGib);
        } else {
            let host = raw_delta(before, after, &["Host_Program_Page_Count"]);
            let own = raw_delta(
                before,
                after,
                &["Bckgnd_Program_Page_Cnt", "FTL_Program_Page_Count"],
            );
            if let (Some(host), Some(own)) = (host, own) {
                self.media_counter = Some(MediaCounter::AtaProgramPages);
                self.write_amplification =
                    (host > 0).then(|| (host.saturating_add(own)) as f64 / host as f64);
            }
            return;
        }
        self.write_amplification = match (self.media_written_bytes, self.host_written_bytes) {
            (Some(m), Some(h)) if h > 0 => Some(m as f64 / h as f64),
            _ => None,
        };
    }

    /// Whether the drive's count of host writes agrees with `own` (what drivescope wrote)
    /// within one step of the counter; `None` where the drive does not count them.
    pub fn written_agrees(&self, own: u64) -> Option<bool> {
        agrees(self.host_written_bytes?, own, self.host_unit_bytes?)
    }

    /// As [`DriveWear::written_agrees`], for reads.
    pub fn read_agrees(&self, own: u64) -> Option<bool> {
        agrees(self.host_read_bytes?, own, self.host_unit_bytes?)
    }

    /// Whether the drive reports nothing of it.
    pub fn is_empty(&self) -> bool {
        *self == DriveWear::default()
    }
}

/// What a run or one of its steps did: drivescope's own count of bytes beside the drive's
/// counters' change over the same span. Kept in the session as a `drive_wear` event.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct WearSpan {
    /// The plan step (its index); `None`: the whole run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<usize>,
    /// What drivescope wrote in it, bytes (ramp included).
    pub drivescope_written_bytes: u64,
    /// What drivescope read in it, bytes.
    pub drivescope_read_bytes: u64,
    #[serde(flatten)]
    pub drive: DriveWear,
}

impl WearSpan {
    /// Whether the drive's host write count agrees with drivescope's (within its step).
    pub fn written_agrees(&self) -> Option<bool> {
        self.drive.written_agrees(self.drivescope_written_bytes)
    }

    /// As [`WearSpan::written_agrees`], for reads.
    pub fn read_agrees(&self) -> Option<bool> {
        self.drive.read_agrees(self.drivescope_read_bytes)
    }
}

/// Media errors and error log entries that appeared between one reading and the next,
/// with the drive's totals after them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewDriveErrors {
    pub media_errors: u64,
    pub error_log_entries: u64,
    pub total_media_errors: Option<u64>,
    pub total_error_log_entries: Option<u64>,
}

/// Watches reading after reading for new media errors and error log entries.
#[derive(Debug, Default)]
pub struct ErrorWatch {
    last: Option<(Option<u64>, Option<u64>)>,
}

impl ErrorWatch {
    /// What `r` has that the reading before it had not (the first reading is the baseline).
    pub fn observe(&mut self, r: &SmartReading) -> Option<NewDriveErrors> {
        let now = (r.media_errors, r.error_log_entries);
        if now == (None, None) {
            return None;
        }
        let (media, entries) = self.last.replace(now)?;
        let new = NewDriveErrors {
            media_errors: sub(media, now.0).unwrap_or(0),
            error_log_entries: sub(entries, now.1).unwrap_or(0),
            total_media_errors: now.0,
            total_error_log_entries: now.1,
        };
        (new.media_errors > 0 || new.error_log_entries > 0).then_some(new)
    }
}

fn agrees(drive: u64, own: u64, unit: u64) -> Option<bool> {
    Some(drive.abs_diff(own) <= unit)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::telemetry::smartctl;
    use crate::telemetry::OcpSmartHealth;
    use crate::telemetry::ThrottleStatus;
    use std::path::PathBuf;

    fn fixture(name: &str) -> SmartReading {
        let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/smartctl")
            .join(name);
        smartctl::decode_file(&p).expect("fixture decodes")
    }

    fn bump(r: &mut SmartReading, name: &str, by: u64) {
        let a = r
            .ata_attributes
            .iter_mut()
            .find(|a| a.name.as_deref() == Some(name))
            .expect("attribute");
        a.raw += by;
        if let Some(AtaDecoded::Bytes { bytes, lba_bytes }) = &mut a.decoded {
            *bytes += u128::from(by) * u128::from(*lba_bytes);
        }
    }

    #[test]
    fn nvme_counters_in_bytes_errors_minutes_and_percent() {
        let before = fixture("nvme_samsung_970_evo_plus_250GB.json");
        let mut after = before.clone();
        // 1 GiB written by the host is 2098 data units (rounded up by the drive).
        after.data_units_written = before.data_units_written.map(|u| u + 2098);
        after.data_units_read = before.data_units_read.map(|u| u + 10);
        after.error_log_entries = before.error_log_entries.map(|e| e + 2);
        after.warning_temp_minutes = before.warning_temp_minutes.map(|m| m + 3);
        after.percentage_used = before.percentage_used.map(|p| p + 1);
        let w = DriveWear::between(&before, &after);
        assert_eq!(w.host_written_bytes, Some(2098 * 512_000));
        assert_eq!(w.host_read_bytes, Some(5_120_000));
        assert_eq!(w.host_unit_bytes, Some(512_000));
        assert_eq!(w.written_agrees(1 << 30), Some(true));
        assert_eq!(w.written_agrees((1 << 30) - 600_000), Some(false));
        assert_eq!(w.media_errors, Some(0));
        assert_eq!(w.error_log_entries, Some(2), "22 before, 24 after");
        assert_eq!(w.warning_temp_minutes, Some(3));
        assert_eq!(w.critical_temp_minutes, Some(0));
        assert_eq!(w.percentage_used, Some(1));
        // The Samsung has no OCP log: no media writes, no amplification.
        assert_eq!(w.media_written_bytes, None);
        assert_eq!(w.write_amplification, None);
    }

    #[test]
    fn nvme_ocp_media_writes_give_the_amplification() {
        let mut before = fixture("nvme_micron_7450_MTFDKCC3T2TFS.json");
        let ocp = |media: u64| OcpSmartHealth {
            media_written_bytes: Some(media),
            media_read_bytes: Some(0),
            throttle_status: ThrottleStatus::Unthrottled,
            throttle_events: 0,
            max_temperature_c: None,
            pcie_correctable_errors: 0,
            incomplete_shutdowns: 0,
            log_page_version: 3,
        };
        before.ocp_smart = Some(ocp(1_000_000_000));
        let mut after = before.clone();
        after.data_units_written = before.data_units_written.map(|u| u + 1000);
        after.ocp_smart = Some(ocp(1_000_000_000 + 768_000_000));
        let w = DriveWear::between(&before, &after);
        assert_eq!(w.host_written_bytes, Some(512_000_000));
        assert_eq!(w.media_written_bytes, Some(768_000_000));
        assert_eq!(w.media_counter, Some(MediaCounter::OcpC0));
        assert_eq!(w.write_amplification, Some(1.5));
    }

    #[test]
    fn micron_sata_pages_give_the_amplification_without_bytes() {
        let before = fixture("sata_micron_5300_MTFDDAK1T9TDS.json");
        let mut after = before.clone();
        bump(&mut after, "Total_LBAs_Written", 2048);
        bump(&mut after, "Host_Program_Page_Count", 100);
        bump(&mut after, "Bckgnd_Program_Page_Cnt", 60);
        let w = DriveWear::between(&before, &after);
        assert_eq!(w.host_written_bytes, Some(2048 * 512));
        assert_eq!(w.host_unit_bytes, Some(512));
        assert_eq!(w.written_agrees(1 << 20), Some(true));
        assert_eq!(w.media_counter, Some(MediaCounter::AtaProgramPages));
        assert_eq!(w.media_written_bytes, None, "page size not reported");
        assert_eq!(w.write_amplification, Some(1.6));
        assert_eq!(w.media_errors, Some(0), "attribute 187");
        assert_eq!(w.host_read_bytes, None, "no LBAs-read attribute");
        assert_eq!(w.warning_temp_minutes, None, "NVMe only");
    }

    #[test]
    fn seagate_reads_and_writes_samsung_writes_only() {
        let before = fixture("sata_seagate_exos_x16_ST16000NM001G.json");
        let mut after = before.clone();
        bump(&mut after, "Total_LBAs_Written", 8);
        bump(&mut after, "Total_LBAs_Read", 16);
        let w = DriveWear::between(&before, &after);
        assert_eq!(w.host_written_bytes, Some(4096));
        assert_eq!(w.host_read_bytes, Some(8192));
        assert_eq!(w.read_agrees(8192 + 512), Some(true));
        assert_eq!(w.read_agrees(8192 + 1024), Some(false));
        assert_eq!(w.media_counter, None);
        let s = fixture("sata_samsung_860_evo_500GB_full_x.json");
        let w = DriveWear::between(&s, &s);
        assert_eq!(w.host_written_bytes, Some(0));
        assert_eq!(w.host_read_bytes, None);
        assert_eq!(w.media_errors, Some(0), "Uncorrectable_Error_Cnt");
    }

    #[test]
    fn new_errors_are_said_once_as_they_appear() {
        let first = fixture("nvme_samsung_970_evo_plus_250GB.json");
        let mut w = ErrorWatch::default();
        assert_eq!(w.observe(&first), None, "22 entries already: the baseline");
        assert_eq!(w.observe(&first), None);
        let mut more = first.clone();
        more.error_log_entries = Some(25);
        more.media_errors = Some(1);
        assert_eq!(
            w.observe(&more),
            Some(NewDriveErrors {
                media_errors: 1,
                error_log_entries: 3,
                total_media_errors: Some(1),
                total_error_log_entries: Some(25),
            })
        );
        assert_eq!(w.observe(&more), None, "said once");
        let sata = fixture("sata_samsung_860_evo_500GB_full_x.json");
        let mut w = ErrorWatch::default();
        assert_eq!(w.observe(&sata), None);
    }

    #[test]
    fn another_drive_or_a_reset_counter_is_not_a_difference() {
        let a = fixture("nvme_samsung_970_evo_plus_250GB.json");
        let b = fixture("nvme_intel_p4510_SSDPE2KX080T8.json");
        let mut other = a.clone();
        other.serial = Some("ELSE".into());
        assert!(DriveWear::between(&a, &other).is_empty());
        let mut reset = a.clone();
        reset.data_units_written = Some(0);
        assert_eq!(DriveWear::between(&a, &reset).host_written_bytes, None);
        // Readings without serials still compare (the Intel's is redacted, not absent).
        assert!(!DriveWear::between(&b, &b).is_empty());
        assert!(DriveWear::between(&SmartReading::default(), &SmartReading::default()).is_empty());
    }
}
