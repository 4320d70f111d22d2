//! Windows drawn over the panels: help (every key, from the keymap), the preset and target
//! pickers, the theme picker and yes/no confirmations.

use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Clear, List, ListItem, ListState, Paragraph, Row, Table, Wrap};
use ratatui::Frame;

use crate::app::{Action, App, Confirm, Overlay, TargetEntry, TargetKind};
use crate::theme::Theme;
use crate::ui::format;
use crate::ui::widgets::{bold, panel_block};

/// A centred rectangle of at most `w`×`h` inside `area`.
fn centred(area: Rect, w: u16, h: u16) -> Rect {
    let [r] = Layout::horizontal([Constraint::Length(w.min(area.width))])
        .flex(Flex::Center)
        .areas(area);
    let [r] = Layout::vertical([Constraint::Length(h.min(area.height))])
        .flex(Flex::Center)
        .areas(r);
    r
}

pub fn render(app: &App, f: &mut Frame, area: Rect) {
    match &app.overlay {
        None => {}
        Some(Overlay::Help { scroll }) => help(app, f, area, *scroll),
        Some(Overlay::Presets) => presets(app, f, area),
        Some(Overlay::Targets { typing }) => targets(app, f, area, typing.as_deref()),
        Some(Overlay::Themes { .. }) => themes(app, f, area),
        Some(Overlay::Confirm(c)) => confirm(app, f, area, *c),
        // A note is written on the status line.
        Some(Overlay::Note { .. }) => {}
    }
}

fn keys(app: &App, a: Action) -> String {
    app.keymap.describe(a)
}

fn hint(app: &App, pairs: &[(Action, &str)]) -> Line<'static> {
    let pairs: Vec<(String, &str)> = pairs.iter().map(|(a, w)| (keys(app, *a), *w)).collect();
    hint_line(app, &pairs)
}

/// A picker's footer: only the keys that type no character (every other one is filter
/// text while a picker is open); an action with none is left out.
fn picker_hint(app: &App, pairs: &[(Action, &str)]) -> Line<'static> {
    let pairs: Vec<(String, &str)> = pairs
        .iter()
        .map(|&(a, w)| {
            // Back clears a filter before it closes the picker.
            let w = if a == Action::Back && !app.filter.is_empty() {
                "clear"
            } else {
                w
            };
            (app.keymap.describe_command(a), w)
        })
        .filter(|(k, _)| !k.is_empty())
        .collect();
    hint_line(app, &pairs)
}

fn hint_line(app: &App, pairs: &[(String, &str)]) -> Line<'static> {
    let t = app.theme();
    let mut spans = Vec::new();
    for (i, (k, what)) in pairs.iter().enumerate() {
        if i > 0 {
            spans.push(Span::styled(" · ", t.dim_style()));
        }
        spans.push(Span::styled(k.clone(), Style::default().fg(t.accent)));
        spans.push(Span::styled(format!(" {what}"), t.dim_style()));
    }
    Line::from(spans)
}

fn help(app: &App, f: &mut Frame, area: Rect, scroll: u16) {
    let t = app.theme();
    let actions = app.help_actions();
    let r = centred(area, 100, app.help_height());
    f.render_widget(Clear, r);
    let inner = panel_block("", t).inner(r);
    let [table_area, foot] =
        Layout::vertical([Constraint::Min(1), Constraint::Length(2)]).areas(inner);
    // The last page shows the last key: scrolling stops there.
    let shown = usize::from(table_area.height).max(1);
    let first = (scroll as usize).min(actions.len().saturating_sub(shown));
    let last = (first + shown).min(actions.len());
    let title = format!(
        "Keys {}-{last} of {} (from keys.yaml, else the defaults)",
        first + 1,
        actions.len()
    );
    let block = panel_block(&title, t);
    f.render_widget(block, r);
    let key_width = actions
        .iter()
        .map(|a| keys(app, *a).chars().count())
        .max()
        .unwrap_or(0)
        .clamp(6, 24) as u16;
    let rows: Vec<Row> = actions
        .iter()
        .skip(first)
        .map(|a| {
            Row::new(vec![
                Cell::from(Span::styled(keys(app, *a), Style::default().fg(t.accent))),
                Cell::from(Span::styled(a.name(), t.dim_style())),
                Cell::from(Span::styled(a.description(), Style::default().fg(t.fg))),
            ])
        })
        .collect();
    f.render_widget(
        Table::new(
            rows,
            [
                Constraint::Length(key_width),
                Constraint::Length(12),
                Constraint::Min(10),
            ],
        )
        .style(t.base()),
        table_area,
    );
    let file = app
        .keys_file
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "keys.yaml (no config folder: no HOME)".into());
    let scroll_keys = [Action::Up, Action::Down, Action::PageUp, Action::PageDown]
        .iter()
        .filter_map(|a| app.keymap.keys(*a).first().map(|k| k.to_string()))
        .collect::<Vec<_>>()
        .join(" ");
    f.render_widget(
        Paragraph::new(Line::styled(
            format!(
                "{scroll_keys} scroll · {} closes · override any of these in {file}",
                keys(app, Action::Back)
            ),
            t.dim_style(),
        ))
        .wrap(Wrap { trim: true }),
        foot,
    );
}

