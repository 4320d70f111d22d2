//! Nothing raw at the edges (issue 39): a session whose every text a user, a drive or a host
//! could set holds hostile bytes (ESC[2J, an OSC 52 clipboard write, CR, DEL, the C1 CSI, a
//! bidirectional override), made from a real run's session by putting them into each of its
//! strings and empty fields the session still reads (generated, not listed: a field added
//! later is covered too). Every command that prints it (the run itself, `report`, `export`,
//! `compare`, `smart`, `presets`, the errors of a bad session and of a bad command line)
//! writes none of those bytes on stdout or stderr, shows them escaped, and keeps JSON and
//! YAML documents that read back to the very text; no CSV cell drivescope writes starts a
//! formula; and the dashboard's replay of it draws none into a cell. A host's words (the
//! agent's notes and refusals naming a hostile path) reach the terminal escaped too.

use std::path::{Path, PathBuf};
use std::process::Output;

use drivescope::app::{update, App, Overlay, Panel};
use drivescope::session::{self, Event, EventKind, Session};
use ratatui::backend::TestBackend;
use ratatui::Terminal;
use serde_yaml::Value;

use crate::common;
use common::sshd::Lab;

/// The bytes no terminal may get raw: clear the screen, set the clipboard (OSC 52, BEL
/// ended), a carriage return, DEL, C1 CSI, a right-to-left override.
const HOSTILE: &str = "\x1b[2J\x1b]52;c;aGk=\x07\r\x7f\u{9b}\u{202e}";

/// The `i`th hostile text: a formula's first character, a pipe, the hostile bytes.
fn hostile(i: usize) -> String {
    let lead = ["=", "+", "-", "@"][i % 4];
    format!("{lead}cmd|{HOSTILE}{i}")
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8")
}

/// Whether `c` may not reach a terminal raw.
fn odd(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// The characters (and bytes that are not UTF-8 in the C1 range) of `b` that no terminal
/// may get raw.
fn odd_in(b: &[u8]) -> Vec<String> {
    let mut found = Vec::new();
    for chunk in b.utf8_chunks() {
        found.extend(
            chunk
                .valid()
                .chars()
                .filter(|c| odd(*c))
                .map(|c| format!("{c:?}")),
        );
        found.extend(
            chunk
                .invalid()
                .iter()
                .filter(|b| (0x80..0xa0).contains(*b))
                .map(|b| format!("byte {b:#04x}")),
        );
    }
    found
}

/// drivescope run with `args` in `home` ([`common::command`]): nothing odd on stdout or stderr. Its output and
/// the text of both.
fn checked(home: &Path, args: &[&str]) -> (Output, String) {
    // In `home`: a command's default folder (`compare`'s) lands there.
    let out = common::command(home)
        .current_dir(home)
        .args(args)
        .output()
        .expect("run drivescope");
    let shown = args
        .iter()
        .map(|a| a.escape_debug().to_string())
        .collect::<Vec<_>>()
        .join(" ");
    for (name, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        let odd = odd_in(bytes);
        assert!(
            odd.is_empty(),
            "{shown}: {odd:?} on {name}:\n{}",
            String::from_utf8_lossy(bytes).escape_debug()
        );
    }
    let text = [out.stdout.as_slice(), &out.stderr].concat();
    let text = String::from_utf8_lossy(&text).into_owned();
    (out, text)
}

/// [`checked`], and the command shows the hostile text, escaped (`[2J` after its ESC).
fn shows_it(home: &Path, args: &[&str]) -> (Output, String) {
    let (out, text) = checked(home, args);
    assert!(
        text.contains("[2J"),
        "{args:?}: the hostile text is not shown:\n{text}"
    );
    (out, text)
}

/// The cells of a CSV text (RFC 4180: quoted cells, `""` a quote).
fn csv_cells(text: &str) -> Vec<String> {
    let mut cells = Vec::new();
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
            (false, ',' | '\n') => cells.push(std::mem::take(&mut cell)),
            (false, c) => cell.push(c),
        }
    }
    if !cell.is_empty() {
        cells.push(cell);
    }
    cells
}

