//! The machine a session ran on, read from /etc/os-release, /proc and uname.

use serde::{Deserialize, Serialize};

/// Host identity: enough to tell two machines (and two kernels) apart in a comparison.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Host {
    pub hostname: String,
    /// `PRETTY_NAME` from /etc/os-release.
    pub os: String,
    /// Kernel release (`uname -r`).
    pub kernel: String,
    pub arch: String,
    /// CPU model name from /proc/cpuinfo.
    pub cpu: String,
    /// Logical CPUs online.
    pub cpus: u32,
    /// Total memory, bytes (MemTotal).
    pub memory_bytes: u64,
}

fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

fn os_release_pretty(text: &str) -> Option<String> {
    text.lines()
        .find_map(|l| l.strip_prefix("PRETTY_NAME="))
        .map(|v| v.trim().trim_matches('"').to_string())
}

fn cpu_model(cpuinfo: &str) -> Option<String> {
    cpuinfo
        .lines()
        .find(|l| {
            let k = l.split(':').next().unwrap_or("").trim();
            k == "model name" || k == "Model" || k == "cpu model" || k == "Hardware"
        })
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
}

fn mem_total_bytes(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

impl Host {
    /// Reads this machine's identity; fields it cannot read stay empty.
    pub fn detect() -> Host {
        Host {
            hostname: read("/proc/sys/kernel/hostname").trim().to_string(),
            os: os_release_pretty(&read("/etc/os-release"))
                .or_else(|| os_release_pretty(&read("/usr/lib/os-release")))
                .unwrap_or_else(|| std::env::consts::OS.to_string()),
            kernel: read("/proc/sys/kernel/osrelease").trim().to_string(),
            arch: std::env::consts::ARCH.to_string(),
            cpu: cpu_model(&read("/proc/cpuinfo")).unwrap_or_default(),
            cpus: std::thread::available_parallelism()
                .map(|n| n.get() as u32)
                .unwrap_or(0),
            memory_bytes: mem_total_bytes(&read("/proc/meminfo")).unwrap_or(0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_proc_formats() {
        assert_eq!(
            os_release_pretty("NAME=\"Debian\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n"),
            Some("Debian GNU/Linux 12 (bookworm)".into())
        );
        assert_eq!(
            cpu_model("processor\t: 0\nmodel name\t: AMD EPYC 7B13\n"),
            Some("AMD EPYC 7B13".into())
        );
        assert_eq!(
            mem_total_bytes("MemTotal:       24576000 kB\n"),
            Some(24_576_000 * 1024)
        );
        assert_eq!(mem_total_bytes("nothing"), None);
    }

    #[test]
    fn detects_this_machine() {
        let h = Host::detect();
        assert!(!h.kernel.is_empty(), "{h:?}");
        assert!(h.cpus >= 1, "{h:?}");
        assert!(h.memory_bytes > 1 << 20, "{h:?}");
    }
}
