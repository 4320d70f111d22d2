//! Units as storage engineers write them: sizes (`4k`, `4KiB`, `1.5G`), durations (`90s`,
//! `2m`, `1m30s`, `500ms`), percentages (`25%`) and multiples (`2x`); and their printing.
//!
//! Sizes are read as drive vendors write them: `GB`, `TB` (and `kB`/`KB`, `MB`, `PB`) are
//! decimal (10^9, 10^12), `GiB`, `TiB` (`KiB`, `MiB`, `PiB`) binary (2^30, 2^40). A bare
//! letter is binary, as fio and dd read it: `4k` and `4K` are 4096 bytes, `10g` is 10 GiB. A
//! bare number is bytes. (A value in an fio job file is read as fio reads it, where `4KB` is
//! 4096 bytes and `4KiB` 4000: `fio::value`.)

use std::time::Duration;

use thiserror::Error;

/// A value that does not parse as the unit it was meant to be.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum UnitError {
    #[error("'{0}' is not a size (examples: 4k, 4KiB, 128k, 1GiB, 512)")]
    Size(String),
    #[error("'{0}' is not a duration (examples: 90s, 2m, 1m30s, 500ms, 1h)")]
    Duration(String),
    #[error("'{0}' is not a percentage (example: 25%)")]
    Percent(String),
    #[error("'{0}' is not a multiple (example: 2x)")]
    Multiple(String),
    #[error("'{0}' is too large")]
    Overflow(String),
    #[error(
        "'{0}' repeats a unit or puts a smaller one first (write units once, largest first: 1h30m)"
    )]
    DurationOrder(String),
    #[error("'{0}' is not a rate (an IOPS figure such as 5000)")]
    Rate(String),
    #[error("rate '{0}' is outside {MIN_RATE_IOPS} to {MAX_RATE_IOPS} IOPS")]
    RateRange(String),
    #[error("'{0}' is not a temperature difference (examples: 0.5C, 2°C; 0 to {MAX_DELTA_C} °C)")]
    Celsius(String),
}

/// The largest temperature difference a rule may name: more than any drive's range.
pub const MAX_DELTA_C: f64 = 100.0;

/// The slowest rate a step can be paced at: one I/O per second.
pub const MIN_RATE_IOPS: f64 = 1.0;
/// The fastest: far past any drive, small enough to print and pace.
pub const MAX_RATE_IOPS: f64 = 100_000_000.0;

/// Parses a rate in IOPS: `5000`, `5000iops`, `2500.5`; from 1 to 100,000,000. The one
/// parser of rates, for the command line and presets alike.
pub fn parse_rate_iops(input: &str) -> Result<f64, UnitError> {
    let v = number_before(input, &["iops", "IOPS"])
        .ok_or_else(|| UnitError::Rate(input.to_string()))?;
    if !v.is_finite() || !(MIN_RATE_IOPS..=MAX_RATE_IOPS).contains(&v) {
        return Err(UnitError::RateRange(input.to_string()));
    }
    Ok(v)
}

/// The number of `input` less the first of `suffixes` it ends with (none needed), spaces
/// around either left out; `None` when it does not parse.
fn number_before(input: &str, suffixes: &[&str]) -> Option<f64> {
    let s = input.trim();
    let num = suffixes.iter().find_map(|x| s.strip_suffix(x)).unwrap_or(s);
    num.trim().parse().ok()
}

fn split_number(s: &str) -> (&str, &str) {
    let end = s
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_digit() || *c == '.'))
        .map(|(i, _)| i)
        .unwrap_or(s.len());
    (&s[..end], &s[end..])
}

