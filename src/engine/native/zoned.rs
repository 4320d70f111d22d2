//! What a host-managed zoned device (NVMe ZNS, SMR) cannot take, checked for each step
//! before any I/O ([`check_steps`]): its sequential zones are written only at their write
//! pointers, in order, so random writes, trims, mixes with writes, several jobs, a start
//! off a zone's start, a write that comes round the region again, one into a zone's
//! unwritable tail (capacity below size) and queued writes with no zone write locking are
//! refused with a [`ZoneRefusal`]. The run resets the zones a step writes before it
//! (`host::zone_reset`), so each write pointer is then at its zone's start.

use std::fs::File;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use crate::drive::zones::{self, Zone};
use crate::drive::{ZoneModel, Zones};
use crate::engine::{EngineError, InvalidStep, StepTarget, ZoneRefusal};
use crate::workload::StepSpec;

/// What the check knows of the device: its zones by sysfs and report, and whether queued
/// writes stay in order.
pub struct ZonedDevice {
    pub zones: Zones,
    /// The zone report (empty when it could not be read: the sysfs zone size is used).
    pub report: Vec<Zone>,
    /// Queued writes reach the zones in order (kernel 6.10+, or mq-deadline).
    pub ordered_queue: bool,
    /// The scheduler selected in `queue/scheduler`.
    pub scheduler: String,
}

/// The start of the zone holding `offset`.
fn zone_start(dev: &ZonedDevice, offset: u64) -> u64 {
    match dev
        .report
        .iter()
        .find(|z| z.start <= offset && offset < z.start + z.len)
    {
        Some(z) => z.start,
        None if dev.zones.zone_bytes > 0 => offset - offset % dev.zones.zone_bytes,
        None => offset,
    }
}

/// Checks one step against a host-managed zoned device; a step that only reads passes.
pub fn check_step(dev: &ZonedDevice, spec: &StepSpec) -> Result<(), ZoneRefusal> {
    let w = &spec.workload;
    // A fio job file's writes are its own (fio's zonemode=zbd), as the job says them.
    if dev.zones.model != ZoneModel::HostManaged
        || w.rw.read_percent(w.rwmixread) == 100
        || spec.fio_file.is_some()
    {
        return Ok(());
    }
    let region = w.region;
    let written: Vec<&Zone> = dev
        .report
        .iter()
        .filter(|z| z.start < region.offset + region.len && region.offset < z.start + z.len)
        .collect();
    // Conventional zones take writes anywhere: a step within them is any disk's.
    if !dev.report.is_empty() && !written.iter().any(|z| z.sequential_only()) {
        return Ok(());
    }
    if w.trims() {
        return Err(ZoneRefusal::Trims);
    }
    if w.rw.is_random() {
        return Err(ZoneRefusal::RandomWrites);
    }
    if w.rw.is_mixed() {
        return Err(ZoneRefusal::MixedWithWrites);
    }
    if w.jobs > 1 {
        return Err(ZoneRefusal::SeveralJobs(w.jobs));
    }
    let start = zone_start(dev, region.offset);
    if start != region.offset {
        return Err(ZoneRefusal::NotAtZoneStart {
            offset: region.offset,
            zone_start: start,
        });
    }
    let bytes = match spec.end.bytes {
        Some(b) if b <= region.len => b,
        _ => return Err(ZoneRefusal::WrapsRound { region: region.len }),
    };
    let end = region.offset + bytes;
    if let Some(z) = written
        .iter()
        .find(|z| z.capacity < z.len && end > z.start + z.capacity)
    {
        return Err(ZoneRefusal::PastCapacity {
            zone_start: z.start,
            capacity: z.capacity,
        });
    }
    if w.iodepth > 1 && !dev.ordered_queue {
        return Err(ZoneRefusal::NoZoneWriteLocking {
            iodepth: w.iodepth,
            scheduler: dev.scheduler.clone(),
        });
    }
    Ok(())
}

/// The kernel orders queued zone writes itself from 6.10 (zone write plugging).
fn kernel_plugs_zone_writes(release: &str) -> bool {
    let mut n = release
        .split(|c: char| !c.is_ascii_digit())
        .map(|p| p.parse::<u32>().unwrap_or(0));
    let (major, minor) = (n.next().unwrap_or(0), n.next().unwrap_or(0));
    (major, minor) >= (6, 10)
}

/// The selected scheduler of `queue/scheduler` (`[mq-deadline] none` → `mq-deadline`).
fn selected_scheduler(line: &str) -> String {
    line.split_whitespace()
        .find_map(|s| s.strip_prefix('[').and_then(|s| s.strip_suffix(']')))
        .unwrap_or(line.trim())
        .to_string()
}

/// The zoned device at `path` on this system, if it is one: a block device whose
/// `/sys/dev/block/MAJ:MIN/queue/zoned` names a zone model.
pub fn zoned_device(path: &Path) -> Option<ZonedDevice> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.file_type().is_block_device() {
        return None;
    }
    let rdev = meta.rdev();
    let queue = PathBuf::from(format!(
        "/sys/dev/block/{}:{}/queue",
        libc::major(rdev),
        libc::minor(rdev)
    ));
    let zones = Zones::read_queue(&queue)?;
    let report = File::open(path)
        .and_then(|f| zones::report(&f, 0, u64::MAX))
        .unwrap_or_default();
    let scheduler = std::fs::read_to_string(queue.join("scheduler"))
        .map(|s| selected_scheduler(&s))
        .unwrap_or_default();
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    Some(ZonedDevice {
        zones,
        report,
        ordered_queue: kernel_plugs_zone_writes(&release) || scheduler == "mq-deadline",
        scheduler,
    })
}

