//! Value types of the preset file that carry units: sizes (`4KiB`), durations (`90s`),
//! percentages (`25%`), data amounts (`2x` the region or a size), region bounds (a size or a
//! percentage of the target), rates (`max`, `5000`, `50% of probe`) and counts that may not be
//! zero. Each deserializes from what people write and serializes back to a canonical form,
//! so `presets show` prints a file that parses again to the same preset.

use std::fmt;
use std::time::Duration;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use crate::units;

/// Accepts a YAML scalar (string, integer or float) as text, so that `4096`, `4k` and `90`
/// reach the same unit parser.
struct ScalarText(&'static str);

impl Visitor<'_> for ScalarText {
    type Value = String;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.0)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<String, E> {
        Ok(v.to_string())
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<String, E> {
        Ok(v.to_string())
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<String, E> {
        Ok(v.to_string())
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<String, E> {
        Ok(v.to_string())
    }
}

fn scalar<'de, D: Deserializer<'de>>(d: D, what: &'static str) -> Result<String, D::Error> {
    d.deserialize_any(ScalarText(what))
}

/// Each `$ty` read by a parser of [`units`] from the scalar people write (`$what` names it
/// in errors), and written back as `$show` makes its value.
macro_rules! unit_values {
    ($( $ty:ident $what:literal $parse:path, |$v:ident| $show:expr; )*) => {$(
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                $parse(&scalar(d, $what)?).map($ty).map_err(de::Error::custom)
            }
        }

        impl Serialize for $ty {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let $v = self.0;
                s.serialize_str(&$show)
            }
        }
    )*};
}

unit_values! {
    Size "a size such as 4k, 4KiB or 1GiB" units::parse_size, |b| exact_size(b);
    Dur "a duration such as 90s, 2m or 500ms" units::parse_duration, |d| exact_duration(d);
    Percent "a percentage such as 25%" units::parse_percent, |p| format!("{p}%");
    DeltaC "a temperature difference such as 0.5C" units::parse_celsius_delta, |c| format!("{c}C");
}

/// A size printed so that it reads back exactly: `4KiB`, `1.50GiB`, or plain bytes when a
/// unit would round it.
pub fn exact_size(bytes: u64) -> String {
    let pretty = units::format_size(bytes);
    if units::parse_size(&pretty) == Ok(bytes) {
        pretty
    } else {
        bytes.to_string()
    }
}

/// A duration printed so that it reads back exactly: `90s`, `1m30s`, `500ms`, `250us`.
pub fn exact_duration(d: Duration) -> String {
    if d.is_zero() {
        return "0s".to_string();
    }
    let pretty = units::format_duration(d);
    if units::parse_duration(&pretty) == Ok(d) {
        return pretty;
    }
    let nanos = d.as_nanos();
    if nanos.is_multiple_of(1000) {
        format!("{}us", nanos / 1000)
    } else {
        format!("{nanos}ns")
    }
}

/// A size in bytes, written `4k`, `4KiB`, `128k`, `1GiB` or a bare byte count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Size(pub u64);

/// A block size: a [`Size`] that is not zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockSize(pub u64);

impl<'de> Deserialize<'de> for BlockSize {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let Size(v) = Size::deserialize(d)?;
        if v == 0 {
            return Err(de::Error::custom("a block size of 0 bytes is impossible"));
        }
        Ok(BlockSize(v))
    }
}

impl Serialize for BlockSize {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        Size(self.0).serialize(s)
    }
}

/// A duration, written `90s`, `2m`, `1m30s`, `500ms` or a bare number of seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Dur(pub Duration);

/// A percentage, written `25%` (or `25`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Percent(pub f64);

/// A temperature difference in degrees Celsius (`0.5C`), above 0.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DeltaC(pub f64);

/// A read share from 0 to 100 %.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadShare(pub u8);

impl<'de> Deserialize<'de> for ReadShare {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let Percent(p) = Percent::deserialize(d)?;
        if p > 100.0 || p.fract() != 0.0 {
            return Err(de::Error::custom(format!(
                "a read share must be a whole percentage from 0% to 100%, not {p}%"
            )));
        }
        Ok(ReadShare(p as u8))
    }
}

impl Serialize for ReadShare {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format!("{}%", self.0))
    }
}

/// A count that may not be zero (iodepth, jobs, rounds), at most 65536.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Count(pub u32);

impl Count {
    pub const MAX: u32 = 65536;
}

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = scalar(d, "a whole number from 1 up")?;
        let v: u64 = s
            .trim()
            .parse()
            .map_err(|_| de::Error::custom(format!("'{s}' is not a whole number")))?;
        if v == 0 {
            return Err(de::Error::custom("must be at least 1, not 0"));
        }
        if v > u64::from(Count::MAX) {
            return Err(de::Error::custom(format!(
                "{v} is more than the most allowed, {}",
                Count::MAX
            )));
        }
        Ok(Count(v as u32))
    }
}

