//! Shell completions and man pages, made from the clap definitions themselves
//! (clap_complete, clap_mangen): what `drivescope completions` and `drivescope man` print
//! and what the Debian package ships, so they can never describe another command line.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::CommandFactory;
use clap_complete::Shell;
use thiserror::Error;

use super::Cli;

/// Why a man page could not be made.
#[derive(Debug, Error)]
pub enum ManError {
    #[error("no command `{0}` (the commands: {1})")]
    NoSuchCommand(String, String),
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// The command line as the completions see it: `--preset` offers the built-in presets
/// and `--theme` the built-in themes (values only offered, never enforced: a path is still
/// taken), `--target` completes paths.
fn for_completion() -> clap::Command {
    // The built-in ids only: a script made for a package must not carry the presets of
    // whoever built it.
    let presets: Vec<String> = crate::preset::BUILTIN_FILES
        .iter()
        .map(|(id, _)| id.to_string())
        .collect();
    let themes: Vec<String> = crate::theme::BUILTIN
        .iter()
        .filter_map(|(path, _)| {
            Path::new(path)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
        })
        .collect();
    let offer = |values: &[String]| {
        let values = values.to_vec();
        move |a: clap::Arg| {
            a.value_parser(clap::builder::PossibleValuesParser::new(values.clone()))
                .hide_possible_values(true)
        }
    };
    let with_values = |c: clap::Command| {
        let mut c = c;
        if c.get_arguments().any(|a| a.get_id() == "preset") {
            c = c.mut_arg("preset", offer(&presets));
        }
        if c.get_arguments().any(|a| a.get_id() == "theme") {
            c = c.mut_arg("theme", offer(&themes));
        }
        if c.get_arguments().any(|a| a.get_id() == "target") {
            c = c.mut_arg("target", |a| a.value_hint(clap::ValueHint::AnyPath));
        }
        c
    };
    let mut cmd = with_values(Cli::command());
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    for name in names {
        cmd = cmd.mut_subcommand(name, with_values);
    }
    cmd
}

/// The completion script for `shell`.
pub fn completions(shell: Shell) -> Vec<u8> {
    let mut cmd = for_completion();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, "drivescope", &mut out);
    out
}

/// The subcommands that have a page of their own (`drivescope-run.1`, …), hidden ones left
/// out.
fn pages() -> Vec<(String, clap::Command)> {
    let mut cmd = Cli::command();
    cmd.build();
    let mut pages = vec![("drivescope".to_string(), cmd.clone())];
    for sub in cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
    {
        let name = format!("drivescope-{}", sub.get_name());
        pages.push((name.clone(), sub.clone().name(name)));
    }
    pages
}

/// The man page (roff) of drivescope, or of one of its commands.
pub fn man(command: Option<&str>) -> Result<Vec<u8>, ManError> {
    let wanted = command.map_or("drivescope".to_string(), |c| format!("drivescope-{c}"));
    let all = pages();
    let Some((_, cmd)) = all.iter().find(|(n, _)| *n == wanted) else {
        let names: Vec<&str> = all
            .iter()
            .filter_map(|(n, _)| n.strip_prefix("drivescope-"))
            .collect();
        return Err(ManError::NoSuchCommand(
            command.unwrap_or_default().to_string(),
            names.join(", "),
        ));
    };
    let mut out = Vec::new();
    render(cmd, &mut out).map_err(|source| ManError::Write {
        path: PathBuf::from("-"),
        source,
    })?;
    Ok(out)
}

fn render(cmd: &clap::Command, out: &mut Vec<u8>) -> std::io::Result<()> {
    let man = clap_mangen::Man::new(cmd.clone())
        .section("1")
        .manual("drivescope manual")
        .source(format!("drivescope {}", env!("CARGO_PKG_VERSION")));
    man.render(out)?;
    match cmd.get_name() {
        "drivescope" => out.write_all(exit_status(super::EXIT_CODES).as_bytes())?,
        "drivescope-smart" => out.write_all(exit_status(super::SMART_EXIT_CODES).as_bytes())?,
        _ => {}
    }
    Ok(())
}

/// Exit codes ([`super::EXIT_CODES`], [`super::SMART_EXIT_CODES`]) as roff.
fn exit_status(codes: &[(&str, &str)]) -> String {
    let mut s = String::from(".SH \"EXIT STATUS\"\n");
    for (code, what) in codes {
        let what = what.replace('-', "\\-").replace('`', "");
        s.push_str(&format!(".TP\n{code}\n{what}\n"));
    }
    s
}

/// Every page into `dir` as `NAME.1`, each made new (an existing file of that name is
/// never replaced); the paths written.
pub fn write_man_pages(dir: &Path) -> Result<Vec<PathBuf>, ManError> {
    let folder = crate::owned::Folder::open(dir).map_err(|e| ManError::Write {
        path: dir.to_path_buf(),
        source: std::io::Error::other(e),
    })?;
    let mut written = Vec::new();
    for (name, cmd) in pages() {
        let file = format!("{name}.1");
        let path = dir.join(&file);
        let mut text = Vec::new();
        render(&cmd, &mut text).map_err(|source| ManError::Write {
            path: path.clone(),
            source,
        })?;
        folder
            .create(file.as_ref(), |w| w.write_all(&text))
            .map_err(|e| ManError::Write {
                path: path.clone(),
                source: match e {
                    crate::owned::OwnedError::Exists { .. } => {
                        std::io::ErrorKind::AlreadyExists.into()
                    }
                    e => std::io::Error::other(e),
                },
            })?;
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shell_gets_a_script_that_names_the_commands_and_presets() {
        for shell in [
            Shell::Bash,
            Shell::Zsh,
            Shell::Fish,
            Shell::Elvish,
            Shell::PowerShell,
        ] {
            let s = String::from_utf8(completions(shell)).unwrap();
            assert!(s.contains("drivescope"), "{shell}");
            assert!(s.contains("presets"), "{shell}: no subcommand");
            assert!(s.contains("fio-job"), "{shell}: no run option");
        }
        let bash = String::from_utf8(completions(Shell::Bash)).unwrap();
        let first = crate::preset::BUILTIN_FILES[0].0;
        assert!(bash.contains(first), "preset ids offered");
        assert!(bash.contains("high-contrast"), "theme names offered");
    }

    #[test]
    fn man_pages_for_the_tool_and_each_visible_command() {
        let top = String::from_utf8(man(None).unwrap()).unwrap();
        assert!(
            top.starts_with(".ie") || top.contains(".TH drivescope 1"),
            "{top}"
        );
        assert!(top.contains("EXIT STATUS") && top.contains("141"));
        let smart = String::from_utf8(man(Some("smart")).unwrap()).unwrap();
        assert!(
            smart.contains(".SH \"EXIT STATUS\"\n.TP\n0\n")
                && smart.contains("bit 3 (8)\nSMART status FAILING"),
            "smart states its own exit status: {smart}"
        );
        let run = String::from_utf8(man(Some("run")).unwrap()).unwrap();
        assert!(run.contains("drivescope\\-run") && run.contains("fio\\-job"));
        assert!(matches!(
            man(Some("agent")),
            Err(ManError::NoSuchCommand(..))
        ));
        let dir = tempfile::tempdir().unwrap();
        let paths = write_man_pages(dir.path()).unwrap();
        assert!(paths.iter().any(|p| p.ends_with("drivescope-run.1")));
        // Made new: a second write replaces nothing.
        assert!(matches!(
            write_man_pages(dir.path()),
            Err(ManError::Write { .. })
        ));
    }
}