/// Checks every step against the target when it is a host-managed zoned device.
pub fn check_steps(t: &StepTarget, specs: &[StepSpec]) -> Result<(), EngineError> {
    let Some(dev) = zoned_device(&t.path) else {
        return Ok(());
    };
    for spec in specs {
        check_step(&dev, spec).map_err(|why| InvalidStep::Zoned {
            path: t.path.clone(),
            why,
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::drive::zones::{ZoneCond, ZoneKind};
    use crate::workload::RwMode;
    use crate::workload::{BlockSizes, Region, StepEnd, Workload};

    const Z: u64 = 4 << 20;

    fn dev(capacity: u64) -> ZonedDevice {
        let zone = |i: u64, kind| Zone {
            start: i * Z,
            len: Z,
            capacity,
            wp: i * Z,
            kind,
            cond: ZoneCond::Empty,
        };
        ZonedDevice {
            zones: Zones {
                model: ZoneModel::HostManaged,
                zone_bytes: Z,
                count: 8,
                max_open: None,
                max_active: None,
            },
            report: (0..8)
                .map(|i| {
                    zone(
                        i,
                        if i == 0 {
                            ZoneKind::Conventional
                        } else {
                            ZoneKind::SeqWriteRequired
                        },
                    )
                })
                .collect(),
            ordered_queue: false,
            scheduler: "none".into(),
        }
    }

    fn spec(rw: RwMode, offset: u64, len: u64, bytes: Option<u64>) -> StepSpec {
        StepSpec {
            workload: Workload {
                rw,
                rwmixread: 50,
                rwmixtrim: 0,
                bs: BlockSizes::single(128 << 10),
                iodepth: 1,
                jobs: 1,
                region: Region { offset, len },
                rate_iops: None,
                arrivals: Default::default(),
                seed: 1,
                direct: true,
                job_region: Default::default(),
                access: Default::default(),
            },
            engine: Default::default(),
            options: Default::default(),
            ramp: std::time::Duration::ZERO,
            end: StepEnd {
                duration: None,
                bytes,
            },
            interval: std::time::Duration::from_secs(1),
            fio_file: None,
            fio_version: None,
        }
    }

    #[test]
    fn zone_by_zone_sequential_writes_pass_and_the_rest_is_refused_with_why() {
        let d = dev(Z);
        let ok = spec(RwMode::Write, Z, 4 * Z, Some(4 * Z));
        assert_eq!(check_step(&d, &ok), Ok(()));
        assert_eq!(
            check_step(&d, &spec(RwMode::RandRead, Z, 4 * Z, None)),
            Ok(())
        );
        let refused = |rw, offset, bytes| check_step(&d, &spec(rw, offset, 4 * Z, bytes));
        assert_eq!(
            refused(RwMode::RandWrite, Z, Some(Z)),
            Err(ZoneRefusal::RandomWrites)
        );
        assert_eq!(
            refused(RwMode::Rw, Z, Some(Z)),
            Err(ZoneRefusal::MixedWithWrites)
        );
        assert_eq!(refused(RwMode::Trim, Z, Some(Z)), Err(ZoneRefusal::Trims));
        assert_eq!(
            refused(RwMode::TrimWrite, Z, Some(Z)),
            Err(ZoneRefusal::Trims)
        );
        assert_eq!(
            refused(RwMode::Write, Z + 4096, Some(Z)),
            Err(ZoneRefusal::NotAtZoneStart {
                offset: Z + 4096,
                zone_start: Z
            })
        );
        assert_eq!(
            refused(RwMode::Write, Z, None),
            Err(ZoneRefusal::WrapsRound { region: 4 * Z })
        );
        assert_eq!(
            refused(RwMode::Write, Z, Some(5 * Z)),
            Err(ZoneRefusal::WrapsRound { region: 4 * Z })
        );
        let mut jobs = ok.clone();
        jobs.workload.jobs = 4;
        assert_eq!(check_step(&d, &jobs), Err(ZoneRefusal::SeveralJobs(4)));
        let mut queued = ok.clone();
        queued.workload.iodepth = 8;
        assert_eq!(
            check_step(&d, &queued),
            Err(ZoneRefusal::NoZoneWriteLocking {
                iodepth: 8,
                scheduler: "none".into()
            })
        );
        let locked = ZonedDevice {
            ordered_queue: true,
            ..dev(Z)
        };
        assert_eq!(check_step(&locked, &queued), Ok(()));
        // Random writes within the conventional zone are any disk's.
        assert_eq!(check_step(&d, &spec(RwMode::RandWrite, 0, Z, None)), Ok(()));
    }

    #[test]
    fn a_write_past_a_zones_capacity_is_refused() {
        let d = dev(Z / 2);
        assert_eq!(
            check_step(&d, &spec(RwMode::Write, Z, 4 * Z, Some(Z))),
            Err(ZoneRefusal::PastCapacity {
                zone_start: Z,
                capacity: Z / 2
            })
        );
        assert_eq!(
            check_step(&d, &spec(RwMode::Write, Z, 4 * Z, Some(Z / 2))),
            Ok(())
        );
    }

    #[test]
    fn kernels_and_schedulers_read_as_they_order_writes() {
        assert!(kernel_plugs_zone_writes("6.18.44-fc-v1147"));
        assert!(kernel_plugs_zone_writes("6.10.0"));
        assert!(!kernel_plugs_zone_writes("6.1.0-57-amd64"));
        assert_eq!(
            selected_scheduler("[mq-deadline] kyber none\n"),
            "mq-deadline"
        );
        assert_eq!(selected_scheduler("none\n"), "none");
    }
}
