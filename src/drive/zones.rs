//! A zoned block device's zones through the kernel's ioctls (`linux/blkzoned.h`): the zone
//! report (`BLKREPORTZONE`: each zone's start, length, capacity, write pointer and
//! condition) and the zone reset (`BLKRESETZONE`: write pointers back to the zones' starts).

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

use serde::{Deserialize, Serialize};

/// `_IOWR(0x12, 130, struct blk_zone_report)`.
const BLKREPORTZONE: libc::c_ulong = 0xC010_1282;
/// `_IOW(0x12, 131, struct blk_zone_range)`.
const BLKRESETZONE: libc::c_ulong = 0x4010_1283;
/// `BLK_ZONE_REP_CAPACITY`: the report's `capacity` fields are set.
const REP_CAPACITY: u32 = 1;
/// Zones asked for per report call.
const BATCH: usize = 256;

/// `struct blk_zone` (64 bytes).
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct BlkZone {
    start: u64,
    len: u64,
    wp: u64,
    kind: u8,
    cond: u8,
    non_seq: u8,
    reset: u8,
    resv: [u8; 4],
    capacity: u64,
    reserved: [u8; 24],
}

/// `struct blk_zone_report` followed by room for `BATCH` zones.
#[repr(C)]
struct Report {
    sector: u64,
    nr_zones: u32,
    flags: u32,
    zones: [BlkZone; BATCH],
}

/// `struct blk_zone_range`.
#[repr(C)]
struct Range {
    sector: u64,
    nr_sectors: u64,
}

/// A zone's type (`BLK_ZONE_TYPE_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ZoneKind {
    /// Written anywhere, as any disk.
    Conventional,
    /// Written only at its write pointer.
    SeqWriteRequired,
    /// Sequential writes preferred (host-aware).
    SeqWritePreferred,
    Other(u8),
}

/// A zone's condition (`BLK_ZONE_COND_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ZoneCond {
    NotWp,
    Empty,
    ImplicitOpen,
    ExplicitOpen,
    Closed,
    ReadOnly,
    Full,
    Offline,
    Other(u8),
}

/// One zone, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Zone {
    pub start: u64,
    pub len: u64,
    /// The bytes of the zone that can be written (NVMe ZNS may have less than `len`).
    pub capacity: u64,
    /// The write pointer: where the next write of the zone must start.
    pub wp: u64,
    pub kind: ZoneKind,
    pub cond: ZoneCond,
}

impl Zone {
    /// Written only at its write pointer (a sequential-write-required zone).
    pub fn sequential_only(&self) -> bool {
        self.kind == ZoneKind::SeqWriteRequired
    }

    fn from_raw(z: &BlkZone, has_capacity: bool) -> Zone {
        let kind = match z.kind {
            1 => ZoneKind::Conventional,
            2 => ZoneKind::SeqWriteRequired,
            3 => ZoneKind::SeqWritePreferred,
            k => ZoneKind::Other(k),
        };
        let cond = match z.cond {
            0x0 => ZoneCond::NotWp,
            0x1 => ZoneCond::Empty,
            0x2 => ZoneCond::ImplicitOpen,
            0x3 => ZoneCond::ExplicitOpen,
            0x4 => ZoneCond::Closed,
            0xd => ZoneCond::ReadOnly,
            0xe => ZoneCond::Full,
            0xf => ZoneCond::Offline,
            c => ZoneCond::Other(c),
        };
        Zone {
            start: z.start * 512,
            len: z.len * 512,
            capacity: if has_capacity { z.capacity } else { z.len } * 512,
            wp: z.wp * 512,
            kind,
            cond,
        }
    }
}

/// The zones of the open device `f` that start in `[from, to)` bytes, in order.
pub fn report(f: &File, from: u64, to: u64) -> io::Result<Vec<Zone>> {
    let mut out = Vec::new();
    let mut sector = from / 512;
    let mut rep = Box::new(Report {
        sector: 0,
        nr_zones: 0,
        flags: 0,
        zones: [BlkZone::default(); BATCH],
    });
    while sector * 512 < to {
        rep.sector = sector;
        rep.nr_zones = BATCH as u32;
        rep.flags = 0;
        // SAFETY: BLKREPORTZONE reads the header and writes at most `nr_zones` (BATCH)
        // `struct blk_zone`s after it; `rep` is a live, exclusively borrowed Report with
        // room for BATCH of them, laid out as the kernel's structs (repr(C)); the fd is
        // `f`'s, open for the call.
        let rc = unsafe { libc::ioctl(f.as_raw_fd(), BLKREPORTZONE, &mut *rep as *mut Report) };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        let n = (rep.nr_zones as usize).min(BATCH);
        if n == 0 {
            break;
        }
        let has_capacity = rep.flags & REP_CAPACITY != 0;
        for z in &rep.zones[..n] {
            let zone = Zone::from_raw(z, has_capacity);
            if zone.start >= to {
                return Ok(out);
            }
            sector = z.start + z.len.max(1);
            out.push(zone);
        }
    }
    Ok(out)
}

