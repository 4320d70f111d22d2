//! `/sys/block/X/stat`: parsing the kernel's 11/15/17-field layouts, deltas, and — as
//! root — exact counts of real I/O on a real loop device.

use crate::common;

use std::fs::OpenOptions;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use drivescope::drive::{self, Transport};
use drivescope::telemetry::blockstat::{self, BlockStat};

#[test]
fn parses_every_kernel_layout() {
    let p = Path::new("stat");
    let f11 = "10 1 80 5 20 2 160 7 3 40 12";
    let f15 = "10 1 80 5 20 2 160 7 3 40 12 4 0 32 1";
    let f17 = "10 1 80 5 20 2 160 7 3 40 12 4 0 32 1 6 2";
    let a = blockstat::parse(f11, p).expect("11");
    let b = blockstat::parse(f15, p).expect("15");
    let c = blockstat::parse(f17, p).expect("17");
    assert_eq!(
        (a.read_ios, a.write_sectors, a.in_flight, a.io_ticks_ms),
        (10, 160, 3, 40)
    );
    assert_eq!(a.discard_ios, 0);
    assert_eq!((b.discard_ios, b.discard_sectors), (4, 32));
    assert_eq!(c.flush_ios, 6);
    assert!(blockstat::parse("1 2 3", p).is_err());
    assert!(blockstat::parse("", p).is_err());
}

#[test]
fn deltas_are_rates_over_the_interval() {
    let prev = BlockStat {
        read_ios: 100,
        read_sectors: 800,
        write_ios: 50,
        write_sectors: 400,
        io_ticks_ms: 1000,
        ..Default::default()
    };
    let cur = BlockStat {
        read_ios: 300,
        read_sectors: 2400,
        write_ios: 150,
        write_sectors: 1200,
        io_ticks_ms: 1500,
        in_flight: 4,
        ..Default::default()
    };
    let d = blockstat::delta(&prev, &cur, Duration::from_secs(2));
    assert_eq!((d.read_ios, d.write_ios), (200, 100));
    assert_eq!(d.read_iops, 100.0);
    assert_eq!(d.write_iops, 50.0);
    assert_eq!(d.read_bytes, 1600 * 512);
    assert_eq!(d.read_bytes_per_s, 1600.0 * 512.0 / 2.0);
    assert_eq!(d.util_percent, 25.0);
    assert_eq!(d.in_flight, 4);
    // A counter that went backwards (device re-created) is zero, not a wrap.
    let back = blockstat::delta(&cur, &prev, Duration::from_secs(1));
    assert_eq!(back.read_ios, 0);
    assert_eq!(back.util_percent, 0.0);
    // A zero interval gives no rates rather than infinities.
    assert_eq!(blockstat::delta(&prev, &cur, Duration::ZERO).read_iops, 0.0);
}

/// A loop device over a temp file, detached on drop.
struct Loop {
    dev: PathBuf,
}

impl Drop for Loop {
    fn drop(&mut self) {
        common::losetup_detach(&self.dev);
    }
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

fn attach(file: &Path) -> Result<Loop, String> {
    Ok(Loop {
        dev: common::losetup(&["--direct-io=on"], file)?,
    })
}

#[repr(align(4096))]
struct Block([u8; 4096]);

#[test]
fn loop_device_counts_match_the_io_done() {
    if !is_root() {
        skip!(NotRoot, "loop devices need root");
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let backing = dir.path().join("backing.img");
    std::fs::File::create(&backing)
        .and_then(|f| f.set_len(16 << 20))
        .expect("backing file");
    let lo = match attach(&backing) {
        Ok(l) => l,
        Err(e) => skip!(NoLoopDevice, "{e}"),
    };
    let info = drive::resolve(&lo.dev).expect("resolve loop device");
    let name = lo
        .dev
        .file_name()
        .expect("name")
        .to_string_lossy()
        .into_owned();
    assert_eq!(info.block_device, name);
    assert_eq!(info.stat_name, name);
    let disk = info.primary().expect("disk");
    assert_eq!(disk.transport, Transport::Loop);
    assert_eq!(disk.capacity_bytes, 16 << 20);
    assert_eq!(
        disk.backing_file.as_deref().map(|p| p.file_name()),
        Some(backing.file_name())
    );

    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_DIRECT)
        .open(&lo.dev)
        .expect("open loop device O_DIRECT");
    let mut buf = Box::new(Block([0xA5; 4096]));
    let before = blockstat::read(&name).expect("stat");
    const N: u64 = 64;
    // Every other block, so no two requests are adjacent and nothing merges.
    for i in 0..N {
        f.write_at(&buf.0, i * 2 * 4096).expect("write");
    }
    for i in 0..N {
        f.read_at(&mut buf.0, i * 2 * 4096 + 4096).expect("read");
    }
    let after = blockstat::read(&name).expect("stat");
    let d = blockstat::delta(&before, &after, Duration::from_secs(1));
    assert_eq!(d.write_ios, N, "the kernel counted every write");
    assert_eq!(d.write_bytes, N * 4096);
    assert!(d.read_ios >= N, "at least our reads: {}", d.read_ios);
    assert!(d.read_ios <= N + 8, "and little else: {}", d.read_ios);
    assert_eq!(
        after.in_flight, 0,
        "synchronous I/O leaves nothing in flight"
    );
}
