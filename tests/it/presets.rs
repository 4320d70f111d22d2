//! Presets end to end: every shipped preset validates and expands into a plan whose steps
//! are checked against the published methods (WORKLOADS.md); sweeps resolve with vdbench's
//! rounding; each bad preset in tests/invalid_presets/ yields its expected error text; the
//! `presets` subcommand behaves, and every job file `presets fio` exports is one real fio
//! accepts.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use drivescope::plan::{
    self, resolve_rate, Metric, Plan, PlanOptions, RateSkip, SteadyRule, StepRate, TargetFacts,
};
use drivescope::preset::{self, Preset, BUILTIN_FILES};
use drivescope::workload::RwMode;

const TIB: u64 = 1 << 40;
const GIB: u64 = 1 << 30;

fn target(capacity: u64, lbs: u32) -> TargetFacts {
    TargetFacts {
        capacity_bytes: capacity,
        logical_block_size: lbs,
    }
}

fn expand(id: &str, t: &TargetFacts) -> (Preset, Plan) {
    let p = preset::load_builtin(id).unwrap_or_else(|e| panic!("{id}: {e}"));
    let plan = plan::expand(&p, t, &PlanOptions::default()).unwrap_or_else(|e| panic!("{id}: {e}"));
    (p, plan)
}

/// Checks that hold for every step of every plan.
fn check_steps(id: &str, plan: &Plan, t: &TargetFacts) {
    assert!(!plan.steps.is_empty(), "{id}: no steps");
    let lbs = u64::from(t.logical_block_size);
    for s in &plan.steps {
        let w = &s.workload;
        assert!(w.iodepth >= 1 && w.jobs >= 1, "{id} {}", s.name);
        assert!(w.region.len > 0, "{id} {}", s.name);
        assert!(
            w.region.offset + w.region.len <= t.capacity_bytes,
            "{id} {}",
            s.name
        );
        assert_eq!(w.region.offset % lbs, 0, "{id} {}", s.name);
        assert_eq!(w.region.len % w.bs.max(), 0, "{id} {}", s.name);
        for (b, _) in &w.bs.split {
            assert_eq!(b % lbs, 0, "{id} {}", s.name);
        }
        assert_eq!(w.bs.split.iter().map(|(_, p)| p).sum::<u32>(), 100);
        assert!(
            s.end.duration.is_some() || s.end.bytes.is_some(),
            "{id} {}",
            s.name
        );
        assert!(w.direct);
        assert_eq!(
            w.rwmixread,
            w.rw.read_percent(w.rwmixread),
            "{id} {}",
            s.name
        );
        assert_eq!(w.rate_iops, None, "rates are resolved by the runner");
        if let StepRate::PercentOfPhase { phase, .. } = s.rate {
            assert!(phase <= s.phase, "{id} {}: refers to a later phase", s.name);
        }
    }
    for (i, ph) in plan.phases.iter().enumerate() {
        for s in &plan.steps[ph.steps.clone()] {
            assert_eq!(s.phase, i);
        }
    }
}

#[test]
fn every_builtin_validates_and_expands_on_several_targets() {
    let targets = [
        target(TIB, 512),
        target(TIB, 4096),
        target(8 * GIB, 4096),
        target(100 << 20, 512),
    ];
    let mut ids = Vec::new();
    for (id, _) in BUILTIN_FILES {
        for t in &targets {
            // ECW's composite mix has sizes of 512 B to 3.5 KiB: refused on 4 KiB blocks.
            if id == "snia-ecw" && t.logical_block_size > 512 {
                let p = preset::load_builtin(id).unwrap();
                let e = plan::expand(&p, t, &PlanOptions::default()).unwrap_err();
                assert!(e.to_string().contains("logical block size"), "{e}");
                continue;
            }
            let (p, plan) = expand(id, t);
            assert_eq!(p.id, id, "the id in the file matches its name");
            assert!(!p.description.trim().is_empty());
            check_steps(id, &plan, t);
        }
        ids.push(id);
    }
    // One file per built-in, each embedded.
    let mut files: Vec<String> = std::fs::read_dir("presets")
        .expect("presets/")
        .filter_map(|e| e.ok())
        .map(|e| {
            e.file_name()
                .to_string_lossy()
                .trim_end_matches(".yaml")
                .to_string()
        })
        .collect();
    files.sort();
    let mut sorted: Vec<String> = ids.iter().map(|s| s.to_string()).collect();
    sorted.sort();
    assert_eq!(files, sorted);
}

#[test]
fn shown_yaml_parses_back_to_the_same_preset() {
    for (id, _) in BUILTIN_FILES {
        let p = preset::load_builtin(id).expect("builtin");
        let yaml = preset::to_yaml(&p).expect("yaml");
        let mut again = preset::parse_str(&yaml, "shown").unwrap_or_else(|e| panic!("{id}: {e}"));
        again.origin = p.origin.clone();
        assert_eq!(again, preset::resolve(&p), "{id}");
        // Resolving writes defaults out; the plan stays the same.
        for t in [target(TIB, 512), target(8 * GIB, 4096)] {
            let opts = PlanOptions::default();
            // The same plan, or the same refusal (ECW's sizes on 4 KiB blocks).
            assert_eq!(
                plan::expand(&again, &t, &opts).map_err(|e| e.to_string()),
                plan::expand(&p, &t, &opts).map_err(|e| e.to_string()),
                "{id}"
            );
        }
    }
}

#[test]
fn quick_look_is_first_and_well_under_a_minute() {
    assert_eq!(BUILTIN_FILES[0].0, "quick-look");
    let (_, plan) = expand("quick-look", &target(TIB, 512));
    let e = plan.estimate(1e9);
    assert_eq!(e.min, e.max);
    assert!(e.max < Duration::from_secs(50), "{:?}", e.max);
    assert!(!e.assumes_throughput);
    // On a small scratch file the 1 GiB region shrinks to the file.
    let (_, small) = expand("quick-look", &target(64 << 20, 512));
    assert!(small
        .steps
        .iter()
        .all(|s| s.workload.region.len == 64 << 20));
}

/// (id, rw, rwmixread, bs, outstanding I/O) from the StorageReview table.
const STORAGEREVIEW: [(&str, RwMode, u8, u64, u32); 9] = [
    (
        "storagereview-4k-randread",
        RwMode::RandRead,
        100,
        4096,
        128,
    ),
    (
        "storagereview-4k-randwrite",
        RwMode::RandWrite,
        0,
        4096,
        128,
    ),
    ("storagereview-16k-seqread", RwMode::Read, 100, 16384, 32),
    ("storagereview-16k-seqwrite", RwMode::Write, 0, 16384, 16),
    ("storagereview-64k-seqread", RwMode::Read, 100, 65536, 32),
    ("storagereview-64k-seqwrite", RwMode::Write, 0, 65536, 16),
    ("storagereview-4k-mix", RwMode::RandRw, 70, 4096, 64),
    ("storagereview-8k-mix", RwMode::RandRw, 70, 8192, 64),
    ("storagereview-16k-mix", RwMode::RandRw, 70, 16384, 64),
];

#[test]
fn storagereview_profiles_are_0_to_120_percent_sweeps_on_a_quarter() {
    let t = target(TIB, 4096);
    for (id, rw, mix, bs, oio) in STORAGEREVIEW {
        let (_, plan) = expand(id, &t);
        assert_eq!(plan.steps.len(), 13, "{id}: probe + 12 points");
        let probe = &plan.steps[0];
        assert_eq!(probe.rate, StepRate::Max, "{id}");
        assert_eq!(probe.sweep_point, None);
        let points: Vec<f64> = plan.steps[1..]
            .iter()
            .filter_map(|s| s.sweep_point)
            .collect();
        let expected: Vec<f64> = (1..=12).map(|i| f64::from(i) * 10.0).collect();
        assert_eq!(points, expected, "{id}");
        for s in &plan.steps {
            let w = &s.workload;
            assert_eq!(w.rw, rw, "{id}");
            assert_eq!(w.read_percent(), mix, "{id}");
            assert_eq!(w.bs.split, vec![(bs, 100)], "{id}");
            assert_eq!(w.jobs * w.iodepth, oio, "{id}");
            assert_eq!(w.region.offset, 0);
            assert_eq!(w.region.len, TIB / 4, "{id}");
            if let Some(p) = s.sweep_point {
                assert_eq!(
                    s.rate,
                    StepRate::PercentOfPhase {
                        phase: 0,
                        percent: p
                    }
                );
            }
        }
    }
}

