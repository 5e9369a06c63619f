//! The UI thread's loop: wait for input or backend answers (never busy),
//! drain everything pending, update the state, draw once if it changed.
//! While playing it wakes at most 4 times a second; idle, it sleeps.

use super::state::{App, Effect, Event, Millis};
use super::terminal::LoopEvent;
use super::theme::Theme;
use super::views;
use ratatui::Terminal;
use ratatui::backend::Backend;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

/// Where the reducer's effects go: the api/engine/sync workers. Must not
/// block: implementations queue the request and answer later with
/// `UiSender::send`.
pub trait Backends {
    fn handle(&mut self, effect: Effect);
    /// How covers are drawn in this terminal (asked at start-up; see
    /// `ui::graphics`). Not called when covers are off.
    fn graphics(&mut self, _picker: ratatui_image::picker::Picker) {}
    /// Called once after the loop ends, with the terminal still up; may
    /// wait briefly for the last progress write. Returns what to tell the
    /// user once the terminal is back (e.g. changes not sent yet).
    fn shutdown(&mut self) -> Option<String> {
        None
    }
}

/// The handle backends use to answer; cheap to clone, never blocks.
#[derive(Clone, Debug)]
pub struct UiSender(pub(crate) Sender<LoopEvent>);

impl UiSender {
    /// A sender and the receiving end the UI loop reads (for driving the
    /// backends without a terminal, e.g. in tests).
    pub fn channel() -> (UiSender, Receiver<LoopEvent>) {
        let (tx, rx) = std::sync::mpsc::channel();
        (UiSender(tx), rx)
    }

    /// Dropped when the loop is gone: nobody is left to tell.
    pub fn send(&self, b: super::state::Answer) {
        let _ = self.0.send(LoopEvent::App(Event::Answer(b)));
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExitReason {
    Quit,
    Signal(i32),
    TerminalGone(String),
}

/// Counters for benchmarks and tests.
#[derive(Debug, Default, Clone, Copy)]
pub struct LoopStats {
    pub frames: u64,
    pub wakeups: u64,
}

pub fn run<B: Backend>(
    terminal: &mut Terminal<B>,
    app: &mut App,
    theme: &Theme,
    rx: &Receiver<LoopEvent>,
    backends: &mut dyn Backends,
    stats: &mut LoopStats,
) -> Result<ExitReason, String> {
    let start = Instant::now();
    app.clock_origin = crate::domain::now_millis();
    // Local time (the automatic sleep timer's hours) follows the zone's
    // offset, read again at each wake (daylight saving moves it).
    let local = |app: &mut App| {
        let wall = app.clock_origin + app.now as crate::domain::EpochMillis;
        app.utc_offset_s = crate::domain::utc_offset_secs(wall / 1000);
    };
    local(app);
    let now = || start.elapsed().as_millis() as Millis;
    if let Ok(size) = terminal.size() {
        app.update(Event::Resize(size.width, size.height));
    }
    app.update(Event::Tick(now()));
    draw(terminal, app, theme, stats)?;
    loop {
        let got = match app.next_wake() {
            Some(at) => rx.recv_timeout(Duration::from_millis(at.saturating_sub(now()))),
            None => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
        };
        let first = match got {
            Ok(ev) => Some(ev),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => {
                return Ok(ExitReason::TerminalGone("input closed".into()));
            }
        };
        stats.wakeups += 1;
        local(app);
        let mut fx = app.update(Event::Tick(now()));
        // Drain everything pending before drawing (key repeat stays snappy).
        let mut batch: Vec<LoopEvent> = first.into_iter().collect();
        batch.extend(rx.try_iter());
        let mut exit = None;
        for ev in batch {
            let reason = match ev {
                LoopEvent::App(e) => {
                    fx.extend(app.update(e));
                    continue;
                }
                LoopEvent::TerminalGone(why) => ExitReason::TerminalGone(why),
                LoopEvent::Signal(s) => ExitReason::Signal(s),
            };
            fx.push(Effect::Session(crate::domain::session::Command::Flush));
            exit.get_or_insert(reason);
        }
        for effect in fx {
            if effect == Effect::Quit {
                exit.get_or_insert(ExitReason::Quit);
            } else {
                backends.handle(effect);
            }
        }
        if let Some(reason) = exit {
            return Ok(reason);
        }
        if app.dirty {
            draw(terminal, app, theme, stats)?;
        }
    }
}

fn draw<B: Backend>(
    terminal: &mut Terminal<B>,
    app: &mut App,
    theme: &Theme,
    stats: &mut LoopStats,
) -> Result<(), String> {
    terminal
        .draw(|f| views::render(app, theme, f))
        .map_err(|e| format!("drawing failed: {e}"))?;
    app.dirty = false;
    stats.frames += 1;
    Ok(())
}
