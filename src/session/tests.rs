//! Round trips through the recorder and the reader: the stream form, the final single
//! document, truncation at any byte and corrupted lines.

use std::path::Path;

use serde_yaml::Value;

use super::*;
use crate::stats::{DirCounts, IntervalReport, LatHists, LatSummary, StepSummary};

/// An interval as the engine reports it, with real histograms behind its figures.
pub(crate) fn report(index: u64, iops: u64, lat_ns: u64) -> IntervalReport {
    let mut h = LatHists::new(false);
    for i in 0..iops {
        h.service[0].saturating_record(lat_ns + i % 1000);
    }
    IntervalReport {
        index,
        start_s: index as f64,
        end_s: index as f64 + 1.0,
        read: DirCounts {
            ios: iops,
            bytes: iops * 4096,
        },
        read_iops: iops as f64,
        read_bw_bytes: (iops * 4096) as f64,
        lat_us: LatSummary::from_hist(&h.service_all()),
        hists: Some(Box::new(h)),
        ..Default::default()
    }
}

pub(crate) fn step_summary(iops: f64) -> StepSummary {
    StepSummary {
        runtime_s: 3.0,
        ios: (iops * 3.0) as u64,
        read_ios: (iops * 3.0) as u64,
        read_bytes: (iops * 3.0) as u64 * 4096,
        iops,
        read_iops: iops,
        read_bw_bytes: iops * 4096.0,
        target_iops: Some(iops),
        lat_us: LatSummary {
            samples: 3,
            p50: 80.0,
            p99: 150.0 + iops / 1000.0,
            ..LatSummary::default()
        },
        ended_by: crate::outcome::EndedBy::Duration,
        ..Default::default()
    }
}

fn start() -> SessionStart {
    SessionStart {
        target: TargetInfo {
            path: "/tmp/x.bin".into(),
            kind: crate::session::Word::Known(crate::session::TargetKind::File),
            size_bytes: 1 << 30,
            align_bytes: 4096,
            ..TargetInfo::default()
        },
        command: Some("drivescope run --rw randread".into()),
        drive: Some(DriveIdentity {
            disks: vec![DiskIdentity {
                model: Some("Test SSD".into()),
                serial: Some("0042".into()),
                ..DiskIdentity::default()
            }],
            ..DriveIdentity::default()
        }),
        ..SessionStart::default()
    }
}

/// A recorder with two steps of three intervals, telemetry and events, autosaved after
/// every interval; returns it unfinalized.
fn recorded(path: &Path) -> SessionRecorder {
    let start = SessionStart {
        plan: Document::from_yaml("{steps: 2}"),
        ..start()
    };
    let mut r = SessionRecorder::create(path, start, RecorderOptions::default()).unwrap();
    for (s, iops) in [(0u32, 10_000u64), (1, 20_000)] {
        r.begin_step(
            format!("step {s}"),
            Some(super::StepPoint {
                phase: Some(0),
                sweep_point: Some(f64::from(s * 50)),
                ..super::StepPoint::default()
            }),
            None,
        );
        for i in 0..3 {
            r.push_interval(&report(i, iops / 100, 80_000 + u64::from(s) * 1000));
            r.push_telemetry(
                serde_yaml::from_str::<Value>(&format!(
                    "{{temperature_c: {}, smart: {{data_units_written: {}}}}}",
                    40 + i,
                    1000 + i * 10
                ))
                .unwrap(),
            );
            r.autosave().unwrap();
        }
        let mut summary = step_summary(iops as f64);
        if s == 1 {
            // An fio job file's step: each of fio's jobs on its own.
            summary.fio_series = vec![crate::stats::SeriesSummary {
                name: "randr".into(),
                runtime_s: 2.5,
                read: crate::stats::SeriesDir {
                    ios: 600,
                    bytes: 600 * 4096,
                    iops: 240.0,
                    lat_us: summary.lat_us,
                },
                ..Default::default()
            }];
        }
        r.end_step(summary);
        r.push_event(EventKind::Note, format!("step {s} \"done\" \u{7}"));
        r.autosave().unwrap();
    }
    r.flush();
    r
}

