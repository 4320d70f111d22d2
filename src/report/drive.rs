//! The drive in the report: its identity as fields a reader knows (model, serial exactly as
//! the drive gives it, firmware, capacity, interface, health), and SMART before and after as
//! the figures that changed and matter (data written and read, media errors, temperatures,
//! endurance used, time over the temperature thresholds), never its identity.

use std::fmt::Write;

use serde::Deserialize;

use super::page::{capacity, count, data, grid, kv_table, para};
use super::svg::{format_value, Unit};
use crate::session::{DiskIdentity, DriveIdentity, Sample, Session};
use crate::telemetry::reading::DATA_UNIT_BYTES;
use crate::telemetry::SmartReading;

/// Recorded text that says something (not blank).
fn said(v: &Option<String>) -> Option<String> {
    v.as_ref().filter(|s| !s.trim().is_empty()).cloned()
}

/// The drive's model as its identity gives it (its first whole disk's).
pub fn model(drive: Option<&DriveIdentity>) -> Option<String> {
    said(&drive?.primary()?.model)
}

/// How a transport is written in datasheets.
fn interface(word: &str) -> String {
    match word {
        "nvme" => "NVMe".into(),
        "sata" => "SATA".into(),
        "scsi" => "SCSI/SAS".into(),
        "usb" => "USB".into(),
        "virtio" => "virtio (a virtual machine's disk)".into(),
        "loop" => "loop device (a file)".into(),
        other => other.into(),
    }
}

/// What the kernel's `queue/rotational` flag says of the medium, as far as it can: a
/// virtual machine's or a loop device's flag tells nothing of the drive underneath (virtio
/// disks report 1 by default), and only a SATA disk's 1 is surely an HDD.
fn media(rotational: bool, transport: Option<&str>) -> &'static str {
    match (transport, rotational) {
        (Some("virtio"), _) => "virtual disk (virtio)",
        (Some("loop"), _) => "a file's loop device",
        (_, false) => "solid state",
        (Some("sata"), true) => "rotational (HDD)",
        (_, true) => "rotational (as the kernel reports it)",
    }
}

/// A telemetry sample's SMART reading and its time (seconds).
#[derive(Deserialize)]
struct SmartSample {
    #[serde(default)]
    t: f64,
    smart: Option<SmartReading>,
}

/// A sample's time and SMART reading, when it holds one.
fn smart_of(x: &Sample) -> Option<(f64, SmartReading)> {
    let s = x.read::<SmartSample>()?;
    Some((s.t, s.smart?))
}

/// The drive's health verdict, from the last SMART reading.
fn health(smart: Option<&SmartReading>) -> String {
    match smart {
        Some(r) => r.health.to_string(),
        None => "not read (no SMART samples in this session)".into(),
    }
}

/// One disk's rows: model, serial, firmware, capacity, interface, block sizes, device.
fn disk_rows(d: &DiskIdentity, smart: Option<&SmartReading>) -> Vec<(String, String)> {
    let field = |own: &Option<String>, read: Option<&Option<String>>| {
        said(own)
            .or_else(|| said(read?))
            .unwrap_or_else(|| "-".to_string())
    };
    let mut rows = vec![
        (
            "model".to_string(),
            field(&d.model, smart.map(|r| &r.model)),
        ),
        ("serial".into(), field(&d.serial, smart.map(|r| &r.serial))),
        (
            "firmware".into(),
            field(&d.firmware, smart.map(|r| &r.firmware)),
        ),
    ];
    if let Some(b) = d.capacity_bytes {
        rows.push(("capacity".into(), capacity(b)));
    }
    let transport = said(&d.transport);
    if let Some(t) = &transport {
        rows.push(("interface".into(), interface(t)));
    }
    if let (Some(l), Some(p)) = (d.logical_block_size, d.physical_block_size) {
        rows.push((
            "block size".into(),
            format!(
                "{} logical, {} physical",
                crate::units::format_size(l),
                crate::units::format_size(p)
            ),
        ));
    }
    if let Some(r) = d.rotational {
        rows.push(("media".into(), media(r, transport.as_deref()).into()));
    }
    if let Some(n) = said(&Some(d.name.clone())) {
        rows.push(("device".into(), format!("/dev/{n}")));
    }
    rows
}

