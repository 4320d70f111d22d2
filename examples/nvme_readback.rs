//! Reads a region of an NVMe namespace twice, through passthrough and through the block
//! device, and prints a hash of each: `passthrough=HASH block=HASH` (64-bit FNV-1a).
//! Passthrough: NVMe read commands as io_uring commands on the generic device
//! (`/dev/ngXnY`), built by the engine's own [`nvme::cmd_sqe`] into a registered buffer, on
//! a ring of 128-byte SQEs and 32-byte CQEs, as the uring-cmd engine does; block: O_DIRECT
//! preads of `/dev/nvmeXnY`. The QEMU engine guest (scripts/qemu-nvme/guest-engine.sh) runs
//! it; tests/qemu/qemu_engine.rs compares the two.
//!
//!   nvme_readback /dev/ng0n1 /dev/nvme0n1 OFFSET SIZE    (bytes, multiples of 128 KiB)

use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::process::ExitCode;

use drivescope::engine::native::nvme::{self, Namespace};
use drivescope::engine::native::Buffers;
use drivescope::engine::Rng;
use io_uring::{cqueue, squeue, IoUring};

const CHUNK: usize = 128 << 10;

fn fnv(hash: &mut u64, data: &[u8]) {
    for &b in data {
        *hash ^= u64::from(b);
        *hash = hash.wrapping_mul(0x100_0000_01b3);
    }
}

fn passthrough(ng: &File, ns: Namespace, offset: u64, size: u64) -> Result<u64, String> {
    let mut ring: IoUring<squeue::Entry128, cqueue::Entry32> = IoUring::builder()
        .build(8)
        .map_err(|e| format!("ring: {e}"))?;
    let bufs = Buffers::new(1, CHUNK, &mut Rng::new(1)).ok_or("no buffer")?;
    let iovecs = bufs.iovecs();
    // SAFETY: the iovec covers the buffers' one slot, which lives until the end of this
    // function, after the ring (declared first) is dropped below.
    unsafe { ring.submitter().register_buffers(&iovecs) }.map_err(|e| format!("{e}"))?;
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    let mut at = offset;
    while at < offset + size {
        let sqe = nvme::cmd_sqe(
            ns,
            false,
            ng.as_raw_fd(),
            false,
            bufs.slot_ptr(0) as u64,
            CHUNK as u32,
            at,
            Some(0),
        );
        // SAFETY: the command reads CHUNK bytes into slot 0 (CHUNK long), which nothing
        // else touches until its completion is reaped just below; `ng` stays open.
        unsafe { ring.submission().push(&sqe) }.map_err(|_| "queue full")?;
        ring.submit_and_wait(1).map_err(|e| format!("enter: {e}"))?;
        let cqe: cqueue::Entry = ring.completion().next().ok_or("no completion")?.into();
        if cqe.result() != 0 {
            return Err(format!("NVMe read at {at}: result {}", cqe.result()));
        }
        fnv(&mut hash, bufs.slot(0));
        at += CHUNK as u64;
    }
    drop(ring);
    drop(bufs);
    Ok(hash)
}

fn block(dev: &File, offset: u64, size: u64) -> Result<u64, String> {
    let mut bufs = Buffers::new(1, CHUNK, &mut Rng::new(2)).ok_or("no buffer")?;
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    let mut at = offset;
    while at < offset + size {
        let n = dev
            .read_at(bufs.slot_mut(0), at)
            .map_err(|e| format!("read at {at}: {e}"))?;
        if n != CHUNK {
            return Err(format!("short read at {at}: {n}"));
        }
        fnv(&mut hash, bufs.slot(0));
        at += CHUNK as u64;
    }
    Ok(hash)
}

fn run(args: &[String]) -> Result<(u64, u64), String> {
    let [ng, blk, offset, size] = args else {
        return Err("usage: nvme_readback /dev/ngXnY /dev/nvmeXnY OFFSET SIZE".into());
    };
    let num = |s: &String| s.parse::<u64>().map_err(|e| format!("{s}: {e}"));
    let (offset, size) = (num(offset)?, num(size)?);
    let ng = File::open(ng).map_err(|e| format!("{ng}: {e}"))?;
    let dev = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(blk)
        .map_err(|e| format!("{blk}: {e}"))?;
    let (_, lbs) =
        drivescope::test_target::block_device_geometry(&dev).map_err(|e| e.to_string())?;
    let ns = Namespace {
        nsid: nvme::namespace_id(&ng).map_err(|e| format!("namespace id: {e}"))?,
        lba_shift: lbs.trailing_zeros(),
    };
    Ok((
        passthrough(&ng, ns, offset, size)?,
        block(&dev, offset, size)?,
    ))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok((p, b)) => {
            println!("passthrough={p:016x} block={b:016x}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("nvme_readback: {e}");
            ExitCode::from(2)
        }
    }
}
