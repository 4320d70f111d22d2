//! fio, as drivescope runs it: the job text of one workload ([`job`]), the engine of
//! `--engine fio` and of a job file's steps behind the engine seam ([`Fio`]), the child's
//! cage ([`cage`]) and supervision, the installed fio's probe, its json+ dumps read into
//! intervals and summaries, its PID namespace ([`pidns`]), and a job file read for its steps and targets ([`file`]) with
//! the refusals of what drivescope cannot follow ([`refusal`]) and its logs sent to the run's own folder (`logs`). The engine contract
//! (`crate::engine`) knows none of this; fio plugs in through it.

pub mod cage;
mod child;
mod engine;
mod error;
mod expand;
pub mod file;
mod hangs;
mod include;
mod io_bytes;
pub mod job;
mod job_end;
mod json;
mod logs;
mod names;
mod parse;
mod pidns;
mod probe;
pub mod refusal;
mod series;
mod shape;
mod targets;
mod value;

pub use engine::{job_text, Fio};
pub use error::{FioError, FioText, FIO_DOC_MAX, FIO_LINE_MAX};
pub use file::{FileStep, JobFile};
pub use hangs::refuse_hangs;
pub use probe::{fio_check, fio_version};
pub use targets::JobTarget;
