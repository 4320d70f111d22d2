//! `smartctl -j` (smartmontools ≥ 7.0): run on SATA, SAS and USB-bridged drives, or read
//! from a saved output file; checked to be a smartctl output that read its device, and
//! decoded into a [`SmartReading`] with its health verdict.

mod check;
mod decode;
mod health;
mod json;
mod saved_text;
mod tables;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

pub use check::{check_output, Header, JsonShape, Refusal, Unfit};
pub use decode::decode;
pub use saved_text::{decode_text, read_capped, Encoding, TextProblem, MAX_OUTPUT_BYTES};

use crate::telemetry::reading::{SmartReading, Source};

/// smartctl's messages, quoted, for an error that has nothing else to say.
fn quoted(messages: &[String]) -> String {
    if messages.is_empty() {
        return "smartctl gave no message".to_string();
    }
    let q: Vec<String> = messages.iter().map(|m| format!("\"{m}\"")).collect();
    q.join("; ")
}

/// Errors of the smartctl source.
#[derive(Debug, thiserror::Error)]
pub enum SmartctlError {
    #[error(transparent)]
    Input(#[from] crate::user_file::InputError),
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{path}: larger than {} MiB, more than any smartctl output; refused unread",
        cap >> 20
    )]
    TooLarge { path: PathBuf, cap: u64 },
    #[error("{path}: {problem}")]
    Text { path: PathBuf, problem: TextProblem },
    #[error("{path}: not smartctl JSON: {source}")]
    Json {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error(
        "{path}: not a smartctl output: expected a JSON object with a \"smartctl\" object \
         in it, as `smartctl -j` writes (or, with that header cut away, smartctl's device \
         fields); found {found}"
    )]
    NotSmartctl { path: PathBuf, found: JsonShape },
    #[error(
        "{path}: smartctl did not read the device ({why}): {}{}",
        quoted(messages),
        if *unprivileged { " (drivescope is not running as root, which smartctl needs for most devices)" } else { "" }
    )]
    Refused {
        path: PathBuf,
        why: Refusal,
        /// smartctl's own messages, as it wrote them.
        messages: Vec<String>,
        /// The live path runs smartctl without root.
        unprivileged: bool,
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

/// Parses and checks one smartctl output (`path` names it in errors) and decodes it.
fn reading_of(
    text: &str,
    path: &Path,
    source: Source,
    unprivileged: bool,
) -> Result<SmartReading, SmartctlError> {
    let doc: Value = serde_json::from_str(text).map_err(|source| SmartctlError::Json {
        path: path.to_path_buf(),
        source,
    })?;
    match check_output(&doc) {
        Ok(Header::Kept) => Ok(decode(&doc, source)),
        Ok(Header::CutAway) => {
            let mut r = decode(&doc, source);
            r.notes.push(
                "the output has no \"smartctl\" header object (cut away): read from its device \
                 fields; smartctl's version, messages and exit status are unknown"
                    .to_string(),
            );
            Ok(r)
        }
        Err(Unfit::NotSmartctl(found)) => Err(SmartctlError::NotSmartctl {
            path: path.to_path_buf(),
            found,
        }),
        Err(Unfit::Refused(why)) => Err(SmartctlError::Refused {
            path: path.to_path_buf(),
            why,
            messages: json::messages(&doc),
            // Without root, smartctl cannot open most devices: said where it could not.
            unprivileged: unprivileged && !matches!(why, Refusal::CommandLine { .. }),
        }),
    }
}

/// Reads and decodes a saved `smartctl -j` output file (at most [`MAX_OUTPUT_BYTES`]).
pub fn decode_file(path: &Path) -> Result<SmartReading, SmartctlError> {
    let text = saved_text::read_file(path)?;
    reading_of(&text, path, Source::SmartctlFile, false)
}

fn running_as_root() -> bool {
    // SAFETY: geteuid takes nothing, touches no memory and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// How long one `smartctl` run may take before it is killed.
pub const SMARTCTL_TIMEOUT: Duration = Duration::from_secs(10);

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
        let out = read_capped(&mut stdout, MAX_OUTPUT_BYTES);
        // Read to the end, so smartctl never blocks on a full pipe.
        let _ = std::io::copy(&mut stdout, &mut std::io::sink());
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
        .map_err(|_| SmartctlError::Failed("reader thread panicked".into()))?
        .map_err(SmartctlError::Spawn)?
        .ok_or_else(|| SmartctlError::TooLarge {
            path: device.to_path_buf(),
            cap: MAX_OUTPUT_BYTES,
        })?;
    let text = decode_text(&out).map_err(|problem| SmartctlError::Text {
        path: device.to_path_buf(),
        problem,
    })?;
    reading_of(&text, device, Source::Smartctl, !running_as_root())
}
