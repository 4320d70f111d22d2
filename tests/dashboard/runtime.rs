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

/// CPU time this thread has used (CLOCK_THREAD_CPUTIME_ID). The current-thread runtime
/// polls the loop on the calling thread, so this is the loop's own CPU.
fn thread_cpu() -> std::time::Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec into the valid, exclusively borrowed `ts`.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    std::time::Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Runs the loop for `wall` of real time with one of its channels closed from the start,
/// then sends SIGTERM's message on the other; the loop's CPU time until it ended (or was
/// given up after five times `wall`), and whether it ended on the signal.
fn run_with_a_closed_channel(
    close_input: bool,
    wall: std::time::Duration,
) -> (std::time::Duration, bool, App, Vec<Effect>) {
    let mut term = Terminal::new(TestBackend::new(80, 24)).unwrap();
    let mut app = running((80, 24));
    let (msg_tx, msg_rx) = mpsc::unbounded_channel::<Msg>();
    let (in_tx, in_rx) = mpsc::unbounded_channel();
    // The one left open carries the signal; the other is closed before the loop starts.
    let open = if close_input {
        drop(in_tx);
        msg_tx
    } else {
        drop(msg_tx);
        in_tx
    };
    let (fx_tx, mut fx_rx) = mpsc::unbounded_channel();
    let runtime = rt();
    let cpu0 = thread_cpu();
    let ended = runtime.block_on(async {
        let sender = async {
            tokio::time::sleep(wall).await;
            let _ = open.send(Msg::Signal(15));
        };
        // A loop that spins may never take the signal (the closed channel's branch comes
        // first and eats the task's budget): the timeout, which still runs then, ends it.
        let (r, ()) = tokio::join!(
            tokio::time::timeout(
                wall * 5,
                event_loop(&mut term, &mut app, msg_rx, in_rx, &fx_tx)
            ),
            sender
        );
        r.map(|r| r.unwrap()).is_ok()
    });
    let cpu = thread_cpu() - cpu0;
    let mut fx = Vec::new();
    while let Ok(e) = fx_rx.try_recv() {
        fx.push(e);
    }
    (cpu, ended, app, fx)
}

#[test]
fn closed_channels_do_not_spin_and_a_signal_ends_the_loop() {
    // A second of real time with the runtime's channel closed, then with the input's: a loop
    // that waits uses a few ms of CPU for its ten ticks and redraws; one that polls a closed
    // channel again and again burns the whole second (or what a loaded machine leaves it,
    // still far above the bound).
    let wall = std::time::Duration::from_secs(1);
    for close_input in [false, true] {
        let closed = if close_input { "input" } else { "messages" };
        let (cpu, ended, app, fx) = run_with_a_closed_channel(close_input, wall);
        eprintln!("{closed} channel closed: {cpu:?} of CPU in {wall:?}");
        assert!(
            cpu < wall / 10,
            "the loop used {cpu:?} of CPU in {wall:?} with its {closed} channel closed: it spins"
        );
        assert!(ended, "{closed} closed: the signal did not end the loop");
        assert_eq!(fx, [Effect::Stop, Effect::Quit], "{closed} closed");
        assert!(app.now_s > 0.0, "{closed} closed: ticks advanced the clock");
    }
}

/// A TestBackend that records the (tokio) time of every frame (flush).
struct Counting {
    inner: TestBackend,
    frames: std::sync::Arc<std::sync::Mutex<Vec<tokio::time::Instant>>>,
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
            .lock()
            .unwrap()
            .push(tokio::time::Instant::now());
        self.inner.flush()
    }
}

#[test]
fn at_most_ten_frames_a_second_and_none_when_idle() {
    use drivescope::tui::MIN_FRAME;
    use std::sync::{Arc, Mutex};
    use std::time::Duration;
    use tokio::time::Instant;

    // Paused time: the clock moves only when every task waits, so the frames are counted
    // per virtual second however slow this machine draws them.
    let paused = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    let frames = Arc::new(Mutex::new(Vec::new()));
    let mut term = Terminal::new(Counting {
        inner: TestBackend::new(120, 40),
        frames: frames.clone(),
    })
    .unwrap();
    let mut app = running((120, 40));
    let (msg_tx, msg_rx) = mpsc::unbounded_channel();
    let (in_tx, in_rx) = mpsc::unbounded_channel();
    let (fx_tx, _fx_rx) = mpsc::unbounded_channel();
    const BUSY_SECS: u64 = 3;
    let (t0, busy_end, idle_end) = paused.block_on(async {
        let t0 = Instant::now();
        let feeder = async {
            // 3 virtual seconds of a change every 5 ms: 600 changes.
            for i in 0..BUSY_SECS * 200 {
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
            // The last change is drawn within one frame time.
            tokio::time::sleep(MIN_FRAME + Duration::from_millis(50)).await;
            let busy_end = Instant::now();
            // Idle: ticks keep coming, nothing changes.
            tokio::time::sleep(Duration::from_secs(2)).await;
            let idle_end = Instant::now();
            in_tx.send(Msg::Signal(15)).unwrap();
            (busy_end, idle_end)
        };
        let (r, (busy_end, idle_end)) = tokio::join!(
            event_loop(&mut term, &mut app, msg_rx, in_rx, &fx_tx),
            feeder
        );
        r.unwrap();
        (t0, busy_end, idle_end)
    });
    let frames = frames.lock().unwrap().clone();
    let at: Vec<Duration> = frames.iter().map(|f| *f - t0).collect();
    // No two frames closer than MIN_FRAME: at most ten in any second.
    for w in at.windows(2) {
        assert!(
            w[1] - w[0] >= MIN_FRAME,
            "frames {:?} apart (at {:?} and {:?}): {at:?}",
            w[1] - w[0],
            w[0],
            w[1]
        );
    }
    // Each busy second, counted on the virtual clock: ten frames, or nine where a second's
    // first frame fell on its boundary; never more, and the screen did follow the data.
    for s in 0..BUSY_SECS {
        let n = at
            .iter()
            .filter(|t| (s * 1000..(s + 1) * 1000).contains(&(t.as_millis() as u64)))
            .count();
        assert!((9..=10).contains(&n), "{n} frames in second {s}: {at:?}");
    }
    // The last change is on screen: a frame after the last message.
    let last_msg = Duration::from_millis(5 * (BUSY_SECS * 200 - 1));
    assert!(
        at.iter().any(|t| *t >= last_msg && *t < busy_end - t0),
        "the last change was never drawn: {at:?}"
    );
    // (The signal that ends the loop is a change: its frame comes after the idle span.)
    let idle = at
        .iter()
        .filter(|t| (busy_end - t0..idle_end - t0).contains(t))
        .count();
    assert_eq!(
        idle,
        0,
        "frames drawn in {:?} while nothing changed: {at:?}",
        idle_end - busy_end
    );
}
