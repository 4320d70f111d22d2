//! What can sit on top of the panels (pickers, help, confirmations) and which panel a tab
//! shows on small terminals.

/// A window on top of the panels; keys go to it first.
#[derive(Debug, Clone, PartialEq)]
pub enum Overlay {
    /// Every key binding; `scroll` is the first line shown.
    Help {
        scroll: u16,
    },
    /// The preset list with description, phases and estimated time.
    Presets,
    /// The target list with what the safety check found. `typing` holds what the user has
    /// typed so far to confirm a destructive target.
    Targets {
        typing: Option<String>,
    },
    /// Theme list; moving previews, `original` is restored on cancel.
    Themes {
        original: usize,
    },
    Confirm(Confirm),
    /// A note being written into the running session (`text` so far); Enter records it.
    Note {
        text: String,
    },
}

/// A yes/no question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Confirm {
    /// Quit while a run is going: stop it (the session is saved) and quit.
    Quit,
    /// Stop the run (the stop key or Ctrl-C).
    StopRun,
    /// Stop one drive (its index) of a run of several.
    StopDrive(usize),
}

impl Confirm {
    pub fn question(self) -> &'static str {
        match self {
            Confirm::Quit => "A run is going. Stop it and quit? The session is saved either way.",
            Confirm::StopRun => "Stop the run? The session is saved either way.",
            Confirm::StopDrive(_) => "Stop the picked drive? The other drives go on.",
        }
    }
}

/// The panels below the header; on small terminals each is a tab.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Panel {
    #[default]
    Throughput,
    Latency,
    Curve,
    Thermal,
    KernelHost,
    Events,
    /// The steps done with their results, the running one, and what remains.
    Steps,
}

impl Panel {
    pub const ALL: [Panel; 7] = [
        Panel::Throughput,
        Panel::Latency,
        Panel::Curve,
        Panel::Thermal,
        Panel::KernelHost,
        Panel::Events,
        Panel::Steps,
    ];

    /// The grid's six cells, row by row; the Steps panel takes the curve's cell while its
    /// tab is the one chosen (both are made of the finished steps).
    pub const GRID: [Panel; 6] = [
        Panel::Throughput,
        Panel::Latency,
        Panel::Curve,
        Panel::Thermal,
        Panel::KernelHost,
        Panel::Events,
    ];

    pub fn title(self) -> &'static str {
        match self {
            Panel::Throughput => "Throughput",
            Panel::Latency => "Latency",
            Panel::Curve => "Curve",
            Panel::Thermal => "Thermal & power",
            Panel::KernelHost => "Kernel & host",
            Panel::Events => "Events",
            Panel::Steps => "Steps",
        }
    }

    /// The name on its tab (short enough for seven tabs in 80 columns).
    pub fn tab_title(self) -> &'static str {
        match self {
            Panel::Thermal => "Thermal",
            Panel::KernelHost => "Kernel",
            other => other.title(),
        }
    }

    fn index(self) -> usize {
        Panel::ALL.iter().position(|p| *p == self).unwrap_or(0)
    }

    pub fn next(self) -> Panel {
        Panel::ALL[(self.index() + 1) % Panel::ALL.len()]
    }

    pub fn prev(self) -> Panel {
        Panel::ALL[(self.index() + Panel::ALL.len() - 1) % Panel::ALL.len()]
    }
}
