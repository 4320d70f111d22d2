//! Telemetry in words: a SMART reading as the `smart` command's text (health first, one
//! field a line, the fields its kind of device has; an ATA drive's attribute table and a
//! SCSI drive's error counter log as smartctl prints them) and a poller sample as the one
//! line of `smart --watch`.

use super::{
    AtaAttribute, AtaDecoded, DeviceKind, HealthReason, OcpSmartHealth, ScsiErrorCounter,
    SensorThresholds, SmartReading, TelemetrySample, ThermalManagement, ThrottleStatus, WhenFailed,
};

fn opt<T: std::fmt::Display>(v: Option<T>, unit: &str) -> String {
    v.map_or_else(|| "unknown".to_string(), |x| format!("{x}{unit}"))
}

/// The critical-warning byte with what each bit set means.
fn critical_warning_text(w: u8) -> String {
    let reasons = HealthReason::of_critical_warning(w);
    if reasons.is_empty() {
        return format!("{w:#04x} (none)");
    }
    let words: Vec<String> = reasons.iter().map(ToString::to_string).collect();
    format!("{w:#04x} ({})", words.join(", "))
}

/// The temperature, or why it is unknown.
fn temperature_text(r: &SmartReading) -> String {
    match (r.temperature_c, r.temperature_unknown) {
        (Some(c), _) => format!("{c} °C"),
        (None, Some(why)) => format!("unknown: {why}"),
        (None, None) => "unknown".to_string(),
    }
}

fn celsius(c: Option<i32>, none: &str) -> String {
    c.map_or_else(|| none.to_string(), |c| format!("{c} °C"))
}

/// Host controlled thermal management: TMT1/TMT2 and the range the host may set them in.
fn thermal_management_text(tm: &ThermalManagement) -> String {
    if !tm.supported {
        return "not supported by the controller".to_string();
    }
    let mut s = format!(
        "TMT1 {}, TMT2 {}",
        celsius(tm.tmt1_c, "off"),
        celsius(tm.tmt2_c, "off")
    );
    if tm.mntmt_c.is_some() || tm.mxtmt_c.is_some() {
        s.push_str(&format!(
            " (settable {} to {})",
            celsius(tm.mntmt_c, "unknown"),
            celsius(tm.mxtmt_c, "unknown")
        ));
    }
    s
}

/// Each temperature's over and under thresholds.
fn thresholds_text(ts: &[SensorThresholds]) -> String {
    let one = |t: &SensorThresholds| {
        let name = match t.sensor {
            0 => "composite".to_string(),
            n => format!("sensor {n}"),
        };
        format!(
            "{name} over {}, under {}",
            celsius(t.over_c, "none"),
            celsius(t.under_c, "none")
        )
    };
    ts.iter().map(one).collect::<Vec<_>>().join("; ")
}

fn ocp_throttle_text(o: &OcpSmartHealth) -> String {
    let now = match o.throttle_status {
        ThrottleStatus::Unthrottled => "not throttling".to_string(),
        ThrottleStatus::Throttled { level } => format!("throttling at level {level}"),
        ThrottleStatus::Reserved { value } => format!("status {value:#04x} (reserved)"),
    };
    let plural = if o.throttle_events == 1 { "" } else { "s" };
    format!("{now}, {} event{plural}", o.throttle_events)
}

type Line<'a> = &'a dyn Fn(&mut String, &str, String);

/// An NVMe data-unit count in bytes (a unit is 1000 × 512 bytes), the count beside.
fn data_units_text(units: Option<u64>) -> String {
    units.map_or_else(
        || "unknown".to_string(),
        |u| {
            let bytes = u128::from(u) * u128::from(super::reading::DATA_UNIT_BYTES);
            let human = crate::units::format_size(u64::try_from(bytes).unwrap_or(u64::MAX));
            format!("{bytes} bytes ({human}), {u} data units")
        },
    )
}

