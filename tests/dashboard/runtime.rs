//! The event loop on ratatui's TestBackend: messages in, effects out, the screen drawn.

use drivescope::app::{App, Effect, Msg};
use drivescope::tui::event_loop;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::KeyCode;
use ratatui::Terminal;
use tokio::sync::mpsc;

use super::fixtures::*;

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap()
}

#[test]
fn loop_draws_carries_effects_and_ends_on_quit() {
    let mut term = Terminal::new(TestBackend::new(120, 40)).unwrap();
    let mut app: App = idle((120, 40));
    let (msg_tx, msg_rx) = mpsc::unbounded_channel();
    let (in_tx, in_rx) = mpsc::unbounded_channel();
    let (fx_tx, mut fx_rx) = mpsc::unbounded_channel();
    in_tx.send(code(KeyCode::Enter)).unwrap();
    msg_tx
        .send(Msg::RunStarted {
            preset_id: "quick-look".into(),
            target: scratch(),
        })
        .unwrap();
    msg_tx
        .send(Msg::Interval(Box::new(interval(0, 1234.0, 0.0, 80.0))))
        .unwrap();
    drop(msg_tx);
    in_tx.send(key('q')).unwrap();
    in_tx.send(key('y')).unwrap();
    rt().block_on(async {
        tokio::time::timeout(
            std::time::Duration::from_secs(10),
            event_loop(&mut term, &mut app, msg_rx, in_rx, &fx_tx),
        )
        .await
        .expect("the loop ends on quit")
        .expect("no terminal error");
    });
    let mut fx = Vec::new();
    while let Ok(e) = fx_rx.try_recv() {
        fx.push(e);
    }
    assert_eq!(
        fx,
        vec![
            Effect::StartRun {
                preset_id: "quick-look".into(),
                target: scratch(),
                destroy_data: None
            },
            Effect::Stop,
            Effect::Quit
        ]
    );
    assert!(app.quit);
    let drawn: String = term
        .backend()
        .buffer()
        .content()
        .iter()
        .map(|c| c.symbol())
        .collect();
    assert!(drawn.contains("drivescope"), "the loop drew at least once");
}

#[test]
fn closed_channels_do_not_spin_and_a_signal_ends_the_loop() {
    let mut term = Terminal::new(TestBackend::new(80, 24)).unwrap();
    let mut app = running((80, 24));
    let (msg_tx, msg_rx) = mpsc::unbounded_channel::<Msg>();
    drop(msg_tx);
    let (in_tx, in_rx) = mpsc::unbounded_channel();
    let (fx_tx, mut fx_rx) = mpsc::unbounded_channel();
    let t0 = std::time::Instant::now();
    rt().block_on(async {
        let sender = async {
            tokio::time::sleep(std::time::Duration::from_millis(300)).await;
            in_tx.send(Msg::Signal(15)).unwrap();
        };
        let (r, ()) = tokio::join!(
            event_loop(&mut term, &mut app, msg_rx, in_rx, &fx_tx),
            sender
        );
        r.unwrap();
    });
    assert!(t0.elapsed() >= std::time::Duration::from_millis(300));
    assert_eq!(fx_rx.try_recv().ok(), Some(Effect::Stop));
    assert_eq!(fx_rx.try_recv().ok(), Some(Effect::Quit));
    assert!(app.now_s > 0.0, "ticks advanced the clock");
}
