//! The PTS methods' live figures in place of the curve: HIR's recovery over time (each
//! burst's IOPS per wait state, the steady-state baseline as a line) and DIRTH's
//! demand-intensity curve (mean and p99 latency against IOPS per threads×QD, labelled),
//! at 80×24 and 120×40, from messages as the dashboard's sink sends them.

use drivescope::app::method::{MethodKind, MethodPoint, StepRole};
use drivescope::app::{App, Msg, Panel};

use super::fixtures::*;

const BIG: (u16, u16) = (120, 40);
const SMALL: (u16, u16) = (80, 24);

fn point(kind: MethodKind, phase: &str, role: StepRole, t_s: f64, iops: f64) -> MethodPoint {
    MethodPoint {
        kind,
        window: 5,
        phase: phase.into(),
        role,
        jobs: 4,
        iodepth: 32,
        t_s,
        iops,
        bw_bytes: iops * 4096.0,
        mean_us: 1e6 * 128.0 / iops,
        p99_us: 3e6 * 128.0 / iops,
        p99_999_us: None,
    }
}

fn shown(size: (u16, u16), points: Vec<MethodPoint>) -> App {
    let mut app = idle(size);
    app.overlay = None;
    send(
        &mut app,
        points.into_iter().map(|p| Msg::Method(Box::new(p))),
    );
    app.tab = Panel::Curve;
    app
}

/// HIR: 6 precondition rounds settling at 100k, then bursts after 5 s waits (recovering
/// to 160k), a return to baseline, then bursts after 10 s waits (to 190k).
fn hir(size: (u16, u16)) -> App {
    let k = MethodKind::Recovery { by_bytes: false };
    let mut pts = Vec::new();
    let mut t = 0.0;
    for (r, iops) in [400e3, 180e3, 110e3, 100e3, 98e3, 102e3]
        .into_iter()
        .enumerate()
    {
        t += 60.0;
        let role = StepRole::Round {
            round: r as u32 + 1,
            tracked: true,
        };
        pts.push(point(k, "precondition", role, t, iops));
    }
    for (phase, wait, top) in [("wait-5s", 10.0, 160e3), ("wait-10s", 15.0, 190e3)] {
        for i in 0..12 {
            t += wait;
            let iops = 100e3 + (top - 100e3) * (1.0 - (-(i as f64) / 3.0).exp());
            pts.push(point(k, phase, StepRole::Run, t, iops));
        }
        t += 60.0;
        pts.push(point(k, "baseline", StepRole::Other, t, 101e3));
    }
    shown(size, pts)
}

/// DIRTH: one round of threads 32, 8, 1 × QD 32, 8, 1, latency rising with the
/// outstanding I/O past the drive's limit.
fn dirth(size: (u16, u16)) -> App {
    let k = MethodKind::DemandIntensity;
    let mut pts = vec![point(
        k,
        "precondition",
        StepRole::Round {
            round: 1,
            tracked: true,
        },
        60.0,
        90e3,
    )];
    for jobs in [32, 8, 1] {
        for iodepth in [32, 8, 1] {
            let oio = f64::from(jobs * iodepth);
            let iops = (oio * 12e3).min(200e3 * (1.0 - (-oio / 40.0).exp()));
            let mean_us = 1e6 * oio / iops;
            let role = StepRole::Round {
                round: 1,
                tracked: jobs == 32 && iodepth == 32,
            };
            pts.push(MethodPoint {
                jobs,
                iodepth,
                mean_us,
                p99_us: mean_us * 2.5,
                ..point(k, "demand-intensity", role, 0.0, iops)
            });
        }
    }
    // The max point (32 x 8 here): its pre-write, then its histogram with the five nines.
    for (phase, nines) in [
        ("max-point-prewrite", None),
        ("max-point-histogram", Some(9100.0)),
    ] {
        pts.push(MethodPoint {
            jobs: 32,
            iodepth: 8,
            p99_999_us: nines,
            ..point(k, phase, StepRole::Other, 0.0, 150e3)
        });
    }
    shown(size, pts)
}

#[test]
fn hir_shows_each_burst_per_wait_state_against_the_steady_baseline() {
    for size in [SMALL, BIG] {
        let app = hir(size);
        let s = screen(&app);
        assert!(s.contains("Recovery: IOPS over time"), "{s}");
        // The last window of 5 tracked rounds: 180k, 110k, 100k, 98k, 102k.
        assert!(s.contains("baseline 118.0k IOPS (steady window)"), "{s}");
        if size == SMALL {
            assert!(s.contains("last baseline 101.0k IOPS (86%)"), "{s}");
        }
        assert!(s.contains("wait-5s") && s.contains("wait-10s"), "{s}");
        let t = app.theme();
        let dots = colours_of(&app, "•");
        for i in 0..3 {
            assert!(dots.contains(&t.series(i)), "series {i} drawn\n{s}");
        }
        insta::assert_snapshot!(format!("method_hir_{}x{}", size.0, size.1), s);
    }
}

#[test]
fn dirth_shows_mean_and_p99_against_iops_with_the_combinations_labelled() {
    for size in [SMALL, BIG] {
        let app = dirth(size);
        let s = screen(&app);
        assert!(s.contains("Demand intensity: latency vs IOPS"), "{s}");
        assert!(s.contains("round 1 · 9 combinations"), "{s}");
        // The most outstanding I/O's point and the least's are labelled.
        assert!(s.contains("32×32") && s.contains("1×1"), "{s}");
        // The operating point's histogram, with its five nines, below the curve.
        assert!(s.contains("max-point-histogram 32×8"), "{s}");
        assert!(s.contains("p99.999 9.10 ms"), "{s}");
        insta::assert_snapshot!(format!("method_dirth_{}x{}", size.0, size.1), s);
    }
}

#[test]
fn without_method_points_the_curve_stays() {
    let mut app = idle(SMALL);
    app.overlay = None;
    app.tab = Panel::Curve;
    let s = screen(&app);
    assert!(s.contains("Curve") && !s.contains("Recovery"), "{s}");
}