/// The fields of the NVMe SMART / Health log and the power state.
fn nvme_lines(s: &mut String, r: &SmartReading, line: Line<'_>) {
    line(
        s,
        "critical warning",
        opt(r.critical_warning.map(critical_warning_text), ""),
    );
    line(s, "available spare", opt(r.available_spare, " %"));
    line(s, "percentage used", opt(r.percentage_used, " %"));
    line(s, "data units read", data_units_text(r.data_units_read));
    line(
        s,
        "data units written",
        data_units_text(r.data_units_written),
    );
    line(s, "host read commands", opt(r.host_read_commands, ""));
    line(s, "host write commands", opt(r.host_write_commands, ""));
    line(s, "power-on hours", opt(r.power_on_hours, ""));
    line(s, "power cycles", opt(r.power_cycles, ""));
    line(s, "unsafe shutdowns", opt(r.unsafe_shutdowns, ""));
    line(s, "media errors", opt(r.media_errors, ""));
    line(s, "error log entries", opt(r.error_log_entries, ""));
    line(s, "warning temp time", opt(r.warning_temp_minutes, " min"));
    line(
        s,
        "critical temp time",
        opt(r.critical_temp_minutes, " min"),
    );
    let ps = match (r.power_state, r.power_state_max_w) {
        (Some(p), Some(w)) => format!("{p} (ceiling {w:.2} W from its descriptor)"),
        (Some(p), None) => p.to_string(),
        (None, _) => "unknown".to_string(),
    };
    line(s, "power state", ps);
    line(
        s,
        "measured power",
        r.power_w.map_or_else(
            || "not reported by the drive".into(),
            |w| format!("{w:.2} W"),
        ),
    );
    if let Some(t) = r.thermal_throttle {
        line(
            s,
            "thermal throttle",
            format!(
                "TMT1 {}× {} s, TMT2 {}× {} s",
                t.tmt1_transitions, t.tmt1_seconds, t.tmt2_transitions, t.tmt2_seconds
            ),
        );
    }
    if let Some(o) = &r.ocp_smart {
        line(s, "OCP throttle", ocp_throttle_text(o));
        line(
            s,
            "OCP max temperature",
            celsius(o.max_temperature_c, "not reported"),
        );
        line(
            s,
            "PCIe correctable",
            format!("{} errors", o.pcie_correctable_errors),
        );
        line(
            s,
            "incomplete shutdowns",
            o.incomplete_shutdowns.to_string(),
        );
    }
}

/// The FLAGS column of `smartctl -A -f brief`: P O S R C K, then `+` for other bits.
fn ata_flags_text(flags: u16) -> String {
    use super::attributes::ata_flag as f;
    let bits = [
        (f::PREFAILURE, 'P'),
        (f::ONLINE, 'O'),
        (f::PERFORMANCE, 'S'),
        (f::ERROR_RATE, 'R'),
        (f::EVENT_COUNT, 'C'),
        (f::SELF_PRESERVING, 'K'),
    ];
    let mut out: String = bits
        .iter()
        .map(|&(b, c)| if flags & b != 0 { c } else { '-' })
        .collect();
    out.push(if flags & 0xFFC0 != 0 { '+' } else { ' ' });
    out
}

fn ata_decoded_text(d: &AtaDecoded) -> String {
    match *d {
        AtaDecoded::Hours { hours } => format!("{hours} h ({:.1} days)", hours as f64 / 24.0),
        AtaDecoded::Celsius { c } if c.fract() == 0.0 => format!("{c:.0} °C"),
        AtaDecoded::Celsius { c } => format!("{c:.1} °C"),
        AtaDecoded::Sectors { count: 1 } => "1 sector".to_string(),
        AtaDecoded::Sectors { count } => format!("{count} sectors"),
        AtaDecoded::Bytes { bytes, lba_bytes } => format!(
            "{} ({lba_bytes}-byte LBAs)",
            crate::units::format_size(u64::try_from(bytes).unwrap_or(u64::MAX))
        ),
    }
}