trait ReadPercent {
    fn read_percent(&self) -> u8;
}

impl ReadPercent for drivescope::workload::Workload {
    fn read_percent(&self) -> u8 {
        self.rw.read_percent(self.rwmixread)
    }
}

#[test]
fn sweep_rates_resolve_with_vdbench_rounding() {
    let (_, plan) = expand("storagereview-4k-randwrite", &target(TIB, 4096));
    // The probe measured 448,123 IOPS (cf. Micron 7400 Pro's published 448K).
    let measured = |phase: usize| (phase == 0).then_some(448_123.0);
    let targets: Vec<Option<f64>> = plan
        .steps
        .iter()
        .map(|s| resolve_rate(&s.rate, &measured).expect("resolves"))
        .collect();
    assert_eq!(targets[0], None, "the probe runs at max");
    assert_eq!(
        targets[1],
        Some(44_900.0),
        "10% = 44,812.3 rounds up to 44,900"
    );
    assert_eq!(targets[5], Some(224_100.0));
    assert_eq!(targets[10], Some(448_200.0), "100% rounds up too");
    assert_eq!(targets[12], Some(537_800.0), "120% is run, not capped");
    // A slow target: 10% of 85 IOPS is 8 in whole numbers, which vdbench runs at 10; 20%
    // is 17 → 20.
    let slow = |_: usize| Some(85.0);
    assert_eq!(resolve_rate(&plan.steps[1].rate, &slow), Ok(Some(10.0)));
    assert_eq!(resolve_rate(&plan.steps[2].rate, &slow), Ok(Some(20.0)));
    // Only a product of 0 ends the curve: 10% of 9.9 IOPS.
    let stalled = |_: usize| Some(9.9);
    assert_eq!(
        resolve_rate(&plan.steps[1].rate, &stalled),
        Err(RateSkip::BelowMinimum {
            max: 9.9,
            percent: 10.0
        })
    );
    // The example: 10% of 10,005 IOPS is 1,000 (integer division), not 1,100.
    let edge = |_: usize| Some(10_005.0);
    assert_eq!(resolve_rate(&plan.steps[1].rate, &edge), Ok(Some(1_000.0)));
    // No measured maximum yet: no rate. A fixed rate is used as written, not rounded.
    let none = |_: usize| None;
    assert_eq!(
        resolve_rate(&plan.steps[1].rate, &none),
        Err(RateSkip::NoMeasurement { phase: 0 })
    );
    assert_eq!(
        resolve_rate(&StepRate::Iops(777.0), &measured),
        Ok(Some(777.0))
    );
    // The spec the engine gets carries the rate.
    let spec = plan.steps[5].to_step_spec(targets[5]);
    assert_eq!(spec.workload.rate_iops, Some(224_100.0));
    // From 100% on the points run closed-loop at the preset's queue, as vdbench's threads
    // bound the outstanding I/O: their target is kept, the engine runs unpaced.
    for (i, step) in plan.steps.iter().enumerate().skip(1) {
        let closed = step.sweep_point.is_some_and(|p| p >= 100.0);
        assert_eq!(step.closed_loop, closed, "{}", step.name);
        let rate = step.to_step_spec(targets[i]).workload.rate_iops;
        assert_eq!(
            rate,
            if closed { None } else { targets[i] },
            "{}",
            step.name
        );
    }
    assert_eq!(spec.end.duration, Some(Duration::from_secs(30)));
    assert_eq!(spec.ramp, Duration::from_secs(5));
}

#[test]
fn vdbench_curve_and_custom_points_are_selectable() {
    let text = "id: t\nname: T\ndescription: d\nphases:\n  - name: s\n    workload: {rw: randread, bs: 4k, iodepth: 4}\n    end: {duration: 10s}\n    sweep: {points: vdbench, stopcurve: 5ms}\n  - name: c\n    workload: {rw: randread, bs: 4k, iodepth: 4}\n    end: {duration: 10s}\n    sweep:\n      points: [25%, 130%]\n  - name: half\n    workload: {rw: randread, bs: 4k, iodepth: 4}\n    end: {duration: 10s}\n    rate: 50% of c\n";
    let p = preset::parse_str(text, "inline").expect("valid");
    let plan = plan::expand(&p, &target(GIB, 512), &PlanOptions::default()).expect("plan");
    let pts: Vec<f64> = plan.steps.iter().filter_map(|s| s.sweep_point).collect();
    assert_eq!(pts, vec![10.0, 50.0, 70.0, 80.0, 90.0, 100.0, 25.0, 130.0]);
    let last = plan.steps.last().expect("steps");
    assert_eq!(
        last.rate,
        StepRate::PercentOfPhase {
            phase: 1,
            percent: 50.0
        }
    );
    assert_eq!(plan.phases[1].steps, 7..10);
    assert_eq!(plan.phases[0].stop_curve, Some(Duration::from_millis(5)));
    assert_eq!(plan.phases[1].stop_curve, None);
    let fio = plan::fio::job_file(&p, &plan, &target(GIB, 512));
    assert!(fio.contains("above 5ms\n# (vdbench's stopcurve)"), "{fio}");
}

#[test]
fn snia_iops_is_the_56_point_matrix_in_rounds() {
    let t = target(TIB, 512);
    let (_, plan) = expand("snia-iops", &t);
    // Workload-independent preconditioning first: 128 KiB sequential write of 2x.
    let wipc = &plan.steps[0];
    assert_eq!(wipc.workload.rw, RwMode::Write);
    assert_eq!(wipc.workload.bs.max(), 128 << 10);
    assert_eq!(wipc.end.bytes, Some(2 * TIB));
    let phase = &plan.phases[1];
    let rounds = phase.rounds.expect("rounds");
    assert_eq!(rounds.steps_per_round, 56);
    assert_eq!(rounds.max_rounds, 25);
    assert_eq!(rounds.metric, Metric::Iops);
    assert_eq!(
        rounds.rule,
        SteadyRule::Snia {
            window: 5,
            range_percent: 20.0,
            slope_percent: 10.0,
            max_rounds: 25
        }
    );
    let steps = &plan.steps[phase.steps.clone()];
    assert_eq!(steps.len(), 56 * 25);
    let round1: Vec<_> = steps.iter().filter(|s| s.round == Some(1)).collect();
    assert_eq!(round1.len(), 56);
    // Read share outer, block size inner, as the PTS orders them.
    assert_eq!(round1[0].workload.rw, RwMode::RandRead);
    assert_eq!(round1[0].workload.bs.max(), 1 << 20);
    assert_eq!(round1[7].workload.bs.max(), 512);
    assert_eq!(round1[55].workload.rw, RwMode::RandWrite);
    let mut combos: Vec<(u8, u64)> = round1
        .iter()
        .map(|s| {
            (
                s.workload.rw.read_percent(s.workload.rwmixread),
                s.workload.bs.max(),
            )
        })
        .collect();
    combos.sort();
    combos.dedup();
    assert_eq!(combos.len(), 56);
    for s in &round1 {
        assert_eq!((s.workload.jobs, s.workload.iodepth), (4, 32));
        assert!(s.workload.rw.is_random());
        assert_eq!(s.end.duration, Some(Duration::from_secs(60)));
    }
    for r in 1..=25 {
        let tracked: Vec<_> = steps
            .iter()
            .filter(|s| s.round == Some(r) && s.tracked)
            .collect();
        assert_eq!(tracked.len(), 1, "round {r}");
        assert_eq!(tracked[0].workload.rw, RwMode::RandWrite);
        assert_eq!(tracked[0].workload.bs.max(), 4096);
    }
    // Estimated from 5 to 25 rounds of 56 minutes.
    let e = plan.estimate(f64::from(1u32 << 30));
    let wipc_time = Duration::from_secs_f64(2.0 * TIB as f64 / f64::from(1u32 << 30));
    assert_eq!(e.min, wipc_time + Duration::from_secs(5 * 56 * 60));
    assert_eq!(e.max, wipc_time + Duration::from_secs(25 * 56 * 60));
    // A 4Kn drive cannot do 0.5 KiB I/O: those 7 combinations are dropped, with a note.
    let (_, plan4k) = expand("snia-iops", &target(TIB, 4096));
    assert_eq!(plan4k.phases[1].rounds.expect("rounds").steps_per_round, 49);
    assert_eq!(plan4k.notes.len(), 1);
    assert!(plan4k.notes[0].contains("512B"), "{}", plan4k.notes[0]);
}

