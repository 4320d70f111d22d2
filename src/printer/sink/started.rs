//! The run's first line: what runs, on which target, for how long (text), or the `start`
//! object (JSON).

use serde_json::json;

use super::{FormatPrinter, PAGE_CACHE_NOTE};
use crate::printer::text::{engine_text, host_prefix, with_host};
use crate::run::{single_workload, Prepared, RunWhat, SingleStep};
use crate::session::OffMethod;
use crate::test_target::TargetKind;
use crate::ui::format;
use crate::units::{count, format_duration};

/// The run's start, as either sink shows it.
pub(in crate::printer) trait Started: FormatPrinter {
    /// The run's first line.
    fn started(&mut self, run: &Prepared, session: &std::path::Path) {
        let t = &run.target;
        let core = self.core();
        core.target = t.path.display().to_string();
        core.plan_name = run.name().to_string();
        core.plan_title = match &run.kind {
            RunWhat::FioJob(f) => format!("fio job file {}", f.file.display()),
            RunWhat::Preset(_) | RunWhat::Single(_) => format!("preset {}", run.name()),
        };
        let (description, mut extra) = match &run.kind {
            RunWhat::Single(SingleStep { ramp, duration, .. }) => {
                let Some(step) = run.plan.steps.first() else {
                    return;
                };
                let w = single_workload(step);
                let kind = match t.kind {
                    TargetKind::File => "file",
                    TargetKind::BlockDevice => "block device",
                    TargetKind::NvmeGeneric => "NVMe generic device",
                    TargetKind::None => "no target",
                };
                let mix = if w.rw.is_mixed() {
                    format!(" {}% read", w.rwmixread)
                } else {
                    String::new()
                };
                let rate = w
                    .rate_iops
                    .map(|r| format!(" at {r:.0} IOPS"))
                    .unwrap_or_default();
                let ramp_text = if ramp.is_zero() {
                    String::new()
                } else {
                    format!(" after a {} ramp", format_duration(*ramp))
                };
                let on = match t.kind {
                    TargetKind::None => kind.to_string(),
                    _ => format!(
                        "{}{} ({kind}, {}, region {}+{})",
                        host_prefix(run),
                        t.path.display(),
                        target_size(t),
                        format::size(w.region.offset),
                        format::size(w.region.len),
                    ),
                };
                // A verify pass ends by its bytes: the region read once.
                let length = match (step.end.duration, step.end.bytes) {
                    (None, Some(b)) => format!("{} once", format::size(b)),
                    (Some(_), Some(b)) => {
                        format!(
                            "{} or {} moved",
                            format_duration(*duration),
                            format::size(b)
                        )
                    }
                    _ => format_duration(*duration),
                };
                let description = format!(
                    "{}{mix} {} QD{} × {} on {on}{}{rate}, {}{ramp_text}",
                    w.rw,
                    w.bs,
                    w.iodepth,
                    count(w.jobs, "job"),
                    engine_text(step.engine, &step.engine_options),
                    length,
                );
                let extra = json!({
                    "target_kind": t.kind,
                    "workload": w,
                    "engine": step.engine,
                    "engine_options": step.engine_options,
                    "duration_s": duration.as_secs_f64(),
                    "io_size": step.end.bytes,
                    "ramp_s": ramp.as_secs_f64(),
                    "interval_s": step.interval.as_secs_f64(),
                });
                (description, with_host(run, extra))
            }
            RunWhat::FioJob(f) => (
                format!(
                    "fio job file {} ({}) on {} ({}): {}",
                    f.file.display(),
                    f.version,
                    t.path.display(),
                    target_size(t),
                    count(run.plan.steps.len(), "step"),
                ),
                json!({
                    "fio_job": f.file.display().to_string(),
                    "fio": f.version,
                    "steps": run.plan.steps.len(),
                }),
            ),
            RunWhat::Preset(preset) => (
                format!(
                    "preset {} ({}) on {}{} ({}): {} in {}{}",
                    preset.id,
                    preset.name,
                    host_prefix(run),
                    t.path.display(),
                    target_size(t),
                    count(run.plan.steps.len(), "step"),
                    count(run.plan.phases.len(), "phase"),
                    OffMethod::of_scale(run.options.time_scale)
                        .map(|m| format!(", {m}"))
                        .unwrap_or_default()
                ),
                with_host(
                    run,
                    json!({
                        "preset": preset.id,
                        "steps": run.plan.steps.len(),
                        "time_scale": run.options.time_scale,
                    }),
                ),
            ),
        };
        // What every start says: the target, the session, whether through the page cache.
        if let Some(o) = extra.as_object_mut() {
            o.insert("target".into(), json!(t.path.display().to_string()));
            o.insert("target_size".into(), json!(t.size));
            o.insert("session".into(), json!(session.display().to_string()));
            o.insert("page_cache".into(), json!(run.page_cache()));
        }
        self.start(&description, extra);
        if run.page_cache() {
            self.note(PAGE_CACHE_NOTE);
        }
    }
}

impl<S: FormatPrinter> Started for S {}

/// The target's size: a file's in the binary units it was given (`1 GiB`), a device's
/// capacity as vendors print it (`500.1 GB (465.8 GiB)`).
fn target_size(t: &crate::test_target::PreparedTarget) -> String {
    match t.kind {
        TargetKind::File => format::size(t.size),
        _ => format::capacity(t.size),
    }
}
