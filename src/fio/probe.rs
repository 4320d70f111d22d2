//! Probing the installed fio: its version and whether its json+ status dumps carry what is read.

use std::process::Stdio;

use serde_json::Value;

use super::child::{caged, first_lines};
use super::error::{spawn_error, FioError};

/// Runs a caged fio to its end, its output kept.
fn caged_output(args: &[&str]) -> Result<std::process::Output, FioError> {
    let (mut cmd, _scratch) = caged(&[], None)?;
    cmd.args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(spawn_error)
}

/// The oldest fio major version whose json+ status dumps carry what is read here.
const MIN_MAJOR: u32 = 3;

/// The installed fio's version (`fio-3.33`), or why there is none usable.
pub fn fio_version() -> Result<String, FioError> {
    let out = caged_output(&["--version"])?;
    let v = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let major = v
        .strip_prefix("fio-")
        .and_then(|r| r.split('.').next())
        .and_then(|m| m.parse::<u32>().ok());
    match major {
        Some(m) if m >= MIN_MAJOR => Ok(v),
        _ => Err(FioError::TooOld { found: v }),
    }
}

/// fio's version as the run's check found it, or (not known: a step that lost it) as fio
/// says now.
pub(super) fn known_or_asked(known: Option<&str>) -> Result<String, FioError> {
    match known {
        Some(v) if !v.is_empty() => Ok(v.to_string()),
        _ => fio_version(),
    }
}

/// fio's own words when it cannot load the engine `name` (not built in, its library not
/// installed: `fio: engine NAME not loadable`), asked with `fio --enghelp=NAME`; none when
/// it loads it, or when the name is not a plain engine name (an `external:` path is never
/// loaded to ask).
pub(super) fn engine_not_loadable(name: &str) -> Option<String> {
    let plain = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if !plain {
        return None;
    }
    let out = caged_output(&[&format!("--enghelp={name}")]).ok()?;
    // fio prints `IO engine NAME not found` on stdout and exits 1 for an engine it cannot
    // load (and exits 1 too for one that merely has no options).
    let stdout = String::from_utf8_lossy(&out.stdout);
    let missing = stdout
        .lines()
        .any(|l| l.trim() == format!("IO engine {name} not found"));
    (!out.status.success() && missing).then(|| {
        first_lines(&String::from_utf8_lossy(&out.stderr))
            .unwrap_or_else(|| format!("fio: engine {name} not loadable"))
    })
}

/// What drivescope reads in fio's json+ output, as JSON pointers into a dump.
const NEEDED: [&str; 9] = [
    "/timestamp_ms",
    "/jobs/0/jobname",
    "/jobs/0/job_runtime",
    "/jobs/0/read/total_ios",
    "/jobs/0/read/io_bytes",
    "/jobs/0/read/iops",
    "/jobs/0/read/bw_bytes",
    "/jobs/0/read/runtime",
    "/jobs/0/read/clat_ns/bins",
];

/// The first field drivescope needs that a json+ dump lacks.
fn lacks(v: &Value) -> Option<&'static str> {
    NEEDED.iter().copied().find(|p| v.pointer(p).is_none())
}

/// The installed fio's version, once fio has shown that its json+ output carries what
/// drivescope reads: a few I/Os of fio's `null` engine (no file is opened or written).
pub fn fio_check() -> Result<String, FioError> {
    let version = fio_version()?;
    let out = caged_output(&[
        "--name=drivescope-probe",
        "--ioengine=null",
        "--size=64k",
        "--bs=4k",
        "--rw=read",
        "--output-format=json+",
    ])?;
    let text = String::from_utf8_lossy(&out.stdout);
    let doc = text
        .find('{')
        .and_then(|i| {
            serde_json::Deserializer::from_str(&text[i..])
                .into_iter::<Value>()
                .next()
        })
        .and_then(Result::ok);
    match doc {
        Some(v) => match lacks(&v) {
            None => Ok(version),
            Some(field) => Err(FioError::Lacks {
                version,
                field: field.to_string(),
            }),
        },
        None => Err(FioError::Lacks {
            version,
            field: first_lines(&String::from_utf8_lossy(&out.stderr))
                .map(|w| format!("a JSON document (fio said: {w})"))
                .unwrap_or_else(|| "a JSON document".into()),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dump_without_the_latency_bins_is_named() {
        let mut v: Value = serde_json::json!({
            "timestamp_ms": 1,
            "jobs": [{"jobname": "a", "job_runtime": 1, "read": {
                "total_ios": 1, "io_bytes": 1, "iops": 1.0, "bw_bytes": 1, "runtime": 1,
                "clat_ns": {"bins": {}}}}]
        });
        assert_eq!(lacks(&v), None);
        v["jobs"][0]["read"]["clat_ns"] = serde_json::json!({"percentile": {}});
        assert_eq!(lacks(&v), Some("/jobs/0/read/clat_ns/bins"));
    }
}
