//! What the dashboard shows that comes from the library's types: the preset and target
//! lists it offers, the drive identity in the header, telemetry samples for the panels.

use std::path::Path;

use crate::app::{
    DriveView, HostView, KernelView, PresetEntry, TargetEntry, TargetKind, TelemetryView,
};
use crate::drive::in_use::Scene;
use crate::drive::{self, SysRoot};
use crate::fio::file as fio_file;
use crate::plan::{self, PlanOptions, TargetFacts};
use crate::preset;
use crate::telemetry::TelemetrySample;
use crate::test_target::{self, guard};
use crate::units::count;

/// The preset library with each preset's phases and estimated time for the target.
pub fn preset_entries(capacity: u64, lbs: u32, time_scale: f64) -> Vec<PresetEntry> {
    let facts = TargetFacts {
        capacity_bytes: capacity.max(1),
        logical_block_size: lbs,
    };
    preset::builtins()
        .into_iter()
        .map(|p| {
            let opts = scaled(time_scale);
            let (phases, estimate, writes) = match plan::expand(&p, &facts, &opts) {
                Ok(plan) => (
                    plan.phases
                        .iter()
                        .map(|ph| format!("{} ({})", ph.name, count(ph.steps.len(), "step")))
                        .collect(),
                    plan::estimate_text(&plan, plan::ASSUMED_BYTES_PER_S as f64),
                    crate::run::plan_io(&plan).1,
                ),
                // Unknown: ask, as for a preset that writes.
                Err(e) => (Vec::new(), format!("cannot run here: {e}"), true),
            };
            PresetEntry {
                id: p.id,
                name: p.name,
                description: p.description.trim().to_string(),
                phases,
                estimate,
                writes,
                fio_job: None,
            }
        })
        .chain(fio_entries())
        .collect()
}

/// The plan options of a dashboard run: every duration multiplied by `time_scale`.
pub(super) fn scaled(time_scale: f64) -> PlanOptions {
    PlanOptions {
        time_scale,
        ..PlanOptions::default()
    }
}

/// The fio job files in the user's preset folder, each checked as a run would check it
/// (fio's parse, drivescope's steps and targets); one that cannot run says why.
fn fio_entries() -> Vec<PresetEntry> {
    let Some(dir) = preset::user_dir() else {
        return Vec::new();
    };
    preset::fio_job_files(&dir)
        .into_iter()
        .map(|path| {
            let file_name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let (description, phases, estimate, writes) = match fio_file::read(&path) {
                Ok(job) => {
                    let targets: Vec<String> = job
                        .targets
                        .iter()
                        .map(|t| {
                            let how = if t.writes { "writes" } else { "reads" };
                            format!("{how} {}", t.path.display())
                        })
                        .collect();
                    let secs: u64 = job
                        .steps
                        .iter()
                        .filter_map(|s| s.jobs.iter().filter_map(|j| j.runtime()).max())
                        .map(|d| d.as_secs())
                        .sum();
                    (
                        format!(
                            "fio job file {} ({}): {}",
                            path.display(),
                            job.version,
                            targets.join(", ")
                        ),
                        job.steps.iter().map(|s| s.workload_label()).collect(),
                        format!("at most about {secs} s of runtime"),
                        job.targets.iter().any(|t| t.writes),
                    )
                }
                // Unknown: ask, as for a preset that writes.
                Err(e) => (
                    format!("fio job file {}", path.display()),
                    Vec::new(),
                    format!("cannot run here: {e}"),
                    true,
                ),
            };
            PresetEntry {
                id: file_name.clone(),
                name: format!("fio: {file_name}"),
                description,
                phases,
                estimate,
                writes,
                fio_job: Some(path),
            }
        })
        .collect()
}

/// A test file in the target list: the built-in one (`default`), or one the user named,
/// with the size a missing one is created with (`--size`); a missing file is marked as
/// one that starting a run creates.
pub fn file_entry(path: &Path, default: bool, new_size: Option<u64>) -> TargetEntry {
    let size = std::fs::metadata(path).map(|m| m.len()).ok();
    let label = if default {
        "drivescope's test file"
    } else {
        "test file"
    };
    let new_size = new_size.or(default.then_some(test_target::DEFAULT_FILE_SIZE));
    TargetEntry {
        creates: size.is_none() && new_size.is_some(),
        size: size.or(new_size),
        // A file in use (an active swap file, a loop device's backing file) is never written.
        safety: guard::check_file_in_use(path)
            .err()
            .map(|e| e.reason().to_string()),
        ..entry(path, label.to_string(), TargetKind::File)
    }
}

/// A target in the list that nothing is known of but its path, its label and its kind.
pub(super) fn entry(path: &Path, label: String, kind: TargetKind) -> TargetEntry {
    TargetEntry {
        path: path.to_path_buf(),
        label,
        kind,
        size: None,
        safety: None,
        creates: false,
    }
}

/// Block devices with what the write guard finds on each (None: blank, writable once named):
/// the dashboard's target picker lists these.
pub fn device_entries() -> Vec<TargetEntry> {
    let root = SysRoot::real();
    let scene = Scene::read(&root);
    drive::list_disks(&root)
        .into_iter()
        .filter(|d| d.capacity_bytes > 0)
        .map(|d| {
            let path = d.dev_path();
            let rdev = std::fs::metadata(&path)
                .map(|m| std::os::unix::fs::MetadataExt::rdev(&m))
                .ok();
            let safety = match rdev {
                Some(r) => {
                    guard::check_block_device_in(&root, &scene, &path, r, false, Some(&path))
                        .err()
                        .map(|e| e.reason().to_string())
                }
                None => Some("cannot inspect the device (run as root)".into()),
            };
            let model = d.model.clone().unwrap_or_else(|| "(no model)".into());
            let label = format!("{model} {}", d.transport.as_str());
            TargetEntry {
                size: Some(d.capacity_bytes),
                safety,
                ..entry(&path, label, TargetKind::BlockDevice)
            }
        })
        .collect()
}

