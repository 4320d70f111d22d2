//! `drivescope run`: the arguments become a [`RunRequest`] (a preset, or one workload),
//! which the run pipeline prepares and executes with the printer as its sink.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use crate::cli::RunArgs;
use crate::metrics::{MetricsServer, MetricsSink};
use crate::ostext::command_line;
use crate::output::{err_line, out_line};
use crate::plan::PlanOptions;
use crate::preset;
use crate::printer::{Format, PrintMode, Printer};
use crate::remote::{RemoteOptions, SshCommand};
use crate::run::power_cut::{self, PowerCutAsk};
use crate::run::{
    self, targets, Finished, FioJobRequest, RunControl, RunError, RunRequest, RunWhat, SessionPlan,
    SingleStep, TargetChoice, TelemetrySource, Where,
};
use crate::session::RecorderOptions;
use crate::workload::{trim_share_problem, BlockSizes, Region, Workload};

/// What the command line asks to run, on each target it names.
fn requests(a: &RunArgs) -> Result<Vec<RunRequest>, RunError> {
    let base = request(a)?;
    if a.fio_job.is_some() {
        // A job file names its own targets.
        return Ok(vec![base]);
    }
    let specs = match &a.targets {
        Some(file) => targets::read_file(file)?,
        None if a.target.is_empty() && a.destroy_data.is_empty() && a.host.is_empty() => {
            return Ok(vec![base]);
        }
        None => targets::from_args(&a.target, &a.destroy_data, &a.host, a.size)?,
    };
    let remote = RemoteOptions {
        ssh: SshCommand::choose(a.ssh_command.as_deref())?,
        program: a.remote_drivescope.clone(),
        agent_metrics: a.host_metrics.clone(),
    };
    Ok(specs
        .into_iter()
        .map(|t| {
            let mut r = base.clone();
            let size = t.choice.size.or(a.size);
            r.target = t.choice;
            r.target.size = size;
            if let Where::Remote(h) = &mut r.target.at {
                h.options = remote.clone();
            }
            if let (Some(off), RunWhat::Single(s)) = (t.offset, &mut r.what) {
                s.workload.region.offset = off;
            }
            r
        })
        .collect())
}

/// What the command line asks to run.
fn request(a: &RunArgs) -> Result<RunRequest, RunError> {
    if a.outstanding.is_some() && a.preset.is_none() && a.preset_file.is_none() {
        return Err(RunError::OutstandingNeedsPreset);
    }
    if let Some(p) = trim_share_problem(a.rw, a.rwmixread, a.rwmixtrim) {
        return Err(RunError::TrimShare(p));
    }
    let what = match (&a.fio_job, &a.preset, &a.preset_file) {
        (Some(file), _, _) => RunWhat::FioJob(FioJobRequest {
            file: file.clone(),
            destroy_data: a.destroy_data.clone(),
            logs: a.fio_logs.clone(),
        }),
        (None, _, Some(path)) => RunWhat::Preset(Box::new(preset::parse_file(path)?)),
        (None, Some(id), None) => RunWhat::Preset(Box::new(preset::find(id)?)),
        (None, None, None) => RunWhat::Single(SingleStep {
            workload: Workload {
                rw: a.rw,
                rwmixread: a.rwmixread,
                rwmixtrim: a.rwmixtrim,
                bs: a
                    .bssplit
                    .clone()
                    .unwrap_or_else(|| BlockSizes::single(a.bs)),
                iodepth: a.iodepth,
                jobs: a.jobs,
                region: Region {
                    offset: a.offset,
                    len: 0,
                },
                rate_iops: a.rate_iops,
                arrivals: a.arrivals,
                seed: a.seed,
                direct: a.direct,
                job_region: Default::default(),
                access: Default::default(),
                zone_append: a.zone_append,
            },
            ramp: a.ramp,
            duration: a.duration,
            io_size: a.io_size,
        }),
    };
    let state = &a.verify_state;
    let asked = a.verify.is_some() || state.verify_state.is_some() || state.verify_reset;
    Ok(RunRequest {
        verify: asked.then(|| run::VerifyAsk {
            mode: a.verify.unwrap_or_default(),
            state: state.verify_state.clone(),
            reset: state.verify_reset,
            pass_only: false,
        }),
        target: TargetChoice {
            path: None,
            size: a.size,
            destroy_data: None,
            create_missing: false,
            label: None,
            at: Where::Here,
        },
        what,
        plan: PlanOptions {
            time_scale: a.time_scale,
            seed: a.seed,
            interval: a.interval,
            engine: a.engine,
            engine_options: a.engine_options(),
            outstanding: a.outstanding,
        },
    })
}

