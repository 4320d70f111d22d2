//! The SNIA PTS IOPS, Throughput and Latency report pages from real time-scaled runs on a
//! file in memory (docs/PTS.md): each table cell is the average of that combination's
//! figure over the window rounds, the window found again here from the exported steps
//! (`steps.json`) by SNIA's rule worked out independently; a phase that never reached
//! steady state says so on every table; no headline is the preconditioning.

use serde_json::Value;

use crate::run_preset::{report_page, run_preset_text};

/// One of the page's tables: its classes, caption, header and body rows (cells' text).
struct Table {
    classes: Vec<String>,
    caption: String,
    head: Vec<String>,
    rows: Vec<Vec<String>>,
}

fn text_of(n: roxmltree::Node<'_, '_>) -> String {
    n.descendants()
        .filter(|d| d.is_text())
        .map(|d| d.text().unwrap_or_default())
        .collect()
}

/// The page's tables whose classes include `class`.
fn tables(html: &str, class: &str) -> Vec<Table> {
    let opts = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..roxmltree::ParsingOptions::default()
    };
    let d = roxmltree::Document::parse_with_options(html, opts).expect("well-formed");
    d.descendants()
        .filter(|n| {
            n.tag_name().name() == "table"
                && n.attribute("class")
                    .is_some_and(|c| c.split(' ').any(|x| x == class))
        })
        .map(|t| {
            let rows: Vec<Vec<String>> = t
                .children()
                .filter(|n| n.tag_name().name() == "tr")
                .map(|tr| {
                    tr.children()
                        .filter(|c| c.is_element())
                        .map(text_of)
                        .collect()
                })
                .collect();
            Table {
                classes: t
                    .attribute("class")
                    .unwrap_or_default()
                    .split(' ')
                    .map(str::to_string)
                    .collect(),
                caption: t
                    .children()
                    .find(|n| n.tag_name().name() == "caption")
                    .map(text_of)
                    .unwrap_or_default(),
                head: rows.first().cloned().unwrap_or_default(),
                rows: rows.into_iter().skip(1).collect(),
            }
        })
        .collect()
}

/// An exported step (`steps.json`) with the round and combination its session records.
struct Step {
    phase: u64,
    round: u32,
    read: u8,
    bs: u64,
    json: Value,
}

impl Step {
    fn dir(&self, d: &str, k: &str) -> f64 {
        self.json[d][k].as_f64().unwrap_or(0.0)
    }
    fn ios(&self, d: &str) -> f64 {
        self.dir(d, "ios")
    }
    fn iops(&self) -> f64 {
        self.dir("read", "iops") + self.dir("write", "iops")
    }
    fn mbps(&self) -> f64 {
        self.dir("read", "mbps") + self.dir("write", "mbps")
    }
    fn lat(&self, d: &str, k: &str) -> f64 {
        self.json[d]["response_lat_us"][k].as_f64().unwrap_or(0.0)
    }
    /// All I/Os' mean latency, from each direction's mean weighted by its I/Os (NaN when
    /// the step did none).
    fn mean_us(&self) -> f64 {
        let (r, w) = (self.ios("read"), self.ios("write"));
        (r * self.lat("read", "mean") + w * self.lat("write", "mean")) / (r + w)
    }
    /// NaN for a step that did no I/O (a starved round): no latency, left out of a
    /// window's average as the page leaves it out.
    fn max_us(&self) -> f64 {
        if self.ios("read") + self.ios("write") == 0.0 {
            return f64::NAN;
        }
        self.lat("read", "max").max(self.lat("write", "max"))
    }
}

/// The run's exported steps (the report's `steps.json`) beside the saved session's rounds
/// and combinations (read share, block size), preparation left out; and the session.
fn steps(home: &std::path::Path) -> (Vec<Step>, drivescope::session::Session) {
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(home.join("report/steps.json")).unwrap())
            .unwrap();
    let exported = json["steps"].as_array().unwrap().clone();
    let (_, loaded) = crate::dashboard_tmux::the_saved_session(home);
    let s = loaded.session;
    assert_eq!(exported.len(), s.steps.len());
    let out = s
        .steps
        .iter()
        .zip(exported)
        .filter_map(|(r, j)| {
            assert_eq!(j["label"].as_str(), Some(r.label.as_str()));
            let round = r.point?.round?;
            let w = r.workload.as_ref().unwrap();
            Some(Step {
                phase: r.point.and_then(|p| p.phase).unwrap(),
                round,
                read: w.rw.read_percent(w.rwmixread),
                bs: w.bs.max(),
                json: j,
            })
        })
        .collect();
    (out, s)
}

