//! Presets: YAML files that reproduce a published test method (or say how they approximate
//! one) as phases of workloads, each with its end, ramp, and a rate or a sweep.
//!
//! A preset file looks like this (every key is checked; units read as people write them):
//!
//! ```yaml
//! id: storagereview-4k-randread
//! name: StorageReview 4K random read
//! description: What published method this reproduces, or how it approximates one.
//! phases:
//!   - name: sweep
//!     workload: {rw: randread, bs: 4k, iodepth: 16, jobs: 8, region: 25%}
//!     end: {duration: 30s}          # or data: 2x (the region), or both; steady: {...}
//!     ramp: 5s
//!     sweep: {points: storagereview} # or vdbench, or [10%, 50%, 100%]; or rate: max | 5000 | 50% of PHASE
//! ```
//!
//! Phases may also have a `matrix` (read shares × block sizes, one step each) and `rounds`
//! (SNIA steady state over rounds, with the tracked step). [`parse_str`] and [`parse_file`]
//! reject anything wrong before any I/O, with `file:line:column`, the field path and the
//! nearest valid key. Built-ins are embedded; user presets come from
//! [`user_dir`]; [`find`] takes an id or a path.

mod builtin;
mod error;
mod locate;
pub mod model;
mod parse;
mod resolve;
mod suggest;
mod validate;
pub mod values;

pub use builtin::{
    builtins, catalog, find, load_builtin, load_dir, user_dir, Catalog, BUILTIN_FILES,
};
pub use error::{Diagnostic, PresetError};
pub use model::Preset;
pub use parse::{parse_file, parse_str};
pub use resolve::resolve;
pub use suggest::nearest;

/// The preset as YAML, with defaults filled in (what `presets show` prints).
pub fn to_yaml(preset: &Preset) -> Result<String, serde_yaml::Error> {
    serde_yaml::to_string(&resolve(preset))
}
