//! The one-time fill of a test file that was never written: a sequential write of
//! incompressible data over the whole file, so later reads hit real blocks instead of
//! holes or unwritten extents (which read back as zeros without touching the drive).

use std::path::Path;
use std::time::Duration;

use super::{created_by_drivescope, PreparedTarget, TargetKind};
use crate::engine::{Control, EngineError, StepControl};
use crate::outcome::EndedBy;
use crate::stats::StepSummary;
use crate::units::{format_given, format_size};
use crate::workload::{BlockSizes, EngineKind, Region, RwMode, StepEnd, StepSpec, Workload};

fn is_ours(path: &Path) -> bool {
    std::fs::File::open(path)
        .map(|f| created_by_drivescope(&f, path))
        .unwrap_or(false)
}

/// Writes the whole file once, sequentially (1 MiB, QD8): with O_DIRECT when `direct`,
/// else through the page cache and synced to the drive (a run that says `--direct 0`, on a
/// filesystem that may refuse O_DIRECT).
pub fn fill_file(
    t: &PreparedTarget,
    direct: bool,
    ctl: &StepControl,
    note: &mut dyn FnMut(&str),
) -> Result<StepSummary, EngineError> {
    note(&format!(
        "{} has never been written: filling its {} once with incompressible data so reads \
         hit real blocks",
        t.path.display(),
        format_given(t.size)
    ));
    // The whole file in 1 MiB blocks (or the largest that fits), then what is left of it
    // in blocks of its alignment (a size given in decimal units, 10 MB, is rarely a
    // multiple of 1 MiB); the last part under one alignment no I/O ever reaches.
    let bs = [1u64 << 20, 128 << 10, 4096, t.align]
        .into_iter()
        .find(|b| b % t.align == 0 && *b <= t.size)
        .unwrap_or(t.align);
    let len = t.size - t.size % bs;
    let aligned = t.size - t.size % t.align;
    let mut progress = Progress::new(aligned, PROGRESS_EVERY_S);
    let mut s = fill_part(t, direct, ctl, note, &mut progress, bs, 0, len)?;
    if interrupted(&s) {
        note(&interrupted_note(t, &s, aligned));
        return Ok(s);
    }
    if aligned > len {
        let tail = fill_part(
            t,
            direct,
            ctl,
            note,
            &mut progress,
            t.align,
            len,
            aligned - len,
        )?;
        s.write_ios += tail.write_ios;
        s.write_bytes += tail.write_bytes;
        s.runtime_s += tail.runtime_s;
        s.write_bw_bytes = s.write_bytes as f64 / s.runtime_s.max(1e-9);
        if interrupted(&tail) {
            s.ended_by = tail.ended_by;
            note(&interrupted_note(t, &s, aligned));
            return Ok(s);
        }
    }
    if !direct {
        // Written through the page cache: the blocks are real only once on the drive.
        std::fs::OpenOptions::new()
            .write(true)
            .open(&t.path)
            .and_then(|f| f.sync_all())
            .map_err(|e| EngineError::Fill {
                path: t.path.display().to_string(),
                message: format!("cannot sync the filled test file: {e}"),
            })?;
    }
    note(&format!(
        "filled {} in {:.1}s ({:.0} MB/s)",
        format_size(s.write_bytes),
        s.runtime_s,
        s.write_bw_bytes / 1e6
    ));
    Ok(s)
}

/// The fill was stopped (Ctrl-C, a signal, the stop key) before it wrote the whole file.
pub fn interrupted(s: &StepSummary) -> bool {
    s.ended_by == EndedBy::Stopped
}

/// What an interrupted fill says: how far it got, and that the rest stays unwritten.
fn interrupted_note(t: &PreparedTarget, s: &StepSummary, of: u64) -> String {
    format!(
        "fill of {} interrupted after {} of {} ({:.0}%) in {:.1}s: the rest is still \
         unwritten and the next run fills it",
        t.path.display(),
        format_size(s.write_bytes),
        format_size(of),
        s.write_bytes as f64 * 100.0 / of.max(1) as f64,
        s.runtime_s
    )
}

/// Writes `len` bytes of `t` from `offset` in blocks of `bs` (see [`fill_file`]); a part
/// with a failed write is the fill's error.
#[allow(clippy::too_many_arguments)]
fn fill_part(
    t: &PreparedTarget,
    direct: bool,
    ctl: &StepControl,
    note: &mut dyn FnMut(&str),
    progress: &mut Progress,
    bs: u64,
    offset: u64,
    len: u64,
) -> Result<StepSummary, EngineError> {
    let spec = StepSpec {
        engine: EngineKind::IoUring,
        options: Default::default(),
        workload: Workload {
            direct,
            ..Workload::new(
                RwMode::Write,
                BlockSizes::single(bs),
                8,
                Region { offset, len },
                0xF111,
            )
        },
        ramp: Duration::ZERO,
        end: StepEnd {
            duration: None,
            bytes: Some(len),
        },
        interval: Duration::from_secs(1),
        fio_file: None,
        fio_version: None,
    };
    let st = t.step_target(None);
    let mut first_error: Option<String> = None;
    let s = crate::engine_list::run_step(
        &st,
        &spec,
        ctl,
        |r| {
            if first_error.is_none() {
                first_error = r.first_error().map(|e| e.message.clone());
            }
            if let Some(line) = progress.add(r.write.bytes, r.end_s) {
                note(&format!("filling {}: {line}", t.path.display()));
            }
            Control::Continue
        },
        |_| {},
    )
    .inspect_err(|_| {
        // A fill that could not start (O_DIRECT refused, the file unopenable): a file made
        // for this run is not left behind.
        if t.created {
            let _ = super::remove_made(&t.path);
        }
    })?;
    if s.errors > 0 {
        return Err(fill_failed(t, &s, len, first_error));
    }
    Ok(s)
}

