//! The printer's lines, pinned on a `Vec<u8>`: text and JSON lines for an interval, a
//! step's end, a run's end and a note, and a write error ending the output.

use std::io::Write;

use serde_json::{json, Value};

use super::{Format, PrintMode, Printer};
use crate::outcome::RunOutcome;
use crate::run::{FinishedStep, RunEvent, Sink, Tally};
use crate::stats::{IntervalReport, StepSummary};

fn printer(format: Format, mode: PrintMode) -> Printer<Vec<u8>> {
    Printer::on(format, mode, Vec::new(), Vec::new())
}

fn lines(p: Printer<Vec<u8>>) -> (String, String) {
    let (out, err) = p.into_writers();
    let s = |b: Vec<u8>| String::from_utf8(b).expect("utf-8");
    (s(out), s(err))
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
        sweep_point: None,
        target_iops: None,
        closed_loop: false,
        service_lat_us: serde_json::from_value(lat()).expect("a latency"),
        response_from_schedule_lat_us: None,
        verify: None,
        summary: summary(),
    }
}

#[test]
fn an_interval_in_text_has_the_header_first() {
    let mut p = printer(Format::Text, PrintMode::Single);
    let r = interval();
    p.event(&RunEvent::Interval {
        index: 0,
        report: &r,
    });
    let (out, err) = lines(p);
    assert_eq!(
        out,
        "    time  read IOPS  read MB/s write IOPS write MB/s       p50       p99     p99.9  errors\n\
         \x20   1.0s      63.5k   260 MB/s          0   0.0 MB/s    248 µs   3.43 ms  26.76 ms       0\n"
    );
    assert_eq!(err, "");
}

#[test]
fn an_interval_in_json_is_its_report_with_a_type() {
    let mut p = printer(Format::Json, PrintMode::Single);
    let r = interval();
    p.event(&RunEvent::Interval {
        index: 0,
        report: &r,
    });
    let (out, _) = lines(p);
    assert_eq!(
        out,
        "{\"end_s\":1.0,\"errors\":0,\"format\":1,\"index\":0,\"lat_us\":{\"max\":29442.047,\
         \"mean\":424.2906125740202,\"min\":45.568,\"p50\":247.807,\"p90\":365.567,\
         \"p99\":3426.303,\"p99.9\":26755.071,\"p99.99\":29425.663,\"samples\":63496,\
         \"stddev\":1613.620580227195},\"ramp\":false,\"read\":{\"bytes\":260079616,\
         \"ios\":63496},\"read_bw_bytes\":260079616.0,\"read_iops\":63496.0,\"start_s\":0.0,\
         \"type\":\"interval\",\"write\":{\"bytes\":0,\"ios\":0},\"write_bw_bytes\":0.0,\
         \"write_iops\":0.0}\n"
    );
}

#[test]
fn a_preset_step_end_is_two_lines() {
    let mut p = printer(Format::Text, PrintMode::Plan);
    let s = step();
    p.event(&RunEvent::StepFinished(&s));
    let (out, _) = lines(p);
    assert_eq!(
        out,
        "step 1/0 randread-4k: achieved 58.1k IOPS, 238 MB/s, mean 465 µs, p99 3.94 ms, \
         p99.9 27.41 ms\n  0 errors, 0.4s, ended by duration\n"
    );
    let mut p = printer(Format::Json, PrintMode::Plan);
    p.event(&RunEvent::StepFinished(&s));
    let (out, _) = lines(p);
    let v: Value = serde_json::from_str(&out).expect("one JSON line");
    assert_eq!(
        (v["type"].as_str(), v["count"].as_u64()),
        (Some("step"), Some(0))
    );
    assert_eq!(v["name"], "randread-4k");
}

#[test]
fn a_plain_step_end_is_its_summary() {
    let mut p = printer(Format::Text, PrintMode::Single);
    let s = step();
    p.event(&RunEvent::StepFinished(&s));
    let (out, _) = lines(p);
    assert_eq!(
        out,
        "summary: 0.40s measured, engine io_uring, ended by duration\n\
         \x20 read      23243 I/Os, 58.1k IOPS, 238 MB/s (227.0 MiB/s)\n\
         \x20 latency   mean 465 µs  min 63 µs  p50 268 µs  p90 355 µs  p99 3.94 ms  p99.9 27.41 ms  p99.99 27.49 ms  max 27.49 ms\n\
         \x20 errors    0\n"
    );
}

