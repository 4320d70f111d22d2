//! The report's SNIA PTS steady-state pages, IOPS, Throughput and Latency, shaped like the
//! method's report pages (as CloudHarmony's `block-storage` lays them out): per phase of
//! rounds, the steady-state convergence plot (the tracking variable per round), the
//! verification plot of the measurement window (its rounds, their average, the ±10% band,
//! the least-squares line) with the determination data, and the tables of window averages.
//! The window is found again from the recorded rounds by the runner's own detector
//! ([`crate::plan::SteadyState`]); a phase that never reached steady state says so on
//! every table, its figures the averages of its last rounds.

use std::fmt::Write;

use super::page::{grid_captioned, kv_table};
use super::pts_test::PtsTest;
use super::svg::{colour, esc, Chart, Series, Style, Unit, PALETTE};
use crate::plan::{round_value, Metric, Plan, SteadyRule, SteadyState, SteadyVerdict, WindowFit};
use crate::session::{phase_of, Session, StepRecord};
use crate::workload::Workload;

/// One combination of a phase's matrix: its read share (percent) and block size (bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Combo {
    pub read: u8,
    pub bs: u64,
}

impl Combo {
    fn of(w: &Workload) -> Combo {
        Combo {
            read: w.rw.read_percent(w.rwmixread),
            bs: w.bs.max(),
        }
    }

    /// `R/W 0/100, 4 KiB`.
    fn label(self) -> String {
        format!("R/W {}, {} KiB", mix(self.read), kib(self.bs))
    }
}

/// A read share as the method writes a mix: `65/35`.
fn mix(read: u8) -> String {
    format!("{read}/{}", 100 - read.min(100))
}

/// A block size in KiB: `0.5`, `4`, `1024`.
fn kib(bs: u64) -> String {
    if bs.is_multiple_of(1024) {
        (bs / 1024).to_string()
    } else {
        format!("{}", bs as f64 / 1024.0)
    }
}

/// Where a phase's steady state stands.
#[derive(Debug, Clone, PartialEq)]
pub enum Steady {
    /// Reached at this round (its number); the window is the rounds up to it.
    Reached(u32),
    /// Never reached: the window shown is the last rounds run, not a steady-state window.
    NotReached,
}

/// One phase of SNIA rounds: its steps by round and combination, the tracked figure per
/// round, and the window the tables average.
#[derive(Debug, Clone)]
pub struct PhaseRounds<'a> {
    pub name: String,
    pub metric: Metric,
    pub range_percent: f64,
    pub slope_percent: f64,
    /// The tracked combination (SNIA's: 0/100 4 KiB for IOPS and latency, the writes of
    /// the block size for throughput).
    pub tracked: Combo,
    /// The steps that ran, (round, combination, step), in run order; no pre-write.
    pub steps: Vec<(u32, Combo, &'a StepRecord)>,
    /// The tracked combination's figure per round (round, value as measured).
    pub track: Vec<(u32, f64)>,
    pub steady: Steady,
    /// The rounds the tables average: the steady-state window, or the last rounds run.
    pub window: Vec<u32>,
}

impl PhaseRounds<'_> {
    /// The rounds run, in order.
    pub fn rounds(&self) -> Vec<u32> {
        let mut r: Vec<u32> = self.steps.iter().map(|x| x.0).collect();
        r.dedup();
        r
    }

    /// The combinations, sorted by block size then read share.
    pub fn combos(&self) -> Vec<Combo> {
        let mut c: Vec<Combo> = self.steps.iter().map(|x| x.1).collect();
        c.sort_unstable_by_key(|c| (c.bs, c.read));
        c.dedup();
        c
    }

    /// `f` of combination `c` averaged over the window's rounds that ran it and have the
    /// figure (`f` gives `None` for a round without it: a latency of a round that did no
    /// I/O); none when no window round does.
    pub fn window_mean(&self, c: Combo, f: &dyn Fn(&StepRecord) -> Option<f64>) -> Option<f64> {
        let v: Vec<f64> = self
            .steps
            .iter()
            .filter(|(r, k, _)| *k == c && self.window.contains(r))
            .filter_map(|(_, _, s)| f(s))
            .collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    }

    /// The window's tracked values, in the tracking variable's unit, with their rounds.
    fn window_track(&self) -> Vec<(u32, f64)> {
        self.track
            .iter()
            .filter(|(r, _)| self.window.contains(r))
            .map(|&(r, v)| (r, self.metric.in_unit(v)))
            .collect()
    }

    /// `rounds a-b`, the window's first and last.
    fn window_text(&self) -> String {
        match (self.window.first(), self.window.last()) {
            (Some(a), Some(b)) if a != b => format!("rounds {a}-{b}"),
            (Some(a), _) => format!("round {a}"),
            _ => "no round".into(),
        }
    }

    /// What the phase's steady state is, as a sentence: `steady state reached at round
    /// 7 (window 3-7)` or `steady state NOT reached in 25 rounds: ...`.
    pub fn status(&self) -> String {
        match self.steady {
            Steady::Reached(n) => format!(
                "steady state reached at round {n} (window {}); the figures are averages over the window",
                self.window_text().trim_start_matches("rounds ")
            ),
            Steady::NotReached => format!(
                "steady state NOT reached in {} rounds; the figures are averages over the last {}, {}, not a steady-state window",
                self.rounds().len(),
                self.window.len(),
                self.window_text()
            ),
        }
    }
}

