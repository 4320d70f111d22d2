//! The dashboard's loop, generic over the ratatui backend so whole screens are tested with
//! `TestBackend`: messages from outside and from the input thread go through `update`,
//! effects go out, and the screen is redrawn only when something changed and at most ten
//! times a second. Its clock is tokio's, so a test on a paused runtime counts frames per
//! virtual second.

use std::time::Duration;

use ratatui::backend::Backend;
use ratatui::Terminal;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};
use tokio::time::Instant;

use super::DashboardError;
use crate::app::{update, App, Effect, Msg};
use crate::ui::render;

/// Shortest time between two frames (10 frames a second at most).
pub const MIN_FRAME: Duration = Duration::from_millis(100);

/// Runs until the app quits. `msgs` carries the runtime's messages (engine, telemetry),
/// `input` the terminal's (keys, mouse, resize, signals); either may close. Effects are
/// sent on `effects`; a closed effects channel is not an error.
pub async fn event_loop<B: Backend>(
    terminal: &mut Terminal<B>,
    app: &mut App,
    mut msgs: UnboundedReceiver<Msg>,
    mut input: UnboundedReceiver<Msg>,
    effects: &UnboundedSender<Effect>,
) -> Result<(), DashboardError> {
    let start = Instant::now();
    let mut tick = tokio::time::interval(MIN_FRAME);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut last_draw: Option<Instant> = None;
    let (mut msgs_open, mut input_open) = (true, true);
    loop {
        if app.dirty && last_draw.is_none_or(|t| t.elapsed() >= MIN_FRAME) {
            terminal
                .draw(|f| render(app, f))
                .map_err(|e| DashboardError::Terminal(e.to_string()))?;
            app.dirty = false;
            last_draw = Some(Instant::now());
        }
        if app.quit {
            return Ok(());
        }
        // Keys first: the user's input never waits behind a burst of engine messages.
        let msg = tokio::select! {
            biased;
            m = input.recv(), if input_open => match m {
                Some(m) => m,
                None => { input_open = false; continue; }
            },
            m = msgs.recv(), if msgs_open => match m {
                Some(m) => m,
                None => { msgs_open = false; continue; }
            },
            _ = tick.tick() => Msg::Tick { now_s: start.elapsed().as_secs_f64() },
        };
        for e in update(app, msg) {
            let _ = effects.send(e);
        }
    }
}
