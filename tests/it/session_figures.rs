//! The golden figures of issue 40: sessions written by an earlier release
//! (tests/fixtures/sessions/, made by 945eadd, see its README.md) still give the same figures
//! per step in `export --format csv`, `export --format json` and `report`'s steps.csv. Read by
//! name, not by position: a column (or JSON key) may be added or renamed (each figure has its
//! names below), but a step's I/Os must be equal and its IOPS, MB/s and latencies equal to
//! the printed precision; a figure that is missing or differs fails, naming the fixture, the
//! output, the step and the column. A session newer than this build is refused by version.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// Every fixture folder, each a session of the release that made them.
const FIXTURES: &[&str] = &[
    "diskmark",
    "fio-job",
    "quick-look",
    "stopped",
    "storagereview-sweep",
    "two-drives",
];

/// The files of each fixture folder: the session and the outputs the release made of it.
const SESSION: &str = "session.yaml";
const EXPORT_CSV: &str = "export.csv";
const EXPORT_JSON: &str = "export.json";
const REPORT_STEPS_CSV: &str = "report-steps.csv";

/// The fixtures are kept small (the whole folder, every file).
const FIXTURES_MAX_BYTES: u64 = 400 * 1024;

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sessions")
}

/// How a figure is compared.
#[derive(Clone, Copy, Debug)]
enum Kind {
    /// A count (I/Os, errors): exactly.
    Count,
    /// A rate, size or time: the CSV prints `decimals` places (trailing zeros dropped), so a
    /// CSV cell may differ by one unit in its last place; JSON prints the whole f64, so a
    /// JSON value may differ by rounding only (relative 1e-9).
    Real { decimals: i32 },
    /// A word, flag or label: exactly.
    Text,
}

/// One figure of a step: the names it is found by in a CSV header (the release's name first,
/// then others it may be renamed to or was once called) and in a JSON step record (JSON
/// pointers, likewise), and how it is compared.
struct Figure {
    csv: Vec<String>,
    json: Vec<String>,
    kind: Kind,
}

impl Figure {
    /// The figure's name in a failure: the release's CSV column.
    fn name(&self) -> &str {
        &self.csv[0]
    }
}

/// The latency summary's figures, in the release's names.
const LATENCIES: &[&str] = &["mean", "p50", "p99", "p99.9", "p99.99", "p99.999", "max"];

const REAL3: Kind = Kind::Real { decimals: 3 };

/// The alias table: every figure a step record holds, with each of its names.
fn figures() -> Vec<Figure> {
    let fig = |csv: &[&str], json: &[&str], kind| Figure {
        csv: csv.iter().map(|s| s.to_string()).collect(),
        json: json.iter().map(|s| s.to_string()).collect(),
        kind,
    };
    let mut out = vec![
        fig(&["label"], &["/label"], Kind::Text),
        fig(&["workload"], &["/workload"], Kind::Text),
        fig(&["target_iops"], &["/target_iops"], REAL3),
        fig(&["errors"], &["/errors"], Kind::Count),
        fig(&["ended_by"], &["/ended_by"], Kind::Text),
        fig(&["measured_s"], &["/measured_s"], REAL3),
        fig(
            &["achieved_share"],
            &["/achieved_share"],
            Kind::Real { decimals: 4 },
        ),
        fig(&["missed_target"], &["/missed_target"], Kind::Text),
    ];
    for dir in ["read", "write", "trim"] {
        out.push(fig(
            &[&format!("{dir}_ios")],
            &[&format!("/{dir}/ios")],
            Kind::Count,
        ));
        out.push(fig(
            &[&format!("{dir}_iops")],
            &[&format!("/{dir}/iops")],
            REAL3,
        ));
        out.push(fig(
            &[&format!("{dir}_mbps")],
            &[&format!("/{dir}/mbps")],
            REAL3,
        ));
        for p in LATENCIES {
            out.push(fig(
                &[
                    &format!("{dir}_response_lat_{p}_us"),
                    &format!("{dir}_lat_{p}_us"),
                ],
                &[
                    &format!("/{dir}/response_lat_us/{p}"),
                    &format!("/{dir}/lat_us/{p}"),
                ],
                REAL3,
            ));
        }
    }
    for which in ["service", "response"] {
        for p in LATENCIES {
            out.push(fig(
                &[&format!("{which}_lat_{p}_us")],
                &[&format!("/{which}_lat_us/{p}")],
                REAL3,
            ));
        }
    }
    out
}

