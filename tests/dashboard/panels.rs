//! Every panel and overlay rendered from synthetic state with ratatui's TestBackend:
//! insta snapshots of whole screens at 120×40 (all panels) and 80×24 (one tab each), in
//! the empty, running, no-SMART, throttling and error states, plus assertions on what
//! each state must show.

use drivescope::app::{App, Msg, Overlay, Panel};
use ratatui::crossterm::event::KeyCode;

use super::fixtures::*;

const BIG: (u16, u16) = (120, 40);
const SMALL: (u16, u16) = (80, 24);

fn tab(mut app: App, p: Panel) -> App {
    app.tab = p;
    app
}

#[test]
fn empty_state() {
    let app = idle(BIG);
    let s = screen(&app);
    assert!(s.contains("enter starts Quick look"), "{s}");
    assert!(s.contains("no telemetry yet"));
    assert!(s.contains("no events yet"));
    assert!(s.contains("no curve yet"));
    insta::assert_snapshot!("empty_120x40", s);
}

#[test]
fn running_state_all_panels() {
    let app = running(BIG);
    let s = screen(&app);
    assert!(s.contains("Micron_7400_MTFDKCB7T6TDZ"), "{s}");
    assert!(s.contains("step 4/12 4k randread QD32"));
    assert!(s.contains("step 0:30 of 1:00 · 0:30 left"));
    assert!(
        s.contains("quoted 4K random read 1.00M IOPS"),
        "the datasheet mark is labelled quoted"
    );
    assert!(s.contains("steady: measuring, round 3 of 5"));
    insta::assert_snapshot!("running_120x40", s);
}

#[test]
fn every_panel_in_every_state_at_80x24() {
    let states: [(&str, MakeApp); 5] = [
        ("empty", idle),
        ("running", running),
        ("no_smart", no_smart),
        ("throttling", throttling),
        ("error", errored),
    ];
    for (name, make) in states {
        for p in Panel::ALL {
            let app = tab(make(SMALL), p);
            let s = screen(&app);
            // The tab bar lists every tab whichever is shown; the panel's own box, under
            // it, carries the panel's full title, and no other panel's box is drawn.
            let boxes: Vec<&str> = s.lines().filter(|l| l.starts_with("╭ ")).collect();
            assert_eq!(
                boxes.len(),
                2,
                "{name} {p:?}: the header and one panel\n{s}"
            );
            assert!(
                boxes[1].starts_with(&format!("╭ {}", p.title())),
                "{name} {p:?}: the panel's box is titled {:?}\n{s}",
                boxes[1]
            );
            let t = app.theme();
            let title = &cells_of(&app, &format!("╭ {}", p.title()))[0];
            assert_eq!(
                title[0].fg, t.border,
                "{name} {p:?}: the box in the border colour"
            );
            assert_eq!(
                title[2].fg, t.title,
                "{name} {p:?}: its title in the title colour"
            );
            insta::assert_snapshot!(format!("{name}_80x24_{p:?}").to_lowercase(), s);
        }
    }
}

#[test]
fn no_smart_state() {
    let app = no_smart(BIG);
    let s = screen(&app);
    assert!(s.contains("no SMART: run as root"), "{s}");
    assert!(s.contains("drivescope 11.5 %"), "host figures still show");
    assert!(s.contains("401.2k"), "kernel figures still show");
    insta::assert_snapshot!("no_smart_120x40", s);
    let s = screen(&tab(no_smart(SMALL), Panel::Thermal));
    assert!(s.contains("no SMART: run as root"), "{s}");
}

#[test]
fn throttling_state() {
    let app = throttling(BIG);
    let s = screen(&app);
    assert!(
        s.contains("throttling at 9:41"),
        "the throughput panel marks it: {s}"
    );
    assert!(s.contains("throttle 1 transition · 0:07"), "{s}");
    assert!(s.contains("throttling began: 1 transition at 70 °C"));
    insta::assert_snapshot!("throttling_120x40", s);
    let s = screen(&tab(throttling(SMALL), Panel::Throughput));
    assert!(s.contains("throttling at 9:41"), "{s}");
}

/// Rows of the screen where more than half the cells are in `colour`: horizontal lines.
fn rows_mostly_in(app: &App, colour: ratatui::style::Color, width: u16) -> usize {
    colour_grid(app)
        .chunks(usize::from(width))
        .filter(|row| row.iter().filter(|(fg, _)| *fg == colour).count() > row.len() / 2)
        .count()
}

