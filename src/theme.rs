//! Colour themes: the built-in ones (`themes/*.yaml`, embedded), user themes from
//! `~/.config/drivescope/themes/*.yaml`, and the errors of a bad theme file
//! (file:line:column; the dashboard keeps the default).

use std::path::Path;
use std::str::FromStr;

use ratatui::style::{Color, Modifier, Style};
use serde::Deserialize;
use thiserror::Error;

use crate::yaml_pos;

/// The embedded themes, default first.
pub const BUILTIN: &[(&str, &str)] = &[
    ("themes/dark.yaml", include_str!("../themes/dark.yaml")),
    ("themes/light.yaml", include_str!("../themes/light.yaml")),
    (
        "themes/high-contrast.yaml",
        include_str!("../themes/high-contrast.yaml"),
    ),
    (
        "themes/colorblind.yaml",
        include_str!("../themes/colorblind.yaml"),
    ),
];

/// A theme file that could not be used.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum ThemeError {
    #[error("{path}: cannot read: {message}")]
    Read { path: String, message: String },
    #[error("{path}:{line}:{column}: {message}")]
    Parse {
        path: String,
        line: usize,
        column: usize,
        message: String,
        /// The theme's `name`, when the file got as far as naming it.
        theme: Option<String>,
    },
    #[error("no theme '{name}'{}; known themes: {known}", suggestion.as_ref().map(|s| format!(" (did you mean `{s}`?)")).unwrap_or_default())]
    Unknown {
        name: String,
        known: String,
        suggestion: Option<String>,
    },
}

