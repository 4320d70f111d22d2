//! The text printer's lines on a `Vec<u8>`.

use std::sync::Arc;

use super::{completed, finished, interval, interval_of, step, step_result, utf8, Closing, Fed};
use crate::printer::sink::FormatPrinter;
use crate::printer::{PrintMode, TextPrinter};
use crate::run::{RunEvent, RunView, SinkFlow};

fn printer(mode: PrintMode) -> TextPrinter<Vec<u8>> {
    TextPrinter::on(mode, Vec::new(), Vec::new())
}

/// What a preset run's printer writes on stdout of `ev`.
fn plan_out(ev: &RunEvent) -> String {
    let mut p = printer(PrintMode::Plan);
    p.show(ev);
    lines(p).0
}

/// What was written on stdout and on stderr.
fn lines(p: TextPrinter<Vec<u8>>) -> (String, String) {
    let (out, err) = p.into_writers();
    (utf8(out), utf8(err))
}

#[test]
fn an_interval_has_the_header_first() {
    let mut p = printer(PrintMode::Single);
    p.show(&interval_of(interval()));
    let (out, err) = lines(p);
    assert_eq!(
        out,
        "    time  read IOPS  read MB/s write IOPS write MB/s   resp p50   resp p99 resp p99.9  errors\n\
         \x20   1.0s      63.5k   260 MB/s          0   0.0 MB/s     248 µs    3.43 ms   26.76 ms       0\n"
    );
    assert_eq!(err, "");
}

#[test]
fn a_preset_step_end_is_two_lines() {
    assert_eq!(
        plan_out(&finished(&step())),
        "step 1/0 randread-4k: achieved 58.1k IOPS, 238 MB/s, service mean 465 µs, p99 3.94 ms, \
         p99.9 27.41 ms\n  0 errors, 0.4s, ended by duration\n"
    );
}

#[test]
fn a_plain_step_end_is_its_summary() {
    let mut p = printer(PrintMode::Single);
    p.show(&finished(&step()));
    let (out, _) = lines(p);
    assert_eq!(
        out,
        "summary: 0.40s measured, engine io_uring, ended by duration\n\
         \x20 read      23243 I/Os, 58.1k IOPS, 238 MB/s (227.0 MiB/s)\n\
         \x20 service   mean 465 µs  min 63 µs  p50 268 µs  p90 355 µs  p99 3.94 ms  p99.9 27.41 ms  p99.99 27.49 ms  max 27.49 ms\n\
         \x20 errors    0\n"
    );
}

#[test]
fn a_plain_step_of_trims_says_its_trims_and_an_interval_its_trim_rate() {
    let mut p = printer(PrintMode::Single);
    let mut s = step();
    let m = &mut s.summary;
    (m.trim_ios, m.trim_bytes, m.trim_iops, m.trim_bw_bytes) = (100, 409600, 250.0, 1024000.0);
    m.trim_lat_us = m.read_lat_us;
    p.show(&finished(&s));
    let mut r = interval();
    (r.trim.ios, r.trim_iops, r.trim_bw_bytes) = (5, 5.0, 2048000.0);
    p.show(&interval_of(r.clone()));
    let (out, _) = lines(p);
    assert!(
        out.contains("\n  trim      100 I/Os, 250 IOPS, 1.0 MB/s (1.0 MiB/s)\n  service   "),
        "{out}"
    );
    // Reads and trims: each one's latency.
    assert!(
        out.contains("\n  trim      service mean 465 µs  min 63 µs"),
        "{out}"
    );
    assert!(out.contains("       0  trim 5 IOPS 2.0 MB/s\n"), "{out}");
}

#[test]
fn a_preset_run_end_is_its_plan_summary_and_a_plain_run_s_nothing() {
    let ended = completed(4, 0);
    assert_eq!(
        plan_out(&ended),
        ": completed, 4 of 4 steps run, 0 I/O errors\n"
    );
    let mut p = printer(PrintMode::Single);
    p.show(&ended);
    assert_eq!(lines(p), (String::new(), String::new()));
}

#[test]
fn a_note_goes_to_stderr_escaped() {
    let mut p = printer(PrintMode::Single);
    p.show(&RunEvent::Note("filled 64MiB\nin 0.3s".into()));
    assert_eq!(
        lines(p),
        (String::new(), "note: filled 64MiB\\nin 0.3s\n".to_string())
    );
}

#[test]
fn the_steps_table_is_aligned_on_stdout() {
    let mut p = printer(PrintMode::Plan);
    p.steps_table(&[step_result()]);
    let (out, err) = lines(p);
    let rows: Vec<&str> = out.lines().collect();
    assert_eq!(rows.len(), 2, "a header and the step's reads: {out}");
    assert!(rows[0].starts_with("step  label"), "{out}");
    assert!(
        rows[1].starts_with("   1  point 1")
            && rows[1].contains("12.3k")
            && rows[1].contains("850 µs"),
        "{out}"
    );
    assert_eq!(err, "");
    // No step ran: no table.
    let mut p = printer(PrintMode::Plan);
    p.steps_table(&[]);
    assert_eq!(lines(p), (String::new(), String::new()));
}

