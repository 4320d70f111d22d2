//! A thermal soak on a simulated drive: a fake sysfs whose NVMe hwmon temperature a test
//! thread raises while the run's intervals show I/O and lets fall while they show none,
//! read by the real poller; past 74 °C the simulated drive throttles (its thermal
//! management counters grow, the part of the SMART log a sysfs tree cannot hold, added to
//! each sample on its way to the run). The real pipeline runs a short soak preset on a real
//! file: each event must come at the time the simulation made it happen, the soak must end
//! on its throttle rule and the cool-down on its temperature rule.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crate::fake_sysfs::Tree;
use drivescope::drive::SysRoot;
use drivescope::plan::PlanOptions;
use drivescope::run::{
    self, RunControl, RunEvent, RunRequest, RunView, RunWhat, SessionPlan, Sink, SinkFlow,
    TargetChoice, TelemetrySource,
};
use drivescope::session::EventKind;
use drivescope::telemetry::{Poller, ThermalThrottle};
use drivescope::thermal::{Load, SoakSummary, ThermalEvent};
use drivescope::workload::EngineKind;

const PCI: &str = "sys/devices/pci0000:00/0000:00:04.0";
const HW: &str = "sys/devices/pci0000:00/0000:00:04.0/nvme/nvme0/hwmon2";
const AMBIENT: f64 = 40.0;
const HEAT_C_PER_S: f64 = 4.0;
const COOL_RATE: f64 = 0.6;
const THROTTLE_AT: f64 = 74.0;
const CAP: f64 = 90.0;

const PRESET: &str = "\
id: soak-test
name: A short soak
description: a thermal soak of seconds on a simulated drive
phases:
  - name: soak
    workload: {rw: randwrite, bs: 4k, iodepth: 4, jobs: 1}
    end:
      duration: 40s
      throttled: 3s
      temperature: {slope: 0.5C, window: 10s}
  - name: cool-down
    workload: idle
    end: {duration: 40s, cooled: 1C}
";

/// The simulated drive: its temperature and throttle, and when things happened.
#[derive(Debug, Default)]
struct Sim {
    temp: f64,
    throttled_since: Option<f64>,
    throttle: ThermalThrottle,
    /// The counters over time (seconds since the origin), for readings taken earlier.
    history: Vec<(f64, ThermalThrottle)>,
    /// Times (seconds since the origin) the simulation crossed 70 °C, began to throttle,
    /// went idle, and came back within 1 °C of the ambient.
    warned_at: Option<f64>,
    throttled_at: Option<f64>,
    idle_at: Option<f64>,
    cooled_at: Option<f64>,
}

/// Writes the composite temperature as the nvme hwmon driver does (millidegrees from whole
/// Kelvin with the 273.15 offset), through a rename so the poller never reads half a file.
fn write_temp(root: &Path, c: f64) {
    let milli = (c.round() as i64 + 273) * 1000 - 273_150;
    let tmp = root.join(HW).join("temp1_input.new");
    std::fs::write(&tmp, format!("{milli}\n")).unwrap();
    std::fs::rename(&tmp, root.join(HW).join("temp1_input")).unwrap();
}

/// Tells the heater whether I/O runs (intervals with I/O heat, an idle step cools), and
/// notes when the session began on the simulation's clock.
struct LoadSink {
    loaded: Arc<AtomicBool>,
    origin: Instant,
    session_at: Option<f64>,
}

impl Sink for LoadSink {
    fn event(&mut self, _: &RunView, ev: &RunEvent) -> SinkFlow {
        match ev {
            RunEvent::Started { .. } => self.session_at = Some(self.origin.elapsed().as_secs_f64()),
            RunEvent::Interval { report, .. } if report.read.ios + report.write.ios > 0 => {
                self.loaded.store(true, Ordering::SeqCst);
            }
            RunEvent::StepStarted { step, .. } if step.engine == EngineKind::Idle => {
                self.loaded.store(false, Ordering::SeqCst)
            }
            _ => {}
        }
        SinkFlow::Continue
    }
}

