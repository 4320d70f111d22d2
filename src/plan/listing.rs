//! A plan as a reader sees it before running it: one [`PlannedStep`] per step with its phase,
//! label, workload, arrival process, rate (a sweep point's percentage and, given the IOPS a
//! probe would measure, its target, rounded and cut as a run would) and end; as JSON objects
//! or as the table `presets plan` and `presets show --plan` print.

use std::fmt::Write as _;

use serde::Serialize;

use super::{CurveWalk, Plan, PlanStep, RateSkip, SteadyRule, StepRate};
use crate::units::{format_duration, format_size};
use crate::workload::{Arrivals, Workload};

/// How a step ends, in plain units.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlannedEnd {
    /// Measured seconds after the ramp.
    pub duration_s: Option<f64>,
    /// Bytes moved (ramp included).
    pub bytes: Option<u64>,
    /// A live fio-style steady-state rule that may end the step earlier.
    pub steady: Option<SteadyRule>,
}

/// One step of a plan, as a run would see it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlannedStep {
    /// Position in the plan, from 0 (as the run's step objects count).
    pub index: usize,
    /// Index of the preset phase, from 0.
    pub phase: usize,
    pub phase_name: String,
    pub label: String,
    /// SNIA round, from 1.
    pub round: Option<u32>,
    /// The sweep point's percentage; `None` outside sweeps.
    pub percent: Option<f64>,
    /// The total rate the step would run at; `None` when closed-loop, or when it depends
    /// on a measurement not given.
    pub target_iops: Option<f64>,
    /// How its I/Os arrive; `None` for closed-loop steps.
    pub arrivals: Option<Arrivals>,
    pub rate: StepRate,
    /// It has a target but runs closed-loop at its queue depth (a sweep point at or above
    /// 100%, as vdbench's threads bound the outstanding I/O).
    pub closed_loop: bool,
    /// Why a run would skip it, given the measurement (vdbench's curve stop).
    pub skipped: Option<String>,
    /// The engine's workload, its `rate_iops` the rate it paces at (`target_iops`, unless
    /// closed-loop).
    pub workload: Workload,
    pub ramp_s: f64,
    pub end: PlannedEnd,
}

/// The steps of `plan`; every measured maximum a rate refers to (a sweep's probe, a phase a
/// rate is a percentage of) is taken to be `probe_iops`.
pub fn planned_steps(plan: &Plan, probe_iops: Option<f64>) -> Vec<PlannedStep> {
    let measured = |_: usize| probe_iops;
    let mut curve = CurveWalk::default();
    plan.steps
        .iter()
        .enumerate()
        .map(|(index, s)| {
            let (target_iops, skipped) = match curve.resolve(s, &measured) {
                Ok(t) => (t, None),
                Err(RateSkip::NoMeasurement { .. }) => (None, None),
                Err(why) => (None, Some(why.to_string())),
            };
            let workload = s.to_step_spec(target_iops).workload;
            let paced = s.rate != StepRate::Max && !s.closed_loop;
            PlannedStep {
                index,
                phase: s.phase,
                phase_name: plan
                    .phases
                    .get(s.phase)
                    .map(|p| p.name.clone())
                    .unwrap_or_default(),
                label: s.name.clone(),
                round: s.round,
                percent: s.sweep_point,
                target_iops,
                arrivals: paced.then_some(s.workload.arrivals),
                rate: s.rate,
                closed_loop: s.closed_loop,
                skipped,
                workload,
                ramp_s: s.ramp.as_secs_f64(),
                end: PlannedEnd {
                    duration_s: s.end.duration.map(|d| d.as_secs_f64()),
                    bytes: s.end.bytes,
                    steady: s.steady,
                },
            }
        })
        .collect()
}

fn workload_text(w: &Workload) -> String {
    format!(
        "{} {}@{}",
        w.shape(),
        format_size(w.region.len),
        format_size(w.region.offset)
    )
}

