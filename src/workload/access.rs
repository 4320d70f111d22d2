//! Where a random workload's offsets fall: uniformly over the region (fio's default
//! `random_distribution=random`), or fio's `zoned:` access ranges, `zoned:50/5:30/15:20/80`:
//! 50% of the I/Os on the first 5% of the region, 30% on the next 15%, 20% on the last
//! 80% (SNIA PTS ECW's access range restriction). Parsed once, written back as fio writes it.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// How a random workload's offsets are drawn over its region.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum Access {
    /// Uniform over the whole region.
    #[default]
    Uniform,
    /// Consecutive ranges of the region, each `(share of the I/Os, share of the region)`
    /// in percent; both shares add up to 100.
    Zoned(Vec<(u8, u8)>),
}

/// Why an access distribution was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AccessError {
    #[error("'{0}' is not an access distribution: random, or zoned:IO%/RANGE%:… (zoned:50/5:30/15:20/80)")]
    Unknown(String),
    #[error("'{0}' is not a zoned range: IO%/RANGE% with whole percents, each range above 0")]
    Range(String),
    #[error("the zoned ranges' {what} shares add up to {sum}%, not 100%")]
    Sum { what: &'static str, sum: u32 },
}

impl Access {
    pub fn is_uniform(&self) -> bool {
        *self == Access::Uniform
    }
}

impl FromStr for Access {
    type Err = AccessError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        if s == "random" {
            return Ok(Access::Uniform);
        }
        let Some(list) = s.strip_prefix("zoned:") else {
            return Err(AccessError::Unknown(s.to_string()));
        };
        let ranges = list
            .split(':')
            .map(|r| {
                let bad = || AccessError::Range(r.to_string());
                let (io, range) = r.split_once('/').ok_or_else(bad)?;
                let io: u8 = io.trim().parse().map_err(|_| bad())?;
                let range: u8 = range.trim().parse().map_err(|_| bad())?;
                if range == 0 || io > 100 || range > 100 {
                    return Err(bad());
                }
                Ok((io, range))
            })
            .collect::<Result<Vec<_>, _>>()?;
        for (what, sum) in [
            ("I/O", ranges.iter().map(|r| u32::from(r.0)).sum::<u32>()),
            ("region", ranges.iter().map(|r| u32::from(r.1)).sum()),
        ] {
            if sum != 100 {
                return Err(AccessError::Sum { what, sum });
            }
        }
        Ok(Access::Zoned(ranges))
    }
}

impl fmt::Display for Access {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Access::Uniform => f.write_str("random"),
            Access::Zoned(ranges) => {
                f.write_str("zoned:")?;
                for (i, (io, range)) in ranges.iter().enumerate() {
                    if i > 0 {
                        f.write_str(":")?;
                    }
                    write!(f, "{io}/{range}")?;
                }
                Ok(())
            }
        }
    }
}

impl TryFrom<String> for Access {
    type Error = AccessError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

impl From<Access> for String {
    fn from(a: Access) -> String {
        a.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fio_s_zoned_ranges_parse_and_print_back() {
        let a: Access = "zoned:50/5:30/15:20/80".parse().unwrap();
        assert_eq!(a, Access::Zoned(vec![(50, 5), (30, 15), (20, 80)]));
        assert_eq!(a.to_string(), "zoned:50/5:30/15:20/80");
        assert_eq!("random".parse::<Access>().unwrap(), Access::Uniform);
        let y = serde_yaml::to_string(&a).unwrap();
        assert_eq!(serde_yaml::from_str::<Access>(&y).unwrap(), a);
    }

    #[test]
    fn bad_ranges_are_refused_saying_why() {
        for (s, why) in [
            ("zipf:1.2", "not an access distribution"),
            ("zoned:50/5:30/15", "I/O shares add up to 80%"),
            ("zoned:50/5:50/15", "region shares add up to 20%"),
            ("zoned:50/0:50/100", "not a zoned range"),
            ("zoned:50-5", "not a zoned range"),
        ] {
            let e = s.parse::<Access>().unwrap_err().to_string();
            assert!(e.contains(why), "{s}: {e}");
        }
    }
}