/// How often a fill says how far it is (s).
const PROGRESS_EVERY_S: f64 = 5.0;

/// How far a fill of `len` bytes is, said every `every_s` seconds of it.
struct Progress {
    len: u64,
    done: u64,
    every_s: f64,
    said_s: f64,
}

impl Progress {
    fn new(len: u64, every_s: f64) -> Progress {
        Progress {
            len,
            done: 0,
            every_s,
            said_s: 0.0,
        }
    }

    /// An interval that wrote `bytes` and ended at `at_s` of the fill: what to say, when
    /// `every_s` passed since it last said (`1.00GiB of 4GiB (25%), 180 MB/s`).
    fn add(&mut self, bytes: u64, at_s: f64) -> Option<String> {
        self.done = (self.done + bytes).min(self.len);
        if at_s - self.said_s < self.every_s || self.done >= self.len || at_s <= 0.0 {
            return None;
        }
        self.said_s = at_s;
        Some(format!(
            "{} of {} ({:.0}%), {:.0} MB/s",
            format_size(self.done),
            format_size(self.len),
            self.done as f64 * 100.0 / self.len.max(1) as f64,
            self.done as f64 / at_s / 1e6
        ))
    }
}

/// The error of a fill that could not write the whole file (a full filesystem, a failing
/// drive). A file created in this run is removed; otherwise the message says it is only
/// partly filled.
fn fill_failed(
    t: &PreparedTarget,
    s: &StepSummary,
    len: u64,
    first_error: Option<String>,
) -> EngineError {
    let cause = first_error.unwrap_or_else(|| s.ended_by.to_string());
    let left = if t.created {
        match super::remove_made(&t.path) {
            Ok(true) => "the test file was removed".to_string(),
            Ok(false) => "the test file was left: its name no longer holds the file \
                          drivescope made"
                .to_string(),
            Err(e) => format!("the partly filled test file could not be removed: {e}"),
        }
    } else {
        "the test file is only partly filled; remove it or make room before running again"
            .to_string()
    };
    EngineError::Fill {
        path: t.path.display().to_string(),
        message: format!(
            "{} of {} I/Os failed after {} of {} were written ({cause}); {left}",
            s.errors,
            s.errors + s.write_ios,
            format_size(s.write_bytes),
            format_size(len)
        ),
    }
}

/// Fills `t` (with O_DIRECT when `direct`, see [`fill_file`]) if it is a file with unwritten blocks that drivescope created; for a file it
/// did not create, says (through `note`) that reads of unwritten blocks do not reach the
/// drive. Returns the fill's summary when it filled.
pub fn fill_if_unwritten(
    t: &PreparedTarget,
    direct: bool,
    ctl: &StepControl,
    note: &mut dyn FnMut(&str),
) -> Result<Option<StepSummary>, EngineError> {
    if t.kind != TargetKind::File || !t.unwritten {
        return Ok(None);
    }
    if t.created || is_ours(&t.path) {
        return fill_file(t, direct, ctl, note).map(Some);
    }
    note(&format!(
        "{} has unwritten blocks (holes or preallocated extents): reads of them return zeros \
         without reaching the drive",
        t.path.display()
    ));
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stopped_fill_says_it_was_interrupted_not_filled() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.bin");
        let f = std::fs::File::create(&path).unwrap();
        f.set_len(256 << 20).unwrap();
        let t = PreparedTarget {
            path: path.clone(),
            kind: TargetKind::File,
            size: 256 << 20,
            align: 4096,
            created: false,
            unwritten: true,
        };
        // Stopped before it began, as Ctrl-C at the first interval would: real I/O setup,
        // no block written.
        let ctl = StepControl::default();
        ctl.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        let mut said = Vec::new();
        let s = fill_file(&t, false, &ctl, &mut |n| said.push(n.to_string())).unwrap();
        assert!(interrupted(&s), "{:?}", s.ended_by);
        let last = said.last().unwrap();
        assert!(last.contains("interrupted after"), "{said:?}");
        assert!(last.contains("of 256MiB"), "{said:?}");
        assert!(said.iter().all(|n| !n.starts_with("filled")), "{said:?}");
    }

    #[test]
    fn a_long_fill_says_how_far_it_is_every_few_seconds() {
        let mut p = Progress::new(4 << 30, 5.0);
        // One interval a second, 200 MiB each.
        let said: Vec<(u32, String)> = (1..=21)
            .filter_map(|s| Some((s, p.add(200 << 20, f64::from(s))?)))
            .collect();
        let at: Vec<u32> = said.iter().map(|x| x.0).collect();
        assert_eq!(at, [5, 10, 15, 20]);
        assert_eq!(said[0].1, "1000MiB of 4GiB (24%), 210 MB/s");
        // The last interval, the whole file written: the closing note says it instead.
        assert_eq!(p.add(1 << 30, 26.0), None);
    }
}
