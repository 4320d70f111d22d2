//! Telemetry in words: a SMART reading as the `smart` command's text (health first, one
//! field a line) and a poller sample as the one line of `smart --watch`.

use super::{
    HealthReason, OcpSmartHealth, SensorThresholds, SmartReading, TelemetrySample,
    ThermalManagement, ThrottleStatus,
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

/// The text form of one reading: its health first.
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
    line(&mut s, "warning threshold", opt(r.warning_temp_c, " °C"));
    line(&mut s, "critical threshold", opt(r.critical_temp_c, " °C"));
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
    line(
        &mut s,
        "critical warning",
        opt(r.critical_warning.map(critical_warning_text), ""),
    );
    line(&mut s, "available spare", opt(r.available_spare, " %"));
    line(&mut s, "percentage used", opt(r.percentage_used, " %"));
    line(&mut s, "data units read", opt(r.data_units_read, ""));
    line(&mut s, "data units written", opt(r.data_units_written, ""));
    line(&mut s, "power-on hours", opt(r.power_on_hours, ""));
    let ps = match (r.power_state, r.power_state_max_w) {
        (Some(p), Some(w)) => format!("{p} (ceiling {w:.2} W from its descriptor)"),
        (Some(p), None) => p.to_string(),
        (None, _) => "unknown".to_string(),
    };
    line(&mut s, "power state", ps);
    line(
        &mut s,
        "measured power",
        r.power_w.map_or_else(
            || "not reported by the drive".into(),
            |w| format!("{w:.2} W"),
        ),
    );
    if let Some(t) = r.thermal_throttle {
        line(
            &mut s,
            "thermal throttle",
            format!(
                "TMT1 {}× {} s, TMT2 {}× {} s",
                t.tmt1_transitions, t.tmt1_seconds, t.tmt2_transitions, t.tmt2_seconds
            ),
        );
    }
    if let Some(o) = &r.ocp_smart {
        line(&mut s, "OCP throttle", ocp_throttle_text(o));
        line(
            &mut s,
            "OCP max temperature",
            celsius(o.max_temperature_c, "not reported"),
        );
        line(
            &mut s,
            "PCIe correctable",
            format!("{} errors", o.pcie_correctable_errors),
        );
        line(
            &mut s,
            "incomplete shutdowns",
            o.incomplete_shutdowns.to_string(),
        );
    }
    for n in &r.notes {
        line(&mut s, "note", n.clone());
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
