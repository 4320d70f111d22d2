//! Target → whole disk resolution: through partitions, device-mapper and md on a fake
//! sysfs tree; and on this machine's real file systems and block devices.

use crate::fake_sysfs;

use std::path::Path;

use drivescope::drive::{self, disks_under, list_disks, SysRoot, Transport, ZoneModel, Zones};
use fake_sysfs::Tree;

const ATA: &str = "sys/devices/pci0000:00/0000:00:1f.2";

/// sda (SATA, partitions sda1 sda2), sdb (SATA), dm-0 over sda2 + sdb, md0 over sda1 +
/// nvme0n1p1 — laid out as sysfs lays them out.
fn tree() -> Tree {
    let t = Tree::new();
    for (disk, host) in [
        ("sda", "ata1/host0/target0:0:0/0:0:0:0"),
        ("sdb", "ata2/host1/target1:0:0/1:0:0:0"),
    ] {
        let dev = format!("{ATA}/{host}");
        let b = format!("{dev}/block/{disk}");
        t.file(&format!("{b}/size"), "3750748848\n");
        t.file(&format!("{b}/queue/logical_block_size"), "512\n");
        t.file(&format!("{b}/queue/physical_block_size"), "4096\n");
        t.file(&format!("{b}/queue/rotational"), "0\n");
        t.file(&format!("{dev}/model"), "Micron_5300_MTFD\n");
        t.file(&format!("{dev}/vendor"), "ATA     \n");
        t.file(&format!("{dev}/rev"), "U001\n");
        t.link(&format!("{b}/device"), &dev);
        t.link(&format!("sys/block/{disk}"), &b);
        t.link(&format!("sys/class/block/{disk}"), &b);
    }
    for p in ["sda1", "sda2"] {
        let b = format!("{ATA}/ata1/host0/target0:0:0/0:0:0:0/block/sda/{p}");
        t.file(&format!("{b}/partition"), "1\n");
        t.link(&format!("sys/class/block/{p}"), &b);
    }
    let nvme = "sys/devices/pci0000:00/0000:00:04.0/nvme/nvme0";
    let ns = format!("{nvme}/nvme0n1");
    t.file(&format!("{ns}/size"), "1000\n");
    t.file(&format!("{nvme}/model"), "Samsung SSD 970 EVO Plus 250GB\n");
    t.file(&format!("{nvme}/serial"), "S4EUNX0N\n");
    t.file(&format!("{nvme}/firmware_rev"), "2B2QEXM7\n");
    t.link(&format!("{ns}/device"), nvme);
    t.link("sys/block/nvme0n1", &ns);
    t.link("sys/class/block/nvme0n1", &ns);
    t.file(&format!("{ns}/nvme0n1p1/partition"), "1\n");
    t.link("sys/class/block/nvme0n1p1", &format!("{ns}/nvme0n1p1"));
    for (v, slaves) in [("dm-0", ["sda2", "sdb"]), ("md0", ["sda1", "nvme0n1p1"])] {
        let b = format!("sys/devices/virtual/block/{v}");
        t.file(&format!("{b}/size"), "100\n");
        for s in slaves {
            t.link(&format!("{b}/slaves/{s}"), &format!("sys/class/block/{s}"));
        }
        t.link(&format!("sys/block/{v}"), &b);
        t.link(&format!("sys/class/block/{v}"), &b);
    }
    t
}

#[test]
fn partitions_dm_and_md_resolve_to_whole_disks() {
    let t = tree();
    let root = SysRoot::under(t.root());
    assert_eq!(disks_under(&root, "sda"), ["sda"]);
    assert_eq!(disks_under(&root, "sda2"), ["sda"]);
    assert_eq!(disks_under(&root, "dm-0"), ["sda", "sdb"]);
    assert_eq!(disks_under(&root, "md0"), ["nvme0n1", "sda"]);
}