#[test]
fn snia_throughput_and_latency_tests() {
    let (_, tp) = expand("snia-throughput", &target(TIB, 512));
    assert_eq!(tp.phases.len(), 3);
    for (ph, bs) in [(1, 128 << 10), (2, 1 << 20)] {
        let r = tp.phases[ph].rounds.expect("rounds");
        assert_eq!(r.metric, Metric::Bw);
        assert_eq!(r.steps_per_round, 2);
        let round1: Vec<_> = tp.steps[tp.phases[ph].steps.clone()]
            .iter()
            .filter(|s| s.round == Some(1))
            .collect();
        assert_eq!(round1[0].workload.rw, RwMode::Read);
        assert_eq!(round1[1].workload.rw, RwMode::Write);
        assert!(round1[1].tracked && !round1[0].tracked);
        assert!(round1.iter().all(|s| s.workload.bs.max() == bs));
    }
    let (_, lat) = expand("snia-latency", &target(TIB, 512));
    let r = lat.phases[1].rounds.expect("rounds");
    assert_eq!(r.metric, Metric::MeanLatency);
    assert_eq!(r.steps_per_round, 9);
    let steps = &lat.steps[lat.phases[1].steps.clone()];
    assert!(steps
        .iter()
        .all(|s| s.workload.jobs == 1 && s.workload.iodepth == 1));
    let tracked = steps.iter().find(|s| s.tracked).expect("tracked");
    assert_eq!(
        (tracked.workload.rw, tracked.workload.bs.max()),
        (RwMode::RandWrite, 4096)
    );
}

#[test]
fn preconditioning_and_sequential_presets() {
    let t = target(TIB, 512);
    let (_, wipc) = expand("snia-wipc", &t);
    assert_eq!(wipc.steps.len(), 1);
    assert_eq!(wipc.steps[0].end.bytes, Some(2 * TIB));
    assert_eq!(wipc.steps[0].workload.region.len, TIB);
    let (_, rw) = expand("precondition-randwrite", &t);
    let r = rw.phases[0].rounds.expect("rounds");
    assert_eq!(r.metric, Metric::Iops);
    assert!(rw
        .steps
        .iter()
        .all(|s| s.tracked && s.workload.rw == RwMode::RandWrite));
    assert_eq!(rw.steps.len(), 25);
    let (seq_preset, seq) = expand("seq-128k", &t);
    assert_eq!(seq.steps.len(), 2);
    // fio's blog test: write first, then read; each of the 8 jobs covers the whole
    // target (size=100%), so each direction moves 8x the capacity.
    assert_eq!(seq.steps[0].workload.rw, RwMode::Write);
    assert_eq!(seq.steps[1].workload.rw, RwMode::Read);
    for s in &seq.steps {
        assert_eq!((s.workload.iodepth, s.workload.jobs), (32, 8));
        assert_eq!(s.workload.bs.max(), 128 << 10);
        assert_eq!(s.workload.region.len, TIB);
        assert_eq!(
            s.workload.job_region,
            drivescope::workload::JobRegion::Whole
        );
        assert_eq!(s.end.bytes, Some(8 * TIB));
    }
    let job = drivescope::plan::fio::job_file(&seq_preset, &seq, &t);
    assert!(
        !job.contains("offset_increment"),
        "no per-job slices: {job}"
    );
    let (_, wsat) = expand("snia-write-saturation", &t);
    assert_eq!(wsat.steps[0].end.bytes, Some(4 * TIB));
    assert_eq!(
        wsat.steps[0].end.duration,
        Some(Duration::from_secs(24 * 3600))
    );
}

#[test]
fn approximations_say_so() {
    for id in ["approx-sql", "approx-oracle", "approx-vdi"] {
        let (p, plan) = expand(id, &target(TIB, 512));
        assert!(p.description.contains("APPROXIMATION"), "{id}");
        assert!(p.name.contains("approximation"), "{id}");
        assert!(plan.steps.iter().all(|s| !s.workload.bs.is_single()));
    }
}

#[test]
fn time_scale_shrinks_every_duration() {
    let p = preset::load_builtin("quick-look").expect("builtin");
    let opts = PlanOptions {
        time_scale: 0.1,
        ..PlanOptions::default()
    };
    let plan = plan::expand(&p, &target(TIB, 512), &opts).expect("plan");
    for s in &plan.steps {
        assert_eq!(s.end.duration, Some(Duration::from_millis(800)));
        assert_eq!(s.ramp, Duration::from_millis(200));
    }
    for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let opts = PlanOptions {
            time_scale: bad,
            ..PlanOptions::default()
        };
        assert!(plan::expand(&p, &target(TIB, 512), &opts).is_err());
    }
    assert!(plan::expand(&p, &target(0, 512), &PlanOptions::default()).is_err());
    assert!(plan::expand(&p, &target(TIB, 1000), &PlanOptions::default()).is_err());
}

#[test]
fn fio_steady_state_is_carried_into_the_plan() {
    let text = "id: ss\nname: SS\ndescription: d\nphases:\n  - name: pc\n    workload: {rw: randwrite, bs: 4k, iodepth: 32, jobs: 4}\n    end:\n      duration: 30m\n      steady: {criterion: iops_slope:0.3%, window: 5m, ramp: 1m}\n";
    let p = preset::parse_str(text, "inline").expect("valid");
    let opts = PlanOptions {
        interval: Duration::from_millis(500),
        ..PlanOptions::default()
    };
    let plan = plan::expand(&p, &target(TIB, 512), &opts).expect("plan");
    assert_eq!(
        plan.steps[0].steady,
        Some(SteadyRule::Fio {
            metric: Metric::Iops,
            slope: true,
            limit_percent: 0.3,
            window: 600,
            ramp: 120,
            sample_secs: 0.5
        })
    );
    let e = plan.estimate(1e9);
    assert_eq!(e.min, Duration::from_secs(360));
    assert_eq!(e.max, Duration::from_secs(1800));
    let fio = plan::fio::job_file(&p, &plan, &target(TIB, 512));
    assert!(
        fio.contains("ss=iops_slope:0.3%\nss_dur=300s\nss_ramp=60s"),
        "{fio}"
    );
}

#[test]
fn each_invalid_preset_yields_its_expected_error() {
    let dir = Path::new("tests/invalid_presets");
    let mut checked = 0;
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("tests/invalid_presets")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    entries.sort();
    for path in entries {
        let expected_path = path.with_extension("expected");
        let expected = std::fs::read_to_string(&expected_path)
            .unwrap_or_else(|_| panic!("{} has no .expected file", path.display()));
        let err = match preset::parse_file(&path) {
            Ok(_) => panic!("{} was accepted", path.display()),
            Err(e) => e.to_string(),
        };
        assert_eq!(err, expected.trim_end(), "{}", path.display());
        checked += 1;
    }
    assert!(checked >= 20, "only {checked} invalid presets");
}

fn drivescope(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_drivescope"))
        .args(args)
        .env("XDG_CONFIG_HOME", "/nonexistent-drivescope-test")
        .output()
        .expect("runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn every_builtin_presets_fio_job_file_is_accepted_by_real_fio() {
    if Command::new("fio").arg("--version").output().is_err() {
        skip!(Tool, "fio is not installed");
    }
    let (code, list, err) = drivescope(&["presets", "list"]);
    assert_eq!(code, 0, "{err}");
    let ids: Vec<&str> = list
        .lines()
        .skip_while(|l| !l.starts_with("ID"))
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(
        ids.len(),
        BUILTIN_FILES.len(),
        "every built-in is listed: {list}"
    );
    let dir = tempfile::tempdir().unwrap();
    for id in ids {
        let (code, job, err) = drivescope(&["presets", "fio", id]);
        assert_eq!(code, 0, "{id}: {err}");
        assert!(job.contains("\n[global]\n"), "{id}: {job}");
        let path = dir.path().join(format!("{id}.fio"));
        std::fs::write(&path, &job).unwrap();
        // --parse-only: every option name and value checked, the jobs set up, no I/O.
        let out = Command::new("fio")
            .arg("--parse-only")
            .arg(&path)
            .env("TARGET", dir.path().join("target.bin"))
            .output()
            .expect("run fio");
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.status.success() && said.trim().is_empty(),
            "fio refuses or warns about the job file of {id} ({}): {said}\n{job}",
            out.status
        );
    }
}

