//! The JSON-lines printer's lines on a `Vec<u8>`.

use serde_json::Value;

use super::{completed, finished, interval, interval_of, step, step_result, utf8, Closing, Fed};
use crate::printer::sink::FormatPrinter;
use crate::printer::{JsonPrinter, PrintMode};
use crate::run::{RunEvent, RunView, SinkFlow};

fn printer(mode: PrintMode) -> JsonPrinter<Vec<u8>> {
    JsonPrinter::on(mode, Vec::new())
}

fn out(p: JsonPrinter<Vec<u8>>) -> String {
    utf8(p.into_writer())
}

/// Each line, parsed.
fn values(p: JsonPrinter<Vec<u8>>) -> Vec<Value> {
    out(p)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

#[test]
fn an_interval_is_its_report_with_a_type() {
    let mut p = printer(PrintMode::Single);
    p.show(&interval_of(interval()));
    assert_eq!(
        out(p),
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
fn a_preset_step_end_is_one_object_with_the_plan_s_count() {
    let mut p = printer(PrintMode::Plan);
    p.show(&finished(&step()));
    let v = values(p);
    assert_eq!(v.len(), 1);
    assert_eq!(
        (v[0]["type"].as_str(), v[0]["count"].as_u64()),
        (Some("step"), Some(0))
    );
    assert_eq!(v[0]["name"], "randread-4k");
    assert_eq!(v[0]["format"], 1);
    assert!(
        v[0].get("missed_target").is_none(),
        "unpaced: no target to miss"
    );
    // Paced at 100k, achieved 58.1k: its share and the miss; run closed-loop: neither.
    let mut s = step();
    s.target_iops = Some(100_000.0);
    for (closed_loop, missed) in [(false, Some(true)), (true, None)] {
        s.closed_loop = closed_loop;
        let mut p = printer(PrintMode::Plan);
        p.show(&finished(&s));
        let v = values(p);
        assert_eq!(v[0]["missed_target"].as_bool(), missed, "{}", v[0]);
        if missed.is_some() {
            let share = v[0]["achieved_share"].as_f64().expect("a share");
            assert!(
                (share - s.summary.iops / 100_000.0).abs() < 1e-12,
                "{share}"
            );
        }
    }
}

#[test]
fn an_interval_of_trims_has_its_trim_figures() {
    let mut p = printer(PrintMode::Single);
    let mut r = interval();
    (r.trim.ios, r.trim_iops, r.trim_bw_bytes) = (5, 5.0, 2048000.0);
    p.show(&interval_of(r.clone()));
    let v = values(p);
    assert_eq!(
        (v[0]["trim"]["ios"].as_u64(), v[0]["trim_iops"].as_f64()),
        (Some(5), Some(5.0))
    );
}

#[test]
fn a_preset_run_end_is_its_plan_summary() {
    let mut p = printer(PrintMode::Plan);
    p.show(&completed(4, 0));
    assert_eq!(
        out(p),
        "{\"errors\":0,\"format\":1,\"outcome\":\"completed\",\"preset\":\"\",\"steps\":4,\"steps_run\":4,\
         \"type\":\"plan_summary\"}\n"
    );
}

#[test]
fn a_note_is_a_line_on_stdout() {
    let mut p = printer(PrintMode::Single);
    p.show(&RunEvent::Note("filled 64MiB".into()));
    assert_eq!(
        out(p),
        "{\"format\":1,\"message\":\"filled 64MiB\",\"type\":\"note\"}\n"
    );
}

#[test]
fn the_steps_table_is_one_steps_object() {
    let mut p = printer(PrintMode::Plan);
    p.steps_table(&[step_result()]);
    let v = values(p);
    assert_eq!(v.len(), 1);
    assert_eq!(v[0]["type"], "steps");
    let steps = v[0]["steps"].as_array().expect("the steps");
    assert_eq!(steps.len(), 1);
    assert_eq!(steps[0]["label"], "point 1");
    assert_eq!(steps[0]["read"]["iops"], 12_345.0);
}

#[test]
fn a_failed_write_ends_the_output_and_nothing_follows() {
    let mut p = JsonPrinter::on(PrintMode::Single, Closing::new(60));
    assert_eq!(p.show(&RunEvent::Note("one".into())), SinkFlow::Continue);
    let long = RunEvent::Note("a note too long for the room that is left".into());
    assert_eq!(
        p.show(&long),
        SinkFlow::Stop,
        "its output gone, it ends the run"
    );
    p.show(&RunEvent::Note("two".into()));
    assert_eq!(
        p.into_writer().got,
        b"{\"format\":1,\"message\":\"one\",\"type\":\"note\"}\n"
    );
}

#[test]
fn new_drive_errors_and_the_run_s_wear_are_objects_of_their_own() {
    let (errors, wear) = super::errors_and_wear();
    let mut p = printer(PrintMode::Single);
    p.show(&RunEvent::Happened(errors.clone()));
    p.show(&RunEvent::Wear(Box::new(wear)));
    let v = values(p);
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
fn several_drives_say_whose_each_line_is() {
    let mut p = printer(PrintMode::Plan);
    let mut view = RunView::new(["a", "b"].map(String::from));
    let r = interval();
    for d in [0, 1] {
        p.on(&mut view, Some(d), &interval_of(r.clone()));
    }
    let v = values(p);
    let targets: Vec<&str> = v.iter().filter_map(|x| x["target"].as_str()).collect();
    assert_eq!(targets, ["a", "b", "all"], "{v:#?}");
    assert_eq!(v[2]["drives"], 2);
    assert_eq!(v[2]["read_iops"], 2.0 * 63496.0);
}