/// The phases of SNIA rounds of a session of one of the three tests, as the plan recorded
/// them; empty for any other session.
pub fn phases(s: &Session) -> Vec<PhaseRounds<'_>> {
    if PtsTest::of_steady_state(s).is_none() {
        return Vec::new();
    }
    let Some(plan) = s.plan_as::<Plan>() else {
        return Vec::new();
    };
    plan.phases
        .iter()
        .enumerate()
        .filter_map(|(i, p)| {
            let rounds = p.rounds?;
            let SteadyRule::Snia {
                window,
                range_percent,
                slope_percent,
                ..
            } = rounds.rule
            else {
                return None;
            };
            let tracked = plan
                .steps
                .get(p.steps.clone())?
                .iter()
                .find(|st| st.tracked)
                .map(|st| Combo::of(&st.workload))?;
            // Every step of the rounds, as the runner judged them (one of no I/O too).
            let steps: Vec<(u32, Combo, &StepRecord)> = s
                .steps
                .iter()
                .filter(|r| phase_of(r) == Some(i as u64) && !r.prepares())
                .filter_map(|r| {
                    let round = r.point?.round?;
                    Some((round, Combo::of(r.workload.as_ref()?), r))
                })
                .collect();
            let track: Vec<(u32, f64)> = steps
                .iter()
                .filter(|x| x.1 == tracked)
                .map(|(r, _, st)| (*r, round_value(rounds.metric, &st.summary)))
                .collect();
            // The runner's own detector over the recorded rounds: the round it stopped at.
            let mut det = SteadyState::new(&rounds.rule).tracking(rounds.metric);
            let reached = track
                .iter()
                .position(|(_, v)| matches!(det.push(*v), SteadyVerdict::Reached { .. }));
            let upto = reached.map_or(track.len(), |k| k + 1);
            let window: Vec<u32> = track[upto.saturating_sub(window)..upto]
                .iter()
                .map(|x| x.0)
                .collect();
            let steady = reached.map_or(Steady::NotReached, |k| Steady::Reached(track[k].0));
            Some(PhaseRounds {
                name: p.name.clone(),
                metric: rounds.metric,
                range_percent,
                slope_percent,
                tracked,
                steps,
                track,
                steady,
                window,
            })
        })
        .filter(|p| !p.steps.is_empty())
        .collect()
}

/// Whether the session has a steady-state page: its headline figures are the page's
/// window averages, not a step's peak.
pub fn applies(s: &Session) -> bool {
    !phases(s).is_empty()
}

/// The headline of a steady-state session: per phase, the tracked combination's window
/// average in its unit, and where its steady state stands.
pub fn headline(o: &mut String, s: &Session) {
    let phases = phases(s);
    if phases.is_empty() {
        return;
    }
    let rows: Vec<Vec<String>> = phases
        .iter()
        .map(|p| {
            let v = p
                .window_mean(p.tracked, &|r| Some(round_value(p.metric, &r.summary)))
                .map_or_else(|| "-".into(), |v| p.metric.show(v));
            vec![p.name.clone(), p.tracked.label(), v, p.status()]
        })
        .collect();
    grid_captioned(
        o,
        "pts pts-headline",
        "The test's headline: each phase's tracked figure averaged over its measurement window (never a round's peak, never the preconditioning).",
        &["phase", "tracked", "window average", "steady state"],
        &rows,
    );
}