/// The attribute table as `smartctl -A -f brief` prints it, with a column of what the
/// standard attributes' raw values mean.
fn ata_table(s: &mut String, attrs: &[AtaAttribute]) {
    let three = |v: Option<u8>| v.map_or_else(|| "---".to_string(), |v| format!("{v:03}"));
    s.push_str(
        "\nID# ATTRIBUTE_NAME          FLAGS    VALUE WORST THRESH FAIL RAW_VALUE               DECODED\n",
    );
    for a in attrs {
        let fail = match a.when_failed {
            Some(WhenFailed::Now) => "NOW",
            Some(WhenFailed::Past) => "Past",
            _ => "-",
        };
        let raw = a.raw_string.clone().unwrap_or_else(|| a.raw.to_string());
        let row = format!(
            "{:>3} {:<24}{}  {:<4}  {:<4}  {:<4}   {fail:<5}{raw:<24}{}",
            a.id,
            a.name.as_deref().unwrap_or("Unknown_Attribute"),
            ata_flags_text(a.flags),
            three(a.value),
            three(a.worst),
            three(a.threshold),
            a.decoded.as_ref().map(ata_decoded_text).unwrap_or_default(),
        );
        s.push_str(row.trim_end());
        s.push('\n');
    }
}

/// The SCSI error counter log as smartctl prints it.
fn scsi_counters_table(s: &mut String, rows: &[ScsiErrorCounter]) {
    let n = |v: Option<u64>| v.map_or_else(|| "-".to_string(), |v| v.to_string());
    s.push_str(
        "\nError counter log:\n           Errors Corrected by           Total   Correction     Gigabytes    Total\n               ECC          rereads/    errors   algorithm      processed    uncorrected\n           fast | delayed   rewrites  corrected  invocations   [10^9 bytes]  errors\n",
    );
    for c in rows {
        let gb = c
            .gigabytes_processed
            .map_or_else(|| "-".to_string(), |g| format!("{g:.3}"));
        s.push_str(&format!(
            "{:<8}{:>8} {:>8}  {:>8}  {:>8}   {:>8}   {gb:>12}    {:>8}\n",
            format!("{}:", c.page.as_str()),
            n(c.corrected_ecc_fast),
            n(c.corrected_ecc_delayed),
            n(c.corrected_rereads_rewrites),
            n(c.total_corrected),
            n(c.correction_algorithm_invocations),
            n(c.total_uncorrected),
        ));
    }
}

/// The text form of one reading: its health first, then the fields its kind of device has
/// (an ATA drive has no NVMe health log, an NVMe drive no attribute table).
pub fn reading_text(r: &SmartReading) -> String {
    let mut s = String::new();
    let line = |s: &mut String, k: &str, v: String| s.push_str(&format!("{k:<20} {v}\n"));
    line(&mut s, "health", r.health.to_string());
    line(&mut s, "device", opt(r.device.as_deref(), ""));
    line(&mut s, "model", opt(r.model.as_deref(), ""));
    line(&mut s, "serial", opt(r.serial.as_deref(), ""));
    line(&mut s, "firmware", opt(r.firmware.as_deref(), ""));
    line(
        &mut s,
        "source",
        r.source
            .map_or_else(|| "none answered".to_string(), |x| x.as_str().to_string()),
    );
    if r.source.is_none() {
        // Nothing answered: the notes say why, without a column of "unknown".
        for n in &r.notes {
            line(&mut s, "note", n.clone());
        }
        return s;
    }
    line(&mut s, "temperature", temperature_text(r));
    if !r.sensors_c.is_empty() {
        let list: Vec<String> = r
            .sensors_c
            .iter()
            .map(|t| format!("#{} {} °C", t.sensor, t.c))
            .collect();
        line(&mut s, "sensors", list.join(", "));
    }
    line(
        &mut s,
        "warning threshold",
        celsius(r.warning_temp_c, "not reported"),
    );
    line(
        &mut s,
        "critical threshold",
        celsius(r.critical_temp_c, "not reported"),
    );
    if !r.temperature_thresholds.is_empty() {
        line(
            &mut s,
            "temp thresholds",
            thresholds_text(&r.temperature_thresholds),
        );
    }
    if let Some(tm) = &r.thermal_management {
        line(&mut s, "thermal management", thermal_management_text(tm));
    }
    match r.kind {
        Some(DeviceKind::Nvme) | None => nvme_lines(&mut s, r, &line),
        Some(DeviceKind::Ata) => {
            line(&mut s, "power-on hours", opt(r.power_on_hours, ""));
            line(&mut s, "power cycles", opt(r.power_cycles, ""));
            // The logs are in smartctl's output only when asked for (`-l error`).
            if let Some(n) = r.error_log_entries {
                line(&mut s, "error log entries", n.to_string());
            }
            if let Some(n) = r.self_test_errors {
                line(&mut s, "self-test errors", n.to_string());
            }
        }
        Some(DeviceKind::Scsi) => {
            if let Some(p) = r.percentage_used {
                line(&mut s, "percentage used", format!("{p} %"));
            }
            line(&mut s, "power-on hours", opt(r.power_on_hours, ""));
            if let Some(n) = r.scsi_grown_defects {
                line(&mut s, "grown defects", n.to_string());
            }
        }
    }
    for n in &r.notes {
        line(&mut s, "note", n.clone());
    }
    if !r.ata_attributes.is_empty() {
        ata_table(&mut s, &r.ata_attributes);
    }
    if !r.scsi_error_counters.is_empty() {
        scsi_counters_table(&mut s, &r.scsi_error_counters);
    }
    s
}

