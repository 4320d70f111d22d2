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

/// A TestBackend that counts frames (flushes).
struct Counting {
    inner: TestBackend,
    frames: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl ratatui::backend::Backend for Counting {
    type Error = <TestBackend as ratatui::backend::Backend>::Error;

    fn draw<'a, I>(&mut self, content: I) -> Result<(), Self::Error>
    where
        I: Iterator<Item = (u16, u16, &'a ratatui::buffer::Cell)>,
    {
        self.inner.draw(content)
    }
    fn hide_cursor(&mut self) -> Result<(), Self::Error> {
        self.inner.hide_cursor()
    }
    fn show_cursor(&mut self) -> Result<(), Self::Error> {
        self.inner.show_cursor()
    }
    fn get_cursor_position(&mut self) -> Result<ratatui::layout::Position, Self::Error> {
        self.inner.get_cursor_position()
    }
    fn set_cursor_position<P: Into<ratatui::layout::Position>>(
        &mut self,
        position: P,
    ) -> Result<(), Self::Error> {
        self.inner.set_cursor_position(position)
    }
    fn clear(&mut self) -> Result<(), Self::Error> {
        self.inner.clear()
    }
    fn clear_region(&mut self, t: ratatui::backend::ClearType) -> Result<(), Self::Error> {
        self.inner.clear_region(t)
    }
    fn size(&self) -> Result<ratatui::layout::Size, Self::Error> {
        self.inner.size()
    }
    fn window_size(&mut self) -> Result<ratatui::backend::WindowSize, Self::Error> {
        self.inner.window_size()
    }
    fn flush(&mut self) -> Result<(), Self::Error> {
        self.frames
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.inner.flush()
    }
}

#[test]
fn at_most_ten_frames_a_second_and_none_when_idle() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::time::Duration;

    let frames = Arc::new(AtomicUsize::new(0));
    let mut term = Terminal::new(Counting {
        inner: TestBackend::new(120, 40),
        frames: frames.clone(),
    })
    .unwrap();
    let mut app = running((120, 40));
    let (msg_tx, msg_rx) = mpsc::unbounded_channel();
    let (in_tx, in_rx) = mpsc::unbounded_channel();
    let (fx_tx, _fx_rx) = mpsc::unbounded_channel();
    let counts = rt().block_on(async {
        let feeder = async {
            // 1 s of a message every 5 ms: 200 changes.
            let t0 = tokio::time::Instant::now();
            for i in 0..200u64 {
                msg_tx
                    .send(Msg::Interval(Box::new(interval(
                        i,
                        1000.0 + i as f64,
                        0.0,
                        50.0,
                    ))))
                    .unwrap();
                tokio::time::sleep_until(t0 + Duration::from_millis(5 * (i + 1))).await;
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
            let busy = frames.load(Ordering::SeqCst);
            let busy_ms = t0.elapsed().as_millis() as usize;
            // Idle: ticks keep coming, nothing changes.
            tokio::time::sleep(Duration::from_millis(800)).await;
            let idle = frames.load(Ordering::SeqCst) - busy;
            in_tx.send(Msg::Signal(15)).unwrap();
            (busy, busy_ms, idle)
        };
        let (r, counts) = tokio::join!(
            event_loop(&mut term, &mut app, msg_rx, in_rx, &fx_tx),
            feeder
        );
        r.unwrap();
        counts
    });
    let (busy, busy_ms, idle) = counts;
    // at most 10 frames a second of wall time (+2: the first frame, and rounding)
    assert!(
        busy <= busy_ms / 100 + 2,
        "{busy} frames for 200 changes in {busy_ms} ms"
    );
    assert!(busy >= 5, "{busy} frames: the screen did follow the data");
    assert_eq!(idle, 0, "frames drawn while nothing changed");
}
