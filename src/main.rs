//! The `drivescope` binary: parse the command line, run the command, report errors as one
//! line on stderr with a non-zero exit code (2 for bad input or setup failures).
//!
//! Exit codes (`drivescope smart` has its own: smartctl's bit mask, `cli::SMART_EXIT_CODES`):
//! 0 done; 1 the run saw I/O errors, or its verify state could not be saved, or a
//! `compare --baseline` found a step that regressed;
//! 2 bad input or a failed setup;
//! 3 a verified run (`--verify`, `drivescope verify`) read back wrong data;
//! 128 + N stopped by signal N (130 SIGINT, 143 SIGTERM, 129 SIGHUP);
//! 141 (128 + SIGPIPE) its output was closed (a pipe's reader gone, a terminal gone): a
//! run stopped with its session saved, as on a signal; any other command ended its output
//! there (what it writes to files it still wrote). Never a panic: a shell's pipeline sees
//! what it sees of a C program killed by SIGPIPE, and `set -o pipefail` still learns that
//! not all was shown.

#![deny(clippy::undocumented_unsafe_blocks)]
#![deny(
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::unwrap_used,
    clippy::panic
)]

use std::fmt::Display;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use drivescope::cli::{Cli, Command};
use drivescope::commands;
use drivescope::outcome::RunOutcome;
use drivescope::run::{Finished, RunError};
use drivescope::tui::Exit;

/// Signals that stop a headless run: the first asks for a clean stop (summary printed,
/// session saved), a second of the same kind ends the process at once, and the child
/// process groups still running (fio, ssh) with it.
fn install_signal_handlers(stop: &Arc<AtomicBool>, which: &Arc<AtomicUsize>) {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    drivescope::children::watch_stop(stop.clone());
    for sig in [SIGINT, SIGTERM, SIGHUP] {
        let seen = stop.clone();
        // SAFETY: the action runs in the signal handler: it only loads an atomic and calls
        // kill(2) ([`drivescope::children::kill_registered`]), both async-signal-safe. It is
        // registered before the conditional shutdown, so it runs before that exits.
        let _ = unsafe {
            signal_hook::low_level::register(sig, move || {
                if seen.load(Ordering::Relaxed) {
                    drivescope::children::kill_registered();
                }
            })
        };
        let _ = signal_hook::flag::register_conditional_shutdown(sig, 128 + sig, stop.clone());
        let _ = signal_hook::flag::register_usize(sig, which.clone(), sig as usize);
        let _ = signal_hook::flag::register(sig, stop.clone());
    }
}

/// One line on stderr, its control characters written out as [`drivescope::output`]
/// writes them (an error names paths, labels, a host's words); written even after stdout
/// was closed, and never panics (stderr may be a terminal that has gone away).
fn say(msg: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let text = msg.to_string();
    let _ = writeln!(std::io::stderr(), "{}", drivescope::ostext::outbound(&text));
}

/// A panic (none is meant to happen: a bug) reported as the default hook reports it, but
/// through [`say`]: its message may quote text from outside.
fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let thread = std::thread::current();
        let name = thread.name().unwrap_or("<unnamed>");
        say(format_args!("thread '{name}' {info}"));
        let trace = std::backtrace::Backtrace::capture();
        if trace.status() == std::backtrace::BacktraceStatus::Captured {
            say(format_args!("{trace}"));
        } else {
            say(format_args!(
                "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace"
            ));
        }
    }));
}

/// The exit code of a process whose output was closed (128 + SIGPIPE).
const OUTPUT_CLOSED: u8 = 128 + libc::SIGPIPE as u8;

/// Exit code of a command that returns only success or an error: 141 when it succeeded
/// but its output was closed on the way.
fn simple<E: Display>(r: Result<(), E>) -> ExitCode {
    match r {
        Ok(()) if drivescope::output::output_closed() => ExitCode::from(OUTPUT_CLOSED),
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            say(format_args!("drivescope: {e}"));
            ExitCode::from(2)
        }
    }
}