/// The names a step is known by: its drive (a run of several) and its number.
const DRIVE_NAMES: &[&str] = &["drive"];
const STEP_NAMES: &[&str] = &["step", "index"];

/// One figure of one step as an output gives it.
#[derive(Clone, Debug, PartialEq)]
enum Got {
    /// No column (no key) of any of the figure's names.
    Missing,
    /// The column is there, its cell empty; in JSON a null.
    Empty,
    Value(String),
}

/// A step's identity (drive, step number) and its figures by figure name.
type Steps = BTreeMap<(String, String), BTreeMap<String, Got>>;

/// The records of a CSV text (RFC 4180: quoted cells, `""` a quote, a newline in quotes).
fn csv_records(text: &str) -> Vec<Vec<String>> {
    let mut records = Vec::new();
    let mut record = Vec::new();
    let mut cell = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                cell.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => cell.push(c),
            (false, '"') => quoted = true,
            (false, ',') => record.push(std::mem::take(&mut cell)),
            (false, '\n') => {
                record.push(std::mem::take(&mut cell));
                records.push(std::mem::take(&mut record));
            }
            (false, '\r') if chars.peek() == Some(&'\n') => {}
            (false, c) => cell.push(c),
        }
    }
    if !cell.is_empty() || !record.is_empty() {
        record.push(cell);
        records.push(record);
    }
    records
}

/// A CSV of steps, read by its header's names.
fn csv_steps(text: &str) -> Result<Steps, String> {
    let records = csv_records(text);
    let (header, rows) = records.split_first().ok_or("no header")?;
    let column = |names: &[String]| {
        names
            .iter()
            .find_map(|n| header.iter().position(|h| h == n))
    };
    let names = |ns: &[&str]| ns.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let step_col = column(&names(STEP_NAMES)).ok_or("no step column")?;
    let drive_col = column(&names(DRIVE_NAMES));
    let figures = figures();
    let mut steps = Steps::new();
    for (i, row) in rows.iter().enumerate() {
        if row.len() != header.len() {
            return Err(format!(
                "row {} has {} cells, the header {}",
                i + 2,
                row.len(),
                header.len()
            ));
        }
        let key = (
            drive_col.map(|c| row[c].clone()).unwrap_or_default(),
            row[step_col].clone(),
        );
        let got = figures
            .iter()
            .map(|f| {
                let g = match column(&f.csv) {
                    None => Got::Missing,
                    Some(c) if row[c].is_empty() => Got::Empty,
                    Some(c) => Got::Value(row[c].clone()),
                };
                (f.name().to_string(), g)
            })
            .collect();
        if steps.insert(key.clone(), got).is_some() {
            return Err(format!("step {} twice", show_key(&key)));
        }
    }
    Ok(steps)
}

/// What `pointer` leads to in `v`: a null on the way (a direction with no latency) is
/// [`Got::Empty`], a key not there [`Got::Missing`].
fn json_at(v: &Value, pointer: &str) -> Got {
    let mut at = v;
    for key in pointer.split('/').skip(1) {
        at = match at {
            Value::Null => return Got::Empty,
            Value::Object(m) => match m.get(key) {
                Some(next) => next,
                None => return Got::Missing,
            },
            _ => return Got::Missing,
        };
    }
    match at {
        Value::Null => Got::Empty,
        Value::String(s) => Got::Value(s.clone()),
        other => Got::Value(other.to_string()),
    }
}