/// A picker's title: its name, and the filter typed with how many rows it kept.
fn picker_title(app: &App, name: &str, kept: usize, all: usize) -> String {
    if app.filter.is_empty() {
        format!("{name} (type to filter)")
    } else {
        format!(
            "{name}: filter '{}' · {kept} of {all}",
            format::shown(&app.filter)
        )
    }
}

/// The position of `sel` among the rows kept.
fn shown_at(sel: usize, rows: &[usize]) -> usize {
    rows.iter().position(|r| *r == sel).unwrap_or(0)
}

/// A picker's list of `items` in `area`, the `sel`th highlighted.
fn picker_list(f: &mut Frame, items: Vec<ListItem>, sel: usize, area: Rect, t: &Theme) {
    let len = items.len();
    let mut st =
        ListState::default().with_selected((len > 0).then_some(sel.min(len.saturating_sub(1))));
    let list = List::new(items)
        .highlight_style(t.highlight())
        .highlight_symbol("▶ ");
    f.render_stateful_widget(list.style(t.base()), area, &mut st);
}

/// The preset list's width in a picker body `body` columns wide.
fn preset_list_width(body: u16) -> u16 {
    (body / 3).clamp(18, 34)
}

/// The names of the presets `rows` as a list `list_w` wide shows them: the highlight
/// symbol takes two columns, and a longer name keeps the words that tell it from the
/// others ([`format::fit_name`]).
fn shown_names(app: &App, rows: &[usize], list_w: u16) -> Vec<String> {
    let name_w = usize::from(list_w.saturating_sub(2));
    let all: Vec<String> = app.presets.iter().map(|p| format::shown(&p.name)).collect();
    let others: Vec<&str> = all.iter().map(String::as_str).collect();
    rows.iter()
        .filter_map(|&i| all.get(i))
        .map(|n| format::fit_name(n, &others, name_w))
        .collect()
}

/// The names the preset picker shows for the rows its filter keeps, on a terminal
/// `width` columns wide.
pub fn preset_names(app: &App, width: u16) -> Vec<String> {
    // The picker's window (at most 100 columns) less its two borders.
    let body = width.min(PICKER_WIDTH).saturating_sub(2);
    shown_names(app, &app.preset_rows(), preset_list_width(body))
}

/// The widest a picker's window is.
const PICKER_WIDTH: u16 = 100;

/// A picker's window, `height` lines high, cleared and framed under `title`: its list, a
/// band of `band` lines under it, and its foot line.
fn picker_window(
    f: &mut Frame,
    area: Rect,
    height: u16,
    title: String,
    band: u16,
    t: &Theme,
) -> [Rect; 3] {
    let r = centred(area, PICKER_WIDTH, height);
    f.render_widget(Clear, r);
    let block = panel_block(title, t);
    let inner = block.inner(r);
    f.render_widget(block, r);
    Layout::vertical([
        Constraint::Min(1),
        Constraint::Length(band),
        Constraint::Length(1),
    ])
    .areas(inner)
}

