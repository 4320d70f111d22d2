//! A run of an fio job file (`--fio-job`) made a plan like any other: fio checks the file
//! (`--parse-only`), drivescope reads its steps and targets, every file or device a job
//! touches goes through the write guard (a write needs the same `--destroy-data`
//! confirmation as drivescope's own), and each step (jobs up to the next `stonewall`) becomes
//! a plan step run by the fio engine. Nothing is created or written before every check passed.

use std::time::Duration;

use super::choice::label_of;
use super::error::RunError;
use super::request::{FioJobRequest, FioRun, Prepared, RunRequest, RunWhat};
use crate::engine;
use crate::fio::file::{self as fio_file, FileStep, JobFile};
use crate::plan::{Plan, PlanStep, StepRate};
use crate::test_target::guard::same_path;
use crate::test_target::{self, PreparedTarget, TargetError, TargetRequest};
use crate::workload::{
    BlockSizes, EngineKind, FioFileStep, FioTarget, Region, RwMode, StepEnd, Workload,
};

/// The one workload that describes a step's jobs, as far as one can: the pattern of all
/// of them, the first job's block size, depth and direct flag, every job counted.
fn step_workload(step: &FileStep, size: u64, seed: u64) -> Workload {
    let jobs = &step.jobs;
    let reads = jobs.iter().any(|j| j.reads());
    let writes = jobs.iter().any(|j| j.writes());
    let random = jobs.iter().any(|j| j.rw().starts_with("rand"));
    let all = |modes: &[&str]| jobs.iter().all(|j| modes.contains(&j.rw()));
    let rw = match (reads, writes, random) {
        // Trims are not writes to the figures: a step of trim jobs is a trim step.
        _ if all(&["trimwrite", "randtrimwrite"]) => RwMode::TrimWrite,
        (_, _, false) if all(&["trim"]) => RwMode::Trim,
        _ if all(&["trim", "randtrim"]) => RwMode::RandTrim,
        (true, true, false) => RwMode::Rw,
        (true, true, true) => RwMode::RandRw,
        (false, true, false) => RwMode::Write,
        (false, true, true) => RwMode::RandWrite,
        (_, false, true) => RwMode::RandRead,
        (_, false, false) => RwMode::Read,
    };
    let first = &jobs[0];
    let rwmixread = match rw {
        RwMode::Rw | RwMode::RandRw => first.rwmixread(),
        RwMode::Read | RwMode::RandRead => 100,
        RwMode::Write | RwMode::RandWrite | RwMode::Trim | RwMode::RandTrim | RwMode::TrimWrite => {
            0
        }
    };
    // A job that only writes is labelled with its write sizes (`bs=4k,64k`); a bssplit
    // drivescope does not follow, with its one size.
    let bs = first.block_sizes(!reads).unwrap_or_else(|| {
        let bs = if reads { first.bs() } else { first.write_bs() };
        BlockSizes::single(bs.unwrap_or(4096))
    });
    let region = Region {
        offset: 0,
        len: size,
    };
    Workload {
        rwmixread,
        jobs: jobs
            .iter()
            .map(|j| j.number("numjobs").unwrap_or(1).max(1))
            .sum(),
        direct: first.direct(),
        ..Workload::new(rw, bs, first.queue_depth(), region, seed)
    }
}

/// The plan: one phase, a step for each group of jobs fio runs together.
fn plan_of(job: &JobFile, req: &RunRequest, size: u64) -> Plan {
    let name = job
        .path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "fio".into());
    // Each step named by its jobs' shapes; by their names too where two steps share them.
    let labels: Vec<String> = job.steps.iter().map(FileStep::workload_label).collect();
    let steps: Vec<PlanStep> = job
        .steps
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let shared = labels.iter().filter(|l| **l == labels[i]).count() > 1;
            let name = if shared {
                format!("{} ({})", labels[i], s.names())
            } else {
                labels[i].clone()
            };
            let ramp = s
                .jobs
                .iter()
                .filter_map(|j| j.ramp())
                .max()
                .unwrap_or(Duration::ZERO);
            let timed = s.jobs.iter().any(|j| j.flag("time_based"));
            let end = StepEnd {
                duration: s.jobs.iter().filter_map(|j| j.runtime()).max(),
                bytes: (!timed).then_some(size),
            };
            let workload = step_workload(s, size, req.plan.seed);
            PlanStep {
                // A step is held to a rate when every job of it is (fio's rate_iops).
                rate: s
                    .jobs
                    .iter()
                    .map(|j| j.target_iops())
                    .sum::<Option<f64>>()
                    .map_or(StepRate::Max, StepRate::Iops),
                ramp,
                engine: EngineKind::Fio,
                fio_file: Some(FioFileStep {
                    text: job.text.clone(),
                    sections: s.jobs.iter().map(|j| j.name.clone()).collect(),
                    threads_before: job.steps[..i]
                        .iter()
                        .flat_map(|s| &s.jobs)
                        .map(|j| j.threads())
                        .sum(),
                    targets: job
                        .targets
                        .iter()
                        .map(|t| FioTarget {
                            path: t.path.clone(),
                            writes: t.writes,
                        })
                        .collect(),
                    logs: job.logs.clone(),
                    log_dir: None,
                    version: job.version.clone(),
                }),
                ..PlanStep::new(name, 0, workload, end, req.plan.interval)
            }
        })
        .collect();
    let notes = job
        .targets
        .iter()
        .skip(1)
        .map(|t| {
            format!(
                "job {} also {} {} (guarded as the first; the drive's telemetry is the first target's)",
                t.job,
                if t.writes { "writes" } else { "reads" },
                t.path.display()
            )
        })
        .collect();
    Plan {
        notes,
        ..Plan::one_phase(format!("fio-{name}"), format!("fio job file {name}"), steps)
    }
}