macro_rules! theme {
    ($( $field:ident: $doc:literal ),* $(,)?) => {
        /// The colour roles, as named in theme files.
        pub const ROLES: &[&str] = &[$(stringify!($field)),*];

        /// A palette: every colour the panels use, by role.
        #[derive(Debug, Clone, PartialEq)]
        pub struct Theme {
            pub name: String,
            $( #[doc = $doc] pub $field: Color, )*
        }

        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct ThemeFile {
            name: String,
            $( #[serde(default)] $field: Option<String>, )*
        }

        impl ThemeFile {
            /// The theme, or the role and text of the first colour that does not parse.
            fn resolve(self) -> Result<Theme, (&'static str, String)> {
                let colour = |role: &'static str, s: &str| {
                    Color::from_str(s.trim()).map_err(|_| (role, s.to_string()))
                };
                let base = Theme::fallback();
                Ok(Theme {
                    name: self.name,
                    $( $field: match &self.$field {
                        Some(s) => colour(stringify!($field), s)?,
                        None => base.$field,
                    }, )*
                })
            }
        }
    };
}

theme! {
    fg: "Text.",
    bg: "Background (`reset` keeps the terminal's).",
    dim: "Secondary text, axes, hints.",
    border: "Panel borders.",
    title: "Panel titles.",
    accent: "Figures that matter now.",
    highlight_fg: "Selected list entry, text.",
    highlight_bg: "Selected list entry, background.",
    read: "Reads.",
    write: "Writes.",
    trim: "Trims (an fio job's discards).",
    p50: "Median latency.",
    p99: "99th percentile.",
    p999: "99.9th percentile.",
    service: "Service latency beside response latency.",
    ok: "Good state.",
    warning: "Warning threshold and states.",
    critical: "Critical threshold and errors.",
    throttle: "Throttling marks.",
    quoted: "Quoted datasheet reference marks.",
}

impl Theme {
    /// Parses a theme file's text; `path` names it in errors.
    pub fn from_yaml(text: &str, path: &str) -> Result<Theme, ThemeError> {
        let err = |(line, column), message, theme| ThemeError::Parse {
            path: path.to_string(),
            line,
            column,
            message,
            theme,
        };
        let file = serde_yaml::from_str::<ThemeFile>(text)
            .map_err(|e| err(yaml_pos::of_error(&e), e.to_string(), None))?;
        let theme = Some(file.name.clone());
        file.resolve().map_err(|(role, value)| {
            let message = format!("{role}: '{value}' is not a colour (a name, #rrggbb or 0-255)");
            err(yaml_pos::of_value(text, role, &value), message, theme)
        })
    }

    /// The default theme, built in code so it exists whatever the files say.
    pub fn fallback() -> Theme {
        let rgb = Color::Rgb;
        Theme {
            name: "dark".into(),
            fg: rgb(0xd0, 0xd0, 0xd0),
            bg: Color::Reset,
            dim: rgb(0x7a, 0x7a, 0x7a),
            border: rgb(0x4e, 0x4e, 0x4e),
            title: rgb(0x87, 0xaf, 0xff),
            accent: rgb(0x5f, 0xd7, 0xff),
            highlight_fg: rgb(0, 0, 0),
            highlight_bg: rgb(0x5f, 0xaf, 0xff),
            read: rgb(0x5f, 0xaf, 0xff),
            write: rgb(0xff, 0xaf, 0x5f),
            trim: rgb(0x87, 0xd7, 0xaf),
            p50: rgb(0x87, 0xd7, 0x87),
            p99: rgb(0xff, 0xd7, 0x5f),
            p999: rgb(0xff, 0x87, 0x5f),
            service: rgb(0xaf, 0x87, 0xff),
            ok: rgb(0x87, 0xd7, 0x87),
            warning: rgb(0xff, 0xd7, 0x5f),
            critical: rgb(0xff, 0x5f, 0x5f),
            throttle: rgb(0xff, 0x5f, 0xd7),
            quoted: rgb(0xbc, 0xbc, 0xbc),
        }
    }

    /// No colour at all: every role the terminal's own (`--color never`, `NO_COLOR`); the
    /// selected entry is shown reversed ([`Theme::highlight`]).
    pub fn monochrome() -> Theme {
        let r = Color::Reset;
        Theme {
            name: "monochrome".into(),
            fg: r,
            bg: r,
            dim: r,
            border: r,
            title: r,
            accent: r,
            highlight_fg: r,
            highlight_bg: r,
            read: r,
            write: r,
            trim: r,
            p50: r,
            p99: r,
            p999: r,
            service: r,
            ok: r,
            warning: r,
            critical: r,
            throttle: r,
            quoted: r,
        }
    }

    /// The colour of series `i` of a chart with several (the curve's workloads): the
    /// theme's figure colours in turn.
    pub fn series(&self, i: usize) -> Color {
        let colours = [
            self.read,
            self.write,
            self.p50,
            self.service,
            self.p99,
            self.p999,
            self.throttle,
        ];
        colours[i % colours.len()]
    }

    pub fn base(&self) -> Style {
        Style::default().fg(self.fg).bg(self.bg)
    }

    pub fn dim_style(&self) -> Style {
        Style::default().fg(self.dim)
    }

    pub fn title_style(&self) -> Style {
        Style::default().fg(self.title).add_modifier(Modifier::BOLD)
    }

    /// The selected entry: its colours, or reversed when it has none of its own.
    pub fn highlight(&self) -> Style {
        let s = Style::default()
            .fg(self.highlight_fg)
            .bg(self.highlight_bg)
            .add_modifier(Modifier::BOLD);
        if self.highlight_fg == self.highlight_bg {
            s.add_modifier(Modifier::REVERSED)
        } else {
            s
        }
    }
}

/// `name` if it is one of `themes`, else why not, with the nearest name.
pub fn check_name(name: &str, themes: &[Theme]) -> Result<(), ThemeError> {
    if themes.iter().any(|t| t.name == name) {
        return Ok(());
    }
    let names = || themes.iter().map(|t| t.name.as_str());
    Err(ThemeError::Unknown {
        name: name.to_string(),
        known: names().collect::<Vec<_>>().join(", "),
        suggestion: crate::preset::nearest(name, names()),
    })
}

/// `name` is a built-in theme or one of `config_dir`'s `themes/` (`--theme`), else why not:
/// the error of the file that would have been that theme (it names it, or is `NAME.yaml`),
/// with its line and column, before "no theme".
pub fn check(name: &str, config_dir: Option<&Path>) -> Result<(), ThemeError> {
    let (themes, errors) = load_all(config_dir.map(|d| d.join("themes")).as_deref());
    check_name(name, &themes).map_err(|unknown| {
        errors
            .into_iter()
            .find(|e| would_be(e, name))
            .unwrap_or(unknown)
    })
}

/// Whether the file of error `e` was meant to be theme `name`.
fn would_be(e: &ThemeError, name: &str) -> bool {
    let (path, theme) = match e {
        ThemeError::Read { path, .. } => (path, None),
        ThemeError::Parse { path, theme, .. } => (path, theme.as_deref()),
        ThemeError::Unknown { .. } => return false,
    };
    theme == Some(name) || Path::new(path).file_stem().and_then(|s| s.to_str()) == Some(name)
}

/// The built-in themes, then the user's (a user theme with a built-in's name replaces
/// it), and the errors of files that could not be used.
pub fn load_all(user_dir: Option<&Path>) -> (Vec<Theme>, Vec<ThemeError>) {
    let mut themes = Vec::new();
    let mut errors = Vec::new();
    for (path, text) in BUILTIN {
        match Theme::from_yaml(text, path) {
            Ok(t) => themes.push(t),
            Err(e) => errors.push(e),
        }
    }
    if themes.first().map(|t| t.name.as_str()) != Some("dark") {
        themes.retain(|t| t.name != "dark");
        themes.insert(0, Theme::fallback());
    }
    if let Some(dir) = user_dir {
        let mut files: Vec<_> = match std::fs::read_dir(dir) {
            Ok(rd) => rd
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml")))
                .collect(),
            Err(_) => Vec::new(),
        };
        files.sort();
        for p in files {
            let shown = p.display().to_string();
            let text = match crate::user_file::read_text(&p, crate::user_file::MIB, "theme") {
                Ok(t) => t,
                Err(e) => {
                    errors.push(ThemeError::Read {
                        path: shown,
                        message: e.to_string(),
                    });
                    continue;
                }
            };
            match Theme::from_yaml(&text, &shown) {
                Ok(t) => match themes.iter_mut().find(|x| x.name == t.name) {
                    Some(slot) => *slot = t,
                    None => themes.push(t),
                },
                Err(e) => errors.push(e),
            }
        }
    }
    (themes, errors)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_parse_and_dark_is_first() {
        let (themes, errors) = load_all(None);
        assert!(errors.is_empty(), "{errors:?}");
        let names: Vec<_> = themes.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["dark", "light", "high-contrast", "colorblind"]);
        assert_eq!(
            themes[0],
            Theme::fallback(),
            "fallback() must equal dark.yaml"
        );
    }

    #[test]
    fn builtin_files_set_every_colour_themselves() {
        for (path, text) in BUILTIN {
            for role in ROLES {
                let set = text.lines().any(|l| l.starts_with(&format!("{role}:")));
                assert!(set, "{path} leaves {role} to the fallback");
            }
        }
    }

    #[test]
    fn bad_theme_gives_line_and_column() {
        let text = "name: mine\nfg: notacolour\n";
        let e = Theme::from_yaml(text, "/u/themes/mine.yaml").unwrap_err();
        let s = e.to_string();
        assert!(s.starts_with("/u/themes/mine.yaml:2:5:"), "{s}");
        assert!(s.contains("notacolour"), "{s}");
    }

    #[test]
    fn a_theme_refused_for_a_bad_colour_is_named_by_its_file_line_and_column() {
        let config = tempfile::tempdir().unwrap();
        let dir = config.path().join("themes");
        std::fs::create_dir(&dir).unwrap();
        // Named in the file, under another file name: found by its name.
        std::fs::write(dir.join("custom.yaml"), "name: mine\nfg: notacolour\n").unwrap();
        // Broken before its name is read: found by the file name.
        std::fs::write(dir.join("other.yaml"), "name: [other\n").unwrap();
        let e = check("mine", Some(config.path())).unwrap_err().to_string();
        let file = dir.join("custom.yaml").display().to_string();
        assert!(
            e.starts_with(&format!("{file}:2:5: fg: 'notacolour'")),
            "{e}"
        );
        let e = check("other", Some(config.path())).unwrap_err().to_string();
        let file = dir.join("other.yaml").display().to_string();
        assert!(e.starts_with(&format!("{file}:")), "{e}");
        // A theme no file meant is still "no theme".
        let e = check("nosuch", Some(config.path()))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("no theme 'nosuch'"), "{e}");
        assert!(check("dark", Some(config.path())).is_ok());
    }

    #[test]
    fn user_themes_load_replace_and_report_errors() {
        let dir = tempfile::tempdir().unwrap();
        let light = BUILTIN[1].1.replace("#1c1c1c", "#101010");
        std::fs::write(dir.path().join("light.yaml"), light).unwrap();
        let mine = BUILTIN[0].1.replace("name: dark", "name: mine");
        std::fs::write(dir.path().join("mine.yaml"), mine).unwrap();
        std::fs::write(dir.path().join("broken.yaml"), "name: broken\nfg: [\n").unwrap();
        std::fs::write(dir.path().join("notes.txt"), "ignored").unwrap();
        let (themes, errors) = load_all(Some(dir.path()));
        assert_eq!(themes.len(), 5);
        let light = themes.iter().find(|t| t.name == "light").unwrap();
        assert_eq!(light.fg, Color::Rgb(0x10, 0x10, 0x10));
        assert!(themes.iter().any(|t| t.name == "mine"));
        assert_eq!(errors.len(), 1);
        assert!(
            errors[0].to_string().contains("broken.yaml:"),
            "{}",
            errors[0]
        );
    }
}
