//! One file per panel; each draws itself from the [`App`](crate::app::App) alone and says
//! why when it has nothing to show.

pub mod all_drives;
pub mod curve;
pub mod drives;
pub mod events;
pub mod header;
pub mod integrity;
pub mod kernel_host;
pub mod latency;
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
    match panel {
        Panel::Throughput => throughput::render(app, f, area),
        Panel::Latency => latency::render(app, f, area),
        Panel::Curve => curve::render(app, f, area),
        Panel::Thermal => thermal::render(app, f, area),
        Panel::KernelHost => kernel_host::render(app, f, area),
        Panel::Events => events::render(app, f, area),
        Panel::Steps => steps::render(app, f, area),
    }
}
