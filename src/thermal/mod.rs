//! The drive's thermal behaviour under a run: when it throttles ([`ThrottleTracker`]),
//! when its temperature is steady ([`TempSteady`]), the events of a soak
//! ([`ThermalWatch`], [`ThermalEvent`]) and the figures a soak reports ([`SoakSummary`], gathered as a run goes in a
//! [`SoakLog`]).
//! Pure: fed with readings and times, it touches no device.

mod event;
mod soak_log;
mod steady;
mod summary;
mod throttle;
mod watch;

pub use event::{ThermalEvent, ThrottleSignal};
pub use soak_log::SoakLog;
pub use steady::TempSteady;
pub use summary::{Load, SoakSummary, Throughput};
pub use throttle::ThrottleTracker;
pub use watch::ThermalWatch;
