//! Value parsers of the command line: each value kind (sizes, durations, rates…) has one
//! parser in `units` or the type it makes; these add the command line's bounds and words.

use std::time::Duration;

use crate::telemetry;
use crate::units::{self, UnitError};
use crate::workload::{Arrivals, BlockSizes, EngineKind, RwMode};

pub fn parse_size_arg(s: &str) -> Result<u64, UnitError> {
    units::parse_size(s)
}

/// `--io-size`: a size above zero (a run that may move no byte would end before its first I/O).
pub fn parse_io_size(s: &str) -> Result<u64, String> {
    match units::parse_size(s) {
        Ok(0) => Err("--io-size 0: the run must be allowed to move at least one byte".into()),
        r => r.map_err(|e| e.to_string()),
    }
}

pub fn parse_duration_arg(s: &str) -> Result<Duration, UnitError> {
    units::parse_duration(s)
}

pub fn parse_rw(s: &str) -> Result<RwMode, String> {
    s.parse()
}

pub fn parse_engine(s: String) -> Result<EngineKind, String> {
    s.parse()
}

pub fn parse_verify_mode(s: &str) -> Result<crate::verify::VerifyMode, String> {
    crate::verify::VerifyMode::parse(s)
}

pub fn parse_cut_at(s: &str) -> Result<crate::run::power_cut::CutAt, String> {
    crate::run::power_cut::CutAt::parse(s)
}

pub fn parse_arrivals(s: String) -> Result<Arrivals, String> {
    s.parse()
}

pub fn parse_bssplit(s: &str) -> Result<BlockSizes, String> {
    BlockSizes::parse_split(s)
}

fn parse_count(s: &str, zero: &str) -> Result<u32, String> {
    match s.trim().parse::<u32>() {
        Ok(0) => Err(zero.into()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("'{s}' is not a whole number")),
    }
}

/// `--iodepth`: at least 1.
pub fn parse_iodepth(s: &str) -> Result<u32, String> {
    parse_count(s, "--iodepth 0: at least one I/O must be in flight")
}

/// `--jobs`: at least 1.
pub fn parse_jobs(s: &str) -> Result<u32, String> {
    parse_count(s, "--jobs 0: at least one job must run")
}

pub fn parse_bool01(s: &str) -> Result<bool, String> {
    match s.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        other => Err(format!("'{other}' is not 0 or 1")),
    }
}

pub fn parse_interval(s: &str) -> Result<Duration, String> {
    let d = parse_duration_arg(s).map_err(|e| e.to_string())?;
    if d < Duration::from_millis(100) || d > Duration::from_secs(10) {
        return Err(format!("interval '{s}' is outside 100ms to 10s"));
    }
    Ok(d)
}

pub fn parse_autosave(s: &str) -> Result<Duration, String> {
    let d = parse_duration_arg(s).map_err(|e| e.to_string())?;
    if d < Duration::from_millis(100) {
        return Err(format!("autosave period '{s}' is under 100ms"));
    }
    Ok(d)
}

pub fn parse_snapshot_every(s: &str) -> Result<Duration, String> {
    let d = parse_duration_arg(s).map_err(|e| e.to_string())?;
    if d < Duration::from_secs(1) {
        return Err(format!("snapshot period '{s}' is under 1s"));
    }
    Ok(d)
}

/// A rate in IOPS (`units::parse_rate_iops`: 1 to 100,000,000).
pub fn parse_rate_iops(s: &str) -> Result<f64, UnitError> {
    units::parse_rate_iops(s)
}

pub(super) use parse_rate_iops as parse_rate;

/// A time scale: a number above 0 and at most 1000 (the one rule for `run`, the dashboard
/// and `presets`).
pub fn parse_time_scale(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v <= 1000.0 => Ok(v),
        _ => Err(format!(
            "time scale '{s}' is not a number above 0 and at most 1000"
        )),
    }
}

pub fn parse_mix(s: &str) -> Result<u8, String> {
    let v: u8 = s
        .trim()
        .trim_end_matches('%')
        .parse()
        .map_err(|_| format!("'{s}' is not a percentage from 0 to 100"))?;
    if v > 100 {
        return Err(format!("'{s}' is not a percentage from 0 to 100"));
    }
    Ok(v)
}

/// The telemetry poller's period (at least its 1 s minimum).
pub fn parse_period(s: &str) -> Result<Duration, String> {
    let d = parse_duration_arg(s).map_err(|e| e.to_string())?;
    if d < telemetry::MIN_PERIOD {
        return Err(format!("period '{s}' is under the 1s minimum"));
    }
    Ok(d)
}

/// A span of a session, seconds since its start.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpanArg {
    pub from_s: f64,
    pub to_s: f64,
}

pub fn parse_span(s: &str) -> Result<SpanArg, String> {
    let (a, b) = s
        .split_once("..")
        .ok_or_else(|| format!("'{s}' is not FROM..TO (e.g. 10m..20m)"))?;
    let d = |x: &str| {
        units::parse_duration(x)
            .map(|d| d.as_secs_f64())
            .map_err(|e| e.to_string())
    };
    let span = SpanArg {
        from_s: d(a)?,
        to_s: d(b)?,
    };
    if span.to_s <= span.from_s {
        return Err(format!("span '{s}' ends before it starts"));
    }
    Ok(span)
}

/// `--host`: `[USER@]HOST[:PORT]`.
pub fn parse_host(s: &str) -> Result<crate::remote::Host, String> {
    s.parse()
        .map_err(|e: crate::remote::HostError| e.to_string())
}