#[test]
fn host_thermal_management_temperatures_are_threshold_lines() {
    let app = tab(throttling(SMALL), Panel::Thermal);
    let s = screen(&app);
    assert!(s.contains("throttles at TMT1 73 °C  TMT2 76 °C"), "{s}");
    let t = app.theme();
    assert_eq!(colours_of(&app, "TMT1 73 °C"), [t.throttle]);
    assert_eq!(colours_of(&app, "TMT2 76 °C"), [t.throttle]);
    // The throttle mark is one column; TMT1 and TMT2 are lines across the chart.
    assert!(
        rows_mostly_in(&app, t.throttle, SMALL.0) >= 1,
        "a TMT line across the chart:\n{s}"
    );
    // A drive without host controlled thermal management: no such line, no TMT figures.
    let plain = tab(running(SMALL), Panel::Thermal);
    assert_eq!(rows_mostly_in(&plain, t.throttle, SMALL.0), 0);
    assert!(!screen(&plain).contains("TMT"));
}

#[test]
fn failing_drive_in_the_error_colour_with_its_reasons() {
    let app = failing(BIG);
    let s = screen(&app);
    let reasons = "FAILED: available spare below threshold, media read-only";
    assert!(
        s.contains(&format!("Micron_7400_MTFDKCB7T6TDZ · health {reasons}")),
        "the header: {s}"
    );
    assert!(
        s.contains("│health FAILED: available spare below threshold, media ")
            && s.contains("│       read-only "),
        "the thermal panel, wrapped: {s}"
    );
    assert!(
        s.contains("9:31 health   FAILED: available spare below threshold,")
            && s.contains("media read-only (was passed)"),
        "the events panel: {s}"
    );
    let critical = app.theme().critical;
    let colours = colours_of(&app, "FAILED");
    assert_eq!(
        colours[..2],
        [critical, critical],
        "the header's and the thermal panel's verdict: {colours:?}"
    );
    assert_eq!(
        colours_of(&app, "health   FAILED"),
        [critical],
        "the events panel's label"
    );
    insta::assert_snapshot!("failing_120x40", s);
    let small = tab(failing(SMALL), Panel::Thermal);
    let s = screen(&small);
    assert!(
        s.contains("health FAILED: available spare below threshold"),
        "{s}"
    );
    assert!(colours_of(&small, "FAILED").iter().all(|c| *c == critical));
    insta::assert_snapshot!("failing_80x24_thermal", s);
    // A drive whose health is unknown shows no verdict at all.
    assert!(!screen(&running(BIG)).contains("health"));
}

#[test]
fn error_state() {
    let app = errored(BIG);
    let s = screen(&app);
    assert!(s.contains("3 I/O errors"), "{s}");
    assert!(s.contains("failed"));
    assert!(
        s.contains("response"),
        "rate-limited: response and service side by side"
    );
    assert!(s.contains("service"));
    insta::assert_snapshot!("error_120x40", s);
    let s = screen(&tab(errored(SMALL), Panel::Events));
    assert!(s.contains("3 I/O errors: read of 4096 B at offset"), "{s}");
}

#[test]
fn overlays() {
    let mut app = idle(BIG);
    send(&mut app, [key('p')]);
    let s = screen(&app);
    assert!(
        s.contains("▶ Quick look") && s.contains("about 2 min") && s.contains("4. 128k write"),
        "{s}"
    );
    insta::assert_snapshot!("overlay_presets_120x40", s);
    let mut small = idle(SMALL);
    send(&mut small, [key('p')]);
    insta::assert_snapshot!("overlay_presets_80x24", screen(&small));

    let mut app = idle(BIG);
    send(
        &mut app,
        [
            key('t'),
            code(KeyCode::Down),
            code(KeyCode::Enter),
            key('n'),
            key('v'),
        ],
    );
    let s = screen(&app);
    // The safety check wraps in its column instead of being cut.
    assert!(s.contains("writes refused: sda2 is  │"), "{s}");
    assert!(s.contains("  mounted at /  "), "{s}");
    // A device's capacity as vendors print it, the binary size beside it.
    assert!(s.contains("500.1 GB (465.8 GiB)"), "{s}");
    assert!(s.contains("Type nvme1n1 and Enter"), "{s}");
    insta::assert_snapshot!("overlay_targets_typing_120x40", s);

    let mut app = idle(SMALL);
    send(&mut app, [key('?')]);
    insta::assert_snapshot!("overlay_help_80x24", screen(&app));

    let mut app = idle(BIG);
    send(&mut app, [key('c'), code(KeyCode::Down)]);
    insta::assert_snapshot!("overlay_themes_120x40", screen(&app));

    let mut app = running(SMALL);
    send(&mut app, [key('q')]);
    assert_eq!(
        app.overlay,
        Some(Overlay::Confirm(drivescope::app::Confirm::Quit))
    );
    let s = screen(&app);
    assert!(s.contains("Stop it and quit?"), "{s}");
    insta::assert_snapshot!("overlay_confirm_quit_80x24", s);
}