/// SNIA's rule, worked out here: the first round N whose window of `w` rounds has a range
/// (max − min) within `range`% of its average and a least-squares line moving within
/// `slope`% of it across the window; the window's rounds, or the last `w` when none.
fn window(track: &[(u32, f64)], w: usize, range: f64, slope: f64) -> (Option<u32>, Vec<u32>) {
    for end in w..=track.len() {
        let win = &track[end - w..end];
        let n = w as f64;
        let mean = win.iter().map(|x| x.1).sum::<f64>() / n;
        let hi = win.iter().map(|x| x.1).fold(f64::MIN, f64::max);
        let lo = win.iter().map(|x| x.1).fold(f64::MAX, f64::min);
        // Least squares over x = 0..w-1: slope = Σ(x - x̄)(y - ȳ) / Σ(x - x̄)².
        let xm = (n - 1.0) / 2.0;
        let (mut sxy, mut sxx) = (0.0, 0.0);
        for (i, (_, y)) in win.iter().enumerate() {
            sxy += (i as f64 - xm) * (y - mean);
            sxx += (i as f64 - xm).powi(2);
        }
        let excursion = (sxy / sxx * (n - 1.0)).abs();
        if hi - lo <= range / 100.0 * mean && excursion <= slope / 100.0 * mean {
            return (Some(win[w - 1].0), win.iter().map(|x| x.0).collect());
        }
    }
    let last = &track[track.len().saturating_sub(w)..];
    (None, last.iter().map(|x| x.0).collect())
}

/// `f` of the steps of `phase` at (read, bs) averaged over `rounds`, steps without the
/// figure (NaN: a latency of a round that did no I/O) left out.
fn mean_over(
    steps: &[Step],
    phase: u64,
    rounds: &[u32],
    read: u8,
    bs: u64,
    f: &dyn Fn(&Step) -> f64,
) -> f64 {
    let v: Vec<f64> = steps
        .iter()
        .filter(|s| s.phase == phase && s.read == read && s.bs == bs && rounds.contains(&s.round))
        .map(f)
        .filter(|v| !v.is_nan())
        .collect();
    assert!(!v.is_empty(), "no step at {read}/{bs} in rounds {rounds:?}");
    v.iter().sum::<f64>() / v.len() as f64
}

/// A cell's number, within half its last printed digit (and a hair) of `want`.
fn assert_cell(cell: &str, want: f64, what: &str) {
    let got: f64 = cell.parse().unwrap_or_else(|_| panic!("{what}: '{cell}'"));
    let decimals = cell.split('.').nth(1).map_or(0, str::len) as i32;
    let tol = 0.5 * 10f64.powi(-decimals) + want.abs() * 1e-9;
    assert!(
        (got - want).abs() <= tol,
        "{what}: the page says {got}, the window's average of the exported figures is {want} \
         (tolerance {tol})"
    );
}

/// What the page must say of a phase's window, on its heading and each of its tables.
fn assert_window_said(html: &str, t: &Table, reached: Option<u32>, rounds: &[u32]) {
    let (a, b) = (rounds[0], rounds[rounds.len() - 1]);
    match reached {
        Some(n) => {
            assert!(
                t.caption.contains(&format!(
                    "Window: rounds {a}-{b} (steady state reached at round {n})"
                )),
                "{}",
                t.caption
            );
            assert!(!t.classes.iter().any(|c| c == "not-steady"));
            assert!(
                html.contains(&format!(
                    "steady state reached at round {n} (window {a}-{b})"
                )),
                "the phase's heading says where"
            );
        }
        None => {
            assert!(
                t.caption.contains("Steady state NOT reached")
                    && t.caption
                        .contains(&format!("rounds {a}-{b}, not a steady-state window")),
                "{}",
                t.caption
            );
            assert!(t.classes.iter().any(|c| c == "not-steady"));
        }
    }
}

/// The page's headline is the window averages, never the preconditioning (WIPC), and
/// the per-workload peaks and four corners are not shown; the verification plot is.
fn assert_headline_and_plots(html: &str, phases: usize) {
    let head = tables(html, "pts-headline");
    assert_eq!(head.len(), 1);
    assert_eq!(head[0].rows.len(), phases);
    for r in &head[0].rows {
        assert_ne!(r[0], "wipc", "the preconditioning is no headline");
    }
    assert!(tables(html, "workloads").is_empty(), "no per-step peak");
    assert!(
        tables(html, "corners").is_empty(),
        "no four corners of round peaks"
    );
    for k in 1..=phases {
        for fig in ["convergence", "verification"] {
            assert!(
                html.contains(&format!("id=\"pts-ss-{k}-{fig}\"")),
                "{fig} plot"
            );
        }
    }
    for s in [
        "window average",
        "least-squares line",
        "110% of the average",
    ] {
        assert!(html.contains(&format!("data-series=\"{s}\"")), "{s}");
    }
    assert!(html.contains("time-scaled ×0.002"), "off-method mark");
    assert_eq!(tables(html, "pts-determination").len(), phases);
}

