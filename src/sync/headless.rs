//! Sync for `earmark play` (no TUI): runs the worker on its own small
//! runtime, tells the command where to load the engine, forwards engine
//! states, and flushes with a time limit at the end. Headless playback
//! follows the server when it and this device disagree.

use super::client_remote::ClientRemote;
use super::engine_bridge::EngineBridge;
use super::reconciler::{Event, PlaybackId};
use super::worker::{self, Link, Notice, QuitSummary, SyncHandle, WorkerConfig};
use crate::api::Client;
use crate::domain::{BookId, ChapterId, Manifest, PlaybackSettings};
use crate::player::PlayerState;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// What the command must act on.
#[derive(Debug, Clone, PartialEq)]
pub enum Stop {
    /// 403 `license_required`: stop playback, show the message.
    License(String),
    /// 401/409: the session is not valid any more.
    Login(String),
    /// The server did not answer in time to restore the place.
    Unavailable(String),
    /// Ctrl-C or SIGTERM: stop, report the last place, flush.
    Interrupted,
}

impl Stop {
    /// One sentence for the user.
    pub fn message(&self) -> String {
        match self {
            Stop::License(m) => format!("{m} Playback and sync are stopped."),
            Stop::Login(m) | Stop::Unavailable(m) => m.clone(),
            Stop::Interrupted => "interrupted".into(),
        }
    }
}

pub struct HeadlessSync {
    rt: tokio::runtime::Runtime,
    handle: SyncHandle,
    notices: mpsc::UnboundedReceiver<Notice>,
    bridge: EngineBridge,
    playback: PlaybackId,
    book: BookId,
    settings: Option<PlaybackSettings>,
    interrupted: Arc<AtomicBool>,
}

impl HeadlessSync {
    /// Starts the worker (outbox and cache in `dir`) and opens `book`.
    pub fn start(
        client: Client,
        dir: PathBuf,
        book: BookId,
        manifest: Manifest,
    ) -> Result<Self, String> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start the sync runtime: {e}"))?;
        let mut config = WorkerConfig::new(dir);
        config.reconciler.headless = true;
        let (handle, notices) = {
            let _guard = rt.enter();
            worker::spawn(config, Arc::new(ClientRemote::new(client))).map_err(|e| e.to_string())?
        };
        // Ctrl-C and SIGTERM end playback gracefully, so the last place is
        // reported and flushed instead of lost.
        let interrupted = Arc::new(AtomicBool::new(false));
        {
            let flag = interrupted.clone();
            rt.spawn(async move {
                use tokio::signal::unix::{SignalKind, signal};
                let Ok(mut term) = signal(SignalKind::terminate()) else {
                    return;
                };
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
                flag.store(true, Ordering::SeqCst);
            });
        }
        let playback = PlaybackId(1);
        handle.event(Event::BookOpened {
            playback,
            book: book.clone(),
            manifest,
            local: None,
        });
        Ok(Self {
            rt,
            handle,
            notices,
            bridge: EngineBridge::new(),
            playback,
            book,
            settings: None,
            interrupted,
        })
    }

    pub fn handle(&self) -> &SyncHandle {
        &self.handle
    }

    /// Waits (at most `timeout`) for where to start: the server's progress,
    /// else this device's, else the start of the book.
    pub fn restore_point(&mut self, timeout: Duration) -> Result<(ChapterId, f64), Stop> {
        let deadline = Instant::now() + timeout;
        loop {
            if self.interrupted.load(Ordering::SeqCst) {
                return Err(Stop::Interrupted);
            }
            let slice = deadline.min(Instant::now() + Duration::from_millis(200));
            match self.next_notice(slice) {
                Some(Notice::LoadAt { spot, .. }) => return Ok((spot.chapter, spot.position)),
                Some(Notice::StopPlayback { message }) => return Err(Stop::License(message)),
                Some(Notice::LoginRequired { message }) => return Err(Stop::Login(message)),
                Some(Notice::ApplySettings { settings, .. }) => self.settings = Some(settings),
                Some(_) => {}
                None if Instant::now() < deadline => {}
                None => {
                    return Err(Stop::Unavailable(format!(
                        "could not restore the position: no answer within {} s",
                        timeout.as_secs()
                    )));
                }
            }
        }
    }

    /// The book's saved playback settings, once known.
    pub fn settings(&mut self) -> Option<PlaybackSettings> {
        self.drain();
        self.settings.clone()
    }

    /// The user chose where to start (`--chapter`/`--at`): an explicit
    /// place, which may move the saved progress back (even to 0).
    pub fn user_start(&self, start: &(ChapterId, f64)) {
        self.handle.event(Event::Action {
            playback: self.playback,
            action: super::reconciler::Action::Seek(super::reconciler::Spot::new(
                start.0.clone(),
                start.1,
            )),
        });
    }

    /// Call right before sending the engine its `Load`.
    pub fn loading(&mut self, engine_now: &PlayerState) {
        self.bridge.loading(self.playback, engine_now);
    }

    /// Forwards one engine state; returns why playback must stop, if it must.
    pub fn pump(&mut self, state: &PlayerState) -> Option<Stop> {
        for e in self.bridge.events(state) {
            self.handle.event(e);
        }
        self.drain()
    }

    /// The user changed the speed on the command line: save it for the book.
    pub fn save_speed(&self, speed: f32) {
        self.handle.set_settings(self.book.clone(), speed, None);
    }

    fn drain(&mut self) -> Option<Stop> {
        if self.interrupted.load(Ordering::SeqCst) {
            return Some(Stop::Interrupted);
        }
        while let Ok(n) = self.notices.try_recv() {
            match n {
                Notice::StopPlayback { message } => return Some(Stop::License(message)),
                Notice::LoginRequired { message } => return Some(Stop::Login(message)),
                Notice::ApplySettings { settings, .. } => self.settings = Some(settings),
                Notice::Dropped { book, message } => {
                    eprintln!("earmark: a queued change for {book} was dropped: {message}");
                }
                _ => {}
            }
        }
        match self.handle.status().link {
            Link::LicenseBlocked { message } => Some(Stop::License(message)),
            Link::NeedsLogin { message } => Some(Stop::Login(message)),
            _ => None,
        }
    }

    fn next_notice(&mut self, deadline: Instant) -> Option<Notice> {
        let left = deadline.saturating_duration_since(Instant::now());
        let notices = &mut self.notices;
        self.rt
            .block_on(async move { tokio::time::timeout(left, notices.recv()).await })
            .ok()
            .flatten()
    }

    /// Reports the final position and flushes within `timeout`.
    pub fn finish(self, state: Option<&PlayerState>, timeout: Duration) -> QuitSummary {
        let mut me = self;
        if let Some(s) = state {
            for e in me.bridge.events(s) {
                me.handle.event(e);
            }
        }
        let summary = me.rt.block_on(me.handle.quit(timeout));
        me.rt.shutdown_timeout(Duration::from_millis(200));
        summary
    }
}