/// Whether a spreadsheet would evaluate `cell`: it starts a formula and is not a number.
fn formula(cell: &str) -> bool {
    let number = cell.parse::<f64>().is_ok()
        && cell
            .chars()
            .all(|c| c.is_ascii_digit() || "+-.eE".contains(c));
    cell.starts_with(['=', '+', '-', '@', '\t', '\r']) && !number
}

/// No cell of the CSV `text` (`what`) is a formula or holds an odd character; the number of
/// cells made inert (`'` first).
fn inert(what: &str, text: &str) -> usize {
    let cells = csv_cells(text);
    assert!(cells.len() > 10, "{what}: {text}");
    for c in &cells {
        assert!(!formula(c), "{what}: the cell {c:?} is a formula");
        assert!(odd_in(c.as_bytes()).is_empty(), "{what}: {c:?}");
    }
    cells.iter().filter(|c| c.starts_with('\'')).count()
}

/// The places of `v`'s strings and nulls, each a list of keys and indexes.
fn leaves(v: &Value, at: &mut Vec<Value>, out: &mut Vec<Vec<Value>>) {
    match v {
        Value::String(_) | Value::Null => out.push(at.clone()),
        Value::Sequence(items) => {
            for (i, item) in items.iter().enumerate() {
                at.push(Value::from(i));
                leaves(item, at, out);
                at.pop();
            }
        }
        Value::Mapping(m) => {
            for (k, item) in m {
                at.push(k.clone());
                leaves(item, at, out);
                at.pop();
            }
        }
        Value::Tagged(t) => leaves(&t.value, at, out),
        Value::Bool(_) | Value::Number(_) => {}
    }
}

fn leaf<'a>(v: &'a mut Value, at: &[Value]) -> &'a mut Value {
    at.iter().fold(v, |v, k| match (v, k) {
        (Value::Sequence(items), Value::Number(i)) => {
            &mut items[usize::try_from(i.as_u64().expect("index")).expect("index")]
        }
        (Value::Mapping(m), k) => m.get_mut(k).expect("key"),
        (Value::Tagged(t), _) => &mut t.value,
        (other, k) => panic!("{k:?} in {other:?}"),
    })
}

/// `s` as a YAML value, its records with it: a session's own serialization is its header
/// (the file writes each record its own way).
fn whole(s: &Session) -> Value {
    let mut v = serde_yaml::to_value(s).expect("yaml");
    let records = [
        ("intervals", serde_yaml::to_value(&s.intervals)),
        ("steps", serde_yaml::to_value(&s.steps)),
        ("telemetry", serde_yaml::to_value(&s.telemetry)),
        ("events", serde_yaml::to_value(&s.events)),
        ("summary", serde_yaml::to_value(&s.summary)),
    ];
    for (k, r) in records {
        v[k] = r.expect("a record's yaml");
    }
    v
}

/// `s` with a hostile text in every string and null the session still reads with it; the
/// number put in.
fn made_hostile(s: &Session) -> (Session, usize) {
    let mut v = whole(s);
    let mut places = Vec::new();
    leaves(&v, &mut Vec::new(), &mut places);
    let mut n = 0;
    for at in places {
        let mut tried = v.clone();
        *leaf(&mut tried, &at) = Value::String(hostile(n));
        if serde_yaml::from_value::<Session>(tried.clone()).is_ok() {
            v = tried;
            n += 1;
        }
    }
    let mut s: Session = serde_yaml::from_value(v).expect("session");
    // A note the user wrote in the dashboard, and a run's own note.
    for (kind, t) in [(EventKind::UserNote, 0.2), (EventKind::Note, 0.3)] {
        s.events.push(Event {
            t,
            kind,
            message: hostile(n),
            data: None,
            drive: None,
        });
        n += 1;
    }
    s.events.sort_by(|a, b| a.t.total_cmp(&b.t));
    (s, n)
}

