//! What happens in a run, as values: [`RunEvent`] is everything the pipeline hands its
//! sinks (printer, session, dashboard), one owned value made where it happens (the
//! runner, a drive's worker, the hub) and sent once; [`SessionEvent`] is the part that
//! becomes a session event, with its [`EventKind`]. The kind names and texts are made
//! here, once, for the printer, the session and the dashboard alike.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use serde::Serialize;

use super::request::Prepared;
use super::tally::Tally;
use crate::outcome::RunOutcome;
use crate::plan::{PlanStep, SteadyVerdict};
use crate::session::EventKind;
use crate::stats::{IntervalReport, LatSummary, StepSummary};
use crate::telemetry::{HealthChange, TelemetrySample};
use crate::thermal::ThermalEvent;

/// What a steady-state verdict is about.
#[derive(Debug, Clone, PartialEq)]
pub enum SteadyScope {
    /// A step's own live (fio-style) rule, judged on every interval.
    Step(String),
    /// A phase's SNIA rounds, judged once per round.
    Phase(String),
}

/// Why a step was not run.
#[derive(Debug, Clone, PartialEq)]
pub enum SkipWhy {
    /// Its rate could not be resolved (no measured maximum, a curve rate of 0 IOPS).
    Rate(crate::plan::RateSkip),
    /// A sweep point's mean response time passed vdbench's `stopcurve`: the rest of the
    /// curve is skipped.
    StopCurve { mean_ms: f64, limit_ms: f64 },
    /// Its threads x queue depth come from an operating point that the earlier phase's
    /// rounds did not give (none ran, or none under DIRTH's 5 ms mean response time).
    NoOperatingPoint(crate::plan::operating::OperatingPoint),
    /// The user skipped it (the dashboard's skip key) after `measured_s` seconds of its
    /// measured time: its results cover only those.
    User { measured_s: f64 },
}

impl fmt::Display for SkipWhy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SkipWhy::Rate(r) => write!(f, "skipped: {r}"),
            SkipWhy::StopCurve { mean_ms, limit_ms } => write!(
                f,
                "mean response {mean_ms:.2} ms is above stopcurve {limit_ms:.2} ms; \
                 the rest of the curve is skipped"
            ),
            SkipWhy::NoOperatingPoint(p) => write!(
                f,
                "skipped: no {} operating point (no combination of the rounds ran under {} ms mean response)",
                match p {
                    crate::plan::operating::OperatingPoint::Max => "max",
                    crate::plan::operating::OperatingPoint::Mid => "mid",
                    crate::plan::operating::OperatingPoint::Min => "min",
                },
                crate::plan::operating::MAX_MEAN_RESPONSE_US / 1000.0
            ),
            SkipWhy::User { measured_s } => write!(
                f,
                "skipped by the user after {measured_s:.1} s measured; \
                 its results cover only that"
            ),
        }
    }
}

/// Something that happened in a run that the session keeps as an event.
#[derive(Debug, Clone, PartialEq)]
pub enum SessionEvent {
    /// A note (from the plan's expansion or the engine).
    Note(String),
    /// Phase `index` (0-based) of `count` began.
    Phase {
        index: usize,
        count: usize,
        name: String,
    },
    /// A steady-state verdict: reached (at interval or round `n`) or not, and why.
    Steady {
        scope: SteadyScope,
        verdict: SteadyVerdict,
    },
    /// Step `step` was skipped, or (stop curve) the points after it.
    Skipped { step: String, why: SkipWhy },
    /// Step `step` finished with `count` I/O errors.
    Errors { step: String, count: u64 },
    /// The drive's health verdict changed, or was failing when first read.
    Health(HealthChange),
    /// The drive's temperature or throttling (a threshold, a throttle, a soak's end).
    Thermal(ThermalEvent),
    /// Wrong data read back in a verified run.
    VerifyFinding(Box<crate::verify::Finding>),
    /// A verified step's totals so far: blocks written and checked, findings by kind.
    Verified(crate::verify::VerifyTotals),
    /// The drive reported new media errors or error log entries.
    DriveErrors(crate::telemetry::NewDriveErrors),
    /// Step `step`'s verify state could not be saved.
    VerifyUnsaved {
        step: String,
        unsaved: crate::outcome::VerifyUnsaved,
    },
}

impl SessionEvent {
    pub fn kind(&self) -> EventKind {
        match self {
            SessionEvent::Note(_) => EventKind::Note,
            SessionEvent::Phase { .. } => EventKind::Phase,
            SessionEvent::Steady { .. } => EventKind::SteadyState,
            SessionEvent::Skipped { .. } => EventKind::Skip,
            SessionEvent::Errors { .. } => EventKind::Errors,
            SessionEvent::Health(_) => EventKind::Health,
            SessionEvent::Thermal(_) => EventKind::Thermal,
            SessionEvent::VerifyFinding(_) => EventKind::VerifyFinding,
            SessionEvent::Verified(_) => EventKind::Verified,
            SessionEvent::VerifyUnsaved { .. } => EventKind::VerifyUnsaved,
            SessionEvent::DriveErrors(_) => EventKind::DriveErrors,
        }
    }
}

