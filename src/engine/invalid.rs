//! Why the engine refuses a step before any I/O ([`InvalidStep`]): what a workload asks
//! for that no target can give, or what this target cannot.

use std::path::PathBuf;
use std::time::Duration;

use thiserror::Error;

use super::collector::{MAX_BUFFER_BYTES, MAX_JOBS};
use super::uring::MAX_IODEPTH;
use crate::units::{format_duration, format_size};

/// The shortest measured duration a step may have (a plain run's `--duration` and a
/// preset's phases after time scaling alike): below it a run measures nothing.
pub const MIN_STEP_DURATION: Duration = Duration::from_millis(100);

#[derive(Debug, Error, Clone, PartialEq)]
pub enum InvalidStep {
    #[error(
        "iodepth {0} is outside 1 to {MAX_IODEPTH} (the io_uring limit on registered buffers)"
    )]
    Iodepth(u32),
    #[error("jobs {0} is outside 1 to {MAX_JOBS}")]
    Jobs(u32),
    #[error("block size {0} is outside 1 byte to 1GiB")]
    BlockSize(u64),
    #[error("iodepth × jobs × block size needs {} of buffers (limit {})", format_size(*.0), format_size(MAX_BUFFER_BYTES))]
    BufferMemory(u64),
    #[error("rate {0} IOPS must be above 0")]
    Rate(f64),
    #[error("block size {} is not a multiple of {}'s O_DIRECT alignment ({align} bytes)", format_size(*.bs), .path.display())]
    Unaligned { bs: u64, path: PathBuf, align: u64 },
    #[error("offset {offset} is not a multiple of the O_DIRECT alignment ({align} bytes)")]
    OffsetUnaligned { offset: u64, align: u64 },
    #[error("region {}+{} runs past the end of {} ({})", format_size(*.offset), format_size(*.len), .path.display(), format_size(*.size))]
    PastEnd {
        offset: u64,
        len: u64,
        path: PathBuf,
        size: u64,
    },
    #[error("region {} is smaller than the block size {}", format_size(*.len), format_size(*.bs))]
    RegionSmall { len: u64, bs: u64 },
    #[error("a step needs a duration or an amount of data to end")]
    NoEnd,
    #[error("a step's duration of {} is under the {} it takes to measure anything", format_duration(*.0), format_duration(MIN_STEP_DURATION))]
    TooShort(Duration),
}
