//! The session side of a run: what the session starts with, and each [`RunEvent`] recorded
//! into the [`SessionRecorder`].

use serde_json::json;

use super::event::{RunEvent, SessionEvent};
use super::request::{Prepared, RunWhat, SingleStep};
use super::view::DriveView;
use crate::drive::DriveInfo;
use crate::plan::StepRate;
use crate::preset;
use crate::session::{
    DiskIdentity, DiskZones, Document, DriveIdentity, EventKind, SessionRecorder, SessionStart,
    StepPoint, TargetInfo, Word,
};
use crate::test_target::PreparedTarget;
use crate::thermal::{Load, SoakLog, ThermalEvent};

/// The session's record of a prepared target (on `host`, when it is another one).
pub fn target_info(t: &PreparedTarget, host: Option<String>) -> TargetInfo {
    TargetInfo {
        path: crate::ostext::escaped(t.path.as_os_str()),
        kind: Word::Known(t.kind),
        size_bytes: t.size,
        align_bytes: t.align,
        host,
        page_cache: false,
    }
}

/// The session's record of a run's target.
pub fn run_target_info(run: &Prepared) -> TargetInfo {
    let host = run.host.name();
    TargetInfo {
        page_cache: run.page_cache(),
        ..target_info(&run.target, host)
    }
}

/// The session's record of a drive: the drive layer's identity of it, key for key.
pub fn identity(d: &DriveInfo) -> DriveIdentity {
    // As serde wrote the paths (UTF-8 as it is; other bytes, which made serde fail and
    // the identity null, now stand as U+FFFD).
    let path = |p: &std::path::Path| p.to_string_lossy().into_owned();
    DriveIdentity {
        target: path(&d.target),
        block_device: d.block_device.clone(),
        stat_name: d.stat_name.clone(),
        disks: d
            .disks
            .iter()
            .map(|k| DiskIdentity {
                name: k.name.clone(),
                model: k.model.clone(),
                serial: k.serial.clone(),
                firmware: k.firmware.clone(),
                capacity_bytes: Some(k.capacity_bytes),
                logical_block_size: Some(k.logical_block_size.into()),
                physical_block_size: Some(k.physical_block_size.into()),
                rotational: Some(k.rotational),
                transport: Some(k.transport.as_str().into()),
                nvme_controller: k.nvme_controller.clone(),
                backing_file: k.backing_file.as_deref().map(path),
                zones: k.zones.map(|z| DiskZones {
                    model: z.model.as_str().into(),
                    zone_bytes: z.zone_bytes,
                    count: z.count,
                    max_open: z.max_open,
                    max_active: z.max_active,
                }),
            })
            .collect(),
    }
}

/// What the session holds before the first record.
pub fn session_start(
    run: &Prepared,
    drive: Option<&DriveInfo>,
    command: Option<String>,
) -> SessionStart {
    let to_value = |v: serde_json::Value| Document::of(v);
    let preset = run
        .preset()
        .and_then(|p| preset::to_yaml(p).ok())
        .and_then(|y| Document::from_yaml(&y));
    let plan = match &run.kind {
        RunWhat::Preset(_) => Document::of(&run.plan),
        // A plain run records its one step as the plan, as it always has.
        RunWhat::Single(SingleStep { ramp, duration, .. }) => to_value(json!({
            "steps": run.plan.steps.iter().map(|s| {
                let mut step = json!({
                    "label": s.name,
                    "workload": single_workload(s),
                    "ramp_s": ramp.as_secs_f64(),
                    "duration_s": duration.as_secs_f64(),
                    "interval_s": s.interval.as_secs_f64(),
                });
                // `--io-size`: only where given, so a plain run's plan reads as it did.
                if let (Some(b), Some(o)) = (s.end.bytes, step.as_object_mut()) {
                    o.insert("io_size".into(), b.into());
                }
                step
            }).collect::<Vec<_>>(),
        })),
        // A job file's run records fio's version, the file and the very text fio ran.
        RunWhat::FioJob(f) => to_value(json!({
            "fio_job": {
                "file": crate::ostext::escaped(f.file.as_os_str()),
                "fio": f.version,
                "text": f.text,
                "targets": f.targets.iter().map(|(p, w)| json!({
                    "path": crate::ostext::escaped(p.as_os_str()),
                    "writes": w,
                })).collect::<Vec<_>>(),
            },
            "steps": run.plan.steps.iter().map(|s| json!({
                "label": s.name,
                "jobs": s.fio_file.as_ref().map(|f| f.sections.clone()).unwrap_or_default(),
                "interval_s": s.interval.as_secs_f64(),
            })).collect::<Vec<_>>(),
        })),
    };
    SessionStart {
        target: run_target_info(run),
        command,
        drive: drive.map(identity),
        preset,
        plan,
        ..SessionStart::default()
    }
}