/// A job file's sections in order (not `[global]`), each with its `key=value` options.
fn fio_sections(job: &str) -> Vec<(String, Vec<(String, String)>)> {
    let mut out: Vec<(String, Vec<(String, String)>)> = Vec::new();
    for line in job.lines().map(str::trim) {
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            out.push((name.to_string(), Vec::new()));
        } else if let (Some((k, v)), Some(last)) = (line.split_once('='), out.last_mut()) {
            if !line.starts_with('#') {
                last.1.push((k.to_string(), v.to_string()));
            }
        }
    }
    out.retain(|(n, _)| n != "global");
    out
}

/// A fio size as the export writes it (`4k`, `1m`: fio's base is 1024).
fn fio_bytes(v: &str) -> u64 {
    let (n, mult) = match v.as_bytes().last() {
        Some(b'k') => (&v[..v.len() - 1], 1 << 10),
        Some(b'm') => (&v[..v.len() - 1], 1 << 20),
        _ => (v, 1),
    };
    n.parse::<u64>().expect("a size") * mult
}

/// A fio duration as the export writes it (`120ms`, `2s`), in milliseconds.
fn fio_ms(v: &str) -> u64 {
    match v.strip_suffix("ms") {
        Some(ms) => ms.parse().expect("ms"),
        None => {
            1000 * v
                .strip_suffix('s')
                .expect("s or ms")
                .parse::<u64>()
                .expect("s")
        }
    }
}

#[test]
fn exported_fio_jobs_run_in_real_fio() {
    if Command::new("fio").arg("--version").output().is_err() {
        skip!(Tool, "fio is not installed");
    }
    // One preset per kind, at a time scale that makes each job tens of milliseconds: a
    // plain phase of four workloads; a vdbench sweep (a probe, then points paced by a
    // Poisson process at a share of it, which fio cannot express: no rate is set); SNIA
    // rounds (round 1 of each phase, after a fill by amount of data); a matrix (of queue
    // depths by job counts). fio costs ~0.3 s a job whatever its runtime, so of the sweep's
    // 13 jobs four run (`--section`), and of the matrix's 35 three.
    let kinds: [(&str, &[&str]); 4] = [
        ("quick-look", &[]),
        (
            "storagereview-4k-randread",
            &["sweep-probe", "sweep-10pct", "sweep-90pct", "sweep-120pct"],
        ),
        ("snia-throughput", &[]),
        (
            "snia-fio-latency-map",
            &["map-QD1-1", "map-QD64-4", "map-QD16-16"],
        ),
    ];
    let dir = crate::common::disk_tempdir();
    let mut running = Vec::new();
    for (id, only) in kinds {
        let (code, job, err) = drivescope(&[
            "presets",
            "fio",
            id,
            "--capacity",
            "16MiB",
            "--time-scale",
            "0.002",
        ]);
        assert_eq!(code, 0, "{id}: {err}");
        let all = fio_sections(&job);
        let mut sections = all.clone();
        if !only.is_empty() {
            sections.retain(|(n, _)| only.contains(&n.as_str()));
            assert_eq!(sections.len(), only.len(), "{id}: {job}");
        }
        let file = dir.path().join(format!("{id}.fio"));
        let json = dir.path().join(format!("{id}.json"));
        std::fs::write(&file, &job).unwrap();
        let mut cmd = Command::new("fio");
        cmd.arg("--output-format=json")
            .arg(format!("--output={}", json.display()))
            .env("TARGET", dir.path().join(format!("{id}.bin")));
        for n in only {
            cmd.arg(format!("--section={n}"));
        }
        let child = cmd
            .arg(&file)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("run fio");
        running.push((id, job, all, sections, json, child));
    }
    for (id, job, all, sections, json, child) in running {
        let done = child.wait_with_output().expect("fio");
        assert!(
            done.status.success(),
            "{id}: fio {}: {}\n{job}",
            done.status,
            String::from_utf8_lossy(&done.stderr)
        );
        let out: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&json).unwrap()).expect("fio's JSON");
        let jobs = out["jobs"].as_array().expect("jobs");
        let ran: Vec<&str> = jobs.iter().filter_map(|j| j["jobname"].as_str()).collect();
        let given: Vec<&str> = sections.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(ran, given, "{id}: fio ran the jobs given, in order");
        for (j, (name, opts)) in jobs.iter().zip(&sections) {
            let what = format!("{id} [{name}]");
            assert_eq!(j["error"], 0, "{what}: {j}");
            // fio echoes every option of the section as it took it.
            for (k, v) in opts {
                assert_eq!(j["job options"][k], v.as_str(), "{what}: {k}");
            }
            let opt = |k: &str| opts.iter().find(|(o, _)| o == k).map(|(_, v)| v.as_str());
            let read = j["read"]["io_bytes"].as_u64().expect("read bytes");
            let write = j["write"]["io_bytes"].as_u64().expect("write bytes");
            match opt("rw").expect("rw") {
                "read" | "randread" => assert!(read > 0 && write == 0, "{what}: {read} {write}"),
                "write" | "randwrite" => {
                    assert!(write > 0 && read == 0, "{what}: {read} {write}")
                }
                _ => assert!(read > 0 && write > 0, "{what}: {read} {write}"),
            }
            // Whole I/Os of the section's block size.
            let bs = fio_bytes(opt("bs").expect("bs"));
            assert!(
                read % bs == 0 && write % bs == 0,
                "{what}: {read} and {write} bytes in I/Os of {bs}"
            );
            if let Some(n) = opt("io_size") {
                assert_eq!(read + write, n.parse::<u64>().unwrap(), "{what}: io_size");
            }
            if let Some(rt) = opt("runtime") {
                let ms = j["job_runtime"].as_u64().expect("job_runtime");
                let want = fio_ms(rt);
                assert!(
                    ms + 1 >= want && ms < want + 2000,
                    "{what}: ran {ms} ms for runtime={rt}"
                );
            }
        }
        // The sweep's points are paced by a Poisson process, as vdbench's, at no rate fio
        // could be given; the rounds file says how to repeat its round.
        match id {
            "storagereview-4k-randread" => {
                // Points under 100% of the probe paced (10% … 90%: nine), the probe and
                // the points from 100% closed-loop.
                for (name, o) in &all {
                    let pct = name
                        .strip_prefix("sweep-")
                        .and_then(|p| p.strip_suffix("pct"))
                        .map(|p| p.parse::<u32>().expect("a percentage"));
                    let poisson = o.iter().any(|(k, v)| k == "rate_process" && v == "poisson");
                    assert_eq!(poisson, pct.is_some_and(|p| p < 100), "[{name}]");
                    assert!(o.iter().all(|(k, _)| k != "rate_iops"), "[{name}]");
                }
                assert_eq!(all.len(), 13, "the probe and 12 points");
            }
            "snia-throughput" => {
                assert!(job.contains("runs in SNIA rounds"), "{job}");
                // Its fill (`data: 2x`) wrote twice the 16 MiB capacity, whatever the jobs.
                let fill = &jobs[0];
                assert_eq!(fill["jobname"], "wipc");
                assert_eq!(fill["write"]["io_bytes"], 32 << 20, "{fill}");
            }
            _ => {}
        }
    }
}

