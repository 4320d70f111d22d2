//! As root, on real loop devices: a write run is refused (exit 2) whatever the device holds
//! or whoever uses it — a GPT or MBR partition table, a filesystem on one of its partitions, a
//! mounted filesystem (on the device or on one of its partitions), swap in use, a swap, LVM
//! or md signature — even with `--destroy-data` naming it. The refusal names what was found
//! and where, and a checksum of the whole device before and after proves nothing was
//! written. A read run on the same device is allowed and changes nothing either. The
//! dashboard's target picker and its run path see the same findings.
//!
//! Each case needs real tools (sfdisk, partx, mkfs.ext4, mount, mkswap, swapon, pvcreate,
//! mdadm, dmsetup); where one is missing or cannot work on this kernel the case skips
//! through tests/common/skip.rs: "skipped: <why>" outside CI, a failure under CI but for a
//! kernel that has no md or device-mapper driver at all. device-mapper, md and LVM
//! *holders* need those kernel drivers and are covered inside a QEMU guest too.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::skip::{self, Skip};
use common::{run, LoopDev};

/// Runs a tool; Err(why) when it is missing or fails.
fn tool(cmd: &str, args: &[&str], stdin: Option<&str>) -> Result<(), String> {
    use std::io::Write;
    let mut c = Command::new(cmd);
    c.args(args)
        .env("LVM_SUPPRESS_FD_WARNINGS", "1")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = c
        .spawn()
        .map_err(|e| format!("{cmd} is not available: {e}"))?;
    if let Some(mut i) = child.stdin.take() {
        let _ = i.write_all(stdin.unwrap_or("").as_bytes());
    }
    let out = child
        .wait_with_output()
        .map_err(|e| format!("{cmd}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{cmd} {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

macro_rules! or_skip {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(why) => skip!(Tool, "{why}"),
        }
    };
}

/// Whether `cmd` runs at all.
fn have_tool(cmd: &str) -> bool {
    Command::new(cmd).arg("--version").output().is_ok()
}

/// Whether the kernel has a driver (`present` tells), loading `module` first where it does
/// not: mdadm and dmsetup would have it loaded themselves, so a driver that is a module
/// not loaded yet is no reason to skip.
fn kernel_driver(module: &str, present: &dyn Fn() -> bool) -> bool {
    if !present() {
        let _ = Command::new("modprobe").arg(module).output();
    }
    present()
}

fn some_or_skip<T>(v: Option<T>) -> Result<T, String> {
    v.ok_or_else(|| "no loop device (see above)".to_string())
}

/// A filesystem mounted (read-write) on a temporary directory, then frozen (fsfreeze): ext4
/// writes to its device on its own for seconds after mounting (journal commits), and a frozen
/// filesystem flushes everything and writes nothing more, so the device's checksum shows only
/// what drivescope did. Thawed and unmounted on drop, even when a test fails.
struct Mount {
    dir: tempfile::TempDir,
}

impl Mount {
    fn new(dev: &Path) -> Result<Mount, String> {
        let m = Mount::unfrozen(dev)?;
        m.freeze()?;
        Ok(m)
    }

    /// Mounted, not frozen yet: files can be made on it first, then [`Mount::freeze`].
    fn unfrozen(dev: &Path) -> Result<Mount, String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        tool(
            "mount",
            &[
                dev.to_str().unwrap_or_default(),
                dir.path().to_str().unwrap_or_default(),
            ],
            None,
        )?;
        Ok(Mount { dir })
    }

    fn freeze(&self) -> Result<(), String> {
        tool(
            "fsfreeze",
            &["--freeze", self.dir.path().to_str().unwrap_or_default()],
            None,
        )
    }
    fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = tool(
            "fsfreeze",
            &["--unfreeze", self.dir.path().to_str().unwrap_or_default()],
            None,
        );
        if tool(
            "umount",
            &[self.dir.path().to_str().unwrap_or_default()],
            None,
        )
        .is_err()
        {
            let _ = tool(
                "umount",
                &["-l", self.dir.path().to_str().unwrap_or_default()],
                None,
            );
        }
    }
}

