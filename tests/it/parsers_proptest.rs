//! Property tests (proptest) of the preset, theme, key-binding and session parsers with
//! hostile input: documents built from a small grammar of each format's real fields with
//! random values (huge, negative, wrong types, unicode, deep nesting, anchors, aliases and
//! merge keys, unknown and duplicated keys), and random byte mutations of the real files in
//! `presets/` and `themes/` and of a real recorded session (final, and as a crash leaves
//! it). None may panic; an error names a line and column inside the text (a session's is
//! only ever "not a session" or "newer schema"); what loads is usable (a preset expands into
//! a plan of bounded size, every step of which the engine can judge; a session replays and
//! reports).
//!
//! Each property runs a few hundred cases so that all of them take a few seconds in
//! `cargo test`. For a longer hunt set `PROPTEST_CASES`, e.g.
//! `PROPTEST_CASES=20000 cargo test --release --test it parsers_proptest::`.
//! Inputs that once panicked are kept as plain regression tests at the end.

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use drivescope::app::Keymap;
use drivescope::plan::{self, PlanOptions, TargetFacts};
use drivescope::preset::{self, PresetError};
use drivescope::ui::theme::Theme;
use proptest::prelude::*;
use proptest::sample::select;
use proptest::test_runner::Config;

/// The most steps one phase may expand to (the planner's own limit).
const MAX_PHASE_STEPS: usize = 100_000;

/// `PROPTEST_CASES` when set, else `default`.
fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn config(default: u32) -> Config {
    Config {
        cases: cases(default),
        failure_persistence: None,
        ..Config::default()
    }
}

// ---------------------------------------------------------------- YAML from a tree

/// A YAML node; rendered in block or flow style, with anchors, aliases and merge keys.
#[derive(Debug, Clone)]
enum Node {
    /// Already YAML (a plain or quoted scalar, or an alias `*a`).
    Raw(String),
    Seq(Vec<Node>),
    Map(Vec<(String, Node)>),
    /// `&name` in front of the node.
    Anchored(String, Box<Node>),
}

fn raw(s: impl Into<String>) -> Node {
    Node::Raw(s.into())
}

fn render_flow(n: &Node, out: &mut String) {
    match n {
        Node::Raw(s) => out.push_str(s),
        Node::Anchored(a, inner) => {
            out.push('&');
            out.push_str(a);
            out.push(' ');
            render_flow(inner, out);
        }
        Node::Seq(v) => {
            out.push('[');
            for (i, x) in v.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                render_flow(x, out);
            }
            out.push(']');
        }
        Node::Map(m) => {
            out.push('{');
            for (i, (k, x)) in m.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(k);
                out.push_str(": ");
                render_flow(x, out);
            }
            out.push('}');
        }
    }
}

/// Renders `n` at `indent`; `flow_at` decides, per depth, whether to switch to flow style.
fn render_block(n: &Node, indent: usize, depth: usize, flow: u64, out: &mut String) {
    let pad = " ".repeat(indent);
    let use_flow = depth > 0 && (flow >> (depth % 64)) & 1 == 1;
    match n {
        Node::Map(m) if !m.is_empty() && !use_flow => {
            for (k, x) in m {
                out.push_str(&pad);
                out.push_str(k);
                out.push(':');
                block_value(x, indent, depth, flow, out);
            }
        }
        Node::Seq(v) if !v.is_empty() && !use_flow => {
            for x in v {
                out.push_str(&pad);
                out.push('-');
                block_value(x, indent, depth, flow, out);
            }
        }
        other => {
            out.push_str(&pad);
            render_flow(other, out);
            out.push('\n');
        }
    }
}

fn block_value(x: &Node, indent: usize, depth: usize, flow: u64, out: &mut String) {
    match x {
        Node::Map(m) if !m.is_empty() => {
            out.push('\n');
            render_block(x, indent + 2, depth + 1, flow, out);
        }
        Node::Seq(v) if !v.is_empty() => {
            out.push('\n');
            render_block(x, indent + 2, depth + 1, flow, out);
        }
        Node::Anchored(a, inner) if matches!(**inner, Node::Map(_) | Node::Seq(_)) => {
            out.push_str(" &");
            out.push_str(a);
            out.push('\n');
            render_block(inner, indent + 2, depth + 1, flow, out);
        }
        _ => {
            out.push(' ');
            render_flow(x, out);
            out.push('\n');
        }
    }
}

fn render(n: &Node, flow: u64) -> String {
    let mut out = String::new();
    render_block(n, 0, 0, flow, &mut out);
    out
}

// ---------------------------------------------------------------- hostile values

const HOSTILE: &[&str] = &[
    "0",
    "-1",
    "-0",
    "1e400",
    "-1e400",
    ".nan",
    ".inf",
    "-.inf",
    "18446744073709551615",
    "18446744073709551616",
    "340282366920938463463374607431768211456",
    "4294967296",
    "2147483648",
    "1000000000",
    "0x7fffffffffffffff",
    "0o777",
    "~",
    "null",
    "true",
    "''",
    "\"\"",
    "[]",
    "{}",
    "é",
    "\"\\u202e\"",
    "\"\\0\"",
    "\"\\t\\n\"",
    "!!binary aGVsbG8=",
    "!!str 4k",
    "!custom 1",
    "1TiB",
    "1000000PiB",
    "9999999999EiB",
    "1e9x",
    "-5%",
    "1e400%",
    "100000000000000000000%",
    "1000000000h",
    "1e400s",
    "-1s",
    "50% of nowhere",
    "max",
];

