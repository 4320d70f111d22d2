//! The run pipeline records a change of the drive's health as a session event of kind
//! `health`, with the new verdict as data; unchanged and unknown verdicts are no events.

use std::sync::mpsc;
use std::time::Duration;

use drivescope::plan::PlanOptions;
use drivescope::run::{
    self, RunControl, RunRequest, RunWhat, SessionPlan, SingleStep, TargetChoice, TelemetrySource,
};
use drivescope::session::EventKind;
use drivescope::telemetry::{Health, HealthReason, SmartReading, TelemetrySample};
use drivescope::workload::{BlockSizes, EngineKind, Region, RwMode, Workload};

fn sample(t_s: u64, health: Option<Health>) -> TelemetrySample {
    TelemetrySample {
        t_ns: t_s * 1_000_000_000,
        smart: health.map(|health| SmartReading {
            health,
            temperature_c: Some(40),
            ..SmartReading::default()
        }),
        smart_age_ms: None,
        block: None,
        host: None,
        notes: Vec::new(),
        zones: None,
    }
}

#[test]
fn a_health_change_is_a_session_event() {
    let dir = crate::common::disk_tempdir();
    let passed = Health::judge(Some(true), Vec::new());
    let failing = Health::judge(Some(true), HealthReason::of_critical_warning(0x01));
    let (tx, rx) = mpsc::channel();
    for s in [
        sample(0, Some(passed.clone())),
        sample(1, None),
        sample(2, Some(Health::default())),
        sample(3, Some(failing.clone())),
        sample(4, Some(failing.clone())),
    ] {
        tx.send(s).expect("queued");
    }
    let req = RunRequest {
        verify: None,
        target: TargetChoice {
            path: Some(dir.path().join("t.bin")),
            size: Some(1 << 20),
            destroy_data: None,
            create_missing: true,
            label: None,
            at: drivescope::run::Where::Here,
        },
        what: RunWhat::Single(SingleStep {
            workload: Workload {
                rate_iops: Some(200.0),
                arrivals: drivescope::workload::Arrivals::Uniform,
                direct: false,
                ..Workload::new(
                    RwMode::RandWrite,
                    BlockSizes::single(4096),
                    1,
                    Region { offset: 0, len: 0 },
                    1,
                )
            },
            ramp: Duration::ZERO,
            duration: Duration::from_millis(300),
            io_size: None,
        }),
        plan: PlanOptions {
            interval: Duration::from_millis(100),
            engine: EngineKind::Sync,
            ..PlanOptions::default()
        },
    };
    let prepared = run::prepare(&req).expect("prepared");
    let session = SessionPlan {
        path: Some(dir.path().join("s.yaml")),
        ..SessionPlan::default()
    };
    let (_handle, ctl) = RunControl::new();
    let finished =
        run::execute(&prepared, session, TelemetrySource::Tap(rx), &ctl, &mut []).expect("ran");
    finished.result.expect("completed");
    let saved = finished.saved.expect("saved");
    let loaded = drivescope::session::load(&saved).expect("loads");
    let health: Vec<_> = loaded
        .session
        .events
        .iter()
        .filter(|e| e.kind == EventKind::Health)
        .collect();
    assert_eq!(health.len(), 1, "{:?}", loaded.session.events);
    assert_eq!(
        health[0].message,
        "FAILED: available spare below threshold (was passed)"
    );
    let data: Health = health[0].data_as().expect("a verdict");
    assert_eq!(data, failing);
    assert_eq!(loaded.session.telemetry.len(), 5, "every sample kept");
}
