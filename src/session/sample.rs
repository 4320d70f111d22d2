//! [`Sample`]: one telemetry sample, kept as its one-line encoding (the line the session
//! file holds) and decoded on demand. A day of samples every 2 s is 43,200 of them; as YAML
//! values they would take several KB each in memory, as lines about 1 KB. Shared, so a
//! snapshot's copy of the session costs no second copy of them.

use std::sync::Arc;

use serde::de::{DeserializeOwned, IgnoredAny};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::legacy::{lenient, Document};

/// One telemetry sample: a mapping with `t` (seconds since the session started) and
/// whatever the telemetry layer measured, read as the type a reader knows it by
/// ([`Sample::read`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sample(Arc<str>);

/// The figures the session itself reads of a sample (charts, the soak log), each none
/// when it is missing or not a number (all of them when `smart` is not a mapping).
#[derive(Default, Deserialize)]
#[serde(default)]
struct Light {
    #[serde(deserialize_with = "lenient")]
    t: Option<f64>,
    #[serde(deserialize_with = "lenient")]
    temperature_c: Option<f64>,
    #[serde(deserialize_with = "lenient")]
    temp_c: Option<f64>,
    #[serde(deserialize_with = "lenient")]
    temperature: Option<f64>,
    smart: Option<LightSmart>,
    #[serde(deserialize_with = "lenient")]
    drive: Option<u32>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct LightSmart {
    #[serde(deserialize_with = "lenient")]
    temperature_c: Option<f64>,
}

impl Default for Sample {
    /// The null sample.
    fn default() -> Sample {
        Sample("null".into())
    }
}

impl Sample {
    /// Encodes anything serializable.
    pub fn encode(item: impl Serialize) -> Result<Sample, serde_yaml::Error> {
        let mut s = String::new();
        crate::yaml_flow::write(&mut s, &item)?;
        Ok(Sample(s.into()))
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

    /// The sample as a `T` (the telemetry layer's sample, or a reader's view of some of
    /// its keys); none when it is not of that shape.
    pub fn read<T: DeserializeOwned>(&self) -> Option<T> {
        serde_json::from_str(&self.0)
            .or_else(|_| serde_yaml::from_str(&self.0))
            .ok()
    }

    pub fn is_null(&self) -> bool {
        matches!(&*self.0, "null" | "~" | "")
    }

    fn light(&self) -> Light {
        self.read().unwrap_or_default()
    }

    /// The drive (its index in the session's `drives`) of a session of several.
    pub fn drive(&self) -> Option<u32> {
        self.light().drive
    }

    /// Seconds since the session started, if the sample has `t`.
    pub fn t(&self) -> Option<f64> {
        self.light().t
    }

    /// The drive temperature, °C: `temperature_c` (or `temp_c`, `temperature`) at the top
    /// level or in `smart`.
    pub fn temperature_c(&self) -> Option<f64> {
        let l = self.light();
        l.temperature_c
            .or(l.temp_c)
            .or(l.temperature)
            .or_else(|| l.smart?.temperature_c)
    }
}

/// As written: a sample is kept key for key, whatever its keys.
impl Serialize for Sample {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.read::<Document>().serialize(s)
    }
}

impl<'de> Deserialize<'de> for Sample {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Sample::encode(Document::deserialize(d)?).map_err(serde::de::Error::custom)
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
        let value = |s: &Sample| s.read::<serde_yaml::Value>().unwrap();
        assert_eq!(value(&back), value(&json));
        assert!(Sample::encode(()).unwrap().is_null());
        assert!(Sample::default().is_null());
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