fn presets(app: &App, f: &mut Frame, area: Rect) {
    let t = app.theme();
    let quit = if app.run.state.is_active() {
        "stop"
    } else {
        "quit"
    };
    let rows = app.preset_rows();
    let title = picker_title(app, "Presets", rows.len(), app.presets.len());
    // Two lines for the target: a refusal's reason wraps instead of being cut.
    let [body, target_line, foot] = picker_window(f, area, 22, title, 2, t);
    if app.presets.is_empty() {
        f.render_widget(
            Paragraph::new(Line::styled(
                "no presets were given to the dashboard",
                t.dim_style(),
            )),
            body,
        );
    } else {
        let list_w = preset_list_width(body.width);
        let [list_area, detail] =
            Layout::horizontal([Constraint::Length(list_w), Constraint::Min(10)])
                .spacing(1)
                .areas(body);
        let items: Vec<ListItem> = shown_names(app, &rows, list_w)
            .into_iter()
            .map(|n| ListItem::new(Line::raw(n)))
            .collect();
        picker_list(f, items, shown_at(app.preset_sel, &rows), list_area, t);
        if rows.is_empty() {
            let none = format!("no preset matches '{}'", format::shown(&app.filter));
            let back = "backspace or esc: the whole list";
            let lines = vec![
                Line::styled(none, t.dim_style()),
                Line::styled(back, t.dim_style()),
            ];
            f.render_widget(Paragraph::new(lines), detail);
        } else if let Some(p) = app.selected_preset() {
            let mut lines = vec![
                Line::styled(format::shown(&p.name), t.title_style()),
                Line::from(vec![
                    Span::styled("id ", t.dim_style()),
                    Span::styled(p.id.clone(), Style::default().fg(t.accent)),
                    Span::styled(" (drivescope run --preset ", t.dim_style()),
                    Span::styled(p.id.clone(), t.dim_style()),
                    Span::styled(")", t.dim_style()),
                ]),
                Line::from(vec![
                    Span::styled("estimated time ", t.dim_style()),
                    Span::styled(p.estimate.clone(), Style::default().fg(t.accent)),
                ]),
            ];
            // The `*` explained where it is shown, as `presets list` explains it.
            if p.estimate.ends_with('*') {
                lines.push(Line::styled(
                    crate::plan::estimate_footnote(crate::plan::ASSUMED_BYTES_PER_S),
                    t.dim_style(),
                ));
            }
            lines.extend([
                Line::raw(""),
                Line::styled(format::shown(&p.description), Style::default().fg(t.fg)),
                Line::raw(""),
                Line::styled("phases", t.dim_style()),
            ]);
            for (i, ph) in p.phases.iter().enumerate() {
                lines.push(Line::styled(
                    format!(" {}. {ph}", i + 1),
                    Style::default().fg(t.fg),
                ));
            }
            f.render_widget(Paragraph::new(lines).wrap(Wrap { trim: true }), detail);
        }
    }
    let labels: Vec<String> = app
        .table_drives()
        .iter()
        .map(|d| format::shown(&d.label))
        .collect();
    let fio_job = app.selected_preset().is_some_and(|p| p.fio_job.is_some());
    let target = match app.selected_target() {
        // A job file names its own targets (a device it writes is confirmed as the target).
        _ if fio_job && labels.is_empty() => Line::from(vec![
            Span::styled("targets ", t.dim_style()),
            Span::styled("the job file's own", Style::default().fg(t.fg)),
        ]),
        _ if !labels.is_empty() => Line::from(vec![
            Span::styled(crate::app::drives::count(labels.len()), t.dim_style()),
            Span::styled(labels.join(", "), Style::default().fg(t.fg)),
        ]),
        Some(tg) => {
            let mut s = vec![
                Span::styled("target ", t.dim_style()),
                Span::styled(format::shown_path(&tg.path), Style::default().fg(t.fg)),
            ];
            if let Some(reason) = &tg.safety {
                s.push(Span::styled(
                    format!("  writes refused: {}", format::shown(&reason.to_string())),
                    Style::default().fg(t.warning),
                ));
            } else if let Some(new) = creates_text(tg) {
                s.push(Span::styled(
                    format!("  {new}"),
                    Style::default().fg(t.accent),
                ));
            }
            Line::from(s)
        }
        None => Line::styled("no target: choose one", Style::default().fg(t.warning)),
    };
    f.render_widget(
        Paragraph::new(target).wrap(Wrap { trim: true }),
        target_line,
    );
    f.render_widget(
        Paragraph::new(picker_hint(
            app,
            &[
                (Action::Select, "start"),
                (Action::Up, "move"),
                (Action::Targets, "target"),
                (Action::Back, "close"),
                (Action::Help, "help"),
                (Action::Interrupt, quit),
            ],
        )),
        foot,
    );
}

/// What starting a run does to a file that is not there yet: `new test file of 1 GiB,
/// created on Enter`; `None` for a target that exists.
pub(crate) fn creates_text(tg: &TargetEntry) -> Option<String> {
    tg.creates.then(|| match tg.size {
        Some(b) => format!("new test file of {}, created on Enter", format::size(b)),
        None => "new test file, created on Enter".to_string(),
    })
}

