//! A zoned drive's zones in the drive line: their states from the telemetry poller's
//! latest zone report first (they change as the run writes), then the zone geometry.

use drivescope::app::{App, DriveView, Msg, TelemetryView};
use drivescope::drive::zones::ZoneStates;
use drivescope::drive::{ZoneModel, Zones};

use super::fixtures::*;

fn zns() -> DriveView {
    DriveView {
        model: Some("QEMU NVMe Ctrl".into()),
        serial: Some("zns".into()),
        firmware: None,
        capacity_bytes: Some(64 << 20),
        transport: Some("NVMe".into()),
        zones: Some(Zones {
            model: ZoneModel::HostManaged,
            zone_bytes: 4 << 20,
            count: 16,
            max_open: Some(14),
            max_active: None,
        }),
    }
}

fn with_states(size: (u16, u16), states: Option<ZoneStates>) -> App {
    let mut app = idle(size);
    send(
        &mut app,
        [
            Msg::Drive(zns()),
            Msg::Telemetry(Box::new(TelemetryView {
                zones: states,
                ..telemetry(1.0, 40.0, 0)
            })),
        ],
    );
    app
}

#[test]
fn the_drive_line_shows_the_zones_states_then_their_geometry() {
    let states = ZoneStates {
        empty: 11,
        open: 1,
        closed: 0,
        full: 4,
        other: 0,
    };
    let app = with_states((120, 40), Some(states));
    let s = screen(&app);
    assert!(
        s.contains("· zones 4 full, 1 open, 11 empty · host-managed, 16 zones"),
        "{s}"
    );
    insta::assert_snapshot!("zones_states_120x40", s);
    // Before the first report: the geometry alone.
    let s = screen(&with_states((120, 40), None));
    assert!(s.contains("zones host-managed, 16 zones of 4 MiB"), "{s}");
    assert!(!s.contains("empty"), "{s}");
}
