//! Why the engine refuses a step before any I/O ([`InvalidStep`]): what a workload asks
//! for that no target can give, or what this target cannot.

use std::path::PathBuf;
use std::time::Duration;

use thiserror::Error;

use crate::units::{format_duration, format_given, format_size};
use crate::workload::{EngineKind, ZoneAppendProblem};

/// Largest queue depth: io_uring's limit on registered buffers (one per slot).
pub const MAX_IODEPTH: u32 = 16384;
/// Largest I/O buffer memory a step may ask for (all jobs), bytes.
pub const MAX_BUFFER_BYTES: u64 = 8 << 30;
/// Largest number of jobs.
pub const MAX_JOBS: u32 = 1024;

/// Why a target cannot do polled I/O (`--hipri`).
#[derive(Debug, Error, Clone, Copy, PartialEq, Eq)]
pub enum NoPolling {
    /// Not an NVMe namespace (nor a file on one).
    #[error("polled I/O needs an NVMe device with poll queues (the nvme driver's nvme.poll_queues), and this is not an NVMe namespace")]
    NotNvme,
    /// An NVMe namespace whose driver has no poll queues; the driver's `poll_queues`
    /// parameter, where it could be read.
    #[error("the device has no poll queues ({}); boot with nvme.poll_queues=N on the kernel command line (or load the driver with `modprobe nvme poll_queues=N`) to give it some", poll_queues_text(*.poll_queues))]
    NoPollQueues { poll_queues: Option<u32> },
}

fn poll_queues_text(poll_queues: Option<u32>) -> String {
    poll_queues.map_or_else(
        || "queue/io_poll is 0".to_string(),
        |n| format!("nvme.poll_queues is {n}"),
    )
}

/// A ring option the kernel may refuse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RingOption {
    SqPoll,
}

impl RingOption {
    fn flag(self) -> &'static str {
        match self {
            RingOption::SqPoll => "--sqpoll (IORING_SETUP_SQPOLL)",
        }
    }

    /// What the kernel's refusal most likely means.
    fn hint(self, errno: i32) -> &'static str {
        match (self, errno) {
            (RingOption::SqPoll, libc::EPERM) => {
                "; before Linux 5.11 an SQ polling thread needs CAP_SYS_ADMIN"
            }
            (RingOption::SqPoll, libc::EINVAL) => {
                "; the kernel refuses this SQ thread setup (is --sqpoll-cpu an online CPU this \
                 process may use?)"
            }
            _ => "",
        }
    }
}

fn errno_text(errno: i32) -> String {
    std::io::Error::from_raw_os_error(errno).to_string()
}

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
    #[error("block size {} is not a multiple of {}'s O_DIRECT alignment ({align} bytes)", format_given(*.bs), .path.display())]
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
    #[error("access range {range} of {of} covers {} of the region, under the block size {}: use a larger region or fewer, wider ranges", format_size(*.len), format_size(*.bs))]
    AccessRangeSmall {
        range: usize,
        of: usize,
        len: u64,
        bs: u64,
    },
    #[error("a step needs a duration or an amount of data to end")]
    NoEnd,
    #[error("a step's duration of {} is under the {} it takes to measure anything", format_duration(*.0), format_duration(MIN_STEP_DURATION))]
    TooShort(Duration),
    #[error("--hipri and --sqpoll set up io_uring rings; the {0} engine has none")]
    RingOptions(EngineKind),
    #[error("the uring-cmd engine (NVMe passthrough) needs an NVMe generic character device (/dev/ngXnY); {} is not one", .0.display())]
    NotNvmeGeneric(PathBuf),
    #[error("--hipri polls a device's completion queues; the {0} engine has no device")]
    HipriWithoutDevice(EngineKind),
    #[error("--hipri on {}: {why}", .path.display())]
    NoPolling { path: PathBuf, why: NoPolling },
    #[error("{}: the kernel refused it ({}){}", .option.flag(), errno_text(*.errno), .option.hint(*.errno))]
    Ring { option: RingOption, errno: i32 },
    #[error("the nop engine does no I/O to a target; leave out --target")]
    NopTarget,
    #[error("the uring-cmd engine sends NVMe reads and writes; a trim runs on io_uring or sync")]
    TrimPassthrough,
    #[error("fio mixes only reads and writes: a trim share (rwmixtrim) runs on io_uring or sync")]
    TrimShareFio,
    #[error("--verify checks what was written; a trim workload writes nothing to check")]
    TrimVerify,
    #[error("{} is a host-managed zoned device: {why}", .path.display())]
    Zoned { path: PathBuf, why: ZoneRefusal },
    #[error("zone append: {0}")]
    ZoneAppend(ZoneAppendProblem),
    #[error("zone append writes the zones of a zoned namespace; {} is not a host-managed zoned device (a conventional namespace, or no NVMe namespace at all)", .0.display())]
    AppendNotZoned(PathBuf),
    #[error("{} takes no trims: {kind} refused ({})", .path.display(), errno_text(*.errno))]
    NoTrim {
        path: PathBuf,
        kind: &'static str,
        errno: i32,
    },
}