/// A target's size: a file's in the binary units it was given (`1 GiB`), a device's
/// capacity as vendors print it (decimal, the binary size beside when the column has room).
fn target_size(tg: &TargetEntry, wide: bool) -> String {
    match (tg.size, tg.kind) {
        (None, _) => "-".into(),
        (Some(b), TargetKind::File) => format::size(b),
        (Some(b), _) if wide => format::capacity(b),
        (Some(b), _) => format::capacity_decimal(b),
    }
}

/// The widths of the target table's name and path columns in a body `body` columns wide.
fn target_name_widths(body: u16) -> (usize, usize) {
    if body >= 90 {
        (22, 18)
    } else {
        (18, 14)
    }
}

/// The name and path of the targets `rows` as the table shows them: a longer name keeps
/// the words that tell it from the others ([`format::fit_name`]), a longer path its end.
fn shown_targets(
    app: &App,
    rows: &[usize],
    label_w: usize,
    path_w: usize,
) -> Vec<(String, String)> {
    let all: Vec<String> = app
        .targets
        .iter()
        .map(|t| format::shown(&t.label))
        .collect();
    let others: Vec<&str> = all.iter().map(String::as_str).collect();
    rows.iter()
        .filter_map(|&i| Some((all.get(i)?, app.targets.get(i)?)))
        .map(|(label, t)| {
            (
                format::fit_name(label, &others, label_w),
                format::cut_start(&format::shown_path(&t.path), path_w),
            )
        })
        .collect()
}

/// The name and path the target picker shows for each row its filter keeps, on a
/// terminal `width` columns wide.
pub fn target_names(app: &App, width: u16) -> Vec<(String, String)> {
    let body = width.min(PICKER_WIDTH).saturating_sub(2);
    let (label_w, path_w) = target_name_widths(body);
    shown_targets(app, &app.target_rows(), label_w, path_w)
}

/// The most lines a target's safety check takes in the table.
const ROW_LINES: usize = 3;

fn targets(app: &App, f: &mut Frame, area: Rect, typing: Option<&str>) {
    let t = app.theme();
    let kept = app.target_rows();
    let title = picker_title(app, "Targets", kept.len(), app.targets.len());
    let [body, prompt, foot] = picker_window(f, area, 18, title, 3, t);
    // The columns: the name, the path (identical drives differ there), kind and size,
    // then the safety check, wrapped over as many lines as it needs.
    let wide = body.width >= 90;
    let (label_w, path_w) = target_name_widths(body.width);
    let (kind_w, size_w) = (7, if wide { 20 } else { 9 });
    let mut names = shown_targets(app, &kept, label_w, path_w).into_iter();
    // Two columns of highlight symbol and one between each of the five columns.
    let safety_w =
        usize::from(body.width).saturating_sub(2 + 4 + label_w + path_w + kind_w + size_w);
    let rows: Vec<Row> = kept
        .iter()
        .filter_map(|&i| app.targets.get(i))
        .map(|tg| {
            let kind = match tg.kind {
                TargetKind::File => "file",
                TargetKind::BlockDevice => "device",
                TargetKind::NvmeGeneric => "generic",
                TargetKind::None => "none",
            };
            let (safety, colour) = match (&tg.safety, tg.needs_typed_confirmation()) {
                (Some(reason), _) => (
                    format!("writes refused: {}", format::shown(&reason.to_string())),
                    t.warning,
                ),
                (None, true) => (
                    "writable after typing its name: destroys data".to_string(),
                    t.critical,
                ),
                // The size is in its column; the line below the table says it whole.
                (None, false) if tg.creates => (
                    "writable: a new file, created on Enter".to_string(),
                    t.accent,
                ),
                (None, false) => ("writable".to_string(), t.ok),
            };
            // At most three lines in the table (the last ending in `…` when there is
            // more); the picked target's whole check is below the table.
            let mut safety = format::wrapped(&safety, safety_w.max(10));
            if safety.len() > ROW_LINES {
                safety.truncate(ROW_LINES);
                if let Some(l) = safety.last_mut() {
                    *l = format::cut_end(&format!("{l} …"), safety_w.max(10));
                }
            }
            let height = u16::try_from(safety.len()).unwrap_or(u16::MAX);
            let (label, path) = names.next().unwrap_or_default();
            Row::new(vec![
                Cell::from(label),
                Cell::from(path),
                Cell::from(kind),
                Cell::from(Line::raw(target_size(tg, wide)).right_aligned()),
                Cell::from(ratatui::text::Text::from(
                    safety
                        .into_iter()
                        .map(|l| Line::styled(l, Style::default().fg(colour)))
                        .collect::<Vec<_>>(),
                )),
            ])
            .height(height)
        })
        .collect();
    let mut st = ratatui::widgets::TableState::default()
        .with_selected((!kept.is_empty()).then_some(shown_at(app.target_sel, &kept)));
    let w = |n: usize| Constraint::Length(u16::try_from(n).unwrap_or(u16::MAX));
    f.render_stateful_widget(
        Table::new(
            rows,
            [
                w(label_w),
                w(path_w),
                w(kind_w),
                w(size_w),
                Constraint::Min(10),
            ],
        )
        .header(
            Row::new(vec!["target", "path", "kind", "size", "safety check"])
                .style(t.dim_style().add_modifier(Modifier::BOLD)),
        )
        .row_highlight_style(t.highlight())
        .highlight_symbol("▶ ")
        .style(t.base()),
        body,
        &mut st,
    );
    let prompt_lines = match (typing, app.selected_target()) {
        (Some(typed), Some(tg)) => vec![
            Line::styled(
                format!(
                    "{} will be overwritten. Type {} and Enter to allow it:",
                    format::shown_path(&tg.path),
                    tg.confirm_name()
                ),
                bold(t.critical),
            ),
            Line::from(vec![
                Span::styled("> ", Style::default().fg(t.accent)),
                Span::styled(format!("{typed}▏"), Style::default().fg(t.fg)),
            ]),
        ],
        (_, Some(tg)) => {
            let mut l = vec![Span::styled(format::shown_path(&tg.path), t.dim_style())];
            if let Some(reason) = &tg.safety {
                l.push(Span::styled(
                    format!(": writes refused: {}", format::shown(&reason.to_string())),
                    Style::default().fg(t.warning),
                ));
            } else if let Some(new) = creates_text(tg) {
                l.push(Span::styled(
                    format!(": not there yet: {new}"),
                    Style::default().fg(t.accent),
                ));
            }
            vec![Line::from(l)]
        }
        (_, None) => vec![Line::styled(
            "no targets were given to the dashboard",
            t.dim_style(),
        )],
    };
    f.render_widget(
        Paragraph::new(prompt_lines).wrap(Wrap { trim: true }),
        prompt,
    );
    f.render_widget(
        Paragraph::new(picker_hint(
            app,
            &[
                (Action::Select, "choose"),
                (Action::Back, "close"),
                (Action::Help, "help"),
            ],
        )),
        foot,
    );
}

