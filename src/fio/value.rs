//! A number in a job file read as fio 3.33 reads it (parse.c `handle_option`,
//! `__handle_option`, `str_to_decimal`, `get_mult_bytes`), so that the block size a step
//! is labelled with and the reach the write guard judges are fio's own figures:
//! - a value is read in rounds, cut at its first `,`, else `:`, else `-` (`4k,8k` is a
//!   read and a write size; `size=4k-8k` is 8 KiB, its last round);
//! - each round is a C `strtoll` (base 16 where `0x` appears anywhere in it) times the
//!   multiplier its first letters name, `%` making it a share;
//! - with fio's default `kb_base=1024` the IEC prefixes are decimal and the SI ones binary
//!   (`4KiB` is 4000 bytes, `4k` and `4KB` 4096); `kb_base=1000` swaps them back.
//!
//! What fio reads by rules drivescope does not follow (an arithmetic expression, a
//! negative number, a product past 64 bits) is `None`: never guessed.

/// What fio reads from one round of a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Decimal {
    Bytes(u64),
    /// `N%`: a share, in percent.
    Percent(u64),
}

impl Decimal {
    /// The bytes, unless it is a share.
    pub(super) fn bytes(self) -> Option<u64> {
        match self {
            Decimal::Bytes(b) => Some(b),
            Decimal::Percent(_) => None,
        }
    }
}

/// The texts fio parses one after the other from a numeric option's value, each as
/// `__handle_option` hands it to `str_to_decimal` (up to its first `,`). An empty one
/// (after a trailing separator) reads as nothing.
pub(super) fn rounds(raw: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = raw;
    loop {
        let cut = rest
            .find(',')
            .or_else(|| rest.find(':'))
            .or_else(|| rest.find('-'));
        out.push(rest.split(',').next().unwrap_or(rest));
        match cut {
            Some(i) => rest = &rest[i + 1..],
            None => return out,
        }
    }
}

/// fio's `kb_base` of a job's text (1024 unless it says 1000).
pub(super) fn kb_base(value: Option<&str>) -> u64 {
    match value.map(str::trim) {
        Some("1000") => 1000,
        _ => 1024,
    }
}

/// One round read as `str_to_decimal` reads a size (`kilo`): `None` where fio would fail
/// or drivescope does not follow its reading.
pub(super) fn decimal(text: &str, kb_base: u64) -> Option<Decimal> {
    if text.is_empty() || text.starts_with('(') {
        return None;
    }
    let hex = text.contains("0x") || text.contains("0X");
    let value = strtoll(text, if hex { 16 } else { 10 })?;
    let value = u64::try_from(value).ok()?;
    match multiplier(text, kb_base) {
        Mult::Percent => Some(Decimal::Percent(value)),
        Mult::Times(m) => value.checked_mul(m).map(Decimal::Bytes),
    }
}

/// C's `strtoll` on `text`: blanks, a sign, `0x` for base 16, then digits up to the first
/// other character; `None` without a digit or past the range of a `long long`.
fn strtoll(text: &str, base: u32) -> Option<i64> {
    let s = text.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let (negative, s) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let digits_of = |s: &str| s.chars().take_while(|c| c.is_digit(base)).count();
    let s = match s.get(..2) {
        Some("0x" | "0X") if base == 16 && digits_of(&s[2..]) > 0 => &s[2..],
        _ => s,
    };
    let n = digits_of(s);
    if n == 0 {
        return None;
    }
    let magnitude = i128::from_str_radix(&s[..n], base).ok()?;
    i64::try_from(if negative { -magnitude } else { magnitude }).ok()
}

enum Mult {
    Times(u64),
    Percent,
}

