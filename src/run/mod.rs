//! The run layer: one pipeline for every kind of run. A [`RunRequest`] is [`prepare`]d
//! (target ready, plan made: a preset expanded, or one workload as a one-step plan), then
//! [`execute`]d: the [`runner`] walks the plan through the engine seam, and every
//! [`RunEvent`] goes to the session and, with the hub's [`RunView`], to the sinks (the
//! headless printer, the dashboard, the metrics). Run control is a command channel ([`RunHandle`] → [`RunControl`]).
//!
//! ```text
//! commands/ ─► RunRequest ─► prepare ─► Prepared ─► execute ─► runner ─► Engine (seam)
//!                                            RunHandle ─► RunControl ─┘   │
//!                                                  RunEvent ─► session | printer | dashboard
//! ```

mod choice;
mod control;
mod cut_error;
mod error;
mod event;
mod fio_job;
mod fio_logs;
mod hub;
mod lock;
mod pipeline;
pub mod power_cut;
mod prepare;
mod record;
mod request;
pub mod runner;
mod settle;
mod tally;
pub mod targets;
mod telemetry;
mod verify;
mod view;
mod wear;
mod worker;

pub use choice::{TargetChoice, Where};
pub use control::{RunCmd, RunControl, RunHandle};
pub use error::RunError;
pub use event::{FinishedStep, RunEvent, SessionEvent, SkipWhy, SteadyScope, Timed};
pub use hub::{Finished, Sink};
pub use lock::RunLocks;
pub use pipeline::{check_outputs, claim_session, execute, execute_many, SessionPlan};
pub use prepare::{prepare, prepare_all, prepare_many};
pub use record::{happening_record, identity, single_workload, target_info};
pub use request::{
    plan_io, step_label, FioJobRequest, FioRun, Prepared, RunRequest, RunWhat, SingleStep,
};
pub use settle::settle_verify;
pub use tally::Tally;
pub use telemetry::{Live, TelemetrySource};
pub use verify::{states_root, VerifyAsk};
pub use view::{DriveView, RunView, SinkFlow, StepNow};
