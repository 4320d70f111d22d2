//! The `drivescope` binary: parse the command line, run the command, report errors.

use std::process::ExitCode;

use clap::{CommandFactory, Parser};
use drivescope::cli::{Cli, Command};
use drivescope::commands;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Some(Command::Presets(args)) => match commands::presets::run(&args) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("drivescope: {e}");
                ExitCode::from(2)
            }
        },
        Some(Command::Run(_)) => {
            eprintln!("drivescope: run is not wired up in this build yet");
            ExitCode::from(2)
        }
        None => {
            let _ = Cli::command().print_help();
            ExitCode::SUCCESS
        }
    }
}