/// A range and a slope limit that any five positive figures meet (see the IOPS test).
const WIDE: (&str, &str) = ("500%", "700%");

/// The IOPS preset, its matrix cut to 3 mixes × 2 block sizes and its rule's limits and
/// most rounds set, run time-scaled ×0.002.
fn iops_run(range: &str, slope: &str, max: u32) -> (tempfile::TempDir, String) {
    let text = std::fs::read_to_string("presets/snia-iops.yaml")
        .unwrap()
        .replace(
            "rwmixread: [100%, 95%, 65%, 50%, 35%, 5%, 0%]",
            "rwmixread: [100%, 65%, 0%]",
        )
        .replace(
            "bs: [1024k, 128k, 64k, 32k, 16k, 8k, 4k, 512]",
            "bs: [128k, 4k]",
        )
        .replace("max: 25", &format!("max: {max}"))
        .replace("range: 20%", &format!("range: {range}"))
        .replace("slope: 10%", &format!("slope: {slope}"));
    let (home, lines) = run_preset_text(&text, 0.002);
    let html = report_page(home.path(), &lines);
    (home, html)
}

/// Checks an IOPS page against the exported steps: the window, and every cell.
fn check_iops(home: &std::path::Path, html: &str, range: f64, slope: f64) -> Option<u32> {
    let (steps, _) = steps(home);
    let track: Vec<(u32, f64)> = steps
        .iter()
        .filter(|s| s.read == 0 && s.bs == 4096)
        .map(|s| (s.round, s.iops()))
        .collect();
    let (reached, rounds) = window(&track, 5, range, slope);
    let t = tables(html, "pts-iops");
    assert_eq!(t.len(), 1);
    let t = &t[0];
    assert_window_said(html, t, reached, &rounds);
    assert_eq!(t.head[1..], ["0/100", "65/35", "100/0"]);
    assert_eq!(t.rows.len(), 2, "4 and 128 KiB");
    for row in &t.rows {
        let bs = row[0].parse::<u64>().unwrap() * 1024;
        for (cell, read) in row[1..].iter().zip([0, 65, 100]) {
            let want = mean_over(&steps, 1, &rounds, read, bs, &|s| s.iops());
            assert_cell(
                cell,
                want,
                &format!("IOPS {read}/{} {bs}, rounds {rounds:?}", 100 - read),
            );
        }
    }
    assert_headline_and_plots(html, 1);
    reached
}

#[test]
fn snia_iops_page_averages_each_cell_over_the_steady_state_window() {
    // Limits any five positive figures meet, however the CPUs are shared (the page is
    // checked here, not the drive): max − min is at most their sum, 5 × the average, and
    // the least-squares line moves at most 6.4 × the average across five rounds.
    let (home, html) = iops_run(WIDE.0, WIDE.1, 25);
    let reached = check_iops(home.path(), &html, 500.0, 700.0);
    assert_eq!(reached, Some(5), "steady at the first window");
}

#[test]
fn snia_iops_page_that_never_reached_steady_state_says_so_on_every_table() {
    // A range of 0%: no five measured rounds are equal.
    let (home, html) = iops_run("0%", "10%", 6);
    assert_eq!(check_iops(home.path(), &html, 0.0, 10.0), None);
    assert!(html.contains("steady state NOT reached in 6 rounds"));
}