#[test]
fn identity_from_sysfs() {
    let t = tree();
    let root = SysRoot::under(t.root());
    let disks = list_disks(&root);
    let names: Vec<&str> = disks.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["dm-0", "md0", "nvme0n1", "sda", "sdb"]);
    let sda = &disks[3];
    assert_eq!(sda.transport, Transport::Sata);
    assert_eq!(
        sda.model.as_deref(),
        Some("Micron_5300_MTFD"),
        "vendor 'ATA' dropped"
    );
    assert_eq!(sda.firmware.as_deref(), Some("U001"));
    assert_eq!(sda.capacity_bytes, 3_750_748_848 * 512);
    assert_eq!(
        (sda.logical_block_size, sda.physical_block_size),
        (512, 4096)
    );
    assert!(!sda.rotational);
    let nvme = &disks[2];
    assert_eq!(nvme.transport, Transport::Nvme);
    assert_eq!(nvme.nvme_controller.as_deref(), Some("nvme0"));
    assert_eq!(nvme.serial.as_deref(), Some("S4EUNX0N"));
    assert_eq!(nvme.firmware.as_deref(), Some("2B2QEXM7"));
    assert_eq!(disks[0].transport, Transport::Other);
}

/// A zoned NVMe namespace (ZNS) as the kernel shows it: 64 zones of 4 MiB, 14 open at
/// most, active zones unlimited (0); sda of the same tree is not zoned (`none`).
#[test]
fn zoned_devices_from_sysfs() {
    let t = tree();
    let ns = "sys/devices/pci0000:00/0000:00:04.0/nvme/nvme0/nvme0n1";
    for (name, v) in [
        ("zoned", "host-managed"),
        ("chunk_sectors", "8192"),
        ("nr_zones", "64"),
        ("max_open_zones", "14"),
        ("max_active_zones", "0"),
    ] {
        t.file(&format!("{ns}/queue/{name}"), &format!("{v}\n"));
    }
    t.file(
        &format!("{ATA}/ata1/host0/target0:0:0/0:0:0:0/block/sda/queue/zoned"),
        "none\n",
    );
    let root = SysRoot::under(t.root());
    let disks = list_disks(&root);
    let nvme = disks.iter().find(|d| d.name == "nvme0n1").expect("nvme0n1");
    assert_eq!(
        nvme.zones,
        Some(Zones {
            model: ZoneModel::HostManaged,
            zone_bytes: 4 << 20,
            count: 64,
            max_open: Some(14),
            max_active: None,
        })
    );
    let sda = disks.iter().find(|d| d.name == "sda").expect("sda");
    assert_eq!(sda.zones, None);
    // The JSON of a disk carries the zones only when there are some.
    let json = serde_json::to_value(nvme).expect("json");
    assert_eq!(json["zones"]["model"], "host-managed");
    assert!(serde_json::to_value(sda)
        .expect("json")
        .get("zones")
        .is_none());
}

#[test]
fn a_file_resolves_to_this_machines_disk_and_a_missing_one_through_its_parent() {
    let dir = crate::common::disk_tempdir();
    let file = dir.path().join("f.bin");
    std::fs::write(&file, b"x").expect("write");
    let here = match drive::resolve(&file) {
        Ok(d) => d,
        Err(e) => {
            // tmpfs / overlay without a device: the error must say so.
            let msg = e.to_string();
            assert!(msg.contains("no block device"), "{msg}");
            skip!(NoBlockDevice, "temp dir has no block device: {msg}");
        }
    };
    assert!(!here.disks.is_empty());
    for d in &here.disks {
        assert!(
            Path::new("/sys/block").join(&d.name).exists(),
            "{} is a whole disk",
            d.name
        );
        assert!(d.capacity_bytes > 0);
    }
    assert!(
        Path::new("/sys/block")
            .join(&here.stat_name)
            .join("stat")
            .exists(),
        "stat_name {} names a stat file",
        here.stat_name
    );
    let later = drive::resolve(&dir.path().join("not/yet/created.bin")).expect("resolves");
    assert_eq!(later.disks, here.disks);
    assert_eq!(later.block_device, here.block_device);
}

