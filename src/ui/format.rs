//! Number formatting for panels and commands: IOPS, bandwidth, latency, durations,
//! temperatures, capacities (decimal, the binary size beside) and sizes the user gives
//! (binary), with the units spelled out and no more digits than the measurement carries;
//! text wrapped to a panel's width; text from outside made printable.

/// Text that came from a device or a user (a model, a serial, a label, a path, fio's or
/// a note's words), as the headless outputs show it: control characters and bidirectional
/// overrides written out ([`crate::ostext::printable`]), never handed to the terminal.
pub fn shown(s: &str) -> String {
    crate::ostext::printable(s).into_owned()
}

/// The net under [`shown`]: a cell of `buf` that holds a control character or a
/// bidirectional override (text that reached a panel without passing [`shown`]; ratatui
/// itself drops only the control characters, silently) shows `�` instead, so that no such
/// character is ever handed to the terminal.
pub fn printable_cells(buf: &mut ratatui::buffer::Buffer) {
    for cell in &mut buf.content {
        if matches!(
            crate::ostext::printable(cell.symbol()),
            std::borrow::Cow::Owned(_)
        ) {
            cell.set_symbol("\u{FFFD}");
        }
    }
}

/// A path as [`shown`] shows text.
pub fn shown_path(p: &std::path::Path) -> String {
    shown(&p.display().to_string())
}

/// `s` in at most `width` columns: its start and `…` when it is longer (a name).
pub fn cut_end(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        return s.to_string();
    }
    let head: String = s.chars().take(width.saturating_sub(1)).collect();
    format!("{head}…")
}

/// A row's name in at most `width` columns among the names of its list (`others`; it may
/// hold `name` itself): a longer name loses the leading words it shares with the name
/// most like it, not its end, so that the words telling rows apart stay
/// ("StorageReview 4K random read" and "… write" become `…4K random read` and
/// `…4K random write`); what still does not fit is cut at its end.
pub fn fit_name(name: &str, others: &[&str], width: usize) -> String {
    if name.chars().count() <= width {
        return name.to_string();
    }
    let words: Vec<&str> = name.split(' ').collect();
    // The most leading words any other name shares with this one.
    let shared = others
        .iter()
        .filter(|o| **o != name)
        .map(|o| {
            words
                .iter()
                .zip(o.split(' '))
                .take_while(|(a, b)| *a == b)
                .count()
        })
        .max()
        .unwrap_or(0)
        .min(words.len().saturating_sub(1));
    // The fewest shared words dropped that make it fit; all of them when none does.
    let dropped = (1..=shared)
        .map(|k| format!("…{}", words[k..].join(" ")))
        .find(|c| c.chars().count() <= width);
    match dropped {
        Some(c) => c,
        None if shared > 0 => cut_end(&format!("…{}", words[shared..].join(" ")), width),
        None => cut_end(name, width),
    }
}

/// `s` in at most `width` columns: `…` and its end when it is longer (a path, whose end
/// tells drives apart: `…nvme1n1`).
pub fn cut_start(s: &str, width: usize) -> String {
    let n = s.chars().count();
    if n <= width {
        return s.to_string();
    }
    let tail: String = s.chars().skip(n + 1 - width.max(1)).collect();
    format!("…{tail}")
}

/// `s` in lines of at most `width` columns, broken between words (a word longer than a
/// line is cut into pieces): text that wraps instead of being cut.
pub fn wrapped(s: &str, width: usize) -> Vec<String> {
    wrap_words(s.split_whitespace(), width.max(1))
}

