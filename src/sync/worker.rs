//! The sync worker: a tokio task that feeds the reconciler, journals every
//! write in the outbox before sending it, flushes progress through the
//! batch endpoint, and handles each failure the way the contract asks.
//! The UI talks to it through a [`SyncHandle`] (commands in, status out)
//! and reads one-off [`Notice`]s; it never blocks on the network.

use super::cache::Cache;
use super::outbox::{Op, Outbox, OutboxError, QueuedProgress, QueuedSettings, Scope};
use super::reconciler::{
    Action, Decision, Event, PlaybackId, Reconciler, ReconcilerConfig, Source, Spot,
};
use super::remote::{Failure, Remote};
use crate::domain::{BookId, PlaybackSettings, now_millis};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant;

/// Most items per batch request (the contract's server takes 1–100).
const BATCH_MAX: usize = 100;

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
        let op = Op::SettingsWrite(QueuedSettings {
            speed,
            volume,
            client_updated_at: now_millis(),
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

/// Starts the worker on the current tokio runtime.
pub fn spawn<R: Remote>(
    config: WorkerConfig,
    remote: Arc<R>,
) -> Result<(SyncHandle, mpsc::UnboundedReceiver<Notice>), OutboxError> {
    let outbox = Outbox::open(&config.outbox_path)?;
    let cache = Cache::load(&config.cache_path);
    let (tx, rx) = mpsc::unbounded_channel();
    let (status_tx, status) = watch::channel(SyncStatus::default());
    let (notice_tx, notices) = mpsc::unbounded_channel();
    let worker = Worker {
        rec: Reconciler::new(config.reconciler.clone()),
        scope: remote.scope(),
        cfg: config,
        remote,
        outbox,
        cache,
        status_tx,
        notices: notice_tx,
        link: Link::Online,
        backoff: Duration::ZERO,
        next_attempt: None,
        license_checked: Instant::now(),
        last_error: None,
        shown: None,
        requests: 0,
        want_flush: true,
        want_fetch: None,
        single_writes: false,
    };
    tokio::spawn(worker.run(rx));
    Ok((SyncHandle { tx, status }, notices))
}

struct Worker<R> {
    cfg: WorkerConfig,
    remote: Arc<R>,
    outbox: Outbox,
    cache: Cache,
    rec: Reconciler,
    scope: Option<Scope>,
    status_tx: watch::Sender<SyncStatus>,
    notices: mpsc::UnboundedSender<Notice>,
    link: Link,
    backoff: Duration,
    next_attempt: Option<Instant>,
    license_checked: Instant,
    last_error: Option<String>,
    shown: Option<crate::sync::worker::Shown>,
    requests: u64,
    want_flush: bool,
    want_fetch: Option<(PlaybackId, BookId)>,
    /// The server has no batch endpoint (404): progress goes one by one.
    single_writes: bool,
}

impl<R: Remote> Worker<R> {
    async fn run(mut self, mut rx: mpsc::UnboundedReceiver<Command>) {
        let mut tick = tokio::time::interval(self.cfg.tick);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        self.drive().await;
        self.publish();
        loop {
            tokio::select! {
                cmd = rx.recv() => match cmd {
                    Some(Command::Quit { timeout, reply }) => {
                        let s = self.quit(timeout).await;
                        let _ = reply.send(s);
                        return;
                    }
                    Some(Command::Settle { reply }) => {
                        self.drive().await;
                        self.publish();
                        let _ = reply.send(());
                    }
                    Some(cmd) => self.command(cmd).await,
                    None => {
                        self.quit(Duration::from_secs(2)).await;
                        return;
                    }
                },
                _ = tick.tick() => self.on_tick().await,
            }
            self.drive().await;
            self.publish();
        }
    }

    fn blocked(&self) -> bool {
        matches!(
            self.link,
            Link::NeedsLogin { .. } | Link::LicenseBlocked { .. }
        )
    }

    async fn command(&mut self, cmd: Command) {
        match cmd {
            Command::Event(e) => self.event(e),
            Command::Queue { book, op } => {
                if let Op::SettingsWrite(s) = &op
                    && let Some(scope) = &self.scope
                {
                    let settings = PlaybackSettings {
                        speed: s.speed,
                        volume: s.volume,
                        client_updated_at: Some(s.client_updated_at),
                    };
                    self.cache.set_settings(scope, &book, &settings);
                }
                if let (Op::SettingsDelete, Some(scope)) = (&op, &self.scope) {
                    self.cache.clear_settings(scope, &book);
                }
                self.queue(book, op);
            }
            Command::SessionChanged => {
                self.scope = self.remote.scope();
                if matches!(self.link, Link::NeedsLogin { .. }) {
                    self.link = Link::Online;
                }
                self.next_attempt = None;
                self.want_flush = true;
            }
            Command::RecheckLicense => self.check_license().await,
            Command::Flush => {
                self.next_attempt = None;
                self.want_flush = true;
            }
            Command::PushHeld { reply } => {
                let n = match &self.scope {
                    Some(scope) => self.outbox.adopt(scope, now_millis()).unwrap_or_else(|e| {
                        self.fail_local(e);
                        0
                    }),
                    None => 0,
                };
                self.next_attempt = None;
                self.want_flush = true;
                let _ = reply.send(n);
            }
            Command::DiscardHeld { reply } => {
                let held: Vec<u64> = match &self.scope {
                    Some(scope) => self.outbox.held(scope).iter().map(|e| e.seq).collect(),
                    None => Vec::new(),
                };
                let mut n = 0;
                for seq in held {
                    if self.outbox.complete(seq).unwrap_or(false) {
                        n += 1;
                    }
                }
                let _ = reply.send(n);
            }
            Command::Quit { .. } | Command::Settle { .. } => unreachable!("handled in run"),
        }
    }

    fn event(&mut self, mut e: Event) {
        if let Event::BookOpened {
            playback,
            book,
            local,
            ..
        } = &mut e
        {
            if local.is_none()
                && let Some(scope) = &self.scope
            {
                *local = self.cache.progress(scope, book);
            }
            // Send what is queued first, so the server merges it, then ask.
            self.want_flush = true;
            self.want_fetch = Some((*playback, book.clone()));
        }
        let ds = self.rec.handle(e, now_millis());
        self.decide(ds);
    }

    fn decide(&mut self, ds: Vec<Decision>) {
        for d in ds {
            match d {
                Decision::Report(w) => {
                    if let Some(scope) = self.scope.clone() {
                        self.cache.set_progress(
                            &scope,
                            &w.book,
                            &w.spot,
                            w.finished,
                            w.client_updated_at,
                        );
                    }
                    let op = Op::ProgressWrite(QueuedProgress {
                        chapter_id: w.spot.chapter,
                        position_sec: w.spot.position,
                        finished: w.finished,
                        reset: w.reset,
                        client_updated_at: w.client_updated_at,
                    });
                    self.queue(w.book, op);
                }
                Decision::Display {
                    book,
                    spot,
                    finished,
                    source,
                } => {
                    self.shown = Some(Shown {
                        book,
                        spot,
                        finished,
                        source,
                    })
                }
                Decision::LoadAt { playback, spot } => {
                    self.notify(Notice::LoadAt { playback, spot });
                }
                Decision::Choose {
                    book,
                    server,
                    local,
                } => self.notify(Notice::Choose {
                    book,
                    server,
                    local,
                }),
                Decision::FlushThenFetch { book } => {
                    self.want_flush = true;
                    if let Some((p, b)) = self.rec.current_playback()
                        && *b == book
                    {
                        self.want_fetch = Some((p, book));
                    }
                }
            }
        }
    }

    /// Journals the change (fsync) before any network call.
    fn queue(&mut self, book: BookId, op: Op) {
        let Some(scope) = self.scope.clone() else {
            self.last_error = Some("not logged in: the change is kept on this device".into());
            return;
        };
        if let Err(e) = self.outbox.push(scope, book, op, now_millis()) {
            self.fail_local(e);
        }
        self.want_flush = true;
    }

    fn fail_local(&mut self, e: OutboxError) {
        tracing::error!("sync outbox: {e}");
        self.last_error = Some(e.to_string());
    }

    fn notify(&self, n: Notice) {
        let _ = self.notices.send(n);
    }

    async fn on_tick(&mut self) {
        let ds = self.rec.handle(Event::Tick, now_millis());
        self.decide(ds);
        if matches!(self.link, Link::LicenseBlocked { .. })
            && self.license_checked.elapsed() >= self.cfg.license_poll
        {
            self.check_license().await;
        }
        // Retries wait for the back-off inside `flush`.
        if !self.outbox.is_empty() {
            self.want_flush = true;
        }
    }

    /// Runs pending flushes and fetches (bounded: each may trigger more).
    async fn drive(&mut self) {
        for _ in 0..4 {
            if self.want_flush {
                self.want_flush = false;
                self.flush().await;
            }
            if let Some((playback, book)) = self.want_fetch.take() {
                self.fetch(playback, book).await;
            }
            if !self.want_flush && self.want_fetch.is_none() {
                break;
            }
        }
        if let Err(e) = self.cache.save() {
            tracing::warn!("progress cache: {e}");
        }
    }

    fn backing_off(&self) -> bool {
        self.next_attempt.is_some_and(|t| Instant::now() < t)
    }

    async fn flush(&mut self) {
        if self.blocked() || self.backing_off() {
            return;
        }
        let Some(scope) = self.scope.clone() else {
            return;
        };
        let entries: Vec<_> = self.outbox.in_scope(&scope).into_iter().cloned().collect();
        if entries.is_empty() {
            return;
        }
        let (progress, others): (Vec<_>, Vec<_>) = entries
            .into_iter()
            .partition(|e| matches!(e.op, Op::ProgressWrite(_)));
        if self.single_writes {
            for e in &progress {
                let Op::ProgressWrite(p) = &e.op else {
                    continue;
                };
                self.requests += 1;
                match self.remote.write_progress(&e.book, p).await {
                    Ok(merged) => {
                        self.reachable();
                        self.done(e.seq);
                        if let Some(p) = merged {
                            self.server_said(&e.book, p);
                        }
                    }
                    Err(f) => {
                        if !self.item_failed(e.seq, &e.book, f) {
                            return;
                        }
                    }
                }
            }
        }
        let progress = if self.single_writes {
            Vec::new()
        } else {
            progress
        };
        for chunk in progress.chunks(BATCH_MAX) {
            let items: Vec<(BookId, QueuedProgress)> = chunk
                .iter()
                .filter_map(|e| match &e.op {
                    Op::ProgressWrite(p) => Some((e.book.clone(), p.clone())),
                    _ => None,
                })
                .collect();
            self.requests += 1;
            match self.remote.write_progress_batch(&items).await {
                Ok(results) => {
                    self.reachable();
                    for (entry, result) in chunk.iter().zip(results) {
                        match result {
                            Ok(merged) => {
                                self.done(entry.seq);
                                if let Some(p) = merged {
                                    self.server_said(&entry.book, p);
                                }
                            }
                            Err(f) => {
                                if !self.item_failed(entry.seq, &entry.book, f) {
                                    return;
                                }
                            }
                        }
                    }
                }
                Err(Failure::NotFound(message)) => {
                    // A server without the batch endpoint: write one by one.
                    tracing::warn!("sync: no batch endpoint ({message}); writing books one by one");
                    self.single_writes = true;
                    self.want_flush = true;
                    return;
                }
                Err(f) => return self.request_failed(f),
            }
        }
        for e in others {
            self.requests += 1;
            let r = match &e.op {
                Op::ProgressDelete => self.remote.delete_progress(&e.book).await,
                Op::SettingsWrite(s) => self.remote.write_settings(&e.book, s).await.map(|_| ()),
                Op::SettingsDelete => self.remote.delete_settings(&e.book).await,
                Op::FavoriteSet { favorite } => self.remote.set_favorite(&e.book, *favorite).await,
                Op::BookmarkCreate {
                    client_id,
                    chapter_id,
                    position_sec,
                    note,
                } => {
                    self.remote
                        .add_bookmark(
                            &e.book,
                            client_id,
                            chapter_id,
                            *position_sec,
                            note.as_deref(),
                        )
                        .await
                }
                Op::BookmarkDelete { bookmark_id } => {
                    self.remote.remove_bookmark(bookmark_id).await
                }
                Op::ProgressWrite(_) => unreachable!("partitioned above"),
            };
            match r {
                Ok(()) => {
                    self.reachable();
                    self.done(e.seq);
                }
                Err(f) => {
                    if !self.item_failed(e.seq, &e.book, f) {
                        return;
                    }
                }
            }
        }
    }

    fn done(&mut self, seq: u64) {
        if let Err(e) = self.outbox.complete(seq) {
            self.fail_local(e);
        }
    }

    /// The server's merged record of a book we wrote.
    fn server_said(&mut self, book: &BookId, p: crate::domain::Progress) {
        if let Some(scope) = self.scope.clone() {
            let spot = Spot::new(p.chapter_id.clone(), p.position);
            let at = p.client_updated_at.unwrap_or_else(now_millis);
            self.cache.set_progress(&scope, book, &spot, p.finished, at);
        }
        if let Some((playback, b)) = self.rec.current_playback()
            && b == book
        {
            let ds = self.rec.handle(
                Event::ServerProgress {
                    playback,
                    progress: Some(p),
                },
                now_millis(),
            );
            self.decide(ds);
        }
    }

    /// Handles one entry's failure. Returns false when flushing must stop.
    fn item_failed(&mut self, seq: u64, book: &BookId, f: Failure) -> bool {
        match f {
            Failure::NotFound(message) => {
                tracing::warn!(%book, "sync: dropping a queued write: {message}");
                self.done(seq);
                self.notify(Notice::Dropped {
                    book: book.clone(),
                    message,
                });
                true
            }
            Failure::Rejected { code, message } if code.as_deref() == Some("unknown_chapter") => {
                tracing::warn!(%book, "sync: dropping a queued write: {message}");
                self.done(seq);
                self.notify(Notice::Dropped {
                    book: book.clone(),
                    message,
                });
                true
            }
            Failure::Rejected { message, .. } | Failure::ScopeBug(message) => {
                tracing::error!(%book, "sync: the server refused a queued write (kept): {message}");
                self.last_error = Some(message);
                self.back_off();
                true
            }
            other => {
                self.request_failed(other);
                false
            }
        }
    }

    fn reachable(&mut self) {
        self.backoff = Duration::ZERO;
        self.next_attempt = None;
        if self.link == Link::Offline {
            self.link = Link::Online;
            self.last_error = None;
            let ds = self.rec.handle(Event::Online, now_millis());
            self.decide(ds);
        }
    }

    fn request_failed(&mut self, f: Failure) {
        self.last_error = Some(f.to_string());
        match f {
            Failure::Retry(_) => {
                self.link = Link::Offline;
                let ds = self.rec.handle(Event::Offline, now_millis());
                self.decide(ds);
                self.back_off();
            }
            Failure::Unauthorized(message) | Failure::ScopeMismatch(message) => {
                self.link = Link::NeedsLogin {
                    message: message.clone(),
                };
                self.notify(Notice::LoginRequired { message });
            }
            Failure::License(message) => self.license_blocked(message),
            Failure::ScopeBug(message) | Failure::Rejected { message, .. } => {
                tracing::error!("sync: request refused, writes kept: {message}");
                self.back_off();
            }
            Failure::NotFound(message) => {
                tracing::error!("sync: endpoint not found, writes kept: {message}");
                self.next_attempt = Some(Instant::now() + self.cfg.backoff_max);
            }
        }
    }

    fn back_off(&mut self) {
        self.backoff = (self.backoff * 2)
            .max(self.cfg.backoff_min)
            .min(self.cfg.backoff_max);
        self.next_attempt = Some(Instant::now() + self.backoff);
    }

    fn license_blocked(&mut self, message: String) {
        if !matches!(self.link, Link::LicenseBlocked { .. }) {
            self.notify(Notice::StopPlayback {
                message: message.clone(),
            });
        }
        self.link = Link::LicenseBlocked { message };
        self.license_checked = Instant::now();
    }

    async fn check_license(&mut self) {
        self.license_checked = Instant::now();
        self.requests += 1;
        match self.remote.license().await {
            Ok(None) => {
                if matches!(self.link, Link::LicenseBlocked { .. }) {
                    self.link = Link::Online;
                    self.last_error = None;
                    self.notify(Notice::LicenseRestored);
                    self.want_flush = true;
                }
            }
            Ok(Some(message)) => self.license_blocked(message),
            Err(f) => self.last_error = Some(f.to_string()),
        }
    }

    async fn fetch(&mut self, playback: PlaybackId, book: BookId) {
        let result = if self.blocked() {
            Err(Failure::Retry("sync is paused".into()))
        } else {
            self.requests += 1;
            self.remote.fetch(&book).await
        };
        let now = now_millis();
        match result {
            Ok(sb) => {
                self.reachable();
                if let Some(scope) = self.scope.clone() {
                    if let Some(p) = &sb.progress {
                        let spot = Spot::new(p.chapter_id.clone(), p.position);
                        let at = p.client_updated_at.unwrap_or(now);
                        self.cache
                            .set_progress(&scope, &book, &spot, p.finished, at);
                    }
                    if let Some(s) = &sb.settings
                        && !self.settings_queued(&scope, &book)
                    {
                        self.cache.set_settings(&scope, &book, s);
                    }
                }
                let ds = self.rec.handle(
                    Event::ServerProgress {
                        playback,
                        progress: sb.progress,
                    },
                    now,
                );
                self.decide(ds);
            }
            Err(f) => {
                if !self.blocked() {
                    self.request_failed(f);
                }
                let ds = self.rec.handle(Event::ServerFetchFailed { playback }, now);
                self.decide(ds);
            }
        }
        if let Some(scope) = &self.scope
            && let Some(settings) = self.cache.settings(scope, &book)
        {
            self.notify(Notice::ApplySettings { book, settings });
        }
    }

    fn settings_queued(&self, scope: &Scope, book: &BookId) -> bool {
        self.outbox
            .in_scope(scope)
            .iter()
            .any(|e| &e.book == book && matches!(e.op, Op::SettingsWrite(_)))
    }

    async fn quit(&mut self, timeout: Duration) -> QuitSummary {
        if let Some((playback, _)) = self.rec.current_playback() {
            let ds = self.rec.handle(
                Event::Action {
                    playback,
                    action: Action::Quit,
                },
                now_millis(),
            );
            self.decide(ds);
        }
        self.want_fetch = None;
        self.next_attempt = None;
        let timed_out = tokio::time::timeout(timeout, self.flush()).await.is_err();
        if let Err(e) = self.cache.save() {
            tracing::warn!("progress cache: {e}");
        }
        self.publish();
        QuitSummary {
            left: self.outbox.len(),
            timed_out,
        }
    }

    fn publish(&mut self) {
        let (queued, held) = match &self.scope {
            Some(s) => (self.outbox.in_scope(s).len(), self.outbox.held(s).len()),
            None => (0, self.outbox.len()),
        };
        let status = SyncStatus {
            link: self.link.clone(),
            queued,
            held,
            last_error: self.last_error.clone(),
            shown: self.shown.clone(),
            requests: self.requests,
        };
        self.status_tx.send_if_modified(|s| {
            if *s != status {
                *s = status;
                true
            } else {
                false
            }
        });
    }
}
