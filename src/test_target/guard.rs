//! The data-safety guard. A write workload on a block device is refused when the device or
//! one of its partitions is in use ([`crate::drive::in_use`]: mounted in any mount namespace
//! this process sees, active swap or holding a swap file, held by device-mapper, md or LVM,
//! the backing device of a loop device or holding a loop device's backing file, open by
//! another process or claimed exclusively), when it cannot be written (read-only, or zoned
//! and written at random), or when it carries a filesystem, partition table or RAID/LVM
//! signature (libblkid's probe through `blkid -p`, or our own magic-number checks where
//! blkid is missing). Even a blank device is written only when `--destroy-data` names it. An
//! existing file drivescope did not create is overwritten only with the same confirmation,
//! and a file in use (an active swap file, a loop device's backing file) never.

use std::fmt;
use std::fs::{self, File};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use thiserror::Error;

use crate::drive::in_use::{self, BlockDevice, DevNum, InUse, Scene};
use crate::drive::SysRoot;

/// A write refused, with what was found.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[error("refusing to write to {}: {}", .target.display(), self.reason())]
pub struct Refusal {
    pub target: PathBuf,
    pub why: Why,
}

/// Why a write is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Why {
    /// What uses the device or what it holds: nothing is written while any is there.
    Found(Vec<Finding>),
    /// The file is in use (an active swap file, a loop device's backing file).
    FileInUse(Vec<InUse>),
    /// `--destroy-data` names another path than the target.
    OtherNamed { named: PathBuf },
    /// The write needs `--destroy-data` naming the target.
    Unconfirmed(Unconfirmed),
}

/// What a write without `--destroy-data` would destroy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unconfirmed {
    /// A file that exists and that drivescope did not create.
    ForeignFile,
    /// A block device.
    BlockDevice,
}

/// One thing found on a block device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finding {
    InUse(InUse),
    /// The device has partitions (their nodes).
    Partitions(Vec<PathBuf>),
    /// A signature libblkid (or our own probe) found on `on`, as it names it.
    Signature {
        what: String,
        on: PathBuf,
    },
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Finding::InUse(u) => write!(f, "{u}"),
            Finding::Partitions(parts) => {
                let names: Vec<String> = parts.iter().map(|p| p.display().to_string()).collect();
                write!(f, "it has partitions ({})", names.join(", "))
            }
            Finding::Signature { what, on } => write!(f, "{what} on {}", on.display()),
        }
    }
}

/// The text of a refusal after "refusing to write to TARGET: ".
pub struct Reason<'a>(&'a Refusal);

impl fmt::Display for Reason<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = self.0.target.display();
        fn list<T: fmt::Display>(items: &[T]) -> String {
            items
                .iter()
                .map(|i| i.to_string())
                .collect::<Vec<_>>()
                .join("; ")
        }
        match &self.0.why {
            Why::Found(found)
                if found
                    .iter()
                    .all(|x| matches!(x, Finding::InUse(u) if u.is_property())) =>
            {
                write!(
                    f,
                    "{}. drivescope refuses a write test here before any I/O; a read test can run",
                    list(found)
                )
            }
            Why::Found(found) => write!(
                f,
                "{}. drivescope never writes over data in use or with a signature; \
                 if the data is truly disposable, unmount it and clear it first (wipefs -a {t})",
                list(found)
            ),
            Why::FileInUse(uses) => write!(
                f,
                "{}. drivescope never writes a file in use (swapoff it, or detach the loop \
                 device, first)",
                list(uses)
            ),
            Why::OtherNamed { named } => write!(
                f,
                "--destroy-data names {} but the target is {t}; they must be the same",
                named.display()
            ),
            Why::Unconfirmed(what) => write!(
                f,
                "{}; a write test destroys its data. If you mean it, add --destroy-data {t}",
                match what {
                    Unconfirmed::ForeignFile =>
                        "this file exists and was not created by drivescope",
                    Unconfirmed::BlockDevice => "this is a block device",
                }
            ),
        }
    }
}