#[test]
fn cli_list_show_fio_validate() {
    let (code, out, _) = drivescope(&["presets", "list", "--capacity", "2TiB"]);
    assert_eq!(code, 0);
    assert!(out.contains("for a 2TiB target"), "{out}");
    assert!(out.contains("assumed 1GiB/s"), "{out}");
    let first_row = out
        .lines()
        .skip_while(|l| !l.starts_with("ID"))
        .nth(1)
        .unwrap_or("");
    assert!(first_row.starts_with("quick-look"), "{out}");
    assert!(out.contains("storagereview-4k-randread"));

    let (code, out, _) = drivescope(&["presets", "show", "quick-look"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("id: quick-look") && out.contains("iodepth: 32"),
        "{out}"
    );

    let (code, out, _) = drivescope(&["presets", "fio", "storagereview-4k-randread"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("[global]\nioengine=io_uring\ndirect=1"),
        "{out}"
    );
    assert!(
        out.contains("numjobs=8\n") && out.contains("iodepth=16\n"),
        "{out}"
    );
    assert!(out.contains("size=274877906944"), "25% of 1TiB: {out}");
    assert!(
        out.contains("fio cannot express this rate: 90% of the IOPS measured by [sweep-probe]"),
        "{out}"
    );
    assert!(
        out.contains("# 120% of the IOPS measured by [sweep-probe]: at or above 100% the point runs\n# closed-loop"),
        "{out}"
    );

    let (code, _, err) = drivescope(&[
        "presets",
        "validate",
        "tests/invalid_presets/unknown-key.yaml",
    ]);
    assert_eq!(code, 2);
    assert!(
        err.starts_with(
            "drivescope: tests/invalid_presets/unknown-key.yaml:9:7: phases[0].workload.iodepht"
        ),
        "{err}"
    );
    assert!(err.contains("did you mean `iodepth`?"), "{err}");

    let (code, out, _) = drivescope(&[
        "presets",
        "validate",
        "presets/snia-iops.yaml",
        "presets/quick-look.yaml",
    ]);
    assert_eq!(code, 0);
    assert_eq!(
        out.lines().filter(|l| l.contains(": ok: ")).count(),
        2,
        "{out}"
    );

    let (code, _, err) = drivescope(&[
        "presets",
        "validate",
        "presets/quick-look.yaml",
        "tests/invalid_presets/iodepth-zero.yaml",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("1 of 2 preset files are invalid"), "{err}");

    let (code, _, err) = drivescope(&["presets", "show", "quick-lok"]);
    assert_eq!(code, 2);
    assert!(err.contains("did you mean `quick-look`?"), "{err}");
}

#[test]
fn storagereview_sweeps_arrive_as_poisson_and_the_fio_export_says_so() {
    use drivescope::workload::Arrivals;
    for (id, _) in BUILTIN_FILES {
        // 512-byte blocks, as `presets fio` assumes by default.
        let (p, plan) = expand(id, &target(TIB, 512));
        let sweeps = p.phases.iter().any(|ph| ph.sweep.is_some());
        let vdbench_method = id.starts_with("storagereview-") || id.starts_with("approx-");
        for step in &plan.steps {
            let want = if sweeps && vdbench_method {
                Arrivals::Poisson
            } else {
                Arrivals::Uniform
            };
            assert_eq!(step.workload.arrivals, want, "{id}: {}", step.name);
        }
        let (code, out, _) = drivescope(&["presets", "fio", id]);
        assert_eq!(code, 0, "{id}");
        let paced = plan
            .steps
            .iter()
            .filter(|s| {
                s.rate != StepRate::Max
                    && !s.closed_loop
                    && s.workload.arrivals == Arrivals::Poisson
            })
            .count();
        assert_eq!(out.matches("rate_process=poisson\n").count(), paced, "{id}");
        if sweeps && vdbench_method {
            // 10% to 90% are paced; 100% and above run closed-loop.
            assert!(paced >= 9, "{id}: {paced}");
            // The probe runs closed-loop: no rate, no arrival process.
            let probe = out
                .split("\n[")
                .find(|s| s.contains("probe]"))
                .expect("a probe");
            assert!(!probe.contains("rate_process"), "{probe}");
        }
    }
}

#[test]
fn presets_plan_lists_every_step_with_its_target() {
    let (code, out, err) = drivescope(&[
        "presets",
        "plan",
        "storagereview-4k-randwrite",
        "--capacity",
        "2TiB",
        "--probe-iops",
        "10005",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let steps: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect();
    assert_eq!(steps.len(), 13, "a probe and 12 points");
    for (i, s) in steps.iter().enumerate() {
        assert_eq!(s["index"], i, "{s}");
        assert_eq!(s["phase"], 0, "{s}");
        assert_eq!(s["phase_name"], "sweep", "{s}");
        assert!(s["label"].as_str().is_some_and(|l| l.starts_with("sweep")));
        assert_eq!(s["workload"]["rw"], "randwrite");
        assert_eq!(s["workload"]["region"]["len"], 1u64 << 39, "25% of 2TiB");
        assert_eq!(s["end"]["duration_s"], 30.0);
    }
    let probe = &steps[0];
    assert!(probe["percent"].is_null() && probe["target_iops"].is_null());
    assert!(probe["arrivals"].is_null(), "closed loop");
    for (k, s) in steps[1..].iter().enumerate() {
        let pct = 10.0 * (k + 1) as f64;
        assert_eq!(s["percent"], pct);
        let want = plan::vdbench_round(10_005.0, pct).expect("a rate") as f64;
        assert_eq!(s["target_iops"], want, "{s}");
        // From 100% on the point runs closed-loop at the preset's queue: no pacing.
        let closed = pct >= 100.0;
        assert_eq!(s["closed_loop"], closed, "{s}");
        if closed {
            assert!(s["workload"]["rate_iops"].is_null() && s["arrivals"].is_null());
        } else {
            assert_eq!(s["workload"]["rate_iops"], want);
            assert_eq!(s["arrivals"], "poisson");
        }
    }
    assert_eq!(steps[1]["target_iops"], 1000.0, "10% of 10,005 in integers");

    // The table, from a file, with a fixed rate and a sweep that a slow probe cuts short.
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("mine.yaml");
    std::fs::write(
        &file,
        "id: mine\nname: Mine\ndescription: d\nphases:\n  - name: fixed\n    workload: {rw: randrw, rwmixread: 70%, bs: 4k, iodepth: 4}\n    end: {duration: 10s}\n    rate: 5000\n  - name: curve\n    workload: {rw: randread, bs: 4k, iodepth: 4}\n    end: {duration: 10s}\n    sweep: {points: [50%, 0.5%, 80%]}\n",
    )
    .expect("write");
    let path = file.to_str().expect("utf-8");
    let (code, out, err) = drivescope(&["presets", "plan", path, "--probe-iops", "500"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("Plan of mine for a 1TiB target, a probe measuring 500 IOPS: 5 steps"),
        "{out}"
    );
    assert!(out.contains("#  PHASE  STEP"), "{out}");
    let line = |n: &str| {
        out.lines()
            .find(|l| l.trim_start().starts_with(n))
            .unwrap_or("")
    };
    assert!(line("1 ").contains("randrw 70%read 4KiB QD4×1"), "{out}");
    assert!(
        line("1 ").contains("uniform") && line("1 ").contains("5000 IOPS"),
        "{out}"
    );
    assert!(line("3 ").contains("50% of the probe = 250 IOPS"), "{out}");
    assert!(
        line("4 ").contains("skipped") && line("5 ").contains("skipped"),
        "{out}"
    );
    assert!(
        out.contains("step 5 (curve 80%) is skipped: an earlier point"),
        "{out}"
    );

    // Without --probe-iops the targets are unknown, and said to be.
    let (code, out, _) = drivescope(&["presets", "plan", path, "--json"]);
    assert_eq!(code, 0);
    let last: serde_json::Value =
        serde_json::from_str(out.lines().last().expect("lines")).expect("json");
    assert!(
        last["target_iops"].is_null() && last["skipped"].is_null(),
        "{last}"
    );
    assert_eq!(last["percent"], 80.0);
}

#[test]
fn user_presets_come_from_the_config_folder() {
    let dir = tempfile::tempdir().expect("tempdir");
    let presets = dir.path().join("drivescope").join("presets");
    std::fs::create_dir_all(&presets).expect("mkdir");
    std::fs::write(
        presets.join("mine.yaml"),
        "id: my-check\nname: My check\ndescription: mine\nphases:\n  - name: a\n    workload: {rw: randread, bs: 4k, iodepth: 8}\n    end: {duration: 5s}\n",
    )
    .expect("write");
    std::fs::write(presets.join("broken.yaml"), "id: broken\n").expect("write");
    let out = Command::new(env!("CARGO_BIN_EXE_drivescope"))
        .args(["presets", "list"])
        .env("XDG_CONFIG_HOME", dir.path())
        .output()
        .expect("runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success());
    assert!(
        stdout.contains("my-check") && stdout.contains("My check"),
        "{stdout}"
    );
    assert!(
        stderr.contains("broken.yaml") && stderr.contains("missing field `name`"),
        "{stderr}"
    );
    // A path works wherever an id does.
    let p = preset::find(presets.join("mine.yaml").to_str().expect("utf-8")).expect("by path");
    assert_eq!(p.id, "my-check");
}

/// A small deterministic generator for mutations (no dependency needed).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

#[test]
fn bad_input_never_panics() {
    let targets = [target(TIB, 512), target(4096, 4096), target(1, 512)];
    let replacements = [
        "0", "-1", "", "[]", "{}", "1e400", "max", "0x", "%", "4q", "é", "50% of x",
    ];
    let mut rng = Lcg(42);
    for (id, text) in BUILTIN_FILES {
        let mut inputs: Vec<String> = Vec::new();
        // Every prefix at a line boundary.
        let mut acc = String::new();
        for line in text.lines() {
            acc.push_str(line);
            acc.push('\n');
            inputs.push(acc.clone());
        }
        // Values replaced by junk, one at a time.
        let lines: Vec<&str> = text.lines().collect();
        for _ in 0..60 {
            let i = (rng.next() as usize) % lines.len();
            let r = replacements[(rng.next() as usize) % replacements.len()];
            let mut copy: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
            if let Some((k, _)) = copy[i].split_once(": ") {
                copy[i] = format!("{k}: {r}");
            } else {
                copy[i] = format!("{}{r}", copy[i]);
            }
            inputs.push(copy.join("\n"));
        }
        for input in inputs {
            if let Ok(p) = preset::parse_str(&input, id) {
                for t in &targets {
                    if let Ok(plan) = plan::expand(&p, t, &PlanOptions::default()) {
                        let _ = plan.estimate(0.0);
                        let _ = plan::fio::job_file(&p, &plan, t);
                    }
                }
            }
        }
    }
}

#[test]
fn queue_shapes_follow_the_published_methods() {
    let t = target(TIB, 512);
    // vdbench's sequential profiles: one stream shared by the threads, at the profile's
    // outstanding I/O (32 for reads, 16 for writes).
    for (id, qd) in [
        ("storagereview-16k-seqread", 32),
        ("storagereview-64k-seqread", 32),
        ("storagereview-16k-seqwrite", 16),
        ("storagereview-64k-seqwrite", 16),
    ] {
        let (_, plan) = expand(id, &t);
        for s in &plan.steps {
            assert_eq!((s.workload.jobs, s.workload.iodepth), (1, qd), "{id}");
        }
    }
    // The SNIA test as run with fio: 1 job x QD256 with a warm-up per round, and a map of
    // latency over QD 1-64 x 1-16 jobs.
    let (_, tp) = expand("snia-fio-throughput", &t);
    for s in &tp.steps[1..] {
        assert_eq!((s.workload.jobs, s.workload.iodepth), (1, 256));
        assert_eq!(s.ramp, Duration::from_secs(5));
    }
    let (_, map) = expand("snia-fio-latency-map", &t);
    let shapes: Vec<(u32, u32)> = map
        .steps
        .iter()
        .map(|s| (s.workload.jobs, s.workload.iodepth))
        .collect();
    assert_eq!(shapes.len(), 35);
    for j in [1, 2, 4, 8, 16] {
        for d in [1, 2, 4, 8, 16, 32, 64] {
            assert!(shapes.contains(&(j, d)), "QD{d} x {j} missing");
        }
    }
    assert_eq!(shapes[0], (1, 1));
    assert_eq!(shapes[7], (2, 1), "jobs in the outer loop");
}

#[test]
fn outstanding_sets_every_steps_queue() {
    let p = preset::load_builtin("storagereview-4k-randread").expect("builtin");
    let opts = PlanOptions {
        outstanding: Some(512),
        ..PlanOptions::default()
    };
    let plan = plan::expand(&p, &target(TIB, 512), &opts).expect("plan");
    for s in &plan.steps {
        assert_eq!(s.workload.jobs * s.workload.iodepth, 512, "{}", s.name);
    }
    assert!(
        plan.notes.iter().any(|n| n.contains("--outstanding 512")),
        "{:?}",
        plan.notes
    );
    // Fewer outstanding I/Os than jobs: one I/O per job, as many jobs as I/Os.
    let opts = PlanOptions {
        outstanding: Some(2),
        ..PlanOptions::default()
    };
    let plan = plan::expand(&p, &target(TIB, 512), &opts).expect("plan");
    for s in &plan.steps {
        assert_eq!((s.workload.jobs, s.workload.iodepth), (2, 1));
    }
}

#[test]
fn a_preset_phase_may_ask_for_an_engine_and_ring_options() {
    use drivescope::workload::{EngineKind, EngineOptions, SqPoll};
    let text = "id: ceiling\nname: Ceiling\ndescription: d\nphases:\n  - name: nops\n    workload: {rw: randread, bs: 4k, iodepth: 128, engine: nop, sqpoll: true}\n    end: {duration: 5s}\n  - name: polled\n    workload: {rw: randread, bs: 4k, iodepth: 8, hipri: true}\n    end: {duration: 5s}\n  - name: passthrough\n    workload: {rw: randread, bs: 4k, iodepth: 8, engine: uring-cmd}\n    end: {duration: 5s}\n";
    let p = preset::parse_str(text, "inline").expect("valid");
    let plan = plan::expand(&p, &target(TIB, 512), &PlanOptions::default()).expect("plan");
    let sq = SqPoll {
        idle_ms: SqPoll::DEFAULT_IDLE_MS,
        cpu: None,
    };
    let got: Vec<(EngineKind, EngineOptions)> = plan
        .steps
        .iter()
        .map(|s| (s.engine, s.engine_options))
        .collect();
    assert_eq!(
        got,
        vec![
            (
                EngineKind::Nop,
                EngineOptions {
                    hipri: false,
                    sqpoll: Some(sq)
                }
            ),
            (
                EngineKind::IoUring,
                EngineOptions {
                    hipri: true,
                    sqpoll: None
                }
            ),
            (EngineKind::UringCmd, EngineOptions::default()),
        ]
    );
    // The step's spec carries them to the engine.
    let spec = plan.steps[1].to_step_spec(None);
    assert!(spec.options.hipri);
    // fio's job file says the same in fio's words.
    let fio = plan::fio::job_file(&p, &plan, &target(TIB, 512));
    assert!(fio.contains("ioengine=null\nsqthread_poll=1\n"), "{fio}");
    assert!(fio.contains("hipri\n"), "{fio}");
    assert!(
        fio.contains("ioengine=io_uring_cmd\ncmd_type=nvme\n"),
        "{fio}"
    );

    // `idle` is a workload, not an engine; sync has no rings to poll.
    for (bad, says) in [
        ("engine: idle", "the idle engine is `workload: idle`"),
        ("engine: sync, hipri: true", "the sync engine has none"),
        ("engine: spdk", "spdk"),
    ] {
        let text = format!(
            "id: bad\nname: Bad\ndescription: d\nphases:\n  - name: p\n    workload: {{rw: randread, bs: 4k, iodepth: 8, {bad}}}\n    end: {{duration: 5s}}\n"
        );
        let e = preset::parse_str(&text, "inline")
            .expect_err(bad)
            .to_string();
        assert!(e.contains(says), "{bad}: {e}");
    }
}

/// The diskmark presets follow CrystalDiskMark 8's source (docs/DISKMARK.md): the four
/// tests' reads, then their writes, 5 s of no I/O between tests, each test a 5 s warm-up
/// and 5 runs of 5 s on the first 1 GiB, the best run kept.
#[test]
fn diskmark_presets_are_crystaldiskmarks_tests_best_of_five() {
    use drivescope::workload::{EngineKind, RunPick};
    let t = target(TIB, 512);
    // Per test: random, block size, queue depth, threads.
    type Test = (bool, u64, u32, u32);
    let profiles: [(&str, [Test; 4]); 2] = [
        (
            "diskmark",
            [
                (false, 1 << 20, 8, 1),
                (false, 1 << 20, 1, 1),
                (true, 4096, 32, 1),
                (true, 4096, 1, 1),
            ],
        ),
        (
            "diskmark-nvme",
            [
                (false, 1 << 20, 8, 1),
                (false, 128 << 10, 32, 1),
                (true, 4096, 32, 16),
                (true, 4096, 1, 1),
            ],
        ),
    ];
    for (id, tests) in profiles {
        let (_, plan) = expand(id, &t);
        check_steps(id, &plan, &t);
        assert_eq!(plan.steps.len(), 8 * 5 + 7, "{id}");
        let io: Vec<_> = plan
            .steps
            .iter()
            .filter(|s| s.engine != EngineKind::Idle)
            .collect();
        assert_eq!(io.len(), 40, "{id}");
        for (k, chunk) in io.chunks(5).enumerate() {
            let (random, bs, qd, jobs) = tests[k % 4];
            let read = k < 4;
            let rw = match (random, read) {
                (false, true) => RwMode::Read,
                (false, false) => RwMode::Write,
                (true, true) => RwMode::RandRead,
                (true, false) => RwMode::RandWrite,
            };
            for (n, s) in chunk.iter().enumerate() {
                let w = &s.workload;
                assert_eq!(
                    (w.rw, w.bs.max(), w.iodepth, w.jobs),
                    (rw, bs, qd, jobs),
                    "{id} {}",
                    s.name
                );
                assert_eq!(w.region.offset, 0);
                assert_eq!(w.region.len, GIB, "{id}: CrystalDiskMark's 1 GiB test size");
                assert_eq!(s.end.duration, Some(Duration::from_secs(5)));
                let run = s.run.expect("a run of a test");
                assert_eq!(
                    (run.n, run.of, run.pick),
                    (n as u32 + 1, 5, Some(RunPick::Best))
                );
                let ramp = if n == 0 { 5 } else { 0 };
                assert_eq!(
                    s.ramp,
                    Duration::from_secs(ramp),
                    "{id} {}: the warm-up pass",
                    s.name
                );
            }
        }
        for s in plan.steps.iter().filter(|s| s.engine == EngineKind::Idle) {
            assert_eq!(
                s.end.duration,
                Some(Duration::from_secs(5)),
                "{id}: interval"
            );
        }
        // An interval between tests, none inside one.
        for pair in plan.steps.windows(2) {
            let idle = |s: &plan::PlanStep| s.engine == EngineKind::Idle;
            assert!(!(idle(&pair[0]) && idle(&pair[1])), "{id}");
            if !idle(&pair[0]) && !idle(&pair[1]) {
                assert_eq!(
                    pair[0].phase, pair[1].phase,
                    "{id}: tests are separated by an interval"
                );
            }
        }
    }
}

/// `runs` repeats each step, with an idle step after each run when asked, time-scaled.
#[test]
fn runs_repeat_each_step_with_an_idle_time_after_each() {
    use drivescope::workload::EngineKind;
    let p = preset::parse_str(
        "id: r\nname: R\ndescription: Runs.\nphases:\n  - name: w\n    workload: {rw: randwrite, bs: 4k, iodepth: 4}\n    matrix: {iodepth: [1, 8]}\n    end: {duration: 10s}\n    runs: {count: 3, idle: 20s}\n",
        "runs.yaml",
    )
    .unwrap();
    let opts = PlanOptions {
        time_scale: 0.5,
        ..PlanOptions::default()
    };
    let plan = plan::expand(&p, &target(GIB, 512), &opts).unwrap();
    assert_eq!(plan.steps.len(), 2 * 3 * 2);
    for (i, s) in plan.steps.iter().enumerate() {
        if i % 2 == 1 {
            assert_eq!(s.engine, EngineKind::Idle, "{}", s.name);
            assert_eq!(s.end.duration, Some(Duration::from_secs(10)));
        } else {
            let run = s.run.unwrap();
            assert_eq!((run.n, run.of, run.pick), ((i / 2 % 3) as u32 + 1, 3, None));
            assert_eq!(s.workload.iodepth, if i < 6 { 1 } else { 8 });
            assert_eq!(s.end.duration, Some(Duration::from_secs(5)));
        }
    }
}

/// SNIA HIR (docs/PTS.md): preconditioning rounds of 4 KiB random writes, then per wait
/// state of 5, 10, 15, 25 and 50 s, 360 bursts of 5 s each followed by the wait, then 30
/// minutes of continuous writes back to baseline.
#[test]
fn snia_hir_is_360_bursts_per_wait_state_and_a_baseline() {
    use drivescope::workload::EngineKind;
    let t = target(TIB, 512);
    let (_, plan) = expand("snia-hir", &t);
    check_steps("snia-hir", &plan, &t);
    let rounds = plan.phases[0].rounds.expect("preconditioning in rounds");
    assert_eq!((rounds.max_rounds, rounds.metric), (25, Metric::Iops));
    let names: Vec<&str> = plan.phases.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "precondition",
            "wait-5s",
            "baseline-after-5s",
            "wait-10s",
            "baseline-after-10s",
            "wait-15s",
            "baseline-after-15s",
            "wait-25s",
            "baseline-after-25s",
            "wait-50s",
            "baseline-after-50s"
        ]
    );
    for s in plan.steps.iter().filter(|s| s.engine != EngineKind::Idle) {
        let w = &s.workload;
        assert_eq!(
            (w.rw, w.bs.max(), w.iodepth, w.jobs),
            (RwMode::RandWrite, 4096, 32, 4)
        );
        assert_eq!(w.region.len, TIB, "the whole target");
    }
    for (k, wait) in [5u64, 10, 15, 25, 50].into_iter().enumerate() {
        let ph = &plan.phases[1 + 2 * k];
        let steps = &plan.steps[ph.steps.clone()];
        assert_eq!(steps.len(), 720, "{}", ph.name);
        for pair in steps.chunks(2) {
            assert_eq!(pair[0].end.duration, Some(Duration::from_secs(5)));
            assert_eq!(pair[1].engine, EngineKind::Idle);
            assert_eq!(pair[1].end.duration, Some(Duration::from_secs(wait)));
        }
        let base = &plan.steps[plan.phases[2 + 2 * k].steps.clone()];
        assert_eq!(base.len(), 1);
        assert_eq!(base[0].end.duration, Some(Duration::from_secs(1800)));
    }
}

/// SNIA XSR (docs/PTS.md): one thread at QD 32, 1-minute tests: 480 of SEQ 1024 KiB
/// writes, 360 of RND 8 KiB writes, 480 of SEQ 1024 KiB writes.
#[test]
fn snia_xsr_is_three_access_groups_of_one_minute_tests() {
    let t = target(TIB, 512);
    let (_, plan) = expand("snia-xsr", &t);
    check_steps("snia-xsr", &plan, &t);
    let groups = [
        (RwMode::Write, 1u64 << 20, 480usize),
        (RwMode::RandWrite, 8192, 360),
        (RwMode::Write, 1 << 20, 480),
    ];
    assert_eq!(plan.phases.len(), 3);
    for (ph, (rw, bs, n)) in plan.phases.iter().zip(groups) {
        let steps = &plan.steps[ph.steps.clone()];
        assert_eq!(steps.len(), n, "{}", ph.name);
        for s in steps {
            let w = &s.workload;
            assert_eq!(
                (w.rw, w.bs.max(), w.iodepth, w.jobs),
                (rw, bs, 32, 1),
                "{}",
                s.name
            );
            assert_eq!(s.end.duration, Some(Duration::from_secs(60)));
        }
    }
}

/// SNIA DIRTH (docs/PTS.md): TC 32 / QD 32 random-write rounds, then rounds of the 49
/// thread x queue depth combinations from high to low, 32 x 32 tracked, then the max, mid
/// and min points' pre-write and histogram, their shapes taken from the rounds.
#[test]
fn snia_dirth_is_the_thread_by_queue_depth_matrix_in_rounds() {
    let t = target(TIB, 512);
    let (_, plan) = expand("snia-dirth", &t);
    check_steps("snia-dirth", &plan, &t);
    let di = &plan.phases[1];
    let rounds = di.rounds.expect("demand intensity in rounds");
    assert_eq!((rounds.max_rounds, rounds.steps_per_round), (25, 50));
    let steps = &plan.steps[di.steps.clone()];
    // Each round opens with its 5-minute TC 32 / QD 32 random-write pre-write (Test Flow
    // 3), a step of the round but none of its combinations.
    for (k, round) in steps.chunks(50).enumerate() {
        let p = &round[0];
        assert!(p.prewrite && !p.tracked, "{}", p.name);
        assert_eq!(p.round, Some(k as u32 + 1), "{}", p.name);
        let w = &p.workload;
        assert_eq!(
            (w.rw, w.bs.max(), w.jobs, w.iodepth),
            (RwMode::RandWrite, 8192, 32, 32)
        );
        assert_eq!(p.end.duration, Some(Duration::from_secs(300)));
        assert!(round[1..].iter().all(|s| !s.prewrite), "one a round");
    }
    let levels = [32u32, 16, 8, 6, 4, 2, 1];
    for (i, s) in steps[1..50].iter().enumerate() {
        let w = &s.workload;
        assert_eq!(
            (w.jobs, w.iodepth),
            (levels[i / 7], levels[i % 7]),
            "{}",
            s.name
        );
        assert_eq!((w.rw, w.rwmixread, w.bs.max()), (RwMode::RandRw, 65, 8192));
        assert_eq!(s.end.duration, Some(Duration::from_secs(60)));
        assert_eq!(s.tracked, i == 0, "{}: 32 x 32 is tracked", s.name);
    }
    let points: Vec<_> = plan.phases[2..].iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        points,
        [
            "max-point-prewrite",
            "max-point-histogram",
            "mid-point-prewrite",
            "mid-point-histogram",
            "min-point-prewrite",
            "min-point-histogram"
        ]
    );
    use drivescope::plan::operating::{OperatingPoint, ShapeFrom};
    for (i, p) in plan.phases[2..].iter().enumerate() {
        let point = [
            OperatingPoint::Max,
            OperatingPoint::Mid,
            OperatingPoint::Min,
        ][i / 2];
        assert_eq!(
            p.shape_from,
            Some(ShapeFrom { phase: 1, point }),
            "{}",
            p.name
        );
        let s = &plan.steps[p.steps.start];
        let minutes = if i % 2 == 0 { 60 } else { 10 };
        assert_eq!(s.end.duration, Some(Duration::from_secs(minutes * 60)));
    }
}

/// A phase's shape_from must name an earlier phase of rounds.
#[test]
fn shape_from_must_name_an_earlier_phase_of_rounds() {
    let base = "id: t\nname: T\ndescription: d\nphases:\n  - name: a\n    workload: {rw: randwrite, bs: 4k, iodepth: 1}\n    end: {duration: 1m}\n";
    let t = target(TIB, 512);
    for (extra, what) in [
        ("    shape_from: {phase: b, point: max}\n  - name: b\n    workload: {rw: randwrite, bs: 4k, iodepth: 1}\n    end: {duration: 1m}\n    rounds: {window: 2, max: 2, range: 20%, slope: 10%, track: {metric: iops}}\n", "a later phase"),
        ("  - name: b\n    workload: {rw: randwrite, bs: 4k, iodepth: 1}\n    end: {duration: 1m}\n    shape_from: {phase: a, point: mid}\n", "a phase without rounds"),
    ] {
        let p = drivescope::preset::parse_str(&format!("{base}{extra}"), "inline").expect("parses");
        let e = plan::expand(&p, &t, &PlanOptions::default()).expect_err(what);
        assert!(e.to_string().contains("not a phase of rounds before it"), "{what}: {e}");
    }
}

/// SNIA ECW (docs/PTS.md): DIRTH's flow on the composite workload: every step the
/// composite block size mix at random over fio's zoned access ranges, 40% reads in the
/// thread x queue depth rounds; the fio export says both as fio writes them.
#[test]
fn snia_ecw_is_dirth_s_flow_on_the_composite_workload() {
    let t = target(TIB, 512);
    let (p, plan) = expand("snia-ecw", &t);
    check_steps("snia-ecw", &plan, &t);
    let mix = "512/4:1k/1:1536/1:2k/1:2560/1:3k/1:3584/1:4k/67:8k/10:16k/7:32k/3:64k/3";
    let bs = drivescope::workload::BlockSizes::parse_split(mix).unwrap();
    let access: drivescope::workload::Access = "zoned:50/5:30/15:20/80".parse().unwrap();
    for s in &plan.steps {
        assert_eq!(s.workload.bs, bs, "{}", s.name);
        assert_eq!(s.workload.access, access, "{}", s.name);
        assert!(s.workload.rw.is_random(), "{}", s.name);
    }
    let di = &plan.phases[1];
    assert_eq!(di.rounds.expect("rounds").steps_per_round, 50);
    let steps = &plan.steps[di.steps.clone()];
    // The round's pre-write: random writes of the composite mix over the access ranges
    // (the loop above), TC 32 / QD 32.
    let w = &steps[0].workload;
    assert!(steps[0].prewrite);
    assert_eq!((w.rw, w.jobs, w.iodepth), (RwMode::RandWrite, 32, 32));
    let levels = [32u32, 16, 8, 6, 4, 2, 1];
    for (i, s) in steps[1..50].iter().enumerate() {
        let w = &s.workload;
        assert_eq!((w.jobs, w.iodepth), (levels[i / 7], levels[i % 7]));
        assert_eq!((w.rw, w.rwmixread), (RwMode::RandRw, 40));
    }
    let fio = plan::fio::job_file(&p, &plan, &t);
    let lines = |key: &str| fio.lines().filter(|l| l.starts_with(key)).count();
    assert_eq!(
        lines("random_distribution=zoned:50/5:30/15:20/80"),
        lines("rw=")
    );
    assert_eq!(lines(&format!("bssplit={mix}")), lines("rw="));
}

/// `presets fio --zoned` gives fio's zoned block device mode in `[global]` (every job
/// writes zones from their write pointers), which real fio parses; without it, none.
#[test]
fn the_fio_export_of_a_zoned_target_uses_zonemode_zbd() {
    let (code, job, err) = drivescope(&["presets", "fio", "zoned-seq-write", "--zoned"]);
    assert_eq!(code, 0, "{err}");
    let global = &job[job.find("\n[global]\n").expect("a [global]")..];
    let global = &global[..global[1..].find("\n[").map_or(global.len(), |i| i + 1)];
    assert_eq!(
        global.lines().filter(|l| *l == "zonemode=zbd").count(),
        1,
        "{job}"
    );
    assert_eq!(job.lines().filter(|l| l.starts_with("zonemode")).count(), 1);
    let (code, plain, err) = drivescope(&["presets", "fio", "zoned-seq-write"]);
    assert_eq!(code, 0, "{err}");
    assert!(!plain.lines().any(|l| l.starts_with("zonemode")), "{plain}");
    if Command::new("fio").arg("--version").output().is_err() {
        skip!(Tool, "fio is not installed");
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("zoned.fio");
    std::fs::write(&path, &job).unwrap();
    let out = Command::new("fio")
        .arg("--parse-only")
        .arg(&path)
        .env("TARGET", dir.path().join("target.bin"))
        .output()
        .expect("run fio");
    assert!(
        out.status.success(),
        "fio refuses the zoned job file: {}{}\n{job}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// One estimator (issue 43): for a 1 GiB target, the preset picker shows for every
/// built-in preset the duration `presets list --capacity 1GiB` prints, in the same
/// readable units (`2 s*`, never `2.147483648s*`), and both explain the `*`.
#[test]
fn the_picker_and_presets_list_estimate_alike_on_a_1_gib_target() {
    let (code, out, err) = drivescope(&["presets", "list", "--capacity", "1GiB"]);
    assert_eq!(code, 0, "{err}");
    let footnote = drivescope::plan::estimate_footnote(drivescope::plan::ASSUMED_BYTES_PER_S);
    assert!(out.contains(&footnote), "the * explained: {out}");
    let mut lines = out.lines().skip_while(|l| !l.starts_with("ID "));
    let header = lines.next().expect("the table's header");
    let at = header.find("DURATION").expect("a DURATION column");
    let listed: std::collections::BTreeMap<String, String> = lines
        .filter_map(|l| {
            let id = l.split_whitespace().next()?;
            Some((id.to_string(), l.get(at..)?.trim().to_string()))
        })
        .collect();
    let picker = drivescope::dashboard::views::preset_entries(1 << 30, 512, 1.0);
    let mut compared = 0;
    for p in picker.iter().filter(|p| p.fio_job.is_none()) {
        let list = listed
            .get(&p.id)
            .unwrap_or_else(|| panic!("{} listed", p.id));
        assert_eq!(&p.estimate, list, "{}", p.id);
        assert!(
            !p.estimate.contains('.') && !p.estimate.contains("ms"),
            "{}: {} reads as a duration",
            p.id,
            p.estimate
        );
        compared += 1;
    }
    assert_eq!(compared, listed.len(), "every listed preset compared");
    assert!(
        picker.iter().any(|p| p.estimate.ends_with('*')),
        "some estimate assumes a throughput"
    );
}
