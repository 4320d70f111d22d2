//! A step that writes a host-managed zoned device starts on empty zones: the engine is
//! wrapped ([`ZoneResetting`]) so that the zones the step writes are reset
//! (`BLKRESETZONE`) before its I/O, and the zone report (`BLKREPORTZONE`) after it is
//! checked against what the step wrote: every zone before the last one written full, the
//! write pointers adding up to the bytes written ([`ZoneCheck`], said as the step's note).

use std::fmt;
use std::fs::{File, OpenOptions};

use crate::drive::zones::{self, Zone};
use crate::drive::ZoneModel;
use crate::engine::native::zoned::{zoned_device, ZonedDevice};
use crate::engine::{Engine, EngineError, StepControl, StepObserver, StepTarget};
use crate::stats::StepSummary;
use crate::units::format_size;
use crate::workload::{EngineKind, Region, StepSpec};

/// An engine whose write steps on a host-managed zoned device start on reset zones.
pub struct ZoneResetting(pub Box<dyn Engine>);

/// A zone reset the kernel refused.
#[derive(Debug, thiserror::Error)]
#[error("cannot reset the zones of {path} at {} (BLKRESETZONE): {source}", format_size(region.offset))]
pub struct ZoneResetError {
    /// The block device holding the zones.
    pub path: String,
    pub region: Region,
    pub source: std::io::Error,
}

/// What the zone report says after a write step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ZoneCheck {
    /// The write pointers are where the step's bytes put them.
    InOrder { zones: usize, written: u64 },
    /// A zone before the last one written is not full: a write went out of order.
    Gap { zone_start: u64, wp: u64 },
    /// The write pointers add up to other than the bytes the step wrote.
    Differs { by_zones: u64, by_step: u64 },
}

impl fmt::Display for ZoneCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ZoneCheck::InOrder { zones, written } => write!(
                f,
                "zone report: {zones} zones written in order, write pointers {} past the \
                 zones' starts, as the step wrote",
                format_size(*written)
            ),
            ZoneCheck::Gap { zone_start, wp } => write!(
                f,
                "zone report: the zone at {} is not full (write pointer at {}) though a later \
                 zone was written",
                format_size(*zone_start),
                format_size(*wp)
            ),
            ZoneCheck::Differs { by_zones, by_step } => write!(
                f,
                "zone report: the write pointers add up to {}, the step wrote {}",
                format_size(*by_zones),
                format_size(*by_step)
            ),
        }
    }
}

/// The zones a step writes: from its region's start (a zone start: the step check says
/// so) to the zone holding its last byte.
fn zones_written(dev: &ZonedDevice, spec: &StepSpec) -> Region {
    let r = spec.workload.region;
    let bytes = spec.end.bytes.unwrap_or(r.len).min(r.len);
    let z = dev.zones.zone_bytes.max(1);
    Region {
        offset: r.offset,
        len: bytes.div_ceil(z) * z,
    }
}

/// Checks the zone report of the written zones against `written` bytes from their start.
pub fn check_report(report: &[Zone], written: u64) -> ZoneCheck {
    let mut by_zones = 0;
    let used: Vec<&Zone> = report.iter().filter(|z| z.wp > z.start).collect();
    for (i, z) in used.iter().enumerate() {
        let filled = (z.wp - z.start).min(z.capacity);
        if i + 1 < used.len() && filled < z.capacity {
            return ZoneCheck::Gap {
                zone_start: z.start,
                wp: z.wp,
            };
        }
        by_zones += filled;
    }
    if by_zones != written {
        return ZoneCheck::Differs {
            by_zones,
            by_step: written,
        };
    }
    ZoneCheck::InOrder {
        zones: used.len(),
        written,
    }
}

/// A step of drivescope's own that writes (a fio job file's zones are left to fio's
/// `zonemode=zbd`, which resets what it writes itself).
fn writes(spec: &StepSpec) -> bool {
    spec.fio_file.is_none() && spec.workload.rw.read_percent(spec.workload.rwmixread) < 100
}

impl Engine for ZoneResetting {
    fn kind(&self) -> EngineKind {
        self.0.kind()
    }

    fn run_step(
        &mut self,
        target: &StepTarget,
        spec: &StepSpec,
        ctl: &StepControl,
        obs: &mut dyn StepObserver,
    ) -> Result<StepSummary, EngineError> {
        let dev = zoned_device(&target.path)
            .filter(|d| d.zones.model == ZoneModel::HostManaged && writes(spec));
        let Some(dev) = dev else {
            return self.0.run_step(target, spec, ctl, obs);
        };
        let region = zones_written(&dev, spec);
        let reset_err = |source| {
            EngineError::Engine(Box::new(ZoneResetError {
                path: dev.block.display().to_string(),
                region,
                source,
            }))
        };
        // The zones' ioctls are the block device's (the namespace behind /dev/ngXnY).
        OpenOptions::new()
            .write(true)
            .open(&dev.block)
            .and_then(|f| zones::reset(&f, region.offset, region.len))
            .map_err(reset_err)?;
        let summary = self.0.run_step(target, spec, ctl, obs)?;
        if let Ok(report) = File::open(&dev.block)
            .and_then(|f| zones::report(&f, region.offset, region.offset + region.len))
        {
            obs.note(&check_report(&report, summary.write_bytes).to_string());
        }
        Ok(summary)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::drive::zones::{ZoneCond, ZoneKind};

    const Z: u64 = 1 << 20;

    fn zone(i: u64, written: u64) -> Zone {
        Zone {
            start: i * Z,
            len: Z,
            capacity: Z,
            wp: i * Z + written,
            kind: ZoneKind::SeqWriteRequired,
            cond: ZoneCond::ImplicitOpen,
        }
    }

    #[test]
    fn a_report_agrees_only_with_zones_filled_in_order() {
        let report = [zone(1, Z), zone(2, Z), zone(3, Z / 2), zone(4, 0)];
        assert_eq!(
            check_report(&report, 2 * Z + Z / 2),
            ZoneCheck::InOrder {
                zones: 3,
                written: 2 * Z + Z / 2
            }
        );
        assert_eq!(
            check_report(&report, 3 * Z),
            ZoneCheck::Differs {
                by_zones: 2 * Z + Z / 2,
                by_step: 3 * Z
            }
        );
        let gap = [zone(1, Z / 2), zone(2, Z)];
        assert_eq!(
            check_report(&gap, Z + Z / 2),
            ZoneCheck::Gap {
                zone_start: Z,
                wp: Z + Z / 2
            }
        );
    }
}