/// `s` with every step's rates halved: a run that regressed.
fn slower(s: &Session) -> Session {
    let mut v = whole(s);
    fn halve(v: &mut Value) {
        match v {
            Value::Mapping(m) => {
                for (k, item) in m.iter_mut() {
                    let rate = k
                        .as_str()
                        .is_some_and(|k| k.contains("iops") || k.contains("bw"));
                    match item.as_f64() {
                        Some(x) if rate => *item = Value::from(x / 2.0),
                        _ => halve(item),
                    }
                }
            }
            Value::Sequence(items) => items.iter_mut().for_each(halve),
            _ => {}
        }
    }
    if let Some(steps) = v.get_mut("steps") {
        halve(steps);
    }
    serde_yaml::from_value(v).expect("session")
}

/// `text` as a YAML scalar.
fn yaml_str(text: &str) -> String {
    serde_yaml::to_string(text)
        .expect("yaml")
        .trim_end()
        .to_string()
}

/// A preset file of two short read steps, its name, description and phases hostile.
fn hostile_preset(n: usize) -> String {
    let q = |i: usize| yaml_str(&hostile(n + i));
    format!(
        "id: hostile\nname: {}\ndescription: {}\nphases:\n\
         - name: {}\n  workload: {{rw: randread, bs: 4k, iodepth: 4, jobs: 1, region: 4MiB}}\n  end: {{duration: 300ms}}\n\
         - name: {}\n  workload: {{rw: read, bs: 64k, iodepth: 4, jobs: 1, region: 4MiB}}\n  end: {{duration: 300ms}}\n",
        q(0),
        q(1),
        q(2),
        q(3)
    )
}

/// A targets file of two test files (read together: one drive may be read by several
/// targets), their labels and the second's path hostile.
fn hostile_targets(dir: &Path, tag: &str) -> (PathBuf, [String; 2]) {
    let labels = [hostile(10), hostile(11)];
    let paths = [
        dir.join(format!("{tag}-a.bin")),
        dir.join(format!("{tag}-b{HOSTILE}.bin")),
    ];
    let mut text = String::new();
    for (p, l) in paths.iter().zip(&labels) {
        text.push_str(&format!(
            "- path: {}\n  label: {}\n",
            yaml_str(s(p)),
            yaml_str(l)
        ));
    }
    let file = dir.join(format!("{tag}-targets.yaml"));
    std::fs::write(&file, text).expect("targets");
    (file, labels)
}

/// Whether any string in the JSON `v` is exactly `text`.
fn holds(v: &serde_json::Value, text: &str) -> bool {
    match v {
        serde_json::Value::String(s) => s == text,
        serde_json::Value::Array(a) => a.iter().any(|v| holds(v, text)),
        serde_json::Value::Object(o) => o.values().any(|v| holds(v, text)),
        _ => false,
    }
}

