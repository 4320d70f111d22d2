//! The "in use" oracle (`drive::in_use`) and `devices` on a fake tree: mounted partitions
//! (in this mount namespace and another process's), holders (LVM over a partition), swap
//! devices and swap files, loop devices backed by a partition (at an offset) or by a file
//! on a disk, a device open in another process, read-only and zoned devices, and free
//! disks; mountinfo's escapes. As root, `devices` on the running system: a loop device
//! open in another process and one backing another loop device at an offset.

use crate::common::{self, LoopDev};
use crate::fake_sysfs;

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use drivescope::commands::devices::collect;
use drivescope::drive::in_use::{
    write_blockers, BlockDevice, DevNum, Holder, HolderKind, InUse, ReadOnlyBy, Scene,
};
use drivescope::drive::mounts::{mount_of, parse_mountinfo};
use drivescope::drive::SysRoot;
use fake_sysfs::Tree;

const MOUNTINFO: &str = "\
22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
23 22 0:21 / /proc rw - proc proc rw
24 22 8:17 / /mnt/my\\040data rw - xfs /dev/sdb1 rw
";

fn tree() -> Tree {
    let t = Tree::new();
    disk(&t, "sda", "8:0", &[("sda1", "8:1"), ("sda2", "8:2")]);
    disk(&t, "sdb", "8:16", &[("sdb1", "8:17")]);
    disk(&t, "sdc", "8:32", &[]);
    disk(&t, "sdd", "8:48", &[("sdd1", "8:49")]);
    t.mkdir("sys/devices/virtual/test/block/sda/sda2/holders/dm-0");
    t.file("proc/self/mountinfo", MOUNTINFO);
    t.file(
        "proc/swaps",
        "Filename Type Size Used Priority\n/dev/sdd1 partition 1024 0 -2\n",
    );
    t.mkdir("dev");
    t
}

#[test]
fn in_use_covers_partitions_holders_and_swap() {
    let t = tree();
    let rows = collect(&SysRoot::under(t.root()));
    let by = |n: &str| {
        rows.iter()
            .find(|r| r.disk.name == n)
            .unwrap_or_else(|| panic!("{n} listed"))
    };
    let text = |n: &str| -> Vec<String> { by(n).in_use.iter().map(|u| u.to_string()).collect() };
    assert_eq!(
        text("sda"),
        [
            "/dev/sda1 is mounted on /",
            "/dev/sda2 is held by /dev/dm-0 (device-mapper, md or LVM)"
        ]
    );
    assert_eq!(text("sdb"), ["/dev/sdb1 is mounted on /mnt/my data"]);
    assert!(by("sdc").in_use.is_empty(), "free disk");
    assert_eq!(text("sdd"), ["/dev/sdd1 is in use as swap"]);
    let json = serde_json::to_value(by("sdd")).unwrap();
    assert_eq!(json["in_use"][0], "/dev/sdd1 is in use as swap");
    for r in &rows {
        assert_eq!(r.disk.capacity_bytes, 2048 * 512);
        assert!(r.sources.contains(&"blockstat".to_string()));
    }
}

#[test]
fn mountinfo_parsing_and_longest_prefix() {
    let m = parse_mountinfo(MOUNTINFO);
    assert_eq!(m.len(), 3);
    assert_eq!((m[0].major, m[0].minor), (8, 1));
    assert_eq!(m[2].mount_point, Path::new("/mnt/my data"));
    assert_eq!(m[2].fstype, "xfs");
    assert_eq!(m[2].source, "/dev/sdb1");
    let at = |p: &str| mount_of(&m, Path::new(p)).map(|x| x.mount_point.clone());
    assert_eq!(at("/mnt/my data/f"), Some("/mnt/my data".into()));
    assert_eq!(at("/proc/1"), Some("/proc".into()));
    assert_eq!(at("/home"), Some("/".into()));
    assert!(parse_mountinfo("garbage line\n\n").is_empty());
}

/// A disk `name` (number `num`) with partitions `parts` (name, number) in tree `t`.
fn disk(t: &Tree, name: &str, num: &str, parts: &[(&str, &str)]) {
    let b = format!("sys/devices/virtual/test/block/{name}");
    t.file(&format!("{b}/dev"), &format!("{num}\n"));
    t.file(&format!("{b}/size"), "2048\n");
    t.file(&format!("{b}/stat"), "1 0 8 0 0 0 0 0 0 1 0\n");
    t.mkdir(&format!("{b}/holders"));
    for (p, mm) in parts {
        t.file(&format!("{b}/{p}/partition"), "1\n");
        t.file(&format!("{b}/{p}/dev"), &format!("{mm}\n"));
        t.mkdir(&format!("{b}/{p}/holders"));
    }
    t.link(&format!("sys/block/{name}"), &b);
}