/// One sample of the poller as `smart --watch` shows it: a line of figures, then a line
/// per note; each line ends with a newline.
pub fn sample_text(s: &TelemetrySample) -> String {
    let temp = opt(s.smart.as_ref().and_then(|r| r.temperature_c), " °C");
    let io = s.block.map_or_else(
        || "block stats unknown".to_string(),
        |b| {
            format!(
                "r {:.0} IOPS w {:.0} IOPS util {:.0}% in flight {}",
                b.read_iops, b.write_iops, b.util_percent, b.in_flight
            )
        },
    );
    let cpu = opt(s.host.map(|h| format!("{:.0}", h.cpu_percent)), "%");
    let health = s
        .smart
        .as_ref()
        .filter(|r| r.health.is_failing())
        .map(|r| format!("  health {}", r.health))
        .unwrap_or_default();
    let mut out = format!(
        "t={:.1}s  temp {temp}  {io}  host cpu {cpu}{health}\n",
        s.t_ns as f64 / 1e9
    );
    for n in &s.notes {
        out.push_str(&format!("  note: {n}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::telemetry::Source;

    #[test]
    fn thermal_management_thresholds_and_the_ocp_log_in_words() {
        let r = SmartReading {
            source: Some(Source::NvmeAdmin),
            thermal_management: Some(ThermalManagement {
                supported: true,
                tmt1_c: Some(80),
                tmt2_c: None,
                mntmt_c: Some(50),
                mxtmt_c: Some(95),
            }),
            temperature_thresholds: vec![
                SensorThresholds {
                    sensor: 0,
                    over_c: Some(70),
                    under_c: None,
                },
                SensorThresholds {
                    sensor: 2,
                    over_c: Some(85),
                    under_c: Some(-5),
                },
            ],
            ocp_smart: Some(OcpSmartHealth {
                media_written_bytes: None,
                media_read_bytes: None,
                throttle_status: ThrottleStatus::Throttled { level: 2 },
                throttle_events: 1,
                max_temperature_c: None,
                pcie_correctable_errors: 12,
                incomplete_shutdowns: 3,
                log_page_version: 4,
            }),
            ..Default::default()
        };
        let text = reading_text(&r);
        for line in [
            "temp thresholds      composite over 70 °C, under none; sensor 2 over 85 °C, under -5 °C",
            "thermal management   TMT1 80 °C, TMT2 off (settable 50 °C to 95 °C)",
            "OCP throttle         throttling at level 2, 1 event",
            "OCP max temperature  not reported",
            "PCIe correctable     12 errors",
            "incomplete shutdowns 3",
        ] {
            assert!(text.contains(&format!("{line}\n")), "{line:?} in:\n{text}");
        }
        let without = SmartReading {
            thermal_management: Some(ThermalManagement::default()),
            ..r
        };
        assert!(reading_text(&without)
            .contains("thermal management   not supported by the controller\n"));
    }
}
