//! Presets: YAML files that reproduce a published test method (or say how they approximate
//! one) as phases of workloads, each with its end, ramp, and a rate or a sweep.
//!
//! ```yaml
//! id: storagereview-4k-randread     # short kebab-case
//! name: StorageReview 4K random read
//! description: Which published method this reproduces, or what it approximates and how.
//! phases:
//!   - name: sweep                   # unique; rates refer to phases by name
//!     workload:
//!       rw: randread                # read, write, randread, randwrite, rw, randrw, trim, randtrim, trimwrite
//!       bs: 4k                      # or bssplit: 4k/60:8k/30:64k/10
//!       iodepth: 16
//!       jobs: 8                     # default 1
//!       region: 25%                 # or 10GiB, or {offset: 50%, size: 10GiB}; default all
//!     ramp: 5s                      # warm-up left out of the summary; default 0s
//!     end:                          # the first of these ends each step
//!       duration: 30s
//!       data: 2x                    # a multiple of the region, or a size (100GiB)
//!       steady: {criterion: iops_slope:0.3%, window: 5m, ramp: 1m}   # fio's ss rule
//!     sweep:                        # or rate: max | 5000 | 50% of PHASE (default max)
//!       points: storagereview       # 10..120%; vdbench: 10,50,70,80,90,100; or [25%, 130%]
//!       stopcurve: 5ms              # optional, vdbench's
//! ```
//!
//! Two more phase keys serve SNIA's tests: `matrix` (`rwmixread: [..]` × `bs: [..]`, one
//! step per combination, read share outer) and `rounds` (`window` 5, `max` 25, `range`
//! 20%, `slope` 10%, and `track: {metric: iops|bw|mean_latency, rwmixread, bs}` naming the
//! step whose value decides steady state), and `runs` (`count`, `idle` after each run,
//! `warmup` before the first, `pick: best | mean` to make one figure of them: the
//! `diskmark` presets' best of 5, SNIA HIR's bursts). Units read as people write them: `4KiB`, `4k`,
//! `90s`, `2m`, `25%`, `2x`.
//!
//! [`parse_str`] and [`parse_file`] reject anything wrong before any I/O, with
//! `file:line:column`, the field path and the nearest valid key. Built-ins are embedded from
//! `presets/`; user presets come from [`user_dir`]; [`find`] takes an id or a path;
//! [`resolve`] writes the defaults out.

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
    builtins, catalog, check_id, find, fio_job_files, load_builtin, load_dir, user_dir, Catalog,
    BUILTIN_FILES,
};
pub use error::{Diagnostic, PresetError};
pub use model::Preset;
pub use parse::{parse_file, parse_str};
pub use resolve::resolve;
pub use suggest::nearest;
pub use values::Metric;

/// The preset as YAML, with defaults filled in (what `presets show` prints).
pub fn to_yaml(preset: &Preset) -> Result<String, serde_yaml::Error> {
    serde_yaml::to_string(&resolve(preset))
}