fn dev(root: &SysRoot, name: &str) -> BlockDevice {
    BlockDevice::by_name(root, name).unwrap_or_else(|| panic!("{name} in the tree"))
}

/// A disk numbered as the file system of the tree itself, so that real files in the tree
/// (a swap file, a loop device's backing file) are "on" it, as st_dev says.
fn disk_under_the_tree(t: &Tree, name: &str) -> PathBuf {
    let n = DevNum::of(std::fs::metadata(t.root()).unwrap().dev());
    disk(t, name, &n.to_string(), &[]);
    PathBuf::from(format!("/dev/{name}"))
}

#[test]
fn each_reason_is_found_on_a_fake_tree() {
    let t = tree();
    // An LVM logical volume over sda2.
    t.file("sys/block/dm-0/dm/name", "vg0-lv0\n");
    t.file("sys/block/dm-0/dm/uuid", "LVM-abc\n");
    // sdf1 backs loop0 from 1 MiB on; a file on sde backs loop1.
    disk(&t, "sdf", "8:80", &[("sdf1", "8:81")]);
    let sde = disk_under_the_tree(&t, "sde");
    let backing = t.path("backing.img");
    std::fs::write(&backing, b"x").unwrap();
    t.file("sys/block/loop0/loop/backing_file", "/dev/sdf1\n");
    t.file("sys/block/loop0/loop/offset", "1048576\n");
    t.file(
        "sys/block/loop1/loop/backing_file",
        &format!("{}\n", backing.display()),
    );
    // A swap file on sde.
    let swapfile = t.path("swap file");
    std::fs::write(&swapfile, b"x").unwrap();
    t.file(
        "proc/swaps",
        &format!(
            "Filename Type Size Used Priority\n/dev/sdd1 partition 1024 0 -2\n{} file 4 0 -3\n",
            swapfile.display().to_string().replace(' ', "\\040")
        ),
    );
    // Process 4242, in a mount namespace of its own, has sdg mounted and sdb open.
    disk(&t, "sdg", "8:96", &[]);
    t.mkdir("proc/self/ns");
    std::os::unix::fs::symlink("mnt:[1]", t.path("proc/self/ns/mnt")).unwrap();
    t.mkdir("proc/4242/ns");
    std::os::unix::fs::symlink("mnt:[2]", t.path("proc/4242/ns/mnt")).unwrap();
    t.file(
        "proc/4242/mountinfo",
        &format!("{MOUNTINFO}40 22 8:96 / /srv rw - ext4 /dev/sdg rw\n"),
    );
    t.file("proc/4242/cmdline", "sleep\u{0}1000\u{0}");
    t.mkdir("proc/4242/fd");
    std::os::unix::fs::symlink("/dev/sdb", t.path("proc/4242/fd/3")).unwrap();
    std::os::unix::fs::symlink("pipe:[77]", t.path("proc/4242/fd/4")).unwrap();

    let root = SysRoot::under(t.root());
    let scene = Scene::read(&root);
    let of = |name: &str| scene.block_device(&root, &dev(&root, name));
    let p = |s: &str| PathBuf::from(s);

    assert_eq!(
        of("sda"),
        [
            InUse::Mounted {
                device: p("/dev/sda1"),
                mount_point: p("/"),
                namespace: None
            },
            InUse::Held {
                device: p("/dev/sda2"),
                holder: Holder {
                    name: "dm-0".into(),
                    kind: HolderKind::Lvm {
                        volume: "vg0-lv0".into()
                    }
                }
            }
        ]
    );
    // The same mount seen from 4242's namespace is not listed twice.
    assert_eq!(
        of("sdb"),
        [
            InUse::Mounted {
                device: p("/dev/sdb1"),
                mount_point: p("/mnt/my data"),
                namespace: None
            },
            InUse::OpenBy {
                device: p("/dev/sdb"),
                pid: 4242,
                command: "sleep 1000".into()
            }
        ]
    );
    assert_eq!(
        of("sdg"),
        [InUse::Mounted {
            device: p("/dev/sdg"),
            mount_point: p("/srv"),
            namespace: Some(4242)
        }]
    );
    assert_eq!(
        of("sdd"),
        [InUse::Swap {
            device: p("/dev/sdd1")
        }]
    );
    assert_eq!(
        of("sdf"),
        [InUse::BacksLoop {
            device: p("/dev/sdf1"),
            loop_device: p("/dev/loop0"),
            offset: 1 << 20
        }]
    );
    assert_eq!(
        of("sde"),
        [
            InUse::SwapFileOn {
                device: sde.clone(),
                swap_file: swapfile.clone()
            },
            InUse::LoopFileOn {
                device: sde.clone(),
                loop_device: p("/dev/loop1"),
                backing_file: backing.clone()
            }
        ]
    );
    assert!(of("sdc").is_empty(), "a free disk");
    // What uses the whole disk uses each partition: sdf1 is on sdf, held by md127.
    t.mkdir("sys/devices/virtual/test/block/sdf/holders/md127");
    t.file("sys/block/md127/md/level", "raid1\n");
    t.link(
        "sys/class/block/sdf1",
        "sys/devices/virtual/test/block/sdf/sdf1",
    );
    assert_eq!(
        of("sdf1"),
        [
            InUse::Held {
                device: p("/dev/sdf"),
                holder: Holder {
                    name: "md127".into(),
                    kind: HolderKind::Md {
                        level: "raid1".into()
                    }
                }
            },
            InUse::BacksLoop {
                device: p("/dev/sdf1"),
                loop_device: p("/dev/loop0"),
                offset: 1 << 20
            }
        ]
    );
    assert_eq!(
        scene.file(&swapfile),
        [InUse::SwapFile {
            swap_file: swapfile.clone()
        }]
    );
    assert_eq!(
        scene.file(&backing),
        [InUse::LoopFile {
            file: backing.clone(),
            loop_device: p("/dev/loop1"),
            offset: 0
        }]
    );
    assert!(scene.file(&t.path("proc/swaps")).is_empty());
    assert_eq!(
        of("sdg")[0].to_string(),
        "/dev/sdg is mounted on /srv (in the mount namespace of PID 4242)"
    );
    assert_eq!(
        of("sdf1")[1].to_string(),
        "/dev/sdf1 is the backing device of /dev/loop0 (from offset 1048576)"
    );
}