impl Serialize for Count {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u32(self.0)
    }
}

/// A position or length in the target: bytes, or a percentage of the target's capacity.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Amount {
    Bytes(u64),
    Percent(f64),
}

impl Amount {
    fn parse(s: &str) -> Result<Amount, String> {
        if s.trim().ends_with('%') {
            let p = units::parse_percent(s).map_err(|e| e.to_string())?;
            if p > 100.0 {
                return Err(format!("{p}% of the target is more than all of it"));
            }
            return Ok(Amount::Percent(p));
        }
        units::parse_size(s).map(Amount::Bytes).map_err(|_| {
            format!("'{s}' is neither a size (10GiB) nor a percentage of the target (25%)")
        })
    }

    /// Bytes for a target of `capacity` bytes (percentages round down).
    pub fn bytes(self, capacity: u64) -> u64 {
        match self {
            Amount::Bytes(b) => b,
            Amount::Percent(p) => (capacity as f64 * p / 100.0).floor() as u64,
        }
    }
}

impl fmt::Display for Amount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Amount::Bytes(b) => f.write_str(&exact_size(*b)),
            Amount::Percent(p) => write!(f, "{p}%"),
        }
    }
}

impl<'de> Deserialize<'de> for Amount {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = scalar(d, "a size (10GiB) or a percentage of the target (25%)")?;
        Amount::parse(&s).map_err(de::Error::custom)
    }
}

impl Serialize for Amount {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

/// How much data ends a phase: a multiple of its region (`2x`) or a size (`100GiB`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DataAmount {
    Multiple(f64),
    Bytes(u64),
}

impl fmt::Display for DataAmount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DataAmount::Multiple(m) => write!(f, "{m}x"),
            DataAmount::Bytes(b) => f.write_str(&exact_size(*b)),
        }
    }
}

impl<'de> Deserialize<'de> for DataAmount {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = scalar(d, "a multiple of the region (2x) or a size (100GiB)")?;
        let t = s.trim();
        if t.ends_with('x') || t.ends_with('X') {
            return units::parse_multiple(t)
                .map(DataAmount::Multiple)
                .map_err(de::Error::custom);
        }
        match units::parse_size(t) {
            Ok(0) => Err(de::Error::custom("an amount of 0 bytes never ends")),
            Ok(b) => Ok(DataAmount::Bytes(b)),
            Err(_) => Err(de::Error::custom(format!(
                "'{s}' is neither a multiple of the region (2x) nor a size (100GiB)"
            ))),
        }
    }
}

impl Serialize for DataAmount {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

/// A phase's rate: as fast as it goes, a fixed IOPS figure, or a percentage of an earlier
/// phase's measured maximum (`50% of probe`).
#[derive(Debug, Clone, PartialEq)]
pub enum RateValue {
    Max,
    Iops(f64),
    PercentOf { percent: f64, phase: String },
}

impl RateValue {
    fn parse(s: &str) -> Result<RateValue, String> {
        let t = s.trim();
        if t.eq_ignore_ascii_case("max") {
            return Ok(RateValue::Max);
        }
        if let Some((pct, phase)) = t.split_once(" of ") {
            let percent = units::parse_percent(pct).map_err(|e| e.to_string())?;
            if percent <= 0.0 {
                return Err("a rate of 0% never issues an I/O".to_string());
            }
            let phase = phase.trim();
            if phase.is_empty() {
                return Err(format!("'{s}' names no phase after 'of'"));
            }
            return Ok(RateValue::PercentOf {
                percent,
                phase: phase.to_string(),
            });
        }
        if t.ends_with('%') {
            return Err(format!(
                "'{s}' does not say of what: write '{t} of PHASE', PHASE an earlier phase run at max"
            ));
        }
        match units::parse_rate_iops(t) {
            Ok(v) => Ok(RateValue::Iops(v)),
            Err(units::UnitError::Rate(_)) => Err(format!(
                "'{s}' is not a rate (max, an IOPS figure such as 5000, or '50% of PHASE')"
            )),
            Err(e) => Err(e.to_string()),
        }
    }
}

impl fmt::Display for RateValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RateValue::Max => f.write_str("max"),
            RateValue::Iops(v) => write!(f, "{v}"),
            RateValue::PercentOf { percent, phase } => write!(f, "{percent}% of {phase}"),
        }
    }
}

impl<'de> Deserialize<'de> for RateValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = scalar(d, "a rate: max, an IOPS figure, or '50% of PHASE'")?;
        RateValue::parse(&s).map_err(de::Error::custom)
    }
}

