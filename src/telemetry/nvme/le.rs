//! Little-endian field readers for NVMe data structures. Callers check the buffer length
//! once; these read zero past the end instead of panicking.

fn bytes<const N: usize>(buf: &[u8], off: usize) -> [u8; N] {
    let mut out = [0u8; N];
    if let Some(src) = buf.get(off..off + N) {
        out.copy_from_slice(src);
    }
    out
}

pub fn u16_at(buf: &[u8], off: usize) -> u16 {
    u16::from_le_bytes(bytes(buf, off))
}

pub fn u32_at(buf: &[u8], off: usize) -> u32 {
    u32::from_le_bytes(bytes(buf, off))
}

pub fn u64_at(buf: &[u8], off: usize) -> u64 {
    u64::from_le_bytes(bytes(buf, off))
}

pub fn u128_at(buf: &[u8], off: usize) -> u128 {
    u128::from_le_bytes(bytes(buf, off))
}

/// An ASCII field padded with spaces (or NULs), trimmed; `None` if blank.
pub fn ascii_at(buf: &[u8], off: usize, len: usize) -> Option<String> {
    let raw = buf.get(off..off + len)?;
    let s: String = raw
        .iter()
        .map(|&b| {
            if b.is_ascii_graphic() || b == b' ' {
                b as char
            } else {
                ' '
            }
        })
        .collect();
    let t = s.trim();
    if t.is_empty() {
        None
    } else {
        Some(t.to_string())
    }
}
