//! The dashboard's state machine, as The Elm Architecture lays it out: one [`App`] state,
//! [`update`] turning each [`Msg`] into a new state and a list of [`Effect`]s, and view
//! models ([`view`]) for everything the runtime feeds in. Nothing here touches the
//! terminal, the engine or the clock, so every behaviour is tested from message sequences.

pub mod datasheet;
pub mod drives;
pub mod filter;
pub mod history;
mod key_actions;
pub mod keymap;
pub mod keys;
pub mod layout;
pub mod method;
pub mod msg;
mod note;
pub mod overlay;
pub mod slot;
pub mod state;
pub mod update;
pub mod view;

pub use keymap::{Action, Keymap, KeymapError};
pub use msg::{Effect, Msg, RunEnd, RunState, Seek};
pub use overlay::{Confirm, Overlay, Panel};
pub use state::{App, AppConfig};
pub use update::update;
pub use view::{
    CurvePoint, DriveView, EventCategory, EventView, HostView, IntegrityView, KernelView,
    PresetEntry, SteadyView, StepInfo, TargetEntry, TargetKind, TelemetryView,
};
