//! One file per panel; each draws itself from the [`App`](crate::app::App) and, for a panel
//! of one drive, the [`DriveSlot`](crate::app::slot::DriveSlot) it shows (the picked one),
//! and says why when it has nothing to show.

pub mod all_drives;
pub mod curve;
pub mod diskmark;
pub mod drives;
pub mod events;
pub mod header;
pub mod integrity;
pub mod kernel_host;
pub mod latency;
pub mod method;
pub mod steps;
pub mod thermal;
pub mod throughput;

use ratatui::layout::Rect;
use ratatui::Frame;

use crate::app::{App, Panel};

/// Draws `panel` into `area`.
pub fn render(panel: Panel, app: &App, f: &mut Frame, area: Rect) {
    if app.all_drives && crate::app::drives::many(app) {
        match panel {
            Panel::Throughput => return all_drives::throughput(app, f, area),
            Panel::Latency => return all_drives::latency(app, f, area),
            Panel::Thermal => return all_drives::thermal(app, f, area),
            _ => {}
        }
    }
    let slot = app.picked_slot();
    match panel {
        Panel::Throughput => throughput::render(app, slot, f, area),
        Panel::Latency => latency::render(app, slot, f, area),
        Panel::Curve if !slot.run.grid.is_empty() => diskmark::render(app, f, area),
        Panel::Curve => match &slot.run.method {
            Some(m) => method::render(app, m, f, area),
            None => curve::render(app, slot, f, area),
        },
        Panel::Thermal => thermal::render(app, slot, f, area),
        Panel::KernelHost => kernel_host::render(app, slot, f, area),
        Panel::Events => events::render(app, f, area),
        Panel::Steps => steps::render(app, f, area),
    }
}