/// Reads and checks the job file, guards every target it touches, and makes the plan.
pub(super) fn prepare_fio_job(
    req: &RunRequest,
    asked: &FioJobRequest,
) -> Result<Prepared, RunError> {
    let job = fio_file::read(&asked.file).map_err(engine::EngineError::from)?;
    // A shape this fio deadlocks on under the status dumps the live figures need.
    crate::fio::refuse_hangs(&job, req.plan.interval).map_err(engine::EngineError::from)?;
    // A confirmation must name a target the job writes: a typo confirms nothing.
    for d in &asked.destroy_data {
        if !job
            .targets
            .iter()
            .any(|t| t.writes && same_path(d, &t.path))
        {
            return Err(RunError::DestroyDataUnused { path: d.clone() });
        }
    }
    // fio's logs go to a folder of drivescope's: one asked for must be usable now.
    if let (Some(dir), false) = (&asked.logs, job.logs.is_empty()) {
        super::fio_logs::check_asked(dir)?;
    }
    // A new file needs a size for drivescope to create it (as its own test file).
    if let Some(t) = job
        .targets
        .iter()
        .find(|t| !t.path.exists() && t.size.is_none())
    {
        let message = if t.share {
            // fio itself fails on it (filesetup.c total_file_size: Invalid argument).
            format!(
                "does not exist, and job {}'s size= is a percentage of the file's size, which \
                 a file not made yet does not have (nor would fio make it): give size= in bytes",
                t.job
            )
        } else {
            format!(
                "does not exist, and job {} gives no size= in bytes to create it with",
                t.job
            )
        };
        return Err(TargetError::Invalid {
            path: t.path.display().to_string(),
            message,
        }
        .into());
    }
    // The targets that exist first (each judged by the guard), then the files to create.
    let mut ready: Vec<Option<PreparedTarget>> = job.targets.iter().map(|_| None).collect();
    // The files made here, removed again should a later check refuse the run.
    let mut made = Vec::new();
    for pass in [true, false] {
        for (slot, t) in ready.iter_mut().zip(&job.targets) {
            if t.path.exists() != pass {
                continue;
            }
            let confirm = asked
                .destroy_data
                .iter()
                .find(|d| same_path(d, &t.path))
                .cloned();
            let prepared = test_target::prepare(
                &t.path,
                &TargetRequest {
                    size: t.size,
                    writes: t.writes,
                    // fio's own zonemode decides how a job writes a zoned device.
                    random_writes: false,
                    destroy_data: confirm,
                    create_default: false,
                },
            );
            // Said with the options that set the region, so the user knows which to change.
            *slot = Some(prepared.map_err(|e| match e {
                TargetError::Invalid { path, message } if !t.reach.is_empty() => {
                    TargetError::Invalid {
                        path,
                        message: format!("{message} (job {}: {})", t.job, t.reach),
                    }
                }
                e => e,
            })?);
            // A file the job file's run has just made: a verify state of it is stale.
            if let Some(p) = slot {
                made.extend(super::request::made_here(p, &crate::host::LocalHost));
                super::verify::retire_if_created(None, p)?;
            }
        }
    }
    let ready: Vec<PreparedTarget> = ready.into_iter().flatten().collect();
    // Jobs of engines that open no file (null, cpuio) alone: the run has no target, as the
    // nop engine's has none; nothing is made or filled.
    let primary = ready.first().cloned().unwrap_or_else(PreparedTarget::none);
    let mut plan = plan_of(&job, req, primary.size);
    if let (Some(dir), true) = (&asked.logs, job.logs.is_empty()) {
        plan.notes.push(format!(
            "--fio-logs {}: the job file writes no logs, so no folder was made",
            crate::ostext::escaped(dir.as_os_str())
        ));
    }
    // Another run on a target is refused when the run's locks are taken, before the
    // session (`super::lock`).
    Ok(Prepared {
        verify: None,
        made,
        retires: job
            .targets
            .iter()
            .filter(|t| t.writes)
            .map(|t| t.path.clone())
            .collect(),
        kind: RunWhat::FioJob(Box::new(FioRun {
            file: job.path.clone(),
            text: job.text.clone(),
            version: job.version.clone(),
            targets: job
                .targets
                .iter()
                .map(|t| (t.path.clone(), t.writes))
                .collect(),
            also: ready.iter().skip(1).cloned().collect(),
            logs: asked.logs.clone(),
        })),
        plan,
        default_target: false,
        options: crate::plan::PlanOptions {
            engine: EngineKind::Fio,
            ..req.plan
        },
        label: label_of(&req.target, &primary.path),
        told: super::request::DriveFacts::here(&primary),
        target: primary,
        // Its targets are this host's: a job file names its own files.
        host: crate::host::LocalHost::shared(),
        locks: Default::default(),
    })
}
