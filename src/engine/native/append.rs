//! Zone append on a zoned NVMe namespace: which zone each write goes to (the zone its
//! sequential offset falls in, [`ZoneAppend`]) and the check of where the device placed it
//! (the LBA its completion returns must lie inside that zone, [`Landings`], said as the
//! step's note).

use std::fmt;

use super::nvme::Namespace;
use crate::units::format_size;

/// The namespace a step appends to and the size of its zones (bytes, from sysfs:
/// `queue/chunk_sectors` of the block device behind the generic one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ZoneAppend {
    pub ns: Namespace,
    pub zone_bytes: u64,
}

impl ZoneAppend {
    /// The start (bytes) of the zone holding byte `offset`: where an I/O the generator put at
    /// `offset` is appended.
    #[inline]
    pub fn zone_start(&self, offset: u64) -> u64 {
        offset - offset % self.zone_bytes.max(1)
    }

    /// Where an append of `len` bytes sent to the zone holding `offset` was placed, if the
    /// device placed it inside that zone (the logical block `lba` it returned, as bytes);
    /// `None` when any of it lies outside.
    #[inline]
    pub fn placed(&self, offset: u64, len: u32, lba: u64) -> Option<u64> {
        let start = self.zone_start(offset);
        let at = lba.checked_shl(self.ns.lba_shift)?;
        let end = at.checked_add(u64::from(len))?;
        (at >> self.ns.lba_shift == lba && at >= start && end <= start + self.zone_bytes)
            .then_some(at)
    }
}

/// An append the device placed outside the zone it was sent to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Misplaced {
    /// The zone it was sent to (bytes).
    pub zone_start: u64,
    /// The logical block the device says it wrote at.
    pub lba: u64,
}

/// One job's appends and where the device placed them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Landings {
    /// Appends completed without an error.
    pub appends: u64,
    /// Of those, the ones placed outside their zone (counted as I/O errors).
    pub outside: u64,
    pub first_outside: Option<Misplaced>,
}

impl Landings {
    /// Counts a completed append sent to the zone holding `offset`, placed at `lba`;
    /// whether it landed inside that zone.
    #[inline]
    pub fn land(&mut self, za: &ZoneAppend, offset: u64, len: u32, lba: u64) -> bool {
        self.appends += 1;
        if za.placed(offset, len, lba).is_some() {
            return true;
        }
        self.outside += 1;
        self.first_outside.get_or_insert(Misplaced {
            zone_start: za.zone_start(offset),
            lba,
        });
        false
    }
}

impl fmt::Display for Landings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.first_outside {
            None => write!(
                f,
                "zone append: {} appends, each placed by the device inside the zone it was \
                 sent to",
                self.appends
            ),
            Some(m) => write!(
                f,
                "zone append: {} of {} appends placed outside the zone they were sent to \
                 (counted as errors; the first at LBA {}, sent to the zone at {})",
                self.outside,
                self.appends,
                m.lba,
                format_size(m.zone_start)
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const Z: u64 = 4 << 20;

    fn za() -> ZoneAppend {
        ZoneAppend {
            ns: Namespace {
                nsid: 1,
                lba_shift: 9,
            },
            zone_bytes: Z,
        }
    }

    #[test]
    fn each_write_goes_to_the_zone_its_offset_falls_in() {
        let z = za();
        assert_eq!(z.zone_start(0), 0);
        assert_eq!(z.zone_start(Z - 512), 0);
        assert_eq!(z.zone_start(Z), Z);
        assert_eq!(z.zone_start(3 * Z + (128 << 10)), 3 * Z);
    }

    #[test]
    fn an_append_lands_only_whole_inside_its_zone() {
        let z = za();
        let lba = |bytes: u64| bytes >> 9;
        // Sent to zone 2 (its 5th block of 128 KiB), placed anywhere in zone 2: inside.
        let sent = 2 * Z + 4 * (128 << 10);
        assert_eq!(z.placed(sent, 128 << 10, lba(2 * Z)), Some(2 * Z));
        assert_eq!(
            z.placed(sent, 128 << 10, lba(3 * Z - (128 << 10))),
            Some(3 * Z - (128 << 10))
        );
        // In zone 1 or 3, or running over zone 2's end: outside.
        assert_eq!(z.placed(sent, 128 << 10, lba(2 * Z - 512)), None);
        assert_eq!(z.placed(sent, 128 << 10, lba(3 * Z)), None);
        assert_eq!(z.placed(sent, 128 << 10, lba(3 * Z - (64 << 10))), None);
        // An LBA whose bytes do not fit 64 bits.
        assert_eq!(z.placed(sent, 512, u64::MAX), None);

        let mut l = Landings::default();
        assert!(l.land(&z, sent, 128 << 10, lba(2 * Z)));
        assert_eq!(
            l.to_string(),
            "zone append: 1 appends, each placed by the device inside the zone it was sent to"
        );
        assert!(!l.land(&z, sent, 128 << 10, lba(5 * Z)));
        assert!(!l.land(&z, 0, 128 << 10, lba(Z)));
        assert_eq!((l.appends, l.outside), (3, 2));
        assert_eq!(
            l.first_outside,
            Some(Misplaced {
                zone_start: 2 * Z,
                lba: lba(5 * Z)
            })
        );
        let said = l.to_string();
        assert!(
            said.starts_with("zone append: 2 of 3 appends placed outside"),
            "{said}"
        );
        assert!(
            said.contains("LBA 40960, sent to the zone at 8MiB"),
            "{said}"
        );
    }
}
