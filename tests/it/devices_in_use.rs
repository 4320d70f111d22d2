//! `devices` on a fake tree: mounted partitions, holders (dm over a partition), swap, and
//! free disks; mountinfo's escapes.

use crate::fake_sysfs;

use std::path::Path;

use drivescope::commands::devices::collect;
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
    for (disk, major_minor, parts) in [
        ("sda", "8:0", vec![("sda1", "8:1"), ("sda2", "8:2")]),
        ("sdb", "8:16", vec![("sdb1", "8:17")]),
        ("sdc", "8:32", vec![]),
        ("sdd", "8:48", vec![("sdd1", "8:49")]),
    ] {
        let b = format!("sys/devices/virtual/test/block/{disk}");
        t.file(&format!("{b}/dev"), &format!("{major_minor}\n"));
        t.file(&format!("{b}/size"), "2048\n");
        t.file(&format!("{b}/stat"), "1 0 8 0 0 0 0 0 0 1 0\n");
        t.mkdir(&format!("{b}/holders"));
        for (p, mm) in parts {
            t.file(&format!("{b}/{p}/partition"), "1\n");
            t.file(&format!("{b}/{p}/dev"), &format!("{mm}\n"));
            t.mkdir(&format!("{b}/{p}/holders"));
        }
        t.link(&format!("sys/block/{disk}"), &b);
    }
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
    assert_eq!(by("sda").in_use, ["sda1 mounted on /", "sda2 held by dm-0"]);
    assert_eq!(by("sdb").in_use, ["sdb1 mounted on /mnt/my data"]);
    assert!(by("sdc").in_use.is_empty(), "free disk");
    assert_eq!(by("sdd").in_use, ["sdd1 is swap"]);
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
