//! The optional latency histograms beside a session: an HdrHistogram interval log
//! (`SESSION.hlog`, the format HdrHistogram's own tools read), one compressed histogram per
//! interval and direction (tags `read`, `write` and `trim`, nanoseconds, times in seconds since the
//! session started). With it any percentile of any span can be recomputed exactly.

use std::path::Path;
use std::time::{Duration, SystemTime};

use base64::Engine as _;
use hdrhistogram::serialization::interval_log::{
    IntervalLogIterator, IntervalLogWriterBuilder, LogEntry, LogIteratorError, Tag,
};
use hdrhistogram::serialization::{Deserializer, V2DeflateSerializer};
use hdrhistogram::Histogram;

use super::error::SessionError;
use crate::stats::{new_histogram, LatHists};

/// Tags of the two directions, index 0 read, 1 write.
pub const TAGS: [&str; 3] = ["read", "write", "trim"];

/// Words of the log's first line, by which an existing log is known as ours.
pub const MARKER: &str = "drivescope latency histograms";

/// Whether `head` (a file's first bytes) is the start of a log drivescope wrote.
pub fn is_histlog(head: &[u8]) -> bool {
    head.strip_prefix(b"#")
        .is_some_and(|rest| rest.starts_with(MARKER.as_bytes()))
}

/// The largest log read (the whole log is held while it is read): some 4 KiB a second for
/// a run of weeks.
pub const MAX_BYTES: u64 = 4096 * crate::user_file::MIB;

/// Why reading a log stopped at byte `offset` of `bytes`, in words.
fn unreadable_at(bytes: &[u8], offset: usize) -> String {
    let (line, _) = super::pieces::line_col(&bytes[..offset.min(bytes.len())]);
    if offset == 0 {
        "not an HdrHistogram interval log (its first line is neither a comment nor an interval)"
            .to_string()
    } else {
        format!("line {line} is not a line of an HdrHistogram interval log; read up to there")
    }
}

/// The log's first lines.
pub fn header(started: SystemTime) -> Vec<u8> {
    let mut buf = Vec::new();
    let mut ser = V2DeflateSerializer::new();
    let _ = IntervalLogWriterBuilder::new()
        .add_comment("drivescope latency histograms: values in nanoseconds, one per interval and direction (tags read, write, trim); times are seconds since StartTime")
        .with_start_time(started)
        .begin_log_with(&mut buf, &mut ser);
    buf
}

/// Encodes the histograms of one interval (response latency per direction; empty ones are
/// left out) as log lines.
pub fn encode_interval(start_s: f64, dt_s: f64, hists: &LatHists, drive: Option<u32>) -> Vec<u8> {
    let mut buf = Vec::new();
    let mut ser = V2DeflateSerializer::new();
    if let Ok(mut w) = IntervalLogWriterBuilder::new().begin_log_with(&mut buf, &mut ser) {
        for (dir, tag) in TAGS.iter().enumerate() {
            let h = hists.response_dir(dir);
            if h.is_empty() {
                continue;
            }
            let _ = w.write_histogram(
                h,
                Duration::from_secs_f64(start_s.max(0.0)),
                Duration::from_secs_f64(dt_s.max(0.0)),
                Tag::new(&tag_of(tag, drive)),
            );
        }
    }
    buf
}

/// Rounding of the log's times (milliseconds), allowed at a span's ends.
const SLACK_S: f64 = 0.0015;

/// The histograms merged over the intervals lying within `[from_s, to_s]`.
#[derive(Debug)]
pub struct Span {
    pub hist: Histogram<u64>,
    /// Interval histograms merged.
    pub histograms: usize,
    /// Why reading stopped early (a torn last line), if it did, in words (without the
    /// path).
    pub stopped: Option<String>,
}

/// The tag of a direction's histograms (`read`), of drive `drive` in a run of several
/// (`read.d2`: the drives' intervals overlap in time, so the log tells them apart).
fn tag_of(dir: &str, drive: Option<u32>) -> String {
    match drive {
        Some(d) => format!("{dir}.d{d}"),
        None => dir.to_string(),
    }
}

/// The drive whose histograms a tag holds (`read.d2` → 2); none for a run of one.
fn drive_of(tag: Option<&str>) -> Option<u32> {
    tag?.rsplit_once(".d").and_then(|(_, d)| d.parse().ok())
}

/// Merges the intervals of `tag` (`None`: every direction) that lie within the span.
pub fn read_span(
    path: &Path,
    from_s: f64,
    to_s: f64,
    tag: Option<&str>,
) -> Result<Span, SessionError> {
    read_span_where(path, from_s, to_s, &|t| tag.is_none_or(|x| t == Some(x)))
}

