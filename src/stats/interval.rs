//! Interval records: what one worker sends per interval, the merged report the collector
//! publishes, and the step summary built from all measured intervals.

use serde::{Deserialize, Serialize};

use super::counts::DirCounts;
use super::due::DueEarlier;
use super::hist::{LatHists, LatSummary};

/// Who a failed I/O is put down to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FailedBy {
    /// The drive, or the path to it: EIO, ENOSPC, a short transfer, any errno but the two
    /// below. The drive's error.
    Drive,
    /// The kernel refused the request for its shape before any drive saw it (EINVAL,
    /// EOPNOTSUPP: a size, an alignment or an operation this device or this kernel does
    /// not take). An error of the request, not of the drive.
    Request,
}

impl FailedBy {
    /// Who the kernel's `result` (bytes, or -errno) puts a failed I/O down to.
    pub fn of(result: i64) -> FailedBy {
        match -result {
            e if e == i64::from(libc::EINVAL) || e == i64::from(libc::EOPNOTSUPP) => {
                FailedBy::Request
            }
            _ => FailedBy::Drive,
        }
    }
}

/// One failed I/O: where, which direction (a trim counts as a write), what the kernel said
/// and so who it is put down to ([`IoErrorRecord::by`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IoErrorRecord {
    pub offset: u64,
    pub len: u32,
    pub write: bool,
    /// Negative errno from the kernel, or the byte count of a short transfer.
    pub result: i64,
    pub message: String,
}

/// Error records kept per worker per interval; the rest are only counted.
pub const MAX_ERROR_RECORDS_PER: usize = 8;

impl IoErrorRecord {
    /// A failed or short I/O; `result` is the kernel's (bytes or -errno).
    pub fn new(offset: u64, len: u32, write: bool, result: i64) -> Self {
        Self::of(
            offset,
            len,
            write,
            if write { "write" } else { "read" },
            result,
        )
    }

    /// A failed trim (recorded as a write: it destroys data as one does).
    pub fn trim(offset: u64, len: u32, result: i64) -> Self {
        Self::of(offset, len, true, "trim", result)
    }

    /// Who this failure is put down to: the drive, or the request (refused by the kernel).
    pub fn by(&self) -> FailedBy {
        FailedBy::of(self.result)
    }

    /// `write`: it destroys data (a write or a trim); `dir` is only its word in the message.
    fn of(offset: u64, len: u32, write: bool, dir: &str, result: i64) -> Self {
        let message = if result < 0 {
            let err = std::io::Error::from_raw_os_error((-result) as i32);
            match FailedBy::of(result) {
                FailedBy::Drive => format!("{dir} of {len} B at offset {offset}: {err}"),
                FailedBy::Request => format!(
                    "{dir} of {len} B at offset {offset} refused by the kernel: {err} (the \
                     request, not a drive error)"
                ),
            }
        } else {
            format!("short {dir}: {result} of {len} B at offset {offset}")
        };
        IoErrorRecord {
            offset,
            len,
            write,
            result,
            message,
        }
    }
}

/// The gaps between a paced worker's consecutive intended issue times: its arrival
/// process, summed so that workers and intervals merge by adding.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ArrivalGaps {
    pub n: u64,
    /// Sum of the gaps, ns.
    pub sum: f64,
    /// Sum of the squared gaps, ns².
    pub sum_sq: f64,
}

impl ArrivalGaps {
    #[inline]
    pub fn push(&mut self, gap_ns: u64) {
        let g = gap_ns as f64;
        self.n += 1;
        self.sum += g;
        self.sum_sq += g * g;
    }

    pub fn add(&mut self, o: &ArrivalGaps) {
        self.n += o.n;
        self.sum += o.sum;
        self.sum_sq += o.sum_sq;
    }

    /// Coefficient of variation of the gaps (standard deviation over mean): about 1 for
    /// Poisson arrivals, about 0 for evenly spaced ones. `None` under two gaps.
    pub fn cv(&self) -> Option<f64> {
        if self.n < 2 || self.sum <= 0.0 {
            return None;
        }
        let n = self.n as f64;
        let mean = self.sum / n;
        let var = (self.sum_sq / n - mean * mean).max(0.0);
        Some(var.sqrt() / mean)
    }
}