impl Serialize for RateValue {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            RateValue::Iops(v) => s.serialize_f64(*v),
            other => s.serialize_str(&other.to_string()),
        }
    }
}

/// fio's steady-state criterion (`ss=`): `iops:20%`, `iops_slope:10%`, `bw:20%`,
/// `bw_slope:10%`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Criterion {
    pub metric: Metric,
    pub slope: bool,
    pub limit_percent: f64,
}

impl fmt::Display for Criterion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = match self.metric {
            Metric::Bw => "bw",
            _ => "iops",
        };
        let slope = if self.slope { "_slope" } else { "" };
        write!(f, "{m}{slope}:{}%", self.limit_percent)
    }
}

impl<'de> Deserialize<'de> for Criterion {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = scalar(d, "a fio criterion such as iops_slope:10%")?;
        let bad = || {
            de::Error::custom(format!(
                "'{s}' is not a fio criterion (iops:X%, iops_slope:X%, bw:X%, bw_slope:X%)"
            ))
        };
        let (kind, limit) = s.split_once(':').ok_or_else(bad)?;
        let (metric, slope) = match kind.trim() {
            "iops" => (Metric::Iops, false),
            "iops_slope" => (Metric::Iops, true),
            "bw" => (Metric::Bw, false),
            "bw_slope" => (Metric::Bw, true),
            _ => return Err(bad()),
        };
        if !limit.trim().ends_with('%') {
            return Err(de::Error::custom(format!(
                "'{s}': only limits given as a percentage of the mean are supported"
            )));
        }
        let limit_percent = units::parse_percent(limit).map_err(de::Error::custom)?;
        if limit_percent <= 0.0 {
            return Err(de::Error::custom(format!(
                "'{s}': a limit of 0% is never met"
            )));
        }
        Ok(Criterion {
            metric,
            slope,
            limit_percent,
        })
    }
}

impl Serialize for Criterion {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printed_values_read_back_exactly() {
        for b in [0, 512, 4096, 1_000_000, 3 << 29, (1 << 40) + 1] {
            assert_eq!(units::parse_size(&exact_size(b)), Ok(b), "{b}");
        }
        assert_eq!(exact_size(4096), "4KiB");
        assert_eq!(exact_size(1_000_000), "1000000");
        for d in [
            Duration::ZERO,
            Duration::from_secs(90),
            Duration::from_millis(1500),
            Duration::from_micros(250),
            Duration::from_nanos(1_000_000_001),
            Duration::from_secs(86_400 + 1),
        ] {
            assert_eq!(units::parse_duration(&exact_duration(d)), Ok(d), "{d:?}");
        }
        assert_eq!(exact_duration(Duration::from_micros(250)), "250us");
    }

    #[test]
    fn rates_read_as_written() {
        assert_eq!(RateValue::parse("max"), Ok(RateValue::Max));
        assert_eq!(RateValue::parse("5000iops"), Ok(RateValue::Iops(5000.0)));
        assert_eq!(
            RateValue::parse("50% of probe"),
            Ok(RateValue::PercentOf {
                percent: 50.0,
                phase: "probe".into()
            })
        );
        assert!(RateValue::parse("50%").unwrap_err().contains("of PHASE"));
        assert!(RateValue::parse("0").is_err());
        assert!(RateValue::parse("0% of a").is_err());
        assert!(RateValue::parse("50% of ").is_err());
    }
}

/// What a steady-state rule or a round tracks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// I/Os per second (reads plus writes).
    Iops,
    /// Bytes per second.
    Bw,
    /// Mean response latency.
    MeanLatency,
}

impl Metric {
    pub fn as_str(self) -> &'static str {
        match self {
            Metric::Iops => "iops",
            Metric::Bw => "bw",
            Metric::MeanLatency => "mean_latency",
        }
    }

    /// The unit a figure of this metric is shown in: IOPS, MB/s (10^6 bytes a second), µs.
    pub fn unit(self) -> &'static str {
        match self {
            Metric::Iops => "IOPS",
            Metric::Bw => "MB/s",
            Metric::MeanLatency => "µs",
        }
    }

    /// A value as measured (I/Os a second, bytes a second, µs) in [`Metric::unit`].
    pub fn in_unit(self, v: f64) -> f64 {
        match self {
            Metric::Bw => v / 1e6,
            Metric::Iops | Metric::MeanLatency => v,
        }
    }

    /// A value as measured, as text in its unit: `25381 IOPS`, `1926.50 MB/s`, `85.3 µs`.
    pub fn show(self, v: f64) -> String {
        let u = self.in_unit(v);
        match self {
            Metric::Iops => format!("{u:.0} IOPS"),
            Metric::Bw => format!("{u:.2} MB/s"),
            Metric::MeanLatency => format!("{u:.1} µs"),
        }
    }
}
