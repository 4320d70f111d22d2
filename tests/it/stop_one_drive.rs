//! One drive of several stopped on its own (`RunCmd::StopDrive`, the dashboard's stop-one
//! key): it ends as stopped by the user while the others run to their end; the run's own
//! stop still ends every drive, and a stop through the run's flag (a signal) reaches every
//! drive as a signal's.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use drivescope::outcome::{RunOutcome, StopBy};
use drivescope::plan::PlanOptions;
use drivescope::preset;
use drivescope::run::{
    self, RunCmd, RunControl, RunEvent, RunHandle, RunRequest, RunView, RunWhat, SessionPlan, Sink,
    SinkFlow, TargetChoice, TelemetrySource,
};

/// Each drive's end as the sink saw it, and how many intervals each reported.
#[derive(Default)]
struct Seen {
    ends: Vec<Option<RunOutcome>>,
    intervals: Vec<usize>,
}

struct Recorder(Arc<Mutex<Seen>>);

impl Sink for Recorder {
    fn event(&mut self, view: &RunView, ev: &RunEvent) -> SinkFlow {
        let Some(d) = view.drive else {
            return SinkFlow::Continue;
        };
        let mut s = self.0.lock().unwrap();
        if s.ends.len() <= d {
            s.ends.resize(d + 1, None);
            s.intervals.resize(d + 1, 0);
        }
        match ev {
            RunEvent::Ended { outcome, .. } => s.ends[d] = Some((*outcome).clone()),
            RunEvent::Interval { .. } => s.intervals[d] += 1,
            _ => {}
        }
        SinkFlow::Continue
    }
}

/// Quick-look (a tenth of its time: 4 steps of about 1 s) on `n` 64 MiB loop devices (one
/// drive each: several targets on one drive are never written together); `act` is called
/// with the handle once every drive reported an interval. `None` where no loop device can
/// be made (the skip is reported).
fn run_drives(
    dir: &Path,
    n: usize,
    stop: Arc<AtomicBool>,
    act: impl FnOnce(&RunHandle) + Send + 'static,
) -> Option<(Seen, drivescope::session::Session)> {
    let p = preset::find("quick-look").unwrap();
    let devs: Vec<crate::common::LoopDev> = (0..n)
        .filter_map(|_| crate::common::LoopDev::new(64 << 20))
        .collect();
    if devs.len() < n {
        return None;
    }
    let reqs: Vec<RunRequest> = devs
        .iter()
        .enumerate()
        .map(|(i, dev)| RunRequest {
            verify: None,
            target: TargetChoice {
                path: Some(dev.dev.clone()),
                destroy_data: Some(dev.dev.clone()),
                label: Some(format!("d{i}")),
                ..TargetChoice::default()
            },
            what: RunWhat::Preset(Box::new(p.clone())),
            plan: PlanOptions {
                time_scale: 0.1,
                interval: Duration::from_millis(200),
                ..PlanOptions::default()
            },
        })
        .collect();
    let prepared = run::prepare_many(&reqs).unwrap();
    let (handle, ctl) = RunControl::with_stop_flag(stop);
    let seen = Arc::new(Mutex::new(Seen::default()));
    let watch = seen.clone();
    let actor = std::thread::spawn(move || {
        for _ in 0..300 {
            let ready = {
                let s = watch.lock().unwrap();
                s.intervals.len() == n && s.intervals.iter().all(|c| *c > 0)
            };
            if ready {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        act(&handle);
    });
    let session = SessionPlan {
        path: Some(dir.join("session.yaml")),
        ..SessionPlan::default()
    };
    let mut sink = Recorder(seen.clone());
    let finished = run::execute_many(
        &prepared,
        session,
        TelemetrySource::Poll,
        &ctl,
        &mut [&mut sink],
    )
    .unwrap();
    actor.join().unwrap();
    let saved = finished.saved.expect("saved");
    let loaded = drivescope::session::load(&saved).unwrap();
    let seen = std::mem::take(&mut *seen.lock().unwrap());
    drop(devs);
    Some((seen, loaded.session))
}

fn ended_by(s: &drivescope::session::Session) -> Vec<String> {
    s.summary
        .as_ref()
        .map(|x| x.drives.iter().map(|d| d.ended_by.to_string()).collect())
        .unwrap_or_default()
}

#[test]
fn one_drive_stopped_alone_while_the_others_run_to_their_end() {
    let _timing = crate::common::timing_lock();
    let dir = tempfile::tempdir().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let Some((seen, session)) = run_drives(dir.path(), 3, stop.clone(), |h| {
        h.send(RunCmd::StopDrive(1))
    }) else {
        return;
    };
    assert!(
        !stop.load(Ordering::Relaxed),
        "the run's own flag untouched"
    );
    assert_eq!(seen.ends[1], Some(RunOutcome::Stopped(StopBy::User)));
    for d in [0, 2] {
        assert!(
            matches!(seen.ends[d], Some(RunOutcome::Completed { .. })),
            "drive {d}: {:?}",
            seen.ends[d]
        );
        assert!(
            seen.intervals[d] > seen.intervals[1],
            "drive {d} ran on: {:?}",
            seen.intervals
        );
    }
    assert_eq!(
        ended_by(&session),
        vec!["completed", "stopped", "completed"]
    );
}

#[test]
fn the_runs_stop_and_a_signals_stop_reach_every_drive() {
    let _timing = crate::common::timing_lock();
    let dir = tempfile::tempdir().unwrap();
    let Some((seen, _)) = run_drives(dir.path(), 2, Arc::new(AtomicBool::new(false)), |h| {
        h.send(RunCmd::Stop)
    }) else {
        return;
    };
    assert_eq!(seen.ends, vec![Some(RunOutcome::Stopped(StopBy::User)); 2]);
    let dir = tempfile::tempdir().unwrap();
    let flag = Arc::new(AtomicBool::new(false));
    let signal = flag.clone();
    let Some((seen, session)) = run_drives(dir.path(), 2, flag, move |_| {
        signal.store(true, Ordering::Relaxed)
    }) else {
        return;
    };
    assert_eq!(
        seen.ends,
        vec![Some(RunOutcome::Stopped(StopBy::Signal)); 2]
    );
    assert_eq!(
        ended_by(&session),
        vec!["stopped by a signal", "stopped by a signal"]
    );
}