/// Writes the session's steady-state page, if it is one of the three tests, under
/// `heading` (`h2`, or `h3` in a drive's part of the page).
pub fn section(o: &mut String, s: &Session, heading: &str) {
    let Some(test) = PtsTest::of_steady_state(s) else {
        return;
    };
    let phases = phases(s);
    if phases.is_empty() {
        return;
    }
    let sub = if heading == "h2" { "h3" } else { "h4" };
    let _ = writeln!(o, "<{heading}>{}</{heading}>", test.title());
    if let Some(mark) = crate::session::method::off_method_text(s) {
        let _ = writeln!(
            o,
            "<p class=\"off-method\"><b>Off-method:</b> {}</p>",
            esc(&mark)
        );
    }
    if test == PtsTest::Latency {
        o.push_str("<p class=\"note\">Latency here is the response time of the method: each I/O's service latency, from its submission to its completion (the test runs closed loop, with no schedule).</p>\n");
    }
    headline(o, s);
    for (k, p) in phases.iter().enumerate() {
        let class = match p.steady {
            Steady::Reached(_) => "pts-phase",
            Steady::NotReached => "pts-phase not-steady-status",
        };
        let _ = writeln!(
            o,
            "<{sub} class=\"{class}\">Phase {}: {}</{sub}>",
            esc(&p.name),
            esc(&p.status())
        );
        let id = format!("pts-ss-{}", k + 1);
        o.push_str(&convergence(p, &id).figure());
        o.push_str(&verification(p, &id).figure());
        determination(o, p);
        match test {
            PtsTest::Iops => iops_table(o, p),
            PtsTest::Throughput => throughput_table(o, p),
            PtsTest::Latency => latency_tables(o, p),
            // Not a steady-state test (`of_steady_state` picks none of these).
            PtsTest::Hir | PtsTest::Xsr | PtsTest::Dirth => {}
        }
    }
}

/// A chart of rounds of `m`, the tracking variable.
fn chart(id: String, title: String, m: Metric, series: Vec<Series>) -> Chart {
    let y = match m {
        Metric::MeanLatency => ("mean response time", Unit::Micros),
        m => (m.unit(), Unit::Plain),
    };
    Chart::new(
        id,
        title,
        ("round", Unit::Count),
        y,
        series,
        "no round finished",
    )
}

/// The steady-state convergence plot: the tracking variable per round of each combination
/// at the tracked read share (every block size), or of every combination where the phase
/// has one block size (throughput's read and write).
fn convergence(p: &PhaseRounds<'_>, id: &str) -> Chart {
    let combos = p.combos();
    let one_bs = combos.iter().all(|c| c.bs == p.tracked.bs);
    let shown: Vec<Combo> = combos
        .into_iter()
        .filter(|c| one_bs || c.read == p.tracked.read)
        .collect();
    let all: Vec<Series> = shown
        .iter()
        .enumerate()
        .map(|(i, &c)| {
            let points = p
                .steps
                .iter()
                .filter(|x| x.1 == c)
                .map(|(r, _, st)| {
                    (
                        f64::from(*r),
                        p.metric.in_unit(round_value(p.metric, &st.summary)),
                    )
                })
                .collect();
            let tracked = if c == p.tracked { " (tracked)" } else { "" };
            let name = format!("{}{tracked}", c.label());
            Series::new(name, colour(i), Style::LineMarkers, points)
        })
        .collect();
    // Block sizes whose figures lie decades apart (4 KiB and 1 MiB IOPS) each keep their
    // shape on a log axis.
    let y_log = super::charts::spans_decades(all.iter().flat_map(|s| s.points.iter().map(|p| p.1)));
    let title = format!(
        "{}: steady-state convergence, {} per round{}",
        p.name,
        p.metric.unit(),
        if y_log { " (log scale)" } else { "" }
    );
    Chart {
        y_log,
        ..chart(format!("{id}-convergence"), title, p.metric, all)
    }
}

