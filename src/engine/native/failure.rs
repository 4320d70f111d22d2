//! When a step must stop because the device failed: every I/O of an interval failed, the
//! device went away (ENODEV/ENXIO from the kernel, its node or sysfs entry gone), or the
//! step's end came while the device still held I/O it never completed (stalled: the
//! kernel's own counters say so, [`KernelCounts`]). The reason names the first error the
//! device returned, so a run that stops says why. An
//! interval whose every I/O failed with the kernel refusing each one recorded (EINVAL,
//! EOPNOTSUPP: [`FailedBy::Request`]) stops the step as refused, not as the device's fault.

use std::path::{Path, PathBuf};

use crate::outcome::{EndedBy, FaultKind};
use crate::stats::{FailedBy, IntervalReport};
use crate::telemetry::blockstat;

/// A block device target, watched for removal.
#[derive(Debug, Clone)]
pub struct DeviceWatch {
    path: PathBuf,
    sysfs: PathBuf,
}

impl DeviceWatch {
    pub fn new(path: &Path, rdev: u64) -> Self {
        let (maj, min) = (libc::major(rdev), libc::minor(rdev));
        DeviceWatch {
            path: path.to_path_buf(),
            sysfs: PathBuf::from(format!("/sys/dev/block/{maj}:{min}")),
        }
    }

    /// Why the device looks gone, if it does.
    pub fn gone(&self) -> Option<String> {
        if !self.path.exists() {
            return Some(format!("{} no longer exists", self.path.display()));
        }
        if Path::new("/sys/dev/block").is_dir() && !self.sysfs.exists() {
            return Some(format!(
                "{} is no longer in {}",
                self.path.display(),
                self.sysfs.display()
            ));
        }
        None
    }
}

/// The kernel's counters of the block device that holds a target (the device itself, or
/// for a file the device of its filesystem), `/sys/dev/block/M:m/stat`: what it completed
/// and what it holds in flight, the evidence of a stall. `None` where there is no such
/// device (tmpfs, overlay).
#[derive(Debug, Clone)]
pub struct KernelCounts {
    stat: PathBuf,
}

/// One read of a device's counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceCounts {
    /// Reads, writes and discards completed so far.
    pub completed: u64,
    /// Requests in flight now.
    pub in_flight: u64,
}

impl KernelCounts {
    /// For a target with this metadata.
    pub fn of(meta: &std::fs::Metadata) -> Option<Self> {
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        let dev = if meta.file_type().is_block_device() {
            meta.rdev()
        } else {
            meta.dev()
        };
        let (maj, min) = (libc::major(dev), libc::minor(dev));
        let stat = PathBuf::from(format!("/sys/dev/block/{maj}:{min}/stat"));
        stat.exists().then_some(KernelCounts { stat })
    }

    /// The counters now.
    pub fn read(&self) -> Option<DeviceCounts> {
        let text = std::fs::read_to_string(&self.stat).ok()?;
        let s = blockstat::parse(&text, &self.stat).ok()?;
        Some(DeviceCounts {
            completed: s.read_ios + s.write_ios + s.discard_ios,
            in_flight: s.in_flight,
        })
    }
}

fn errno_of(result: i64) -> Option<i32> {
    (result < 0).then(|| (-result) as i32)
}

/// How many I/Os in a row, with no success among them, it takes to say every I/O failed:
/// an interval of a few I/Os (a process starved of CPU on a loaded machine does six in a
/// second) can all land on the failing half of a device by chance, 1 in 64 for six; sixteen
/// in a row by chance are 1 in 65,536, and a dead device gives them in its first interval at
/// any rate worth measuring.
pub const ALL_FAILED_IN_A_ROW: u64 = 16;

/// The reason to stop after interval `r`, if the device failed. `failed_in_a_row`: the I/Os
/// that failed since the last that succeeded, this interval's included.
pub fn fatal(
    r: &IntervalReport,
    device: Option<&DeviceWatch>,
    failed_in_a_row: u64,
) -> Option<EndedBy> {
    if r.errors == 0 {
        return None;
    }
    let first = r
        .first_error()
        .map(|e| format!("; first: {}", e.message))
        .unwrap_or_default();
    let vanished = r
        .error_records
        .iter()
        .find(|e| matches!(errno_of(e.result), Some(libc::ENODEV) | Some(libc::ENXIO)));
    let gone = device.and_then(DeviceWatch::gone);
    if vanished.is_some() || gone.is_some() {
        let what = match (&gone, vanished) {
            (Some(g), _) => g.clone(),
            (None, Some(e)) => format!("the kernel says: {}", e.message),
            (None, None) => String::new(),
        };
        return Some(EndedBy::device(
            FaultKind::Gone,
            format!("{what}; {} errors in interval {}{first}", r.errors, r.index),
        ));
    }
    if r.read.ios + r.write.ios + r.trim.ios == 0 {
        // The records are a sample (a few per job): every one of them a refusal says the
        // requests, not the drive.
        let refused = !r.error_records.is_empty()
            && r.error_records.iter().all(|e| e.by() == FailedBy::Request);
        let kind = if refused {
            FaultKind::Refused
        } else if failed_in_a_row >= ALL_FAILED_IN_A_ROW {
            FaultKind::AllFailed
        } else {
            return None;
        };
        return Some(EndedBy::device(
            kind,
            format!("{} errors in interval {}{first}", r.errors, r.index),
        ));
    }
    None
}