/// Exit code of the dashboard (and of `open`): 128 + the signal that ended it, if one did.
fn screen<E: Display>(r: Result<Exit, E>) -> ExitCode {
    match r {
        Ok(Exit::Quit) => ExitCode::SUCCESS,
        Ok(Exit::Signal(sig)) => ExitCode::from((128 + sig.clamp(0, 127)) as u8),
        Err(e) => {
            say(format_args!("drivescope: {e}"));
            ExitCode::from(2)
        }
    }
}

/// Exit code of `drivescope smart`: smartctl's bit mask of what the readings say
/// ([`drivescope::cli::SMART_EXIT_CODES`]); an error is bit 1 (the device or file could not
/// be read), 141 when the output was closed.
fn smart<E: Display>(r: Result<drivescope::telemetry::SmartExit, E>) -> ExitCode {
    match r {
        Ok(_) if drivescope::output::output_closed() => ExitCode::from(OUTPUT_CLOSED),
        Ok(e) => ExitCode::from(e.0),
        Err(e) => {
            say(format_args!("drivescope: {e}"));
            ExitCode::from(1 << drivescope::telemetry::SmartExitBit::DeviceOpen as u8)
        }
    }
}

fn headless(command: impl FnOnce(Arc<AtomicBool>) -> Result<Finished, RunError>) -> ExitCode {
    let stop = Arc::new(AtomicBool::new(false));
    let which = Arc::new(AtomicUsize::new(0));
    install_signal_handlers(&stop, &which);
    let signalled = || {
        let s = which.load(Ordering::Relaxed);
        (s > 0).then(|| ExitCode::from((128 + s) as u8))
    };
    let output_closed =
        || drivescope::output::output_closed().then(|| ExitCode::from(OUTPUT_CLOSED));
    let finished = match command(stop) {
        Ok(f) => f,
        Err(e) => {
            say(format_args!("drivescope: {e}"));
            return signalled().unwrap_or(ExitCode::from(2));
        }
    };
    // The run's verification record was not kept: a later `verify` would check against a
    // state behind what the run wrote. Said whatever the outcome; exit 1 when nothing else
    // decides the code.
    let unsaved = finished.tally.verify_unsaved.is_some();
    if let Some(u) = &finished.tally.verify_unsaved {
        say(format_args!("drivescope: {u}"));
    }
    let findings = finished.tally.findings;
    if findings > 0 && !matches!(finished.result, Ok(RunOutcome::Stopped(_)) | Err(_)) {
        say(format_args!(
            "drivescope: {findings} verification findings (wrong data read back)"
        ));
        return ExitCode::from(3);
    }
    match finished.result {
        Ok(RunOutcome::Completed { errors: 0, .. }) if unsaved => ExitCode::from(1),
        Ok(RunOutcome::Completed { errors: 0, .. }) => ExitCode::SUCCESS,
        Ok(RunOutcome::Completed {
            errors,
            first_error,
        }) => {
            match first_error {
                Some(f) => say(format_args!("drivescope: {errors} I/O errors (first: {f})")),
                None => say(format_args!("drivescope: {errors} I/O errors (see above)")),
            }
            ExitCode::from(1)
        }
        Ok(failed @ RunOutcome::Failed { .. }) => {
            let why = failed.failure().unwrap_or_default();
            say(format_args!("drivescope: {why}; the run stopped"));
            ExitCode::from(1)
        }
        Ok(RunOutcome::Stopped(_)) => signalled()
            .or_else(output_closed)
            .unwrap_or(ExitCode::from(130)),
        Err(e) => {
            say(format_args!("drivescope: {e}"));
            signalled().unwrap_or(ExitCode::from(2))
        }
    }
}