#[test]
fn read_only_and_zoned_devices_cannot_be_written() {
    let t = tree();
    t.file("sys/devices/virtual/test/block/sdb/ro", "1\n");
    t.file("sys/devices/virtual/test/block/sdc/ro", "0\n");
    t.file(
        "sys/devices/virtual/test/block/sdc/queue/zoned",
        "host-managed\n",
    );
    t.file("sys/devices/virtual/test/block/sdd/queue/zoned", "none\n");
    let root = SysRoot::under(t.root());
    // The nodes are not in the fake /dev: BLKROGET cannot be asked, sysfs answers.
    let node = |n: &str| t.path(&format!("dev/{n}"));
    let p = |s: &str| PathBuf::from(s);
    assert_eq!(
        write_blockers(&dev(&root, "sdb"), &node("sdb"), false),
        [InUse::ReadOnly {
            device: p("/dev/sdb"),
            by: ReadOnlyBy::Sysfs
        }]
    );
    assert!(write_blockers(&dev(&root, "sdc"), &node("sdc"), false).is_empty());
    assert_eq!(
        write_blockers(&dev(&root, "sdc"), &node("sdc"), true),
        [InUse::Zoned {
            device: p("/dev/sdc"),
            model: "host-managed".into()
        }]
    );
    assert!(write_blockers(&dev(&root, "sdd"), &node("sdd"), true).is_empty());
}

#[test]
fn devices_names_what_uses_real_loop_devices() {
    let Some(dev) = LoopDev::new(16 << 20) else {
        return;
    };
    let Some(under) = LoopDev::new(16 << 20) else {
        return;
    };
    let over = match common::losetup(&["-o", "1048576"], &under.dev) {
        Ok(p) => p,
        Err(why) => skip!(Tool, "{why}"),
    };
    struct Detach(PathBuf);
    impl Drop for Detach {
        fn drop(&mut self) {
            common::losetup_detach(&self.0);
        }
    }
    let over = Detach(over);
    // A process with `dev` open: it is in use though nothing is mounted from it.
    let open = std::fs::File::open(&dev.dev).unwrap();
    let child = std::process::Command::new("sleep")
        .arg("1000")
        .stdin(open)
        .spawn()
        .unwrap();
    struct Kill(std::process::Child);
    impl Drop for Kill {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let child = Kill(child);
    let rows = collect(&SysRoot::real());
    let of = |d: &LoopDev| -> Vec<String> {
        rows.iter()
            .find(|r| r.disk.name == d.name)
            .unwrap_or_else(|| panic!("{} listed", d.name))
            .in_use
            .iter()
            .map(|u| u.to_string())
            .collect()
    };
    assert_eq!(
        of(&under),
        [format!(
            "{} is the backing device of {} (from offset 1048576)",
            under.dev.display(),
            over.0.display()
        )]
    );
    assert_eq!(
        of(&dev),
        [format!(
            "{} is open in PID {} (sleep 1000)",
            dev.dev.display(),
            child.0.id()
        )]
    );
    drop(child);
    drop(over);
}