/// The final save of a run that completed.
fn completed(r: SessionRecorder) -> std::path::PathBuf {
    r.finalize(SessionState::Complete, &RunEnd::parse("completed"))
        .unwrap()
}

fn same_records(a: &Session, b: &Session) {
    assert_eq!(a.intervals, b.intervals);
    assert_eq!(a.telemetry, b.telemetry);
    assert_eq!(a.events, b.events);
    assert_eq!(a.steps.len(), b.steps.len());
    for (x, y) in a.steps.iter().zip(&b.steps) {
        assert_eq!(x.label, y.label);
        assert_eq!(x.point, y.point);
        assert_eq!(x.summary.iops, y.summary.iops);
        assert_eq!(x.summary.lat_us, y.summary.lat_us);
        assert_eq!(x.summary.fio_series, y.summary.fio_series);
    }
    assert_eq!(a.drive, b.drive);
    assert_eq!(a.plan, b.plan);
    assert_eq!(a.target, b.target);
    assert_eq!(a.host, b.host);
    assert_eq!(a.started, b.started);
    assert_eq!(a.command, b.command);
    assert_eq!(a.schema_version, b.schema_version);
    assert_eq!(a.drivescope_version, b.drivescope_version);
}

#[test]
fn the_stream_and_the_final_document_load_the_same_session() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s.yaml");
    let r = recorded(&p);
    let live = r.session().clone();
    assert_eq!(live.telemetry.len(), 6);
    let stream = load(&p).unwrap();
    assert!(stream.warnings.is_empty(), "{:?}", stream.warnings);
    assert!(stream.documents > 5, "{}", stream.documents);
    assert_eq!(stream.session.state, SessionState::Running);
    assert!(stream.session.summary.is_none());
    same_records(&live, &stream.session);
    assert_eq!(stream.session.intervals.len(), 6);
    assert_eq!(stream.session.intervals[3].step, 1);

    let saved = completed(r);
    let fin = load(&saved).unwrap();
    assert!(fin.warnings.is_empty(), "{:?}", fin.warnings);
    assert_eq!(fin.documents, 1);
    same_records(&live, &fin.session);
    assert_eq!(fin.session.state, SessionState::Complete);
    let sm = fin.session.summary.clone().unwrap();
    assert_eq!(sm.intervals, 6);
    assert_eq!(sm.steps, 2);
    assert_eq!(sm.read_bytes, (3 * 100 + 3 * 200) * 4096);
    // The session's latency comes from the merged histograms: 80 µs and 81 µs steps.
    assert!(
        sm.lat_us.p50 >= 80.0 && sm.lat_us.max < 82.5,
        "{:?}",
        sm.lat_us
    );
    // The file is one document with the named top-level keys, summary last.
    let text = std::fs::read_to_string(&saved).unwrap();
    let keys: Vec<&str> = text
        .lines()
        .filter(|l| l.chars().next().is_some_and(|c| c.is_ascii_lowercase()))
        .filter_map(|l| l.split(':').next())
        .collect();
    for k in [
        "schema_version",
        "host",
        "drive",
        "target",
        "preset",
        "plan",
        "intervals",
        "steps",
        "telemetry",
        "events",
        "summary",
    ] {
        assert!(keys.contains(&k), "{k} missing from {keys:?}");
    }
    assert_eq!(keys.last(), Some(&"summary"));
    // Only a step with fio series says so: other steps are saved as before.
    assert_eq!(text.matches("fio_series:").count(), 1, "{text}");
    assert_eq!(fin.session.steps[1].summary.fio_series[0].read.ios, 600);
    assert!(fin.session.steps[0].summary.fio_series.is_empty());
    assert!(!text.contains("\n---"), "one document");
}

