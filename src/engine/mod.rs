//! The engine contract: what the runner knows of an engine and nothing more. An [`Engine`]
//! runs one step ([`StepSpec`](crate::workload::StepSpec)) on one [`StepTarget`] and yields
//! merged interval stats to a [`StepObserver`] and a step summary ([`seam`]); a step it
//! cannot run is an [`EngineError`] (a refused step an [`InvalidStep`]). The contract
//! names no implementation: the in-process engines are in [`native`], the others plug in
//! from their own modules, and one list outside the contract (`engines.rs`) names them all.
//! What engines and the run share besides: the check of a workload's shape
//! ([`validate_shape`]), page-aligned memory for O_DIRECT ([`AlignedBuf`]) and the seeded
//! generator ([`Rng`]).

mod aligned;
mod error;
mod invalid;
pub mod native;
mod rng;
mod seam;
mod shape;
mod target;

pub use aligned::{AlignedBuf, BUF_ALIGN};
pub use error::{EngineError, Locker, Opener};
pub use invalid::{
    InvalidStep, NoPolling, RingOption, ZoneRefusal, MAX_BUFFER_BYTES, MAX_IODEPTH, MAX_JOBS,
    MIN_STEP_DURATION,
};
pub use rng::Rng;
pub use seam::{Control, Engine, FnObserver, StepControl, StepObserver};
pub use shape::validate_shape;
pub use target::StepTarget;
