//! The QEMU guest harness (scripts/qemu-nvme/run.sh) seen from a test: whether it can run,
//! booting a guest script, and reading its sections back.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use serde_json::Value;

/// Why QEMU cannot run here, if it cannot.
pub fn skip_reason() -> Option<String> {
    if std::env::var_os("DRIVESCOPE_SKIP_QEMU").is_some() {
        return Some("DRIVESCOPE_SKIP_QEMU is set".into());
    }
    let have_qemu = Command::new("sh")
        .args(["-c", "command -v qemu-system-x86_64"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !have_qemu {
        return Some(
            "qemu-system-x86_64 is not installed (apt-get install qemu-system-x86 cpio \
             busybox-static nvme-cli dmsetup smartmontools mdadm lvm2)"
                .into(),
        );
    }
    None
}

/// One guest at a time: the guests' tests share a binary, and run.sh's first boot installs
/// packages and unpacks the kernel into a shared cache; two TCG guests at once would also
/// slow each other past the guests' own timing checks.
static BOOTING: Mutex<()> = Mutex::new(());

/// Boots `script` (relative to the repository) with this drivescope binary; `env` sets
/// run.sh's variables (disk sizes…). Returns the folder holding the sections.
pub fn boot(script: &str, out_name: &str, env: &[(&str, &str)]) -> PathBuf {
    // A guest that failed (a panic below) leaves the lock poisoned; the next may still boot.
    let _one_at_a_time = BOOTING.lock().unwrap_or_else(|e| e.into_inner());
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let out = repo.join("target").join(out_name);
    let mut cmd = Command::new("bash");
    cmd.arg(repo.join("scripts/qemu-nvme/run.sh"))
        .arg(env!("CARGO_BIN_EXE_drivescope"))
        .arg(&out)
        .env("GUEST_SCRIPT", repo.join(script));
    for (k, v) in env {
        cmd.env(k, v);
    }
    let status = cmd.status().expect("run scripts/qemu-nvme/run.sh");
    assert!(
        status.success(),
        "scripts/qemu-nvme/run.sh failed; see {}",
        out.display()
    );
    out
}

pub fn section(out: &Path, name: &str) -> String {
    std::fs::read_to_string(out.join(format!("{name}.txt")))
        .unwrap_or_else(|e| panic!("guest section {name} missing: {e}"))
}

pub fn rc(out: &Path, name: &str) -> i32 {
    std::fs::read_to_string(out.join("rc").join(name))
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or_else(|| panic!("guest section {name} has no exit code"))
}

/// The JSON lines of a section (drivescope's `--json` output).
pub fn json_lines(out: &Path, name: &str) -> Vec<Value> {
    section(out, name)
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{name}: bad JSON {l}: {e}")))
        .collect()
}

/// The value of a `key=value` line of a section.
pub fn value(out: &Path, name: &str, key: &str) -> Option<String> {
    let prefix = format!("{key}=");
    section(out, name)
        .lines()
        .find_map(|l| l.strip_prefix(&prefix).map(str::to_string))
}