/// The step records of `export --format json` (`{"type":"steps","steps":[…]}`, or a bare
/// list), read by key.
fn json_steps(text: &str) -> Result<Steps, String> {
    let v: Value = serde_json::from_str(text.trim()).map_err(|e| e.to_string())?;
    let list = match &v {
        Value::Array(a) => a,
        _ => v["steps"].as_array().ok_or("no `steps` list")?,
    };
    let first = |step: &Value, names: &[&str]| {
        names
            .iter()
            .map(|n| json_at(step, &format!("/{n}")))
            .find(|g| *g != Got::Missing)
    };
    let figures = figures();
    let mut steps = Steps::new();
    for step in list {
        let key_part = |names: &[&str]| match first(step, names) {
            Some(Got::Value(s)) => s,
            _ => String::new(),
        };
        let key = (key_part(DRIVE_NAMES), key_part(STEP_NAMES));
        if key.1.is_empty() {
            return Err(format!("a step record without a step number: {step}"));
        }
        let got = figures
            .iter()
            .map(|f| {
                let g = f
                    .json
                    .iter()
                    .map(|p| json_at(step, p))
                    .find(|g| *g != Got::Missing)
                    .unwrap_or(Got::Missing);
                (f.name().to_string(), g)
            })
            .collect();
        if steps.insert(key.clone(), got).is_some() {
            return Err(format!("step {} twice", show_key(&key)));
        }
    }
    Ok(steps)
}

fn show_key((drive, step): &(String, String)) -> String {
    if drive.is_empty() {
        step.clone()
    } else {
        format!("{step} of drive {drive}")
    }
}

/// Which output a comparison reads, for its tolerance and its failures.
#[derive(Clone, Copy, PartialEq)]
enum Format {
    Csv,
    Json,
}

/// Whether `got` is `expected` for a figure of `kind`, read from `format`.
fn same(kind: Kind, format: Format, expected: &str, got: &str) -> bool {
    let num = |s: &str| s.trim_start_matches('\'').parse::<f64>().ok();
    match kind {
        Kind::Text => expected == got,
        Kind::Count => match (num(expected), num(got)) {
            (Some(e), Some(g)) => e == g,
            _ => expected == got,
        },
        Kind::Real { decimals } => match (num(expected), num(got)) {
            (Some(e), Some(g)) => {
                let bound = match format {
                    // One unit in the last printed place, and a hair for f64's own error.
                    Format::Csv => 10f64.powi(-decimals) * (1.0 + 1e-9),
                    Format::Json => 1e-9 * e.abs().max(1.0),
                };
                (e - g).abs() <= bound
            }
            _ => expected == got,
        },
    }
}

/// Every difference of `got` from `expected`, each naming the step and the column.
fn differences(format: Format, expected: &Steps, got: &Steps) -> Vec<String> {
    let figures = figures();
    let mut out = Vec::new();
    for (key, want) in expected {
        let Some(have) = got.get(key) else {
            out.push(format!("step {}: missing", show_key(key)));
            continue;
        };
        for f in &figures {
            let name = f.name();
            let w = want.get(name).unwrap_or(&Got::Missing);
            let h = have.get(name).unwrap_or(&Got::Missing);
            let bad = match (w, h) {
                // Not in the release's output: nothing to keep.
                (Got::Missing, _) => None,
                (Got::Empty, Got::Empty | Got::Missing) => None,
                (Got::Empty, Got::Value(v)) => Some(format!("expected no value, got {v}")),
                (Got::Value(e), Got::Missing) => Some(format!("missing (expected {e})")),
                (Got::Value(e), Got::Empty) => Some(format!("empty (expected {e})")),
                (Got::Value(e), Got::Value(v)) if !same(f.kind, format, e, v) => {
                    Some(format!("expected {e}, got {v}"))
                }
                (Got::Value(_), Got::Value(_)) => None,
            };
            if let Some(why) = bad {
                out.push(format!("step {}: column {name}: {why}", show_key(key)));
            }
        }
    }
    for key in got.keys().filter(|k| !expected.contains_key(*k)) {
        out.push(format!(
            "step {}: not in the release's output",
            show_key(key)
        ));
    }
    out
}

