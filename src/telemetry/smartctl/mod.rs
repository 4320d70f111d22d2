//! `smartctl -j` (smartmontools ≥ 7.0): run on SATA, SAS and USB-bridged drives, or read
//! from a saved output file, and decoded into a [`SmartReading`] with its health verdict.

mod decode;
mod health;
mod json;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

pub use decode::decode;

use crate::telemetry::reading::{SmartReading, Source};

/// Errors of the smartctl source.
#[derive(Debug, thiserror::Error)]
pub enum SmartctlError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: not smartctl JSON: {source}")]
    Json {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("smartctl is not installed (apt-get install smartmontools)")]
    NotInstalled,
    #[error("cannot run smartctl: {0}")]
    Spawn(std::io::Error),
    #[error("smartctl did not answer within {0:?}")]
    Timeout(Duration),
    #[error("smartctl: {0}")]
    Failed(String),
}

/// How long one `smartctl` run may take before it is killed.
pub const SMARTCTL_TIMEOUT: Duration = Duration::from_secs(10);

/// Decodes a saved `smartctl -j` output file.
pub fn decode_file(path: &Path) -> Result<SmartReading, SmartctlError> {
    let text = std::fs::read_to_string(path).map_err(|source| SmartctlError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let doc: Value = serde_json::from_str(&text).map_err(|source| SmartctlError::Json {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(decode(&doc, Source::SmartctlFile))
}

/// Runs `smartctl -j -i -H -A [-l scttemp]` on `device`, killed after `timeout`.
pub fn run(device: &Path, timeout: Duration) -> Result<SmartReading, SmartctlError> {
    let mut child = Command::new("smartctl")
        .args(["-j", "-i", "-H", "-A", "-l", "scttempsts", "-n", "standby"])
        .arg(device)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => SmartctlError::NotInstalled,
            _ => SmartctlError::Spawn(e),
        })?;
    let mut stdout = child
        .stdout
        .take()
        .ok_or_else(|| SmartctlError::Failed("no stdout".into()))?;
    let reader = std::thread::spawn(move || {
        let mut out = String::new();
        let _ = stdout.read_to_string(&mut out);
        out
    });
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if start.elapsed() > timeout => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(SmartctlError::Timeout(timeout));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(SmartctlError::Spawn(e)),
        }
    }
    let out = reader
        .join()
        .map_err(|_| SmartctlError::Failed("reader thread panicked".into()))?;
    let doc: Value = serde_json::from_str(&out).map_err(|source| SmartctlError::Json {
        path: device.to_path_buf(),
        source,
    })?;
    let r = decode(&doc, Source::Smartctl);
    if r.source.is_none() {
        let mut why = r.notes.join("; ");
        if why.is_empty() {
            why = "no SMART data".into();
        } else if why.contains("Permission denied") {
            why.push_str(" (run as root)");
        }
        return Err(SmartctlError::Failed(why));
    }
    Ok(r)
}