#[test]
fn a_cut_at_any_byte_loads_a_prefix_of_what_was_written() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s.yaml");
    let r = recorded(&p);
    let live = r.session().clone();
    let full = std::fs::read(&p).unwrap();
    drop(r);
    let cut = dir.path().join("cut.yaml");
    let header_end = full
        .windows(4)
        .position(|w| w == b"\n---")
        .unwrap_or(full.len());
    let mut last_count = 0;
    for n in (0..=full.len()).step_by(7).chain([full.len()]) {
        std::fs::write(&cut, &full[..n]).unwrap();
        match load(&cut) {
            Ok(l) => {
                let iv = &l.session.intervals;
                assert!(iv.len() <= live.intervals.len());
                assert_eq!(&live.intervals[..iv.len()], &iv[..], "cut at {n}");
                assert!(
                    iv.len() >= last_count,
                    "cut at {n}: fewer than a shorter cut"
                );
                last_count = iv.len();
                assert_eq!(
                    l.session.telemetry[..],
                    live.telemetry[..l.session.telemetry.len()]
                );
                for w in &l.warnings {
                    assert!(w.starts_with(&format!("{}:", cut.display())), "{w}");
                }
            }
            Err(SessionError::NotASession { .. }) => {
                assert!(n < header_end + 1, "cut at {n} of {} refused", full.len())
            }
            Err(e) => panic!("cut at {n}: {e}"),
        }
    }
    assert_eq!(last_count, live.intervals.len());
}

#[test]
fn a_corrupted_line_costs_that_record_and_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s.yaml");
    let r = recorded(&p);
    let saved = completed(r);
    let text = std::fs::read_to_string(&saved).unwrap();
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let target = lines
        .iter()
        .position(|l| l.starts_with("- {\"t\":"))
        .unwrap()
        + 2;
    lines[target] = lines[target].replace("\"read_iops\": ", "\"read_iops\": x");
    let summary_line = lines.iter().position(|l| l == "summary:").unwrap();
    lines[summary_line + 2] = "  ended_by: [oops".into();
    let bad = dir.path().join("bad.yaml");
    std::fs::write(&bad, lines.join("\n") + "\n").unwrap();
    let l = load(&bad).unwrap();
    assert_eq!(l.session.intervals.len(), 5);
    assert_eq!(l.session.steps.len(), 2);
    assert_eq!(l.session.telemetry.len(), 6);
    assert!(l.session.summary.is_none());
    assert_eq!(l.warnings.len(), 2, "{:?}", l.warnings);
    let want = format!("{}:{}:", bad.display(), target + 1);
    assert!(
        l.warnings[0].starts_with(&want),
        "{:?} vs {want}",
        l.warnings
    );
    assert!(l.warnings[0].contains("read_iops"), "{:?}", l.warnings);
    assert!(
        l.warnings[1].contains("dropped `summary`"),
        "{:?}",
        l.warnings
    );

    // Bytes that are not UTF-8 are named too, and cost only what they break.
    let mut bytes = text.into_bytes();
    let at = bytes.windows(8).position(|w| w == b"- {\"t\": ").unwrap() + 10;
    bytes[at] = 0xff;
    std::fs::write(&bad, &bytes).unwrap();
    let l = load(&bad).unwrap();
    assert_eq!(l.session.intervals.len(), 5);
    assert!(l.warnings[0].contains("not UTF-8"), "{:?}", l.warnings);
}

#[test]
fn an_unwritable_path_fails_at_create() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plain");
    std::fs::write(&file, "not a folder").unwrap();
    let e = SessionRecorder::create(&file.join("s.yaml"), start(), RecorderOptions::default());
    assert!(e.is_err());
    // A file that is not a session is not overwritten.
    let e = SessionRecorder::create(&file, start(), RecorderOptions::default());
    let msg = e.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(msg.contains("drivescope did not write"), "{msg}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "not a folder");
}

#[test]
fn dropping_the_recorder_still_saves() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s.yaml");
    {
        let mut r = SessionRecorder::create(&p, start(), RecorderOptions::default()).unwrap();
        r.push_interval(&report(0, 50, 100_000));
    }
    let l = load(&p).unwrap();
    assert_eq!(l.documents, 1);
    assert_eq!(l.session.intervals.len(), 1);
    assert_eq!(l.session.state, SessionState::Failed);
    assert_eq!(l.session.events.len(), 1, "the unfinished step is noted");
}