/// `words` in lines of at most `width` columns, a space between two words of a line; a
/// word longer than a line cut into pieces.
fn wrap_words<'a>(words: impl Iterator<Item = &'a str>, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in words {
        let mut word: Vec<char> = word.chars().collect();
        loop {
            let used = line.chars().count();
            let gap = usize::from(used > 0);
            if used + gap + word.len() <= width {
                if gap == 1 {
                    line.push(' ');
                }
                line.extend(word.iter());
                break;
            }
            if used > 0 {
                lines.push(std::mem::take(&mut line));
                continue;
            }
            let rest = word.split_off(width);
            lines.push(word.into_iter().collect());
            word = rest;
        }
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// `950`, `12.3k`, `1.23M`.
pub fn iops(v: f64) -> String {
    if !v.is_finite() || v < 0.0 {
        return "-".into();
    }
    if v >= 1e6 {
        format!("{:.2}M", v / 1e6)
    } else if v >= 1e4 {
        format!("{:.1}k", v / 1e3)
    } else {
        format!("{v:.0}")
    }
}

/// Bytes per second as decimal MB/s or GB/s (as datasheets quote them).
pub fn bw(bytes_per_s: f64) -> String {
    if !bytes_per_s.is_finite() || bytes_per_s < 0.0 {
        return "-".into();
    }
    let mb = bytes_per_s / 1e6;
    if mb >= 1000.0 {
        format!("{:.2} GB/s", mb / 1000.0)
    } else if mb >= 10.0 {
        format!("{mb:.0} MB/s")
    } else {
        format!("{mb:.1} MB/s")
    }
}

/// An axis label of [`bw`] (bytes per second): the same units with their space, and the
/// axis' zero as `0 MB/s`.
pub fn bw_axis(bytes_per_s: f64) -> String {
    if bytes_per_s.abs() < 0.5 {
        return "0 MB/s".into();
    }
    bw(bytes_per_s)
}

/// Microseconds: `85 µs`, `1.23 ms`, `2.10 s`.
pub fn us(v: f64) -> String {
    if !v.is_finite() || v < 0.0 {
        return "-".into();
    }
    if v >= 1e6 {
        format!("{:.2} s", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.2} ms", v / 1e3)
    } else if v >= 10.0 {
        format!("{v:.0} µs")
    } else {
        format!("{v:.1} µs")
    }
}

/// A latency in µs as [`us`] shows it; `-` when unknown.
pub fn lat(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), us)
}

/// A compact latency axis label: `10µs`, `1ms`, `1s`.
pub fn us_axis(v: f64) -> String {
    if v >= 1e6 {
        format!("{}s", trim(v / 1e6))
    } else if v >= 1e3 {
        format!("{}ms", trim(v / 1e3))
    } else {
        format!("{}µs", trim(v))
    }
}

