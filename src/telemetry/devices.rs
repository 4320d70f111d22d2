//! The block devices of a system root for `drivescope devices`: each with model, size,
//! transport, whether it or a partition is in use, and which telemetry sources answer for
//! it; and the listing's text table.

use serde::Serialize;

use super::collect::no_smart_note;
use super::nvme::reading::AdminCommands as _;
use super::{blockstat, hwmon, nvme, smartctl};
use crate::drive::in_use::{block_device_in_use, BlockDevice, InUse, Scene};
use crate::drive::{disks_under, list_disks, Disk, SysRoot, Transport, Zones};

/// One row of the listing.
#[derive(Debug, Serialize)]
pub struct DeviceRow {
    #[serde(flatten)]
    pub disk: Disk,
    /// How it or a partition is in use ("/dev/vda1 is mounted on /"); empty when free.
    pub in_use: Vec<InUse>,
    /// Telemetry sources that answered.
    pub sources: Vec<String>,
    /// Why others did not.
    pub notes: Vec<String>,
}

fn probe_sources(root: &SysRoot, disk: &Disk) -> (Vec<String>, Vec<String>) {
    let mut ok = Vec::new();
    let mut notes = Vec::new();
    match (disk.transport, disk.nvme_controller.as_deref()) {
        (Transport::Nvme, Some(ctrl)) => {
            match nvme::NvmeDevice::open(&root.dev.join(ctrl)).and_then(|d| d.smart_log()) {
                Ok(_) => ok.push("nvme_admin".to_string()),
                Err(e) => notes.push(format!("nvme_admin: {e}")),
            }
            match hwmon::find_nvme(root, ctrl) {
                Some(_) => ok.push("hwmon".to_string()),
                None => notes.push("hwmon: no nvme sensor".to_string()),
            }
        }
        (Transport::Sata | Transport::Scsi | Transport::Usb, _) => {
            match smartctl::run(&root.dev.join(&disk.name), smartctl::SMARTCTL_TIMEOUT) {
                Ok(_) => ok.push("smartctl".to_string()),
                Err(e) => notes.push(format!("smartctl: {e}")),
            }
            match hwmon::find_drivetemp(root, &disk.name) {
                Some(_) => ok.push("hwmon".to_string()),
                None => notes.push("hwmon: no drivetemp sensor".to_string()),
            }
        }
        (t, _) => {
            let under = disks_under(root, &disk.name);
            if under.iter().any(|d| d != &disk.name) {
                notes.push(format!(
                    "no SMART: {} is a virtual device over {}; the telemetry is theirs",
                    disk.name,
                    under.join(", ")
                ));
            } else {
                notes.push(no_smart_note(disk, t));
            }
        }
    }
    match blockstat::read_at(root, &disk.name) {
        Ok(_) => ok.push("blockstat".to_string()),
        Err(e) => notes.push(format!("blockstat: {e}")),
    }
    (ok, notes)
}

/// Lists the block devices of `root`.
pub fn collect(root: &SysRoot) -> Vec<DeviceRow> {
    let scene = Scene::read(root);
    list_disks(root)
        .into_iter()
        // Unattached loop devices (no backing file, size 0) are slots, not devices.
        .filter(|d| !(d.transport == Transport::Loop && d.backing_file.is_none()))
        .map(|disk| {
            let in_use = BlockDevice::by_name(root, &disk.name)
                .map(|dev| block_device_in_use(root, &scene, &dev, &root.dev.join(&disk.name)))
                .unwrap_or_default();
            let (sources, notes) = probe_sources(root, &disk);
            DeviceRow {
                disk,
                in_use,
                sources,
                notes,
            }
        })
        .collect()
}

/// A zoned device's zones by condition in words, leaving out a condition no zone is in:
/// `3 full, 1 open, 60 empty`
/// (and `2 other` when some are conventional, read-only or offline).
pub fn zone_states_text(s: &crate::drive::zones::ZoneStates) -> String {
    // A condition no zone is in is left out, so the line keeps room for the geometry.
    let parts: Vec<String> = [
        (s.full, "full"),
        (s.open, "open"),
        (s.closed, "closed"),
        (s.empty, "empty"),
        (s.other, "other"),
    ]
    .iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, what)| format!("{n} {what}"))
    .collect();
    if parts.is_empty() {
        "no zones reported".to_string()
    } else {
        parts.join(", ")
    }
}

/// A zoned device's zones in words: `host-managed, 64 zones of 4 MiB, at most 14 open,
/// active unlimited`.
pub fn zones_text(z: &Zones) -> String {
    let limit =
        |n: Option<u64>| n.map_or_else(|| "unlimited".to_string(), |n| format!("at most {n}"));
    format!(
        "{}, {} zones of {}, open {}, active {}",
        z.model.as_str(),
        z.count,
        crate::units::format_binary(z.zone_bytes),
        limit(z.max_open),
        limit(z.max_active)
    )
}

/// The listing as text: a heading, a row per device and a line per note; each line ends
/// with a newline.
pub fn table_text(rows: &[DeviceRow]) -> String {
    let mut out = format!(
        "{:<10} {:>20} {:<9} {:<28} {:<24} SOURCES\n",
        "NAME", "SIZE", "TRANSPORT", "MODEL", "IN USE"
    );
    for r in rows {
        let d = &r.disk;
        let used = if r.in_use.is_empty() {
            "no".to_string()
        } else {
            r.in_use
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; ")
        };
        out.push_str(&format!(
            "{:<10} {:>20} {:<9} {:<28} {:<24} {}\n",
            d.name,
            crate::units::format_capacity(d.capacity_bytes),
            d.transport.as_str(),
            d.model
                .clone()
                .or_else(|| d.backing_file.as_ref().map(|b| b.display().to_string()))
                .unwrap_or_else(|| "-".to_string()),
            used,
            r.sources.join(", ")
        ));
        if let Some(z) = &d.zones {
            out.push_str(&format!("{:<10} zoned: {}\n", "", zones_text(z)));
        }
        for n in &r.notes {
            out.push_str(&format!("{:<10} note: {n}\n", ""));
        }
    }
    out
}