/// The Drive section: one table per whole disk under the target, health last.
pub fn identity_section(o: &mut String, s: &Session, heading: &str) {
    let _ = writeln!(o, "<{heading}>Drive</{heading}>");
    let smart = s.telemetry.iter().rev().find_map(smart_of).map(|(_, r)| r);
    let none = DriveIdentity::default();
    let drive = s.drive.as_ref().unwrap_or(&none);
    if drive.disks.is_empty() && smart.is_none() {
        let rest: Vec<(String, String)> = [
            ("target", &drive.target),
            ("block_device", &drive.block_device),
            ("stat_name", &drive.stat_name),
        ]
        .into_iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
        if rest.is_empty() {
            o.push_str("<p class=\"note\">No drive identity recorded.</p>\n");
        } else {
            kv_table(o, "drive", &rest);
        }
        return;
    }
    // No disk recorded: what SMART says of the drive is all there is.
    let unknown = [DiskIdentity::default()];
    let list = if drive.disks.is_empty() {
        &unknown[..]
    } else {
        &drive.disks[..]
    };
    if list.len() > 1 {
        para(
            o,
            "note",
            &format!("The target spans {}.", count(list.len(), "disk")),
        );
    }
    for d in list {
        let mut rows = disk_rows(d, smart.as_ref());
        rows.push(("health".into(), health(smart.as_ref())));
        kv_table(o, "drive", &rows);
    }
    if let Some(bd) = said(&Some(drive.block_device.clone())) {
        let on = format!("The target {} is on /dev/{bd}.", s.target.path);
        para(o, "note", &on);
    }
}

/// A figure of a SMART reading, if the drive gave it.
type Figure = fn(&SmartReading) -> Option<f64>;

/// A counter as a figure.
fn n(v: Option<u64>) -> Option<f64> {
    v.map(|v| v as f64)
}

/// The SMART figures a review compares, each with how it reads: (name, how shown, figure).
const FIGURES: [(&str, Shown, Figure); 11] = [
    (
        "data written",
        Shown::DataUnits,
        |r| n(r.data_units_written),
    ),
    ("data read", Shown::DataUnits, |r| n(r.data_units_read)),
    ("media errors", Shown::Count, |r| n(r.media_errors)),
    (
        "error log entries",
        Shown::Count,
        |r| n(r.error_log_entries),
    ),
    ("endurance used", Shown::Percent, |r| {
        r.percentage_used.map(f64::from)
    }),
    ("available spare", Shown::Percent, |r| {
        r.available_spare.map(f64::from)
    }),
    ("time over the warning temperature", Shown::Minutes, |r| {
        n(r.warning_temp_minutes)
    }),
    ("time over the critical temperature", Shown::Minutes, |r| {
        n(r.critical_temp_minutes)
    }),
    ("time throttled (light, TMT1)", Shown::Seconds, |r| {
        Some(r.thermal_throttle?.tmt1_seconds.into())
    }),
    ("time throttled (heavy, TMT2)", Shown::Seconds, |r| {
        Some(r.thermal_throttle?.tmt2_seconds.into())
    }),
    ("unsafe shutdowns", Shown::Count, |r| n(r.unsafe_shutdowns)),
];