#[test]
fn an_autosave_writes_only_what_is_new() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s.yaml");
    let mut r = SessionRecorder::create(&p, start(), RecorderOptions::default()).unwrap();
    let size = |r: &SessionRecorder| {
        r.flush();
        std::fs::metadata(&p).unwrap().len()
    };
    let five = |r: &mut SessionRecorder, from: u64| {
        for i in from..from + 5 {
            r.push_interval(&report(i, 100, 90_000));
        }
    };
    let s0 = size(&r);
    five(&mut r, 0);
    r.autosave().unwrap();
    let first = size(&r) - s0;
    for i in 0..400 {
        five(&mut r, 5 + i * 5);
        r.autosave().unwrap();
    }
    let s1 = size(&r);
    five(&mut r, 5_000);
    r.autosave().unwrap();
    let late = size(&r) - s1;
    assert!(first > 5 * 100, "{first}");
    // Same five records, a few more digits in their times: not 400 times the data.
    assert!(late < first + 5 * 16, "first {first} B, late {late} B");
    let l = load(&p).unwrap();
    assert_eq!(l.session.intervals.len(), 5 * 402);
    assert_eq!(l.documents, 403);
}

#[test]
fn a_folder_moved_under_the_run_still_gets_the_final_save_and_a_file_put_in_its_place_stays() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("runs");
    let p = sub.join("s.yaml");
    let mut r = SessionRecorder::create(&p, start(), RecorderOptions::default()).unwrap();
    for i in 0..3 {
        r.push_interval(&report(i, 100, 90_000));
    }
    r.autosave().unwrap();
    r.push_interval(&report(3, 100, 90_000));
    // The folder goes away under the run and a folder of the user's takes its name, with
    // a file at the session's name: the folder held open is the one written.
    let moved = dir.path().join("moved");
    std::fs::rename(&sub, &moved).unwrap();
    std::fs::create_dir(&sub).unwrap();
    std::fs::write(&p, "the user's").unwrap();
    let saved = completed(r);
    assert_eq!(
        saved.canonicalize().unwrap(),
        moved.join("s.yaml").canonicalize().unwrap(),
        "written in the folder held, and said so"
    );
    assert_eq!(std::fs::read_to_string(&p).unwrap(), "the user's");
    let l = load(&moved.join("s.yaml")).unwrap();
    assert_eq!(l.session.intervals.len(), 4);
    assert_eq!(l.session.state, SessionState::Complete);
    assert_eq!(l.session.summary.unwrap().intervals, 4);
}

#[test]
fn target_kinds_and_run_ends_read_back_as_written_and_unknown_words_survive() {
    use crate::outcome::{RunOutcome, StopBy};
    use crate::session::{RunEnd, TargetKind, Word};
    let word = |w: &str| Value::String(w.into());
    for w in ["file", "block_device", "nvme_generic", "none", "tape", ""] {
        let k: Word<TargetKind> = serde_yaml::from_value(word(w)).unwrap();
        assert_eq!(serde_yaml::to_value(&k).unwrap(), word(w));
        assert_eq!(k.to_string(), w);
    }
    let k: Word<TargetKind> = serde_yaml::from_value(word("block_device")).unwrap();
    assert_eq!(k, Word::Known(TargetKind::BlockDevice));
    let k: Word<TargetKind> = serde_yaml::from_value(word("tape")).unwrap();
    assert_eq!(k, Word::Unknown("tape".into()));
    for w in [
        "completed",
        "completed with 3 I/O errors (first: EIO at 4096)",
        "stopped by a signal",
        "stopped",
        "error: the device went away",
        "drive b, read: every I/O failed (EIO)",
        "something a later drivescope says",
        "",
    ] {
        let e: RunEnd = serde_yaml::from_value(word(w)).unwrap();
        assert_eq!(serde_yaml::to_value(&e).unwrap(), word(w), "{e:?}");
    }
    let e: RunEnd = serde_yaml::from_value(word("stopped by a signal")).unwrap();
    assert_eq!(e, RunEnd::Outcome(RunOutcome::Stopped(StopBy::Signal)));
    let e: RunEnd = serde_yaml::from_value(word("error: gone")).unwrap();
    assert_eq!(e, RunEnd::Error("gone".into()));
}