/// A step whose threads x queue depth are picked when it starts: its workload with the
/// shape named by where it comes from (`randwrite 8KiB max of demand-intensity ...`).
fn shape_from_text(w: &Workload, from: super::operating::ShapeFrom, plan: &Plan) -> String {
    use super::operating::OperatingPoint as P;
    let point = match from.point {
        P::Max => "max",
        P::Mid => "mid",
        P::Min => "min",
    };
    let of = plan.phases.get(from.phase).map_or("?", |p| p.name.as_str());
    let text = workload_text(w);
    let shape = format!("QD{}×{}", w.iodepth, w.jobs);
    text.replacen(&shape, &format!("{point} point of {of}"), 1)
}

fn rate_text(p: &PlannedStep, plan: &Plan) -> String {
    let of = |phase: usize| {
        plan.phases
            .get(phase)
            .map(|p| p.name.as_str())
            .unwrap_or("?")
    };
    let base = match p.rate {
        StepRate::Max => return "max".to_string(),
        StepRate::Iops(v) => return format!("{v:.0} IOPS"),
        StepRate::PercentOfPhase { percent, .. } if p.percent.is_some() => {
            format!("{percent}% of the probe")
        }
        StepRate::PercentOfPhase { phase, percent } => format!("{percent}% of {}", of(phase)),
    };
    match (p.target_iops, &p.skipped) {
        (Some(t), _) if p.closed_loop => format!("{base} = {t:.0} IOPS, run closed-loop"),
        (Some(t), _) => format!("{base} = {t:.0} IOPS"),
        (None, Some(_)) => format!("{base}: skipped"),
        (None, None) => base,
    }
}

fn end_text(s: &PlanStep) -> String {
    let mut parts = Vec::new();
    if let Some(d) = s.end.duration {
        parts.push(format_duration(d));
    }
    if let Some(b) = s.end.bytes {
        parts.push(format!("{} moved", format_size(b)));
    }
    if let Some(SteadyRule::Fio {
        metric,
        slope,
        limit_percent,
        window,
        ramp,
        ..
    }) = s.steady
    {
        let slope = if slope { "_slope" } else { "" };
        parts.push(format!(
            "steady {}{slope}:{limit_percent}% over {window} intervals after {ramp}",
            metric.as_str()
        ));
    }
    parts.extend(s.thermal.describe());
    let mut out = parts.join(" or ");
    if !s.ramp.is_zero() {
        let _ = write!(out, ", after a {} ramp", format_duration(s.ramp));
    }
    out
}

/// The columns of [`plan_rows`].
pub const PLAN_COLUMNS: [&str; 7] = ["#", "PHASE", "STEP", "WORKLOAD", "ARRIVALS", "RATE", "ENDS"];

/// The plan's steps as rows of [`PLAN_COLUMNS`] in words (steps numbered from 1), as
/// `presets plan` prints them and the report shows them.
pub fn plan_rows(plan: &Plan, steps: &[PlannedStep]) -> Vec<[String; 7]> {
    steps
        .iter()
        .zip(&plan.steps)
        .map(|(p, s)| {
            [
                (p.index + 1).to_string(),
                p.phase_name.clone(),
                p.label.clone(),
                match plan.phases.get(s.phase).and_then(|ph| ph.shape_from) {
                    _ if s.engine == crate::workload::EngineKind::Idle => {
                        crate::workload::IDLE_SHAPE.to_string()
                    }
                    Some(from) => shape_from_text(&p.workload, from, plan),
                    None => workload_text(&p.workload),
                },
                p.arrivals.map_or("-", Arrivals::as_str).to_string(),
                if s.engine == crate::workload::EngineKind::Idle {
                    "-".to_string()
                } else {
                    rate_text(p, plan)
                },
                end_text(s),
            ]
        })
        .collect()
}

