//! A test drive whose volatile cache the test controls: `/dev/nbdN` served by this process
//! (the kernel's nbd client, connected over generic netlink to one end of a socket pair:
//! no nbd-client needed, and no descriptor of the device held open, which the write guard
//! would refuse).
//! Writes land in a cache of 4 KiB blocks; a flush moves them to the medium; a cut (a line
//! `cut` on the control FIFO) drops the cache and fails every request (EIO) until
//! `restore`. The medium lives in memory.
//!
//! At the N-th cut, `lost.N` and `torn.N` in DIR list the byte offsets of blocks whose
//! medium does not hold what a flush since the cut before acknowledged (whole, or its
//! second half).
//!
//! `nbd_cache DEV SIZE MODE DIR`: MODE `honest`, or `lying` (at each flush, every 40th block
//! flushed is dropped and every 40th, 20 blocks on, is torn: only its first 2 KiB reach the
//! medium). DIR gets `ctl` (a FIFO: `cut`, `restore`), `ack` (a FIFO answered `ok` once a
//! command is done) and `pid`.
//! Used by scripts/qemu-nvme/guest-powercut.sh.

use std::collections::{BTreeSet, HashMap};
use std::io::{BufRead, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

const BLOCK: usize = 4096;
const REQ_MAGIC: u32 = 0x2560_9513;
const REPLY_MAGIC: u32 = 0x6744_6698;
const EIO: u32 = 5;

const FLAG_HAS_FLAGS: u64 = 1;
const FLAG_SEND_FLUSH: u64 = 1 << 2;
const FLAG_SEND_FUA: u64 = 1 << 3;
const CMD_FLAG_FUA: u32 = 1 << 16;

struct Drive {
    medium: Vec<u8>,
    cache: HashMap<usize, Vec<u8>>,
    /// What each block's last acknowledged flush promised.
    promised: HashMap<usize, Vec<u8>>,
    cut: bool,
    lying: bool,
    flushed: u64,
    cuts: u64,
}

impl Drive {
    fn read(&self, off: usize, buf: &mut [u8]) {
        for (i, chunk) in buf.chunks_mut(BLOCK).enumerate() {
            let b = off / BLOCK + i;
            match self.cache.get(&b) {
                Some(d) => chunk.copy_from_slice(&d[..chunk.len()]),
                None => chunk.copy_from_slice(&self.medium[b * BLOCK..b * BLOCK + chunk.len()]),
            }
        }
    }

    fn write(&mut self, off: usize, data: &[u8]) {
        for (i, chunk) in data.chunks(BLOCK).enumerate() {
            self.cache.insert(off / BLOCK + i, chunk.to_vec());
        }
    }

    fn flush(&mut self) {
        let mut blocks: Vec<usize> = self.cache.keys().copied().collect();
        blocks.sort_unstable();
        for b in blocks {
            let Some(d) = self.cache.remove(&b) else {
                continue;
            };
            self.flushed += 1;
            let at = b * BLOCK;
            if self.lying && self.flushed.is_multiple_of(40) {
                // Dropped: acknowledged as flushed, never on the medium.
            } else if self.lying && self.flushed % 40 == 20 {
                self.medium[at..at + BLOCK / 2].copy_from_slice(&d[..BLOCK / 2]);
            } else {
                self.medium[at..at + BLOCK].copy_from_slice(&d);
            }
            self.promised.insert(b, d);
        }
    }

    /// The blocks whose medium does not hold what a flush promised: (lost, torn) offsets.
    fn broken(&self) -> (BTreeSet<usize>, BTreeSet<usize>) {
        let (mut lost, mut torn) = (BTreeSet::new(), BTreeSet::new());
        for (b, d) in &self.promised {
            let m = &self.medium[b * BLOCK..(b + 1) * BLOCK];
            if m == &d[..] {
                continue;
            }
            if m[..BLOCK / 2] == d[..BLOCK / 2] {
                torn.insert(b * BLOCK);
            } else {
                lost.insert(b * BLOCK);
            }
        }
        (lost, torn)
    }
}

/// One netlink attribute: type, payload (padded to 4 bytes).
fn attr(ty: u16, payload: &[u8]) -> Vec<u8> {
    let mut v = Vec::new();
    v.extend_from_slice(&((4 + payload.len()) as u16).to_ne_bytes());
    v.extend_from_slice(&ty.to_ne_bytes());
    v.extend_from_slice(payload);
    while v.len() % 4 != 0 {
        v.push(0);
    }
    v
}

/// Sends one generic netlink request (`family`, `cmd`, `attrs`) and returns the answer.
fn genl(fd: i32, family: u16, cmd: u8, attrs: &[u8]) -> Vec<u8> {
    let mut m = Vec::new();
    m.extend_from_slice(&((16 + 4 + attrs.len()) as u32).to_ne_bytes());
    m.extend_from_slice(&family.to_ne_bytes());
    m.extend_from_slice(&(1u16 | 4).to_ne_bytes()); // NLM_F_REQUEST | NLM_F_ACK
    m.extend_from_slice(&1u32.to_ne_bytes());
    m.extend_from_slice(&0u32.to_ne_bytes());
    m.extend_from_slice(&[cmd, 1, 0, 0]);
    m.extend_from_slice(attrs);
    // SAFETY: `m` is a live buffer of `m.len()` bytes.
    let r = unsafe { libc::send(fd, m.as_ptr().cast(), m.len(), 0) };
    assert!(r >= 0, "netlink send: {}", std::io::Error::last_os_error());
    let mut buf = vec![0u8; 8192];
    // SAFETY: `buf` is a live, writable buffer of `buf.len()` bytes.
    let r = unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), 0) };
    assert!(r >= 0, "netlink recv: {}", std::io::Error::last_os_error());
    buf.truncate(r as usize);
    let ty = u16::from_ne_bytes([buf[4], buf[5]]);
    if ty == 2 {
        // NLMSG_ERROR: 0 is the acknowledgement.
        let err = i32::from_ne_bytes(buf[16..20].try_into().unwrap());
        assert_eq!(
            err,
            0,
            "netlink: {}",
            std::io::Error::from_raw_os_error(-err)
        );
    }
    buf
}

