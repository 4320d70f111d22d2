//! What a host-managed zoned device (NVMe ZNS, SMR) cannot take, checked for each step
//! before any I/O ([`check_steps`]): its sequential zones are written only at their write
//! pointers, in order, so random writes, trims, mixes with writes, several jobs, a start
//! off a zone's start, a write that comes round the region again, one into a zone's
//! unwritable tail (capacity below size) and queued writes with no zone write locking (or
//! through NVMe passthrough, which bypasses it) are refused with a [`ZoneRefusal`]. A step
//! that writes by zone append may keep several writes in flight (the device places each),
//! but its appends must fit the zones: one block size dividing their capacity, within the
//! device's append limit, no conventional zone. The run resets the zones a step writes
//! before it (`host::zone_reset`), so each write pointer is then at its zone's start. An
//! NVMe generic device (`/dev/ngXnY`) is checked as the block namespace behind it, whose
//! sysfs and zone ioctls tell its zones.

use std::fs::File;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use super::nvme;
use crate::drive::zones::{self, Zone};
use crate::drive::{ZoneModel, Zones};
use crate::engine::{EngineError, InvalidStep, StepTarget, ZoneRefusal};
use crate::workload::{EngineKind, StepSpec};

/// What the check knows of the device: its zones by sysfs and report, and whether queued
/// writes stay in order.
pub struct ZonedDevice {
    /// The block device whose zones these are (the namespace behind a generic device):
    /// where zones are reset and reported.
    pub block: PathBuf,
    pub zones: Zones,
    /// The zone report (empty when it could not be read: the sysfs zone size is used).
    pub report: Vec<Zone>,
    /// Queued writes reach the zones in order (kernel 6.10+, or mq-deadline).
    pub ordered_queue: bool,
    /// The scheduler selected in `queue/scheduler`.
    pub scheduler: String,
    /// The largest zone append the device takes (`queue/zone_append_max_bytes`); 0 when
    /// unknown.
    pub append_max: u64,
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
    // A conventional zone has no write pointer to append at.
    if let Some(z) = written
        .iter()
        .find(|z| w.zone_append && !z.sequential_only())
    {
        return Err(ZoneRefusal::AppendConventional {
            zone_start: z.start,
        });
    }
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
    if w.zone_append {
        let capacity = written
            .iter()
            .map(|z| z.capacity)
            .min()
            .unwrap_or(dev.zones.zone_bytes);
        let bs = w.bs.max();
        if bs == 0 || capacity % bs != 0 {
            return Err(ZoneRefusal::AppendCrossesZone { bs, capacity });
        }
        if dev.append_max > 0 && bs > dev.append_max {
            return Err(ZoneRefusal::AppendTooLarge {
                bs,
                max: dev.append_max,
            });
        }
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
    // Zone append needs no order: the device places each write at the write pointer.
    if w.iodepth > 1 && !w.zone_append && spec.engine == EngineKind::UringCmd {
        return Err(ZoneRefusal::QueuedPassthrough { iodepth: w.iodepth });
    }
    if w.iodepth > 1 && !w.zone_append && !dev.ordered_queue {
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
/// `/sys/dev/block/MAJ:MIN/queue/zoned` names a zone model, or an NVMe generic device
/// (`/dev/ngXnY`) whose block namespace (`/dev/nvmeXnY`) is one.
pub fn zoned_device(path: &Path) -> Option<ZonedDevice> {
    let block = match nvme::is_generic_device(path) {
        true => nvme::block_namespace(path)?,
        false => path.to_path_buf(),
    };
    let path = block.as_path();
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
    let append_max = std::fs::read_to_string(queue.join("zone_append_max_bytes"))
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0);
    Some(ZonedDevice {
        block: block.clone(),
        append_max,
        zones,
        report,
        ordered_queue: kernel_plugs_zone_writes(&release) || scheduler == "mq-deadline",
        scheduler,
    })
}

/// Checks every step against the target when it is a host-managed zoned device; a step
/// that writes by zone append needs one.
pub fn check_steps(t: &StepTarget, specs: &[StepSpec]) -> Result<(), EngineError> {
    let dev = zoned_device(&t.path).filter(|d| d.zones.model == ZoneModel::HostManaged);
    if dev.is_none() && specs.iter().any(|s| s.workload.zone_append) {
        return Err(EngineError::Invalid(InvalidStep::AppendNotZoned(
            t.path.clone(),
        )));
    }
    let Some(dev) = dev else {
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
            block: PathBuf::from("/dev/nvme9n1"),
            append_max: 0,
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
                rwmixread: 50,
                ..Workload::new(
                    rw,
                    BlockSizes::single(128 << 10),
                    1,
                    Region { offset, len },
                    1,
                )
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
        let off_start = ZoneRefusal::NotAtZoneStart {
            offset: Z + 4096,
            zone_start: Z,
        };
        let wraps = || Err(ZoneRefusal::WrapsRound { region: 4 * Z });
        for (rw, offset, bytes, want) in [
            (RwMode::Write, Z, Some(4 * Z), Ok(())),
            (RwMode::RandRead, Z, None, Ok(())),
            (
                RwMode::RandWrite,
                Z,
                Some(Z),
                Err(ZoneRefusal::RandomWrites),
            ),
            (RwMode::Rw, Z, Some(Z), Err(ZoneRefusal::MixedWithWrites)),
            (RwMode::Trim, Z, Some(Z), Err(ZoneRefusal::Trims)),
            (RwMode::TrimWrite, Z, Some(Z), Err(ZoneRefusal::Trims)),
            (RwMode::Write, Z + 4096, Some(Z), Err(off_start)),
            (RwMode::Write, Z, None, wraps()),
            (RwMode::Write, Z, Some(5 * Z), wraps()),
        ] {
            let got = check_step(&d, &spec(rw, offset, 4 * Z, bytes));
            assert_eq!(got, want, "{rw:?} at {offset}, {bytes:?} bytes");
        }
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
    fn zone_appends_queue_deep_but_must_fit_the_zones() {
        let d = dev(Z);
        let mut append = spec(RwMode::Write, Z, 4 * Z, Some(4 * Z));
        append.engine = EngineKind::UringCmd;
        append.workload.zone_append = true;
        append.workload.iodepth = 8;
        // No zone write locking (scheduler none, an old kernel): appends need none.
        assert!(!d.ordered_queue);
        assert_eq!(check_step(&d, &append), Ok(()));
        // Plain passthrough writes in flight together bypass the kernel's ordering, even
        // where it has some.
        let mut plain = append.clone();
        plain.workload.zone_append = false;
        let ordered = ZonedDevice {
            ordered_queue: true,
            ..dev(Z)
        };
        assert_eq!(
            check_step(&ordered, &plain),
            Err(ZoneRefusal::QueuedPassthrough { iodepth: 8 })
        );
        plain.workload.iodepth = 1;
        assert_eq!(check_step(&d, &plain), Ok(()));
        // A block size that leaves a tail in each zone: an append would cross its end.
        let mut odd = append.clone();
        odd.workload.bs = BlockSizes::single(96 << 10);
        assert_eq!(
            check_step(&d, &odd),
            Err(ZoneRefusal::AppendCrossesZone {
                bs: 96 << 10,
                capacity: Z
            })
        );
        // Above the device's zone append limit.
        let small = ZonedDevice {
            append_max: 64 << 10,
            ..dev(Z)
        };
        assert_eq!(
            check_step(&small, &append),
            Err(ZoneRefusal::AppendTooLarge {
                bs: 128 << 10,
                max: 64 << 10
            })
        );
        // Into the conventional zone 0, which has no write pointer.
        let mut conv = append.clone();
        conv.workload.region.offset = 0;
        assert_eq!(
            check_step(&d, &conv),
            Err(ZoneRefusal::AppendConventional { zone_start: 0 })
        );
        // Random appends are still random writes.
        let mut random = append.clone();
        random.workload.rw = RwMode::RandWrite;
        assert_eq!(check_step(&d, &random), Err(ZoneRefusal::RandomWrites));
        let said = InvalidStep::Zoned {
            path: "/dev/ng0n1".into(),
            why: ZoneRefusal::AppendCrossesZone {
                bs: 96 << 10,
                capacity: Z,
            },
        }
        .to_string();
        assert!(
            said.contains("zone append of 96KiB does not divide the zones' capacity (4MiB)"),
            "{said}"
        );
    }

    #[test]
    fn zone_append_on_what_is_not_a_zoned_namespace_is_refused() {
        // A regular file (as a conventional namespace or a plain disk): no zones at all.
        let f = tempfile::NamedTempFile::new().unwrap();
        f.as_file().set_len(16 * Z).unwrap();
        let t = StepTarget {
            path: f.path().to_path_buf(),
            size: 16 * Z,
            align: 512,
            verify: None,
        };
        let mut s = spec(RwMode::Write, 0, 4 * Z, Some(4 * Z));
        s.engine = EngineKind::UringCmd;
        assert!(check_steps(&t, std::slice::from_ref(&s)).is_ok());
        s.workload.zone_append = true;
        let err = check_steps(&t, &[s]).unwrap_err();
        assert!(
            matches!(&err, EngineError::Invalid(InvalidStep::AppendNotZoned(p)) if p == f.path()),
            "{err}"
        );
        assert!(
            err.to_string()
                .contains("is not a host-managed zoned device"),
            "{err}"
        );
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
