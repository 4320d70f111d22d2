//! The data-safety guard. A write workload on a block device is refused when the device or
//! one of its partitions is mounted, used as swap, or held by device-mapper, md or LVM, or
//! when it carries a filesystem, partition table or RAID/LVM signature (libblkid's probe
//! through `blkid -p`, or our own magic-number checks where blkid is missing). Even a blank
//! device is written only when `--destroy-data` names it. An existing file drivescope did
//! not create is overwritten only with the same confirmation.

use std::fs::{self, File};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use thiserror::Error;

/// A write refused, with what was found.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[error("refusing to write to {target}: {reason}")]
pub struct Refusal {
    pub target: String,
    pub reason: String,
}

/// The same file or device (both resolved where they exist), as a confirmation is matched.
pub fn same_path(a: &Path, b: &Path) -> bool {
    match (fs::canonicalize(a), fs::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

fn confirm(target: &Path, confirmed: Option<&Path>, what: &str) -> Result<(), Refusal> {
    match confirmed {
        Some(c) if same_path(c, target) => Ok(()),
        Some(c) => Err(Refusal {
            target: target.display().to_string(),
            reason: format!(
                "--destroy-data names {} but the target is {}; they must be the same",
                c.display(),
                target.display()
            ),
        }),
        None => Err(Refusal {
            target: target.display().to_string(),
            reason: format!(
                "{what}; a write test destroys its data. If you mean it, add --destroy-data {}",
                target.display()
            ),
        }),
    }
}

/// Checks an existing regular file that drivescope did not create.
pub fn check_file_write(path: &Path, confirmed: Option<&Path>) -> Result<(), Refusal> {
    confirm(
        path,
        confirmed,
        "this file exists and was not created by drivescope",
    )
}

fn sysfs_dir(rdev: u64) -> PathBuf {
    let (maj, min) = (libc::major(rdev), libc::minor(rdev));
    PathBuf::from(format!("/sys/dev/block/{maj}:{min}"))
}

/// The device and its partitions, as (name, "maj:min").
fn device_and_partitions(rdev: u64) -> Vec<(String, String)> {
    let dir = sysfs_dir(rdev);
    let mut out = Vec::new();
    let name_of = |d: &Path| {
        fs::canonicalize(d)
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_default()
    };
    let (maj, min) = (libc::major(rdev), libc::minor(rdev));
    out.push((name_of(&dir), format!("{maj}:{min}")));
    if let Ok(rd) = fs::read_dir(&dir) {
        for e in rd.flatten() {
            let p = e.path();
            if p.join("partition").exists() {
                if let Ok(dev) = fs::read_to_string(p.join("dev")) {
                    out.push((name_of(&p), dev.trim().to_string()));
                }
            }
        }
    }
    out[1..].sort();
    out
}

/// Undoes the octal escapes (`\040` for a space) that /proc/self/mountinfo uses in paths.
fn unescape_mount_path(p: &str) -> String {
    let b = p.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let oct = b
            .get(i + 1..i + 4)
            .filter(|d| b[i] == b'\\' && d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match oct {
            Some(d) => {
                let v = d.iter().fold(0u32, |acc, c| acc * 8 + u32::from(c - b'0'));
                out.push(u8::try_from(v).unwrap_or(b'?'));
                i += 4;
            }
            None => {
                out.push(b[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn mounted(devs: &[(String, String)]) -> Vec<String> {
    let Ok(info) = fs::read_to_string("/proc/self/mountinfo") else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for line in info.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 5 {
            continue;
        }
        if let Some((name, _)) = devs.iter().find(|(_, mm)| mm == f[2]) {
            found.push(format!(
                "/dev/{name} is mounted on {}",
                unescape_mount_path(f[4])
            ));
        }
    }
    found
}

fn swaps(devs: &[(String, String)]) -> Vec<String> {
    let Ok(s) = fs::read_to_string("/proc/swaps") else {
        return Vec::new();
    };
    s.lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .filter_map(|p| {
            let name = Path::new(p).file_name()?.to_string_lossy().into_owned();
            devs.iter()
                .any(|(n, _)| *n == name)
                .then(|| format!("{p} is in use as swap"))
        })
        .collect()
}

/// What holder `h` (a name in /sys/block) is: an md array, an LVM logical volume or
/// another device-mapper device.
fn describe_holder(sys_block: &Path, h: &str) -> String {
    let read = |rel: &str| {
        fs::read_to_string(sys_block.join(h).join(rel))
            .ok()
            .map(|s| s.trim().to_string())
    };
    if let Some(level) = read("md/level") {
        return format!("md RAID array /dev/{h} ({level})");
    }
    match (read("dm/name"), read("dm/uuid")) {
        (Some(name), Some(uuid)) if uuid.starts_with("LVM-") => {
            format!("LVM logical volume {name} (device-mapper /dev/{h})")
        }
        (Some(name), _) => format!("device-mapper device {name} (/dev/{h})"),
        (None, _) => format!("/dev/{h} (device-mapper, md or LVM)"),
    }
}

fn holders(devs: &[(String, String)]) -> Vec<String> {
    let mut found = Vec::new();
    for (name, mm) in devs {
        let dir = PathBuf::from(format!("/sys/dev/block/{mm}/holders"));
        if let Ok(rd) = fs::read_dir(dir) {
            for e in rd.flatten() {
                let h = e.file_name().to_string_lossy().into_owned();
                let what = describe_holder(Path::new("/sys/block"), &h);
                found.push(format!("/dev/{name} is held by {what}"));
            }
        }
    }
    found
}

/// Names a signature `blkid -p -o export` reported, from its TYPE, USAGE and LABEL, e.g.
/// "ext4 filesystem, label 'data'", "LVM2_member (LVM physical volume)",
/// "linux_raid_member (md RAID member)", "swap signature".
fn describe_blkid(ty: &str, usage: Option<&str>, label: Option<&str>) -> String {
    let what = match (ty, usage) {
        ("swap", _) => "swap signature".to_string(),
        ("LVM2_member" | "LVM1_member", _) => format!("{ty} (LVM physical volume)"),
        ("linux_raid_member", _) => format!("{ty} (md RAID member)"),
        (_, Some("filesystem")) => format!("{ty} filesystem"),
        (_, Some("raid")) => format!("{ty} (RAID or volume-manager member)"),
        (_, Some("crypto")) => format!("{ty} encrypted volume"),
        _ => format!("{ty} signature"),
    };
    match label.filter(|l| !l.is_empty()) {
        Some(l) => format!("{what}, label '{l}',"),
        None => what,
    }
}

/// Undoes `blkid -o export`'s shell quoting (a backslash before special characters).
fn unquote_export(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    let mut chars = v.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(n) = chars.next() {
                out.push(n);
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Signatures found by `blkid -p` (libblkid's low-level probe), or None if blkid is missing
/// or failed. Each is a phrase that reads before "on DEVICE".
fn blkid_probe(path: &Path) -> Option<Vec<String>> {
    let out = Command::new("blkid")
        .args(["-p", "-o", "export"])
        .arg(path)
        .output()
        .ok()?;
    match out.status.code() {
        // Nothing found.
        Some(2) => return Some(Vec::new()),
        // Several signatures that contradict each other: libblkid will not say which is
        // real, but there is certainly something.
        Some(8) => {
            return Some(vec![format!(
                "more than one filesystem or RAID signature (wipefs {} lists them)",
                path.display()
            )])
        }
        Some(0) => {}
        // Other failures: fall back to our own probe.
        _ => return None,
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let get = |k: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("{k}=")).map(unquote_export))
    };
    let mut found = Vec::new();
    if let Some(t) = get("TYPE") {
        found.push(describe_blkid(
            &t,
            get("USAGE").as_deref(),
            get("LABEL").as_deref(),
        ));
    }
    if let Some(pt) = get("PTTYPE") {
        found.push(format!("{pt} partition table"));
    }
    Some(found)
}

/// What is on one device: libblkid's probe, or our own where blkid is missing.
fn signatures(path: &Path) -> Vec<String> {
    blkid_probe(path).unwrap_or_else(|| {
        File::open(path)
            .map(|f| magic_probe(&f))
            .unwrap_or_default()
    })
}

/// Our own probe for the common signatures, used where blkid is not installed.
pub fn magic_probe(dev: &File) -> Vec<String> {
    let mut head = vec![0u8; 70 * 1024];
    let n = match dev.read_at(&mut head, 0) {
        Ok(n) => n,
        Err(_) => return Vec::new(),
    };
    head.truncate(n);
    let at = |off: usize, m: &[u8]| head.get(off..off + m.len()) == Some(m);
    let mut found = Vec::new();
    if at(1080, &[0x53, 0xEF]) {
        found.push("ext2/3/4 filesystem".to_string());
    }
    if at(0, b"XFSB") {
        found.push("xfs filesystem".into());
    }
    if at(65600, b"_BHRfS_M") {
        found.push("btrfs filesystem".into());
    }
    if at(3, b"NTFS    ") {
        found.push("ntfs filesystem".into());
    }
    if at(0, b"LUKS\xba\xbe") {
        found.push("LUKS encrypted volume".into());
    }
    if at(4086, b"SWAPSPACE2") || at(4086, b"SWAP-SPACE") {
        found.push("swap signature".into());
    }
    if at(512, b"EFI PART") || at(4096, b"EFI PART") {
        found.push("gpt partition table".into());
    } else if at(510, &[0x55, 0xAA]) {
        found.push("dos partition table or boot sector".into());
    }
    if (0..4).any(|s| at(s * 512, b"LABELONE")) {
        found.push("LVM2 physical volume".into());
    }
    if at(4096, &[0xfc, 0x4e, 0x2b, 0xa9]) || at(0, &[0xfc, 0x4e, 0x2b, 0xa9]) {
        found.push("linux_raid_member (md) signature".into());
    }
    found
}

/// Checks a write to a block device; `rdev` is its device number.
pub fn check_block_device_write(
    path: &Path,
    rdev: u64,
    confirmed: Option<&Path>,
) -> Result<(), Refusal> {
    let mut devs = device_and_partitions(rdev);
    devs[1..].sort();
    let mut found = mounted(&devs);
    found.extend(swaps(&devs));
    found.extend(holders(&devs));
    if devs.len() > 1 {
        let mut parts: Vec<String> = devs[1..].iter().map(|(n, _)| format!("/dev/{n}")).collect();
        parts.sort();
        found.push(format!("it has partitions ({})", parts.join(", ")));
    }
    found.extend(
        signatures(path)
            .into_iter()
            .map(|s| format!("{s} on {}", path.display())),
    );
    // What each partition holds, so the refusal names the filesystem that would be lost.
    for (name, _) in devs.iter().skip(1) {
        let part = PathBuf::from(format!("/dev/{name}"));
        if part.exists() {
            found.extend(
                signatures(&part)
                    .into_iter()
                    .map(|s| format!("{s} on {}", part.display())),
            );
        }
    }
    if !found.is_empty() {
        return Err(Refusal {
            target: path.display().to_string(),
            reason: format!(
                "{}. drivescope never writes over data in use or with a signature; \
                 if the data is truly disposable, unmount it and clear it first (wipefs -a {})",
                found.join("; "),
                path.display()
            ),
        });
    }
    confirm(path, confirmed, "this is a block device")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn file_writes_need_the_matching_confirmation() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("precious.dat");
        std::fs::File::create(&p)
            .unwrap()
            .write_all(b"data")
            .unwrap();
        let e = check_file_write(&p, None).unwrap_err();
        assert!(e.to_string().contains("--destroy-data"), "{e}");
        let other = dir.path().join("other");
        assert!(check_file_write(&p, Some(&other)).is_err());
        assert!(check_file_write(&p, Some(&p)).is_ok());
    }

    #[test]
    fn holders_are_named_by_kind() {
        let dir = tempfile::tempdir().unwrap();
        let put = |rel: &str, text: &str| {
            let p = dir.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        put("md127/md/level", "raid1\n");
        put("dm-0/dm/name", "vg0-lv0\n");
        put("dm-0/dm/uuid", "LVM-abc\n");
        put("dm-1/dm/name", "dstest\n");
        put("dm-1/dm/uuid", "\n");
        let d = |h: &str| describe_holder(dir.path(), h);
        assert_eq!(d("md127"), "md RAID array /dev/md127 (raid1)");
        assert_eq!(
            d("dm-0"),
            "LVM logical volume vg0-lv0 (device-mapper /dev/dm-0)"
        );
        assert_eq!(d("dm-1"), "device-mapper device dstest (/dev/dm-1)");
        assert_eq!(d("dm-9"), "/dev/dm-9 (device-mapper, md or LVM)");
    }

    #[test]
    fn blkid_findings_read_as_what_they_are() {
        assert_eq!(
            describe_blkid("ext4", Some("filesystem"), Some("data")),
            "ext4 filesystem, label 'data',"
        );
        assert_eq!(
            describe_blkid("swap", Some("other"), None),
            "swap signature"
        );
        assert_eq!(
            describe_blkid("LVM2_member", Some("raid"), None),
            "LVM2_member (LVM physical volume)"
        );
        assert_eq!(
            describe_blkid("linux_raid_member", Some("raid"), Some("")),
            "linux_raid_member (md RAID member)"
        );
        assert_eq!(
            describe_blkid("crypto_LUKS", Some("crypto"), None),
            "crypto_LUKS encrypted volume"
        );
        assert_eq!(unquote_export(r"my\ disk"), "my disk");
        assert_eq!(unescape_mount_path(r"/tmp/a\040b"), "/tmp/a b");
        assert_eq!(unescape_mount_path(r"/tmp/x\9"), r"/tmp/x\9");
    }

    #[test]
    fn magic_probe_sees_ext4_and_gpt() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("img");
        let mut img = vec![0u8; 70 * 1024];
        img[1080] = 0x53;
        img[1081] = 0xEF;
        img[512..520].copy_from_slice(b"EFI PART");
        std::fs::write(&p, &img).unwrap();
        let found = magic_probe(&File::open(&p).unwrap());
        assert!(found.iter().any(|s| s.contains("ext2/3/4")), "{found:?}");
        assert!(found.iter().any(|s| s.contains("gpt")), "{found:?}");
        std::fs::write(&p, vec![0u8; 70 * 1024]).unwrap();
        assert!(magic_probe(&File::open(&p).unwrap()).is_empty());
    }
}