#[test]
fn a_plain_step_of_trims_says_its_trims_and_an_interval_its_trim_rate() {
    let mut p = printer(Format::Text, PrintMode::Single);
    let mut s = step();
    let m = &mut s.summary;
    (m.trim_ios, m.trim_bytes, m.trim_iops, m.trim_bw_bytes) = (100, 409600, 250.0, 1024000.0);
    m.trim_lat_us = m.read_lat_us;
    p.event(&RunEvent::StepFinished(&s));
    let mut r = interval();
    (r.trim.ios, r.trim_iops, r.trim_bw_bytes) = (5, 5.0, 2048000.0);
    p.event(&RunEvent::Interval {
        index: 0,
        report: &r,
    });
    let (out, _) = lines(p);
    assert!(
        out.contains("\n  trim      100 I/Os, 250 IOPS, 1.0 MB/s (1.0 MiB/s)\n  latency   "),
        "{out}"
    );
    // Reads and trims: each one's latency.
    assert!(
        out.contains("\n  trim      mean 465 µs  min 63 µs"),
        "{out}"
    );
    assert!(out.contains("       0  trim 5 IOPS 2.0 MB/s\n"), "{out}");
    let mut p = printer(Format::Json, PrintMode::Single);
    p.event(&RunEvent::Interval {
        index: 0,
        report: &r,
    });
    let (out, _) = lines(p);
    let v: Value = serde_json::from_str(out.trim()).expect("a JSON line");
    assert_eq!(
        (v["trim"]["ios"].as_u64(), v["trim_iops"].as_f64()),
        (Some(5), Some(5.0))
    );
}

#[test]
fn a_preset_run_end_is_its_plan_summary() {
    let outcome = RunOutcome::Completed {
        errors: 0,
        first_error: None,
    };
    let tally = Tally {
        steps: 4,
        steps_run: 4,
        ..Tally::default()
    };
    let ended = RunEvent::Ended {
        outcome: &outcome,
        tally: &tally,
    };
    let mut p = printer(Format::Text, PrintMode::Plan);
    p.event(&ended);
    assert_eq!(lines(p).0, ": completed, 4 of 4 steps run, 0 I/O errors\n");
    let mut p = printer(Format::Json, PrintMode::Plan);
    p.event(&ended);
    assert_eq!(
        lines(p).0,
        "{\"errors\":0,\"format\":1,\"outcome\":\"completed\",\"preset\":\"\",\"steps\":4,\"steps_run\":4,\
         \"type\":\"plan_summary\"}\n"
    );
    // A plain run's end prints nothing.
    let mut p = printer(Format::Text, PrintMode::Single);
    p.event(&ended);
    assert_eq!(lines(p), (String::new(), String::new()));
}

#[test]
fn a_note_goes_to_stderr_in_text_and_is_a_json_line() {
    let mut p = printer(Format::Text, PrintMode::Single);
    p.event(&RunEvent::Note("filled 64MiB\nin 0.3s"));
    assert_eq!(
        lines(p),
        (String::new(), "note: filled 64MiB\\nin 0.3s\n".to_string())
    );
    let mut p = printer(Format::Json, PrintMode::Single);
    p.event(&RunEvent::Note("filled 64MiB"));
    assert_eq!(
        lines(p).0,
        "{\"format\":1,\"message\":\"filled 64MiB\",\"type\":\"note\"}\n"
    );
}

