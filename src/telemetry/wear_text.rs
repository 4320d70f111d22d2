//! What a run did to the drive, in words: the line a headless run ends with and the cells
//! of the report's table. Only what the drive reports is said.

use super::wear::{MediaCounter, WearSpan};
use crate::units::format_size;

/// The columns of [`cells`], in order.
pub const COLUMNS: [&str; 10] = [
    "host wrote",
    "drivescope wrote",
    "host read",
    "drivescope read",
    "media wrote",
    "WAF",
    "media errors",
    "error log entries",
    "above warning temp",
    "percentage used",
];

fn bytes(b: Option<u64>) -> Option<String> {
    b.map(format_size)
}

fn plus(n: Option<u64>) -> Option<String> {
    n.map(|n| format!("+{n}"))
}

fn minutes(warn: Option<u64>, crit: Option<u64>) -> Option<String> {
    match (warn, crit) {
        (Some(w), Some(c)) => Some(format!("+{w} min (critical +{c} min)")),
        (Some(w), None) => Some(format!("+{w} min")),
        (None, Some(c)) => Some(format!("critical +{c} min")),
        (None, None) => None,
    }
}

fn waf(s: &WearSpan) -> Option<String> {
    let w = s.drive.write_amplification?;
    Some(match s.drive.media_counter {
        Some(MediaCounter::AtaProgramPages) => format!("{w:.2} (NAND pages)"),
        _ => format!("{w:.2}"),
    })
}

/// What drivescope counted beside what the drive counted: "agrees" or how far off.
fn own(drive: Option<u64>, own: u64, agrees: Option<bool>) -> Option<String> {
    drive?;
    Some(match agrees {
        Some(false) => format!("{} (differs)", format_size(own)),
        _ => format_size(own),
    })
}

/// The report's cells of `s`, under [`COLUMNS`]; empty where the drive does not say.
pub fn cells(s: &WearSpan) -> Vec<String> {
    let d = &s.drive;
    [
        bytes(d.host_written_bytes),
        own(
            d.host_written_bytes,
            s.drivescope_written_bytes,
            s.written_agrees(),
        ),
        bytes(d.host_read_bytes),
        own(d.host_read_bytes, s.drivescope_read_bytes, s.read_agrees()),
        bytes(d.media_written_bytes),
        waf(s),
        plus(d.media_errors),
        plus(d.error_log_entries),
        minutes(d.warning_temp_minutes, d.critical_temp_minutes),
        d.percentage_used.map(|p| format!("{p:+}")),
    ]
    .into_iter()
    .map(Option::unwrap_or_default)
    .collect()
}

/// One line: "drive: host wrote 1GiB (drivescope 1GiB), media wrote …, WAF 1.50, media
/// errors +0, …", with the fields the drive reports; `None` when it reports none.
pub fn line(s: &WearSpan) -> Option<String> {
    let d = &s.drive;
    let mut parts = Vec::new();
    let with_own = |what: &str, drive: Option<u64>, own: u64, agrees: Option<bool>| {
        let drive = drive?;
        let off = if agrees == Some(false) {
            ", differs"
        } else {
            ""
        };
        Some(format!(
            "{what} {} (drivescope {}{off})",
            format_size(drive),
            format_size(own)
        ))
    };
    parts.extend(with_own(
        "host wrote",
        d.host_written_bytes,
        s.drivescope_written_bytes,
        s.written_agrees(),
    ));
    parts.extend(with_own(
        "host read",
        d.host_read_bytes,
        s.drivescope_read_bytes,
        s.read_agrees(),
    ));
    parts.extend(bytes(d.media_written_bytes).map(|b| format!("media wrote {b}")));
    parts.extend(waf(s).map(|w| format!("WAF {w}")));
    parts.extend(plus(d.media_errors).map(|n| format!("media errors {n}")));
    parts.extend(plus(d.error_log_entries).map(|n| format!("error log entries {n}")));
    parts.extend(
        minutes(d.warning_temp_minutes, d.critical_temp_minutes)
            .map(|m| format!("above warning temperature {m}")),
    );
    parts.extend(d.percentage_used.map(|p| format!("percentage used {p:+}")));
    (!parts.is_empty()).then(|| format!("drive: {}", parts.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::telemetry::DriveWear;

    #[test]
    fn only_what_the_drive_reports() {
        let s = WearSpan {
            step: None,
            drivescope_written_bytes: 1 << 30,
            drivescope_read_bytes: 0,
            drive: DriveWear {
                host_written_bytes: Some(2098 * 512_000),
                host_read_bytes: Some(0),
                host_unit_bytes: Some(512_000),
                media_errors: Some(0),
                error_log_entries: Some(1),
                warning_temp_minutes: Some(0),
                critical_temp_minutes: Some(0),
                percentage_used: Some(0),
                ..DriveWear::default()
            },
        };
        assert_eq!(
            line(&s).as_deref(),
            Some(
                "drive: host wrote 1.00GiB (drivescope 1GiB), host read 0B (drivescope 0B), \
                 media errors +0, error log entries +1, above warning temperature +0 min \
                 (critical +0 min), percentage used +0"
            )
        );
        let c = cells(&s);
        assert_eq!(c.len(), COLUMNS.len());
        assert_eq!(c[4], "", "no media writes reported");
        let off = WearSpan {
            drivescope_written_bytes: 1 << 20,
            ..s
        };
        assert!(line(&off).is_some_and(|l| l.contains("(drivescope 1MiB, differs)")));
        assert_eq!(line(&WearSpan::default()), None);
    }
}
