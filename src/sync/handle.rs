//! The sync worker's public face: its configuration, the handle the UI
//! and `earmark play` use (commands in, status out) and the one-off
//! notices it sends. Sending never blocks; the status is a published value.
//!
//! How a player drives it (see `sync::headless` for a complete example):
//! 1. `worker::spawn(WorkerConfig::new(cli::sync_dir(&profile)),
//!    Arc::new(ClientRemote::new(client)))` inside a tokio runtime.
//! 2. Opening a book: mint a new `PlaybackId`, send `Event::BookOpened`, then
//!    wait for `Notice::LoadAt` (load the engine there, after
//!    `EngineBridge::loading`) or `Notice::Choose` (ask, answer with
//!    `Event::Chose`). `Notice::ApplySettings` carries the book's speed.
//! 3. Every engine state: `for e in bridge.events(&state) { handle.event(e) }`.
//! 4. User intents (restart, seek to 0, mark (un)finished): `Event::Intent`.
//! 5. `set_settings` for speed/volume; `Command::Queue` for favorites and
//!    bookmarks made offline.
//! 6. `Notice::StopPlayback`: stop the engine and show the message;
//!    `Notice::LoginRequired`: after a new login, send `SessionChanged`.
//! 7. Quitting: `quit(timeout)`; what is not sent stays queued.

use super::outbox::{Op, QueuedSettings};
use super::reconciler::{Event, PlaybackId, ReconcilerConfig, Source, Spot};
use crate::domain::{BookId, PlaybackSettings, now_millis};
use std::path::PathBuf;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot, watch};

#[derive(Debug, Clone)]
pub struct WorkerConfig {
    pub outbox_path: PathBuf,
    pub cache_path: PathBuf,
    pub reconciler: ReconcilerConfig,
    /// How often the worker wakes up (periodic reports, retries).
    pub tick: Duration,
    pub backoff_min: Duration,
    pub backoff_max: Duration,
    /// How often the license is re-checked while it blocks sync.
    pub license_poll: Duration,
}

impl WorkerConfig {
    /// Defaults, with the outbox and cache in `data_dir`.
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        let dir = data_dir.into();
        Self {
            outbox_path: dir.join("outbox.journal"),
            cache_path: dir.join("progress-cache.json"),
            reconciler: ReconcilerConfig::default(),
            tick: Duration::from_millis(500),
            backoff_min: Duration::from_secs(1),
            backoff_max: Duration::from_secs(60),
            license_poll: Duration::from_secs(30),
        }
    }
}

/// The worker's connection to the server, as the UI shows it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Link {
    #[default]
    Online,
    /// Unreachable or failing: writes are queued and retried.
    Offline,
    /// 401 or 409: sync paused until the user logs in again.
    NeedsLogin { message: String },
    /// 403 `license_required`: playback and all sync stopped.
    LicenseBlocked { message: String },
}

/// Progress to show for a book, and whether the server confirmed it.
#[derive(Debug, Clone, PartialEq)]
pub struct Shown {
    pub book: BookId,
    pub spot: Spot,
    pub finished: bool,
    pub source: Source,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct SyncStatus {
    pub link: Link,
    /// Entries waiting to be sent to the current scope.
    pub queued: usize,
    /// Entries of another server instance or account, held for the user.
    pub held: usize,
    pub last_error: Option<String>,
    pub shown: Option<Shown>,
    /// Requests made to the server by this worker (for diagnostics).
    pub requests: u64,
}

/// One-off messages for the UI or the player.
#[derive(Debug, Clone, PartialEq)]
pub enum Notice {
    /// Load (or move) the engine here.
    LoadAt { playback: PlaybackId, spot: Spot },
    /// Ask the user which progress to keep.
    Choose {
        book: BookId,
        server: Spot,
        local: Spot,
    },
    /// Apply these playback settings to the opened book.
    ApplySettings {
        book: BookId,
        settings: PlaybackSettings,
    },
    /// The license is not valid: stop playback and say why.
    StopPlayback { message: String },
    /// The license is valid again.
    LicenseRestored,
    /// Log in again (401, or 409 after the server or account changed).
    LoginRequired { message: String },
    /// A queued write was dropped (its book or chapter is gone).
    Dropped { book: BookId, message: String },
}

/// What quitting achieved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuitSummary {
    /// Entries still queued (they are sent at the next start).
    pub left: usize,
    pub timed_out: bool,
}

