//! A power-cut run as asked: the commands, the cycles, and when in each cycle the power
//! is cut.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// When in a cycle the power is cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CutAt {
    /// This long after the workload starts.
    Fixed(#[serde(with = "secs")] Duration),
    /// At a (seeded) random moment within this window after the workload starts.
    Random(
        #[serde(with = "secs")] Duration,
        #[serde(with = "secs")] Duration,
    ),
    /// Once this many flush epochs have completed.
    Epochs(u64),
}

mod secs {
    pub fn serialize<S: serde::Serializer>(
        d: &std::time::Duration,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64())
    }

    pub fn deserialize<'de, D: serde::Deserializer<'de>>(
        d: D,
    ) -> Result<std::time::Duration, D::Error> {
        let secs = <f64 as serde::Deserialize>::deserialize(d)?;
        std::time::Duration::try_from_secs_f64(secs).map_err(serde::de::Error::custom)
    }
}

impl CutAt {
    /// `fixed 5s` (or `5s`), `random 2s..8s`, `after 4 epochs` (or `4 epochs`).
    pub fn parse(s: &str) -> Result<CutAt, String> {
        let dur = |t: &str| crate::units::parse_duration(t).map_err(|e| e.to_string());
        let words: Vec<&str> = s.split_whitespace().collect();
        let bad = || format!("`{s}` is not a cut moment (fixed 5s, random 2s..8s, after 4 epochs)");
        match words.as_slice() {
            ["fixed", d] | [d] => Ok(CutAt::Fixed(dur(d)?)),
            ["random", w] => {
                let (a, b) = w.split_once("..").ok_or_else(bad)?;
                let (a, b) = (dur(a)?, dur(b)?);
                if a > b {
                    return Err(format!("`{s}`: the window's start is after its end"));
                }
                Ok(CutAt::Random(a, b))
            }
            ["after", n, "epochs" | "epoch"] | [n, "epochs" | "epoch"] => {
                let n: u64 = n.parse().map_err(|_| bad())?;
                if n == 0 {
                    return Err(format!("`{s}`: at least 1 epoch"));
                }
                Ok(CutAt::Epochs(n))
            }
            _ => Err(bad()),
        }
    }
}

/// A power-cut run, as asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PowerCutAsk {
    /// The command that cuts the power (run by `sh -c`).
    pub cut: String,
    /// The command that gives it back, if the cut does not itself.
    pub restore: Option<String>,
    pub cycles: u32,
    pub at: CutAt,
    /// The drive is said to have power-loss protection: not-durable writes are findings.
    pub plp: bool,
    /// How long the drive may take to be ready again after the cut (and restore).
    pub ready_within: Duration,
    /// Seeds the random cut moments.
    pub seed: u64,
    /// The drive's atomic write unit on power fail, bytes (NVMe AWUPF); `None`: the
    /// logical block, as the verify state has it.
    pub atomic: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_moments_parse() {
        let s = Duration::from_secs;
        assert_eq!(CutAt::parse("fixed 5s"), Ok(CutAt::Fixed(s(5))));
        assert_eq!(CutAt::parse("5s"), Ok(CutAt::Fixed(s(5))));
        assert_eq!(CutAt::parse("random 1s..3s"), Ok(CutAt::Random(s(1), s(3))));
        assert_eq!(CutAt::parse("after 4 epochs"), Ok(CutAt::Epochs(4)));
        assert!(CutAt::parse("random 3s..1s").is_err());
        assert!(CutAt::parse("after 0 epochs").is_err());
        assert!(CutAt::parse("sometime").is_err());
    }
}
