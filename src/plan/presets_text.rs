//! The text of `presets list` (the estimated durations' heading and the presets table),
//! `presets show` (the preset's header line, its YAML and its plan as comments) and
//! `presets plan` (the plan's heading, notes and table).

use std::fmt::Write as _;

use super::{
    estimate_footnote, estimate_text, expand, plan_table, planned_steps, Plan, PlanOptions,
    TargetFacts,
};
use crate::preset::Preset;
use crate::units::format_size;

/// `presets list`: the heading on how durations are estimated, then one row per preset
/// (id, name, estimated duration for `facts` at `throughput` bytes per second).
pub fn presets_table(
    presets: &[Preset],
    facts: &TargetFacts,
    opts: &PlanOptions,
    throughput: u64,
) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Estimated durations for a {} target (see --capacity and --assume-throughput).\n{}.\n\
         A range runs from steady state reached as early as possible to the most rounds.\n",
        format_size(facts.capacity_bytes),
        estimate_footnote(throughput)
    );
    let rows: Vec<(String, String, String)> = presets
        .iter()
        .map(|p| {
            let est = match expand(p, facts, opts) {
                Ok(plan) => estimate_text(&plan, throughput as f64),
                Err(e) => format!("(cannot expand: {e})"),
            };
            (p.id.clone(), p.name.clone(), est)
        })
        .collect();
    let w_id = rows.iter().map(|r| r.0.len()).max().unwrap_or(2).max(2);
    let w_name = rows
        .iter()
        .map(|r| r.1.chars().count())
        .max()
        .unwrap_or(4)
        .max(4);
    let _ = writeln!(out, "{:<w_id$}  {:<w_name$}  DURATION", "ID", "NAME");
    for (id, name, est) in rows {
        let _ = writeln!(out, "{id:<w_id$}  {name:<w_name$}  {est}");
    }
    out
}

/// `presets show`: a header line naming the preset and where it is from, its resolved
/// `yaml`, and with `plan` the plan's text, each line a YAML comment.
pub fn preset_text(p: &Preset, yaml: &str, plan: Option<(&Plan, &TargetFacts)>) -> String {
    let mut out = format!("# {} (from {})\n", p.id, p.origin);
    out.push_str(yaml);
    if let Some((plan, facts)) = plan {
        out.push('\n');
        for l in plan_text(p, plan, facts, None).lines() {
            let _ = writeln!(out, "# {l}");
        }
    }
    out
}

/// `presets plan`: the plan's heading, notes and table (a sweep point's target from
/// `probe_iops`).
pub fn plan_text(p: &Preset, plan: &Plan, facts: &TargetFacts, probe_iops: Option<f64>) -> String {
    let probe = probe_iops
        .map(|n| format!(", a probe measuring {n:.0} IOPS"))
        .unwrap_or_default();
    let mut out = format!(
        "Plan of {} for a {} target{probe}: {}, estimated {}\n",
        p.id,
        format_size(facts.capacity_bytes),
        crate::units::count(plan.steps.len(), "step"),
        estimate_text(plan, super::ASSUMED_BYTES_PER_S as f64)
    );
    for note in &plan.notes {
        let _ = writeln!(out, "note: {note}");
    }
    out.push_str(&plan_table(plan, &planned_steps(plan, probe_iops)));
    out
}
