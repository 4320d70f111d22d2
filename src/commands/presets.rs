//! `drivescope presets list|show|plan|validate|fio`: the presets known to this machine, one
//! resolved, its expanded plan, files checked, and an equivalent fio job file.

use crate::cli::{AssumedTarget, PresetsAction, PresetsArgs};
use std::path::PathBuf;

use thiserror::Error;

use crate::output::{err_line, Output, Stream};
use crate::plan::{self, Plan, PlanError, PlanOptions, TargetFacts};
use crate::preset::{self, Preset, PresetError};
use crate::units::{count, format_size};

/// Why a `presets` command failed.
#[derive(Debug, Error)]
pub enum PresetsError {
    #[error(transparent)]
    Preset(#[from] PresetError),
    #[error("{origin}: cannot be expanded for a {capacity} target: {source}")]
    Plan {
        origin: String,
        capacity: String,
        #[source]
        source: PlanError,
    },
    #[error("cannot write a fio job file: {0}")]
    NotInFio(#[from] crate::fio::job::NotInFio),
    #[error("cannot print the preset as YAML: {0}")]
    Yaml(#[from] serde_yaml::Error),
    #[error("cannot print the plan as JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("{failed} of {total} preset files are invalid")]
    Invalid { failed: usize, total: usize },
    #[error("logical block size {0} is not a power of two up to 64KiB")]
    BlockSize(u64),
}

/// Writes `text` to stdout through the one writer: a closed stdout (`| head`) ends the
/// output, and the binary's exit says so.
fn emit(text: &str) {
    Output::default().text(Stream::Out, text);
}

fn options(t: &AssumedTarget) -> PlanOptions {
    PlanOptions {
        time_scale: t.time_scale,
        ..PlanOptions::default()
    }
}

fn facts(t: &AssumedTarget) -> Result<TargetFacts, PresetsError> {
    let lbs = t.logical_block_size;
    if !lbs.is_power_of_two() || lbs > 65536 {
        return Err(PresetsError::BlockSize(lbs));
    }
    Ok(TargetFacts {
        capacity_bytes: t.capacity,
        logical_block_size: lbs as u32,
    })
}

fn expand(p: &Preset, facts: &TargetFacts, opts: &PlanOptions) -> Result<Plan, PresetsError> {
    plan::expand(p, facts, opts).map_err(|source| PresetsError::Plan {
        origin: p.origin.clone(),
        capacity: format_size(facts.capacity_bytes),
        source,
    })
}

/// Runs a `presets` subcommand, printing to stdout.
pub fn run(args: &PresetsArgs) -> Result<(), PresetsError> {
    match &args.action {
        PresetsAction::List {
            target,
            assume_throughput,
        } => list(&facts(target)?, &options(target), *assume_throughput),
        PresetsAction::Show {
            preset,
            plan,
            target,
        } => show(preset, *plan, &facts(target)?, &options(target)),
        PresetsAction::Plan {
            preset,
            target,
            probe_iops,
            json,
        } => plan_of(
            preset,
            &facts(target)?,
            &options(target),
            *probe_iops,
            *json,
        ),
        PresetsAction::Validate { files, target } => {
            validate(files, &facts(target)?, &options(target))
        }
        PresetsAction::Fio {
            preset,
            target,
            zoned,
        } => {
            let facts = facts(target)?;
            let p = preset::find(preset)?;
            let plan = expand(&p, &facts, &options(target))?;
            plan::fio::check_expressible(&plan)?;
            emit(&plan::fio::job_file_on(&p, &plan, &facts, *zoned));
            Ok(())
        }
    }
}

fn list(facts: &TargetFacts, opts: &PlanOptions, throughput: u64) -> Result<(), PresetsError> {
    let cat = preset::catalog();
    for problem in &cat.problems {
        err_line(&format!("drivescope: skipped: {problem}"));
    }
    emit(&plan::presets_table(&cat.presets, facts, opts, throughput));
    Ok(())
}

fn show(
    id: &str,
    with_plan: bool,
    facts: &TargetFacts,
    opts: &PlanOptions,
) -> Result<(), PresetsError> {
    let p = preset::find(id)?;
    let yaml = preset::to_yaml(&p)?;
    let plan = match with_plan {
        true => Some(expand(&p, facts, opts)?),
        false => None,
    };
    emit(&plan::preset_text(
        &p,
        &yaml,
        plan.as_ref().map(|plan| (plan, facts)),
    ));
    Ok(())
}

/// `presets plan`: the expanded plan as a table, or one JSON object per step.
fn plan_of(
    id: &str,
    facts: &TargetFacts,
    opts: &PlanOptions,
    probe_iops: Option<f64>,
    json: bool,
) -> Result<(), PresetsError> {
    let p = preset::find(id)?;
    let plan = expand(&p, facts, opts)?;
    if !json {
        emit(&plan::plan_text(&p, &plan, facts, probe_iops));
        return Ok(());
    }
    let mut lines = Vec::new();
    for step in plan::planned_steps(&plan, probe_iops) {
        let line = crate::printer::versioned(serde_json::to_value(&step)?);
        lines.push(format!("{line}\n"));
    }
    emit(&lines.concat());
    Ok(())
}

fn validate(
    files: &[PathBuf],
    facts: &TargetFacts,
    opts: &PlanOptions,
) -> Result<(), PresetsError> {
    let mut errors = Vec::new();
    for f in files {
        let checked = preset::parse_file(f)
            .map_err(PresetsError::from)
            .and_then(|p| expand(&p, facts, opts).map(|plan| (p, plan)));
        match checked {
            Ok((p, plan)) => emit(&format!(
                "{}: ok: '{}', {}, {} for a {} target\n",
                f.display(),
                p.id,
                count(p.phases.len(), "phase"),
                count(plan.steps.len(), "step"),
                format_size(facts.capacity_bytes)
            )),
            Err(e) => errors.push(e),
        }
    }
    if errors.len() == 1 && files.len() == 1 {
        if let Some(e) = errors.pop() {
            return Err(e);
        }
    }
    if errors.is_empty() {
        return Ok(());
    }
    for e in &errors {
        err_line(&format!("drivescope: {e}"));
    }
    Err(PresetsError::Invalid {
        failed: errors.len(),
        total: files.len(),
    })
}