/// The differences of `got` from the fixture's expected file, each line naming the fixture
/// and the output first.
fn compare(fixture: &str, output: &str, format: Format, got: &str) -> Vec<String> {
    let expected_path = fixtures_dir().join(fixture).join(output);
    let expected = std::fs::read_to_string(&expected_path)
        .unwrap_or_else(|e| panic!("{}: {e}", expected_path.display()));
    let read = |text: &str| match format {
        Format::Csv => csv_steps(text),
        Format::Json => json_steps(text),
    };
    let want = read(&expected).unwrap_or_else(|e| panic!("{fixture} {output} (expected): {e}"));
    assert!(!want.is_empty(), "{fixture} {output}: no step expected");
    match read(got) {
        Ok(have) => differences(format, &want, &have),
        Err(e) => vec![format!("cannot read it: {e}")],
    }
    .into_iter()
    .map(|d| format!("{fixture}: {output}: {d}"))
    .collect()
}

/// Runs drivescope on the fixture's session; its stdout, failing on a non-zero exit or a
/// warning (a session of the release loads whole).
fn drivescope(home: &Path, fixture: &str, args: &[&str]) -> String {
    let out = common::run(home, args);
    let err = common::stderr(&out);
    assert!(
        out.status.success(),
        "{fixture}: drivescope {args:?} failed: {err}"
    );
    assert!(
        !err.lines().any(|l| l.starts_with("warning")),
        "{fixture}: drivescope {args:?} warned while reading the session: {err}"
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

/// The fixture's session given to this build's `export` (CSV and JSON) and `report`: every
/// step's figures as the release gave them.
fn same_figures(fixture: &str) {
    let home = tempfile::tempdir().expect("temp home");
    let session = fixtures_dir().join(fixture).join(SESSION);
    let session = session.to_str().expect("UTF-8 path");
    let mut failures = Vec::new();

    let csv = drivescope(
        home.path(),
        fixture,
        &["export", session, "--format", "csv"],
    );
    failures.extend(compare(fixture, EXPORT_CSV, Format::Csv, &csv));

    let json = drivescope(
        home.path(),
        fixture,
        &["export", session, "--format", "json"],
    );
    failures.extend(compare(fixture, EXPORT_JSON, Format::Json, &json));

    let rep = home.path().join("report");
    drivescope(
        home.path(),
        fixture,
        &[
            "report",
            session,
            "--out",
            rep.to_str().expect("UTF-8 path"),
        ],
    );
    let steps_csv = std::fs::read_to_string(rep.join("steps.csv"))
        .unwrap_or_else(|e| panic!("{fixture}: report wrote no steps.csv: {e}"));
    failures.extend(compare(fixture, REPORT_STEPS_CSV, Format::Csv, &steps_csv));

    assert!(
        failures.is_empty(),
        "{} figures differ from the release's:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn storagereview_sweep() {
    same_figures("storagereview-sweep");
}

#[test]
fn quick_look() {
    same_figures("quick-look");
}

#[test]
fn fio_job_file_of_two_jobs() {
    same_figures("fio-job");
}

#[test]
fn two_drives() {
    same_figures("two-drives");
}

#[test]
fn diskmark() {
    same_figures("diskmark");
}

#[test]
fn stopped_run() {
    same_figures("stopped");
}

#[test]
fn the_fixtures_are_the_listed_ones_and_small() {
    let mut found: Vec<String> = std::fs::read_dir(fixtures_dir())
        .expect("tests/fixtures/sessions")
        .map(|e| e.expect("a folder entry").path())
        .filter(|p| p.is_dir())
        .map(|p| {
            p.file_name()
                .expect("a name")
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    found.sort();
    assert_eq!(
        found, FIXTURES,
        "a fixture folder without its test, or gone"
    );
    let mut bytes = 0;
    for f in FIXTURES {
        for file in [SESSION, EXPORT_CSV, EXPORT_JSON, REPORT_STEPS_CSV] {
            let p = fixtures_dir().join(f).join(file);
            assert!(p.is_file(), "{} is not there", p.display());
        }
        for e in std::fs::read_dir(fixtures_dir().join(f)).expect("a fixture folder") {
            bytes += e.expect("an entry").metadata().expect("its size").len();
        }
    }
    assert!(
        bytes <= FIXTURES_MAX_BYTES,
        "the fixtures hold {bytes} bytes, over {FIXTURES_MAX_BYTES}"
    );
}

/// The JSON pointers of `v`'s leaves (a null or a value that is no object).
fn leaves(v: &Value, at: String, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                leaves(x, format!("{at}/{k}"), out);
            }
        }
        _ => out.push(at),
    }
}

/// No figure of the release's outputs goes unchecked: every column of each expected CSV and
/// every leaf of each expected JSON step is a step's identity or a figure of the table (a
/// figure the table misnamed would be skipped as "not in the release's output").
#[test]
fn the_alias_table_names_every_figure_of_the_release() {
    let figures = figures();
    for f in FIXTURES {
        let dir = fixtures_dir().join(f);
        for csv in [EXPORT_CSV, REPORT_STEPS_CSV] {
            let text = std::fs::read_to_string(dir.join(csv)).expect("expected CSV");
            let header = csv_records(&text).swap_remove(0);
            for h in &header {
                let known = DRIVE_NAMES.contains(&h.as_str())
                    || STEP_NAMES.contains(&h.as_str())
                    || figures.iter().any(|x| x.csv.contains(h));
                assert!(known, "{f}: {csv}: column {h} is no figure of the table");
            }
        }
        let text = std::fs::read_to_string(dir.join(EXPORT_JSON)).expect("expected JSON");
        let v: Value = serde_json::from_str(&text).expect("JSON");
        for step in v["steps"].as_array().expect("steps") {
            let mut ps = Vec::new();
            leaves(step, String::new(), &mut ps);
            for p in ps {
                let known = DRIVE_NAMES
                    .iter()
                    .chain(STEP_NAMES)
                    .any(|n| p == format!("/{n}"))
                    || figures.iter().any(|x| {
                        x.json
                            .iter()
                            .any(|j| *j == p || j.starts_with(&format!("{p}/")))
                    });
                assert!(known, "{f}: {EXPORT_JSON}: {p} is no figure of the table");
            }
        }
    }
}

/// The release's CSV of `fixture` with `edit` applied to its records.
fn edited_csv(fixture: &str, edit: impl Fn(&mut Vec<Vec<String>>)) -> String {
    let text =
        std::fs::read_to_string(fixtures_dir().join(fixture).join(EXPORT_CSV)).expect("export.csv");
    let mut records = csv_records(&text);
    edit(&mut records);
    records
        .iter()
        .map(|r| {
            r.iter()
                .map(|c| format!("\"{}\"", c.replace('"', "\"\"")))
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn column_of(records: &[Vec<String>], name: &str) -> usize {
    records[0]
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("no {name} column"))
}

/// The comparison itself fails where it should: a changed count, a latency off by more than
/// its printed precision, a dropped column and a dropped step are each named with the
/// fixture, the step and the column; a rounding in the last place and renamed or added
/// columns are not.
#[test]
fn a_changed_figure_is_named_with_its_fixture_step_and_column() {
    let f = "storagereview-sweep";
    let unchanged = edited_csv(f, |_| {});
    assert_eq!(
        compare(f, EXPORT_CSV, Format::Csv, &unchanged),
        Vec::<String>::new()
    );

    let changed = edited_csv(f, |r| {
        let ios = column_of(r, "read_ios");
        let n: u64 = r[3][ios].parse().expect("a count");
        r[3][ios] = (n + 1).to_string();
        let p99 = column_of(r, "read_response_lat_p99_us");
        let v: f64 = r[5][p99].parse().expect("a latency");
        r[5][p99] = format!("{:.3}", v + 0.002);
        let mbps = column_of(r, "read_mbps");
        let v: f64 = r[6][mbps].parse().expect("MB/s");
        r[6][mbps] = format!("{:.3}", v + 0.001); // a rounding: allowed
        let max = column_of(r, "service_lat_max_us");
        for row in r.iter_mut() {
            row.remove(max);
        }
        r.remove(8);
    });
    let diffs = compare(f, EXPORT_CSV, Format::Csv, &changed);
    let has = |want: &[&str]| diffs.iter().any(|d| want.iter().all(|w| d.contains(w)));
    assert!(
        has(&[f, "step 3:", "column read_ios", "expected"]),
        "{diffs:#?}"
    );
    assert!(
        has(&[f, "step 5:", "column read_response_lat_p99_us"]),
        "{diffs:#?}"
    );
    assert!(!has(&["column read_mbps"]), "{diffs:#?}");
    assert!(
        has(&[f, "step 1:", "column service_lat_max_us: missing"]),
        "{diffs:#?}"
    );
    assert!(has(&[f, "step 8: missing"]), "{diffs:#?}");

    // Renamed (to an alias of the table) and added columns read as before.
    let renamed = edited_csv(f, |r| {
        let mean = column_of(r, "read_response_lat_mean_us");
        r[0][mean] = "read_lat_mean_us".into();
        for (i, row) in r.iter_mut().enumerate() {
            row.insert(2, if i == 0 { "new_figure" } else { "1" }.into());
        }
    });
    assert_eq!(
        compare(f, EXPORT_CSV, Format::Csv, &renamed),
        Vec::<String>::new()
    );

    // JSON: a latency changed in a step of the second drive is named with both.
    let f = "two-drives";
    let text = std::fs::read_to_string(fixtures_dir().join(f).join(EXPORT_JSON)).expect("json");
    let mut v: Value = serde_json::from_str(&text).expect("JSON");
    let step = &mut v["steps"][1];
    let drive = step["drive"].as_str().expect("a drive").to_string();
    let mean = step["read"]["response_lat_us"]["mean"]
        .as_f64()
        .expect("a mean");
    step["read"]["response_lat_us"]["mean"] = (mean * 1.001).into();
    let diffs = compare(f, EXPORT_JSON, Format::Json, &v.to_string());
    assert_eq!(diffs.len(), 1, "{diffs:#?}");
    assert!(
        diffs[0].contains(&format!(
            "step 1 of drive {drive}: column read_response_lat_mean_us"
        )),
        "{diffs:#?}"
    );
}

/// A session whose `schema_version` is newer than this build reads is refused by `export`
/// and `report` (exit 2, nothing written), with an error naming that version, for a session
/// of one drive (version 1) and of several (version 2) alike.
#[test]
fn a_newer_schema_version_is_refused_by_name() {
    let newer = drivescope::session::SCHEMA_VERSION + 1;
    let home = tempfile::tempdir().expect("temp home");
    for f in ["storagereview-sweep", "two-drives"] {
        let text = std::fs::read_to_string(fixtures_dir().join(f).join(SESSION)).expect("session");
        let mut replaced = 0;
        let edited: String = text
            .lines()
            .map(|l| {
                if l.starts_with("schema_version:") {
                    replaced += 1;
                    format!("schema_version: {newer}\n")
                } else {
                    format!("{l}\n")
                }
            })
            .collect();
        assert_eq!(replaced, 1, "{f}: one schema_version line");
        let session = home.path().join(format!("{f}.yaml"));
        std::fs::write(&session, edited).expect("write the session");
        let s = session.to_str().expect("UTF-8 path");
        let rep = home.path().join(format!("{f}-report"));
        for args in [
            vec!["export", s, "--format", "csv"],
            vec!["export", s, "--format", "json"],
            vec!["report", s, "--out", rep.to_str().expect("UTF-8 path")],
        ] {
            let out = common::run(home.path(), &args);
            common::refused(&out, &[&format!("schema version {newer}")]);
            assert!(out.stdout.is_empty(), "{f}: {args:?} printed steps");
        }
        assert!(!rep.join("steps.csv").exists(), "{f}: a report was written");
    }
}