#[test]
fn a_soak_sees_the_warning_the_throttle_and_the_cool_down_when_they_happen() {
    let _serial = crate::common::timing_lock();
    let t = Tree::new();
    t.mkdir(&format!("{PCI}/nvme/nvme0"));
    t.link("sys/class/nvme/nvme0", &format!("{PCI}/nvme/nvme0"));
    t.link(&format!("{PCI}/nvme/nvme0/device"), PCI);
    t.file(&format!("{HW}/name"), "nvme\n");
    t.file(&format!("{HW}/temp1_max"), "69850\n"); // 70 °C warning
    t.file(&format!("{HW}/temp1_crit"), "94850\n"); // 95 °C critical
    t.link(&format!("{HW}/device"), &format!("{PCI}/nvme/nvme0"));
    t.link("sys/class/hwmon/hwmon2", HW);
    t.file("sys/block/nvme0n1/stat", "0 0 0 0 0 0 0 0 0 0 0\n");
    write_temp(t.root(), AMBIENT);

    let origin = Instant::now();
    let sim = Arc::new(Mutex::new(Sim {
        temp: AMBIENT,
        ..Sim::default()
    }));
    let loaded = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicBool::new(false));
    let heater = {
        let (sim, loaded, done) = (sim.clone(), loaded.clone(), done.clone());
        let root = t.root().to_path_buf();
        thread::spawn(move || {
            let dt = 0.05;
            while !done.load(Ordering::SeqCst) {
                thread::sleep(Duration::from_secs_f64(dt));
                let now = origin.elapsed().as_secs_f64();
                let mut s = sim.lock().unwrap();
                if loaded.load(Ordering::SeqCst) {
                    s.temp = (s.temp + HEAT_C_PER_S * dt).min(CAP);
                } else {
                    if s.throttled_at.is_some() && s.idle_at.is_none() {
                        s.idle_at = Some(now);
                    }
                    s.temp -= COOL_RATE * (s.temp - AMBIENT) * dt;
                }
                if s.temp.round() >= 70.0 && s.warned_at.is_none() {
                    s.warned_at = Some(now);
                }
                let hot = loaded.load(Ordering::SeqCst) && s.temp >= THROTTLE_AT;
                match (hot, s.throttled_since) {
                    (true, None) => {
                        s.throttled_since = Some(now);
                        s.throttled_at.get_or_insert(now);
                        s.throttle.tmt1_transitions += 1;
                    }
                    (false, Some(_)) => s.throttled_since = None,
                    _ => {}
                }
                if let Some(since) = s.throttled_since {
                    // Whole seconds at TMT1, as the SMART log counts them (the first at once).
                    s.throttle.tmt1_seconds = (now - since) as u32 + 1;
                }
                if s.idle_at.is_some() && s.cooled_at.is_none() && s.temp.round() <= AMBIENT + 1.0 {
                    s.cooled_at = Some(now);
                }
                let counters = s.throttle;
                s.history.push((now, counters));
                write_temp(&root, s.temp);
            }
        })
    };

    // The real poller on the fake tree; each sample gets the simulated drive's throttle
    // counters as they were when its temperature was read (the poller may hand on a
    // reading up to a period old), as one SMART log read would carry both.
    let (poller, samples) = Poller::spawn_in(
        SysRoot::under(t.root()),
        &crate::fake_sysfs::nvme_drive(),
        Duration::from_secs(1),
        origin,
    );
    let (tx, tap) = mpsc::channel();
    let forward = {
        let sim = sim.clone();
        thread::spawn(move || {
            for mut s in samples {
                let read_at = s.t_ns as f64 / 1e9 - s.smart_age_ms.unwrap_or(0) as f64 / 1e3;
                if let Some(r) = s.smart.as_mut() {
                    let sim = sim.lock().unwrap();
                    let then = sim.history.iter().rev().find(|(t, _)| *t <= read_at);
                    r.thermal_throttle = Some(then.map_or(ThermalThrottle::default(), |h| h.1));
                }
                if tx.send(s).is_err() {
                    break;
                }
            }
        })
    };

    let dir = crate::common::disk_tempdir();
    let preset = drivescope::preset::parse_str(PRESET, "test").expect("the preset parses");
    let req = RunRequest {
        verify: None,
        target: TargetChoice {
            path: Some(dir.path().join("soak.bin")),
            size: Some(16 << 20),
            destroy_data: None,
            create_missing: true,
            label: None,
            at: drivescope::run::Where::Here,
        },
        what: RunWhat::Preset(Box::new(preset)),
        plan: PlanOptions {
            interval: Duration::from_millis(250),
            ..PlanOptions::default()
        },
    };
    let prepared = run::prepare(&req).expect("prepared");
    let session = SessionPlan {
        path: Some(dir.path().join("soak.yaml")),
        ..SessionPlan::default()
    };
    let (_handle, ctl) = RunControl::new();
    let mut sink = LoadSink {
        loaded: loaded.clone(),
        origin,
        session_at: None,
    };
    let finished = run::execute(
        &prepared,
        session,
        TelemetrySource::Tap(tap),
        &ctl,
        &mut [&mut sink],
    )
    .expect("ran");
    done.store(true, Ordering::SeqCst);
    poller.stop();
    heater.join().unwrap();
    forward.join().unwrap();
    let outcome = finished.result.expect("the soak completed");
    assert!(
        matches!(outcome, drivescope::outcome::RunOutcome::Completed { .. }),
        "{outcome:?}"
    );
    let sim = sim.lock().unwrap();
    let loaded = drivescope::session::load(&finished.saved.expect("saved")).expect("loads");
    let s = &loaded.session;

    let thermal: Vec<(f64, ThermalEvent)> = s
        .events
        .iter()
        .filter(|e| e.kind == EventKind::Thermal)
        .map(|e| {
            let ev: ThermalEvent = e.data_as().expect("typed data");
            (e.t, ev)
        })
        .collect();
    let find = |f: &dyn Fn(&ThermalEvent) -> bool| {
        thermal
            .iter()
            .find(|(_, e)| f(e))
            .unwrap_or_else(|| panic!("missing event in {thermal:#?}"))
            .clone()
    };
    // The session's clock starts when the run has its first reading; a reading lags its
    // cause by one poll (1 s), plus the heater's step and an interval (0.25 s), and on a
    // loaded two-core machine by up to a poll more: never by three.
    let session_at = sink.session_at.expect("the run started");
    let near = |what: &str, got: f64, want: f64| {
        let want = want - session_at;
        assert!(
            got >= want - 0.3 && got <= want + 2.5,
            "{what}: at {got:.2} s, the simulation at {want:.2} s"
        );
    };
    assert_eq!(
        find(&|e| matches!(e, ThermalEvent::Start { .. })).1,
        ThermalEvent::Start { temp_c: 40 }
    );
    let (t, w) = find(&|e| matches!(e, ThermalEvent::Warning { .. }));
    near("warning", t, sim.warned_at.unwrap());
    assert!(
        matches!(w, ThermalEvent::Warning { temp_c, threshold_c: 70 } if temp_c >= 70),
        "{w:?}"
    );
    let (onset, e) = find(&|e| matches!(e, ThermalEvent::ThrottleStarted { .. }));
    near("throttle onset", onset, sim.throttled_at.unwrap());
    let ThermalEvent::ThrottleStarted {
        temp_c: Some(c), ..
    } = e
    else {
        panic!("{e:?}")
    };
    assert!(c >= THROTTLE_AT as i32, "throttled at {c} °C");

    // The soak ended on its throttle rule, 3 s after the onset it saw; the cool-down on
    // its temperature rule, when the simulation came back to within 1 °C of the start.
    let [soak, cool] = &s.steps[..] else {
        panic!("two steps: {:?}", s.steps.len())
    };
    assert_eq!(soak.summary.ended_by.to_string(), "throttled");
    assert_eq!(cool.summary.ended_by.to_string(), "cooled");
    // Both on the session's clock: the rule's 3 s, judged at the next interval or reading.
    let held = soak.end_s - onset;
    assert!(
        (2.95..=4.5).contains(&held),
        "the soak ended {held:.2} s after the onset it saw, not 3 s"
    );
    assert_eq!(cool.summary.ios, 0, "an idle step does no I/O");
    let (t_cool, e) = find(&|e| matches!(e, ThermalEvent::Cooled { .. }));
    near("cooled", t_cool, sim.cooled_at.unwrap());
    let ThermalEvent::Cooled {
        temp_c, start_c, ..
    } = e
    else {
        panic!("{e:?}")
    };
    assert_eq!(start_c, 40);
    assert!(temp_c <= 41, "{temp_c}");
    assert!(
        !thermal.iter().any(|(_, e)| matches!(
            e,
            ThermalEvent::NotSteady { .. } | ThermalEvent::NotCooled { .. }
        )),
        "the soak's temperature was still rising when it throttled long enough, which is no \
         failure of a rule that did not end it: {thermal:#?}"
    );

    // The report's figures, against the session's own intervals averaged here.
    let loads: Vec<Load> = s
        .intervals
        .iter()
        .map(|i| Load {
            t: i.t,
            dt: i.dt,
            iops: i.read_iops + i.write_iops,
            mbps: i.read_mbps + i.write_mbps,
            loaded: !i.ramp && i.step == 0,
        })
        .collect();
    let temps: Vec<(f64, f64)> = s
        .telemetry
        .iter()
        .filter_map(|x| Some((x.t()?, x.temperature_c()?)))
        .collect();
    let events: Vec<(f64, &ThermalEvent)> = thermal.iter().map(|(t, e)| (*t, e)).collect();
    let sum = SoakSummary::build(&temps, &loads, &events);
    let mean = |keep: &dyn Fn(f64, f64) -> bool| {
        let v: Vec<_> = s
            .intervals
            .iter()
            .filter(|i| i.step == 0 && keep(i.t - i.dt, i.t))
            .collect();
        let secs: f64 = v.iter().map(|i| i.dt).sum();
        v.iter().map(|i| i.write_iops * i.dt).sum::<f64>() / secs
    };
    let before = mean(&|_, end| end <= onset);
    let during = mean(&|start, _| start >= onset);
    let b = sum.before.expect("throughput before the throttle");
    let d = sum.throttled.expect("throughput while throttled");
    assert!((b.iops - before).abs() < 1e-6 * before, "{b:?} vs {before}");
    assert!((d.iops - during).abs() < 1e-6 * during, "{d:?} vs {during}");
    let peak = sum.peak.expect("a peak").1;
    assert!(
        (THROTTLE_AT..=CAP).contains(&peak),
        "peak {peak} °C: the hottest reading"
    );
    assert_eq!(sum.start_c, Some(40));
    assert!(sum.cooled_s.is_some() && !sum.not_cooled, "{sum:?}");

    // The report: the soak's figures and its chart, with the warning and critical lines.
    let session_file = dir.path().join("soak.yaml");
    let report_dir = dir.path().join("report");
    let out = std::process::Command::new(crate::common::bin())
        .arg("report")
        .arg(&session_file)
        .arg("--out")
        .arg(&report_dir)
        .output()
        .expect("drivescope report");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = std::fs::read_to_string(report_dir.join(drivescope::report::HTML_FILE))
        .expect("an HTML page");
    assert!(page.contains("<h2>Thermal soak</h2>"), "a soak section");
    let cliff = d.iops / b.iops;
    assert!(
        page.contains(&format!("{cliff:.2}× IOPS")),
        "the cliff {cliff:.2} on the page"
    );
    for series in ["drive °C", "warning 70 °C", "critical 95 °C"] {
        assert!(
            page.contains(&format!("data-series=\"{series}\"")),
            "the soak chart draws {series}"
        );
    }
}
