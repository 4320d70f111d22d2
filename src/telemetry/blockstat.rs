//! `/sys/block/X/stat`: the kernel's own I/O counters for a block device, and deltas of
//! them (IOPS, bandwidth, utilisation) as an independent check of the engine's figures.
//! Field order per `Documentation/block/stat.rst`; sectors are always 512 bytes.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::drive::SysRoot;

/// Errors reading a stat file.
#[derive(Debug, thiserror::Error)]
pub enum BlockStatError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// Not a regular file, or larger than one: refused unread, so that a FIFO or a device
    /// in its place cannot hold the poller.
    #[error(transparent)]
    Input(#[from] crate::user_file::InputError),
    #[error("{path}: {fields} fields, need at least 11")]
    Format { path: PathBuf, fields: usize },
}

/// One read of the stat file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct BlockStat {
    pub read_ios: u64,
    pub read_merges: u64,
    pub read_sectors: u64,
    pub read_ticks_ms: u64,
    pub write_ios: u64,
    pub write_merges: u64,
    pub write_sectors: u64,
    pub write_ticks_ms: u64,
    pub in_flight: u64,
    pub io_ticks_ms: u64,
    pub time_in_queue_ms: u64,
    /// Discard fields (kernel 4.18+), zero where the kernel has none.
    pub discard_ios: u64,
    pub discard_sectors: u64,
    /// Flush fields (kernel 5.5+), zero where the kernel has none.
    pub flush_ios: u64,
}

/// Rates between two reads.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct BlockStatDelta {
    pub interval_s: f64,
    pub read_ios: u64,
    pub write_ios: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub read_iops: f64,
    pub write_iops: f64,
    pub read_bytes_per_s: f64,
    pub write_bytes_per_s: f64,
    /// Share of the interval the device had I/O in flight (io_ticks), percent, ≤ 100.
    pub util_percent: f64,
    /// I/Os in flight at the second read.
    pub in_flight: u64,
}

/// Parses the content of a stat file (11, 15 or 17 fields).
pub fn parse(text: &str, path: &Path) -> Result<BlockStat, BlockStatError> {
    let f: Vec<u64> = text
        .split_whitespace()
        .map_while(|w| w.parse().ok())
        .collect();
    if f.len() < 11 {
        return Err(BlockStatError::Format {
            path: path.to_path_buf(),
            fields: f.len(),
        });
    }
    let at = |i: usize| f.get(i).copied().unwrap_or(0);
    Ok(BlockStat {
        read_ios: at(0),
        read_merges: at(1),
        read_sectors: at(2),
        read_ticks_ms: at(3),
        write_ios: at(4),
        write_merges: at(5),
        write_sectors: at(6),
        write_ticks_ms: at(7),
        in_flight: at(8),
        io_ticks_ms: at(9),
        time_in_queue_ms: at(10),
        discard_ios: at(11),
        discard_sectors: at(13),
        flush_ios: at(15),
    })
}

/// The most of a stat file read: sysfs gives its attributes a size of one page.
const MAX_STAT_BYTES: u64 = 64 << 10;

/// Reads `<root>/sys/block/NAME/stat` (or a partition's, given `sda/sda1`): only a regular
/// file, opened without waiting (a FIFO there would hold the poller for ever).
pub fn read_at(root: &SysRoot, sysfs_name: &str) -> Result<BlockStat, BlockStatError> {
    let path = root.block(sysfs_name).join("stat");
    let bytes = crate::user_file::read_input(&path, MAX_STAT_BYTES, "block statistics")?;
    let text = String::from_utf8(bytes).map_err(|e| BlockStatError::Read {
        path: path.clone(),
        source: std::io::Error::new(std::io::ErrorKind::InvalidData, e),
    })?;
    parse(&text, &path)
}

/// Reads `/sys/block/NAME/stat` on this machine.
pub fn read(sysfs_name: &str) -> Result<BlockStat, BlockStatError> {
    read_at(&SysRoot::real(), sysfs_name)
}

/// Rates from `prev` to `cur`, `elapsed` apart. Counters that went backwards (device
/// re-created) count as zero rather than wrapping.
pub fn delta(prev: &BlockStat, cur: &BlockStat, elapsed: Duration) -> BlockStatDelta {
    let secs = elapsed.as_secs_f64();
    let per_s = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
    let read_ios = cur.read_ios.saturating_sub(prev.read_ios);
    let write_ios = cur.write_ios.saturating_sub(prev.write_ios);
    let read_bytes = cur.read_sectors.saturating_sub(prev.read_sectors) * 512;
    let write_bytes = cur.write_sectors.saturating_sub(prev.write_sectors) * 512;
    let busy_ms = cur.io_ticks_ms.saturating_sub(prev.io_ticks_ms) as f64;
    let util = if secs > 0.0 {
        (busy_ms / (secs * 1000.0) * 100.0).min(100.0)
    } else {
        0.0
    };
    BlockStatDelta {
        interval_s: secs,
        read_ios,
        write_ios,
        read_bytes,
        write_bytes,
        read_iops: per_s(read_ios),
        write_iops: per_s(write_ios),
        read_bytes_per_s: per_s(read_bytes),
        write_bytes_per_s: per_s(write_bytes),
        util_percent: util,
        in_flight: cur.in_flight,
    }
}