#[test]
fn snia_throughput_page_says_each_phase_window_and_averages_its_mbps() {
    // 128 KiB with limits any five rounds meet (reached), 1024 KiB with a range of 0%
    // (never reached).
    let text = std::fs::read_to_string("presets/snia-throughput.yaml").unwrap();
    let rounds = "    rounds:\n      track:";
    assert_eq!(text.matches(rounds).count(), 2);
    let text = text
        .replacen(
            rounds,
            "    rounds:\n      max: 25\n      range: 500%\n      slope: 700%\n      track:",
            1,
        )
        .replacen(
            rounds,
            "    rounds:\n      max: 6\n      range: 0%\n      track:",
            1,
        );
    let (home, lines) = run_preset_text(&text, 0.002);
    let html = report_page(home.path(), &lines);
    let (steps, _) = steps(home.path());
    let t = tables(&html, "pts-throughput");
    assert_eq!(t.len(), 2);
    for (k, (t, bs, range)) in [(&t[0], 128 * 1024, 500.0), (&t[1], 1024 * 1024, 0.0)]
        .into_iter()
        .enumerate()
    {
        let phase = k as u64 + 1;
        let track: Vec<(u32, f64)> = steps
            .iter()
            .filter(|s| s.phase == phase && s.read == 0)
            .map(|s| (s.round, s.mbps()))
            .collect();
        let slope = if range > 0.0 { 700.0 } else { 10.0 };
        let (reached, rounds) = window(&track, 5, range, slope);
        assert_eq!(reached.is_some(), range > 0.0, "phase {phase}: {track:?}");
        assert_window_said(&html, t, reached, &rounds);
        assert_eq!(t.rows.len(), 1);
        let row = &t.rows[0];
        assert_eq!(row[0].parse::<u64>().unwrap() * 1024, bs);
        for (cell, read) in row[1..].iter().zip([100, 0]) {
            let want = mean_over(&steps, phase, &rounds, read, bs, &|s| s.mbps());
            assert_cell(cell, want, &format!("MB/s {read}% read {bs}"));
        }
    }
    assert_headline_and_plots(&html, 2);
}

/// The latency preset cut to 4 and 8 KiB, its rule set, run time-scaled; its page checked
/// against the exported steps (average, maximum) and the session (the nines).
fn latency_run(range: f64, slope: f64, max: u32) -> Option<u32> {
    let text = std::fs::read_to_string("presets/snia-latency.yaml")
        .unwrap()
        .replace("bs: [8k, 4k, 512]", "bs: [8k, 4k]")
        .replace(
            "    rounds:\n      track:",
            &format!("    rounds:\n      max: {max}\n      range: {range}%\n      slope: {slope}%\n      track:"),
        );
    let (home, lines) = run_preset_text(&text, 0.002);
    let html = report_page(home.path(), &lines);
    let (steps, session) = steps(home.path());
    let track: Vec<(u32, f64)> = steps
        .iter()
        .filter(|s| s.read == 0 && s.bs == 4096)
        .map(|s| (s.round, s.mean_us()))
        .collect();
    let (reached, rounds) = window(&track, 5, range, slope);
    // The nines from the session's own steps (steps.json has them per direction only).
    let p99 = |s: &Step| {
        let sum = &session
            .steps
            .iter()
            .find(|r| r.label == s.json["label"].as_str().unwrap())
            .unwrap()
            .summary;
        if sum.ios == 0 {
            return f64::NAN;
        }
        sum.service_lat().p99
    };
    type Pick<'a> = &'a dyn Fn(&Step) -> f64;
    let checks: [(&str, Pick); 3] = [
        ("pts-lat-mean", &|s| s.mean_us()),
        ("pts-lat-max", &|s| s.max_us()),
        ("pts-lat-p99", &p99),
    ];
    for (class, f) in checks {
        let t = tables(&html, class);
        assert_eq!(t.len(), 1, "{class}");
        let t = &t[0];
        assert!(t.caption.contains("µs (service latency)"), "{}", t.caption);
        assert_window_said(&html, t, reached, &rounds);
        assert_eq!(t.head[1..], ["0/100", "65/35", "100/0"]);
        for row in &t.rows {
            let bs = row[0].parse::<u64>().unwrap() * 1024;
            for (cell, read) in row[1..].iter().zip([0, 65, 100]) {
                let want = mean_over(&steps, 1, &rounds, read, bs, f);
                assert_cell(cell, want, &format!("{class} {read}% read {bs}"));
            }
        }
    }
    for class in ["pts-lat-p99-9", "pts-lat-p99-99", "pts-lat-p99-999"] {
        let t = tables(&html, class);
        assert_eq!(t.len(), 1, "{class}");
        assert_window_said(&html, &t[0], reached, &rounds);
    }
    assert_headline_and_plots(&html, 1);
    reached
}

#[test]
fn snia_latency_page_averages_mean_max_and_nines_over_the_window() {
    assert_eq!(latency_run(500.0, 700.0, 25), Some(5));
}

#[test]
fn snia_latency_page_that_never_reached_steady_state_says_so_on_every_table() {
    assert_eq!(latency_run(0.0, 10.0, 6), None);
}
