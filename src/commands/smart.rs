//! `drivescope smart [DEVICE] [--json | --yaml]`: one SMART-ish reading of a drive (or of
//! a saved `smartctl -j` file), or `--watch N` samples of the telemetry poller. Its exit
//! status is smartctl's bit mask of what the readings say ([`SmartExit`]).

use crate::cli::SmartArgs;
use std::time::Instant;

use super::error::CommandError;
use crate::drive::{self, SysRoot};
use crate::output::{out_line, output_closed, Output, Stream};
use crate::telemetry::{self, smartctl, text, Poller, SmartExit, SmartReading, TelemetrySample};

/// Prints the readings; their exit status.
fn print_readings(args: &SmartArgs, readings: &[SmartReading]) -> Result<SmartExit, CommandError> {
    if args.json {
        let text = match readings {
            [one] => serde_json::to_string_pretty(one)?,
            many => serde_json::to_string_pretty(many)?,
        };
        out_line(&text);
    } else if args.yaml {
        let text = match readings {
            [one] => serde_yaml::to_string(one)?,
            many => serde_yaml::to_string(many)?,
        };
        Output::default().text(Stream::Out, &text);
    } else {
        let parts: Vec<String> = readings.iter().map(text::reading_text).collect();
        Output::default().text(Stream::Out, &parts.join("\n"));
    }
    Ok(SmartExit::of_all(readings))
}

fn print_sample(args: &SmartArgs, s: &TelemetrySample) -> Result<(), CommandError> {
    if args.json {
        out_line(&serde_json::to_string(s)?);
    } else if args.yaml {
        Output::default().text(Stream::Out, &["---\n", &serde_yaml::to_string(s)?].concat());
    } else {
        Output::default().text(Stream::Out, &text::sample_text(s));
    }
    Ok(())
}

/// Runs `drivescope smart`: the exit status of what it read (none for `--watch`).
pub fn run(args: SmartArgs) -> Result<SmartExit, CommandError> {
    if let Some(file) = &args.smartctl_json {
        let r = smartctl::decode_file(file)?;
        return print_readings(&args, &[r]);
    }
    // A drive named on the command line must exist: resolving the nearest existing
    // folder (right for a test file not created yet) would read another drive.
    if let Some(p) = &args.device {
        if std::fs::symlink_metadata(p).is_err() {
            return Err(CommandError::NoSuchPath {
                path: p.clone(),
                device: p.starts_with("/dev"),
            });
        }
    }
    let target = args.device.clone().unwrap_or_else(drive::default_target);
    let info = drive::resolve(&target)?;
    if let Some(count) = args.watch {
        let (poller, rx) = Poller::spawn(&info, args.period, Instant::now());
        // A closed output ends the watch: no sample is read that nobody sees.
        for _ in 0..count {
            if output_closed() {
                break;
            }
            match rx.recv() {
                Ok(s) => print_sample(&args, &s)?,
                Err(_) => return Err(CommandError::Usage("the poller stopped".into())),
            }
        }
        poller.stop();
        return Ok(SmartExit::default());
    }
    let root = SysRoot::real();
    let readings: Vec<SmartReading> = info
        .disks
        .iter()
        .map(|d| telemetry::read_smart(&root, d))
        .collect();
    print_readings(&args, &readings)
}