#[test]
fn no_hostile_byte_reaches_a_terminal_and_no_csv_cell_is_a_formula() {
    let home = common::disk_tempdir();
    let dir = home.path();
    let preset = dir.join(format!("hostile{HOSTILE}.yaml"));
    std::fs::write(&preset, hostile_preset(20)).expect("preset");

    // The runs themselves, as text and as JSON lines, with hostile labels, paths, preset
    // and note.
    let note = hostile(30);
    let note_arg = format!("--note={note}");
    let (targets, _) = hostile_targets(dir, "text");
    let text_session = dir.join("text.yaml");
    let run = |targets: &Path, session: &Path, json: bool| {
        let mut args = vec![
            "run",
            "--targets",
            s(targets),
            "--preset-file",
            s(&preset),
            "--size",
            "8MiB",
            "--interval",
            "100ms",
            &note_arg,
            "--session",
            s(session),
        ];
        if json {
            args.push("--json");
        }
        let (out, _) = shows_it(dir, &args);
        assert!(out.status.success(), "{}", common::stderr(&out));
        out
    };
    run(&targets, &text_session, false);
    let (targets, labels) = hostile_targets(dir, "json");
    let run_session = dir.join("json.yaml");
    let out = run(&targets, &run_session, true);
    let lines = common::json_lines(&out);
    assert!(lines.len() > 5);
    for l in &labels {
        assert!(
            lines.iter().any(|v| holds(v, l)),
            "the label {l:?} reads back from the JSON lines"
        );
    }

    // The session, hostile in every text it holds.
    let loaded = session::load(&run_session).expect("the run's session");
    let (bad, n) = made_hostile(&loaded.session);
    eprintln!("{n} texts of the session made hostile");
    assert!(n > 40, "only {n} texts made hostile");
    let sp = dir.join(format!("s{HOSTILE}.yaml"));
    std::fs::write(&sp, session::to_yaml(&bad).expect("yaml")).expect("write");
    let back = session::load(&sp).expect("the hostile session reads back");
    assert_eq!(back.session.drives.len(), 2);
    let label = back.session.drives[0].label.clone();
    assert!(label.contains(HOSTILE), "{label:?}");
    let s2 = dir.join(format!("slower{HOSTILE}.yaml"));
    std::fs::write(&s2, session::to_yaml(&slower(&bad)).expect("yaml")).expect("write");

    // report: the files it wrote, then its CSV files.
    let rep = dir.join("report");
    let (out, _) = checked(dir, &["report", s(&sp), "-o", s(&rep)]);
    assert!(out.status.success(), "{}", common::stderr(&out));
    let mut made_inert = 0;
    let mut csvs = 0;
    for e in std::fs::read_dir(&rep).expect("report") {
        let p = e.expect("entry").path();
        if p.extension().is_some_and(|x| x == "csv") {
            csvs += 1;
            let text = std::fs::read_to_string(&p).expect("csv");
            made_inert += inert(&p.display().to_string(), &text);
        }
    }
    assert_eq!(csvs, 2, "intervals.csv and steps.csv");
    assert!(
        made_inert >= 4,
        "labels and drives made inert: {made_inert}"
    );

    // export: CSV on stdout and into a file, JSON that reads back to the very labels.
    let (out, text) = shows_it(dir, &["export", s(&sp), "--format", "csv"]);
    assert!(out.status.success(), "{text}");
    assert!(inert("export --format csv", &String::from_utf8_lossy(&out.stdout)) > 0);
    let file = dir.join("steps.csv");
    let (out, text) = checked(dir, &["export", s(&sp), "--format", "csv", "-o", s(&file)]);
    assert!(out.status.success(), "{text}");
    let written = std::fs::read_to_string(&file).expect("exported");
    assert!(inert("export -o", &written) > 0);
    let (out, text) = shows_it(dir, &["export", s(&sp), "--format", "json"]);
    assert!(out.status.success(), "{text}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert!(holds(&v, &label), "{label:?} reads back from {v}");

    // compare: the tables, the notes; against a baseline, the steps that regressed.
    let cmp = dir.join("compare");
    let (out, text) = shows_it(dir, &["compare", s(&sp), s(&s2), "-o", s(&cmp)]);
    assert!(out.status.success(), "{text}");
    let (out, text) = shows_it(dir, &["compare", "--baseline", s(&sp), s(&s2)]);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(common::stderr(&out).contains("regressed"), "{text}");

    // The errors of a session that cannot be read, and of one without what was asked.
    let (out, _) = shows_it(dir, &["report", s(&sp), "--span", "0..1"]);
    assert_eq!(out.status.code(), Some(2));
    let broken = dir.join(format!("broken{HOSTILE}.yaml"));
    std::fs::write(&broken, format!("schema_version: 2\nstarted: [{HOSTILE}\n")).expect("w");
    let newer = dir.join(format!("newer{HOSTILE}.yaml"));
    let text = session::to_yaml(&bad).expect("yaml");
    std::fs::write(
        &newer,
        text.replace("schema_version: 2", "schema_version: 99"),
    )
    .expect("w");
    let missing = dir.join(format!("missing{HOSTILE}.yaml"));
    for (i, p) in [&broken, &newer, &missing].into_iter().enumerate() {
        let cmp = dir.join(format!("compare-{i}"));
        for args in [
            vec!["report", s(p)],
            vec!["export", s(p), "--format", "csv"],
            vec!["compare", s(p), s(&sp), "-o", s(&cmp)],
            vec!["open", s(p)],
        ] {
            // What is left of the broken one is read, with a warning naming what was not.
            if p == &broken && args[0] == "open" {
                continue;
            }
            let (out, text) = shows_it(dir, &args);
            let code = if p == &broken { 0 } else { 2 };
            assert_eq!(out.status.code(), Some(code), "{args:?}: {text}");
        }
    }
    // A session cut short reads with warnings, which name what they dropped.
    let cut = dir.join(format!("cut{HOSTILE}.yaml"));
    let whole = std::fs::read_to_string(&sp).expect("session");
    std::fs::write(&cut, &whole[..whole.len() * 2 / 3]).expect("w");
    let (out, text) = checked(dir, &["export", s(&cut), "--format", "csv"]);
    assert!(out.status.success(), "{text}");

    // A command line quoting the hostile text back (clap's errors).
    for args in [
        vec!["export", s(&sp), "--format", HOSTILE],
        vec![HOSTILE],
        vec!["report", "--span", HOSTILE, s(&sp)],
    ] {
        let (out, text) = shows_it(dir, &args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {text}");
    }

    // A drive's words: smartctl's JSON with a hostile model, serial and firmware.
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/smartctl/nvme_micron_7450_MTFDKCC3T2TFS.json");
    let mut smart: serde_json::Value =
        serde_json::from_slice(&std::fs::read(fixture).expect("fixture")).expect("json");
    let model = hostile(40);
    smart["model_name"] = model.clone().into();
    smart["serial_number"] = hostile(41).into();
    smart["firmware_version"] = hostile(42).into();
    let sj = dir.join("smart.json");
    std::fs::write(&sj, smart.to_string()).expect("w");
    let (out, _) = shows_it(dir, &["smart", "--smartctl-json", s(&sj)]);
    assert!(out.status.success());
    let (out, _) = shows_it(dir, &["smart", "--smartctl-json", s(&sj), "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["model"], model.as_str(), "the model reads back");
    let (out, _) = shows_it(dir, &["smart", "--smartctl-json", s(&sj), "--yaml"]);
    let y: Value = serde_yaml::from_slice(&out.stdout).expect("YAML");
    assert_eq!(
        y["model"].as_str(),
        Some(model.as_str()),
        "the model reads back"
    );

    // Presets from the user's files: listed (a broken one named), shown, planned,
    // validated, as a fio job file.
    let user = dir.join("config/drivescope/presets");
    std::fs::create_dir_all(&user).expect("presets folder");
    std::fs::copy(&preset, user.join("hostile.yaml")).expect("copy");
    std::fs::write(
        user.join(format!("b{HOSTILE}.yaml")),
        format!("id: [{HOSTILE}"),
    )
    .expect("w");
    for args in [
        vec!["presets", "list"],
        vec!["presets", "show", s(&preset)],
        vec!["presets", "plan", s(&preset)],
        vec!["presets", "plan", s(&preset), "--json"],
        vec!["presets", "validate", s(&preset)],
        vec!["presets", "fio", s(&preset)],
    ] {
        let (out, text) = shows_it(dir, &args);
        assert!(out.status.success(), "{args:?}: {text}");
    }

    replay_draws_no_hostile_cell(dir, &sp);
}

/// The dashboard's replay of the session at `path` (as `open` starts it), drawn on a test
/// terminal in every panel and the overlays that list its texts: no cell holds an odd
/// character, none stands for one the panels did not escape (`�`), and the escapes show.
fn replay_draws_no_hostile_cell(home: &Path, path: &Path) {
    let loaded = session::load(path).expect("session");
    let (mut opts, timeline) =
        drivescope::dashboard::replay::replay_of(&loaded.session, &loaded.warnings);
    opts.config_dir = Some(home.join("config/drivescope"));
    let size = (160, 50);
    let mut app = App::new(opts.app_config(size));
    for (_, m) in timeline {
        update(&mut app, m);
    }
    let mut escapes = 0;
    let views = Panel::ALL.iter().map(|p| (Some(*p), None)).chain([
        (None, Some(Overlay::Presets)),
        (None, Some(Overlay::Targets { typing: None })),
    ]);
    for (panel, overlay) in views {
        if let Some(p) = panel {
            app.tab = p;
        }
        app.overlay = overlay.clone();
        let mut term = Terminal::new(TestBackend::new(size.0, size.1)).expect("terminal");
        term.draw(|f| drivescope::ui::render(&app, f))
            .expect("draw");
        let buf = term.backend().buffer();
        let mut screen = String::new();
        for y in 0..buf.area.height {
            for x in 0..buf.area.width {
                screen.push_str(buf[(x, y)].symbol());
            }
            screen.push('\n');
        }
        let what = format!("{panel:?} {overlay:?}");
        let odd: Vec<char> = screen.chars().filter(|c| odd(*c)).collect();
        assert!(odd.is_empty(), "{what}: {odd:?}\n{screen}");
        assert!(
            !screen.contains('\u{fffd}'),
            "{what}: text not escaped\n{screen}"
        );
        escapes += screen.matches("\\e[2J").count();
    }
    assert!(escapes > 5, "the hostile texts show escaped: {escapes}");
}

/// Whether any string in the JSON `v` holds `text`.
fn mentions(v: &serde_json::Value, text: &str) -> bool {
    match v {
        serde_json::Value::String(s) => s.contains(text),
        serde_json::Value::Array(a) => a.iter().any(|v| mentions(v, text)),
        serde_json::Value::Object(o) => o.values().any(|v| mentions(v, text)),
        _ => false,
    }
}

#[test]
fn a_hosts_words_reach_no_terminal_raw() {
    let Some(lab) = Lab::start(1) else { return };
    let home = common::disk_tempdir();
    let dir = home.path();
    let target = dir.join(format!("remote{HOSTILE}.bin"));
    let missing = dir.join(format!("gone{HOSTILE}/x.bin"));
    let ssh = lab.ssh_command();
    let bin = common::bin();
    let run = |target: &Path, json: bool| {
        let mut args = vec!["run", "--ssh-command", &ssh, "--remote-drivescope", s(&bin)];
        args.extend(["--host", "host0", "--target", s(target), "--size", "4M"]);
        args.extend([
            "--rw",
            "randread",
            "--duration",
            "300ms",
            "--interval",
            "100ms",
        ]);
        if json {
            args.push("--json");
        }
        shows_it(dir, &args).0
    };
    // The agent's notes (its test file filled) name the path: as text, then as JSON
    // lines that read back to it.
    let out = run(&target, false);
    assert!(out.status.success(), "{}", common::stderr(&out));
    std::fs::remove_file(&target).expect("the test file, made by the run");
    let out = run(&target, true);
    assert!(out.status.success(), "{}", common::stderr(&out));
    let lines = common::json_lines(&out);
    assert!(
        lines.iter().any(|v| mentions(v, s(&target))),
        "the host's words read back: {lines:?}"
    );
    // The agent's refusal, said by this drivescope.
    let out = run(&missing, false);
    assert_eq!(out.status.code(), Some(2), "{}", common::stderr(&out));
}