/// What one worker sends at the end of each interval: one message, never one per I/O.
#[derive(Debug)]
pub struct WorkerInterval {
    pub job: usize,
    pub index: u64,
    /// Nanoseconds since the step's start (the engine's clock).
    pub end_ns: u64,
    /// Counts of successful I/Os, index 0 read, 1 write, 2 trim.
    pub dirs: [DirCounts; 3],
    pub errors: u64,
    pub error_records: Vec<IoErrorRecord>,
    pub hists: Box<LatHists>,
    /// Gaps between the intended issue times of the I/Os paced in this interval.
    pub gaps: ArrivalGaps,
    /// Of `dirs`, the paced I/Os that were due in an earlier interval.
    pub due_earlier: DueEarlier,
    /// The spans (ns since the step's start) this worker held its schedule and its end
    /// still (a pause, a suspension it saw), that ended in this interval.
    pub held: Vec<(u64, u64)>,
    /// The worker stopped after this interval.
    pub last: bool,
}

/// One interval of a step, merged over all jobs.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct IntervalReport {
    pub index: u64,
    /// Seconds since the step's start.
    pub start_s: f64,
    pub end_s: f64,
    /// Part of the warm-up (ramp): shown but left out of the summary.
    pub ramp: bool,
    /// Seconds of the interval the process itself was suspended (SIGSTOP, a sleeping
    /// machine): shown, but left out of the summary and never blamed on the device.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub suspended_s: f64,
    pub read: DirCounts,
    pub write: DirCounts,
    pub read_iops: f64,
    pub write_iops: f64,
    pub read_bw_bytes: f64,
    pub write_bw_bytes: f64,
    /// Trims (discards, punched holes) of a trim workload or an fio job file's trim jobs:
    /// absent from the file when none.
    #[serde(default, skip_serializing_if = "DirCounts::is_zero")]
    pub trim: DirCounts,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub trim_iops: f64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub trim_bw_bytes: f64,
    pub errors: u64,
    /// Latency of all I/Os in the interval (response latency when rate-limited).
    pub lat_us: LatSummary,
    /// Service latency (completion minus submission) when rate-limited, else absent.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub service_lat_us: Option<LatSummary>,
    #[serde(skip)]
    pub error_records: Vec<IoErrorRecord>,
    #[serde(skip)]
    pub hists: Option<Box<LatHists>>,
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

fn is_zero_u64(x: &u64) -> bool {
    *x == 0
}

impl IntervalReport {
    /// An interval of these counts (reads, writes, trims) and latency, each rate its count
    /// over `secs`; the rest none.
    pub fn of_counts(
        index: u64,
        (start_s, end_s): (f64, f64),
        [read, write, trim]: [DirCounts; 3],
        secs: f64,
        lat_us: LatSummary,
    ) -> IntervalReport {
        let per_s = |x: u64| x as f64 / secs;
        IntervalReport {
            index,
            start_s,
            end_s,
            read_iops: per_s(read.ios),
            write_iops: per_s(write.ios),
            read_bw_bytes: per_s(read.bytes),
            write_bw_bytes: per_s(write.bytes),
            trim_iops: per_s(trim.ios),
            trim_bw_bytes: per_s(trim.bytes),
            read,
            write,
            trim,
            lat_us,
            ..Default::default()
        }
    }

    /// Left out of the step's figures: warm-up, or the process was suspended in it.
    pub fn excluded(&self) -> bool {
        self.ramp || self.suspended_s > 0.0
    }

    /// The interval's first failed I/O, preferring one the kernel gave an errno for
    /// (ENOSPC, EIO…) over a short transfer, which says less.
    pub fn first_error(&self) -> Option<&IoErrorRecord> {
        self.error_records
            .iter()
            .find(|e| e.result < 0)
            .or_else(|| self.error_records.first())
    }

    /// A copy without the histograms (for displays that need only the figures).
    pub fn without_hists(&self) -> IntervalReport {
        IntervalReport {
            index: self.index,
            start_s: self.start_s,
            end_s: self.end_s,
            ramp: self.ramp,
            suspended_s: self.suspended_s,
            read: self.read,
            write: self.write,
            read_iops: self.read_iops,
            write_iops: self.write_iops,
            read_bw_bytes: self.read_bw_bytes,
            write_bw_bytes: self.write_bw_bytes,
            trim: self.trim,
            trim_iops: self.trim_iops,
            trim_bw_bytes: self.trim_bw_bytes,
            errors: self.errors,
            lat_us: self.lat_us,
            service_lat_us: self.service_lat_us,
            error_records: self.error_records.clone(),
            hists: None,
        }
    }

    /// Every direction's rate: reads, writes and trims.
    pub fn iops(&self) -> f64 {
        self.read_iops + self.write_iops + self.trim_iops
    }

    pub fn bw_bytes(&self) -> f64 {
        self.read_bw_bytes + self.write_bw_bytes + self.trim_bw_bytes
    }
}