/// The header's drive identity from the drive under `path`.
pub fn drive_view(path: &Path) -> Option<DriveView> {
    let info = drive::resolve(path).ok()?;
    drive_view_of(&info)
}

/// The header's drive identity from a resolved drive, as its session records it.
pub fn drive_view_of(info: &drive::DriveInfo) -> Option<DriveView> {
    recorded_drive_view(&crate::run::identity(info))
}

/// The identity a session recorded, as the header shows it (its first disk's).
pub fn recorded_drive_view(info: &crate::session::DriveIdentity) -> Option<DriveView> {
    let d = info.primary()?;
    Some(DriveView {
        model: d.model.clone(),
        serial: d.serial.clone(),
        firmware: d.firmware.clone(),
        capacity_bytes: d.capacity_bytes,
        transport: d.transport.clone(),
        zones: d.zones.as_ref().and_then(|z| {
            Some(drive::Zones {
                model: drive::ZoneModel::parse(&z.model)?,
                zone_bytes: z.zone_bytes,
                count: z.count,
                max_open: z.max_open,
                max_active: z.max_active,
            })
        }),
    })
}

/// Converts a poller sample for the panels; `t_s` on the run's time axis.
pub fn telemetry_view(s: &TelemetrySample, t_s: f64) -> TelemetryView {
    let mut v = TelemetryView {
        t_s,
        unavailable: s.notes.clone(),
        zones: s.zones,
        ..TelemetryView::default()
    };
    if let Some(r) = &s.smart {
        v.health = r.health.clone();
        v.temperature_c = r.temperature_c.map(f64::from);
        v.sensors_c = r.sensors_c.iter().map(|x| f64::from(x.c)).collect();
        v.warning_c = r.warning_temp_c.map(f64::from);
        v.critical_c = r.critical_temp_c.map(f64::from);
        if let Some(tm) = &r.thermal_management {
            v.tmt1_c = tm.tmt1_c.map(f64::from);
            v.tmt2_c = tm.tmt2_c.map(f64::from);
        }
        v.power_state = r.power_state.map(u32::from);
        v.power_state_max_w = r.power_state_max_w;
        v.power_w = r.power_w;
        if let Some(t) = &r.thermal_throttle {
            v.throttle_transitions =
                Some(u64::from(t.tmt1_transitions) + u64::from(t.tmt2_transitions));
            v.throttle_seconds = Some(u64::from(t.tmt1_seconds) + u64::from(t.tmt2_seconds));
        }
        v.unavailable.extend(r.notes.iter().cloned());
        v.unavailable
            .extend(r.temperature_unknown.map(|why| why.to_string()));
    }
    if let Some(b) = &s.block {
        v.kernel = Some(KernelView {
            read_iops: b.read_iops,
            write_iops: b.write_iops,
            read_bw: b.read_bytes_per_s,
            write_bw: b.write_bytes_per_s,
            util_pct: b.util_percent,
            in_flight: b.in_flight,
        });
    }
    if let Some(h) = &s.host {
        if let (Some(own), Some(rss)) = (h.self_cpu_percent, h.self_rss_bytes) {
            v.host = Some(HostView {
                cpu_pct: f64::from(h.cpu_percent),
                own_cpu_pct: f64::from(own),
                mem_used_bytes: h.mem_used_bytes,
                own_rss_bytes: rss,
            });
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::telemetry::{Health, HealthReason, NoTemperature};

    #[test]
    fn health_and_why_no_temperature_reach_the_panels() {
        let line = r#"{"t_ns": 2000000000, "smart": {"health": {"passed": false,
            "reasons": [{"reason": "media_read_only"}]}, "temperature_c": null,
            "temperature_unknown": "reports_zero", "sensors_c": [], "notes": []},
            "notes": []}"#;
        let s: TelemetrySample = serde_json::from_str(line).unwrap();
        let v = telemetry_view(&s, 2.0);
        assert_eq!(
            v.health,
            Health::judge(None, vec![HealthReason::MediaReadOnly])
        );
        assert_eq!(v.unavailable, vec![NoTemperature::ReportsZero.to_string()]);
    }

    #[test]
    fn tmt1_and_tmt2_reach_the_thermal_chart() {
        let line = r#"{"t_ns": 1, "smart": {"temperature_c": 60, "sensors_c": [], "notes": [],
            "thermal_management": {"supported": true, "tmt1_c": 80, "tmt2_c": null,
            "mntmt_c": 50, "mxtmt_c": 95}}, "notes": []}"#;
        let s: TelemetrySample = serde_json::from_str(line).unwrap();
        let v = telemetry_view(&s, 0.0);
        assert_eq!((v.tmt1_c, v.tmt2_c), (Some(80.0), None));
    }

    #[test]
    fn a_session_from_before_health_replays() {
        let old = r#"{"t_ns": 1, "smart": {"temperature_c": 40, "sensors_c": [], "notes": []},
            "notes": []}"#;
        let s: TelemetrySample = serde_json::from_str(old).unwrap();
        let v = telemetry_view(&s, 0.0);
        assert!(v.health.is_unknown());
        assert_eq!(v.temperature_c, Some(40.0));
        assert_eq!(
            (v.tmt1_c, v.tmt2_c),
            (None, None),
            "no thermal management then"
        );
    }
}
