//! Host figures beside the drive's: CPU and memory of the machine and of drivescope
//! itself, from sysinfo. CPU percentages need two refreshes, so a sampler is kept.

use serde::{Deserialize, Serialize};
use sysinfo::{Pid, ProcessRefreshKind, ProcessesToUpdate, System};

/// One host sample.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct HostStats {
    /// Whole machine, percent of all CPUs since the previous sample.
    pub cpu_percent: f32,
    pub cpus: usize,
    pub mem_used_bytes: u64,
    pub mem_total_bytes: u64,
    /// drivescope's process, percent of one CPU (may exceed 100 with several threads).
    pub self_cpu_percent: Option<f32>,
    pub self_rss_bytes: Option<u64>,
}

/// Keeps the state sysinfo needs for CPU deltas.
pub struct HostSampler {
    sys: System,
    pid: Option<Pid>,
}

impl HostSampler {
    /// A sampler primed with a first refresh; `None` where sysinfo cannot read the host.
    pub fn new() -> Option<Self> {
        let mut s = HostSampler {
            sys: System::new().ok()?,
            pid: sysinfo::get_current_pid().ok(),
        };
        s.refresh();
        Some(s)
    }

    fn refresh(&mut self) {
        self.sys.refresh_cpu_usage();
        self.sys.refresh_memory();
        if let Some(pid) = self.pid {
            self.sys.refresh_processes_specifics(
                ProcessesToUpdate::Some(&[pid]),
                true,
                ProcessRefreshKind::nothing().with_cpu().with_memory(),
            );
        }
    }

    /// Refreshes and returns the figures since the previous call.
    pub fn sample(&mut self) -> HostStats {
        self.refresh();
        let proc_ = self.pid.and_then(|p| self.sys.process(p));
        HostStats {
            cpu_percent: self.sys.global_cpu_usage(),
            cpus: self.sys.cpus().len(),
            mem_used_bytes: self.sys.used_memory(),
            mem_total_bytes: self.sys.total_memory(),
            self_cpu_percent: proc_.map(|p| p.cpu_usage()),
            self_rss_bytes: proc_.map(|p| p.memory()),
        }
    }
}