#[test]
fn too_small_says_so() {
    let mut app = idle((50, 12));
    app.size = (50, 12);
    let s = screen(&app);
    assert!(s.contains("This terminal is 50×12: too small."), "{s}");
    assert!(s.contains("needs at least 60×18"));
    insta::assert_snapshot!("too_small_50x12", s);
}

/// Every colour a theme has, by role.
fn palette(t: &drivescope::ui::theme::Theme) -> Vec<ratatui::style::Color> {
    vec![
        t.fg,
        t.bg,
        t.dim,
        t.border,
        t.title,
        t.accent,
        t.highlight_fg,
        t.highlight_bg,
        t.read,
        t.write,
        t.p50,
        t.p99,
        t.p999,
        t.service,
        t.ok,
        t.warning,
        t.critical,
        t.throttle,
        t.quoted,
    ]
}

const THEMES: [&str; 4] = ["dark", "light", "high-contrast", "colorblind"];

fn themed(make: MakeApp, name: &str) -> App {
    let mut app = make(BIG);
    app.theme_idx = app
        .themes
        .iter()
        .position(|t| t.name == name)
        .unwrap_or_else(|| panic!("no built-in theme {name}"));
    app
}

#[test]
fn every_theme_renders_every_state() {
    use ratatui::style::Color;
    let states: [(&str, MakeApp); 6] = [
        ("empty", idle),
        ("running", running),
        ("no_smart", no_smart),
        ("throttling", throttling),
        ("error", errored),
        ("failing", failing),
    ];
    for name in THEMES {
        for (state, make) in states {
            let app = themed(make, name);
            let t = app.theme().clone();
            let what = format!("{name} theme, {state}");
            // Every cell is drawn in the theme's colours: nothing hard-coded leaks in.
            let allowed = palette(&t);
            for (fg, bg) in colour_grid(&app) {
                assert!(
                    fg == Color::Reset || allowed.contains(&fg),
                    "{what}: a cell in {fg:?}, not one of the theme's colours"
                );
                assert!(
                    bg == Color::Reset || allowed.contains(&bg),
                    "{what}: a background of {bg:?}, not one of the theme's colours"
                );
            }
            // The panels take the theme's background (where it has one).
            let grid = colour_grid(&app);
            let on_bg = grid.iter().filter(|(_, bg)| *bg == t.bg).count();
            assert!(
                on_bg * 2 > grid.len(),
                "{what}: {on_bg} of {} cells on the theme's background {:?}",
                grid.len(),
                t.bg
            );
            // Every panel's box in the border colour, its title in the title colour; the
            // panel in focus (the zoom key's, Throughput at start) in the accent.
            let boxes: &[&str] = &[
                "╭ drivescope",
                "╭ Throughput (IOPS)",
                "╭ Latency",
                "╭ Curve",
                "╭ Thermal & power",
                "╭ Kernel & host",
                "╭ Events",
            ];
            for b in boxes {
                let cells = cells_of(&app, b);
                assert_eq!(cells.len(), 1, "{what}: one {b:?} box");
                let border = if *b == "╭ Throughput (IOPS)" {
                    t.accent
                } else {
                    t.border
                };
                assert_eq!(cells[0][0].fg, border, "{what}: {b:?}'s border");
                assert_eq!(cells[0][2].fg, t.title, "{what}: {b:?}'s title");
            }
            // The figures in their roles' colours.
            let fg_of = |needle: &str, offset: usize| -> Vec<Color> {
                cells_of(&app, needle)
                    .iter()
                    .map(|c| c[offset].fg)
                    .collect()
            };
            match state {
                "running" => {
                    assert_eq!(fg_of("│read 409.0k IOPS", 6), [t.read], "{what}: read IOPS");
                    let legend = "p50  p99  p99.9";
                    assert_eq!(fg_of(legend, 0), [t.p50], "{what}: p50 legend");
                    assert_eq!(fg_of(legend, 5), [t.p99], "{what}: p99 legend");
                    assert_eq!(fg_of(legend, 10), [t.p999], "{what}: p99.9 legend");
                    assert_eq!(fg_of("running", 0)[0], t.ok, "{what}: the run state");
                }
                "throttling" => {
                    assert_eq!(
                        fg_of("┃ throttling at", 0),
                        [t.throttle],
                        "{what}: the throttle mark"
                    );
                }
                "error" => {
                    assert_eq!(fg_of("failed", 0)[0], t.critical, "{what}: the run state");
                }
                "failing" => {
                    assert_eq!(
                        fg_of("FAILED", 0)[..2],
                        [t.critical, t.critical],
                        "{what}: the header's and the thermal panel's verdict"
                    );
                }
                _ => {}
            }
        }
    }
}