/// The command line, or the exit code of what clap showed instead (help, version, a usage
/// error): clap's own writer, whose failed write is a closed output as any other.
fn parse() -> Result<Cli, ExitCode> {
    use clap::{CommandFactory, FromArgMatches};
    use drivescope::output::ColorChoice;
    use std::io::Write;
    let colour = match ColorChoice::stated(std::env::args_os()) {
        Some(ColorChoice::Always) => clap::ColorChoice::Always,
        Some(ColorChoice::Never) => clap::ColorChoice::Never,
        // clap's auto follows the terminal and NO_COLOR.
        Some(ColorChoice::Auto) | None => clap::ColorChoice::Auto,
    };
    // clap's messages quote what was typed, and its own writer strips what looks like an
    // escape sequence from them (silently: `\e[2J` would vanish): a command line holding a
    // control character gets clap's plain text instead, written through the one filter.
    let odd = std::env::args_os().any(|a| {
        matches!(
            drivescope::ostext::outbound(&a.to_string_lossy()),
            std::borrow::Cow::Owned(_)
        )
    });
    let mut command = Cli::command().color(colour);
    if odd {
        command = command
            .color(clap::ColorChoice::Never)
            .styles(clap::builder::Styles::plain());
    }
    let e = match command
        .try_get_matches()
        .and_then(|m| Cli::check_no_dashboard_args(&m).and_then(|()| Cli::from_arg_matches(&m)))
    {
        Ok(cli) => return Ok(cli),
        Err(e) => e,
    };
    let shown = if odd {
        let text = e.render().ansi().to_string();
        drivescope::output::Output::default().text(stream_of(&e), &text);
        match drivescope::output::output_closed() {
            true => Err(std::io::ErrorKind::BrokenPipe.into()),
            false => Ok(()),
        }
    } else {
        e.print()
    }
    .and_then(|()| {
        std::io::stdout().flush()?;
        std::io::stderr().flush()
    });
    Err(match shown {
        Err(_) => ExitCode::from(OUTPUT_CLOSED),
        // `smart` follows smartctl: a command line that did not parse is bit 0.
        Ok(()) if e.use_stderr() && names_smart() => {
            ExitCode::from(1 << drivescope::telemetry::SmartExitBit::CommandLine as u8)
        }
        Ok(()) => ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2)),
    })
}

/// Where clap shows `e`: errors on stderr, help and version on stdout.
fn stream_of(e: &clap::Error) -> drivescope::output::Stream {
    match e.use_stderr() {
        true => drivescope::output::Stream::Err,
        false => drivescope::output::Stream::Out,
    }
}

/// Whether the command line names the `smart` command (read again, past its errors).
fn names_smart() -> bool {
    use clap::CommandFactory;
    Cli::command()
        .ignore_errors(true)
        .try_get_matches()
        .is_ok_and(|m| m.subcommand_name() == Some("smart"))
}

fn main() -> ExitCode {
    install_panic_hook();
    let cli = match parse() {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    match cli.command {
        None => screen(commands::dashboard::run(&cli.dashboard, cli.color)),
        Some(Command::Run(args)) => headless(|stop| commands::run::run(&args, stop)),
        Some(Command::Verify(args)) => headless(|stop| commands::verify::run(&args, stop)),
        Some(Command::Open(args)) => screen(commands::open::run(&args, cli.color)),
        Some(Command::Presets(args)) => simple(commands::presets::run(&args)),
        Some(Command::Devices(args)) => simple(commands::devices::run(args)),
        Some(Command::Smart(args)) => smart(commands::smart::run(args)),
        Some(Command::Report(args)) => simple(commands::report::run(&args).map(|_| ())),
        Some(Command::Compare(args)) => match commands::compare::run(&args) {
            // The steps that regressed are named on stderr; the verdict stands whatever
            // became of stdout (`| head`).
            Ok(commands::compare::Verdict::Regressed(_)) => ExitCode::from(1),
            other => simple(other.map(|_| ())),
        },
        Some(Command::Export(args)) => simple(commands::export::run(&args)),
        Some(Command::Completions(args)) => simple(commands::docs::completions(&args)),
        Some(Command::Man(args)) => simple(commands::docs::man(&args)),
        Some(Command::Host(args)) => simple(commands::host::run(&args)),
        Some(Command::Agent(args)) => simple(commands::agent::run(&args)),
    }
}
