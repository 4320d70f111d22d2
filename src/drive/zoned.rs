//! A zoned block device's zone facts from sysfs (`queue/zoned`, `queue/chunk_sectors`,
//! `queue/nr_zones`, `queue/max_open_zones`, `queue/max_active_zones`): NVMe ZNS
//! namespaces and SMR disks, which take writes only in order within each zone.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::SysRoot;

/// The kernel's zone model of a device (`queue/zoned`), when it is not `none`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ZoneModel {
    /// Sequential writes preferred; random writes still work (the drive remaps them).
    HostAware,
    /// Each sequential zone is written only at its write pointer.
    HostManaged,
}

impl ZoneModel {
    /// As sysfs spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            ZoneModel::HostAware => "host-aware",
            ZoneModel::HostManaged => "host-managed",
        }
    }

    /// The model sysfs (or a session's record of it) names; none for `none` or a word
    /// this build does not know.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "host-aware" => Some(ZoneModel::HostAware),
            "host-managed" => Some(ZoneModel::HostManaged),
            _ => None,
        }
    }
}

/// The zones of a zoned device, as sysfs tells them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Zones {
    pub model: ZoneModel,
    /// Zone size in bytes (`queue/chunk_sectors` × 512).
    pub zone_bytes: u64,
    /// Number of zones (`queue/nr_zones`).
    pub count: u64,
    /// Most zones open at once (`queue/max_open_zones`); `None` when sysfs says 0: no limit.
    pub max_open: Option<u64>,
    /// Most zones active (open or closed) at once (`queue/max_active_zones`); `None`: no limit.
    pub max_active: Option<u64>,
}

impl Zones {
    /// The zones of the disk whose `queue/` folder is `queue`; `None` for a device that is
    /// not zoned (`none`, or no such attribute on an older kernel).
    pub fn read_queue(queue: &Path) -> Option<Zones> {
        let model = ZoneModel::parse(&SysRoot::attr(&queue.join("zoned"))?)?;
        let limit = |name: &str| SysRoot::attr_u64(&queue.join(name)).filter(|n| *n > 0);
        Some(Zones {
            model,
            zone_bytes: SysRoot::attr_u64(&queue.join("chunk_sectors")).unwrap_or(0) * 512,
            count: SysRoot::attr_u64(&queue.join("nr_zones")).unwrap_or(0),
            max_open: limit("max_open_zones"),
            max_active: limit("max_active_zones"),
        })
    }

    /// The zones of whole disk `name`.
    pub fn read(root: &SysRoot, name: &str) -> Option<Zones> {
        Self::read_queue(&root.block(name).join("queue"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queue(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (name, v) in files {
            std::fs::write(dir.path().join(name), format!("{v}\n")).unwrap();
        }
        dir
    }

    #[test]
    fn a_host_managed_queue_reads_as_its_zones() {
        let q = queue(&[
            ("zoned", "host-managed"),
            ("chunk_sectors", "8192"),
            ("nr_zones", "64"),
            ("max_open_zones", "14"),
            ("max_active_zones", "0"),
        ]);
        assert_eq!(
            Zones::read_queue(q.path()),
            Some(Zones {
                model: ZoneModel::HostManaged,
                zone_bytes: 4 << 20,
                count: 64,
                max_open: Some(14),
                max_active: None,
            })
        );
    }

    #[test]
    fn a_queue_that_is_not_zoned_has_no_zones() {
        assert_eq!(Zones::read_queue(queue(&[("zoned", "none")]).path()), None);
        assert_eq!(Zones::read_queue(queue(&[]).path()), None);
    }
}
