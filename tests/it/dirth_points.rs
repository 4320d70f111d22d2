//! SNIA DIRTH's max, mid and min points, time-scaled: after the demand-intensity rounds,
//! each point's pre-write and histogram run at the threads x queue depth picked from the
//! last round's results (docs/PTS.md), checked here against the recorded session's own
//! steps with the rule worked out independently.

use crate::common::of_type;
use serde_json::Value;

/// (jobs, iodepth, IOPS, mean service latency µs) of the last demand-intensity round.
fn last_round(steps: &[drivescope::session::StepRecord]) -> Vec<(u32, u32, f64, f64)> {
    let di: Vec<_> = steps
        .iter()
        .filter(|s| {
            s.label.starts_with("demand-intensity ") && !s.point.is_some_and(|p| p.prewrite)
        })
        .collect();
    let last = di.iter().filter_map(|s| s.point?.round).max();
    di.iter()
        .filter(|s| s.point.and_then(|p| p.round) == last)
        .map(|s| {
            let w = s.workload.as_ref().expect("workload recorded");
            let mean = s.summary.service_lat().mean;
            (w.jobs, w.iodepth, s.summary.iops, mean)
        })
        .collect()
}

#[test]
fn dirth_runs_its_max_mid_and_min_points_at_the_shapes_the_rounds_give() {
    let (home, lines) =
        crate::run_preset::run_shortened("snia-dirth", crate::run_preset::DIRTH_SHORT, 0.002);
    let skipped: Vec<&Value> = of_type(&lines, "event")
        .into_iter()
        .filter(|e| e["kind"] == "skip")
        .collect();
    assert!(skipped.is_empty(), "{skipped:?}");
    let (_, loaded) = crate::dashboard_tmux::the_saved_session(home.path());
    let steps = &loaded.session.steps;
    let round = last_round(steps);
    assert_eq!(round.len(), 49);
    // The rule, independently: under 5 ms mean; max the most IOPS; mid the IOPS nearest
    // the mean of the most and least (the least's on a tie, else the first); min 1 x 1.
    let ok: Vec<_> = round.iter().filter(|c| c.3 < 5000.0).collect();
    assert!(!ok.is_empty(), "{round:?}");
    let most = ok.iter().fold(ok[0], |a, b| if b.2 > a.2 { b } else { a });
    let least = ok.iter().fold(ok[0], |a, b| if b.2 < a.2 { b } else { a });
    let mean = (most.2 + least.2) / 2.0;
    let mut mid = least;
    for c in &ok {
        if (mean - c.2).abs() < (mean - mid.2).abs() {
            mid = c;
        }
    }
    for (name, want) in [
        ("max", (most.0, most.1)),
        ("mid", (mid.0, mid.1)),
        ("min", (1, 1)),
    ] {
        for part in ["prewrite", "histogram"] {
            let label = format!("{name}-point-{part}");
            let s = steps
                .iter()
                .find(|s| s.label == label)
                .unwrap_or_else(|| panic!("no {label} step"));
            let w = s.workload.as_ref().expect("workload");
            assert_eq!((w.jobs, w.iodepth), want, "{label}");
            assert!(s.summary.ios > 0, "{label} ran I/O");
        }
    }
    let hist = steps
        .iter()
        .find(|s| s.label == "max-point-histogram")
        .expect("max histogram");
    assert!(hist.summary.lat_us.p99_999.is_some_and(|v| v > 0.0));

    // A replay (drivescope open) gives the demand-intensity figure's points too: one per
    // step, the operating points at the shapes they ran at.
    use drivescope::app::method::{MethodKind, StepRole};
    use drivescope::app::Msg;
    let tl = drivescope::dashboard::replay::timeline(&loaded.session);
    let points: Vec<_> = tl
        .iter()
        .filter_map(|(_, m)| match m {
            Msg::Method(p) => Some(p),
            _ => None,
        })
        .collect();
    // A round's pre-write is no point of the figure; every other step is one.
    let prewrites = steps
        .iter()
        .filter(|s| s.point.is_some_and(|p| p.prewrite))
        .count();
    assert_eq!(prewrites, 2, "a pre-write in each of the two rounds");
    assert_eq!(points.len(), steps.len() - prewrites);
    assert!(points.iter().all(|p| p.kind == MethodKind::DemandIntensity));
    let max = points
        .iter()
        .find(|p| p.phase == "max-point-histogram")
        .expect("the max point replayed");
    assert_eq!(
        (max.jobs, max.iodepth, max.role),
        (most.0, most.1, StepRole::Other)
    );
}