/// The steady-state verification plot: the window's tracked values, their average, the
/// ±10% band around it and the least-squares line across the window.
fn verification(p: &PhaseRounds<'_>, id: &str) -> Chart {
    let w = p.window_track();
    let values: Vec<f64> = w.iter().map(|x| x.1).collect();
    let name = format!("{} {}", p.tracked.label(), p.metric.unit());
    let points = w.iter().map(|&(r, v)| (f64::from(r), v)).collect();
    let mut all = vec![Series::new(name, PALETTE[0], Style::LineMarkers, points)];
    if let (Some(fit), Some(first), Some(last)) = (WindowFit::of(&values), w.first(), w.last()) {
        let (a, b) = (f64::from(first.0), f64::from(last.0));
        let flat = |v: f64| vec![(a, v), (b, v)];
        let line = |x: f64| fit.intercept + fit.slope * (x - a);
        all.extend([
            Series::new("window average", PALETTE[1], Style::Line, flat(fit.mean)),
            Series::new(
                "110% of the average",
                PALETTE[6],
                Style::Dashed,
                flat(fit.mean * 1.1),
            ),
            Series::new(
                "90% of the average",
                PALETTE[6],
                Style::Dashed,
                flat(fit.mean * 0.9),
            ),
            Series::new(
                "least-squares line",
                PALETTE[2],
                Style::Line,
                vec![(a, line(a)), (b, line(b))],
            ),
        ]);
    }
    let what = match p.steady {
        Steady::Reached(_) => "measurement window",
        Steady::NotReached => "last rounds (steady state NOT reached)",
    };
    chart(
        format!("{id}-verification"),
        format!(
            "{}: steady-state verification, {} {what}",
            p.name,
            p.tracked.label()
        ),
        p.metric,
        all,
    )
}

/// The steady-state determination data: the window's average, its range and the
/// least-squares line's excursion against their limits, and the line.
fn determination(o: &mut String, p: &PhaseRounds<'_>) {
    let w = p.window_track();
    let values: Vec<f64> = w.iter().map(|x| x.1).collect();
    let Some(fit) = WindowFit::of(&values) else {
        return;
    };
    let first = w.first().map_or(0.0, |x| f64::from(x.0));
    let u = p.metric.unit();
    let num = |v: f64| match p.metric {
        Metric::Iops => format!("{v:.0}"),
        _ => format!("{v:.2}"),
    };
    let verdict = |ok: bool| if ok { "within" } else { "OUTSIDE" };
    let range = fit.range_pct();
    let exc = fit.excursion_pct();
    let rows = vec![
        (
            "window".into(),
            format!("{} ({})", p.window_text(), p.status()),
        ),
        ("window average".into(), format!("{} {u}", num(fit.mean))),
        (
            "range (max − min)".into(),
            format!(
                "{} {u}, {range:.1}% of the average: {} the limit of {}% ({} {u})",
                num(fit.max - fit.min),
                verdict(range <= p.range_percent),
                p.range_percent,
                num(fit.mean * p.range_percent / 100.0)
            ),
        ),
        (
            "least-squares excursion".into(),
            format!(
                "{} {u} across the window, {exc:.1}% of the average: {} the limit of {}% ({} {u})",
                num((fit.slope * (fit.n - 1) as f64).abs()),
                verdict(exc <= p.slope_percent),
                p.slope_percent,
                num(fit.mean * p.slope_percent / 100.0)
            ),
        ),
        (
            "least-squares line".into(),
            format!(
                "{} × R + {} ({u}, R the round)",
                num(fit.slope),
                num(fit.intercept - fit.slope * first)
            ),
        ),
    ];
    kv_table(o, "pts-determination", &rows);
}

/// A table's classes: `pts`, `base`, and `not-steady` when the phase never reached it.
fn classes(p: &PhaseRounds<'_>, base: &str) -> String {
    match p.steady {
        Steady::Reached(_) => format!("pts {base}"),
        Steady::NotReached => format!("pts not-steady {base}"),
    }
}

/// The caption every table of the phase carries: what its figures are, which rounds they
/// average and whether those are a steady-state window.
fn caption(p: &PhaseRounds<'_>, what: &str) -> String {
    let rounds = p.window_text();
    match p.steady {
        Steady::Reached(n) => format!(
            "{what}. Window: {rounds} (steady state reached at round {n}), phase {}.",
            p.name
        ),
        Steady::NotReached => format!(
            "{what}. Steady state NOT reached ({} rounds): averages of the last {}, {rounds}, not a steady-state window; phase {}.",
            p.rounds().len(),
            p.window.len(),
            p.name
        ),
    }
}