/// Why a step cannot run on a host-managed zoned device.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum ZoneRefusal {
    /// Writes at random offsets.
    #[error("its zones are written only sequentially, at each zone's write pointer, and this step writes at random (use rw: write, or the zoned-seq-write preset)")]
    RandomWrites,
    /// Trims (a zone is emptied by a reset, not trimmed).
    #[error("its zones are emptied by a zone reset, not by trims; drivescope resets the zones a write step writes")]
    Trims,
    /// Reads mixed with writes.
    #[error("a mix of reads and writes is refused on it: its writes must go in order at each zone's write pointer; run the writes and the reads as steps of their own")]
    MixedWithWrites,
    /// Several jobs write the zones at once, each at its own pace.
    #[error("{0} jobs would write its zones each at its own pace, off the write pointers; write it with 1 job")]
    SeveralJobs(u32),
    /// The region starts inside a zone, not at its start (its write pointer after reset).
    #[error("the region starts at {}, inside the zone at {}: writes must start at a zone's write pointer (its start, after the reset)", format_size(*.offset), format_size(*.zone_start))]
    NotAtZoneStart { offset: u64, zone_start: u64 },
    /// The step ends by time only, or writes more than its region once: it would come
    /// round to zones already written.
    #[error("a sequential write comes round to zones it has written once it passes the region's end; end the step by data of at most the region ({})", format_size(*.region))]
    WrapsRound { region: u64 },
    /// A zone whose writable capacity is below its size, and the write goes past it.
    #[error("the zone at {} takes only {} of writes (its capacity) and the step writes past it", format_size(*.zone_start), format_size(*.capacity))]
    PastCapacity { zone_start: u64, capacity: u64 },
    /// Several writes in flight, on a kernel without zone write plugging (before 6.10)
    /// and a scheduler without zone write locking (mq-deadline has it).
    #[error("iodepth {iodepth} keeps several writes in flight, which this kernel (before 6.10, no zone write plugging) orders only with mq-deadline's zone write locking, and the scheduler is {scheduler}; use iodepth 1 or echo mq-deadline > queue/scheduler")]
    NoZoneWriteLocking { iodepth: u32, scheduler: String },
    /// Several plain writes in flight through NVMe passthrough, which bypasses the kernel's
    /// zone write ordering.
    #[error("iodepth {iodepth} keeps several writes in flight, and NVMe passthrough bypasses the kernel's zone write ordering (plugging, the scheduler's locking): use iodepth 1, or zone_append (--zone-append), whose writes the device places itself")]
    QueuedPassthrough { iodepth: u32 },
    /// Zone append into a conventional zone (it has no write pointer).
    #[error("the zone at {} is conventional: it has no write pointer to append at", format_size(*.zone_start))]
    AppendConventional { zone_start: u64 },
    /// Zone append of a block size that does not divide the zones' capacity: an append
    /// would cross a zone's end.
    #[error("zone append of {} does not divide the zones' capacity ({}): an append would cross a zone's end, which the device refuses", format_size(*.bs), format_size(*.capacity))]
    AppendCrossesZone { bs: u64, capacity: u64 },
    /// Zone append larger than the device's Zone Append Size Limit.
    #[error("zone append of {} is above the device's zone append limit ({}, queue/zone_append_max_bytes)", format_size(*.bs), format_size(*.max))]
    AppendTooLarge { bs: u64, max: u64 },
}
