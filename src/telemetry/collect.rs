//! One SMART-ish reading of a disk from the best source that answers: NVMe admin
//! commands, then hwmon for NVMe; `smartctl -j`, then drivetemp hwmon for SATA/SAS/USB.
//! Every source that fails leaves one note saying why. A [`SmartSource`] reads a disk poll
//! after poll and remembers what its drive does not support, so it is asked once.

use crate::drive::{Disk, SysRoot, Transport};
use crate::telemetry::nvme::reading::NvmeMemory;
use crate::telemetry::reading::{SmartReading, Source};
use crate::telemetry::{hwmon, nvme, smartctl};

/// Takes hwmon temperatures (and its health, from the temperature alarm) into `r` where
/// the primary source gave none.
fn merge_hwmon(r: &mut SmartReading, h: SmartReading) {
    if h.source.is_none() {
        r.notes.extend(h.notes);
        return;
    }
    if r.health.is_unknown() {
        r.health = h.health;
    }
    if r.temperature_c.is_none() {
        r.temperature_c = h.temperature_c;
        if r.sensors_c.is_empty() {
            r.sensors_c = h.sensors_c;
        }
        if r.source.is_none() {
            r.source = Some(Source::Hwmon);
        }
    }
    r.warning_temp_c = r.warning_temp_c.or(h.warning_temp_c);
    r.critical_temp_c = r.critical_temp_c.or(h.critical_temp_c);
}

fn nvme_reading(root: &SysRoot, ctrl: &str, memory: &mut NvmeMemory) -> SmartReading {
    let dev = root.dev.join(ctrl);
    let mut r = match nvme::reading::read_controller_with(&dev, memory) {
        Ok(r) => r,
        Err(e) => SmartReading {
            device: Some(dev.display().to_string()),
            notes: vec![format!("no NVMe admin commands: {e}")],
            ..Default::default()
        },
    };
    if r.source.is_none() {
        match hwmon::find_nvme(root, ctrl) {
            Some(dir) => merge_hwmon(&mut r, hwmon::read(&dir)),
            None => r.notes.push(format!("no hwmon sensor for {ctrl}")),
        }
    }
    r
}

fn ata_scsi_reading(root: &SysRoot, disk: &Disk) -> SmartReading {
    let mut r = match smartctl::run(&root.dev.join(&disk.name), smartctl::SMARTCTL_TIMEOUT) {
        Ok(r) => r,
        Err(e) => SmartReading {
            notes: vec![format!("no SMART: {e}")],
            ..Default::default()
        },
    };
    if r.temperature_c.is_none() {
        match hwmon::find_drivetemp(root, &disk.name) {
            Some(dir) => merge_hwmon(&mut r, hwmon::read(&dir)),
            None => r.notes.push(format!(
                "no drivetemp sensor for {} (modprobe drivetemp)",
                disk.name
            )),
        }
    }
    r
}

/// Why a disk of this transport has no SMART source.
pub fn no_smart_note(disk: &Disk, t: Transport) -> String {
    match t {
        Transport::Virtio => format!(
            "no SMART: {} is a virtio disk, which reports no SMART or temperature",
            disk.name
        ),
        Transport::Loop => format!(
            "no SMART: {} is a loop device; its backing file's drive has the figures",
            disk.name
        ),
        Transport::Nvme => format!(
            "no SMART: no controller found for NVMe namespace {}",
            disk.name
        ),
        _ => format!("no SMART: {} is not a drive on a known bus", disk.name),
    }
}

/// Reads `disk` once. Never fails: what no source answered is `None`, with notes.
pub fn read_smart(root: &SysRoot, disk: &Disk) -> SmartReading {
    SmartSource::default().read(root, disk)
}

/// Reads one disk again and again (the poller's SMART thread), keeping what the drive was
/// found not to support between readings: an NVMe controller's optional commands it
/// refused are not sent again, and each reading notes them once.
#[derive(Debug, Default)]
pub struct SmartSource {
    nvme: NvmeMemory,
}

impl SmartSource {
    /// Reads `disk`, as [`read_smart`] does.
    pub fn read(&mut self, root: &SysRoot, disk: &Disk) -> SmartReading {
        let mut r = match (disk.transport, disk.nvme_controller.as_deref()) {
            (Transport::Nvme, Some(ctrl)) => nvme_reading(root, ctrl, &mut self.nvme),
            (Transport::Sata | Transport::Scsi | Transport::Usb, _) => ata_scsi_reading(root, disk),
            (t, _) => SmartReading {
                notes: vec![no_smart_note(disk, t)],
                ..Default::default()
            },
        };
        if r.device.is_none() {
            r.device = Some(disk.dev_path().display().to_string());
        }
        r.model = r.model.or_else(|| disk.model.clone());
        r.serial = r.serial.or_else(|| disk.serial.clone());
        r.firmware = r.firmware.or_else(|| disk.firmware.clone());
        r
    }
}