/// The plan as a table, one line per step, then why any step would be skipped.
pub fn plan_table(plan: &Plan, steps: &[PlannedStep]) -> String {
    let header = PLAN_COLUMNS;
    let rows = plan_rows(plan, steps);
    let mut widths = header.map(|h| h.chars().count());
    for r in &rows {
        for (w, cell) in widths.iter_mut().zip(r) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let line = |out: &mut String, cells: &[&str]| {
        let mut l = String::new();
        for (i, (cell, w)) in cells.iter().zip(widths).enumerate() {
            if i + 1 == cells.len() {
                l.push_str(cell);
            } else {
                let pad = w.saturating_sub(cell.chars().count());
                // The step number is right-aligned, the rest left-aligned.
                if i == 0 {
                    let _ = write!(l, "{}{cell}  ", " ".repeat(pad));
                } else {
                    let _ = write!(l, "{cell}{}  ", " ".repeat(pad));
                }
            }
        }
        let _ = writeln!(out, "{}", l.trim_end());
    };
    line(&mut out, &header);
    for r in &rows {
        let cells: Vec<&str> = r.iter().map(String::as_str).collect();
        line(&mut out, &cells);
    }
    for p in steps {
        if let Some(why) = &p.skipped {
            let _ = writeln!(out, "step {} ({}) is skipped: {why}", p.index + 1, p.label);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{expand, PlanOptions, TargetFacts};

    fn sweep_plan(points: &str) -> Plan {
        let text = format!(
            "id: t\nname: T\ndescription: d\nphases:\n  - name: s\n    workload: {{rw: randread, bs: 4k, iodepth: 4, arrivals: poisson}}\n    ramp: 5s\n    end: {{duration: 30s}}\n    sweep: {{points: {points}}}\n"
        );
        let p = crate::preset::parse_str(&text, "inline").expect("valid");
        let facts = TargetFacts {
            capacity_bytes: 1 << 30,
            logical_block_size: 512,
        };
        expand(&p, &facts, &PlanOptions::default()).expect("plan")
    }

    #[test]
    fn sweep_points_get_their_targets_from_the_probe() {
        let plan = sweep_plan("[10%, 50%, 120%]");
        let steps = planned_steps(&plan, Some(10_005.0));
        let targets: Vec<Option<f64>> = steps.iter().map(|s| s.target_iops).collect();
        // 50% of 10,005 is 5,002 in integers: up to the next 100.
        assert_eq!(
            targets,
            vec![None, Some(1000.0), Some(5100.0), Some(12_100.0)]
        );
        let percents: Vec<Option<f64>> = steps.iter().map(|s| s.percent).collect();
        assert_eq!(percents, vec![None, Some(10.0), Some(50.0), Some(120.0)]);
        assert_eq!(steps[0].arrivals, None, "the probe is closed-loop");
        assert_eq!(steps[1].arrivals, Some(Arrivals::Poisson));
        assert_eq!(steps[2].workload.rate_iops, Some(5100.0));
        // Without the probe's IOPS the targets are unknown, not skipped.
        let unknown = planned_steps(&plan, None);
        assert!(unknown
            .iter()
            .all(|s| s.target_iops.is_none() && s.skipped.is_none()));
        let table = plan_table(&plan, &steps);
        assert!(table.contains("10% of the probe = 1000 IOPS"), "{table}");
        assert!(table.contains("30s, after a 5s ramp"), "{table}");
        assert!(table.contains("poisson"), "{table}");
    }

    #[test]
    fn a_zero_rate_cuts_the_curve_as_a_run_would() {
        let plan = sweep_plan("[0.5%, 50%]");
        let steps = planned_steps(&plan, Some(10_000.0));
        assert_eq!(steps[1].target_iops, None);
        assert!(steps[1]
            .skipped
            .as_deref()
            .is_some_and(|s| s.contains("0 IOPS")));
        assert!(steps[2]
            .skipped
            .as_deref()
            .is_some_and(|s| s.contains("earlier point")));
        let table = plan_table(&plan, &steps);
        assert!(table.contains("step 3 (s 50%) is skipped"), "{table}");
    }
}
