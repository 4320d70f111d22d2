//! Rules a preset must follow beyond its types: exactly one of `bs` and `bssplit`, a rate
//! that names an earlier phase with a measured maximum, a sweep with points, rounds whose
//! tracked step exists, and so on. Each broken rule is reported with its field path.

use super::locate::Seg;
use super::model::{Matrix, Phase, Preset, RoundsSpec, RunsSpec, Work, WorkloadSpec};
use super::suggest;
use super::values::{Amount, Count, RateValue};
use crate::units::format_size;
use crate::workload::{trim_share_problem, zone_append_problem, EngineKind, RwMode};

/// A broken rule: where, what, and the nearest valid name if one was misspelt.
#[derive(Debug, Clone, PartialEq)]
pub struct Violation {
    pub path: Vec<Seg>,
    pub message: String,
    pub suggestion: Option<String>,
}

/// io_uring's largest ring (`IORING_MAX_ENTRIES`).
pub const MAX_IODEPTH: u32 = 32768;

/// The most jobs (threads) a phase may ask for.
pub const MAX_JOBS: u32 = 4096;

/// The most rounds a phase may ask for.
pub const MAX_ROUNDS: u32 = 1000;

/// The largest block size (the engine's limit on one I/O's buffer).
pub const MAX_BLOCK_SIZE: u64 = 1 << 30;

/// The most points a sweep may have (published curves have 6 to 12).
pub const MAX_SWEEP_POINTS: usize = 1000;

/// The most combinations a matrix may have (SNIA's largest has 56).
pub const MAX_MATRIX_CELLS: usize = 10_000;

fn key(k: &str) -> Seg {
    Seg::Key(k.to_string())
}

struct Checker {
    out: Vec<Violation>,
}

impl Checker {
    fn fail(&mut self, path: Vec<Seg>, message: impl Into<String>) {
        self.out.push(Violation {
            path,
            message: message.into(),
            suggestion: None,
        });
    }
}

