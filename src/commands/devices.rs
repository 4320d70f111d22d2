//! `drivescope devices`: every block device with model, size, transport, whether it or a
//! partition is mounted or in use, and which telemetry sources answer for it.

use crate::cli::DevicesArgs;

use super::error::CommandError;
use crate::drive::SysRoot;
use crate::output::{out_line, Output, Stream};
use crate::telemetry::devices;

pub use crate::telemetry::devices::{collect, DeviceRow};

/// Runs `drivescope devices`.
pub fn run(args: DevicesArgs) -> Result<(), CommandError> {
    let rows = collect(&SysRoot::real());
    if args.json {
        out_line(&serde_json::to_string_pretty(&rows)?);
    } else {
        Output::default().text(Stream::Out, &devices::table_text(&rows));
    }
    Ok(())
}