#[derive(Debug)]
pub enum Command {
    /// A playback event for the reconciler.
    Event(Event),
    /// Queue a change (settings, deletes, favorites, bookmarks).
    Queue { book: BookId, op: Op },
    /// A new login happened: re-read the scope and resume.
    SessionChanged,
    /// Re-check the license now.
    RecheckLicense,
    /// Send what is queued now (ignores the back-off).
    Flush,
    /// Move held entries to the current scope and send them.
    PushHeld { reply: oneshot::Sender<usize> },
    /// Drop held entries.
    DiscardHeld { reply: oneshot::Sender<usize> },
    /// Answers once every earlier command was handled (and what it queued
    /// was attempted): a barrier for tests and for the UI's "sync now".
    Settle { reply: oneshot::Sender<()> },
    /// Report the final position, flush within `timeout`, and stop.
    Quit {
        timeout: Duration,
        reply: oneshot::Sender<QuitSummary>,
    },
}

/// Cheap to clone; usable from any thread (sending never blocks).
#[derive(Debug, Clone)]
pub struct SyncHandle {
    tx: mpsc::UnboundedSender<Command>,
    status: watch::Receiver<SyncStatus>,
}

impl SyncHandle {
    pub(super) fn new(
        tx: mpsc::UnboundedSender<Command>,
        status: watch::Receiver<SyncStatus>,
    ) -> Self {
        Self { tx, status }
    }

    pub fn send(&self, cmd: Command) {
        // A stopped worker has flushed already; nothing to do.
        let _ = self.tx.send(cmd);
    }

    pub fn event(&self, e: Event) {
        self.send(Command::Event(e));
    }

    pub fn status(&self) -> SyncStatus {
        self.status.borrow().clone()
    }

    /// A receiver that wakes when the status changes.
    pub fn watch(&self) -> watch::Receiver<SyncStatus> {
        self.status.clone()
    }

    pub fn set_settings(&self, book: BookId, speed: f32, volume: Option<f32>) {
        // Strictly increasing: the server keeps the stored record on equal
        // timestamps, and several key presses drained in one frame land in
        // the same millisecond.
        static LAST: AtomicI64 = AtomicI64::new(0);
        let now = now_millis();
        let prev = LAST
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |l| Some(now.max(l + 1)))
            .unwrap_or(now);
        let op = Op::SettingsWrite(QueuedSettings {
            speed,
            volume,
            client_updated_at: now.max(prev + 1),
        });
        self.send(Command::Queue { book, op });
    }

    pub async fn push_held(&self) -> usize {
        let (reply, rx) = oneshot::channel();
        self.send(Command::PushHeld { reply });
        rx.await.unwrap_or(0)
    }

    pub async fn discard_held(&self) -> usize {
        let (reply, rx) = oneshot::channel();
        self.send(Command::DiscardHeld { reply });
        rx.await.unwrap_or(0)
    }

    /// Waits until every command sent before has been handled.
    pub async fn settle(&self) {
        let (reply, rx) = oneshot::channel();
        self.send(Command::Settle { reply });
        let _ = rx.await;
    }

    /// Flushes within `timeout` and stops the worker. What was not sent
    /// stays in the outbox for the next start.
    pub async fn quit(&self, timeout: Duration) -> QuitSummary {
        let (reply, rx) = oneshot::channel();
        self.send(Command::Quit { timeout, reply });
        match tokio::time::timeout(timeout + Duration::from_secs(1), rx).await {
            Ok(Ok(s)) => s,
            _ => QuitSummary {
                left: self.status().queued,
                timed_out: true,
            },
        }
    }
}