impl StepSummary {
    /// Latency from each I/O's submission to its completion (service): the curve's latency,
    /// as vdbench reports it. In a closed-loop step it is the only latency there is.
    pub fn service_lat(&self) -> &LatSummary {
        self.service_lat_us.as_ref().unwrap_or(&self.lat_us)
    }

    /// When the step was paced: latency from each I/O's scheduled time (response from the
    /// schedule), which also counts the backlog a drive that falls behind builds up.
    pub fn response_from_schedule(&self) -> Option<&LatSummary> {
        self.service_lat_us.as_ref().map(|_| &self.lat_us)
    }

    /// Bytes per second of every direction: reads, writes and trims.
    pub fn bw_bytes(&self) -> f64 {
        self.read_bw_bytes + self.write_bw_bytes + self.trim_bw_bytes
    }
}

/// The summary of one step over its measured (non-ramp) intervals.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct StepSummary {
    /// Which engine ran (`io_uring`, `sync`).
    pub engine: crate::workload::EngineKind,
    /// Why the engine is not the one asked for, or what it could not use.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub engine_note: Option<String>,
    /// The ring options it ran with (polled I/O, SQPOLL).
    #[serde(
        default,
        skip_serializing_if = "crate::workload::EngineOptions::is_default"
    )]
    pub engine_options: crate::workload::EngineOptions,
    /// Measured seconds (ramp excluded, final drain included).
    pub runtime_s: f64,
    /// Every I/O: reads, writes and trims.
    pub ios: u64,
    pub read_ios: u64,
    pub write_ios: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub iops: f64,
    pub read_iops: f64,
    pub write_iops: f64,
    pub read_bw_bytes: f64,
    pub write_bw_bytes: f64,
    /// Trims (discards, punched holes) of a trim workload or an fio job file's trim jobs;
    /// `ios`, `iops` and `lat_us` count them too. Absent from the file when none.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub trim_ios: u64,
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub trim_bytes: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub trim_iops: f64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub trim_bw_bytes: f64,
    #[serde(default, skip_serializing_if = "LatSummary::is_empty")]
    pub trim_lat_us: LatSummary,
    pub errors: u64,
    /// Target rate of the step, when rate-limited.
    pub target_iops: Option<f64>,
    /// All I/Os: response latency when rate-limited (from the intended issue time), else
    /// service latency (they are the same in a closed loop).
    pub lat_us: LatSummary,
    pub read_lat_us: LatSummary,
    pub write_lat_us: LatSummary,
    /// Service latency (completion minus submission) when rate-limited.
    pub service_lat_us: Option<LatSummary>,
    /// When rate-limited, the coefficient of variation of the gaps between each job's
    /// intended issue times: about 1 for Poisson arrivals, about 0 for uniform ones.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub arrival_cv: Option<f64>,
    /// Why the step ended (stored as its text: "duration", "every I/O failed (…)").
    pub ended_by: crate::outcome::EndedBy,
    /// An fio job file's step: each of fio's jobs (or reporting groups) on its own.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fio_series: Vec<super::SeriesSummary>,
    /// A verified step (`--verify`) whose verify state could not be saved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify_unsaved: Option<crate::outcome::VerifyUnsaved>,
    /// A paced step: how its workers kept to the schedule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pacing: Option<crate::outcome::Pacing>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// EINVAL and EOPNOTSUPP are the kernel refusing the request, and the message says so;
    /// EIO, ENOSPC and a short transfer are the drive's.
    #[test]
    fn a_refused_request_is_told_from_a_drive_error() {
        for errno in [libc::EINVAL, libc::EOPNOTSUPP] {
            let e = IoErrorRecord::trim(4096, 1 << 20, -i64::from(errno));
            assert_eq!(e.by(), FailedBy::Request, "{}", e.message);
            assert!(
                e.message
                    .starts_with("trim of 1048576 B at offset 4096 refused by the kernel: ")
                    && e.message.ends_with("(the request, not a drive error)"),
                "{}",
                e.message
            );
        }
        for result in [-i64::from(libc::EIO), -i64::from(libc::ENOSPC), 512] {
            let e = IoErrorRecord::new(0, 4096, true, result);
            assert_eq!(e.by(), FailedBy::Drive, "{}", e.message);
            assert!(!e.message.contains("refused"), "{}", e.message);
        }
        assert_eq!(
            IoErrorRecord::new(0, 4096, false, -i64::from(libc::EIO)).message,
            "read of 4096 B at offset 0: Input/output error (os error 5)"
        );
    }
}