/// `get_mult_bytes`: the letters after the number (past any digits and a leading sign),
/// lower-cased and cut at the first separator, matched by their start.
fn multiplier(text: &str, kb_base: u64) -> Mult {
    let b = text.as_bytes();
    let suffix = if b.len() < 2 {
        text
    } else {
        let mut i = 0;
        let mut digit_seen = false;
        while let Some(&c) = b.get(i) {
            if !c.is_ascii_digit() && ((c != b'+' && c != b'-') || digit_seen) {
                break;
            }
            digit_seen |= c.is_ascii_digit();
            i += 1;
        }
        match b.get(i) {
            Some(c) if c.is_ascii_alphabetic() || *c == b'%' => &text[i..],
            _ => "",
        }
    };
    let lower = suffix.to_ascii_lowercase();
    let c = lower.split([':', '-', ',', '/']).next().unwrap_or("");
    // IEC prefixes take the other base: decimal under fio's default 1024.
    let iec = if kb_base == 1000 { 1024 } else { 1000 };
    let (pow, mult) = match c {
        _ if c.starts_with("pib") => (5, iec),
        _ if c.starts_with("tib") => (4, iec),
        _ if c.starts_with("gib") => (3, iec),
        _ if c.starts_with("mib") => (2, iec),
        _ if c.starts_with("kib") => (1, iec),
        _ if c.starts_with('p') => (5, kb_base),
        _ if c.starts_with('t') => (4, kb_base),
        _ if c.starts_with('g') => (3, kb_base),
        _ if c.starts_with('m') => (2, kb_base),
        _ if c.starts_with('k') => (1, kb_base),
        _ if c.starts_with('%') => return Mult::Percent,
        _ => (0, kb_base),
    };
    Mult::Times(mult.pow(pow))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(text: &str) -> Option<u64> {
        decimal(text, 1024)?.bytes()
    }

    /// Each figure as fio 3.33 read it here (`size=V`, `bs=512`, `rw=read`: its
    /// `io_bytes`, the size rounded up to a block): 4KiB 4096 (4000), 1MiB 1000448
    /// (1000000), 4k-8k 8192, 8KiBx 8192 (8000), 0x1000 4096; 1.5m, 1-100 and `4 k`
    /// failed (1, 100 and 4 bytes, under a block).
    #[test]
    fn sizes_read_as_fio_reads_them() {
        for (text, want) in [
            ("4k", Some(4096)),
            ("4K", Some(4096)),
            ("4KB", Some(4096)),
            ("4kB", Some(4096)),
            ("4KiB", Some(4000)),
            ("4kib", Some(4000)),
            ("1MiB", Some(1_000_000)),
            ("1m", Some(1 << 20)),
            ("1MB", Some(1 << 20)),
            ("1g", Some(1 << 30)),
            ("1GiB", Some(1_000_000_000)),
            ("2t", Some(2 << 40)),
            ("512", Some(512)),
            ("0x1000", Some(4096)),
            ("0X10k", Some(16)),
            ("8KiBx", Some(8000)),
            ("1.5m", Some(1)),
            ("4 k", Some(4)),
            ("1e3", Some(1)),
            ("4096b", Some(4096)),
            ("+4k", Some(4096)),
            ("pizza", None),
            ("", None),
            ("k", None),
            ("-4k", None),
            ("(1024*4)", None),
            ("99999999999999999999", None),
            ("16777216p", None),
        ] {
            assert_eq!(bytes(text), want, "{text}");
        }
        assert_eq!(decimal("50%", 1024), Some(Decimal::Percent(50)));
        assert_eq!(decimal("50.5%", 1024), Some(Decimal::Bytes(50)));
    }

    #[test]
    fn kb_base_1000_takes_the_prefixes_as_written() {
        assert_eq!(decimal("4k", 1000), Some(Decimal::Bytes(4000)));
        assert_eq!(decimal("4KiB", 1000), Some(Decimal::Bytes(4096)));
        assert_eq!(decimal("1MiB", 1000), Some(Decimal::Bytes(1 << 20)));
        assert_eq!(kb_base(Some(" 1000")), 1000);
        assert_eq!(kb_base(Some("1024")), 1024);
        assert_eq!(kb_base(None), 1024);
    }

    #[test]
    fn a_value_is_read_in_rounds() {
        assert_eq!(rounds("4k"), ["4k"]);
        assert_eq!(rounds("4k,8k"), ["4k", "8k"]);
        assert_eq!(rounds("4k,8k,16k"), ["4k", "8k", "16k"]);
        assert_eq!(rounds("4k:8k"), ["4k:8k", "8k"]);
        assert_eq!(rounds("4k-8k"), ["4k-8k", "8k"]);
        assert_eq!(rounds("1-1000000000"), ["1-1000000000", "1000000000"]);
        assert_eq!(rounds("4k,"), ["4k", ""]);
        // Each round reads only its front: `4k-8k` is 4 KiB, then 8 KiB.
        assert_eq!(bytes(rounds("4k-8k")[0]), Some(4096));
        // `0x` anywhere in a round makes all of it hexadecimal.
        assert_eq!(bytes("10:0x20"), Some(16));
    }
}