/// A table of block size (rows, small to large) by read/write mix (columns, from all
/// writes to all reads), each cell `f` averaged over the window (its rounds that have it).
fn matrix_table(
    o: &mut String,
    p: &PhaseRounds<'_>,
    class: &str,
    what: &str,
    f: &dyn Fn(&StepRecord) -> Option<f64>,
    fmt: &dyn Fn(f64) -> String,
) {
    let combos = p.combos();
    let mut bss: Vec<u64> = combos.iter().map(|c| c.bs).collect();
    bss.dedup();
    let mut reads: Vec<u8> = combos.iter().map(|c| c.read).collect();
    reads.sort_unstable();
    reads.dedup();
    let head: Vec<String> = std::iter::once("block size (KiB) \\ R/W mix %".to_string())
        .chain(reads.iter().map(|&r| mix(r)))
        .collect();
    let head: Vec<&str> = head.iter().map(String::as_str).collect();
    let rows: Vec<Vec<String>> = bss
        .iter()
        .map(|&bs| {
            std::iter::once(kib(bs))
                .chain(reads.iter().map(|&read| {
                    p.window_mean(Combo { read, bs }, f)
                        .map_or_else(|| "-".into(), fmt)
                }))
                .collect()
        })
        .collect();
    grid_captioned(o, &classes(p, class), &caption(p, what), &head, &rows);
}

/// IOPS: read/write mix by block size, all I/Os' IOPS averaged over the window.
fn iops_table(o: &mut String, p: &PhaseRounds<'_>) {
    matrix_table(
        o,
        p,
        "pts-iops",
        "IOPS (reads and writes), window average",
        &|r| Some(r.summary.iops),
        &|v| format!("{v:.0}"),
    );
}

/// Throughput: per block size, the reads' and the writes' MB/s averaged over the window.
fn throughput_table(o: &mut String, p: &PhaseRounds<'_>) {
    let combos = p.combos();
    let mut bss: Vec<u64> = combos.iter().map(|c| c.bs).collect();
    bss.dedup();
    let cell = |read: u8, bs: u64| {
        p.window_mean(Combo { read, bs }, &|r| Some(r.summary.bw_bytes() / 1e6))
            .map_or_else(|| "-".into(), |v| format!("{v:.2}"))
    };
    let rows: Vec<Vec<String>> = bss
        .iter()
        .map(|&bs| vec![kib(bs), cell(100, bs), cell(0, bs)])
        .collect();
    grid_captioned(
        o,
        &classes(p, "pts-throughput"),
        &caption(
            p,
            "Throughput in MB/s (10^6 bytes a second), window average",
        ),
        &[
            "block size (KiB)",
            "read (100/0) MB/s",
            "write (0/100) MB/s",
        ],
        &rows,
    );
}

/// Latency: the average, maximum and nines of each block size and mix, each the window
/// rounds' average of the round's figure, in µs.
fn latency_tables(o: &mut String, p: &PhaseRounds<'_>) {
    type Pick = fn(&crate::stats::LatSummary) -> f64;
    let stats: [(&str, &str, Pick); 6] = [
        ("pts-lat-mean", "Average", |l| l.mean),
        ("pts-lat-max", "Maximum", |l| l.max),
        ("pts-lat-p99", "99th percentile", |l| l.p99),
        ("pts-lat-p99-9", "99.9th percentile", |l| l.p99_9),
        ("pts-lat-p99-99", "99.99th percentile", |l| l.p99_99),
        ("pts-lat-p99-999", "99.999th percentile", |l| {
            l.p99_999.unwrap_or(f64::NAN)
        }),
    ];
    // A round that did no I/O (a starved process) has no latency: left out of the average.
    let idle = p
        .steps
        .iter()
        .any(|(r, _, s)| s.summary.ios == 0 && p.window.contains(r));
    let left_out = if idle {
        "; window rounds that did no I/O have no latency and are left out"
    } else {
        ""
    };
    for (class, what, f) in stats {
        matrix_table(
            o,
            p,
            class,
            &format!("{what} response time in µs (service latency), the window rounds' average of each round's {}{left_out}", what.to_lowercase()),
            &|r| (r.summary.ios > 0).then(|| f(r.summary.service_lat())),
            &|v| {
                if v.is_finite() {
                    format!("{v:.1}")
                } else {
                    "-".into()
                }
            },
        );
    }
}