/// Connects nbd device `index` to `sock` over the nbd generic netlink family (no file
/// descriptor of the device stays open here, as with the NBD_DO_IT ioctl).
fn connect(index: u32, size: u64, sock: i32) {
    // SAFETY: plain socket creation; the descriptor is checked and closed below.
    let fd = unsafe { libc::socket(libc::AF_NETLINK, libc::SOCK_RAW, 16) };
    assert!(
        fd >= 0,
        "netlink socket: {}",
        std::io::Error::last_os_error()
    );
    // CTRL_CMD_GETFAMILY (3) of "nbd" to the controller (0x10): CTRL_ATTR_FAMILY_ID (1).
    let answer = genl(fd, 0x10, 3, &attr(2, b"nbd\0"));
    let mut at = 20;
    let mut family = None;
    while at + 4 <= answer.len() {
        let len = u16::from_ne_bytes([answer[at], answer[at + 1]]) as usize;
        let ty = u16::from_ne_bytes([answer[at + 2], answer[at + 3]]);
        if ty == 1 {
            family = Some(u16::from_ne_bytes([answer[at + 4], answer[at + 5]]));
        }
        if len < 4 {
            break;
        }
        at += (len + 3) & !3;
    }
    let family = family.expect("the nbd netlink family (is nbd loaded?)");
    let item = attr(1 | 0x8000, &attr(1, &(sock as u32).to_ne_bytes()));
    let mut a = Vec::new();
    a.extend(attr(1, &index.to_ne_bytes()));
    a.extend(attr(2, &size.to_ne_bytes()));
    a.extend(attr(3, &(BLOCK as u64).to_ne_bytes()));
    a.extend(attr(
        5,
        &(FLAG_HAS_FLAGS | FLAG_SEND_FLUSH | FLAG_SEND_FUA).to_ne_bytes(),
    ));
    a.extend(attr(7 | 0x8000, &item));
    genl(fd, family, 1, &a);
    // SAFETY: `fd` is ours and open.
    unsafe { libc::close(fd) };
}