/// Takes `room` bytes, then fails every write as a closed pipe does.
struct Closing {
    room: usize,
    got: Vec<u8>,
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

#[test]
fn a_failed_write_ends_the_output_and_nothing_follows() {
    let c = || Closing {
        room: 60,
        got: Vec::new(),
    };
    let mut p = Printer::on(Format::Json, PrintMode::Single, c(), c());
    p.event(&RunEvent::Note("one"));
    assert!(!p.ended());
    p.event(&RunEvent::Note("a note too long for the room that is left"));
    assert!(p.ended());
    p.event(&RunEvent::Note("two"));
    let (out, _) = p.into_writers();
    assert_eq!(
        out.got,
        b"{\"format\":1,\"message\":\"one\",\"type\":\"note\"}\n"
    );
}

#[test]
fn new_drive_errors_and_the_run_s_wear_end_a_plain_run_s_text_and_json() {
    use crate::run::{Happening, Timed};
    use crate::telemetry::{DriveWear, NewDriveErrors, WearSpan};
    let errors = Timed {
        t_s: 1.0,
        what: Happening::DriveErrors(NewDriveErrors {
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
    let step = WearSpan {
        step: Some(0),
        ..wear
    };
    let mut p = printer(Format::Text, PrintMode::Single);
    p.event(&RunEvent::Happened(&errors));
    p.event(&RunEvent::Wear(&step));
    p.event(&RunEvent::Wear(&wear));
    let (out, _) = lines(p);
    assert_eq!(
        out,
        "[    1.0s] drive_errors: the drive reported 1 new media errors (1 in all) and 3 new \
         error log entries (25 in all)\n\
         drive: host wrote 1000KiB (drivescope 1MiB), media errors +1\n",
        "a step's wear is in the session only"
    );
    let mut p = printer(Format::Json, PrintMode::Single);
    p.event(&RunEvent::Happened(&errors));
    p.event(&RunEvent::Wear(&wear));
    let (out, _) = lines(p);
    let v: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(v[0]["kind"], "drive_errors");
    assert_eq!(v[0]["drive_errors"]["error_log_entries"], 3);
    assert_eq!(v[1]["type"], "drive_wear");
    assert_eq!(v[1]["host_written_bytes"], 1_024_000);
    assert_eq!(v[1]["written_agrees"], true);
    assert_eq!(
        v[1]["read_agrees"],
        Value::Null,
        "the drive counts no reads here"
    );
}

#[test]
fn several_drives_line_up_under_one_header_said_again_after_other_lines() {
    let mut p = printer(Format::Text, PrintMode::Plan);
    p.set_drives(vec!["a".into(), "longer-label".into()]);
    let r = interval();
    let s = step();
    p.drive_event(
        1,
        &RunEvent::Interval {
            index: 0,
            report: &r,
        },
    );
    p.drive_event(
        0,
        &RunEvent::Interval {
            index: 0,
            report: &r,
        },
    );
    p.drive_event(0, &RunEvent::StepFinished(&s));
    p.drive_event(0, &RunEvent::Note("a note between the rows"));
    p.drive_event(
        1,
        &RunEvent::Interval {
            index: 1,
            report: &r,
        },
    );
    let (out, err) = lines(p);
    let out: Vec<&str> = out.lines().collect();
    let header = "                   time  read IOPS  read MB/s";
    assert!(out[0].starts_with(header), "{out:#?}");
    assert!(
        out[1].starts_with("[longer-label]     1.0s      63.5k"),
        "{out:#?}"
    );
    assert!(
        out[2].starts_with("[a]                1.0s      63.5k"),
        "{out:#?}"
    );
    assert!(
        out[3].starts_with("[all]              1.0s     127.0k")
            && out[3].ends_with("  (2 drives; p99: the worst)"),
        "{out:#?}"
    );
    assert_eq!(
        &out[4..6],
        [
            "[a]            step 1/0 randread-4k: achieved 58.1k IOPS, 238 MB/s, mean 465 µs, \
             p99 3.94 ms, p99.9 27.41 ms",
            "[a]              0 errors, 0.4s, ended by duration",
        ],
        "{out:#?}"
    );
    // The step's lines and the note came between: the header again, then the row.
    assert!(out[6].starts_with(header), "{out:#?}");
    assert!(out[7].starts_with("[longer-label]     1.0s"), "{out:#?}");
    assert_eq!(err, "note: [a] a note between the rows\n");
}

#[test]
fn counts_are_singular_for_one() {
    let outcome = RunOutcome::Completed {
        errors: 1,
        first_error: None,
    };
    let tally = Tally {
        steps: 1,
        steps_run: 1,
        errors: 1,
        ..Tally::default()
    };
    let mut p = printer(Format::Text, PrintMode::Plan);
    p.event(&RunEvent::Ended {
        outcome: &outcome,
        tally: &tally,
    });
    assert_eq!(lines(p).0, ": completed, 1 of 1 step run, 1 I/O error\n");
    let mut s = step();
    s.summary.errors = 1;
    s.target_iops = Some(25_000.0);
    s.response_from_schedule_lat_us = Some(s.service_lat_us);
    let mut p = printer(Format::Text, PrintMode::Plan);
    p.event(&RunEvent::StepFinished(&s));
    assert_eq!(
        lines(p).0,
        "step 1/0 randread-4k: target 25.0k IOPS, achieved 58.1k IOPS, 238 MB/s, mean 465 µs, \
         p99 3.94 ms, p99.9 27.41 ms\n  response from schedule mean 465 µs, 1 error, 0.4s, \
         ended by duration\n"
    );
}