/// A scalar in YAML: a hostile literal, a random number or a random unicode string.
fn scalar() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => select(HOSTILE).prop_map(String::from),
        1 => any::<i64>().prop_map(|v| v.to_string()),
        1 => any::<u64>().prop_map(|v| v.to_string()),
        1 => any::<f64>().prop_map(|v| format!("{v:e}")),
        1 => (any::<u32>(), select(&["", "k", "KiB", "m", "GiB", "TiB", "PiB", "EiB", "%", "x", "s", "ms", "m", "h", "us"][..]))
            .prop_map(|(n, u)| format!("{n}{u}")),
        1 => "\\PC{0,16}".prop_map(|s| serde_json::to_string(&s).unwrap_or_default()),
    ]
}

/// A value: usually one of the field's real values, else something hostile, at times a
/// deeply nested sequence or mapping.
fn value(real: &'static [&'static str]) -> impl Strategy<Value = Node> {
    prop_oneof![
        6 => select(real).prop_map(raw),
        3 => scalar().prop_map(Node::Raw),
        1 => (1usize..300, any::<bool>()).prop_map(|(depth, seq)| {
            let (open, close) = if seq { ("[", "]") } else { ("{a: ", "}") };
            raw(format!("{}1{}", open.repeat(depth), close.repeat(depth)))
        }),
        1 => prop::collection::vec(scalar(), 0..5).prop_map(|v| Node::Seq(v.into_iter().map(Node::Raw).collect())),
    ]
}

