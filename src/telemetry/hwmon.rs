//! hwmon sensors, readable without root: the kernel's `nvme` (NVMe composite and sensors
//! 1–8, thresholds) and `drivetemp` (SATA) drivers. Found by scanning
//! `/sys/class/hwmon/*/name` and matching each hwmon's `device` link to the drive, which
//! covers both NVMe layouts (hwmon under the controller in newer kernels, under the PCI
//! device in older ones). Values are millidegrees Celsius.

use std::path::{Path, PathBuf};

use crate::drive::SysRoot;
use crate::telemetry::health::{Health, HealthReason};
use crate::telemetry::reading::{SensorTemp, SmartReading, Source};

/// Which hwmon driver a sensor directory belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HwmonKind {
    /// `drivers/nvme/host/hwmon.c`: temperatures converted from Kelvin.
    Nvme,
    /// `drivers/hwmon/drivetemp.c`: whole degrees Celsius from the drive.
    Drivetemp,
}

/// One hwmon directory belonging to a drive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HwmonDir {
    pub kind: HwmonKind,
    pub path: PathBuf,
}

fn canonical(p: &Path) -> Option<PathBuf> {
    std::fs::canonicalize(p).ok()
}

/// Every hwmon of `kind` whose `device` link resolves to one of `targets`.
fn scan(root: &SysRoot, kind: HwmonKind, targets: &[PathBuf]) -> Option<HwmonDir> {
    let want = match kind {
        HwmonKind::Nvme => "nvme",
        HwmonKind::Drivetemp => "drivetemp",
    };
    let mut entries: Vec<PathBuf> = std::fs::read_dir(root.sys.join("class/hwmon"))
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    entries.into_iter().find_map(|dir| {
        if SysRoot::attr(&dir.join("name")).as_deref() != Some(want) {
            return None;
        }
        let dev = canonical(&dir.join("device"))?;
        targets.contains(&dev).then(|| HwmonDir {
            kind,
            path: dir.clone(),
        })
    })
}

/// The hwmon of NVMe controller `ctrl` (e.g. `nvme0`), in either sysfs layout.
pub fn find_nvme(root: &SysRoot, ctrl: &str) -> Option<HwmonDir> {
    let class = root.sys.join("class/nvme").join(ctrl);
    let targets: Vec<PathBuf> = [class.clone(), class.join("device")]
        .iter()
        .filter_map(|p| canonical(p))
        .collect();
    scan(root, HwmonKind::Nvme, &targets)
}

/// The drivetemp hwmon of SCSI/SATA disk `disk` (e.g. `sda`).
pub fn find_drivetemp(root: &SysRoot, disk: &str) -> Option<HwmonDir> {
    let targets: Vec<PathBuf> = canonical(&root.block(disk).join("device"))
        .into_iter()
        .collect();
    scan(root, HwmonKind::Drivetemp, &targets)
}

/// Millidegrees to whole degrees. NVMe values come from integer Kelvin, converted with
/// 273.15 (newer kernels: 323 K → 49850) or 273 (older: 50000); both map back to the
/// drive's Kelvin and then to K − 273, as nvme-cli and smartctl show it.
pub fn millideg_to_c(kind: HwmonKind, milli: i64) -> i32 {
    let c = match kind {
        HwmonKind::Nvme => {
            let kelvin = ((milli + 273_150) as f64 / 1000.0).round();
            kelvin - 273.0
        }
        HwmonKind::Drivetemp => (milli as f64 / 1000.0).round(),
    };
    c as i32
}

fn read_temp(dir: &HwmonDir, file: &str) -> Option<i32> {
    let v: i64 = SysRoot::attr(&dir.path.join(file))?.parse().ok()?;
    Some(millideg_to_c(dir.kind, v))
}

/// What `temp1_alarm` says: the NVMe driver sets it from critical-warning bit 1, the one
/// bit hwmon shows; it says nothing of the others, so an alarm fails the drive and no
/// alarm leaves the verdict unknown.
fn health(dir: &HwmonDir) -> Health {
    match SysRoot::attr_u64(&dir.path.join("temp1_alarm")) {
        Some(a) if a != 0 => Health::judge(None, vec![HealthReason::TemperatureThreshold]),
        _ => Health::default(),
    }
}

/// Reads one hwmon directory into a reading: `temp1` is the composite (with `max` as
/// the warning and `crit` as the critical threshold, `alarm` as a health reason),
/// `temp2..9` are sensors 1–8 (the label "Sensor N" names the number where present).
pub fn read(dir: &HwmonDir) -> SmartReading {
    let mut r = SmartReading {
        health: health(dir),
        source: Some(Source::Hwmon),
        temperature_c: read_temp(dir, "temp1_input"),
        warning_temp_c: read_temp(dir, "temp1_max"),
        critical_temp_c: read_temp(dir, "temp1_crit"),
        ..Default::default()
    };
    for n in 2..=9u8 {
        let Some(c) = read_temp(dir, &format!("temp{n}_input")) else {
            continue;
        };
        let sensor = SysRoot::attr(&dir.path.join(format!("temp{n}_label")))
            .and_then(|l| l.strip_prefix("Sensor ")?.trim().parse().ok())
            .unwrap_or(n - 1);
        r.sensors_c.push(SensorTemp { sensor, c });
    }
    if r.temperature_c.is_none() {
        r.source = None;
        r.notes
            .push(format!("hwmon {}: no temp1_input", dir.path.display()));
    }
    r
}