impl Refusal {
    /// Why, as the user reads it (the message without "refusing to write to TARGET").
    pub fn reason(&self) -> Reason<'_> {
        Reason(self)
    }
}

/// The same file or device (both resolved where they exist), as a confirmation is matched.
pub fn same_path(a: &Path, b: &Path) -> bool {
    match (fs::canonicalize(a), fs::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

fn confirm(target: &Path, confirmed: Option<&Path>, what: Unconfirmed) -> Result<(), Refusal> {
    let why = match confirmed {
        Some(c) if same_path(c, target) => return Ok(()),
        Some(c) => Why::OtherNamed {
            named: c.to_path_buf(),
        },
        None => Why::Unconfirmed(what),
    };
    Err(Refusal {
        target: target.to_path_buf(),
        why,
    })
}

/// Checks a write to a regular file: refused while the file is in use (an active swap
/// file, a loop device's backing file), whatever confirms it.
pub fn check_file_in_use(path: &Path) -> Result<(), Refusal> {
    let uses = Scene::read(&SysRoot::real()).file(path);
    if uses.is_empty() {
        return Ok(());
    }
    Err(Refusal {
        target: path.to_path_buf(),
        why: Why::FileInUse(uses),
    })
}

/// Checks a write to an existing regular file that drivescope did not create: not in use
/// ([`check_file_in_use`]) and confirmed.
pub fn check_file_write(path: &Path, confirmed: Option<&Path>) -> Result<(), Refusal> {
    check_file_in_use(path)?;
    confirm(path, confirmed, Unconfirmed::ForeignFile)
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

/// What the guard finds on block device `path` (device number `rdev`): what uses it or a
/// partition ([`in_use::block_device_in_use`]), what keeps it from being written
/// ([`in_use::write_blockers`]), its partitions, and the signatures on it and on each
/// partition.
pub fn block_device_findings(
    root: &SysRoot,
    scene: &Scene,
    path: &Path,
    rdev: u64,
    random_writes: bool,
) -> Vec<Finding> {
    let signatures_on = |p: &Path| -> Vec<Finding> {
        signatures(p)
            .into_iter()
            .map(|what| Finding::Signature {
                what,
                on: p.to_path_buf(),
            })
            .collect()
    };
    let Some(dev) = BlockDevice::by_num(root, DevNum::of(rdev)) else {
        return signatures_on(path);
    };
    let mut found: Vec<Finding> = in_use::block_device_in_use(root, scene, &dev, path)
        .into_iter()
        .chain(in_use::write_blockers(&dev, path, random_writes))
        .map(Finding::InUse)
        .collect();
    let parts: Vec<PathBuf> = dev.partitions().iter().map(|n| n.dev_path()).collect();
    if !parts.is_empty() {
        found.push(Finding::Partitions(parts.clone()));
    }
    found.extend(signatures_on(path));
    // What each partition holds, so the refusal names the filesystem that would be lost.
    for part in parts.iter().filter(|p| p.exists()) {
        found.extend(signatures_on(part));
    }
    found
}

/// Checks a write to block device `path` (`rdev` its device number) against what `root`
/// and `scene` show; `random_writes` when the workload writes at random offsets.
pub fn check_block_device_in(
    root: &SysRoot,
    scene: &Scene,
    path: &Path,
    rdev: u64,
    random_writes: bool,
    confirmed: Option<&Path>,
) -> Result<(), Refusal> {
    let found = block_device_findings(root, scene, path, rdev, random_writes);
    if !found.is_empty() {
        return Err(Refusal {
            target: path.to_path_buf(),
            why: Why::Found(found),
        });
    }
    confirm(path, confirmed, Unconfirmed::BlockDevice)
}

/// Checks a write to a block device on this system; `rdev` is its device number.
pub fn check_block_device_write(
    path: &Path,
    rdev: u64,
    random_writes: bool,
    confirmed: Option<&Path>,
) -> Result<(), Refusal> {
    let root = SysRoot::real();
    let scene = Scene::read(&root);
    check_block_device_in(&root, &scene, path, rdev, random_writes, confirmed)
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