/// A mapping of the given fields, each kept or dropped, values from `value`, sometimes with
/// an unknown key or a key given twice.
fn fields(
    spec: Vec<(&'static str, BoxedStrategy<Node>)>,
) -> impl Strategy<Value = Vec<(String, Node)>> {
    let n = spec.len();
    let parts: Vec<_> = spec
        .into_iter()
        .map(|(k, s)| (any::<u8>(), s).prop_map(move |(keep, v)| (keep, k.to_string(), v)))
        .collect();
    (parts, any::<u8>(), scalar(), 0..n.max(1)).prop_map(|(parts, extra, junk, dup)| {
        let mut m: Vec<(String, Node)> = parts
            .into_iter()
            .filter(|(keep, _, _)| *keep > 20)
            .map(|(_, k, v)| (k, v))
            .collect();
        match extra % 16 {
            0 => m.push(("numjobs".into(), Node::Raw(junk))),
            1 => m.push(("\"é\u{202e}\"".into(), Node::Raw(junk))),
            2 if !m.is_empty() => {
                let d = m[dup % m.len()].clone();
                m.push(d);
            }
            3 => m.push(("? [a, b]".into(), Node::Raw(junk))),
            _ => {}
        }
        m
    })
}

// ---------------------------------------------------------------- presets

const RW: &[&str] = &[
    "read",
    "write",
    "randread",
    "randwrite",
    "rw",
    "randrw",
    "trim",
    "RandRead",
];
const BS: &[&str] = &[
    "4k", "512", "4KiB", "128k", "1m", "16k", "1GiB", "2GiB", "1TiB", "0", "-4k", "4q", "1.5k",
];
const COUNT: &[&str] = &[
    "1",
    "4",
    "32",
    "256",
    "4096",
    "4097",
    "32768",
    "32769",
    "65536",
    "1000000000",
    "0",
];
const REGION: &[&str] = &[
    "25%",
    "100%",
    "10GiB",
    "1TiB",
    "0%",
    "150%",
    "{offset: 50%, size: 10GiB}",
    "{offset: 99%, size: 50%}",
];
const DURATION: &[&str] = &["30s", "1m", "5s", "0s", "90s", "2h", "1000000h"];
const RATE: &[&str] = &["max", "5000", "50% of one", "80% of two", "0", "1e12"];
const PERCENT: &[&str] = &["0%", "5%", "50%", "70", "100%", "130%", "0.001%"];

fn workload() -> impl Strategy<Value = Node> {
    fields(vec![
        ("rw", value(RW).boxed()),
        ("bs", value(BS).boxed()),
        (
            "bssplit",
            value(&["4k/60:8k/30:64k/10", "4k/100", "4k/50:1TiB/50", "4k/0"]).boxed(),
        ),
        ("iodepth", value(COUNT).boxed()),
        ("jobs", value(COUNT).boxed()),
        ("region", value(REGION).boxed()),
        ("rwmixread", value(PERCENT).boxed()),
    ])
    .prop_map(Node::Map)
}

fn end() -> impl Strategy<Value = Node> {
    fields(vec![
        ("duration", value(DURATION).boxed()),
        ("data", value(&["2x", "1x", "100GiB", "0x", "1e9x"]).boxed()),
        (
            "steady",
            value(&[
                "{criterion: iops_slope:0.3%, window: 5m, ramp: 1m}",
                "{criterion: bw:20%, window: 1s}",
                "{criterion: iops:0%, window: 0s}",
            ])
            .boxed(),
        ),
    ])
    .prop_map(Node::Map)
}

/// A sweep's points: a curve or a list of up to `max` percentages.
fn points(max: usize) -> impl Strategy<Value = Node> {
    prop_oneof![
        select(&["storagereview", "vdbench", "linear"][..]).prop_map(raw),
        prop::collection::vec(value(PERCENT), 0..max).prop_map(Node::Seq),
    ]
}

fn phase() -> impl Strategy<Value = Node> {
    let sweep = fields(vec![
        ("points", points(40).boxed()),
        ("stopcurve", value(&["5ms", "0ms", "1h"]).boxed()),
    ])
    .prop_map(Node::Map);
    let matrix = fields(vec![
        (
            "rwmixread",
            prop::collection::vec(value(PERCENT), 0..12)
                .prop_map(Node::Seq)
                .boxed(),
        ),
        (
            "bs",
            prop::collection::vec(value(BS), 0..12)
                .prop_map(Node::Seq)
                .boxed(),
        ),
    ])
    .prop_map(Node::Map);
    let rounds = fields(vec![
        ("window", value(&["5", "1", "0", "1000"]).boxed()),
        ("max", value(&["25", "1000", "1001", "0"]).boxed()),
        ("range", value(PERCENT).boxed()),
        ("slope", value(PERCENT).boxed()),
        (
            "track",
            value(&[
                "{metric: iops, rwmixread: 0%, bs: 4k}",
                "{metric: bw}",
                "{metric: mean_latency, bs: 1TiB}",
            ])
            .boxed(),
        ),
    ])
    .prop_map(Node::Map);
    fields(vec![
        (
            "name",
            value(&["one", "two", "sweep", "\"\"", "one"]).boxed(),
        ),
        ("workload", workload().boxed()),
        ("ramp", value(DURATION).boxed()),
        ("end", end().boxed()),
        ("rate", value(RATE).boxed()),
        ("sweep", sweep.boxed()),
        ("matrix", matrix.boxed()),
        ("rounds", rounds.boxed()),
    ])
    .prop_map(Node::Map)
}

/// A whole preset document; `flow` picks the nodes written in flow style.
fn preset_doc() -> impl Strategy<Value = String> {
    (
        value(&["quick", "my-test", "Bad Id", "-x", "a--b", "é"]),
        value(&["A name", "\"\"", "'quoted'"]),
        prop::collection::vec(phase(), 0..4),
        any::<u64>(),
        any::<u8>(),
    )
        .prop_map(|(id, name, mut phases, flow, tricks)| {
            // Anchors, aliases and merge keys: the first phase's workload reused later.
            if tricks % 3 == 0 && phases.len() >= 2 {
                if let Node::Map(first) = &mut phases[0] {
                    if let Some((_, w)) = first.iter_mut().find(|(k, _)| k == "workload") {
                        *w = Node::Anchored("w".into(), Box::new(w.clone()));
                    }
                }
                for p in phases.iter_mut().skip(1) {
                    if let Node::Map(m) = p {
                        if let Some((_, w)) = m.iter_mut().find(|(k, _)| k == "workload") {
                            *w = if tricks % 2 == 0 {
                                raw("*w")
                            } else {
                                Node::Map(vec![
                                    ("<<".into(), raw("*w")),
                                    ("iodepth".into(), raw("64")),
                                ])
                            };
                        }
                    }
                }
            }
            let mut top = vec![
                ("id".to_string(), id),
                ("name".to_string(), name),
                ("description".to_string(), raw("\"hostile input \\u00e9\"")),
                ("phases".to_string(), Node::Seq(phases)),
            ];
            if tricks % 7 == 0 {
                // An alias to an anchor that does not exist, or a second document.
                top.push(("extra".into(), raw("*nowhere")));
            }
            let mut text = render(&Node::Map(top), flow);
            if tricks % 11 == 0 {
                text.push_str("---\nid: second\n");
            }
            text
        })
}

/// A preset that should validate: a coherent grammar of real values only (one of bs and
/// bssplit; at most one of rate, sweep, matrix, matrix in rounds), so the "what loads is
/// usable" checks see plenty of presets that load.
fn clean_phase(i: usize) -> impl Strategy<Value = Node> {
    const MIXED: &[&str] = &["rw", "randrw"];
    const PURE: &[&str] = &["read", "write", "randread", "randwrite"];
    const SIZES: &[&str] = &["512", "4k", "8k", "16k", "64k", "128k", "1m", "1GiB"];
    (
        (
            any::<bool>(),
            select(MIXED),
            select(PURE),
            select(SIZES),
            prop::option::of(select(
                &["4k/60:8k/30:64k/10", "4k/100", "512/50:1m/50"][..],
            )),
            select(&["1", "4", "32", "256", "32768"][..]),
            select(&["1", "2", "4", "64"][..]),
        ),
        (
            prop::option::of(select(
                &["25%", "100%", "10GiB", "4k", "{offset: 50%, size: 10GiB}"][..],
            )),
            select(&["1s", "30s", "2m", "1h"][..]),
            prop::option::of(select(&["2x", "1GiB", "1x"][..])),
            0u8..5,
            prop::sample::subsequence(&["100%", "95%", "65%", "50%", "5%", "0%"][..], 1..4),
            prop::sample::subsequence(&["1024k", "128k", "64k", "4k", "512", "1GiB"][..], 1..4),
            prop::collection::vec(
                select(&["10%", "50%", "100%", "120%", "0.5%", "1000%"][..]),
                1..30,
            ),
        ),
    )
        .prop_map(
            move |(
                (mixed, mrw, prw, bs, split, qd, jobs),
                (region, dur, data, extra, mixes, sizes, pts),
            )| {
                let rw = if mixed { mrw } else { prw };
                let mut w = vec![("rw".to_string(), raw(rw))];
                match split {
                    Some(s) => w.push(("bssplit".into(), raw(s))),
                    None => w.push(("bs".into(), raw(bs))),
                }
                w.push(("iodepth".into(), raw(qd)));
                w.push(("jobs".into(), raw(jobs)));
                if let Some(r) = region {
                    w.push(("region".into(), raw(r)));
                }
                if mixed && extra != 3 && extra != 4 {
                    w.push(("rwmixread".into(), raw("70%")));
                }
                let mut end = vec![("duration".to_string(), raw(dur))];
                if let Some(d) = data {
                    end.push(("data".into(), raw(d)));
                }
                let mut phase = vec![
                    ("name".to_string(), raw(format!("p{i}"))),
                    ("workload".into(), Node::Map(w)),
                    ("end".into(), Node::Map(end)),
                ];
                let matrix = |with_mix: bool| {
                    let mut m = Vec::new();
                    if with_mix {
                        m.push((
                            "rwmixread".to_string(),
                            Node::Seq(mixes.iter().map(|x| raw(*x)).collect()),
                        ));
                    }
                    m.push((
                        "bs".to_string(),
                        Node::Seq(sizes.iter().map(|x| raw(*x)).collect()),
                    ));
                    Node::Map(m)
                };
                match extra {
                    1 if i > 0 => phase.push(("rate".into(), raw("50% of p0"))),
                    1 => phase.push(("rate".into(), raw("5000"))),
                    2 => phase.push((
                        "sweep".into(),
                        Node::Map(vec![(
                            "points".into(),
                            Node::Seq(pts.iter().map(|x| raw(*x)).collect()),
                        )]),
                    )),
                    3 => phase.push(("matrix".into(), matrix(mixed))),
                    4 => {
                        phase.push(("matrix".into(), matrix(mixed)));
                        let mut track = vec![("metric".to_string(), raw("iops"))];
                        if mixed {
                            track.push(("rwmixread".into(), raw(mixes[0])));
                        }
                        track.push(("bs".into(), raw(sizes[0])));
                        phase.push((
                            "rounds".into(),
                            Node::Map(vec![
                                ("window".into(), raw("5")),
                                ("max".into(), raw("25")),
                                ("range".into(), raw("20%")),
                                ("slope".into(), raw("10%")),
                                ("track".into(), Node::Map(track)),
                            ]),
                        ));
                    }
                    _ => {}
                }
                Node::Map(phase)
            },
        )
}

/// A clean preset, at times with one line's value swapped for a hostile one.
fn clean_preset_doc() -> impl Strategy<Value = String> {
    (
        (1usize..4).prop_flat_map(|n| (0..n).map(clean_phase).collect::<Vec<_>>()),
        any::<u64>(),
        prop::option::of((any::<usize>(), scalar())),
    )
        .prop_map(|(phases, flow, hostile)| {
            let top = Node::Map(vec![
                ("id".into(), raw("clean-test")),
                ("name".into(), raw("Clean")),
                ("description".into(), raw("Generated from the grammar.")),
                ("phases".into(), Node::Seq(phases)),
            ]);
            with_hostile_line(render(&top, flow), hostile)
        })
}

/// Swaps the value of one `key: value` line for `v`, when asked.
fn with_hostile_line(text: String, hostile: Option<(usize, String)>) -> String {
    let Some((i, v)) = hostile else {
        return text;
    };
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let n = i % lines.len().max(1);
    if let Some(l) = lines.get_mut(n) {
        if let Some((k, _)) = l.split_once(": ") {
            *l = format!("{k}: {v}");
        }
    }
    lines.join("\n") + "\n"
}

fn targets() -> [TargetFacts; 4] {
    let t = |capacity_bytes, logical_block_size| TargetFacts {
        capacity_bytes,
        logical_block_size,
    };
    [
        t(1 << 40, 512),
        t(64 << 20, 4096),
        t(4096, 512),
        t(u64::MAX, 512),
    ]
}

/// Line and column are 1-based and inside the text (one past the last line at most). Lines
/// are counted as YAML counts them: a lone carriage return breaks a line too.
fn assert_in_text(text: &str, line: usize, column: usize, what: &str) {
    let lines = text.replace("\r\n", "\n").matches(['\n', '\r']).count() + 1;
    assert!(
        line >= 1 && column >= 1 && line <= lines + 1,
        "{what} at {line}:{column} of a {lines}-line text"
    );
}

/// The word keys a diagnostic's field path names (`phases[2].workload.bs`: phases,
/// workload, bs), each of which the text must hold somewhere (under an alias or merge key
/// too). Not `?` (serde_path_to_error's "a key it could not name") nor a key of other
/// characters, which YAML may have written quoted, escaped or folded.
fn path_keys(path: &str) -> Vec<&str> {
    path.split('.')
        .map(|seg| seg.split('[').next().unwrap_or(seg))
        .filter(|k| {
            !k.is_empty()
                && k.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        })
        .collect()
}

/// Every `at line L column C` in a message.
fn marks(message: &str) -> Vec<(usize, usize)> {
    message
        .split("at line ")
        .skip(1)
        .filter_map(|rest| {
            let (line, rest) = rest.split_once(" column ")?;
            let column: String = rest.chars().take_while(char::is_ascii_digit).collect();
            Some((line.parse().ok()?, column.parse().ok()?))
        })
        .collect()
}

/// Parses a preset; checks the error's position and what it names, or that what loads is
/// usable.
fn check_preset(text: &str) {
    match preset::parse_str(text, "fuzz.yaml") {
        Err(PresetError::Invalid(d)) => {
            let shown = d.to_string();
            assert_in_text(text, d.line, d.column, &shown);
            assert!(
                shown.starts_with(&format!("fuzz.yaml:{}:{}: ", d.line, d.column)),
                "file:line:column first: {shown}"
            );
            // Where the message itself places the error (a syntax error: "… at line 6
            // column 1, while parsing a flow mapping at line 5 column 4"), the diagnostic
            // points at one of those places, not somewhere else.
            let at = marks(&d.message);
            assert!(
                at.is_empty() || at.contains(&(d.line, d.column)),
                "{shown}\n{text}"
            );
            for k in path_keys(&d.path) {
                assert!(
                    text.contains(k),
                    "the path {} names {k}, which is not in the text: {shown}\n{text}",
                    d.path
                );
            }
            if let Some(sug) = &d.suggestion {
                assert!(
                    shown.contains(&format!("(did you mean `{sug}`?)")),
                    "{shown}"
                );
            }
        }
        Err(e) => panic!("parse_str gave a non-parse error: {e}"),
        Ok(p) => check_usable(&p),
    }
}

/// A preset that validates expands (or is refused with a message) on every target, into a
/// bounded plan each of whose steps the engine can judge.
fn check_usable(p: &preset::Preset) {
    // What `presets show` prints parses back.
    if let Ok(y) = preset::to_yaml(p) {
        if let Err(e) = preset::parse_str(&y, "shown.yaml") {
            panic!("shown preset does not parse back: {e}\n{y}");
        }
    }
    for t in targets() {
        for scale in [1.0, 0.001] {
            let opts = PlanOptions {
                time_scale: scale,
                ..PlanOptions::default()
            };
            match plan::expand(p, &t, &opts) {
                Ok(plan) => {
                    assert!(
                        plan.steps.len() <= MAX_PHASE_STEPS * p.phases.len().max(1),
                        "{} steps",
                        plan.steps.len()
                    );
                    for s in &plan.steps {
                        if let Err(e) = drivescope::engine::validate_shape(&s.workload) {
                            check_shape_refusal(&s.workload, &e);
                        }
                    }
                    let _ = plan.estimate(0.0);
                    let _ = plan::fio::job_file(p, &plan, &t);
                }
                // Time scale, interval and target are all valid here: only a phase of the
                // preset can be refused, and the refusal names it.
                Err(plan::PlanError::Phase { phase, message }) => {
                    assert!(
                        p.phases.iter().any(|ph| ph.name == phase),
                        "refusal names phase {phase:?}, not one of the preset's: {message}"
                    );
                    assert!(
                        !message.is_empty(),
                        "phase {phase:?} refused without a reason"
                    );
                }
                Err(e) => panic!("expand refused a valid target or scale: {e}"),
            }
        }
    }
}

/// The engine's refusal of a planned step names the workload's own offending value, and
/// that value is out of the engine's range.
fn check_shape_refusal(w: &drivescope::workload::Workload, e: &drivescope::engine::EngineError) {
    use drivescope::engine::{EngineError, InvalidStep, MAX_BUFFER_BYTES, MAX_IODEPTH, MAX_JOBS};
    let shown = e.to_string();
    match e {
        EngineError::Invalid(InvalidStep::Iodepth(n)) => {
            assert_eq!(*n, w.iodepth, "{shown}");
            assert!(*n == 0 || *n > MAX_IODEPTH, "{shown}");
            assert!(shown.starts_with(&format!("iodepth {n} ")), "{shown}");
        }
        EngineError::Invalid(InvalidStep::Jobs(n)) => {
            assert_eq!(*n, w.jobs, "{shown}");
            assert!(*n == 0 || *n > MAX_JOBS, "{shown}");
            assert!(shown.starts_with(&format!("jobs {n} ")), "{shown}");
        }
        EngineError::Invalid(InvalidStep::BlockSize(bs)) => {
            assert!(w.bs.split.iter().any(|(b, _)| b == bs), "{shown}");
            assert!(*bs == 0 || *bs > 1 << 30, "{shown}");
            assert!(shown.starts_with(&format!("block size {bs} ")), "{shown}");
        }
        EngineError::Invalid(InvalidStep::BufferMemory(m)) => {
            let need = u64::from(w.iodepth) * u64::from(w.jobs) * w.bs.max();
            assert_eq!(*m, need, "{shown}");
            assert!(*m > MAX_BUFFER_BYTES, "{shown}");
        }
        EngineError::Invalid(InvalidStep::Rate(r)) => {
            assert!(
                w.rate_iops.is_some_and(|x| x.to_bits() == r.to_bits()),
                "{shown}"
            );
            assert!(!(r.is_finite() && *r > 0.0), "{shown}");
        }
        other => panic!("validate_shape gave a refusal that is not about the shape: {other}"),
    }
}

// ---------------------------------------------------------------- byte mutations

#[derive(Debug, Clone)]
enum Edit {
    Flip(usize, u8),
    Insert(usize, u8),
    Delete(usize, usize),
    Duplicate(usize, usize),
    Splice(usize, &'static str),
}

fn edits() -> impl Strategy<Value = Vec<Edit>> {
    let edit = prop_oneof![
        (any::<usize>(), 0u8..8).prop_map(|(a, b)| Edit::Flip(a, b)),
        (any::<usize>(), any::<u8>()).prop_map(|(a, b)| Edit::Insert(a, b)),
        (any::<usize>(), 1usize..64).prop_map(|(a, n)| Edit::Delete(a, n)),
        (any::<usize>(), 1usize..200).prop_map(|(a, n)| Edit::Duplicate(a, n)),
        (any::<usize>(), select(HOSTILE)).prop_map(|(a, s)| Edit::Splice(a, s)),
        (
            any::<usize>(),
            select(
                &[
                    "&a ",
                    "*a",
                    "<<: *a\n",
                    "- ",
                    ": ",
                    "\n  ",
                    "---\n",
                    "[[[[[[[[[[",
                    "? "
                ][..]
            )
        )
            .prop_map(|(a, s)| Edit::Splice(a, s)),
    ];
    prop::collection::vec(edit, 1..8)
}

fn apply(text: &str, edits: &[Edit]) -> String {
    let mut b = text.as_bytes().to_vec();
    for e in edits {
        let len = b.len();
        let at = |i: usize| if len == 0 { 0 } else { i % (len + 1) };
        match *e {
            Edit::Flip(i, bit) if len > 0 => b[i % len] ^= 1 << bit,
            Edit::Insert(i, v) => b.insert(at(i), v),
            Edit::Delete(i, n) => {
                let s = at(i);
                b.drain(s..(s + n).min(len));
            }
            Edit::Duplicate(i, n) => {
                let s = at(i);
                let piece = b[s..(s + n).min(len)].to_vec();
                b.splice(s..s, piece);
            }
            Edit::Splice(i, s) => {
                let p = at(i);
                b.splice(p..p, s.bytes());
            }
            _ => {}
        }
    }
    String::from_utf8_lossy(&b).into_owned()
}

fn files_in(dir: &str) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> =
        std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(dir))
            .expect("read dir")
            .map(|e| {
                let p = e.expect("entry").path();
                (
                    p.display().to_string(),
                    std::fs::read_to_string(&p).expect("read file"),
                )
            })
            .collect();
    v.sort();
    v
}