#[test]
fn the_built_in_themes_look_different() {
    // Each pair of themes differs in its palette and on screen, in every state: a theme
    // that did not reach the panels would draw the same cells.
    let states: [MakeApp; 5] = [idle, running, no_smart, throttling, errored];
    for make in states {
        let grids: Vec<_> = THEMES
            .iter()
            .map(|n| colour_grid(&themed(make, n)))
            .collect();
        for i in 0..THEMES.len() {
            for j in i + 1..THEMES.len() {
                let differ = grids[i]
                    .iter()
                    .zip(&grids[j])
                    .filter(|(a, b)| a != b)
                    .count();
                assert!(
                    differ * 4 > grids[i].len(),
                    "{} and {} differ in only {differ} of {} cells",
                    THEMES[i],
                    THEMES[j],
                    grids[i].len()
                );
            }
        }
    }
}

#[test]
fn status_bar_hints_follow_the_run() {
    let s = screen(&idle(BIG));
    let status = s.lines().nth(39).unwrap();
    assert!(status.starts_with("enter start"), "{status}");
    let mut app = running(BIG);
    app.notice = None;
    let s = screen(&app);
    let status = s.lines().nth(39).unwrap();
    assert!(
        status.starts_with("space pause  x stop  n next step"),
        "{status}"
    );
    let mut app = running(BIG);
    send(&mut app, [Msg::Notice("snapshot saved".into())]);
    assert_eq!(screen(&app).lines().nth(39), Some("snapshot saved"));
}

#[test]
fn renders_at_every_size_without_panicking() {
    // Sizes around every layout threshold, and degenerate ones.
    const W: [u16; 14] = [0, 1, 10, 30, 59, 60, 61, 79, 80, 81, 109, 110, 111, 130];
    const H: [u16; 13] = [0, 1, 5, 17, 18, 19, 23, 24, 25, 33, 34, 35, 46];
    let states: Vec<MakeApp> = vec![idle, running, no_smart, throttling, errored];
    for (n, make) in states.into_iter().enumerate() {
        for w in W {
            for h in H {
                let app = make((w, h));
                let _ = screen(&app);
                if n == 1 {
                    for k in ['?', 'p', 't', 'q'] {
                        let mut a = app.clone();
                        send(&mut a, [key(k)]);
                        let _ = screen(&a);
                    }
                }
            }
        }
    }
}

#[test]
fn units_key_switches_the_throughput_chart_to_bandwidth() {
    let mut app = running(BIG);
    assert!(screen(&app).contains("Throughput (IOPS)"));
    send(&mut app, [key('u')]);
    let s = screen(&app);
    assert!(s.contains("Throughput (MB/s)"), "{s}");
    assert!(
        s.contains("│1.85 GB/s│") && s.contains("│0 MB/s"),
        "axis in the figures' units, spaced (peak 1.71 GB/s + headroom): {s}"
    );
    insta::assert_snapshot!("running_120x40_bandwidth", s);
    send(&mut app, [key('u')]);
    assert!(screen(&app).contains("Throughput (IOPS)"));
}