fn trim(v: f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// Seconds as `0:07`, `12:34`, `1:02:03`.
pub fn clock(secs: f64) -> String {
    if !secs.is_finite() || secs < 0.0 {
        return "-".into();
    }
    let s = secs.round() as u64;
    let (h, m, s) = (s / 3600, (s % 3600) / 60, s % 60);
    if h > 0 {
        format!("{h}:{m:02}:{s:02}")
    } else {
        format!("{m}:{s:02}")
    }
}

/// A drive's capacity as vendors print it, decimal, with the binary size beside it:
/// `274.9 GB (256 GiB)`, `500.1 GB (465.8 GiB)`. Every screen and command that shows a
/// drive's or a device's size shows it so ([`crate::units::format_capacity`], which the
/// layers below the front ends use).
pub fn capacity(bytes: u64) -> String {
    crate::units::format_capacity(bytes)
}

/// A size the user gives (a test file, a region, a block), as given: `1 GiB`, `4 KiB`,
/// `1.50 GiB`, and `10 GB (9.31 GiB)` for a `--size 10GB` ([`crate::units::format_given`]).
pub fn size(bytes: u64) -> String {
    crate::units::format_given(bytes)
}

/// The decimal part of [`capacity`] alone (`7.68 TB`), for a column too narrow for both.
pub fn capacity_decimal(bytes: u64) -> String {
    crate::units::format_decimal(bytes)
}

/// A latency axis label rounded to what an axis needs: `0µs`, `250µs`, `1.2ms`.
pub fn us_axis_round(v: f64) -> String {
    if v >= 1e3 {
        us_axis((v / 100.0).round() * 100.0)
    } else {
        us_axis(v.round())
    }
}

/// Splits `text` into pieces of at most `width` characters, at spaces where it can.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    wrap_words(text.split(' '), width.max(8))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_show_an_ellipsis_and_wrapping_keeps_every_word() {
        assert_eq!(cut_end("StorageReview 16K sequential", 12), "StorageRevi…");
        assert_eq!(cut_end("Quick look", 12), "Quick look");
        assert_eq!(cut_start("/dev/nvme1n1", 8), "…nvme1n1");
        let text = "/dev/vda is mounted on /. drivescope never writes to it";
        let lines = wrapped(text, 20);
        assert!(lines.iter().all(|l| l.chars().count() <= 20), "{lines:?}");
        assert_eq!(lines.join(" "), text);
        assert_eq!(wrapped("abcdefghij", 4), ["abcd", "efgh", "ij"]);
        assert_eq!(wrapped("", 4), [""]);
    }

    #[test]
    fn a_name_too_long_loses_the_words_it_shares_not_its_end() {
        let all = [
            "StorageReview 4K random read",
            "StorageReview 4K random write",
            "StorageReview 16K sequential read",
            "Quick look",
        ];
        assert_eq!(fit_name(all[0], &all, 30), all[0], "it fits");
        assert_eq!(fit_name(all[0], &all, 24), "…4K random read");
        assert_eq!(fit_name(all[1], &all, 24), "…4K random write");
        assert_eq!(fit_name(all[1], &all, 8), "…write");
        assert_eq!(fit_name(all[2], &all, 24), "…16K sequential read");
        assert_eq!(fit_name(all[2], &all, 10), "…16K sequ…");
        assert_eq!(fit_name("Quick look long", &all, 8), "…long");
        let alone = fit_name("Zoned sequential", &all, 8);
        assert_eq!(alone, "Zoned s…", "nothing shared: its end is cut");
    }

    #[test]
    fn figures() {
        assert_eq!(iops(950.4), "950");
        assert_eq!(iops(12_345.0), "12.3k");
        assert_eq!(iops(1_234_567.0), "1.23M");
        assert_eq!(iops(f64::NAN), "-");
        assert_eq!(bw(1_004_000_000.0), "1.00 GB/s");
        assert_eq!(bw(505_300_000.0), "505 MB/s");
        assert_eq!(bw(2_500_000.0), "2.5 MB/s");
        assert_eq!(bw_axis(0.0), "0 MB/s");
        assert_eq!(bw_axis(1_849_000_000.0), "1.85 GB/s");
        assert_eq!(us(85.2), "85 µs");
        assert_eq!(us(8.25), "8.2 µs");
        assert_eq!(us(1234.0), "1.23 ms");
        assert_eq!(us(2_100_000.0), "2.10 s");
        assert_eq!(us_axis(1000.0), "1ms");
        assert_eq!(us_axis(100.0), "100µs");
        assert_eq!(clock(7.0), "0:07");
        assert_eq!(clock(3723.0), "1:02:03");
        assert_eq!(capacity_decimal(7_681_501_126_656), "7.68 TB");
        assert_eq!(capacity(274_877_906_944), "274.9 GB (256 GiB)");
        assert_eq!(capacity(7_681_501_126_656), "7.68 TB (7.0 TiB)");
        assert_eq!(capacity(500_107_862_016), "500.1 GB (465.8 GiB)");
        assert_eq!(capacity(268_435_456), "268 MB (256 MiB)");
        // A test file reads as the size it was given, not as a decimal capacity.
        assert_eq!(size(1 << 30), "1 GiB");
        assert_eq!(size(4096), "4 KiB");
        assert_eq!(size(1_610_612_736), "1.50 GiB");
        // One given in decimal units (`--size 1.5GB`) shows them, the binary figure beside.
        assert_eq!(size(1_500_000_000), "1.5 GB (1.40 GiB)");
        assert_eq!(size(512), "512 B");
    }

    #[test]
    fn wraps_at_spaces_and_splits_long_words() {
        assert_eq!(wrap("a bb ccc", 8), vec!["a bb ccc"]);
        assert_eq!(wrap("aaaa bbbb cccc", 9), vec!["aaaa bbbb", "cccc"]);
        assert_eq!(
            wrap("/a/very/long/path/without/spaces", 10),
            vec!["/a/very/lo", "ng/path/wi", "thout/spac", "es"]
        );
        assert_eq!(wrap("", 10), vec![""]);
    }
}
