//! The `drivescope` binary: parse the command line, run the command, report errors.

use clap::Parser;
use drivescope::cli::{Cli, Command};
use drivescope::commands;

fn main() {
    let cli = Cli::parse();
    let result = match cli.command {
        Some(Command::Devices(a)) => commands::devices::run(a),
        Some(Command::Smart(a)) => commands::smart::run(a),
        Some(Command::Run(_)) | None => {
            println!("drivescope: this build has only the devices and smart commands");
            Ok(())
        }
    };
    if let Err(e) = result {
        eprintln!("drivescope: {e}");
        std::process::exit(2);
    }
}
