//! [`Sample`]: one telemetry sample, kept as its one-line encoding (the line the session
//! file holds) and decoded on demand. A day of samples every 2 s is 43,200 of them; as YAML
//! values they would take several KB each in memory, as lines about 1 KB. Shared, so a
//! snapshot's copy of the session costs no second copy of them.

use std::sync::Arc;

use serde::de::IgnoredAny;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_yaml::Value;

use super::flow::write_value;

/// One telemetry sample: a mapping with `t` (seconds since the session started) and
/// whatever the telemetry layer measured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sample(Arc<str>);

/// The figures charts need, read without building the whole value.
#[derive(Deserialize)]
struct Light {
    t: Option<serde_json::Value>,
    temperature_c: Option<serde_json::Value>,
    temp_c: Option<serde_json::Value>,
    temperature: Option<serde_json::Value>,
    smart: Option<LightSmart>,
    drive: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct LightSmart {
    temperature_c: Option<serde_json::Value>,
}

fn num(v: &Option<serde_json::Value>) -> Option<f64> {
    v.as_ref().and_then(serde_json::Value::as_f64)
}

impl Sample {
    /// Encodes a value.
    pub fn from_value(v: &Value) -> Sample {
        let mut s = String::new();
        write_value(&mut s, v);
        Sample(s.into())
    }

    /// Encodes anything serializable.
    pub fn encode(item: impl Serialize) -> Result<Sample, serde_yaml::Error> {
        Ok(Sample::from_value(&serde_yaml::to_value(item)?))
    }

    /// A line as read from a session, kept as is when it is JSON (checked, not built).
    pub(crate) fn from_json_line(line: &str) -> Option<Sample> {
        serde_json::from_str::<IgnoredAny>(line).ok()?;
        Some(Sample(line.into()))
    }

    /// The encoded line (flow YAML, JSON when the value allows).
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The sample as a YAML value (null when the line does not parse).
    pub fn value(&self) -> Value {
        serde_json::from_str(&self.0)
            .or_else(|_| serde_yaml::from_str(&self.0))
            .unwrap_or(Value::Null)
    }

    /// The sample as a `T` (the telemetry layer's sample, or a reader's view of some of
    /// its keys); none when it is not of that shape.
    pub fn read<T: serde::de::DeserializeOwned>(&self) -> Option<T> {
        serde_json::from_str(&self.0)
            .or_else(|_| serde_yaml::from_str(&self.0))
            .ok()
    }

    pub fn is_null(&self) -> bool {
        matches!(&*self.0, "null" | "~" | "")
    }

    fn light(&self) -> Option<(Option<f64>, Option<f64>)> {
        let l: Light = serde_json::from_str(&self.0).ok()?;
        let temp = num(&l.temperature_c)
            .or_else(|| num(&l.temp_c))
            .or_else(|| num(&l.temperature))
            .or_else(|| l.smart.as_ref().and_then(|s| num(&s.temperature_c)));
        Some((num(&l.t), temp))
    }

    /// The drive (its index in the session's `drives`) of a session of several.
    pub fn drive(&self) -> Option<u32> {
        let d = match serde_json::from_str::<Light>(&self.0) {
            Ok(l) => l.drive.and_then(|v| v.as_u64()),
            Err(_) => self.value().get("drive").and_then(Value::as_u64),
        };
        d.and_then(|d| u32::try_from(d).ok())
    }

    /// Seconds since the session started, if the sample has `t`.
    pub fn t(&self) -> Option<f64> {
        match self.light() {
            Some((t, _)) => t,
            None => self.value().get("t").and_then(Value::as_f64),
        }
    }

    /// The drive temperature, °C: `temperature_c` (or `temp_c`, `temperature`) at the top
    /// level or in `smart`.
    pub fn temperature_c(&self) -> Option<f64> {
        match self.light() {
            Some((_, c)) => c,
            None => {
                let v = self.value();
                let direct = |v: &Value| {
                    ["temperature_c", "temp_c", "temperature"]
                        .iter()
                        .find_map(|k| v.get(*k).and_then(Value::as_f64))
                };
                direct(&v).or_else(|| v.get("smart").and_then(direct))
            }
        }
    }
}

impl Serialize for Sample {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.value().serialize(s)
    }
}

impl<'de> Deserialize<'de> for Sample {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Sample::from_value(&Value::deserialize(d)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_come_from_the_line_or_from_yaml() {
        let json = Sample::from_json_line(r#"{"t": 4.5, "smart": {"temperature_c": 41}}"#).unwrap();
        assert_eq!(json.t(), Some(4.5));
        assert_eq!(json.temperature_c(), Some(41.0));
        assert!(Sample::from_json_line("{t: 1}").is_none(), "not JSON");
        let yaml: Sample = serde_yaml::from_str("{t: 2, temp_c: .nan, x: !tag 1}").unwrap();
        assert_eq!(yaml.t(), Some(2.0));
        assert!(yaml.temperature_c().is_some_and(f64::is_nan));
        let back: Sample = serde_yaml::from_str(&serde_yaml::to_string(&json).unwrap()).unwrap();
        assert_eq!(back.value(), json.value());
        assert!(Sample::from_value(&Value::Null).is_null());
    }

    #[test]
    fn a_sample_reads_as_a_type_from_its_line_json_or_yaml() {
        #[derive(Deserialize)]
        struct Smart {
            warning_temp_c: Option<f64>,
        }
        #[derive(Deserialize)]
        struct View {
            smart: Option<Smart>,
        }
        let warning = |s: &Sample| s.read::<View>().and_then(|v| v.smart?.warning_temp_c);
        let json = Sample::from_json_line(r#"{"t": 1, "smart": {"warning_temp_c": 70}}"#).unwrap();
        assert_eq!(warning(&json), Some(70.0));
        let yaml: Sample =
            serde_yaml::from_str("{t: 2, smart: {warning_temp_c: 68, x: !tag 1}}").unwrap();
        assert_eq!(warning(&yaml), Some(68.0));
        let other: Sample = serde_yaml::from_str("{t: 3, smart: text}").unwrap();
        assert!(other.read::<View>().is_none(), "not of that shape");
    }
}