/// A single step's workload with its fixed rate, as the user asked for it.
pub fn single_workload(s: &crate::plan::PlanStep) -> crate::workload::Workload {
    let mut w = s.workload.clone();
    w.rate_iops = match s.rate {
        StepRate::Iops(r) => Some(r),
        StepRate::Max | StepRate::PercentOfPhase { .. } => None,
    };
    w
}

/// A happening as the session keeps it: its kind, its text and its data (the figures a
/// reader takes back: a health change's new verdict, a thermal event, a finding, a steady
/// state verdict…; none for the others). The dashboard shows a run's happenings from this
/// record too, so that a replay of the session shows what the live run showed.
pub fn happening_record(what: &SessionEvent) -> (EventKind, String, Option<Document>) {
    let data = match what {
        // A health change keeps the new verdict as data, its reasons as values.
        SessionEvent::Health(c) => Document::of(&c.to),
        // A thermal event keeps its figures, for the report's soak section.
        SessionEvent::Thermal(t) => Document::of(t),
        SessionEvent::VerifyFinding(x) => Document::of(x.as_ref()),
        SessionEvent::Verified(t) => Document::of(t),
        SessionEvent::DriveErrors(n) => Document::of(n),
        SessionEvent::VerifyUnsaved { unsaved, .. } => Document::of(unsaved),
        SessionEvent::Steady { verdict, .. } => Document::of(verdict),
        SessionEvent::Note(_)
        | SessionEvent::Phase { .. }
        | SessionEvent::Skipped { .. }
        | SessionEvent::Errors { .. } => None,
    };
    (what.kind(), what.to_string(), data)
}

/// What the session made of an event that a drive's soak takes ([`SoakLog`]): on the
/// session's clock, with its figures as saved.
pub(super) enum SoakInput {
    /// An interval: its time, rates and whether the drive was under load.
    Load(Load),
    /// A thermal event, at the time the session gave it.
    Thermal(f64, ThermalEvent),
    /// A temperature reading, at the time the session gave it.
    Temperature(f64, f64),
}

impl SoakInput {
    /// Hands itself to `log`.
    pub(super) fn into_log(self, log: &mut SoakLog) {
        match self {
            SoakInput::Load(l) => log.load(l),
            SoakInput::Thermal(t, e) => log.event(t, e),
            SoakInput::Temperature(t, c) => log.temperature(t, c),
        }
    }
}

