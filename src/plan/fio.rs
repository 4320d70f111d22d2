//! An equivalent fio job file for a plan, so any result can be reproduced with fio. What fio
//! cannot express (rates derived from a measured maximum, SNIA rounds with their
//! cross-step steady state) is said in comments next to the job it concerns.

use std::fmt::Write as _;

use super::{Plan, PlanStep, SteadyRule, StepRate, TargetFacts};
use crate::fio::job::fio_secs;
use crate::preset::Preset;
use crate::units::format_size;
use crate::workload::Arrivals;

fn section_name(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        match c {
            '%' => out.push_str("pct"),
            c if c.is_ascii_alphanumeric() || c == '.' => out.push(c),
            _ => {
                if !out.ends_with('-') {
                    out.push('-');
                }
            }
        }
    }
    out
}

/// Words of `text` in lines of at most `width` characters (longer words stand alone).
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut cur = String::new();
    for word in text.split_whitespace() {
        if !cur.is_empty() && cur.len() + 1 + word.len() > width {
            lines.push(std::mem::take(&mut cur));
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(word);
    }
    if !cur.is_empty() {
        lines.push(cur);
    }
    lines
}

fn write_step(out: &mut String, plan: &Plan, step: &PlanStep) {
    let w = &step.workload;
    let thermal = step.thermal.describe();
    if step.engine == crate::workload::EngineKind::Idle {
        let until: String = thermal.iter().map(|t| format!(", or until {t}")).collect();
        let text = format!(
            "[{}]: idle, no I/O, for at most {}{until}. fio has no idle job: wait that long \
             before the next job (drivescope watches the drive's temperature meanwhile).",
            section_name(&step.name),
            fio_secs(step.end.duration.unwrap_or_default()),
        );
        out.push('\n');
        for l in wrap(&text, 88) {
            let _ = writeln!(out, "# {l}");
        }
        return;
    }
    let _ = writeln!(out, "\n[{}]", section_name(&step.name));
    if !thermal.is_empty() {
        let text = format!(
            "drivescope also ends this step once {}; fio cannot watch the drive's \
             temperature, so runtime is the cap",
            thermal.join(", or ")
        );
        for l in wrap(&text, 88) {
            let _ = writeln!(out, "# {l}");
        }
    }
    let _ = writeln!(out, "stonewall");
    match step.engine {
        crate::workload::EngineKind::Nop => {
            let _ = writeln!(
                out,
                "# drivescope's nop engine: io_uring NOPs; fio's nearest is"
            );
            let _ = writeln!(out, "ioengine=null");
        }
        crate::workload::EngineKind::UringCmd => {
            let _ = writeln!(out, "ioengine=io_uring_cmd\ncmd_type=nvme");
        }
        crate::workload::EngineKind::Sync => {
            let _ = writeln!(out, "ioengine=psync");
        }
        crate::workload::EngineKind::IoUring
        | crate::workload::EngineKind::Idle
        | crate::workload::EngineKind::Fio => {}
    }
    if step.engine_options.hipri {
        let _ = writeln!(out, "hipri");
    }
    if let Some(p) = step.engine_options.sqpoll {
        let _ = writeln!(out, "sqthread_poll=1");
        if let Some(cpu) = p.cpu {
            let _ = writeln!(out, "sqthread_poll_cpu={cpu}");
        }
    }
    crate::fio::job::shape_lines(out, w);
    crate::fio::job::end_lines(out, step.ramp, &step.end, w.jobs);
    match step.rate {
        StepRate::Max => {}
        StepRate::Iops(v) => {
            let per_job = v / f64::from(w.jobs.max(1));
            let _ = writeln!(out, "# {v} IOPS in all: fio's rate_iops counts per job");
            let _ = writeln!(out, "rate_iops={}", per_job.ceil() as u64);
        }
        StepRate::PercentOfPhase { phase, percent } => {
            let probe = plan
                .phases
                .get(phase)
                .and_then(|p| {
                    plan.steps
                        .get(p.steps.clone())
                        .and_then(|s| s.iter().rev().find(|s| s.rate == StepRate::Max))
                })
                .map(|s| section_name(&s.name))
                .unwrap_or_else(|| format!("phase {}", phase + 1));
            if step.closed_loop {
                let _ = writeln!(
                    out,
                    "# {percent}% of the IOPS measured by [{probe}]: at or above 100% the point runs\n\
                     # closed-loop at this queue depth (no rate_iops), as vdbench's threads bound the\n\
                     # outstanding I/O and the drive runs at full queue."
                );
            } else {
                let _ = writeln!(
                    out,
                    "# fio cannot express this rate: {percent}% of the IOPS measured by [{probe}], in\n\
                     # vdbench's integer arithmetic: whole IOPS x whole percent / 100 (integer division),\n\
                     # then above 1000 up to the next multiple of 100, else up to the next multiple of\n\
                     # 10; a result of 0 ends the curve. Fill in that total divided by numjobs ({}):",
                    w.jobs
                );
                let _ = writeln!(out, "# rate_iops=");
            }
        }
    }
    if step.rate != StepRate::Max && !step.closed_loop && w.arrivals == Arrivals::Poisson {
        let _ = writeln!(out, "rate_process=poisson");
    }
    if let Some(SteadyRule::Fio {
        metric,
        slope,
        limit_percent,
        window,
        ramp,
        ..
    }) = step.steady
    {
        let m = if metric == super::Metric::Bw {
            "bw"
        } else {
            "iops"
        };
        let s = if slope { "_slope" } else { "" };
        let _ = writeln!(out, "ss={m}{s}:{limit_percent}%");
        let _ = writeln!(
            out,
            "ss_dur={}",
            fio_secs(super::mul_saturating(step.interval, window))
        );
        if ramp > 0 {
            let _ = writeln!(
                out,
                "ss_ramp={}",
                fio_secs(super::mul_saturating(step.interval, ramp))
            );
        }
    }
}

