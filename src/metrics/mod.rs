//! Live metrics for Prometheus: `--metrics ADDR` serves what the run's hub already has, once
//! per interval, as OpenMetrics text on `/metrics` (the prometheus-client crate's encoder).
//! Nothing here is on the engine's per-I/O path: the hub's sink ([`MetricsSink`]) copies an
//! interval's figures into [`Figures`] and the server encodes them when scraped.
//!
//! The series (every one labelled `drive` (index), `label` and `host`):
//! - `drivescope_ios_total{direction}`, `drivescope_io_bytes_total{direction}` (direction
//!   `read`, `write` or `trim`),
//!   `drivescope_io_errors_total`: counters since the run started;
//! - `drivescope_iops{direction}`, `drivescope_bandwidth_bytes_per_second{direction}`: the
//!   latest interval's rates;
//! - `drivescope_latency_seconds{direction}`: a histogram of every read's, write's and
//!   trim's latency (buckets
//!   1-2-5 from 10 µs to 10 s), made from each interval's exact histogram, for
//!   `histogram_quantile` across time and hosts; and
//!   `drivescope_interval_latency_seconds{quantile}`: the latest interval's percentiles as
//!   drivescope computed them (exact to its histogram's precision, which bucket counts are
//!   not);
//! - `drivescope_temperature_celsius` (absent while the drive reports none, and
//!   `drivescope_temperature_known` says so with 0), `drivescope_power_state`,
//!   `drivescope_thermal_throttle_seconds_total{level}`, `drivescope_health_passed` (1, 0,
//!   or absent when no source gave a verdict);
//! - `drivescope_drive_info{model,serial,firmware}`, `drivescope_step_info{preset,phase,step}`,
//!   `drivescope_target_iops` (a paced step's rate), `drivescope_run_state{state}` (a state
//!   set: starting, running, completed, stopped, failed).

mod agent;
mod encode;
mod figures;
mod server;
mod sink;

pub use agent::AgentMetrics;
pub use figures::{DriveFigures, Figures, RunState, LATENCY_BUCKETS_S};
pub use server::{encode_text, MetricsError, MetricsServer, MAX_CONNECTIONS, REQUEST_DEADLINE};
pub use sink::MetricsSink;