/// Where a run with no `--target` put its test file, with HOME and XDG_DATA_HOME as given
/// (None: unset); the `start` line's target, checked against the file on disk.
fn default_target_with(home: &Path, xdg: Option<&std::ffi::OsStr>) -> std::path::PathBuf {
    let mut cmd = std::process::Command::new(crate::common::bin());
    cmd.args([
        "run",
        "--size",
        "4MiB",
        "--rw",
        "randwrite",
        "--duration",
        "100ms",
    ])
    .arg("--json")
    .arg("--session")
    .arg(home.join("s.yaml"))
    // Called twice on one home: the second run replaces the first's session.
    .arg("--force")
    .current_dir(home)
    .env("HOME", home)
    .env_remove("XDG_DATA_HOME");
    if let Some(x) = xdg {
        cmd.env("XDG_DATA_HOME", x);
    }
    let out = cmd.output().expect("run drivescope");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines = crate::common::json_lines(&out);
    let start = &crate::common::of_type(&lines, "start")[0];
    let t = std::path::PathBuf::from(start["target"].as_str().expect("start.target"));
    // (A relative path is the child's, which ran in `home`.)
    assert!(home.join(&t).is_file(), "{} was not created", t.display());
    t
}

#[test]
fn default_target_follows_xdg_data_home() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    // XDG_DATA_HOME set: the test file goes there, and nothing under ~/.local/share.
    let xdg = h.join("xdg-data");
    assert_eq!(
        default_target_with(h, Some(xdg.as_os_str())),
        xdg.join("drivescope/scratch.bin")
    );
    assert!(
        !h.join(".local").exists(),
        "the XDG dir was not the only one used"
    );
    // Unset, or relative (the XDG spec says to ignore it then): ~/.local/share.
    let fallback = h.join(".local/share/drivescope/scratch.bin");
    assert_eq!(default_target_with(h, None), fallback);
    std::fs::remove_file(&fallback).unwrap();
    assert_eq!(
        default_target_with(h, Some(std::ffi::OsStr::new("relative/data"))),
        fallback
    );
    assert!(!h.join("relative").exists());
}

#[test]
fn proc_is_not_a_drive() {
    let e = drive::resolve(Path::new("/proc/self/status")).expect_err("procfs");
    assert!(e.to_string().contains("no block device"), "{e}");
}

/// glibc's gnu_dev_major/minor.
fn split(dev: u64) -> (u64, u64) {
    (
        ((dev >> 32) & 0xffff_f000) | ((dev >> 8) & 0xfff),
        ((dev >> 12) & 0xffff_ff00) | (dev & 0xff),
    )
}

#[test]
fn a_real_file_through_a_fake_sysfs_partition_and_dm() {
    use std::os::unix::fs::MetadataExt;
    let dir = crate::common::disk_tempdir();
    let file = dir.path().join("f.bin");
    std::fs::write(&file, b"x").expect("write");
    let (ma, mi) = split(std::fs::metadata(&file).expect("stat").dev());
    if ma == 0 {
        skip!(
            NoBlockDevice,
            "the temp dir's file system has no device number"
        );
    }
    // The file's real device number, mapped by the fake sysfs to partition sda2 ...
    let t = tree();
    let part = format!("{ATA}/ata1/host0/target0:0:0/0:0:0:0/block/sda/sda2");
    t.link(&format!("sys/dev/block/{ma}:{mi}"), &part);
    let root = SysRoot::under(t.root());
    let info = drive::resolve_in(&root, &file).expect("resolves");
    assert_eq!(info.block_device, "sda2");
    assert_eq!(info.stat_name, "sda/sda2");
    let names: Vec<&str> = info.disks.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["sda"]);
    assert_eq!(info.disks[0].transport, Transport::Sata);
    // ... and then to device-mapper over two disks.
    std::fs::remove_file(t.path(&format!("sys/dev/block/{ma}:{mi}"))).expect("rm");
    t.link(
        &format!("sys/dev/block/{ma}:{mi}"),
        "sys/devices/virtual/block/dm-0",
    );
    let info = drive::resolve_in(&root, &dir.path().join("later.bin")).expect("resolves");
    assert_eq!(info.block_device, "dm-0");
    assert_eq!(info.stat_name, "dm-0");
    let names: Vec<&str> = info.disks.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["sda", "sdb"]);
}