/// Parses a byte size: `4k`, `4KiB`, `1.5G`, `512`, `1TiB` (binary), `10GB`, `4kB`, `2TB`
/// (decimal). The one parser of sizes, for the command line and presets alike.
pub fn parse_size(input: &str) -> Result<u64, UnitError> {
    let s = input.trim();
    let (num, suffix) = split_number(s);
    if num.is_empty() {
        return Err(UnitError::Size(input.to_string()));
    }
    let value: f64 = num
        .parse()
        .map_err(|_| UnitError::Size(input.to_string()))?;
    let mult: u64 = match suffix.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kib" => 1 << 10,
        "m" | "mib" => 1 << 20,
        "g" | "gib" => 1 << 30,
        "t" | "tib" => 1 << 40,
        "p" | "pib" => 1 << 50,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        "tb" => 1_000_000_000_000,
        "pb" => 1_000_000_000_000_000,
        _ => return Err(UnitError::Size(input.to_string())),
    };
    let bytes = value * mult as f64;
    if !bytes.is_finite() || bytes >= u64::MAX as f64 {
        return Err(UnitError::Overflow(input.to_string()));
    }
    if bytes.fract() != 0.0 {
        return Err(UnitError::Size(input.to_string()));
    }
    Ok(bytes as u64)
}

/// Parses a duration: `90s`, `2m`, `1m30s`, `500ms`, `1h`, `250us`; a bare number is seconds.
pub fn parse_duration(input: &str) -> Result<Duration, UnitError> {
    let s = input.trim();
    let err = || UnitError::Duration(input.to_string());
    if s.is_empty() {
        return Err(err());
    }
    let mut rest = s;
    let mut total = 0f64;
    // Each unit once, largest first (1h30m, not 1m1h nor 1h1h).
    let mut last_unit = f64::INFINITY;
    while !rest.is_empty() {
        let (num, after) = split_number(rest);
        if num.is_empty() {
            return Err(err());
        }
        let value: f64 = num.parse().map_err(|_| err())?;
        let unit_end = after
            .char_indices()
            .find(|(_, c)| c.is_ascii_digit() || *c == '.')
            .map(|(i, _)| i)
            .unwrap_or(after.len());
        let unit = &after[..unit_end];
        let secs = match unit.trim() {
            "" if after.is_empty() && total == 0.0 => 1.0,
            "ns" => 1e-9,
            "us" | "µs" => 1e-6,
            "ms" => 1e-3,
            "s" | "sec" | "secs" => 1.0,
            "m" | "min" | "mins" => 60.0,
            "h" | "hr" | "hours" => 3600.0,
            "d" | "days" => 86400.0,
            _ => return Err(err()),
        };
        if secs >= last_unit {
            return Err(UnitError::DurationOrder(input.to_string()));
        }
        last_unit = secs;
        total += value * secs;
        rest = &after[unit_end..];
    }
    if !total.is_finite() || total > 1e9 {
        return Err(UnitError::Overflow(input.to_string()));
    }
    Ok(Duration::from_secs_f64(total))
}

/// Parses a percentage `25%` (or `25`) into 25.0.
pub fn parse_percent(input: &str) -> Result<f64, UnitError> {
    number_before(input, &["%"])
        .filter(|v| v.is_finite() && *v >= 0.0)
        .ok_or_else(|| UnitError::Percent(input.to_string()))
}

/// Parses a temperature difference in degrees Celsius: `0.5C`, `2°C`, `1 C`; above 0 and
/// at most [`MAX_DELTA_C`]. The one parser of temperatures, for presets and the command line.
pub fn parse_celsius_delta(input: &str) -> Result<f64, UnitError> {
    number_before(input, &["°C", "C", "c"])
        .filter(|v| v.is_finite() && *v > 0.0 && *v <= MAX_DELTA_C)
        .ok_or_else(|| UnitError::Celsius(input.to_string()))
}

/// Parses a multiple `2x` (or `2`) into 2.0.
pub fn parse_multiple(input: &str) -> Result<f64, UnitError> {
    number_before(input, &["x", "X"])
        .filter(|v| v.is_finite() && *v > 0.0)
        .ok_or_else(|| UnitError::Multiple(input.to_string()))
}

/// Prints a byte count with the largest binary unit that keeps it exact when it is a whole
/// multiple (`4KiB`, `1GiB`), else with two decimals (`1.50GiB`).
pub fn format_size(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut unit = 0;
    let mut v = bytes;
    while unit < UNITS.len() - 1 && v >= 1024 && v.is_multiple_of(1024) {
        v /= 1024;
        unit += 1;
    }
    if v < 1024 || unit == UNITS.len() - 1 {
        return format!("{v}{}", UNITS[unit]);
    }
    let (f, unit) = binary_scaled(bytes);
    format!("{f:.2}{unit}")
}

