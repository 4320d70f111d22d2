//! The two printers' lines, pinned on a `Vec<u8>` (text in `text`, JSON lines in `json`),
//! from the same run events made here: an interval, a step's end, the steps table, a run's
//! end, a note, and a write error ending the output.

use std::io::Write;
use std::sync::Arc;

use serde_json::{json, Value};

use crate::outcome::RunOutcome;
use crate::run::{FinishedStep, RunEvent, RunView, Sink, SinkFlow, Tally};
use crate::session::results::{DirResult, LatFigures};
use crate::session::StepResult;
use crate::stats::{IntervalReport, StepSummary};

mod json;
mod text;

/// A sink fed as the hub feeds it, each event with the view after it: of a run of one
/// (`show`), or of drive `drive` (`None`: the run's own) of `view`'s (`on`).
trait Fed: Sink {
    fn show(&mut self, ev: &RunEvent) -> SinkFlow {
        self.on(&mut RunView::new([]), None, ev)
    }

    fn on(&mut self, view: &mut RunView, drive: Option<usize>, ev: &RunEvent) -> SinkFlow {
        view.update(drive, ev);
        self.event(view, ev)
    }
}

impl<S: Sink> Fed for S {}

fn utf8(b: Vec<u8>) -> String {
    String::from_utf8(b).expect("utf-8")
}

/// An interval of a plain run, as its JSON line said it (without `type`).
fn interval() -> IntervalReport {
    serde_json::from_value(
        json!({"end_s":1.0,"errors":0,"index":0,"lat_us":{"max":29442.047,
        "mean":424.2906125740202,"min":45.568,"p50":247.807,"p90":365.567,"p99":3426.303,
        "p99.9":26755.071,"p99.99":29425.663,"samples":63496,"stddev":1613.620580227195},
        "ramp":false,"read":{"bytes":260079616,"ios":63496},"read_bw_bytes":260079616.0,
        "read_iops":63496.0,"start_s":0.0,"write":{"bytes":0,"ios":0},"write_bw_bytes":0.0,
        "write_iops":0.0}),
    )
    .expect("an interval")
}

/// The run event of interval `r`.
fn interval_of(r: IntervalReport) -> RunEvent {
    RunEvent::Interval {
        index: 0,
        report: Arc::new(r),
    }
}

/// The run event of step `s`'s end.
fn finished(s: &FinishedStep) -> RunEvent {
    RunEvent::StepFinished(Arc::new(s.clone()))
}

/// The end of a run that completed its `steps` steps with `errors` I/O errors.
fn completed(steps: usize, errors: u64) -> RunEvent {
    RunEvent::Ended {
        outcome: RunOutcome::Completed {
            errors,
            first_error: None,
        },
        tally: Box::new(Tally {
            steps,
            steps_run: steps,
            errors,
            ..Tally::default()
        }),
    }
}

fn lat() -> Value {
    json!({"max":27492.351,"mean":465.3512004474463,"min":62.976,"p50":268.287,
        "p90":355.327,"p99":3936.255,"p99.9":27410.431,"p99.99":27492.351,"samples":23243,
        "stddev":1676.2256043787838})
}

fn summary() -> StepSummary {
    serde_json::from_value(json!({"ended_by":"duration","engine":"io_uring","errors":0,
        "iops":58099.253246746026,"ios":23243,"lat_us":lat(),"read_bw_bytes":237974541.29867172,
        "read_bytes":95203328,"read_iops":58099.253246746026,"read_ios":23243,
        "read_lat_us":lat(),"runtime_s":0.400056777,"service_lat_us":null,"target_iops":null,
        "write_bw_bytes":0.0,"write_bytes":0,"write_iops":0.0,"write_ios":0,
        "write_lat_us":{"max":0.0,"mean":0.0,"min":0.0,"p50":0.0,"p90":0.0,"p99":0.0,
        "p99.9":0.0,"p99.99":0.0,"samples":0,"stddev":0.0}}))
    .expect("a summary")
}

fn step() -> FinishedStep {
    FinishedStep {
        index: 0,
        name: "randread-4k".into(),
        phase: 0,
        phase_name: "randread-4k".into(),
        round: None,
        prewrite: false,
        sweep_point: None,
        target_iops: None,
        closed_loop: false,
        service_lat_us: serde_json::from_value(lat()).expect("a latency"),
        response_from_schedule_lat_us: None,
        verify: None,
        summary: summary(),
    }
}

/// One step's result of 4 KiB reads at 12.3k IOPS, p99 850 µs.
fn step_result() -> StepResult {
    let read = DirResult {
        ios: 10,
        iops: 12_345.0,
        mbps: 50.6,
        lat_us: Some(LatFigures {
            mean: 425.0,
            p50: 283.0,
            p99: 850.0,
            p99_9: 850.0,
            p99_99: 850.0,
            p99_999: None,
            max: 1700.0,
        }),
    };
    StepResult {
        step: 1,
        label: "point 1".into(),
        workload: "randread 4KiB QD32×1".into(),
        read,
        ended_by: crate::outcome::EndedBy::Duration,
        measured_s: 90.0,
        ..StepResult::default()
    }
}

/// Takes `room` bytes, then fails every write as a closed pipe does.
struct Closing {
    room: usize,
    got: Vec<u8>,
}

impl Closing {
    fn new(room: usize) -> Self {
        Closing {
            room,
            got: Vec::new(),
        }
    }
}

impl Write for Closing {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.got.len() + buf.len() > self.room {
            return Err(std::io::ErrorKind::BrokenPipe.into());
        }
        self.got.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// New drive errors (an event) and the run's wear of the drive.
fn errors_and_wear() -> (crate::run::Timed, crate::telemetry::WearSpan) {
    use crate::run::{SessionEvent, Timed};
    use crate::telemetry::{DriveWear, NewDriveErrors, WearSpan};
    let errors = Timed {
        t_s: 1.0,
        what: SessionEvent::DriveErrors(NewDriveErrors {
            media_errors: 1,
            error_log_entries: 3,
            total_media_errors: Some(1),
            total_error_log_entries: Some(25),
        }),
    };
    let wear = WearSpan {
        step: None,
        drivescope_written_bytes: 1 << 20,
        drivescope_read_bytes: 0,
        drive: DriveWear {
            host_written_bytes: Some(1_024_000),
            host_unit_bytes: Some(512_000),
            media_errors: Some(1),
            ..DriveWear::default()
        },
    };
    (errors, wear)
}