/// Whether an io_uring worker thread of this process (`iou-wrk-*`: I/O the kernel punted
/// off the submitting thread, and every I/O on tmpfs) is running or waiting for a CPU
/// (state `R` in `/proc/self/task/*/stat`): I/O it holds waits on the CPU, not the device.
pub fn io_workers_want_cpu() -> bool {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return false;
    };
    tasks.flatten().any(|t| {
        std::fs::read_to_string(t.path().join("stat"))
            .ok()
            .is_some_and(|stat| io_worker_runnable(&stat))
    })
}

/// A task's `stat` line says an io_uring worker that is runnable: `PID (iou-wrk-N) R ...`.
fn io_worker_runnable(stat: &str) -> bool {
    let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
        return false;
    };
    let comm = &stat[open + 1..close];
    let state = stat[close + 1..].split_whitespace().next();
    comm.starts_with("iou-wrk") && state == Some("R")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::{DirCounts, IoErrorRecord};

    fn report(ok: u64, errs: &[i64]) -> IntervalReport {
        IntervalReport {
            index: 3,
            start_s: 3.0,
            end_s: 4.0,
            read: DirCounts { ios: ok, bytes: 0 },
            errors: errs.len() as u64,
            error_records: errs
                .iter()
                .map(|&r| IoErrorRecord::new(4096, 4096, false, r))
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn all_failed_names_the_first_error() {
        let e = fatal(&report(0, &[-(libc::EIO as i64)]), None, 16).unwrap();
        let EndedBy::Device(d) = &e else {
            panic!("{e}")
        };
        assert_eq!(d.kind, FaultKind::AllFailed);
        let r = e.to_string();
        assert!(
            r.starts_with("every I/O failed (1 errors in interval 3"),
            "{r}"
        );
        assert!(r.contains("Input/output error"), "{r}");
        assert!(fatal(&report(5, &[-(libc::EIO as i64)]), None, 0).is_none());
        assert!(fatal(&report(5, &[]), None, 0).is_none());
    }

    #[test]
    fn a_few_failures_in_a_row_are_chance_not_a_failed_device() {
        // Six reads of a starved process, all on the failing half of a device.
        let six = report(0, &[-(libc::EIO as i64); 6]);
        assert!(fatal(&six, None, 6).is_none());
        assert!(fatal(&six, None, ALL_FAILED_IN_A_ROW - 1).is_none());
        let e = fatal(&six, None, ALL_FAILED_IN_A_ROW).unwrap();
        assert!(
            matches!(&e, EndedBy::Device(d) if d.kind == FaultKind::AllFailed),
            "{e}"
        );
    }

    #[test]
    fn every_io_refused_is_the_requests_fault_not_the_drives() {
        let einval = -(libc::EINVAL as i64);
        let e = fatal(&report(0, &[einval, -(libc::EOPNOTSUPP as i64)]), None, 2).unwrap();
        assert!(
            matches!(&e, EndedBy::Device(d) if d.kind == FaultKind::Refused),
            "{e}"
        );
        let r = e.to_string();
        assert!(
            r.starts_with("every I/O refused by the kernel, not the drive (2 errors"),
            "{r}"
        );
        assert!(r.contains("refused by the kernel: Invalid argument"), "{r}");
        // One drive error among them: the drive's fault.
        let e = fatal(&report(0, &[einval, -(libc::EIO as i64)]), None, 16).unwrap();
        assert!(
            matches!(&e, EndedBy::Device(d) if d.kind == FaultKind::AllFailed),
            "{e}"
        );
        assert!(fatal(&report(5, &[einval]), None, 0).is_none());
    }

    #[test]
    fn an_errno_is_named_before_a_short_transfer() {
        let r = fatal(&report(0, &[100, -(libc::ENOSPC as i64)]), None, 16)
            .unwrap()
            .to_string();
        assert!(r.contains("No space left on device"), "{r}");
    }

    #[test]
    fn enxio_means_the_device_is_gone_even_with_some_successes() {
        let e = fatal(&report(5, &[-(libc::ENXIO as i64)]), None, 0).unwrap();
        assert!(
            matches!(&e, EndedBy::Device(d) if d.kind == FaultKind::Gone),
            "{e}"
        );
        let r = e.to_string();
        assert!(r.starts_with("device gone"), "{r}");
        assert!(r.contains("No such device or address"), "{r}");
    }

    #[test]
    fn a_missing_node_means_the_device_is_gone() {
        let w = DeviceWatch::new(Path::new("/nonexistent/dev/sdz"), 0);
        let r = fatal(&report(0, &[-(libc::EIO as i64)]), Some(&w), 1)
            .unwrap()
            .to_string();
        assert!(r.contains("/nonexistent/dev/sdz no longer exists"), "{r}");
    }

    #[test]
    fn an_io_uring_worker_waiting_for_a_cpu_is_told_from_one_waiting_on_the_device() {
        assert!(io_worker_runnable("4242 (iou-wrk-4240) R 1 4240 4240 0 -1"));
        assert!(!io_worker_runnable(
            "4242 (iou-wrk-4240) D 1 4240 4240 0 -1"
        ));
        assert!(!io_worker_runnable("4240 (drivescope) R 1 4240 4240 0 -1"));
        assert!(!io_worker_runnable("garbage"));
    }
}
