//! fio job text for one workload, the one writer of it: the exported job files
//! (`presets fio`) and the fio engine (`--engine fio`) both use it, so what drivescope runs
//! and what it tells fio to run are the same.

use std::fmt::Write as _;
use std::time::Duration;

use crate::units::format_size;
use crate::workload::{JobRegion, RwMode, StepEnd, Workload};

/// A size as fio reads it with its default `kb_base=1024`: `4k`, `128k`, `1m`, `1g`, bytes.
pub fn fio_size(bytes: u64) -> String {
    const UNITS: [(u64, &str); 4] = [
        (1 << 40, "t"),
        (1 << 30, "g"),
        (1 << 20, "m"),
        (1 << 10, "k"),
    ];
    for (unit, suffix) in UNITS {
        if bytes >= unit && bytes.is_multiple_of(unit) {
            return format!("{}{suffix}", bytes / unit);
        }
    }
    bytes.to_string()
}

pub fn fio_secs(d: std::time::Duration) -> String {
    let ms = d.as_millis();
    if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else {
        format!("{ms}ms")
    }
}

/// For a sequential workload with several jobs, the length of each job's disjoint slice
/// (the region split evenly, aligned to the smallest block size), as the engine splits it.
fn sequential_slice(w: &Workload) -> Option<u64> {
    if w.rw.is_random() || w.jobs <= 1 || w.job_region == JobRegion::Whole {
        return None;
    }
    let align = w.bs.min().max(1);
    let slice = w.region.len / u64::from(w.jobs) / align * align;
    (slice >= w.bs.max()).then_some(slice)
}

/// What a fio job file cannot say of a step.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotInFio {
    /// A mix's trim share is drivescope's own: fio mixes only reads and writes.
    #[error(
        "step '{step}' trims {percent}% of its mix; fio has no trim share in a mix (only \
         rwmixread), so no fio job reproduces it"
    )]
    TrimShare { step: String, percent: u8 },
}

/// Whether fio can run step `step`'s workload as drivescope does.
pub fn expressible(step: &str, w: &Workload) -> Result<(), NotInFio> {
    match (w.rw.is_mixed(), w.rwmixtrim) {
        (true, t) if t > 0 => Err(NotInFio::TrimShare {
            step: step.to_string(),
            percent: t,
        }),
        _ => Ok(()),
    }
}

/// For a zoned target (host-managed or host-aware: NVMe ZNS, SMR), fio's zoned block
/// device mode: its writes go to each zone from the zone's write pointer, as the device
/// requires; nothing for a conventional one.
pub fn zone_lines(out: &mut String, zoned: bool) {
    if zoned {
        let _ = writeln!(out, "zonemode=zbd");
    }
}

/// The workload's shape: pattern, read share, block sizes, depth, jobs and region (a
/// sequential pattern's jobs each on their own slice, as drivescope's engine splits it).
pub fn shape_lines(out: &mut String, w: &Workload) {
    let _ = writeln!(out, "rw={}", w.rw);
    if matches!(w.rw, RwMode::Rw | RwMode::RandRw) {
        let _ = writeln!(out, "rwmixread={}", w.rwmixread);
    }
    if w.bs.is_single() {
        let _ = writeln!(out, "bs={}", fio_size(w.bs.max()));
    } else {
        let parts: Vec<String> =
            w.bs.split
                .iter()
                .map(|(b, p)| format!("{}/{p}", fio_size(*b)))
                .collect();
        let _ = writeln!(out, "bssplit={}", parts.join(":"));
    }
    if !w.access.is_uniform() {
        let _ = writeln!(out, "random_distribution={}", w.access);
    }
    let _ = writeln!(out, "iodepth={}", w.iodepth);
    let _ = writeln!(out, "numjobs={}", w.jobs);
    let _ = writeln!(out, "offset={}", w.region.offset);
    match sequential_slice(w) {
        Some(slice) => {
            let _ = writeln!(
                out,
                "# each job streams its own slice of the region, as drivescope's engine does"
            );
            let _ = writeln!(out, "size={slice}\noffset_increment={slice}");
        }
        None => {
            if w.job_region == JobRegion::Whole && w.jobs > 1 {
                let _ = writeln!(out, "# each job streams over the whole region, as fio does");
            }
            let _ = writeln!(out, "size={}", w.region.len);
        }
    }
}

/// How the step ends: its warm-up, then its duration or amount of data (`io_size` counts
/// per job, so the total is split over `jobs`).
pub fn end_lines(out: &mut String, ramp: Duration, end: &StepEnd, jobs: u32) {
    if !ramp.is_zero() {
        let _ = writeln!(out, "ramp_time={}", fio_secs(ramp));
    }
    if let Some(d) = end.duration {
        if end.bytes.is_none() {
            let _ = writeln!(out, "time_based=1");
        }
        let _ = writeln!(out, "runtime={}", fio_secs(d));
    }
    if let Some(b) = end.bytes {
        let per_job = b.div_ceil(u64::from(jobs.max(1)));
        if jobs > 1 {
            let _ = writeln!(
                out,
                "# {} in all: fio's io_size counts per job",
                format_size(b)
            );
        }
        let _ = writeln!(out, "io_size={per_job}");
    }
}