#[test]
fn trims_are_saved_only_when_there_are_some_and_an_older_file_reads_without_them() {
    let plain = report(0, 1000, 50_000);
    let rec = IntervalRecord::from_report(0, 0.0, &plain);
    let text = serde_yaml::to_string(&rec).unwrap();
    assert!(!text.contains("trim"), "{text}");
    let mut trims = plain.clone();
    (trims.trim.ios, trims.trim_iops, trims.trim_bw_bytes) = (100, 100.0, 409600.0);
    let rec = IntervalRecord::from_report(0, 0.0, &trims);
    let text = serde_yaml::to_string(&rec).unwrap();
    assert!(
        text.contains("trim_iops: 100.0") && text.contains("trim_mbps: 0.4096"),
        "{text}"
    );
    let back: IntervalRecord = serde_yaml::from_str(&text).unwrap();
    assert_eq!(back, rec);
    assert_eq!(back.iops(), rec.read_iops + 100.0);
    let summary = step_summary(1000.0);
    let text = serde_yaml::to_string(&summary).unwrap();
    assert!(!text.contains("trim"), "{text}");
    let old: StepSummary = serde_yaml::from_str(&text).unwrap();
    assert_eq!((old.trim_ios, old.trim_lat_us.samples), (0, 0));
}

#[test]
fn the_golden_sessions_header_is_written_back_as_the_release_wrote_it() {
    // The sessions of the previous release (tests/fixtures/sessions): read and written
    // again, their drive, target, drives, preset and plan are the same text.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sessions");
    let mut seen = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let path = e.unwrap().path().join("session.yaml");
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let s = parse(&path, &text).unwrap().session;
        let again = to_yaml(&s).unwrap();
        let header = |t: &str| {
            let from = t.find("\ndrive:").unwrap();
            let to = t.find("\nintervals:").unwrap();
            t[from..to].to_string()
        };
        assert_eq!(header(&again), header(&text), "{}", path.display());
        seen += 1;
    }
    assert!(seen >= 6, "{seen} sessions");
}

#[test]
fn a_telemetry_sample_is_stored_as_its_time_its_keys_and_its_drive_and_reads_back_typed() {
    use crate::telemetry::TelemetrySample;
    let dir = tempfile::tempdir().unwrap();
    let entry = |label: &str| DriveEntry {
        label: label.into(),
        target: start().target,
        identity: None,
    };
    let two = SessionStart {
        drives: vec![entry("a"), entry("b")],
        ..start()
    };
    let path = dir.path().join("s.yaml");
    let mut r = SessionRecorder::create(&path, two, RecorderOptions::default()).unwrap();
    let sample: TelemetrySample = serde_json::from_str(
        r#"{"t_ns": 5, "smart": {"temperature_c": 41, "ata_attributes": [{"id": 5, "flags": 51, "raw": 3}]}, "notes": []}"#,
    )
    .unwrap();
    r.set_current_drive(Some(1));
    let table = &sample.smart.as_ref().unwrap().ata_attributes;
    assert!(r.keep_ata_table(table), "a drive's first table");
    assert!(!r.keep_ata_table(table), "the same table again");
    r.set_current_drive(Some(0));
    assert!(r.keep_ata_table(table), "the other drive's first");
    r.set_current_drive(Some(1));
    let line = r.push_telemetry(&sample).as_str().to_string();
    assert!(line.starts_with(r#"{"t": "#), "{line}");
    assert!(line.ends_with(r#""drive": 1}"#), "{line}");
    let stored = &r.session().telemetry[0];
    assert_eq!(stored.read::<TelemetrySample>().as_ref(), Some(&sample));
    assert_eq!(
        (stored.drive(), stored.temperature_c()),
        (Some(1), Some(41.0))
    );
}