#[test]
fn the_throughput_panel_has_a_trim_line_only_in_a_run_that_trims() {
    let mut app = running(BIG);
    assert!(!screen(&app).contains("trim"), "no trims, no trim line");
    let mut r = interval(30, 0.0, 0.0, 70.0);
    (r.trim.ios, r.trim.bytes, r.trim_iops, r.trim_bw_bytes) =
        (36_000, 147_456_000, 36_000.0, 147_456_000.0);
    send(&mut app, [Msg::Interval(Box::new(r))]);
    let s = screen(&app);
    assert!(s.contains("36.0k IOPS"), "the trims' figure: {s}");
    let trim = app.theme().trim;
    assert!(
        colours_of(&app, "36.0k IOPS 147").contains(&trim),
        "in the trim colour: {s}"
    );
}

#[test]
fn non_finite_figures_do_not_break_any_panel() {
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -1.0, 0.0, 1e300] {
        let mut app = running(BIG);
        let mut r = interval(99, bad, bad, bad);
        r.read_bw_bytes = bad;
        r.end_s = bad;
        let mut t = telemetry(bad, bad, 2);
        t.sensors_c = vec![bad];
        t.warning_c = Some(bad);
        t.power_w = Some(bad);
        send(
            &mut app,
            [
                Msg::Interval(Box::new(r)),
                Msg::Telemetry(Box::new(t)),
                finished(
                    drivescope::app::CurvePoint {
                        series: String::new(),
                        target_iops: Some(bad),
                        iops: bad,
                        mean_us: bad,
                        p99_us: bad,
                        p999_us: bad,
                        response_mean_us: Some(bad),
                    },
                    "bad",
                    4,
                ),
            ],
        );
        for p in Panel::ALL {
            app.tab = p;
            for size in [BIG, SMALL] {
                app.size = size;
                let s = screen(&app);
                // No panel prints what it could not compute.
                let shown: Vec<&str> = s
                    .split(|c: char| !c.is_ascii_alphanumeric())
                    .filter(|w| {
                        matches!(w.to_ascii_lowercase().as_str(), "nan" | "inf" | "infinity")
                    })
                    .collect();
                assert!(
                    shown.is_empty(),
                    "{bad} in {p:?} at {size:?}: {shown:?}\n{s}"
                );
            }
        }
    }
}

#[test]
fn the_curve_draws_one_line_per_workload_with_a_legend() {
    // quick-look's shape: four workloads, one step each, then a second point of the first.
    let mut app = tab(running(BIG), Panel::Curve);
    for (series, iops, mean) in [
        ("randwrite 4KiB QD32×1", 300_000.0, 110.0),
        ("read 128KiB QD32×1", 25_000.0, 1200.0),
        ("write 128KiB QD32×1", 20_000.0, 1500.0),
    ] {
        send(
            &mut app,
            [finished(
                drivescope::app::CurvePoint {
                    series: series.into(),
                    target_iops: None,
                    iops,
                    mean_us: mean,
                    p99_us: mean * 3.0,
                    p999_us: mean * 6.0,
                    response_mean_us: None,
                },
                series,
                4,
            )],
        );
    }
    let s = screen(&app);
    for name in [
        "randread 4KiB QD32×1",
        "randwrite 4KiB QD32×1",
        "read 128KiB QD32×1",
        "write 128KiB QD32×1",
    ] {
        assert!(s.contains(&format!("● {name}")), "legend lacks {name}: {s}");
    }
    assert!(s.contains("6 steps done"), "{s}");
}

/// A sweep point far under its target: marked in the steps panel (its share, MISSED, the
/// warning colour) and counted on the curve; the points that reached theirs are not.
#[test]
fn a_step_that_missed_its_target_is_marked_in_the_steps_and_the_curve() {
    let missed = |app: &mut App| {
        send(
            app,
            [finished(
                drivescope::app::CurvePoint {
                    series: "randread 4KiB QD32×1".into(),
                    target_iops: Some(300_000.0),
                    iops: 120_000.0,
                    mean_us: 260.0,
                    p99_us: 900.0,
                    p999_us: 2000.0,
                    response_mean_us: Some(40_000.0),
                },
                "rate 30% of max",
                4,
            )],
        );
    };
    let mut app = tab(running(BIG), Panel::Steps);
    missed(&mut app);
    let s = screen(&app);
    let row = s
        .lines()
        .find(|l| l.contains("rate 30% of max") && l.contains("120.0k"))
        .unwrap_or_else(|| panic!("no missed step\n{s}"));
    assert!(row.contains("40% MISSED"), "{row}\n{s}");
    let t = app.theme();
    assert_eq!(
        cells_of(&app, "40% MISSED")[0][0].fg,
        t.warning,
        "its colour"
    );
    let reached = s
        .lines()
        .find(|l| l.contains("rate 90% of max"))
        .unwrap_or_else(|| panic!("no first step\n{s}"));
    assert!(
        reached.contains("99%") && !reached.contains("MISSED"),
        "{reached}"
    );
    let mut app = tab(running(BIG), Panel::Curve);
    let before = screen(&app);
    assert!(!before.contains("missed target"), "{before}");
    missed(&mut app);
    let s = screen(&app);
    assert!(s.contains("1 missed target ▄"), "{s}");
}

