//! The run layer: one pipeline for every kind of run. A [`RunRequest`] is [`prepare`]d
//! (target ready, plan made: a preset expanded, or one workload as a one-step plan), then
//! [`execute`]d: the [`runner`] walks the plan through the engine seam, and every
//! [`RunEvent`] goes to the session and to the sinks (the headless printer, the
//! dashboard). Run control is a command channel ([`RunHandle`] → [`RunControl`]).
//!
//! ```text
//! commands/ ─► RunRequest ─► prepare ─► Prepared ─► execute ─► runner ─► Engine (seam)
//!                                            RunHandle ─► RunControl ─┘   │
//!                                                  RunEvent ─► session | printer | dashboard
//! ```

mod control;
mod error;
mod event;
mod fio_job;
mod hub;
mod pipeline;
mod record;
mod request;
pub mod runner;
mod tally;
pub mod targets;
mod telemetry;
mod verify;
mod wear;
mod worker;

pub use control::{RunCmd, RunControl, RunHandle};
pub use error::RunError;
pub use event::{FinishedStep, Happening, RunEvent, SkipWhy, SteadyScope, Timed};
pub use fio_job::FioRun;
pub use hub::{Finished, Sink};
pub use pipeline::{check_outputs, claim_session, execute, execute_many, SessionPlan};
pub use record::{single_workload, target_info};
pub use request::{
    prepare, prepare_all, prepare_many, step_label, FioJobRequest, Prepared, RunKind, RunRequest,
    RunWhat, SingleStep, TargetChoice,
};
pub use tally::Tally;
pub use telemetry::{Live, TelemetrySource};
pub use verify::{settle_verify, states_root, VerifyAsk};