/// How many zones of a device are in each condition: its zone report counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ZoneStates {
    pub empty: u32,
    /// Implicitly or explicitly open.
    pub open: u32,
    pub closed: u32,
    pub full: u32,
    /// Conventional, read-only, offline or of a condition this build does not know.
    pub other: u32,
}

impl ZoneStates {
    /// The counts of `zones`.
    pub fn of(zones: &[Zone]) -> ZoneStates {
        let mut s = ZoneStates::default();
        for z in zones {
            let n = match z.cond {
                ZoneCond::Empty => &mut s.empty,
                ZoneCond::ImplicitOpen | ZoneCond::ExplicitOpen => &mut s.open,
                ZoneCond::Closed => &mut s.closed,
                ZoneCond::Full => &mut s.full,
                ZoneCond::NotWp | ZoneCond::ReadOnly | ZoneCond::Offline | ZoneCond::Other(_) => {
                    &mut s.other
                }
            };
            *n += 1;
        }
        s
    }
}

/// The zone states of the zoned block device at `dev`, from its whole zone report (the
/// device opened read-only: nothing is written or reset).
pub fn states(dev: &std::path::Path) -> io::Result<ZoneStates> {
    let f = File::open(dev)?;
    Ok(ZoneStates::of(&report(&f, 0, u64::MAX)?))
}

/// Resets the zones in `[start, start + len)` bytes of `f` (open for writing): their write
/// pointers go back to their starts, their data is gone.
pub fn reset(f: &File, start: u64, len: u64) -> io::Result<()> {
    let range = Range {
        sector: start / 512,
        nr_sectors: len / 512,
    };
    // SAFETY: BLKRESETZONE reads one `struct blk_zone_range` through the pointer, which
    // points at `range`, alive for the call; the fd is `f`'s, open for the call.
    let rc = unsafe { libc::ioctl(f.as_raw_fd(), BLKRESETZONE, &range as *const Range) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_structs_are_the_kernels_size() {
        assert_eq!(std::mem::size_of::<BlkZone>(), 64);
        assert_eq!(std::mem::size_of::<Report>(), 16 + 64 * BATCH);
        assert_eq!(std::mem::size_of::<Range>(), 16);
    }

    #[test]
    fn a_raw_zone_reads_in_bytes() {
        let raw = BlkZone {
            start: 8192,
            len: 8192,
            wp: 8192 + 256,
            kind: 2,
            cond: 2,
            capacity: 4096,
            ..BlkZone::default()
        };
        let z = Zone::from_raw(&raw, true);
        assert_eq!(
            (z.start, z.len, z.capacity, z.wp),
            (4 << 20, 4 << 20, 2 << 20, (4 << 20) + 131072)
        );
        assert_eq!(
            (z.kind, z.cond),
            (ZoneKind::SeqWriteRequired, ZoneCond::ImplicitOpen)
        );
        assert_eq!(Zone::from_raw(&raw, false).capacity, 4 << 20);
    }

    #[test]
    fn zone_states_count_each_condition_once() {
        let conds = [0x1, 0x1, 0x2, 0x3, 0x4, 0xe, 0xe, 0xe, 0x0, 0xf, 0x9];
        let zones: Vec<Zone> = conds
            .iter()
            .map(|&cond| {
                Zone::from_raw(
                    &BlkZone {
                        len: 8192,
                        kind: 2,
                        cond,
                        ..BlkZone::default()
                    },
                    false,
                )
            })
            .collect();
        let s = ZoneStates::of(&zones);
        assert_eq!(
            s,
            ZoneStates {
                empty: 2,
                open: 2,
                closed: 1,
                full: 3,
                other: 3
            }
        );
        assert!(states(tempfile::NamedTempFile::new().unwrap().path()).is_err());
    }

    #[test]
    fn a_device_that_is_not_zoned_has_no_zone_report() {
        // A regular file: the kernel answers ENOTTY, never a report.
        let f = tempfile::tempfile().unwrap();
        assert!(report(&f, 0, 1 << 20).is_err());
        assert!(reset(&f, 0, 1 << 20).is_err());
    }
}