#[test]
fn a_soak_shows_its_figures_live() {
    use drivescope::thermal::{ThermalEvent, ThrottleSignal};
    // `throttling`: intervals end at 541 + i s; 400k IOPS (with a wobble) up to i = 39,
    // 240k from i = 40; the temperature rises to 52 + 49 × 0.45 = 74.05 °C.
    let mut app = throttling(SMALL);
    send(
        &mut app,
        [
            Msg::Thermal {
                t_s: 540.0,
                event: ThermalEvent::Start { temp_c: 52 },
            },
            Msg::Thermal {
                t_s: 575.0,
                event: ThermalEvent::Warning {
                    temp_c: 70,
                    threshold_c: 70,
                },
            },
            Msg::Thermal {
                t_s: 580.2,
                event: ThermalEvent::ThrottleStarted {
                    temp_c: Some(70),
                    signal: ThrottleSignal::Hctm { level: 1 },
                },
            },
        ],
    );
    let before: f64 = (0..40u64)
        .map(|i| 400_000.0 + ((i * 7919) % 13) as f64 * 1500.0)
        .sum::<f64>()
        / 40.0;
    let cliff = 240_000.0 / before;
    let s = screen(&tab(app, Panel::Thermal));
    for want in [
        "soak warning at 0:35 · throttled at 0:40 (70 °C)".to_string(),
        format!("     cliff {cliff:.2}× · peak 74 °C"),
    ] {
        assert!(s.contains(&want), "{want}\n{s}");
    }
}

#[test]
fn the_header_names_an_engine_other_than_io_uring_and_its_ring_options() {
    use drivescope::app::StepInfo;
    use drivescope::workload::{EngineKind, EngineOptions, SqPoll};
    let step = |engine, engine_options| {
        Msg::StepStarted(StepInfo {
            index: 0,
            count: 1,
            name: "randread 4KiB QD128 × 1".into(),
            phase_name: "randread".into(),
            started_s: 0.0,
            expected_s: Some(10.0),
            plan_expected_s: Some(10.0),
            rate_limited: false,
            target_iops: None,
            engine,
            engine_options,
        })
    };
    let mut app = idle(BIG);
    send(
        &mut app,
        [
            code(KeyCode::Enter),
            Msg::RunStarted {
                preset_id: "randread".into(),
                target: std::path::PathBuf::new(),
            },
            step(
                EngineKind::Nop,
                EngineOptions {
                    hipri: false,
                    sqpoll: Some(SqPoll {
                        idle_ms: 50,
                        cpu: Some(1),
                    }),
                },
            ),
        ],
    );
    let s = screen(&app);
    assert!(s.contains("drivescope · no target"), "{s}");
    assert!(s.contains("engine nop (sqpoll (idle 50ms, cpu 1))"), "{s}");
    // Plain io_uring says nothing of its engine.
    send(
        &mut app,
        [step(EngineKind::IoUring, EngineOptions::default())],
    );
    assert!(!screen(&app).contains("engine "), "{}", screen(&app));
    send(
        &mut app,
        [step(
            EngineKind::IoUring,
            EngineOptions {
                hipri: true,
                sqpoll: None,
            },
        )],
    );
    assert!(screen(&app).contains("engine io_uring (hipri)"));
}