/// The fio job file for `plan` (expanded from `preset` for `target`). The target file or
/// device is read from the `TARGET` environment variable: `TARGET=/dev/nvme0n1 fio FILE`.
/// Whether every step of `plan` has a fio job that does what it does; the first that has
/// none, and why.
pub fn check_expressible(plan: &Plan) -> Result<(), crate::fio::job::NotInFio> {
    plan.steps
        .iter()
        .try_for_each(|s| crate::fio::job::expressible(&s.name, &s.workload))
}

pub fn job_file(preset: &Preset, plan: &Plan, target: &TargetFacts) -> String {
    job_file_on(preset, plan, target, false)
}

/// [`job_file`] for a target that is `zoned` or not (`zonemode=zbd` for a zoned one).
pub fn job_file_on(preset: &Preset, plan: &Plan, target: &TargetFacts, zoned: bool) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# fio job file for drivescope preset '{}': {}",
        preset.id, preset.name
    );
    for line in wrap(&preset.description, 86) {
        let _ = writeln!(out, "#   {line}");
    }
    let _ = writeln!(
        out,
        "# Sizes and offsets are for a target of {} (logical block size {}); regenerate with\n\
         # --capacity for another. Run it as: TARGET=/dev/XXX fio THIS_FILE",
        format_size(target.capacity_bytes),
        format_size(u64::from(target.logical_block_size))
    );
    for note in &plan.notes {
        let _ = writeln!(out, "# Note: {note}");
    }
    let _ = writeln!(
        out,
        "\n[global]\nioengine=io_uring\ndirect=1\nfilename=${{TARGET}}\ngroup_reporting=1\nrandrepeat=0\nrandseed={}",
        plan.steps.first().map(|s| s.workload.seed).unwrap_or(0)
    );
    crate::fio::job::zone_lines(&mut out, zoned);
    for phase in &plan.phases {
        let steps = plan.steps.get(phase.steps.clone()).unwrap_or_default();
        if let Some(r) = phase.rounds {
            let tracked = steps
                .iter()
                .find(|s| s.tracked)
                .map(|s| section_name(&s.name))
                .unwrap_or_default();
            let (window, range, slope) = match r.rule {
                SteadyRule::Snia {
                    window,
                    range_percent,
                    slope_percent,
                    ..
                } => (window, range_percent, slope_percent),
                SteadyRule::Fio { .. } => (0, 0.0, 0.0),
            };
            let text = format!(
                "Phase '{}' runs in SNIA rounds, which fio cannot express: below is round 1 ({} \
                 jobs). Repeat the round, at most {} times, until the {} of [{tracked}] over the \
                 last {window} rounds has a range within {range}% of their average and a \
                 least-squares excursion within {slope}% of it.",
                phase.name,
                r.steps_per_round,
                r.max_rounds,
                r.metric.as_str()
            );
            out.push('\n');
            for line in wrap(&text, 88) {
                let _ = writeln!(out, "# {line}");
            }
            for step in steps.iter().filter(|s| s.round == Some(1)) {
                write_step(&mut out, plan, step);
            }
        } else {
            if let Some(stop) = phase.stop_curve {
                let _ = writeln!(
                    out,
                    "\n# Phase '{}' stops its sweep once a point's mean response time is above {}\n\
                     # (vdbench's stopcurve); fio cannot: skip the remaining points by hand.",
                    phase.name,
                    crate::units::format_duration(stop)
                );
            }
            for step in steps {
                write_step(&mut out, plan, step);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fio::job::fio_size;

    #[test]
    fn sizes_read_as_fio_reads_them() {
        assert_eq!(fio_size(4096), "4k");
        assert_eq!(fio_size(512), "512");
        assert_eq!(fio_size(1 << 20), "1m");
        assert_eq!(fio_size(1536), "1536");
        assert_eq!(fio_secs(std::time::Duration::from_millis(1500)), "1500ms");
        assert_eq!(section_name("sweep 50% 4KiB"), "sweep-50pct-4KiB");
        assert_eq!(wrap("aa bb cc", 5), vec!["aa bb", "cc"]);
    }
}
