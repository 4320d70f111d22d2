//! A whole disk's identity from sysfs: model, serial, firmware, capacity, block sizes,
//! rotational, transport, and the NVMe controller behind a namespace.

use std::path::{Path, PathBuf};

use super::{Disk, SysRoot, Transport, Zones};

fn canonical_string(p: &Path) -> String {
    std::fs::canonicalize(p)
        .map(|c| c.display().to_string())
        .unwrap_or_default()
}

fn transport_of(name: &str, devpath: &str, root: &SysRoot) -> Transport {
    if name.starts_with("loop") {
        Transport::Loop
    } else if name.starts_with("nvme") || devpath.contains("/nvme") {
        Transport::Nvme
    } else if devpath.contains("/usb") {
        Transport::Usb
    } else if devpath.contains("/virtio") {
        Transport::Virtio
    } else if devpath.contains("/ata") {
        Transport::Sata
    } else if root.block(name).join("device/scsi_disk").exists()
        || root.block(name).join("device/scsi_level").exists()
    {
        Transport::Scsi
    } else {
        Transport::Other
    }
}

/// The controller (`nvme0`) behind an NVMe namespace: the namespace's `device` link, or
/// for a multipath head (`device` → `nvme-subsysN`) the first controller of the subsystem.
fn nvme_controller(root: &SysRoot, name: &str) -> Option<String> {
    let dev = std::fs::canonicalize(root.block(name).join("device")).ok()?;
    let dev_name = dev.file_name()?.to_string_lossy().into_owned();
    if !dev_name.starts_with("nvme-subsys") {
        return dev_name.starts_with("nvme").then_some(dev_name);
    }
    let mut ctrls: Vec<String> = SysRoot::names_in(&dev)
        .into_iter()
        .filter(|n| {
            n.strip_prefix("nvme")
                .is_some_and(|rest| !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()))
        })
        .collect();
    ctrls.sort();
    ctrls.into_iter().next()
}

/// SCSI VPD page 80h: 4-byte header, then the serial number in ASCII.
fn vpd_serial(path: &Path) -> Option<String> {
    let raw = std::fs::read(path).ok()?;
    let s = String::from_utf8_lossy(raw.get(4..)?).trim().to_string();
    (!s.is_empty()).then_some(s)
}

fn first_attr(paths: &[PathBuf]) -> Option<String> {
    paths.iter().find_map(|p| SysRoot::attr(p))
}

/// The identity of whole disk `name` (`/sys/block/NAME` must exist).
pub fn disk_identity(root: &SysRoot, name: &str) -> Disk {
    let b = root.block(name);
    let dev = b.join("device");
    let devpath = canonical_string(&b);
    let transport = transport_of(name, &devpath, root);
    let model = match transport {
        Transport::Sata | Transport::Scsi | Transport::Usb => {
            let vendor = SysRoot::attr(&dev.join("vendor")).filter(|v| v != "ATA");
            let model = SysRoot::attr(&dev.join("model"));
            match (vendor, model) {
                (Some(v), Some(m)) => Some(format!("{v} {m}")),
                (_, m) => m,
            }
        }
        _ => SysRoot::attr(&dev.join("model")),
    };
    let serial = first_attr(&[dev.join("serial"), b.join("serial")])
        .or_else(|| vpd_serial(&dev.join("vpd_pg80")));
    let firmware = first_attr(&[dev.join("firmware_rev"), dev.join("rev")]);
    let q = b.join("queue");
    Disk {
        name: name.to_string(),
        model,
        serial,
        firmware,
        capacity_bytes: SysRoot::attr_u64(&b.join("size")).unwrap_or(0) * 512,
        logical_block_size: SysRoot::attr_u64(&q.join("logical_block_size"))
            .and_then(|v| u32::try_from(v).ok())
            .unwrap_or(512),
        physical_block_size: SysRoot::attr_u64(&q.join("physical_block_size"))
            .and_then(|v| u32::try_from(v).ok())
            .unwrap_or(512),
        rotational: SysRoot::attr(&q.join("rotational")).as_deref() == Some("1"),
        transport,
        nvme_controller: if transport == Transport::Nvme {
            nvme_controller(root, name)
        } else {
            None
        },
        backing_file: SysRoot::attr(&b.join("loop/backing_file")).map(PathBuf::from),
        zones: Zones::read_queue(&q),
    }
}

/// Every whole disk in `/sys/block`, in name order.
pub fn list_disks(root: &SysRoot) -> Vec<Disk> {
    let mut names = SysRoot::names_in(&root.sys.join("block"));
    names.sort();
    names.iter().map(|n| disk_identity(root, n)).collect()
}