fn is_kebab(id: &str) -> bool {
    !id.is_empty()
        && !id.starts_with('-')
        && !id.ends_with('-')
        && !id.contains("--")
        && id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// All broken rules of `preset`, in file order.
pub fn validate(preset: &Preset) -> Vec<Violation> {
    let mut c = Checker { out: Vec::new() };
    if !is_kebab(&preset.id) {
        c.fail(
            vec![key("id")],
            format!(
                "'{}' is not a short kebab-case id (lower-case letters, digits and single dashes)",
                preset.id
            ),
        );
    }
    if preset.name.trim().is_empty() {
        c.fail(vec![key("name")], "the name is empty");
    }
    if preset.description.trim().is_empty() {
        c.fail(
            vec![key("description")],
            "the description is empty: say which published method this reproduces, or what it approximates and how",
        );
    }
    if preset.phases.is_empty() {
        c.fail(vec![key("phases")], "a preset needs at least one phase");
    }
    for (i, phase) in preset.phases.iter().enumerate() {
        check_phase(&mut c, preset, i, phase);
    }
    c.out
}

fn check_phase(c: &mut Checker, preset: &Preset, i: usize, phase: &Phase) {
    let at = |rest: &[&str]| {
        let mut p = vec![key("phases"), Seg::Index(i)];
        p.extend(rest.iter().map(|k| key(k)));
        p
    };
    if phase.name.trim().is_empty() {
        c.fail(at(&["name"]), "the phase name is empty");
    } else if preset.phases[..i].iter().any(|p| p.name == phase.name) {
        c.fail(
            at(&["name"]),
            format!("another phase is already named '{}'", phase.name),
        );
    }
    let rw = phase.workload.io().map(|w| w.rw);
    let mixed = matches!(rw, Some(RwMode::Rw | RwMode::RandRw));
    if let Work::Io(w) = &phase.workload {
        check_io(c, phase, w, mixed, &at);
    } else {
        check_idle(c, phase, &at);
    }
    check_end(c, phase, &at);
    check_thermal_end(c, phase, &at);
    if let Some(m) = &phase.matrix {
        check_matrix(c, m, rw, mixed, &at);
    }
    check_sweep_and_rate(c, preset, i, phase, &at);
    if let Some(r) = &phase.rounds {
        check_rounds(c, phase, r, &at);
    }
    if let Some(r) = &phase.runs {
        check_runs(c, phase, r, &at);
    }
}

/// The most runs of a step a phase may ask for (SNIA HIR's bursts are 360).
pub const MAX_RUNS: u32 = 10_000;

/// Runs: at least one, at most [`MAX_RUNS`]; not in rounds or a sweep (each has its own
/// way of repeating steps); a figure picked of several runs only.
fn check_runs(c: &mut Checker, phase: &Phase, r: &RunsSpec, at: &dyn Fn(&[&str]) -> Vec<Seg>) {
    if r.count.0 == 0 {
        c.fail(at(&["runs", "count"]), "0 runs run nothing");
    } else if r.count.0 > MAX_RUNS {
        c.fail(
            at(&["runs", "count"]),
            format!("at most {MAX_RUNS} runs, not {}", r.count.0),
        );
    }
    if phase.rounds.is_some() {
        c.fail(
            at(&["runs"]),
            "a phase in rounds repeats its steps until steady: it cannot also have runs",
        );
    }
    if phase.sweep.is_some() {
        c.fail(at(&["runs"]), "a sweep cannot have runs");
    }
    if r.pick.is_some() && r.count.0 == 1 {
        c.fail(
            at(&["runs", "pick"]),
            "one run has nothing to pick from: give count 2 or more, or drop pick",
        );
    }
    if r.idle.is_some_and(|d| d.0.is_zero()) {
        c.fail(
            at(&["runs", "idle"]),
            "an idle time of 0 is no idle time: drop it",
        );
    }
}

/// A block size past the largest allowed.
fn too_big(b: u64) -> String {
    format!(
        "block size {} is more than the {} allowed",
        format_size(b),
        format_size(MAX_BLOCK_SIZE)
    )
}

/// An I/O workload's sizes, depths, jobs, mix, engine, pacing and region.
fn check_io(
    c: &mut Checker,
    phase: &Phase,
    w: &WorkloadSpec,
    mixed: bool,
    at: &dyn Fn(&[&str]) -> Vec<Seg>,
) {
    let matrix_bs = phase.matrix.as_ref().is_some_and(|m| !m.bs.is_empty());
    match (&w.bs, &w.bssplit) {
        (None, None) if !matrix_bs => c.fail(at(&["workload"]), "the workload needs bs or bssplit"),
        (Some(_), Some(_)) => c.fail(at(&["workload", "bssplit"]), "give bs or bssplit, not both"),
        _ => {}
    }
    if let Some(b) = w.bs.filter(|b| b.0 > MAX_BLOCK_SIZE) {
        c.fail(at(&["workload", "bs"]), too_big(b.0));
    }
    if let Some(b) = w.bssplit.as_ref().and_then(|s| {
        s.0.split
            .iter()
            .map(|(b, _)| *b)
            .find(|b| *b > MAX_BLOCK_SIZE)
    }) {
        c.fail(at(&["workload", "bssplit"]), too_big(b));
    }
    if w.iodepth.0 > MAX_IODEPTH {
        c.fail(
            at(&["workload", "iodepth"]),
            format!(
                "iodepth {} is more than an io_uring ring holds ({MAX_IODEPTH})",
                w.iodepth.0
            ),
        );
    }
    if w.jobs.0 > MAX_JOBS {
        c.fail(
            at(&["workload", "jobs"]),
            format!(
                "{} jobs is more than the {MAX_JOBS} allowed (one thread each)",
                w.jobs.0
            ),
        );
    }
    if w.rwmixread.is_some() && !mixed {
        c.fail(
            at(&["workload", "rwmixread"]),
            format!("rwmixread applies only to rw and randrw, not {}", w.rw),
        );
    }
    if let Some(t) = w.rwmixtrim {
        let read = w.rwmixread.map_or(50, |r| r.0);
        if let Some(p) = trim_share_problem(w.rw, read, t.0) {
            c.fail(at(&["workload", "rwmixtrim"]), p.to_string());
        }
        let cells = phase.matrix.iter().flat_map(|m| m.rwmixread.iter());
        if let Some((j, p)) = cells
            .enumerate()
            .find_map(|(j, r)| Some((j, trim_share_problem(w.rw, r.0, t.0)?)))
        {
            let mut path = at(&["matrix", "rwmixread"]);
            path.push(Seg::Index(j));
            c.fail(path, format!("with rwmixtrim {}%: {p}", t.0));
        }
    }
    if w.engine == Some(EngineKind::Idle) {
        c.fail(
            at(&["workload", "engine"]),
            "the idle engine is `workload: idle`; an engine here is io_uring, sync, nop or uring-cmd",
        );
    }
    if w.engine == Some(EngineKind::Sync) && (w.hipri == Some(true) || w.sqpoll == Some(true)) {
        c.fail(
            at(&["workload", "engine"]),
            "hipri and sqpoll set up io_uring rings; the sync engine has none",
        );
    }
    if w.zone_append == Some(true) {
        // Without an engine of its own the phase runs the run's: uring-cmd on /dev/ngXnY,
        // checked against the target when the run is.
        let engine = w.engine.unwrap_or(EngineKind::UringCmd);
        if let Some(p) = zone_append_problem(w.rw, engine, w.bssplit.is_none()) {
            c.fail(at(&["workload", "zone_append"]), p.to_string());
        }
    }
    if w.random_distribution
        .as_ref()
        .is_some_and(|a| !a.is_uniform())
        && !w.rw.is_random()
    {
        c.fail(
            at(&["workload", "random_distribution"]),
            format!(
                "random_distribution places random offsets; {} is sequential",
                w.rw
            ),
        );
    }
    let paced = phase.sweep.is_some() || !matches!(phase.rate, None | Some(RateValue::Max));
    if w.arrivals.is_some() && !paced {
        c.fail(
            at(&["workload", "arrivals"]),
            "arrivals shape paced I/O: give the phase a rate or a sweep, or drop arrivals",
        );
    }
    if let Some(r) = &w.region {
        if r.size
            .is_some_and(|s| s.bytes(u64::MAX) == 0 || s == Amount::Percent(0.0))
        {
            c.fail(
                at(&["workload", "region"]),
                "a region of 0 bytes is impossible",
            );
        }
        if let (Amount::Percent(o), Some(Amount::Percent(s))) = (r.offset, r.size) {
            if o + s > 100.0 {
                c.fail(
                    at(&["workload", "region"]),
                    format!("offset {o}% plus size {s}% runs past the end of the target"),
                );
            }
        }
    }
}

/// The phase's end: a duration or an amount of data, and a steady state that fits.
fn check_end(c: &mut Checker, phase: &Phase, at: &dyn Fn(&[&str]) -> Vec<Seg>) {
    let end = &phase.end;
    if end.duration.is_none() && end.data.is_none() {
        c.fail(
            at(&["end"]),
            "the phase needs an end: a duration, an amount of data (2x), or both",
        );
    }
    if end
        .duration
        .is_some_and(|d| d.0 < crate::engine::MIN_STEP_DURATION)
    {
        c.fail(
            at(&["end", "duration"]),
            "a duration under 100ms measures nothing (the same rule as run --duration)",
        );
    }
    if let Some(s) = &end.steady {
        if s.window.0.is_zero() {
            c.fail(
                at(&["end", "steady", "window"]),
                "a steady-state window of 0 is impossible",
            );
        }
        if let Some(d) = end.duration {
            if s.window.0 + s.ramp.0 > d.0 {
                c.fail(
                    at(&["end", "steady", "window"]),
                    "the steady-state ramp plus window is longer than the phase's duration",
                );
            }
        }
    }
}

/// A matrix's values and size, and read shares only of a mixed workload.
fn check_matrix(
    c: &mut Checker,
    m: &Matrix,
    rw: Option<RwMode>,
    mixed: bool,
    at: &dyn Fn(&[&str]) -> Vec<Seg>,
) {
    if m.rwmixread.is_empty() && m.bs.is_empty() && m.jobs.is_empty() && m.iodepth.is_empty() {
        c.fail(
            at(&["matrix"]),
            "a matrix needs rwmixread, bs, jobs or iodepth values",
        );
    }
    if let Some((j, b)) = m.bs.iter().enumerate().find(|(_, b)| b.0 > MAX_BLOCK_SIZE) {
        let mut path = at(&["matrix", "bs"]);
        path.push(Seg::Index(j));
        c.fail(path, too_big(b.0));
    }
    for (key, values, most) in [
        ("iodepth", &m.iodepth, MAX_IODEPTH),
        ("jobs", &m.jobs, MAX_JOBS),
    ] {
        if let Some((j, v)) = values.iter().enumerate().find(|(_, v)| v.0 > most) {
            let mut path = at(&["matrix", key]);
            path.push(Seg::Index(j));
            c.fail(
                path,
                format!("{key} {} is more than the {most} allowed", v.0),
            );
        }
    }
    let cells = [m.rwmixread.len(), m.bs.len(), m.jobs.len(), m.iodepth.len()]
        .iter()
        .fold(1usize, |a, n| a.saturating_mul((*n).max(1)));
    if cells > MAX_MATRIX_CELLS {
        c.fail(
            at(&["matrix"]),
            format!("a matrix of {cells} combinations is more than the {MAX_MATRIX_CELLS} allowed"),
        );
    }
    if !m.rwmixread.is_empty() && !mixed {
        c.fail(
            at(&["matrix", "rwmixread"]),
            match rw {
                Some(rw) => format!("a matrix of read shares needs rw or randrw, not {rw}"),
                None => "a matrix of read shares needs rw or randrw, not idle".to_string(),
            },
        );
    }
}

/// A rate or a sweep (not both, no rounds with a sweep), the sweep's points, the phase a
/// rate refers to.
fn check_sweep_and_rate(
    c: &mut Checker,
    preset: &Preset,
    i: usize,
    phase: &Phase,
    at: &dyn Fn(&[&str]) -> Vec<Seg>,
) {
    if phase.sweep.is_some() && phase.rate.is_some() {
        c.fail(at(&["sweep"]), "a phase has a rate or a sweep, not both");
    }
    if phase.sweep.is_some() && phase.rounds.is_some() {
        c.fail(at(&["rounds"]), "a sweep cannot run in rounds");
    }
    if let Some(s) = &phase.sweep {
        let n = s.points.percents().len();
        if n == 0 {
            c.fail(
                at(&["sweep", "points"]),
                "a sweep with no points runs nothing",
            );
        } else if n > MAX_SWEEP_POINTS {
            c.fail(
                at(&["sweep", "points"]),
                format!("a sweep of {n} points is more than the {MAX_SWEEP_POINTS} allowed"),
            );
        }
    }
    if let Some(RateValue::PercentOf { phase: of, .. }) = &phase.rate {
        check_reference(c, preset, i, of, at(&["rate"]));
    }
}

/// SNIA's rounds: no fio steady state beside them, their bounds and window, and which
/// matrix cell they track.
fn check_rounds(c: &mut Checker, phase: &Phase, r: &RoundsSpec, at: &dyn Fn(&[&str]) -> Vec<Seg>) {
    let end = &phase.end;
    if end.steady.is_some() {
        c.fail(
            at(&["end", "steady"]),
            "a phase in rounds has SNIA's steady state; it cannot also have fio's",
        );
    }
    if r.max.0 > MAX_ROUNDS {
        c.fail(
            at(&["rounds", "max"]),
            format!(
                "at most {MAX_ROUNDS} rounds (SNIA's rule stops at 25), not {}",
                r.max.0
            ),
        );
    }
    if r.window.0 < 2 {
        c.fail(
            at(&["rounds", "window"]),
            "a window needs at least 2 rounds",
        );
    }
    if let Some(p) = &r.prewrite {
        if !matches!(p.rw, RwMode::Write | RwMode::RandWrite) {
            c.fail(
                at(&["rounds", "prewrite", "rw"]),
                format!("a pre-write writes: write or randwrite, not {}", p.rw),
            );
        }
        if p.duration.0.is_zero() {
            c.fail(
                at(&["rounds", "prewrite", "duration"]),
                "a pre-write needs a duration above 0",
            );
        }
    }
    if r.window.0 > r.max.0 {
        c.fail(
            at(&["rounds", "window"]),
            format!(
                "a window of {} rounds never fits in at most {}",
                r.window.0, r.max.0
            ),
        );
    }
    let mix_list = phase
        .matrix
        .as_ref()
        .map(|m| m.rwmixread.clone())
        .unwrap_or_default();
    let bs_list = phase
        .matrix
        .as_ref()
        .map(|m| m.bs.clone())
        .unwrap_or_default();
    match r.track.rwmixread {
        None if mix_list.len() > 1 => c.fail(
            at(&["rounds", "track"]),
            "the matrix has several read shares: say which one is tracked (rwmixread)",
        ),
        Some(t) if !mix_list.is_empty() && !mix_list.contains(&t) => c.fail(
            at(&["rounds", "track", "rwmixread"]),
            format!("{}% is not one of the matrix's read shares", t.0),
        ),
        _ => {}
    }
    match r.track.bs {
        None if bs_list.len() > 1 => c.fail(
            at(&["rounds", "track"]),
            "the matrix has several block sizes: say which one is tracked (bs)",
        ),
        Some(t) if !bs_list.is_empty() && !bs_list.contains(&t) => c.fail(
            at(&["rounds", "track", "bs"]),
            "that block size is not one of the matrix's",
        ),
        _ => {}
    }
    let counts = |f: fn(&Matrix) -> &Vec<Count>| {
        phase
            .matrix
            .as_ref()
            .map(|m| f(m).clone())
            .unwrap_or_default()
    };
    for (name, list, tracked) in [
        ("jobs", counts(|m| &m.jobs), r.track.jobs),
        ("iodepth", counts(|m| &m.iodepth), r.track.iodepth),
    ] {
        match tracked {
            None if list.len() > 1 => c.fail(
                at(&["rounds", "track"]),
                format!("the matrix has several {name} values: say which one is tracked ({name})"),
            ),
            Some(t) if !list.is_empty() && !list.contains(&t) => c.fail(
                at(&["rounds", "track", name]),
                format!("{} is not one of the matrix's {name} values", t.0),
            ),
            _ => {}
        }
    }
}

/// An idle phase watches the drive: nothing in it may shape I/O.
fn check_idle(c: &mut Checker, phase: &Phase, at: &dyn Fn(&[&str]) -> Vec<Seg>) {
    let shaping = [
        ("matrix", phase.matrix.is_some()),
        ("rate", phase.rate.is_some()),
        ("sweep", phase.sweep.is_some()),
        ("rounds", phase.rounds.is_some()),
        ("runs", phase.runs.is_some()),
        ("ramp", !phase.ramp.0.is_zero()),
    ];
    for (k, present) in shaping {
        if present {
            c.fail(at(&[k]), format!("an idle phase does no I/O: drop its {k}"));
        }
    }
    let end = &phase.end;
    if end.data.is_some() {
        c.fail(
            at(&["end", "data"]),
            "an idle phase moves no data: end it by a duration",
        );
    }
    if end.steady.is_some() {
        c.fail(
            at(&["end", "steady"]),
            "an idle phase has no IOPS to be steady",
        );
    }
    if end.throttled.is_some() {
        c.fail(
            at(&["end", "throttled"]),
            "an idle phase does not load the drive to throttle it",
        );
    }
    if end.duration.is_none() {
        c.fail(
            at(&["end"]),
            "an idle phase needs a duration, the longest it may last",
        );
    }
}

/// The thermal ends: a window that fits, a cool-down only where the drive idles.
fn check_thermal_end(c: &mut Checker, phase: &Phase, at: &dyn Fn(&[&str]) -> Vec<Seg>) {
    let end = &phase.end;
    if let Some(t) = &end.temperature {
        if t.window.0 < crate::telemetry::DEFAULT_PERIOD * 2 {
            c.fail(
                at(&["end", "temperature", "window"]),
                "a temperature window needs at least two telemetry samples (4s)",
            );
        }
        if end.duration.is_some_and(|d| t.window.0 > d.0) {
            c.fail(
                at(&["end", "temperature", "window"]),
                "the temperature window is longer than the phase's duration",
            );
        }
    }
    if end.throttled.is_some_and(|d| d.0.is_zero()) {
        c.fail(
            at(&["end", "throttled"]),
            "throttled for 0s ends at the first throttle: give how long it must stay throttled",
        );
    }
    if end.cooled.is_some() && phase.workload.io().is_some() {
        c.fail(
            at(&["end", "cooled"]),
            "a drive under load does not cool down: cooled ends an idle phase (workload: idle)",
        );
    }
}

fn check_reference(c: &mut Checker, preset: &Preset, i: usize, of: &str, path: Vec<Seg>) {
    match preset.phases.iter().position(|p| p.name == of) {
        None => c.out.push(Violation {
            path,
            message: format!("the rate refers to phase '{of}', which does not exist"),
            suggestion: suggest::nearest(of, preset.phases.iter().map(|p| p.name.as_str())),
        }),
        Some(j) if j >= i => c.fail(
            path,
            format!("the rate refers to phase '{of}', which does not run before this one"),
        ),
        Some(j) if preset.phases[j].workload.io().is_none() => c.fail(
            path,
            format!("phase '{of}' is idle: it measures no maximum"),
        ),
        Some(j) => {
            let p = &preset.phases[j];
            let has_max = p.sweep.is_some() || matches!(p.rate, None | Some(RateValue::Max));
            if !has_max {
                c.fail(
                    path,
                    format!("phase '{of}' does not run at rate max, so it measures no maximum"),
                );
            }
        }
    }
}
