//! The one-time fill of a test file that was never written: a sequential write of
//! incompressible data over the whole file, so later reads hit real blocks instead of
//! holes or unwritten extents (which read back as zeros without touching the drive).

use std::path::Path;
use std::time::Duration;

use super::{created_by_drivescope, PreparedTarget, TargetKind};
use crate::engine::{self, Control, EngineError, StepControl, StepTarget};
use crate::stats::StepSummary;
use crate::units::format_size;
use crate::workload::{
    Arrivals, BlockSizes, EngineKind, Region, RwMode, StepEnd, StepSpec, Workload,
};

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
        format_size(t.size)
    ));
    let bs = [1u64 << 20, 128 << 10, 4096, t.align]
        .into_iter()
        .find(|b| b % t.align == 0 && *b <= t.size)
        .unwrap_or(t.align);
    let len = t.size - t.size % bs;
    let spec = StepSpec {
        engine: EngineKind::IoUring,
        options: Default::default(),
        workload: Workload {
            rw: RwMode::Write,
            rwmixread: 0,
            rwmixtrim: 0,
            bs: BlockSizes::single(bs),
            iodepth: 8,
            jobs: 1,
            region: Region { offset: 0, len },
            rate_iops: None,
            arrivals: Arrivals::Uniform,
            seed: 0xF111,
            direct,
            job_region: Default::default(),
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
    let st = StepTarget {
        path: t.path.clone(),
        size: t.size,
        align: t.align,
        verify: None,
    };
    let mut first_error: Option<String> = None;
    let s = crate::engines::run_step(
        &st,
        &spec,
        ctl,
        |r| {
            if first_error.is_none() {
                first_error = engine::native::first_error(r).map(|e| e.message.clone());
            }
            Control::Continue
        },
        |_| {},
    )
    .inspect_err(|_| {
        // A fill that could not start (O_DIRECT refused, the file unopenable): a file made
        // for this run is not left behind.
        if t.created {
            let _ = std::fs::remove_file(&t.path);
        }
    })?;
    if s.errors > 0 {
        return Err(fill_failed(t, &s, len, first_error));
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
        match std::fs::remove_file(&t.path) {
            Ok(()) => "the test file was removed".to_string(),
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