/// The other counters of a reading, shown when they changed: (name, figure), every number
/// of the reading that is neither a figure above nor a temperature, in the reading's order
/// (its sensors' temperatures come first, from [`other_counters`]).
const OTHER: [(&str, Figure); 23] = [
    ("critical_warning", |r| r.critical_warning.map(f64::from)),
    ("host_read_commands", |r| n(r.host_read_commands)),
    ("host_write_commands", |r| n(r.host_write_commands)),
    ("power_on_hours", |r| n(r.power_on_hours)),
    ("power_cycles", |r| n(r.power_cycles)),
    ("self_test_errors", |r| n(r.self_test_errors)),
    ("scsi_grown_defects", |r| n(r.scsi_grown_defects)),
    ("smartctl_exit_status", |r| {
        r.smartctl_exit_status.map(f64::from)
    }),
    ("power_state", |r| r.power_state.map(f64::from)),
    ("power_state_max_w", |r| r.power_state_max_w),
    ("power_w", |r| r.power_w),
    ("thermal_throttle.tmt1_transitions", |r| {
        Some(r.thermal_throttle?.tmt1_transitions.into())
    }),
    ("thermal_throttle.tmt2_transitions", |r| {
        Some(r.thermal_throttle?.tmt2_transitions.into())
    }),
    ("thermal_management.tmt1_c", |r| {
        r.thermal_management?.tmt1_c.map(f64::from)
    }),
    ("thermal_management.tmt2_c", |r| {
        r.thermal_management?.tmt2_c.map(f64::from)
    }),
    ("thermal_management.mntmt_c", |r| {
        r.thermal_management?.mntmt_c.map(f64::from)
    }),
    ("thermal_management.mxtmt_c", |r| {
        r.thermal_management?.mxtmt_c.map(f64::from)
    }),
    ("ocp_smart.media_written_bytes", |r| {
        n(r.ocp_smart?.media_written_bytes)
    }),
    ("ocp_smart.media_read_bytes", |r| {
        n(r.ocp_smart?.media_read_bytes)
    }),
    ("ocp_smart.throttle_events", |r| {
        Some(r.ocp_smart?.throttle_events.into())
    }),
    ("ocp_smart.pcie_correctable_errors", |r| {
        Some(r.ocp_smart?.pcie_correctable_errors as f64)
    }),
    ("ocp_smart.incomplete_shutdowns", |r| {
        Some(r.ocp_smart?.incomplete_shutdowns.into())
    }),
    ("ocp_smart.log_page_version", |r| {
        Some(r.ocp_smart?.log_page_version.into())
    }),
];

#[derive(Clone, Copy)]
enum Shown {
    DataUnits,
    Count,
    Percent,
    Minutes,
    Seconds,
}

impl Shown {
    fn of(self, v: f64) -> String {
        match self {
            // NVMe: one unit is 1000 × 512 bytes.
            Shown::DataUnits => data((v.max(0.0) * DATA_UNIT_BYTES as f64) as u64),
            Shown::Count => format!("{v}"),
            Shown::Percent => format!("{v}%"),
            Shown::Minutes => count(v.max(0.0) as usize, "minute"),
            Shown::Seconds => format_value(v, Unit::Seconds),
        }
    }

    fn change(self, d: f64) -> String {
        if d == 0.0 {
            return "no change".into();
        }
        let sign = if d > 0.0 { "+" } else { "-" };
        format!("{sign}{}", self.of(d.abs()))
    }
}

/// A reading's other counters and its ATA attributes (one row each, keyed by id and name,
/// with the raw value, as smartctl users compare them).
fn other_counters(r: &SmartReading) -> Vec<(String, f64)> {
    let sensors = r.sensors_c.iter().enumerate().flat_map(|(i, x)| {
        [
            (format!("sensors_c.{i}.sensor"), f64::from(x.sensor)),
            (format!("sensors_c.{i}.c"), f64::from(x.c)),
        ]
    });
    let counters = OTHER
        .iter()
        .filter_map(|(k, f)| Some((k.to_string(), f(r)?)));
    let attributes = r.ata_attributes.iter().map(|a| {
        let name = a.name.as_deref().unwrap_or("attribute");
        (format!("ATA {} {name} (raw)", a.id), a.raw as f64)
    });
    sensors.chain(counters).chain(attributes).collect()
}