fn themes(app: &App, f: &mut Frame, area: Rect) {
    let t = app.theme();
    let r = centred(area, 44, app.themes.len() as u16 + 4);
    f.render_widget(Clear, r);
    let kept = app.theme_rows();
    let block = panel_block(picker_title(app, "Theme", kept.len(), app.themes.len()), t);
    let inner = block.inner(r);
    f.render_widget(block, r);
    let [list_area, foot] =
        Layout::vertical([Constraint::Min(1), Constraint::Length(1)]).areas(inner);
    let items: Vec<ListItem> = kept
        .iter()
        .filter_map(|&i| app.themes.get(i))
        .map(|th| ListItem::new(format::shown(&th.name)))
        .collect();
    picker_list(f, items, shown_at(app.theme_idx, &kept), list_area, t);
    f.render_widget(
        Paragraph::new(picker_hint(
            app,
            &[(Action::Select, "keep"), (Action::Back, "undo")],
        )),
        foot,
    );
}

fn confirm(app: &App, f: &mut Frame, area: Rect, c: Confirm) {
    let t = app.theme();
    let r = centred(area, 58, 6);
    f.render_widget(Clear, r);
    let block = panel_block("Confirm", t);
    let inner = block.inner(r);
    f.render_widget(block, r);
    // Stopping one drive names it (its label and path), so the right one is stopped.
    let question = match c {
        Confirm::StopDrive(i) => match app.table_drives().get(i) {
            Some(d) => {
                let path = format::shown_path(&d.target.path);
                let label = format::shown(&d.label);
                let named = if label == path {
                    path
                } else {
                    format!("{label} ({path})")
                };
                format!("Stop drive {named}? The other drives go on.")
            }
            None => c.question().to_string(),
        },
        Confirm::Quit if !app.run.state.is_active() => {
            "The run has ended; its session is saved. Quit?".to_string()
        }
        _ => c.question().to_string(),
    };
    let lines = vec![
        Line::styled(question, bold(t.fg)),
        Line::raw(""),
        hint(app, &[(Action::Yes, "yes"), (Action::No, "no")]),
    ];
    f.render_widget(Paragraph::new(lines).wrap(Wrap { trim: true }), inner);
}