fn serve(mut s: UnixStream, drive: Arc<Mutex<Drive>>) {
    let mut h = [0u8; 28];
    loop {
        if s.read_exact(&mut h).is_err() {
            return;
        }
        let be32 = |r: std::ops::Range<usize>| u32::from_be_bytes(h[r].try_into().unwrap());
        assert_eq!(be32(0..4), REQ_MAGIC, "request magic");
        let ty = be32(4..8);
        let handle: [u8; 8] = h[8..16].try_into().unwrap();
        let off = u64::from_be_bytes(h[16..24].try_into().unwrap()) as usize;
        let len = be32(24..28) as usize;
        let mut payload = vec![0u8; if ty & 0xffff == 1 { len } else { 0 }];
        if s.read_exact(&mut payload).is_err() {
            return;
        }
        let mut d = drive.lock().unwrap();
        let mut data = Vec::new();
        let error = if d.cut {
            EIO
        } else {
            match ty & 0xffff {
                0 => {
                    data = vec![0u8; len];
                    d.read(off, &mut data);
                    0
                }
                1 => {
                    d.write(off, &payload);
                    if ty & CMD_FLAG_FUA != 0 {
                        d.flush();
                    }
                    0
                }
                2 => return,
                3 => {
                    d.flush();
                    0
                }
                _ => 0,
            }
        };
        drop(d);
        let mut reply = Vec::with_capacity(16 + data.len());
        reply.extend_from_slice(&REPLY_MAGIC.to_be_bytes());
        reply.extend_from_slice(&error.to_be_bytes());
        reply.extend_from_slice(&handle);
        if error == 0 {
            reply.extend_from_slice(&data);
        }
        if s.write_all(&reply).is_err() {
            return;
        }
    }
}

fn list(path: &Path, offs: &BTreeSet<usize>) {
    let text: String = offs.iter().map(|o| format!("{o}\n")).collect();
    std::fs::write(path, text).unwrap();
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, dev, size, mode, dir] = &args[..] else {
        eprintln!("usage: nbd_cache DEV SIZE_BYTES honest|lying DIR");
        std::process::exit(2);
    };
    let size: usize = size.parse().expect("size in bytes");
    let dir = PathBuf::from(dir);
    let drive = Arc::new(Mutex::new(Drive {
        medium: vec![0u8; size],
        cache: HashMap::new(),
        promised: HashMap::new(),
        cut: false,
        lying: mode == "lying",
        flushed: 0,
        cuts: 0,
    }));
    for f in ["ctl", "ack"] {
        let p = std::ffi::CString::new(dir.join(f).to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        unsafe { libc::mkfifo(p.as_ptr(), 0o600) };
    }
    let (kernel_end, ours) = UnixStream::pair().expect("socketpair");
    let index: u32 = dev
        .trim_start_matches("/dev/nbd")
        .parse()
        .expect("DEV is /dev/nbdN");
    let d = drive.clone();
    std::thread::spawn(move || serve(ours, d));
    connect(index, size as u64, kernel_end.as_raw_fd());
    let ctl_dir = dir.clone();
    let d = drive.clone();
    std::thread::spawn(move || loop {
        let f = std::fs::File::open(ctl_dir.join("ctl")).expect("ctl");
        for line in std::io::BufReader::new(f).lines().map_while(Result::ok) {
            let mut g = d.lock().unwrap();
            match line.trim() {
                "cut" => {
                    g.cache.clear();
                    g.cut = true;
                    let (lost, torn) = g.broken();
                    g.cuts += 1;
                    list(&ctl_dir.join(format!("lost.{}", g.cuts)), &lost);
                    list(&ctl_dir.join(format!("torn.{}", g.cuts)), &torn);
                    // What the medium holds now is what the next cut is judged from.
                    g.promised.clear();
                }
                "restore" => g.cut = false,
                _ => {}
            }
            drop(g);
            let mut ack = std::fs::OpenOptions::new()
                .write(true)
                .open(ctl_dir.join("ack"))
                .expect("ack");
            let _ = writeln!(ack, "ok");
        }
    });
    std::fs::write(dir.join("pid"), format!("{}\n", std::process::id())).unwrap();
    // Serves until the device is disconnected; the kernel holds its end of the pair.
    let _kernel_end = kernel_end;
    loop {
        std::thread::park();
    }
}
