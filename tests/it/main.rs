//! The integration tests in one binary, one module per area (the former tests/*.rs): one
//! link instead of twenty, and the harness runs all of them in parallel. The QEMU guests
//! are their own binary (tests/qemu), the dashboard's snapshots too (tests/dashboard).
//!
//! A test that cannot run here skips through `skip!` (tests/common/skip.rs): under CI only
//! the skips listed there pass.

#[macro_use]
#[path = "../common/mod.rs"]
mod common;
mod fake_sysfs;

mod cli_telemetry;
mod dashboard_args;
mod dashboard_diskmark;
mod dashboard_keys;
mod dashboard_method;
mod dashboard_replay;
mod dashboard_steps;
mod dashboard_theme;
mod dashboard_tmux;
mod dashboard_tmux_drives;
mod dashboard_zoom;
mod devices_in_use;
mod dirth_points;
mod drive_resolve;
mod engine_nop;
mod fio_cage;
mod fio_engine;
mod fio_job_file;
mod fio_processes;
mod fio_series;
mod fio_shapes;
mod guard_loop;
mod hostile_files;
mod install_docs;
mod layering;
mod many_drives;
mod metrics_prometheus;
mod new_files;
mod odd_conditions;
mod output_stops;
mod owned_outputs;
mod package_deb;
mod parsers_fuzz;
mod parsers_proptest;
mod presets;
mod printable_outputs;
mod pts_pages;
mod remote_dashboard_stops;
mod remote_hosts;
mod report_drives;
mod report_sections;
mod run_access;
mod run_cli;
mod run_faults;
mod run_health;
mod run_loop_device;
mod run_preset;
mod run_trim;
mod session_cli;
mod session_figures;
mod sessions_locked;
mod signals;
mod steps_results;
mod stop_one_drive;
mod target_locks;
mod telemetry_blockstat;
mod telemetry_hwmon;
mod telemetry_nvme;
mod telemetry_poller;
mod telemetry_smartctl;
mod thermal_soak;
mod verify_loop;
mod verify_power_cut;
mod verify_unsaved;