/// `bytes` in the largest binary unit it reaches (below 1024 of the next): `(1.5, "GiB")`.
fn binary_scaled(bytes: u64) -> (f64, &'static str) {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let (mut v, mut unit) = (bytes as f64, 0);
    while v >= 1024.0 && unit < UNITS.len() - 1 {
        v /= 1024.0;
        unit += 1;
    }
    (v, UNITS[unit])
}

/// A size in binary units with a space before the unit, as people read it: `1 GiB`,
/// `4 KiB`, `1.50 GiB` ([`format_size`]'s figure).
pub fn format_binary(bytes: u64) -> String {
    let s = format_size(bytes);
    match s.find(|c: char| c.is_ascii_alphabetic()) {
        Some(i) => format!("{} {}", &s[..i], &s[i..]),
        None => s,
    }
}

/// A size the user gave, as given: in binary units when it is a whole number of them (`1 GiB`,
/// `4 KiB`), in decimal ones with the binary figure beside it when it is a whole number of
/// those, to two decimals at most (`10 GB (9.31 GiB)` from `--size 10GB`, `1.5 GB (1.40 GiB)`),
/// else binary to two decimals (`1.50 GiB`).
pub fn format_given(bytes: u64) -> String {
    let binary = format_binary(bytes);
    if !binary.contains('.') {
        return binary;
    }
    const UNITS: [(u64, &str); 5] = [
        (1_000_000_000_000_000, "PB"),
        (1_000_000_000_000, "TB"),
        (1_000_000_000, "GB"),
        (1_000_000, "MB"),
        (1_000, "kB"),
    ];
    // The largest unit that shows the count exactly with at most two decimals.
    let exact = UNITS.iter().find(|(unit, _)| {
        bytes >= *unit && (u128::from(bytes) * 100).is_multiple_of(u128::from(*unit))
    });
    let Some((unit, name)) = exact else {
        return binary;
    };
    let (whole, hundredths) = (bytes / unit, (bytes % unit) * 100 / unit);
    let figure = match hundredths {
        0 => whole.to_string(),
        h if h % 10 == 0 => format!("{whole}.{}", h / 10),
        h => format!("{whole}.{h:02}"),
    };
    format!("{figure} {name} ({binary})")
}

/// A capacity in decimal units as drives are sold: `7.68 TB`, `274.9 GB`, `268 MB`.
pub fn format_decimal(bytes: u64) -> String {
    let b = bytes as f64;
    if b >= 1e12 {
        format!("{:.2} TB", b / 1e12)
    } else if b >= 1e9 {
        format!("{:.1} GB", b / 1e9)
    } else {
        format!("{:.0} MB", b / 1e6)
    }
}

/// A drive's capacity as vendors print it, decimal, the binary size beside it (exact, or
/// to one decimal): `274.9 GB (256 GiB)`, `500.1 GB (465.8 GiB)`.
pub fn format_capacity(bytes: u64) -> String {
    let exact = format_binary(bytes);
    let beside = if exact.contains('.') {
        let (v, unit) = binary_scaled(bytes);
        format!("{v:.1} {unit}")
    } else {
        exact
    };
    format!("{} ({beside})", format_decimal(bytes))
}

/// `n` and `word`, plural unless `n` is 1 (`1 step`, `13 steps`, `0 errors`): how every
/// count drivescope prints is said.
pub fn count<N: std::fmt::Display + PartialEq + From<u8>>(n: N, word: &str) -> String {
    if n == N::from(1) {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// Prints a duration compactly: `500ms`, `90s`, `2m`, `1m30s`, `1h5m`.
pub fn format_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        return format!("{ms}ms");
    }
    let secs = d.as_secs();
    let (h, m, s) = (secs / 3600, (secs % 3600) / 60, secs % 60);
    let frac = ms % 1000;
    let mut out = String::new();
    if h > 0 {
        out.push_str(&format!("{h}h"));
    }
    if m > 0 {
        out.push_str(&format!("{m}m"));
    }
    if s > 0 || frac > 0 {
        if frac > 0 && h == 0 && m == 0 {
            out.push_str(&format!("{}s", d.as_secs_f64()));
        } else {
            out.push_str(&format!("{s}s"));
        }
    }
    out
}