/// Runs the command; `stop` is the flag the signal handlers set.
pub fn run(a: &RunArgs, stop: Arc<AtomicBool>) -> Result<Finished, RunError> {
    let reqs = requests(a)?;
    if let Some(cut) = &a.power_cut {
        return power_cut(a, cut, &reqs, &stop);
    }
    let options = crate::report::with_snapshot_files(RecorderOptions {
        autosave_every: a.autosave,
        snapshot_every: a.snapshot_every,
        snapshot_dir: None,
        histograms: a.histograms,
        replace: a.force,
        ..Default::default()
    });
    // A --session (or a file beside it) drivescope may not write, or one another run
    // holds, is refused before the target is touched; a dated session is claimed when
    // it is created.
    let lock = match &a.session {
        Some(p) => Some(run::claim_session(p, &options)?),
        None => None,
    };
    // The endpoint listens before the target is touched: an address taken is refused first.
    let metrics = a.metrics.as_deref().map(MetricsServer::start).transpose();
    let metrics = metrics.map_err(|e| RunError::Frontend(Box::new(e)))?;
    let (prepared, left_out) = run::prepare_all(&reqs, a.keep_going, None)?;
    let format = if a.json { Format::Json } else { Format::Text };
    let mode = match reqs[0].what {
        RunWhat::Preset(_) | RunWhat::FioJob(_) => PrintMode::Plan,
        RunWhat::Single(_) => PrintMode::Single,
    };
    let mut printer = Printer::new(format, mode);
    let session = SessionPlan {
        path: a.session.clone(),
        options,
        command: Some(command_line()),
        note: a.note.clone(),
        notes: left_out,
        lock,
    };
    let (_handle, ctl) = RunControl::with_stop_flag(stop);
    let mut exporter = metrics.as_ref().map(|m| {
        err_line(&format!("drivescope: metrics on http://{}/metrics", m.addr));
        MetricsSink::new(m)
    });
    let mut sinks: Vec<&mut dyn run::Sink> = vec![&mut printer];
    if let Some(e) = &mut exporter {
        sinks.push(e);
    }
    run::execute_many(&prepared, session, TelemetrySource::Poll, &ctl, &mut sinks)
}

/// `run --verify --power-cut`: the cycles, each a run with its own dated session, then the
/// power-cut record beside them.
fn power_cut(
    a: &RunArgs,
    cut: &str,
    reqs: &[RunRequest],
    stop: &Arc<AtomicBool>,
) -> Result<Finished, RunError> {
    let ask = PowerCutAsk {
        cut: cut.to_string(),
        restore: a.power_restore.clone(),
        cycles: a.cycles,
        at: a.cut_at,
        plp: a.plp,
        ready_within: a.ready_within,
        seed: a.seed,
        atomic: a.atomic_unit,
    };
    let format = if a.json { Format::Json } else { Format::Text };
    let sessions = crate::session::paths::sessions_dir();
    let mut run_one = |prepared: &[run::Prepared], ctl: &RunControl| {
        let mut printer = Printer::new(format, PrintMode::Single);
        let session = SessionPlan {
            path: None,
            options: RecorderOptions::default(),
            command: Some(command_line()),
            note: a.note.clone(),
            notes: Vec::new(),
            lock: None,
        };
        run::execute_many(
            prepared,
            session,
            TelemetrySource::Poll,
            ctl,
            &mut [&mut printer],
        )
    };
    let mut on_cycle = |c: &power_cut::CycleRecord| match format {
        Format::Json => out_line(&power_cut::cycle_json(c)),
        Format::Text => out_line(&power_cut::cycle_line(c)),
    };
    let done = power_cut::run_cycles(reqs, &ask, &sessions, stop, &mut run_one, &mut on_cycle);
    if let Some(r) = &done.record {
        out_line(&match format {
            Format::Json => power_cut::record_json(r),
            Format::Text => power_cut::verdict_line(r),
        });
    }
    if let Some(path) = &done.saved {
        err_line(&power_cut::saved_note(path));
    }
    if let Some(e) = done.ended {
        return Err(e);
    }
    Ok(power_cut::finished(done.record.as_ref(), done.saved))
}