/// The samples with a SMART reading, first and last: (its time, the reading).
fn ends(s: &Session) -> Option<((f64, SmartReading), (f64, SmartReading))> {
    let before = s.telemetry.iter().find_map(smart_of)?;
    let mut after = s.telemetry.iter().rev().find_map(smart_of)?;
    // The ATA table is kept in a sample only when it changed (at most once a minute): the
    // after side's table is that of the last sample that holds one.
    let table = s.telemetry.iter().rev().filter_map(smart_of);
    if let Some(t) = table.map(|(_, r)| r.ata_attributes).find(|a| !a.is_empty()) {
        after.1.ata_attributes = t;
    }
    Some((before, after))
}

/// SMART before and after: what changed and matters, then any other counter that changed.
pub fn smart_section(o: &mut String, s: &Session, heading: &str) {
    let _ = writeln!(o, "<{heading}>SMART before and after</{heading}>");
    let temps: Vec<f64> = s
        .telemetry
        .iter()
        .filter_map(|x| x.temperature_c())
        .filter(|c| c.is_finite())
        .collect();
    let mut rows = Vec::new();
    if let (Some(first), Some(last)) = (temps.first(), temps.last()) {
        let min = temps.iter().cloned().fold(f64::INFINITY, f64::min);
        let max = temps.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        rows.push(vec![
            "temperature (min / max in the run)".to_string(),
            format!("{first:.0} °C"),
            format!("{last:.0} °C"),
            format!("{min:.0} °C / {max:.0} °C"),
        ]);
    }
    let Some(((bt, before), (at, after))) = ends(s) else {
        if !rows.is_empty() {
            grid(o, "smart", &["figure", "before", "after", "change"], &rows);
        }
        o.push_str("<p class=\"note\">No SMART samples in this session.</p>\n");
        return;
    };
    rows.push(vec![
        "health".into(),
        health(Some(&before)),
        health(Some(&after)),
        String::new(),
    ]);
    for (name, shown, figure) in FIGURES {
        let (b, a) = (figure(&before), figure(&after));
        if b.is_none() && a.is_none() {
            continue;
        }
        rows.push(vec![
            name.to_string(),
            b.map(|v| shown.of(v)).unwrap_or_default(),
            a.map(|v| shown.of(v)).unwrap_or_default(),
            b.zip(a)
                .map(|(b, a)| shown.change(a - b))
                .unwrap_or_default(),
        ]);
    }
    if rows
        .iter()
        .all(|r| r[0] == "health" && r[1] == "unknown" && r[2] == "unknown")
    {
        o.push_str(
            "<p class=\"note\">The samples hold no SMART figures (the drive, or the layer \
             between it and this host, gave none).</p>\n",
        );
        return;
    }
    grid(o, "smart", &["figure", "before", "after", "change"], &rows);
    let (bt, at) = (
        format_value(bt, Unit::Seconds),
        format_value(at, Unit::Seconds),
    );
    para(
        o,
        "note",
        &format!("Before: the sample at {bt}; after: the sample at {at}."),
    );
    let a = other_counters(&after);
    let other: Vec<Vec<String>> = other_counters(&before)
        .into_iter()
        .filter_map(|(k, vb)| {
            let va = a.iter().find(|(ka, _)| *ka == k)?.1;
            (va != vb).then(|| {
                vec![
                    k,
                    format!("{vb}"),
                    format!("{va}"),
                    format!("{:+}", va - vb),
                ]
            })
        })
        .collect();
    if !other.is_empty() {
        o.push_str("<h3>Other counters that changed</h3>\n");
        grid(
            o,
            "smart-other",
            &["counter", "before", "after", "change"],
            &other,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::telemetry::reading::{
        OcpSmartHealth, SensorTemp, ThermalManagement, ThermalThrottle, ThrottleStatus,
    };

    /// Every number of a reading is a figure, a temperature or one of the other counters:
    /// the literal names every field (a new field fails to compile here until it is sorted),
    /// and the reading's own JSON is walked for its numbers.
    #[test]
    fn every_number_of_a_reading_is_a_figure_a_temperature_or_another_counter() {
        let r = SmartReading {
            health: Default::default(),
            device: Some("/dev/nvme0".into()),
            model: Some("m".into()),
            serial: Some("123".into()),
            firmware: Some("f".into()),
            temperature_c: Some(40),
            temperature_unknown: None,
            sensors_c: vec![SensorTemp { sensor: 1, c: 41 }],
            warning_temp_c: Some(70),
            critical_temp_c: Some(80),
            critical_warning: Some(1),
            available_spare: Some(2),
            percentage_used: Some(3),
            data_units_read: Some(4),
            data_units_written: Some(5),
            host_read_commands: Some(6),
            host_write_commands: Some(7),
            power_on_hours: Some(8),
            power_cycles: Some(9),
            unsafe_shutdowns: Some(10),
            media_errors: Some(11),
            kind: None,
            error_log_entries: Some(12),
            warning_temp_minutes: Some(13),
            critical_temp_minutes: Some(14),
            self_test_errors: Some(15),
            ata_attributes: Vec::new(),
            scsi_grown_defects: Some(16),
            scsi_error_counters: Vec::new(),
            smartctl_exit_status: Some(17),
            power_state: Some(18),
            power_state_max_w: Some(19.5),
            power_w: Some(20.5),
            thermal_throttle: Some(ThermalThrottle {
                tmt1_transitions: 21,
                tmt2_transitions: 22,
                tmt1_seconds: 23,
                tmt2_seconds: 24,
            }),
            thermal_management: Some(ThermalManagement {
                supported: true,
                tmt1_c: Some(25),
                tmt2_c: Some(26),
                mntmt_c: Some(27),
                mxtmt_c: Some(28),
            }),
            temperature_thresholds: Vec::new(),
            ocp_smart: Some(OcpSmartHealth {
                media_written_bytes: Some(29),
                media_read_bytes: Some(30),
                throttle_status: ThrottleStatus::Unthrottled,
                throttle_events: 31,
                max_temperature_c: Some(90),
                pcie_correctable_errors: 32,
                incomplete_shutdowns: 33,
                log_page_version: 34,
            }),
            source: None,
            notes: Vec::new(),
        };
        fn numbers(prefix: &str, v: &serde_json::Value, out: &mut Vec<String>) {
            match v {
                serde_json::Value::Object(m) => m.iter().for_each(|(k, x)| {
                    let p = if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    numbers(&p, x, out)
                }),
                serde_json::Value::Array(a) => a
                    .iter()
                    .enumerate()
                    .for_each(|(i, x)| numbers(&format!("{prefix}.{i}"), x, out)),
                serde_json::Value::Number(_) => out.push(prefix.into()),
                _ => {}
            }
        }
        let mut found = Vec::new();
        numbers("", &serde_json::to_value(&r).expect("json"), &mut found);
        let figures = [
            "available_spare",
            "percentage_used",
            "data_units_read",
            "data_units_written",
            "unsafe_shutdowns",
            "media_errors",
            "error_log_entries",
            "thermal_throttle.tmt1_seconds",
            "thermal_throttle.tmt2_seconds",
        ];
        found.retain(|k| !k.contains("temp") && !figures.contains(&k.as_str()));
        let mut counters: Vec<String> = other_counters(&r).into_iter().map(|(k, _)| k).collect();
        counters.sort();
        found.sort();
        assert_eq!(counters, found);
        let shown = other_counters(&r);
        assert_eq!(
            shown.iter().find(|(k, _)| k == "power_w").map(|x| x.1),
            Some(20.5)
        );
        assert_eq!(
            shown
                .iter()
                .find(|(k, _)| k == "sensors_c.0.c")
                .map(|x| x.1),
            Some(41.0)
        );
    }
}