/// A device in use as swap; swapoff on drop.
struct SwapOn(PathBuf);

impl Drop for SwapOn {
    fn drop(&mut self) {
        let _ = tool("swapoff", &[self.0.to_str().unwrap_or_default()], None);
    }
}

fn d(p: &Path) -> &str {
    p.to_str().expect("utf-8 device path")
}

/// Writes a partition table of `label` ("gpt" or "dos") with two partitions. Returns the
/// partitions' device paths when the kernel lists them (partx adds them where the kernel
/// does not parse this table type itself), or an empty list when it does not.
fn partition(dev: &LoopDev, label: &str) -> Result<Vec<PathBuf>, String> {
    let script = format!("label: {label}\n,24MiB,L\n,,L\n");
    tool("sfdisk", &["-q", d(&dev.dev)], Some(&script))?;
    // The kernel may have read the table already; partx adds what it did not.
    let _ = tool("partx", &["-u", d(&dev.dev)], None);
    let parts: Vec<PathBuf> = (1..=2)
        .map(|i| PathBuf::from(format!("/dev/{}p{i}", dev.name)))
        .collect();
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(3) {
        if parts.iter().all(|p| p.exists()) {
            return Ok(parts);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    skip::note(
        Skip::NoPartitions,
        format!(
            "the cases on partitions: the kernel lists no partitions of {}",
            dev.dev.display()
        ),
    );
    Ok(Vec::new())
}

/// A loop device with a GPT of two partitions and the first partition's node; None (the
/// skip noted) when the kernel lists no partitions of it.
fn gpt_disk() -> Result<Option<(LoopDev, PathBuf)>, String> {
    let dev = some_or_skip(LoopDev::partitioned(64 << 20))?;
    let p1 = partition(&dev, "gpt")?.into_iter().next();
    Ok(p1.map(|p| (dev, p)))
}

fn mkfs_ext4(dev: &Path, label: &str) -> Result<(), String> {
    // No lazy initialisation: nothing may write to a mounted filesystem behind the test's back.
    tool(
        "mkfs.ext4",
        &[
            "-q",
            "-F",
            "-E",
            "lazy_itable_init=0,lazy_journal_init=0",
            "-L",
            label,
            d(dev),
        ],
        None,
    )
}

/// A write run on `target` (with `--destroy-data` naming it) must exit 2, its message must
/// contain every one of `expect`, and the whole device `whole` must be unchanged. A read
/// run on `target` must succeed and leave it unchanged too. Returns the refusal message.
fn refused_but_readable(case: &str, whole: &LoopDev, target: &Path, expect: &[String]) -> String {
    refused_but_readable_by(case, target, expect, &|| whole.sha256())
}

/// As [`refused_but_readable`], with the device's checksum taken by `checksum`.
fn refused_but_readable_by(
    case: &str,
    target: &Path,
    expect: &[String],
    checksum: &dyn Fn() -> String,
) -> String {
    let home = tempfile::tempdir().unwrap();
    let t = d(target);
    let sum0 = checksum();
    assert_eq!(sum0.len(), 64, "{case}: sha256sum of {}", target.display());
    let out = run(
        home.path(),
        &[
            "run",
            "--target",
            t,
            "--rw",
            "randwrite",
            "--duration",
            "1s",
            "--destroy-data",
            t,
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    eprintln!("{case}: exit {:?}: {}", out.status.code(), err.trim());
    assert_eq!(out.status.code(), Some(2), "{case}: {err}");
    for e in expect {
        assert!(err.contains(e.as_str()), "{case}: expected «{e}» in: {err}");
    }
    assert_eq!(checksum(), sum0, "{case}: a refused run wrote");

    let out = run(
        home.path(),
        &["run", "--target", t, "--rw", "randread", "--duration", "1s"],
    );
    assert!(
        out.status.success(),
        "{case}: the read run failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(checksum(), sum0, "{case}: a read run wrote");
    err
}

fn partition_table_case(label: &str, pretty: &str) {
    let dev = or_skip!(some_or_skip(LoopDev::partitioned(64 << 20)));
    let parts = or_skip!(partition(&dev, label));
    let mut expect = vec![format!("{pretty} partition table on {}", dev.dev.display())];
    if let Some(p1) = parts.first() {
        or_skip!(mkfs_ext4(p1, "inner"));
        expect.push(format!("it has partitions ({}, ", p1.display()));
        expect.push(format!(
            "ext4 filesystem, label 'inner', on {}",
            p1.display()
        ));
    }
    refused_but_readable(&format!("{label} disk"), &dev, &dev.dev, &expect);
    match parts.first() {
        Some(p1) => {
            refused_but_readable(
                &format!("{label} partition 1"),
                &dev,
                p1,
                &[format!(
                    "ext4 filesystem, label 'inner', on {}",
                    p1.display()
                )],
            );
        }
        None => skip::note(
            Skip::NoPartitions,
            "the partition itself (the kernel lists none)",
        ),
    }
}

#[test]
fn gpt_partition_table_is_refused() {
    partition_table_case("gpt", "gpt");
}

#[test]
fn mbr_partition_table_is_refused() {
    partition_table_case("dos", "dos");
}

#[test]
fn mounted_filesystem_is_refused() {
    let dev = or_skip!(some_or_skip(LoopDev::new(64 << 20)));
    or_skip!(mkfs_ext4(&dev.dev, "busy"));
    let m = or_skip!(Mount::new(&dev.dev));
    refused_but_readable(
        "mounted",
        &dev,
        &dev.dev,
        &[
            format!("{} is mounted on {}", dev.dev.display(), m.path().display()),
            format!("ext4 filesystem, label 'busy', on {}", dev.dev.display()),
        ],
    );
    drop(m);
}

#[test]
fn mounted_partition_is_named_when_the_whole_disk_is_the_target() {
    let Some((dev, p1)) = or_skip!(gpt_disk()) else {
        return;
    };
    or_skip!(mkfs_ext4(&p1, "inner"));
    let m = or_skip!(Mount::new(&p1));
    refused_but_readable(
        "mounted partition",
        &dev,
        &dev.dev,
        &[format!(
            "{} is mounted on {}",
            p1.display(),
            m.path().display()
        )],
    );
    drop(m);
}

/// sha256 of a swap device made by `mkswap DEV 40` but for the kernel's swap slots (pages
/// 1-9), which the kernel may write at any moment while the swap is in use.
fn outside_swap_slots(dev: &LoopDev) -> String {
    sha256_by(
        r#"{ head -c 4096 "$1" && tail -c +40961 "$1"; } | sha256sum"#,
        &[d(&dev.dev)],
    )
}

/// The sha256 that shell pipeline `script` (its `$1`… are `args`) prints.
fn sha256_by(script: &str, args: &[&str]) -> String {
    let out = Command::new("sh")
        .args(["-c", script, "sh"])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn swap_in_use_is_refused() {
    let dev = or_skip!(some_or_skip(LoopDev::new(64 << 20)));
    // The kernel itself may page out to a swap in use at any moment (this is likely the
    // machine's only swap), so the swap area is the smallest mkswap makes: 10 pages, of
    // which the kernel owns pages 1-9. The checksum covers the whole device but those.
    or_skip!(tool("mkswap", &[d(&dev.dev), "40"], None));
    or_skip!(tool("swapon", &[d(&dev.dev)], None));
    let s = SwapOn(dev.dev.clone());
    refused_but_readable_by(
        "swap in use",
        &dev.dev,
        &[
            format!("{} is in use as swap", dev.dev.display()),
            format!("swap signature on {}", dev.dev.display()),
        ],
        &|| outside_swap_slots(&dev),
    );
    drop(s);
}

#[test]
fn swap_signature_is_refused() {
    let dev = or_skip!(some_or_skip(LoopDev::new(64 << 20)));
    or_skip!(tool("mkswap", &[d(&dev.dev)], None));
    let msg = refused_but_readable(
        "swap signature",
        &dev,
        &dev.dev,
        &[format!("swap signature on {}", dev.dev.display())],
    );
    assert!(!msg.contains("in use as swap"), "{msg}");
}

#[test]
fn lvm_physical_volume_signature_is_refused() {
    let dev = or_skip!(some_or_skip(LoopDev::new(64 << 20)));
    // pvcreate writes the label without device-mapper; it refuses if it cannot.
    // --devices: lvm looks at this device only, never opening the other tests' loop devices
    // (a device open in another process is one the write guard refuses).
    or_skip!(tool(
        "pvcreate",
        &["--devices", d(&dev.dev), "-ff", "-y", d(&dev.dev)],
        None
    ));
    refused_but_readable(
        "LVM PV",
        &dev,
        &dev.dev,
        &[format!(
            "LVM2_member (LVM physical volume) on {}",
            dev.dev.display()
        )],
    );
}

#[test]
fn md_raid_signature_is_refused() {
    // mdadm writes the superblock only through the md driver; without it, skip rather than
    // forge the bytes (and do not let a failing mdadm leave device nodes behind).
    if !have_tool("mdadm") {
        skip!(Tool, "mdadm is not installed");
    }
    if !kernel_driver("md_mod", &|| Path::new("/proc/mdstat").exists()) {
        skip!(
            NoMdDriver,
            "this kernel has no md driver (no /proc/mdstat, and modprobe md_mod loads \
             none), and mdadm --create cannot write an md superblock without it"
        );
    }
    let dev = or_skip!(some_or_skip(LoopDev::new(64 << 20)));
    let md = "/dev/md/drivescope-guard-test";
    or_skip!(tool(
        "mdadm",
        &[
            "--create",
            md,
            "--run",
            "--metadata=1.2",
            "--level=1",
            "--raid-devices=2",
            d(&dev.dev),
            "missing",
        ],
        None,
    )
    .map_err(|e| format!("mdadm cannot create an array here (no md driver?): {e}")));
    // Leave only the signature: the array (a holder) is another test's business.
    let _ = tool("mdadm", &["--stop", md], None);
    refused_but_readable(
        "md signature",
        &dev,
        &dev.dev,
        &[format!(
            "linux_raid_member (md RAID member) on {}",
            dev.dev.display()
        )],
    );
}

#[test]
fn device_mapper_holder_needs_the_dm_driver() {
    if !have_tool("dmsetup") {
        skip!(Tool, "dmsetup is not installed");
    }
    if !kernel_driver("dm_mod", &|| Path::new("/sys/module/dm_mod").exists()) {
        skip!(
            NoDmDriver,
            "this kernel has no device-mapper (modprobe dm_mod loads none); dm/md/LVM \
             holders are tested in the QEMU guest"
        );
    }
    let dev = or_skip!(some_or_skip(LoopDev::new(64 << 20)));
    let sectors = (64u64 << 20) / 512;
    let name = format!("drivescope-guard-{}", dev.name);
    or_skip!(tool(
        "dmsetup",
        &["create", &name],
        Some(&format!("0 {sectors} linear {} 0\n", d(&dev.dev))),
    ));
    struct DmRemove(String);
    impl Drop for DmRemove {
        fn drop(&mut self) {
            let _ = tool("dmsetup", &["remove", "--retry", &self.0], None);
        }
    }
    let dm = DmRemove(name.clone());
    refused_but_readable(
        "device-mapper holder",
        &dev,
        &dev.dev,
        &[format!("{} is held by dm-", dev.dev.display()), name],
    );
    drop(dm);
}

#[test]
fn dashboard_sees_what_the_guard_sees() {
    let dev = or_skip!(some_or_skip(LoopDev::new(64 << 20)));
    let blank = or_skip!(some_or_skip(LoopDev::new(64 << 20)));
    or_skip!(mkfs_ext4(&dev.dev, "data"));
    let entries = drivescope::dashboard::views::device_entries();
    let of = |p: &Path| entries.iter().find(|e| e.path == p).cloned();
    let e = of(&dev.dev).expect("the target picker lists the loop device");
    let reason = e.safety.expect("the picker shows why writes are refused");
    eprintln!("picker: {}: {reason}", dev.dev.display());
    assert!(
        reason.contains(&format!(
            "ext4 filesystem, label 'data', on {}",
            dev.dev.display()
        )),
        "{reason}"
    );
    let b = of(&blank.dev).expect("the target picker lists the blank loop device");
    assert_eq!(b.safety, None, "a blank device is writable once named");
    assert!(b.needs_typed_confirmation());

    // The dashboard's run path prepares the target through the same guard.
    let sum0 = dev.sha256();
    let req = drivescope::test_target::TargetRequest {
        writes: true,
        destroy_data: Some(dev.dev.clone()),
        ..Default::default()
    };
    let r = drivescope::test_target::prepare(&dev.dev, &req);
    assert!(
        matches!(r, Err(drivescope::test_target::TargetError::Refused(_))),
        "{r:?}"
    );
    assert_eq!(dev.sha256(), sum0);
}

/// A write step straight through the engine (no guard) on a device in use: the engine's
/// exclusive open makes the kernel refuse it, and nothing is written.
fn engine_write_is_refused_by_the_kernel(case: &str, dev: &LoopDev, checksum: &dyn Fn() -> String) {
    use drivescope::engine::{Control, StepControl, StepTarget};
    use drivescope::engine_list::run_step;
    use drivescope::workload::{
        BlockSizes, EngineKind, Region, RwMode, StepEnd, StepSpec, Workload,
    };
    let len = 16 << 20;
    let spec = StepSpec {
        engine: EngineKind::IoUring,
        options: Default::default(),
        workload: Workload {
            jobs: 2,
            ..Workload::new(
                RwMode::RandWrite,
                BlockSizes::single(4096),
                4,
                Region { offset: 0, len },
                1,
            )
        },
        ramp: Duration::ZERO,
        end: StepEnd {
            duration: Some(Duration::from_millis(500)),
            bytes: None,
        },
        interval: Duration::from_millis(250),
        fio_file: None,
        fio_version: None,
    };
    let target = StepTarget {
        path: dev.dev.clone(),
        size: 64 << 20,
        align: 512,
        verify: None,
    };
    let sum0 = checksum();
    let r = run_step(
        &target,
        &spec,
        &StepControl::default(),
        |_| Control::Continue,
        |_| {},
    );
    let e = r
        .expect_err("the kernel let a write open through")
        .to_string();
    eprintln!("{case} (engine, no guard): {e}");
    assert!(e.contains("in use"), "{e}");
    assert_eq!(checksum(), sum0, "{case}: the engine wrote");
}

#[test]
fn the_kernel_refuses_the_engine_a_mounted_device_even_past_the_guard() {
    let dev = or_skip!(some_or_skip(LoopDev::new(64 << 20)));
    or_skip!(mkfs_ext4(&dev.dev, "busy"));
    let m = or_skip!(Mount::new(&dev.dev));
    engine_write_is_refused_by_the_kernel("mounted", &dev, &|| dev.sha256());
    drop(m);
}

#[test]
fn the_kernel_refuses_the_engine_a_swap_in_use_even_past_the_guard() {
    let dev = or_skip!(some_or_skip(LoopDev::new(64 << 20)));
    or_skip!(tool("mkswap", &[d(&dev.dev), "40"], None));
    or_skip!(tool("swapon", &[d(&dev.dev)], None));
    let s = SwapOn(dev.dev.clone());
    // Only the kernel's own swap slots (pages 1-9) may change under it.
    engine_write_is_refused_by_the_kernel("swap in use", &dev, &|| outside_swap_slots(&dev));
    drop(s);
}

/// A loop device over `path` from byte `offset` on (`losetup -o OFFSET --show -f PATH`),
/// detached on drop, even when a test fails.
struct LoopOver(PathBuf);

impl LoopOver {
    fn new(path: &Path, offset: u64) -> Result<LoopOver, String> {
        common::losetup(&["-o", &offset.to_string()], path).map(LoopOver)
    }
}

impl Drop for LoopOver {
    fn drop(&mut self) {
        common::losetup_detach(&self.0);
    }
}

#[test]
fn the_backing_device_of_a_loop_device_at_an_offset_is_refused() {
    // The case that lost data: a filesystem mounted on a loop device over another one from
    // 1 MiB on, so nothing is at offset 0 of the one below, it has no holders, and an
    // exclusive open of it does not conflict.
    let dev = or_skip!(some_or_skip(LoopDev::new(64 << 20)));
    let over = or_skip!(LoopOver::new(&dev.dev, 1 << 20));
    or_skip!(mkfs_ext4(&over.0, "above"));
    let m = or_skip!(Mount::new(&over.0));
    refused_but_readable(
        "backing device at an offset",
        &dev,
        &dev.dev,
        &[format!(
            "{} is the backing device of {} (from offset 1048576)",
            dev.dev.display(),
            over.0.display()
        )],
    );
    drop(m);
    drop(over);
}

#[test]
fn a_loop_device_over_a_partition_is_named_when_the_whole_disk_is_the_target() {
    let Some((dev, p1)) = or_skip!(gpt_disk()) else {
        return;
    };
    let over = or_skip!(LoopOver::new(&p1, 1 << 20));
    refused_but_readable(
        "loop over a partition",
        &dev,
        &dev.dev,
        &[format!(
            "{} is the backing device of {} (from offset 1048576)",
            p1.display(),
            over.0.display()
        )],
    );
    drop(over);
}

#[test]
fn a_loop_devices_backing_file_is_refused_as_the_target() {
    let dev = or_skip!(some_or_skip(LoopDev::new(16 << 20)));
    let img = dev.backing_file();
    refused_but_readable(
        "a loop device's backing file",
        &dev,
        &img,
        &[format!(
            "{} is the backing file of {} (from offset 0)",
            img.display(),
            dev.dev.display()
        )],
    );
}

#[test]
fn a_loop_devices_backing_file_on_a_filesystem_of_the_device_is_named() {
    let dev = or_skip!(some_or_skip(LoopDev::new(64 << 20)));
    or_skip!(mkfs_ext4(&dev.dev, "outer"));
    let m = or_skip!(Mount::unfrozen(&dev.dev));
    let img = m.path().join("inner.img");
    std::fs::File::create(&img)
        .and_then(|f| f.set_len(4 << 20).and_then(|()| f.sync_all()))
        .unwrap();
    let over = or_skip!(LoopOver::new(&img, 0));
    or_skip!(m.freeze());
    refused_but_readable(
        "a loop device's backing file on it",
        &dev,
        &dev.dev,
        &[
            format!(
                "{} holds {}, the backing file of {}",
                dev.dev.display(),
                img.display(),
                over.0.display()
            ),
            format!("{} is mounted on {}", dev.dev.display(), m.path().display()),
        ],
    );
    drop(over);
    drop(m);
}

#[test]
fn a_read_only_device_is_refused_before_any_io() {
    let dev = or_skip!(some_or_skip(LoopDev::read_only(64 << 20)));
    let (_, writes) = dev.stat();
    refused_but_readable(
        "read-only",
        &dev,
        &dev.dev,
        &[
            format!("{} is read-only (BLKROGET)", dev.dev.display()),
            "before any I/O".to_string(),
        ],
    );
    assert_eq!(dev.stat().1, writes, "a write reached the device");
}

/// A child `sh` running `script` (its `$1`, `$2`… are `args`) that prints `ready` once set
/// up and then waits for its stdin to close; on drop its stdin is closed and it is waited
/// for, so whatever it undoes after `read` is undone even when a test fails.
struct Child {
    child: std::process::Child,
}

impl Child {
    fn start(prog: &[&str], script: &str, args: &[&str]) -> Result<Child, String> {
        use std::io::BufRead;
        use std::process::Stdio;
        let mut child = Command::new(prog[0])
            .args(&prog[1..])
            .args(["sh", "-c", script, "sh"])
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("{} is not available: {e}", prog[0]))?;
        let mut line = String::new();
        let out = child.stdout.take().map(std::io::BufReader::new);
        let _ = out.map(|mut o| o.read_line(&mut line));
        if line.trim() != "ready" {
            let _ = child.kill();
            let out = child.wait_with_output().map_err(|e| e.to_string())?;
            return Err(format!(
                "{} could not set up: {}",
                prog.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(Child { child })
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

#[test]
fn a_device_open_in_another_process_is_refused() {
    let dev = or_skip!(some_or_skip(LoopDev::new(64 << 20)));
    // A plain read-only open: no exclusive claim for the kernel to refuse.
    let c = or_skip!(Child::start(
        &["env"],
        r#"exec 3<"$1"; echo ready; read _"#,
        &[d(&dev.dev)],
    ));
    refused_but_readable(
        "open in another process",
        &dev,
        &dev.dev,
        &[format!(
            "{} is open in PID {} (sh -c",
            dev.dev.display(),
            c.pid()
        )],
    );
    drop(c);
}

#[test]
fn a_mount_in_another_mount_namespace_is_refused() {
    let dev = or_skip!(some_or_skip(LoopDev::new(64 << 20)));
    or_skip!(mkfs_ext4(&dev.dev, "elsewhere"));
    let dir = tempfile::tempdir().unwrap();
    // Mounted (and frozen, so that the checksum holds) in a mount namespace of its own,
    // unseen in this one's mountinfo; thawed and unmounted when the child's stdin closes.
    let c = or_skip!(Child::start(
        &["unshare", "--mount", "--propagation", "private"],
        r#"mount "$1" "$2" && fsfreeze --freeze "$2" && echo ready && read _;
           fsfreeze --unfreeze "$2"; umount "$2""#,
        &[d(&dev.dev), d(dir.path())],
    ));
    refused_but_readable(
        "mounted in another namespace",
        &dev,
        &dev.dev,
        &[format!(
            "{} is mounted on {} (in the mount namespace of PID {})",
            dev.dev.display(),
            dir.path().display(),
            c.pid()
        )],
    );
    drop(c);
}

/// An active swap file on a frozen filesystem: thawed, then swapped off, on drop.
struct SwapFile {
    file: PathBuf,
    thaw: PathBuf,
}

impl Drop for SwapFile {
    fn drop(&mut self) {
        let _ = tool("fsfreeze", &["--unfreeze", d(&self.thaw)], None);
        let _ = tool("swapoff", &[d(&self.file)], None);
    }
}

/// sha256 of the first `n` bytes of `path`.
fn sha256_of_head(path: &Path, n: u64) -> String {
    sha256_by(
        r#"head -c "$2" "$1" | sha256sum"#,
        &[d(path), &n.to_string()],
    )
}

#[test]
fn an_active_swap_file_is_refused_as_the_target_and_on_its_device() {
    let dev = or_skip!(some_or_skip(LoopDev::new(64 << 20)));
    or_skip!(mkfs_ext4(&dev.dev, "swaps"));
    let m = or_skip!(Mount::unfrozen(&dev.dev));
    let file = m.path().join("swapfile");
    {
        use std::os::unix::fs::PermissionsExt;
        let f = std::fs::File::create(&file).unwrap();
        f.set_permissions(std::fs::Permissions::from_mode(0o600))
            .unwrap();
        // Written, not sparse: swapon takes no holes. The smallest swap area (10 pages).
        std::io::Write::write_all(&mut &f, &[0u8; 40960]).unwrap();
        f.sync_all().unwrap();
    }
    or_skip!(tool("mkswap", &[d(&file)], None));
    or_skip!(tool("swapon", &[d(&file)], None));
    let s = SwapFile {
        file: file.clone(),
        thaw: m.path().to_path_buf(),
    };
    or_skip!(m.freeze());
    // The kernel may write the swap area's slots (pages 1-9) at any moment; its header
    // (page 0) it does not.
    let msg = refused_but_readable_by(
        "an active swap file",
        &file,
        &[format!("{} is a swap file in use", file.display())],
        &|| sha256_of_head(&file, 4096),
    );
    assert!(msg.contains("swapoff"), "{msg}");
    // The device under it: the checksum covers its first 64 KiB (boot block, superblock,
    // group descriptors), where the frozen filesystem writes nothing and no swap slot is.
    refused_but_readable_by(
        "the device of an active swap file",
        &dev.dev,
        &[
            format!(
                "{} holds {}, a swap file in use",
                dev.dev.display(),
                file.display()
            ),
            format!("{} is mounted on {}", dev.dev.display(), m.path().display()),
        ],
        &|| sha256_of_head(&dev.dev, 64 << 10),
    );
    drop(s);
    drop(m);
}

/// Lazily unmounts the filesystem on `dir` that `user` (a process in it, a loop device over
/// a file on it) keeps alive; on any failure it is unmounted and `user` let go.
fn detached<T>(dir: &Path, user: Result<T, String>) -> Result<T, String> {
    let user = user.and_then(|u| tool("umount", &["-l", d(dir)], None).map(|()| u));
    if user.is_err() {
        let _ = tool("umount", &[d(dir)], None);
    }
    user
}

#[test]
fn a_device_the_kernel_will_not_open_exclusively_is_refused() {
    // A filesystem lazily unmounted while a process still works in it: in no mountinfo,
    // in no descriptor, yet alive and holding the device; only the kernel's refusal of an
    // exclusive open tells. Mounted read-only, so that nothing writes to the device.
    let dev = or_skip!(some_or_skip(LoopDev::new(64 << 20)));
    or_skip!(mkfs_ext4(&dev.dev, "detached"));
    let dir = tempfile::tempdir().unwrap();
    or_skip!(tool(
        "mount",
        &["-o", "ro,noload", d(&dev.dev), d(dir.path())],
        None
    ));
    let c = Child::start(
        &["env"],
        r#"cd "$1" && echo ready && read _"#,
        &[d(dir.path())],
    );
    let c = or_skip!(detached(dir.path(), c));
    let err = refused_but_readable("claimed, unseen", &dev, &dev.dev, &[]);
    // Only the kernel tells, unless another process's mount namespace made while the
    // filesystem was mounted (a caged fio of a test running meanwhile) still holds a
    // copy of the mount: then the guard names that namespace, which is true as well.
    let claimed = format!(
        "{} is claimed by another user (the kernel refuses an exclusive open: busy)",
        dev.dev.display()
    );
    assert!(
        err.contains(&claimed) || err.contains("(in the mount namespace of PID"),
        "claimed, unseen: {err}"
    );
    // The filesystem goes with the last process in it, and the device with it.
    drop(c);
}

#[test]
fn a_loop_devices_backing_file_on_a_detached_filesystem_of_the_device_is_named() {
    // The filesystem holding the backing file is lazily unmounted: the path sysfs gives
    // leads nowhere now, and only the loop device's own status (LOOP_GET_STATUS64) says
    // which device its file is on. Read-only, so that nothing writes to the device.
    let dev = or_skip!(some_or_skip(LoopDev::new(64 << 20)));
    or_skip!(mkfs_ext4(&dev.dev, "detached"));
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("inner.img");
    or_skip!(tool("mount", &[d(&dev.dev), d(dir.path())], None));
    let made = std::fs::File::create(&img).and_then(|f| f.set_len(4 << 20));
    or_skip!(tool("umount", &[d(dir.path())], None));
    made.unwrap();
    or_skip!(tool(
        "mount",
        &["-o", "ro,noload", d(&dev.dev), d(dir.path())],
        None
    ));
    let over = LoopOver::new(&img, 0);
    let over = or_skip!(detached(dir.path(), over));
    refused_but_readable(
        "a loop device's backing file on a detached filesystem",
        &dev,
        &dev.dev,
        // The path as the kernel gives it now, from the detached filesystem's root.
        &[format!(
            "{} holds /inner.img, the backing file of {}",
            dev.dev.display(),
            over.0.display()
        )],
    );
    // The filesystem goes with the loop device over its file.
    drop(over);
}