/// Merges drive `drive`'s intervals (both directions) that lie within the span; `None`:
/// those of a run of one drive. A log of a release that did not tag drives has none.
pub fn read_drive_span(
    path: &Path,
    from_s: f64,
    to_s: f64,
    drive: Option<u32>,
) -> Result<Span, SessionError> {
    read_span_where(path, from_s, to_s, &|t| drive_of(t) == drive)
}

/// Merges the intervals within the span whose tag `keep` takes.
fn read_span_where(
    path: &Path,
    from_s: f64,
    to_s: f64,
    keep: &dyn Fn(Option<&str>) -> bool,
) -> Result<Span, SessionError> {
    let bytes = crate::user_file::read_input(path, MAX_BYTES, "histogram log")?;
    let mut span = Span {
        hist: new_histogram(),
        histograms: 0,
        stopped: None,
    };
    let mut de = Deserializer::new();
    for entry in IntervalLogIterator::new(&bytes) {
        let iv = match entry {
            Ok(LogEntry::Interval(iv)) => iv,
            Ok(_) => continue,
            Err(LogIteratorError::ParseError { offset }) => {
                span.stopped = Some(unreadable_at(&bytes, offset));
                break;
            }
        };
        if !keep(iv.tag().map(|x| x.as_str())) {
            continue;
        }
        let start = iv.start_timestamp().as_secs_f64();
        let end = start + iv.duration().as_secs_f64();
        // The log keeps times to the millisecond.
        if start + SLACK_S < from_s || end > to_s + SLACK_S {
            continue;
        }
        let Ok(raw) = base64::engine::general_purpose::STANDARD.decode(iv.encoded_histogram())
        else {
            span.stopped = Some("a histogram is not base64; read up to there".to_string());
            break;
        };
        match de.deserialize::<u64, _>(&mut raw.as_slice()) {
            Ok(h) => {
                let _ = span.hist.add(&h);
                span.histograms += 1;
            }
            Err(e) => {
                span.stopped = Some(format!(
                    "a histogram does not decode ({e}); read up to there"
                ));
                break;
            }
        }
    }
    Ok(span)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::LatSummary;

    #[test]
    fn a_span_recomputes_the_merged_percentiles_exactly() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.hlog");
        let mut log = header(SystemTime::now());
        let mut all = LatHists::new(false);
        let mut middle = LatHists::new(false);
        for i in 0..10u64 {
            let mut h = LatHists::new(false);
            for k in 0..500 {
                h.service[(k % 3 == 0) as usize].saturating_record(50_000 + i * 10_000 + k * 37);
            }
            log.extend(encode_interval(i as f64, 1.0, &h, None));
            all.add(&h);
            if (3..7).contains(&i) {
                middle.add(&h);
            }
        }
        std::fs::write(&p, &log).unwrap();
        let whole = read_span(&p, 0.0, 10.0, None).unwrap();
        assert_eq!(whole.histograms, 20);
        assert_eq!(
            LatSummary::from_hist(&whole.hist),
            LatSummary::from_hist(&all.service_all())
        );
        let mid = read_span(&p, 3.0, 7.0, None).unwrap();
        assert_eq!(mid.histograms, 8);
        assert_eq!(
            LatSummary::from_hist(&mid.hist),
            LatSummary::from_hist(&middle.service_all())
        );
        let writes = read_span(&p, 0.0, 10.0, Some("write")).unwrap();
        assert_eq!(writes.hist.len(), all.service[1].len());
        // A torn last line stops the reading there and says so.
        std::fs::write(&p, &log[..log.len() - 40]).unwrap();
        let torn = read_span(&p, 0.0, 10.0, None).unwrap();
        assert!(
            torn.histograms >= 18 && torn.histograms < 20,
            "{}",
            torn.histograms
        );
    }

    #[test]
    fn each_drives_histograms_read_apart_though_their_times_overlap() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.hlog");
        let mut log = header(SystemTime::now());
        for drive in 0..3u32 {
            for i in 0..4u64 {
                let mut h = LatHists::new(false);
                for k in 0..(100 * (u64::from(drive) + 1)) {
                    h.service[0].saturating_record(10_000 * (u64::from(drive) + 1) + k);
                }
                log.extend(encode_interval(i as f64, 1.0, &h, Some(drive)));
            }
        }
        std::fs::write(&p, &log).unwrap();
        for drive in 0..3u32 {
            let span = read_drive_span(&p, 0.0, 4.0, Some(drive)).unwrap();
            assert_eq!(span.histograms, 4, "drive {drive}");
            // Its own I/Os only: each drive recorded a different count.
            assert_eq!(span.hist.len(), 400 * (u64::from(drive) + 1));
        }
        let none = read_drive_span(&p, 0.0, 4.0, None).unwrap();
        assert_eq!(
            none.histograms, 0,
            "no drive's histograms are a one-drive run's"
        );
        assert_eq!(read_span(&p, 0.0, 4.0, None).unwrap().histograms, 12);
    }
}