#[test]
fn a_failed_write_ends_the_output_on_both_streams() {
    let mut p = TextPrinter::on(PrintMode::Plan, Closing::new(50), Closing::new(50));
    let flow = p.show(&finished(&step()));
    assert_eq!(
        flow,
        SinkFlow::Stop,
        "the step's first line is longer than the room"
    );
    p.show(&RunEvent::Note("one".into()));
    p.show(&interval_of(interval()));
    let (out, err) = p.into_writers();
    assert!(out.got.is_empty() && err.got.is_empty(), "nothing after it");
    // Room for a note, not for the next.
    let mut p = TextPrinter::on(PrintMode::Plan, Closing::new(100), Closing::new(15));
    assert_eq!(p.show(&RunEvent::Note("one".into())), SinkFlow::Continue);
    assert_eq!(
        p.show(&RunEvent::Note("a note too long".into())),
        SinkFlow::Stop
    );
    p.show(&RunEvent::Note("two".into()));
    assert_eq!(p.into_writers().1.got, b"note: one\n");
}

#[test]
fn new_drive_errors_and_the_run_s_wear_end_a_plain_run() {
    let (errors, wear) = super::errors_and_wear();
    let step = crate::telemetry::WearSpan {
        step: Some(0),
        ..wear
    };
    let mut p = printer(PrintMode::Single);
    p.show(&RunEvent::Happened(errors.clone()));
    p.show(&RunEvent::Wear(Box::new(step)));
    p.show(&RunEvent::Wear(Box::new(wear)));
    let (out, _) = lines(p);
    assert_eq!(
        out,
        "[    1.0s] drive_errors: the drive reported 1 new media errors (1 in all) and 3 new \
         error log entries (25 in all)\n\
         drive: host wrote 1000KiB (drivescope 1MiB), media errors +1\n",
        "a step's wear is in the session only"
    );
}

#[test]
fn several_drives_line_up_under_one_header_said_again_after_other_lines() {
    let mut p = printer(PrintMode::Plan);
    let mut view = RunView::new(["a", "longer-label"].map(String::from));
    let (r, s) = (interval(), step());
    let iv = |index| RunEvent::Interval {
        index,
        report: Arc::new(r.clone()),
    };
    let note = RunEvent::Note("a note between the rows".into());
    let end = finished(&s);
    for (d, ev) in [(1, iv(0)), (0, iv(0)), (0, end), (0, note), (1, iv(1))] {
        p.on(&mut view, Some(d), &ev);
    }
    let (out, err) = lines(p);
    let out: Vec<&str> = out.lines().collect();
    let header = "                   time  read IOPS  read MB/s";
    // The step's lines and the note came between rows 3 and 6: the header again, then the row.
    for (i, start) in [
        (0, header),
        (1, "[longer-label]     1.0s      63.5k"),
        (2, "[a]                1.0s      63.5k"),
        (3, "[all]              1.0s     127.0k"),
        (6, header),
        (7, "[longer-label]     1.0s"),
    ] {
        assert!(out[i].starts_with(start), "{i}: {out:#?}");
    }
    assert!(
        out[3].ends_with("  (2 drives; resp p99: the worst)"),
        "{out:#?}"
    );
    assert_eq!(
        &out[4..6],
        [
            "[a]            step 1/0 randread-4k: achieved 58.1k IOPS, 238 MB/s, service mean 465 µs, \
             p99 3.94 ms, p99.9 27.41 ms",
            "[a]              0 errors, 0.4s, ended by duration",
        ],
        "{out:#?}"
    );
    assert_eq!(err, "note: [a] a note between the rows\n");
}

#[test]
fn counts_are_singular_for_one() {
    assert_eq!(
        plan_out(&completed(1, 1)),
        ": completed, 1 of 1 step run, 1 I/O error\n"
    );
    let mut s = step();
    s.summary.errors = 1;
    s.target_iops = Some(25_000.0);
    s.response_from_schedule_lat_us = Some(s.service_lat_us);
    assert_eq!(
        plan_out(&finished(&s)),
        "step 1/0 randread-4k: target 25.0k IOPS, achieved 58.1k IOPS (232% of target), 238 MB/s, \
         service mean 465 µs, p99 3.94 ms, p99.9 27.41 ms\n  response from schedule mean 465 µs, \
         1 error, 0.4s, ended by duration\n"
    );
    // A step under 97% of its target says it missed it; one run closed-loop has no share.
    s.target_iops = Some(100_000.0);
    assert!(plan_out(&finished(&s)).starts_with(
        "step 1/0 randread-4k: target 100.0k IOPS, achieved 58.1k IOPS (58% of target: MISSED), "
    ));
    s.closed_loop = true;
    assert!(plan_out(&finished(&s)).contains("(run closed-loop), achieved 58.1k IOPS, "));
}

/// An interval's failed I/Os on stderr: a drive's error as an I/O error, a request the
/// kernel refused as refused.
#[test]
fn a_refused_request_is_not_printed_as_an_io_error() {
    let mut p = printer(PrintMode::Single);
    let mut r = interval();
    r.errors = 2;
    r.error_records = vec![
        crate::stats::IoErrorRecord::trim(0, 4096, -i64::from(libc::EINVAL)),
        crate::stats::IoErrorRecord::new(8192, 4096, false, -i64::from(libc::EIO)),
    ];
    p.show(&interval_of(r));
    let (_, err) = lines(p);
    assert_eq!(
        err,
        "refused: trim of 4096 B at offset 0 refused by the kernel: Invalid argument (os error \
         22) (the request, not a drive error)\n\
         I/O error: read of 4096 B at offset 8192: Input/output error (os error 5)\n"
    );
}
