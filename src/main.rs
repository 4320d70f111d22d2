//! The `drivescope` binary: parse the command line, run the command, report errors.

use clap::Parser;
use drivescope::cli::{Cli, Command};
use drivescope::commands;

fn main() {
    let cli = Cli::parse();
    let result = match cli.command {
        Some(Command::Devices(a)) => commands::devices::run(a),
        Some(Command::Smart(a)) => commands::smart::run(a),
        Some(Command::Run(_)) => Err(commands::CommandError::Usage(
            "run is not in this build yet (only devices and smart)".into(),
        )),
        None => {
            println!("drivescope: try --help (this build has the devices and smart commands)");
            Ok(())
        }
    };
    if let Err(e) = result {
        eprintln!("drivescope: {e}");
        std::process::exit(2);
    }
}