/// A duration as people read an estimate or a time left: `under 1 s`, `45 s`,
/// `4 min 10 s`, `1 h 05 min` (whole seconds under an hour, whole minutes from an hour).
/// The one form of every estimate: the preset picker, `presets list` and a run's ETA.
pub fn readable_duration(d: Duration) -> String {
    if d.is_zero() {
        return "0 s".into();
    }
    let secs = d.as_secs_f64().round() as u64;
    if secs == 0 {
        return "under 1 s".into();
    }
    if secs < 60 {
        return format!("{secs} s");
    }
    if secs < 3600 {
        let (m, s) = (secs / 60, secs % 60);
        return if s == 0 {
            format!("{m} min")
        } else {
            format!("{m} min {s:02} s")
        };
    }
    let mins = secs.saturating_add(30) / 60;
    format!("{} h {:02} min", mins / 60, mins % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_count_is_plural_unless_it_is_one() {
        assert_eq!(count(1usize, "phase"), "1 phase");
        assert_eq!(count(13usize, "step"), "13 steps");
        assert_eq!(count(0u64, "error"), "0 errors");
        assert_eq!(count(1u32, "I/O error"), "1 I/O error");
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4k").unwrap(), 4096);
        assert_eq!(parse_size("4KiB").unwrap(), 4096);
        assert_eq!(parse_size("512").unwrap(), 512);
        assert_eq!(parse_size("1GiB").unwrap(), 1 << 30);
        assert_eq!(parse_size("1.5G").unwrap(), 3 << 29);
        assert_eq!(parse_size(" 128k ").unwrap(), 131072);
        assert!(parse_size("4q").is_err());
        assert!(parse_size("k").is_err());
        assert!(parse_size("").is_err());
        assert!(parse_size("0.3k").is_err());
        assert!(matches!(
            parse_size("99999999P"),
            Err(UnitError::Overflow(_))
        ));
    }

    #[test]
    fn decimal_units_are_powers_of_ten_binary_ones_and_bare_letters_of_two() {
        for (input, bytes) in [
            ("10GB", 10_000_000_000u64),
            ("10gb", 10_000_000_000),
            ("1TB", 1_000_000_000_000),
            ("10MB", 10_000_000),
            ("4KB", 4_000),
            ("4kB", 4_000),
            ("1PB", 1_000_000_000_000_000),
            ("1.5GB", 1_500_000_000),
            ("10 GB", 10_000_000_000),
            ("10GiB", 10 << 30),
            ("1TiB", 1 << 40),
            ("10MiB", 10_485_760),
            ("4KiB", 4096),
            ("1PiB", 1 << 50),
            ("10g", 10 << 30),
            ("10G", 10 << 30),
            ("1T", 1 << 40),
            ("10M", 10 << 20),
            ("4K", 4096),
            ("512B", 512),
        ] {
            assert_eq!(parse_size(input), Ok(bytes), "{input}");
        }
        // A decimal unit that leaves a fraction of a byte is refused like a binary one.
        assert!(parse_size("0.0001kB").is_err());
        assert!(parse_size("4Kb!").is_err());
    }

    #[test]
    fn a_given_size_shows_both_units_where_they_differ() {
        assert_eq!(format_given(10_000_000_000), "10 GB (9.31 GiB)");
        assert_eq!(format_given(10_000_000), "10 MB (9.54 MiB)");
        assert_eq!(format_given(2_000_000_000_000), "2 TB (1.82 TiB)");
        assert_eq!(format_given(1_500_000_000), "1.5 GB (1.40 GiB)");
        assert_eq!(format_given(1_250_000), "1.25 MB (1.19 MiB)");
        assert_eq!(format_given(4_000), "4 kB (3.91 KiB)");
        // Whole binary units, and counts below 1 KiB, stand alone.
        assert_eq!(format_given(10 << 30), "10 GiB");
        assert_eq!(format_given(4096), "4 KiB");
        assert_eq!(format_given(1000), "1000 B");
        assert_eq!(format_given(0), "0 B");
        // Neither: binary to two decimals.
        assert_eq!(format_given(1536 << 20), "1.50 GiB");
        assert_eq!(format_given(1_234_567), "1.18 MiB");
        // What it prints reads back as the same count where it is exact.
        for bytes in [
            10_000_000_000u64,
            4_000,
            10 << 30,
            2_000_000_000_000,
            1_250_000,
        ] {
            let shown = format_given(bytes);
            let first = shown
                .split(" (")
                .next()
                .unwrap_or_default()
                .replace(' ', "");
            assert_eq!(parse_size(&first), Ok(bytes), "{shown}");
        }
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("90s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("1m30s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("10").unwrap(), Duration::from_secs(10));
        assert_eq!(parse_duration("1h").unwrap(), Duration::from_secs(3600));
        assert_eq!(parse_duration("1h30m").unwrap(), Duration::from_secs(5400));
        for bad in ["1h1h", "1m1h", "30s1m", "1s1s"] {
            assert_eq!(
                parse_duration(bad),
                Err(UnitError::DurationOrder(bad.into())),
                "{bad}"
            );
        }
        assert!(parse_duration("10x").is_err());
        assert!(parse_duration("s").is_err());
        assert!(parse_duration("").is_err());
    }

    #[test]
    fn percents_and_multiples() {
        assert_eq!(parse_percent("25%").unwrap(), 25.0);
        assert_eq!(parse_percent("120").unwrap(), 120.0);
        assert!(parse_percent("-5%").is_err());
        assert_eq!(parse_multiple("2x").unwrap(), 2.0);
        assert!(parse_multiple("0x").is_err());
        assert!(parse_multiple("two").is_err());
    }

    #[test]
    fn printing() {
        assert_eq!(format_size(4096), "4KiB");
        assert_eq!(format_size(1 << 30), "1GiB");
        assert_eq!(format_size(512), "512B");
        assert_eq!(format_size(1536 << 20), "1.50GiB");
        assert_eq!(format_duration(Duration::from_secs(90)), "1m30s");
        assert_eq!(format_duration(Duration::from_millis(250)), "250ms");
        assert_eq!(format_duration(Duration::from_millis(1500)), "1.5s");
        assert_eq!(format_duration(Duration::from_secs(3900)), "1h5m");
    }

    #[test]
    fn readable_durations() {
        let r = |ms: u64| readable_duration(Duration::from_millis(ms));
        assert_eq!(r(0), "0 s");
        assert_eq!(r(250), "under 1 s");
        assert_eq!(r(2_147), "2 s");
        assert_eq!(r(59_400), "59 s");
        assert_eq!(r(60_000), "1 min");
        assert_eq!(r(250_000), "4 min 10 s");
        assert_eq!(r(3_900_000), "1 h 05 min");
        assert_eq!(r(3_599_600), "1 h 00 min");
        assert_eq!(r(84_000_000), "23 h 20 min");
        assert!(readable_duration(Duration::MAX).ends_with(" min"));
    }

    #[test]
    fn rates_are_one_to_a_hundred_million_iops() {
        assert_eq!(parse_rate_iops("5000"), Ok(5000.0));
        assert_eq!(parse_rate_iops(" 2500.5iops "), Ok(2500.5));
        assert_eq!(parse_rate_iops("1"), Ok(1.0));
        for bad in ["0.5", "0", "-3", "1e300", "inf", "NaN", "100000001"] {
            assert_eq!(
                parse_rate_iops(bad),
                Err(UnitError::RateRange(bad.into())),
                "{bad}"
            );
        }
        assert_eq!(parse_rate_iops("fast"), Err(UnitError::Rate("fast".into())));
    }
}
