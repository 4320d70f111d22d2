//! Wall-clock timestamps for session names and records: local time from libc, formatted
//! as RFC 3339 (`2026-11-30T08:53:46+01:00`) or as a file-name-safe stamp
//! (`2026-11-30T08-53-46`).

use std::time::{SystemTime, UNIX_EPOCH};

/// A broken-down local time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LocalTime {
    pub year: i32,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
    /// Offset from UTC, seconds east.
    pub offset_s: i64,
}

impl LocalTime {
    /// The local time of `t` (UTC when the C library cannot tell).
    pub fn of(t: SystemTime) -> LocalTime {
        let secs = t
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs() as i64)
            .unwrap_or(0);
        let tt = secs as libc::time_t;
        // SAFETY: libc::tm is plain integers plus a `tm_zone` pointer, for which all
        // zeroes (null) is a valid value.
        let mut tm: libc::tm = unsafe { std::mem::zeroed() };
        // SAFETY: both pointers come from live references (`tt` read, `tm` exclusively
        // borrowed) for the call; localtime_r is the reentrant form: it writes only into
        // `tm`, not a shared static result. It reads TZ, and drivescope never changes the
        // environment, so no other thread races that read.
        let ok = unsafe { !libc::localtime_r(&tt, &mut tm).is_null() };
        if !ok {
            return LocalTime::utc(secs);
        }
        LocalTime {
            year: tm.tm_year + 1900,
            month: (tm.tm_mon + 1) as u32,
            day: tm.tm_mday as u32,
            hour: tm.tm_hour as u32,
            minute: tm.tm_min as u32,
            second: tm.tm_sec as u32,
            offset_s: tm.tm_gmtoff,
        }
    }

    /// `secs` since the epoch in UTC (civil-from-days, proleptic Gregorian).
    pub fn utc(secs: i64) -> LocalTime {
        let days = secs.div_euclid(86_400);
        let rem = secs.rem_euclid(86_400);
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z - era * 146_097;
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
        let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
        let year = (yoe + era * 400 + i64::from(month <= 2)) as i32;
        LocalTime {
            year,
            month,
            day,
            hour: (rem / 3600) as u32,
            minute: (rem / 60 % 60) as u32,
            second: (rem % 60) as u32,
            offset_s: 0,
        }
    }

    /// RFC 3339 with the UTC offset.
    pub fn rfc3339(&self) -> String {
        let off = if self.offset_s == 0 {
            "Z".to_string()
        } else {
            let sign = if self.offset_s < 0 { '-' } else { '+' };
            let a = self.offset_s.abs();
            format!("{sign}{:02}:{:02}", a / 3600, a / 60 % 60)
        };
        format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}{off}",
            self.year, self.month, self.day, self.hour, self.minute, self.second
        )
    }

    /// `YYYY-MM-DDTHH-MM-SS`, safe in file names everywhere.
    pub fn file_stamp(&self) -> String {
        format!(
            "{:04}-{:02}-{:02}T{:02}-{:02}-{:02}",
            self.year, self.month, self.day, self.hour, self.minute, self.second
        )
    }
}

/// Now, RFC 3339 local time.
pub fn now_rfc3339() -> String {
    LocalTime::of(SystemTime::now()).rfc3339()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_dates_match_known_epochs() {
        assert_eq!(LocalTime::utc(0).rfc3339(), "1970-01-01T00:00:00Z");
        // 2024-02-29 12:34:56 UTC, a leap day.
        assert_eq!(
            LocalTime::utc(1_709_210_096).rfc3339(),
            "2024-02-29T12:34:56Z"
        );
        assert_eq!(
            LocalTime::utc(1_709_210_096).file_stamp(),
            "2024-02-29T12-34-56"
        );
    }

    #[test]
    fn offsets_print_with_sign() {
        let mut t = LocalTime::utc(0);
        t.offset_s = -(5 * 3600 + 30 * 60);
        assert!(t.rfc3339().ends_with("-05:30"), "{}", t.rfc3339());
    }
}