/// Records one run event of `run` (`now` after it) into the session; what a soak takes of
/// it, as recorded.
pub(super) fn record(
    rec: &mut SessionRecorder,
    run: &Prepared,
    now: &DriveView,
    ev: &RunEvent,
) -> Option<SoakInput> {
    match ev {
        RunEvent::StepStarted {
            step, target_iops, ..
        } => {
            // A preset's step has its place in the plan; a plain run's or a job file's none.
            let point = match run.kind {
                RunWhat::Preset(_) => Some(StepPoint {
                    phase: Some(step.phase as u64),
                    round: step.round,
                    sweep_point: step.sweep_point,
                    target_iops: *target_iops,
                    closed_loop: step.closed_loop,
                    run: step.run,
                    // Only a round's pre-write says so.
                    prewrite: step.prewrite,
                    // Likewise a step of a phase that prepares the drive (SNIA's WIPC).
                    preparation: now.phase().is_some_and(|p| p.preparation),
                }),
                RunWhat::Single(_) | RunWhat::FioJob(_) => None,
            };
            // What the engine ran: a closed-loop point had a target but no pacing.
            let w = step.to_step_spec(*target_iops).workload;
            rec.begin_step(step.name.clone(), point, Some(w));
        }
        // An idle step's time is no time of I/O: kept out of the session's rates.
        RunEvent::Interval { report, .. } => {
            let idle =
                now.step.as_ref().map(|s| s.step.engine) == Some(crate::workload::EngineKind::Idle);
            let i = rec.push_interval_counted(report, !idle);
            return Some(SoakInput::Load(Load {
                t: i.t,
                dt: i.dt,
                iops: i.iops(),
                mbps: i.mbps(),
                loaded: !i.ramp && i.suspended_s == 0.0 && !idle,
            }));
        }
        RunEvent::StepFinished(r) => {
            rec.end_step(r.summary.clone());
        }
        // A plain run's one phase is not news: its session has no phase event, as always.
        RunEvent::Happened(e)
            if matches!(run.kind, RunWhat::Single(_))
                && matches!(e.what, SessionEvent::Phase { .. }) => {}
        RunEvent::Happened(e) => {
            let (kind, text, data) = happening_record(&e.what);
            let t = rec.push_event_data(kind, text, data);
            // A thermal event's figures are the report's soak section's too.
            if let SessionEvent::Thermal(th) = &e.what {
                return Some(SoakInput::Thermal(t, th.clone()));
            }
        }
        RunEvent::Note(n) => rec.push_event(EventKind::Note, n.to_string()),
        RunEvent::Telemetry(s) => {
            let mut s = crate::telemetry::TelemetrySample::clone(s);
            if let Some(smart) = s.smart.as_mut().filter(|m| !m.ata_attributes.is_empty()) {
                if !rec.keep_ata_table(&smart.ata_attributes) {
                    smart.ata_attributes.clear();
                }
            }
            let s = rec.push_telemetry(&s);
            let (t, c) = s.t().zip(s.temperature_c())?;
            return Some(SoakInput::Temperature(t, c));
        }
        RunEvent::Wear(w) => {
            let what = match w.step {
                Some(i) => format!("what step {} did to the drive", i + 1),
                None => "what the run did to the drive".to_string(),
            };
            rec.push_event_data(EventKind::DriveWear, what, w);
        }
        RunEvent::Started { .. }
        | RunEvent::SessionNotice(_)
        | RunEvent::Snapshot(_)
        | RunEvent::Soak(_)
        | RunEvent::Ended { .. }
        | RunEvent::Saved { .. }
        | RunEvent::Verify(_) => {}
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::drive::{Disk, Transport, ZoneModel, Zones};

    fn disk(name: &str, zones: Option<Zones>) -> Disk {
        Disk {
            name: name.into(),
            model: Some("Fast SSD".into()),
            serial: Some("19666372154600481".into()),
            firmware: None,
            capacity_bytes: 274877906944,
            logical_block_size: 512,
            physical_block_size: 4096,
            rotational: false,
            transport: Transport::Nvme,
            nvme_controller: Some("nvme0".into()),
            backing_file: Some("/var/img/a.img".into()),
            zones,
        }
    }

    #[test]
    fn the_sessions_identity_is_written_as_the_drive_layers_own_was() {
        let zones = Zones {
            model: ZoneModel::HostManaged,
            zone_bytes: 1 << 28,
            count: 100,
            max_open: Some(14),
            max_active: None,
        };
        let info = DriveInfo {
            target: "/mnt/x/file".into(),
            block_device: "nvme0n1p1".into(),
            stat_name: "nvme0n1/nvme0n1p1".into(),
            disks: vec![disk("nvme0n1", None), disk("nvme1n1", Some(zones))],
        };
        let typed = serde_yaml::to_string(&identity(&info)).unwrap();
        assert_eq!(typed, serde_yaml::to_string(&info).unwrap());
        assert!(
            typed.contains("zones:\n    model: host-managed\n"),
            "{typed}"
        );
    }
}