fn preset_files() -> &'static [(String, String)] {
    static F: OnceLock<Vec<(String, String)>> = OnceLock::new();
    F.get_or_init(|| files_in("presets"))
}

fn theme_files() -> &'static [(String, String)] {
    static F: OnceLock<Vec<(String, String)>> = OnceLock::new();
    F.get_or_init(|| files_in("themes"))
}

/// A real session, recorded once by a short run of the real binary.
fn session_text() -> &'static (PathBuf, String) {
    static S: OnceLock<(PathBuf, String)> = OnceLock::new();
    S.get_or_init(|| {
        let home = tempfile::tempdir().expect("tempdir").keep();
        let path = common::recorded_session(&home, 1, "100ms");
        let text = std::fs::read_to_string(&path).expect("read session");
        (path, text)
    })
}

/// A real session in its other form, as a crash leaves it: the header and the autosaved
/// documents, no final rewrite (a run killed with SIGKILL after a few autosaves).
fn stream_text() -> &'static (PathBuf, String) {
    static S: OnceLock<(PathBuf, String)> = OnceLock::new();
    S.get_or_init(|| {
        let home = tempfile::tempdir().expect("tempdir").keep();
        let path = home.join("stream.yaml");
        let mut child = std::process::Command::new(common::bin())
            .args([
                "run",
                "--size",
                "16MiB",
                "--rw",
                "randrw",
                "--duration",
                "30s",
            ])
            .args(["--interval", "100ms", "--autosave", "200ms", "--target"])
            .arg(home.join("stream.bin"))
            .arg("--session")
            .arg(&path)
            .env("HOME", &home)
            .env("XDG_DATA_HOME", home.join("data"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("run drivescope");
        let t0 = std::time::Instant::now();
        let documents =
            |p: &Path| std::fs::read_to_string(p).map_or(0, |t| t.matches("\n---\n").count());
        while documents(&path) < 4 {
            assert!(
                t0.elapsed().as_secs() < 30,
                "no autosaves in {}",
                path.display()
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let _ = child.kill();
        let _ = child.wait();
        let text = std::fs::read_to_string(&path).expect("read session");
        (path, text)
    })
}

// ---------------------------------------------------------------- themes, keys, sessions

const COLOUR: &[&str] = &[
    "red",
    "reset",
    "\"#e0e0e0\"",
    "\"#fff\"",
    "\"#gggggg\"",
    "255",
    "256",
    "-1",
    "4294967296",
    "LightBlue",
    "\"#\"",
];

fn theme_doc() -> impl Strategy<Value = String> {
    let roles: Vec<(&'static str, BoxedStrategy<Node>)> = drivescope::ui::theme::ROLES
        .iter()
        .map(|r| (*r, value(COLOUR).boxed()))
        .collect();
    (value(&["mine", "\"\"", "é"]), fields(roles), any::<u64>()).prop_map(|(name, mut m, flow)| {
        m.insert(0, ("name".into(), name));
        render(&Node::Map(m), flow)
    })
}

const KEYS: &[&str] = &[
    "q",
    "ctrl-q",
    "\"?\"",
    "f1",
    "f12",
    "f99",
    "enter",
    "space",
    "tab",
    "\"[\"",
    "alt-shift-ctrl-x",
    "ctrl-",
    "é",
    "\"\"",
    "[]",
    "[q, q]",
    "[x, n, s]",
];

fn keys_doc() -> impl Strategy<Value = String> {
    let actions: Vec<(&'static str, BoxedStrategy<Node>)> = drivescope::app::Action::ALL
        .iter()
        .map(|a| (a.name(), value(KEYS).boxed()))
        .collect();
    (fields(actions), any::<u64>()).prop_map(|(m, flow)| render(&Node::Map(m), flow))
}

/// A theme of real colours only (quoted, as the files write them), at times with one
/// hostile value.
fn clean_theme_doc() -> impl Strategy<Value = String> {
    let roles = drivescope::ui::theme::ROLES;
    (
        prop::collection::vec(
            (
                any::<bool>(),
                select(
                    &[
                        "red",
                        "reset",
                        "\"#e0e0e0\"",
                        "\"#56b4e9\"",
                        "\"255\"",
                        "\"17\"",
                        "LightBlue",
                        "DarkGray",
                    ][..],
                ),
            ),
            roles.len(),
        ),
        any::<u64>(),
        prop::option::of((any::<usize>(), scalar())),
    )
        .prop_map(move |(vals, flow, hostile)| {
            let mut m = vec![("name".to_string(), raw("generated"))];
            for (r, (keep, v)) in roles.iter().zip(vals) {
                if keep {
                    m.push((r.to_string(), raw(v)));
                }
            }
            with_hostile_line(render(&Node::Map(m), flow), hostile)
        })
}

/// Key bindings with distinct keys per action (so they seldom conflict), at times with one
/// hostile value.
fn clean_keys_doc() -> impl Strategy<Value = String> {
    const POOL: &[&str] = &[
        "a", "b", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "o", "r", "v", "y", "z", "f2",
        "f3", "f4", "f5", "f6", "f7", "f8", "f9", "f10", "f11", "f12", "ctrl-a", "ctrl-b",
        "ctrl-d", "ctrl-e", "alt-x", "alt-y", "home", "end", "pageup", "pagedown", "insert",
        "delete", "\"1\"", "\"2\"", "\"3\"", "\"4\"", "\"5\"", "\"6\"", "\"7\"", "\"8\"",
    ];
    let actions = drivescope::app::Action::ALL;
    (
        Just(POOL.to_vec()).prop_shuffle(),
        prop::collection::vec(any::<bool>(), actions.len()),
        any::<u64>(),
        prop::option::of((any::<usize>(), scalar())),
    )
        .prop_map(move |(keys, keep, flow, hostile)| {
            let m: Vec<(String, Node)> = actions
                .iter()
                .zip(keys.iter().cycle())
                .zip(keep)
                .filter(|(_, k)| *k)
                .map(|((a, key), _)| (a.name().to_string(), raw(*key)))
                .collect();
            with_hostile_line(render(&Node::Map(m), flow), hostile)
        })
}

fn check_theme(text: &str) {
    match Theme::from_yaml(text, "t.yaml") {
        Err(drivescope::ui::theme::ThemeError::Parse {
            line,
            column,
            message,
            ..
        }) => assert_in_text(text, line, column, &message),
        Err(e) => panic!("from_yaml gave a non-parse error: {e}"),
        Ok(_) => {}
    }
}

fn check_keys(text: &str) {
    match Keymap::from_yaml(text, "keys.yaml") {
        Err(drivescope::app::KeymapError::Parse {
            line,
            column,
            message,
            ..
        }) => assert_in_text(text, line, column, &message),
        Err(e) => panic!("from_yaml gave a non-parse error: {e}"),
        Ok(k) => assert!(k.conflict().is_none()),
    }
}

fn check_session(path: &Path, text: &str) {
    use drivescope::session::SessionError;
    use std::sync::atomic::{AtomicUsize, Ordering};
    static LOADED: AtomicUsize = AtomicUsize::new(0);
    match drivescope::session::parse(path, text) {
        Ok(loaded) => {
            // What loads must also replay, and report (the report, every tenth: it writes
            // charts and a page).
            let _ = drivescope::dashboard::replay::timeline(&loaded.session);
            if LOADED.fetch_add(1, Ordering::Relaxed).is_multiple_of(10) {
                let dir = tempfile::tempdir().expect("a report dir");
                if let Err(e) =
                    drivescope::report::write_report(&loaded.session, dir.path(), &loaded.warnings)
                {
                    panic!("a session that loads does not report: {e}\n{text}");
                }
            }
        }
        // Text that is no session, one from a newer drivescope, one whose schema version is
        // not a version, or one nested deeper than the reader's cap: refused as such.
        Err(
            SessionError::NotASession { .. }
            | SessionError::NewerSchema { .. }
            | SessionError::BadSchemaVersion { .. }
            | SessionError::TooDeep { .. },
        ) => {}
        Err(e) => panic!("parsing text gave an error of another kind: {e}\n{text}"),
    }
}

/// A real session with values replaced: random lines' values (after `key:` or inside the
/// JSON interval lines) swapped for hostile ones, and hostile lines appended to its lists.
fn session_variant() -> impl Strategy<Value = String> {
    (
        prop::collection::vec((any::<usize>(), scalar()), 1..6),
        prop::collection::vec(
            (
                select(&["t", "dt", "step", "read_iops", "lat_us", "errors", "p99"][..]),
                scalar(),
            ),
            0..4,
        ),
        any::<u8>(),
    )
        .prop_map(|(swaps, interval_junk, tricks)| {
            let (_, text) = session_text();
            let mut lines: Vec<String> = text.lines().map(String::from).collect();
            for (i, v) in swaps {
                let n = i % lines.len();
                let l = &mut lines[n];
                if let Some((k, _)) = l.split_once(": ") {
                    *l = format!("{k}: {v}");
                } else if let Some(p) = l.find("\": ") {
                    let end = l[p + 3..].find([',', '}']).map_or(l.len(), |e| p + 3 + e);
                    l.replace_range(p + 3..end, &v);
                }
            }
            if let Some(at) = lines.iter().position(|l| l == "intervals:") {
                for (k, v) in interval_junk {
                    lines.insert(at + 1, format!("- {{\"{k}\": {v}, \"step\": 0}}"));
                }
            }
            let mut out = lines.join("\n");
            out.push('\n');
            match tricks % 8 {
                // A billion laughs: aliases that expand exponentially.
                0 => {
                    out.push_str("telemetry: &a0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n");
                    for i in 1..12 {
                        let j = i - 1;
                        out.push_str(&format!(
                            "x{i}: &a{i} [*a{j}, *a{j}, *a{j}, *a{j}, *a{j}, *a{j}, *a{j}, *a{j}, *a{j}, *a{j}]\n"
                        ));
                    }
                }
                // An autosave document appended, as a crash would leave it.
                1 => out.push_str("---\nintervals:\n- {\"t\": 1e308, \"dt\": -1, \"step\": 18446744073709551615}\n"),
                2 => out.push_str(&"[".repeat(10_000)),
                _ => {}
            }
            out
        })
}

// ---------------------------------------------------------------- the properties

proptest! {
    #![proptest_config(config(400))]

    #[test]
    fn generated_presets_never_panic(text in prop_oneof![preset_doc(), clean_preset_doc()]) {
        check_preset(&text);
    }

    #[test]
    fn mutated_builtin_presets_never_panic(
        i in any::<prop::sample::Index>(),
        e in edits(),
    ) {
        let files = preset_files();
        let (_, text) = &files[i.index(files.len())];
        check_preset(&apply(text, &e));
    }

    #[test]
    fn generated_themes_never_panic(text in prop_oneof![theme_doc(), clean_theme_doc()]) {
        check_theme(&text);
    }

    #[test]
    fn mutated_themes_never_panic(i in any::<prop::sample::Index>(), e in edits()) {
        let files = theme_files();
        let (_, text) = &files[i.index(files.len())];
        check_theme(&apply(text, &e));
    }

    #[test]
    fn generated_key_bindings_never_panic(text in prop_oneof![keys_doc(), clean_keys_doc()]) {
        check_keys(&text);
    }

    #[test]
    fn mutated_key_bindings_never_panic(e in edits()) {
        let text = "quit: [q, ctrl-q]\nsnapshot: w\nhelp: [\"?\", f1]\nstart: enter\n\
                    pause: space\nnext_tab: [tab, right]\nseek_back: \"[\"\n";
        check_keys(&apply(text, &e));
    }
}

proptest! {
    // A session is larger and its replay does more: fewer cases.
    #![proptest_config(config(150))]

    #[test]
    fn hostile_sessions_never_panic(text in session_variant()) {
        let (path, _) = session_text();
        check_session(path, &text);
    }

    #[test]
    fn mutated_sessions_never_panic(e in edits(), stream in any::<bool>()) {
        // The final single document and the stream of autosaves a crash leaves.
        let (path, text) = if stream { stream_text() } else { session_text() };
        check_session(path, &apply(text, &e));
    }
}

// ---------------------------------------------------------------- huge values

fn one_phase(workload: &str, extra: &str) -> String {
    format!(
        "id: huge\nname: huge\ndescription: huge values\nphases:\n  - name: one\n    \
         workload:\n{workload}    end:\n      duration: 1s\n{extra}"
    )
}

/// The preset is refused, with a message naming `needle`, at a line and column in the text.
fn refused(text: &str, needle: &str) -> String {
    let t0 = std::time::Instant::now();
    let e = match preset::parse_str(text, "huge.yaml") {
        Ok(p) => {
            // Loaded: then the plan must refuse it on every target.
            for t in targets() {
                let r = plan::expand(&p, &t, &PlanOptions::default());
                let msg = match r {
                    Ok(plan) => plan
                        .steps
                        .iter()
                        .find_map(|s| drivescope::engine::validate_shape(&s.workload).err())
                        .map(|e| e.to_string())
                        .unwrap_or_else(|| panic!("accepted on {t:?}: {text}")),
                    Err(e) => e.to_string(),
                };
                assert!(msg.contains(needle), "{msg}");
            }
            panic!("validated, refused only later: {text}");
        }
        Err(e) => e,
    };
    let d = e.diagnostic().expect("a diagnostic");
    assert_in_text(text, d.line, d.column, &d.to_string());
    assert!(e.to_string().contains(needle), "{e}");
    // Refused without being attempted: in a small multiple of what reading the text as
    // plain YAML takes (the least any reader does), measured now, so a busy machine slows
    // both alike.
    let took = t0.elapsed();
    let t1 = std::time::Instant::now();
    let _: Result<serde_yaml::Value, _> = serde_yaml::from_str(text);
    let read = t1.elapsed();
    assert!(
        took < read * 5 + std::time::Duration::from_secs(1),
        "took {took:?} to refuse, where reading the YAML took {read:?}"
    );
    e.to_string()
}

#[test]
fn iodepth_of_a_billion_is_refused() {
    let e = refused(
        &one_phase(
            "      rw: randread\n      bs: 4k\n      iodepth: 1000000000\n",
            "",
        ),
        "iodepth",
    );
    eprintln!("{e}");
}

#[test]
fn a_block_size_of_one_tib_is_refused() {
    let e = refused(
        &one_phase("      rw: randread\n      bs: 1TiB\n      iodepth: 1\n", ""),
        "block size",
    );
    eprintln!("{e}");
    let e = refused(
        &one_phase(
            "      rw: randread\n      bssplit: 4k/50:1TiB/50\n      iodepth: 1\n",
            "",
        ),
        "block size",
    );
    eprintln!("{e}");
}

#[test]
fn a_sweep_of_a_million_points_is_refused() {
    let mut points = String::from("    sweep:\n      points: [");
    for i in 0..1_000_000 {
        if i > 0 {
            points.push_str(", ");
        }
        points.push_str(&format!("{}%", 1 + i % 100));
    }
    points.push_str("]\n");
    let e = refused(
        &one_phase(
            "      rw: randread\n      bs: 4k\n      iodepth: 1\n",
            &points,
        ),
        "points",
    );
    eprintln!("{}", &e[..e.len().min(300)]);
}

#[test]
fn a_matrix_of_a_million_steps_is_refused() {
    let list = |n: usize, f: &dyn Fn(usize) -> String| (0..n).map(f).collect::<Vec<_>>().join(", ");
    let extra = format!(
        "    matrix:\n      rwmixread: [{}]\n      bs: [{}]\n",
        list(1000, &|i| format!("{}%", i % 101)),
        list(1000, &|i| format!("{}k", 4 * (1 + i % 256))),
    );
    let e = refused(
        &one_phase("      rw: randrw\n      iodepth: 1\n", &extra),
        "combinations",
    );
    eprintln!("{}", &e[..e.len().min(300)]);
}

// ---------------------------------------------------------------- found by the long runs

#[test]
fn a_lone_carriage_return_is_a_line_break_for_positions() {
    // PROPTEST_CASES=20000 found this: serde_yaml counts a lone CR as a line break, so an
    // error can sit past what str::lines() counts; the position is YAML's and is right.
    let text = "quit: [q, ctrl-q]\nsnapshot: w\nhelp: [\"?\", f1]\nstart: enter\n\
                pause: space\nnext_tab: [tab, right]\nseek_back: \"[\"\n\rx\n";
    let e = Keymap::from_yaml(text, "keys.yaml").expect_err("not a key file");
    eprintln!("{e}");
    check_keys(text);
}

/// A session whose plan gives its steps times no duration can hold (1e300 s, infinity,
/// NaN, negative) loads, replays and reports without a panic (proptest found the replay
/// converting 1e300 s to a duration).
#[test]
fn a_plans_step_times_out_of_any_durations_range_never_panic() {
    let (path, text) = session_text();
    assert!(
        text.contains("duration_s: "),
        "the session's plan gives durations"
    );
    for v in [
        "1e300",
        ".inf",
        "-.inf",
        ".nan",
        "-5",
        "18446744073709551616",
    ] {
        let edited: String = text
            .lines()
            .map(|l| match l.split_once("duration_s: ") {
                Some((k, _)) => format!("{k}duration_s: {v}\n"),
                None => format!("{l}\n"),
            })
            .collect();
        check_session(path, &edited);
    }
}