#[test]
fn a_verified_run_heads_the_events_panel_with_its_integrity() {
    let totals = |checked, lost| drivescope::verify::VerifyTotals {
        blocks_written: 120_000,
        blocks_checked: checked,
        lost,
        ..Default::default()
    };
    // A run that does not verify shows no integrity at all.
    let plain = screen(&running(BIG));
    assert!(!plain.contains("integrity"), "{plain}");

    let mut app = running(BIG);
    send(&mut app, [Msg::Integrity(totals(80_000, 0))]);
    let s = screen(&app);
    assert!(
        s.contains("integrity written 120000 · verified 80000 · findings 0"),
        "{s}"
    );
    assert!(
        s.contains("no finding: every block read back as written"),
        "{s}"
    );
    let (ok, critical) = (app.theme().ok, app.theme().critical);
    let zero = &cells_of(&app, "findings 0")[0];
    assert_eq!(zero[9].fg, ok, "no finding in the good colour");

    send(
        &mut app,
        [
            Msg::Integrity(totals(90_000, 1)),
            Msg::IntegrityFinding(
                "lost block at offset 40960 (4096 bytes), sector 40960: expected generation 5, \
                 found lba 40960 id 1d generation 4"
                    .into(),
            ),
        ],
    );
    let s = screen(&app);
    assert!(s.contains("findings 1"), "{s}");
    assert!(s.contains("lost 1"), "{s}");
    assert!(s.contains("last  lost block at offset 40960"), "{s}");
    let one = &cells_of(&app, "lost 1")[0];
    assert_eq!(one[5].fg, critical, "a finding in the critical colour");
    insta::assert_snapshot!("verified_run_integrity_120x40", s);
    let small = screen(&tab(
        {
            let mut a = running(SMALL);
            send(&mut a, [Msg::Integrity(totals(90_000, 1))]);
            a
        },
        Panel::Events,
    ));
    assert!(small.contains("findings 1"), "{small}");
    assert!(!small.contains("no finding"), "{small}");
    insta::assert_snapshot!("verified_run_integrity_80x24", small);
}

#[test]
fn a_model_and_a_path_with_escape_sequences_are_shown_written_out() {
    let mut app = running(BIG);
    let evil = std::env::temp_dir().join("scratch\x1b]0;owned\x07.bin");
    let mut drive = micron();
    drive.model = Some("Micron\x1b[2J\u{202E}7400".into());
    send(
        &mut app,
        [
            Msg::Drive(drive),
            Msg::RunStarted {
                preset_id: "sweep".into(),
                target: evil,
            },
        ],
    );
    let s = screen(&app);
    assert!(s.contains("Micron\\e[2J\\u{202E}7400"), "{s}");
    assert!(s.contains("scratch\\e]0;owned\\x07.bin"), "{s}");
    assert!(!s.contains('\u{202E}') && !s.contains('\x1b'), "{s}");
}

#[test]
fn the_steps_panel_shows_each_done_steps_results_the_running_one_and_what_remains() {
    for size in [BIG, SMALL] {
        let app = tab(running(size), Panel::Steps);
        let s = screen(&app);
        assert!(s.contains("Steps: 3 of 12 done"), "{s}");
        // The first step: 891k IOPS of a 900k target, 350 µs mean, 1.05 ms p99.
        let first = s
            .lines()
            .find(|l| l.contains("rate 90% of max"))
            .unwrap_or_else(|| panic!("no first step\n{s}"));
        let mut figures = vec!["891.0k", "350 µs", "1.05 ms"];
        if size == SMALL {
            // The grid's cell has no room for the target and MB/s; the tab has.
            figures.extend(["900.0k", "3.65 GB/s"]);
        }
        for figure in figures {
            assert!(first.contains(figure), "{figure} in {first:?}\n{s}");
        }
        let running = s
            .lines()
            .find(|l| l.contains("▶4"))
            .unwrap_or_else(|| panic!("no running step\n{s}"));
        assert!(running.contains("4k randread QD"), "{running}");
        let t = app.theme();
        assert_eq!(cells_of(&app, "▶4")[0][0].fg, t.accent, "the running step");
        assert!(
            s.contains("rate 30% of max"),
            "the next step is in view\n{s}"
        );
        assert_eq!(
            Some(cells_of(&app, "rate 30% of max")[0][0].fg),
            t.dim_style().fg,
            "a step to come is dimmed"
        );
        let name = if size == BIG {
            "steps_120x40"
        } else {
            "steps_80x24"
        };
        insta::assert_snapshot!(name, s);
    }
}
