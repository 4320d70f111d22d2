//! The drive in the report: its identity as fields a reader knows (model, serial exactly as
//! the drive gives it, firmware, capacity, interface, health), and SMART before and after as
//! the figures that changed and matter (data written and read, media errors, temperatures,
//! endurance used, time over the temperature thresholds), never its identity.

use std::fmt::Write;

use serde_yaml::Value;

use super::page::{capacity, count, data, flatten, grid, kv_table};
use super::svg::{esc, format_value, Unit};
use crate::session::{DiskIdentity, DriveIdentity, Sample, Session};
use crate::telemetry::reading::DATA_UNIT_BYTES;
use crate::telemetry::Health;

/// A text field as recorded: a string as it is (a serial of digits stays its digits), a
/// whole number in its digits, never through a float.
fn text(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) if !s.trim().is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

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

/// The last telemetry sample's SMART mapping, if any.
fn last_smart(s: &Session) -> Option<Value> {
    s.telemetry.iter().rev().find_map(|x| {
        let v = x.value();
        v.get("smart").filter(|m| m.is_mapping()).cloned()
    })
}

/// The drive's health verdict, from the last SMART reading.
fn health(smart: Option<&Value>) -> String {
    match smart.and_then(|m| m.get("health")) {
        Some(h) => serde_yaml::from_value::<Health>(h.clone())
            .map_or_else(|_| "unknown".to_string(), |h| h.to_string()),
        None => "not read (no SMART samples in this session)".into(),
    }
}

/// One disk's rows: model, serial, firmware, capacity, interface, block sizes, device.
fn disk_rows(d: &DiskIdentity, smart: Option<&Value>) -> Vec<(String, String)> {
    let field =
        |own: &Option<String>, k: &str| said(own).or_else(|| text(smart.and_then(|m| m.get(k))));
    let unknown = || "-".to_string();
    let mut rows = vec![
        (
            "model".to_string(),
            field(&d.model, "model").unwrap_or_else(unknown),
        ),
        (
            "serial".into(),
            field(&d.serial, "serial").unwrap_or_else(unknown),
        ),
        (
            "firmware".into(),
            field(&d.firmware, "firmware").unwrap_or_else(unknown),
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
    let smart = last_smart(s);
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
        let _ = writeln!(
            o,
            "<p class=\"note\">The target spans {}.</p>",
            count(list.len(), "disk")
        );
    }
    for d in list {
        let mut rows = disk_rows(d, smart.as_ref());
        rows.push(("health".into(), health(smart.as_ref())));
        kv_table(o, "drive", &rows);
    }
    if let Some(bd) = said(&Some(drive.block_device.clone())) {
        let _ = writeln!(
            o,
            "<p class=\"note\">The target {} is on {}.</p>",
            esc(&s.target.path),
            esc(&format!("/dev/{bd}"))
        );
    }
}

/// A SMART figure of a reading, by its dotted path (`thermal_throttle.tmt1_seconds`).
fn number(smart: &Value, key: &str) -> Option<f64> {
    key.split('.')
        .try_fold(smart, |v, k| v.get(k))
        .and_then(Value::as_f64)
}

/// The SMART figures a review compares, each with how it reads: (key, name, how shown).
const FIGURES: [(&str, &str, Shown); 11] = [
    ("data_units_written", "data written", Shown::DataUnits),
    ("data_units_read", "data read", Shown::DataUnits),
    ("media_errors", "media errors", Shown::Count),
    ("error_log_entries", "error log entries", Shown::Count),
    ("percentage_used", "endurance used", Shown::Percent),
    ("available_spare", "available spare", Shown::Percent),
    (
        "warning_temp_minutes",
        "time over the warning temperature",
        Shown::Minutes,
    ),
    (
        "critical_temp_minutes",
        "time over the critical temperature",
        Shown::Minutes,
    ),
    (
        "thermal_throttle.tmt1_seconds",
        "time throttled (light, TMT1)",
        Shown::Seconds,
    ),
    (
        "thermal_throttle.tmt2_seconds",
        "time throttled (heavy, TMT2)",
        Shown::Seconds,
    ),
    ("unsafe_shutdowns", "unsafe shutdowns", Shown::Count),
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

/// Numeric leaves of a sample's `smart` mapping: an ATA attribute is one row, keyed by its
/// id and name, with its raw value, as smartctl users compare them; text (identity) is left
/// out.
fn smart_numbers(smart: &Value) -> Vec<(String, f64)> {
    let mut rows = Vec::new();
    let mut attributes = Vec::new();
    let mut rest = smart.clone();
    if let Some(m) = rest.as_mapping_mut() {
        if let Some(Value::Sequence(attrs)) = m.remove("ata_attributes") {
            attributes = attrs;
        }
        m.remove("scsi_error_counters");
        m.remove("health");
    }
    drop_text(&mut rest);
    flatten("", &rest, &mut rows);
    let mut numbers: Vec<(String, f64)> = rows
        .into_iter()
        .filter_map(|(k, v)| Some((k, v.parse::<f64>().ok()?)))
        .collect();
    for a in &attributes {
        let (Some(id), Some(raw)) = (a.get("id").and_then(Value::as_u64), a.get("raw")) else {
            continue;
        };
        let Some(raw) = raw.as_f64() else { continue };
        let name = a.get("name").and_then(Value::as_str).unwrap_or("attribute");
        numbers.push((format!("ATA {id} {name} (raw)"), raw));
    }
    numbers
}

/// `v` with its text leaves taken out: a serial of digits (`19666372154600481`) is text,
/// never a number to compare (nor one read as a float, and mangled).
fn drop_text(v: &mut Value) {
    match v {
        Value::String(_) => *v = Value::Null,
        Value::Mapping(m) => m.values_mut().for_each(drop_text),
        Value::Sequence(items) => items.iter_mut().for_each(drop_text),
        Value::Tagged(t) => drop_text(&mut t.value),
        _ => {}
    }
}

/// The samples with a SMART mapping, first and last: (its time, the mapping).
fn ends(s: &Session) -> Option<((f64, Value), (f64, Value))> {
    let has_smart = |x: &Sample| {
        let v = x.value();
        let t = v.get("t").and_then(Value::as_f64).unwrap_or(0.0);
        v.get("smart")
            .filter(|m| m.is_mapping())
            .map(|m| (t, m.clone()))
    };
    let before = s.telemetry.iter().find_map(has_smart)?;
    let mut after = s.telemetry.iter().rev().find_map(has_smart)?;
    // The ATA table is kept in a sample only when it changed (at most once a minute): the
    // after side's table is that of the last sample that holds one.
    let table = s.telemetry.iter().rev().find_map(|x| {
        x.value()
            .get("smart")
            .and_then(|m| m.get("ata_attributes"))
            .cloned()
    });
    if let (Some(t), Some(m)) = (table, after.1.as_mapping_mut()) {
        m.insert("ata_attributes".into(), t);
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
    for (key, name, shown) in FIGURES {
        let (b, a) = (number(&before, key), number(&after, key));
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
    let _ = writeln!(
        o,
        "<p class=\"note\">Before: the sample at {}; after: the sample at {}.</p>",
        esc(&format_value(bt, Unit::Seconds)),
        esc(&format_value(at, Unit::Seconds))
    );
    let known = |k: &str| FIGURES.iter().any(|(f, _, _)| *f == k) || k.contains("temp");
    let a = smart_numbers(&after);
    let other: Vec<Vec<String>> = smart_numbers(&before)
        .into_iter()
        .filter(|(k, _)| !known(k))
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