impl fmt::Display for SessionEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SessionEvent::Note(n) => f.write_str(n),
            SessionEvent::Phase { index, count, name } => {
                write!(f, "phase {} of {count}: {name}", index + 1)
            }
            SessionEvent::Steady { scope, verdict } => match (scope, verdict) {
                (SteadyScope::Step(s), SteadyVerdict::Reached { round }) => {
                    write!(f, "{s}: steady state reached at interval {round}")
                }
                (SteadyScope::Step(s) | SteadyScope::Phase(s), v) => write!(f, "{s}: {v}"),
            },
            SessionEvent::Skipped { step, why } => write!(f, "{step}: {why}"),
            SessionEvent::Errors { step, count } => write!(f, "{step}: {count} I/O errors"),
            SessionEvent::Health(c) => write!(f, "{c}"),
            SessionEvent::Thermal(e) => write!(f, "{e}"),
            SessionEvent::VerifyFinding(x) => {
                write!(
                    f,
                    "{} block at offset {} ({} bytes), sector {}: expected",
                    x.kind, x.offset, x.length, x.sector
                )?;
                match x.expected.generation {
                    Some(g) => write!(f, " generation {g}")?,
                    None => f.write_str(" nothing of ours")?,
                }
                write!(f, ", found {}", x.found_text())
            }
            SessionEvent::Verified(t) => write!(
                f,
                "{} blocks written, {} checked, {} findings ({} corrupt, {} misdirected, \
                 {} lost, {} torn, {} unexpected)",
                t.blocks_written,
                t.blocks_checked,
                t.findings(),
                t.corrupt,
                t.misdirected,
                t.lost,
                t.torn,
                t.unexpected
            ),
            SessionEvent::VerifyUnsaved { step, unsaved } => write!(f, "{step}: {unsaved}"),
            SessionEvent::DriveErrors(e) => {
                let total =
                    |n: Option<u64>| n.map(|n| format!(" ({n} in all)")).unwrap_or_default();
                let mut parts = Vec::new();
                if e.media_errors > 0 {
                    parts.push(format!(
                        "{} new media errors{}",
                        e.media_errors,
                        total(e.total_media_errors)
                    ));
                }
                if e.error_log_entries > 0 {
                    parts.push(format!(
                        "{} new error log entries{}",
                        e.error_log_entries,
                        total(e.total_error_log_entries)
                    ));
                }
                write!(f, "the drive reported {}", parts.join(" and "))
            }
        }
    }
}

/// A [`SessionEvent`] with its time, seconds since the plan started.
#[derive(Debug, Clone, PartialEq)]
pub struct Timed {
    pub t_s: f64,
    pub what: SessionEvent,
}

/// One finished step: a point of the latency-vs-IOPS curve.
#[derive(Debug, Clone, Default, Serialize)]
pub struct FinishedStep {
    pub index: usize,
    pub name: String,
    pub phase: usize,
    pub phase_name: String,
    pub round: Option<u32>,
    /// The write that opened its round (`rounds.prewrite`), none of the round's
    /// combinations; said only when it is one.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub prewrite: bool,
    pub sweep_point: Option<f64>,
    /// The rate the step asked for; `None` for a closed-loop (max) step.
    pub target_iops: Option<f64>,
    /// It had a target but ran closed-loop (a sweep point at or above 100%).
    pub closed_loop: bool,
    /// The curve's latency: from each I/O's submission (service), as vdbench's.
    pub service_lat_us: LatSummary,
    /// When paced: latency from each I/O's scheduled time (response from the schedule).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_from_schedule_lat_us: Option<LatSummary>,
    /// A verified run's totals at the step's end.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verify: Option<crate::verify::VerifyTotals>,
    pub summary: StepSummary,
}

impl FinishedStep {
    /// A paced step's achieved IOPS over its target (none unpaced, or run closed-loop).
    pub fn achieved_share(&self) -> Option<f64> {
        let target = self.target_iops.filter(|_| !self.closed_loop);
        crate::session::results::share_of(self.summary.iops, target)
    }
}

/// Everything the pipeline tells its sinks, in order: owned, so that it is made once where
/// it happens and handed on as it is (an interval's report and a step's record shared,
/// not copied).
#[derive(Debug, Clone)]
pub enum RunEvent {
    /// The session exists and the run is about to start (after the fill).
    Started {
        run: Arc<Prepared>,
        session: PathBuf,
        /// Seconds since the session started (its clock, which the fill runs on): the
        /// time of the run's start on the session's records, for a sink that keeps time.
        at_s: f64,
    },
    /// A step is about to run at `target_iops` (`None`: closed loop).
    StepStarted {
        index: usize,
        step: Arc<PlanStep>,
        target_iops: Option<f64>,
    },
    /// A merged interval of step `index`.
    Interval {
        index: usize,
        report: Arc<IntervalReport>,
    },
    StepFinished(Arc<FinishedStep>),
    /// Something the session keeps as an event.
    Happened(Timed),
    /// A note from outside the plan: the fill, the drive's telemetry, the engine while a
    /// plain run goes on.
    Note(String),
    /// A telemetry sample of the drive.
    Telemetry(Arc<TelemetrySample>),
    /// Something the session recorder wants shown (an autosave that failed, a snapshot
    /// written).
    SessionNotice(String),
    /// A snapshot is being written to this folder.
    Snapshot(PathBuf),
    /// What the run (`step: None`) or a step did to the drive, after it.
    Wear(Box<crate::telemetry::WearSpan>),
    /// A thermal soak's figures, once its run is over (before [`RunEvent::Ended`]).
    Soak(Box<crate::thermal::SoakSummary>),
    /// The run is over (before the final save).
    Ended {
        outcome: RunOutcome,
        tally: Box<Tally>,
    },
    /// The final save wrote the session here: the session as saved.
    Saved {
        path: PathBuf,
        session: Arc<crate::session::Session>,
    },
    /// A verified run's totals so far, after each interval (not kept in the session: its
    /// `verified` event at each step's end is).
    Verify(crate::verify::VerifyTotals),
}
