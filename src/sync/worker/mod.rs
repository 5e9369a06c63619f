//! The sync worker: one tokio task that selects over the front door's
//! commands, the engine's published states and a clock tick, feeds the
//! reconciler, journals every write in the outbox before sending it,
//! flushes progress through the batch endpoint, and handles each failure
//! the way the contract asks (`flush`). Opening books, reading the
//! server's place and what it asks of the engine (through the playback
//! owner) live in `playback`.

mod flush;
mod listening;
mod local;
mod playback;

use super::cache::Cache;
use super::client_remote::ClientRemote;
use super::engine_bridge::EngineBridge;
use super::engine_bridge::Heard;
use super::listening::Listening;
use super::outbox::{Op, Outbox, QueuedProgress, Scope};
use super::reconciler::{Action, Decision, Event, PlaybackId, Reconciler, ReconcilerConfig};
use super::remote::Failure;
use super::session::{
    Command, EngineAsk, EngineLink, Link, Notices, Playing, QuitSummary, Shown, SyncConfig,
    SyncNews, SyncStatus,
};
use crate::api::Client;
use crate::domain::session::{Event as Told, Said};
use crate::domain::{BookId, Stop, StopReason, now_millis};
use std::time::Duration;
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

/// Most items per batch request (the contract's server takes 1–100).
const BATCH_MAX: usize = 100;

/// Starts the worker on the current tokio runtime.
pub(super) fn spawn(
    config: SyncConfig,
    client: Option<Client>,
    engine: Option<EngineLink>,
    heard: watch::Receiver<Option<Heard>>,
) -> (
    mpsc::UnboundedSender<Command>,
    watch::Receiver<SyncStatus>,
    Notices,
) {
    let (notice_tx, notices) = mpsc::unbounded_channel();
    let news = |n: SyncNews| notice_tx.send(Told::Said(Said::Sync(n)));
    let (outbox, cache, listening) = match Outbox::open(&config.outbox_path) {
        Ok(o) => {
            let r = o.load_report();
            if r.corrupt_skipped > 0 || r.torn_tail_bytes > 0 {
                let _ = news(SyncNews::JournalDamaged {
                    recovered: r.records,
                    skipped: r.corrupt_skipped,
                });
            }
            let listening = Listening::open_in(config.listening_dir.as_deref());
            if let Some(n) = local::recovered(listening.recovered()) {
                let _ = news(n);
            }
            (o, Cache::load(&config.cache_path), listening)
        }
        Err(e) => {
            tracing::error!("sync: {e}; using an in-memory journal");
            let _ = news(local::open_failed(&e));
            (
                Outbox::in_memory(e.fault()),
                Cache::in_memory(&config.cache_path),
                Listening::open_in(None),
            )
        }
    };
    let (tx, rx) = mpsc::unbounded_channel();
    let (status_tx, status) = watch::channel(SyncStatus::default());
    let remote = ClientRemote::new(client);
    let worker = Worker {
        rec: Reconciler::new(ReconcilerConfig {
            report_interval_ms: config.report_interval.as_millis() as i64,
            prompt_threshold_secs: config.prompt_threshold_secs,
            headless: config.follow_server,
        }),
        scope: remote.scope(),
        cfg: config,
        remote,
        outbox,
        cache,
        listening,
        tally: Default::default(),
        status_tx,
        notices: notice_tx,
        engine,
        bridge: EngineBridge::new(),
        engine_now: None,
        opened: None,
        asked: (None, None),
        next_playback: 0,
        playing: None,
        link: Link::Online,
        last_reached: None,
        reconnect: Default::default(),
        license_checked: Instant::now(),
        last_error: None,
        shown: None,
        requests: 0,
        want_flush: true,
        want_fetch: None,
        single_writes: false,
        retry_at: Default::default(),
        forbidden: None,
        unsaved: None,
    };
    tokio::spawn(worker.run(rx, heard));
    (tx, status, notices)
}

/// A book opened for playback.
struct Opened {
    playback: PlaybackId,
    book: BookId,
    manifest: crate::domain::Manifest,
    start: super::session::StartAt,
    loaded: bool,
    /// Where the book was before it opened (the engine's place when it
    /// played it, else this device's last place): a restore elsewhere
    /// remembers it in the place history.
    before: Option<(crate::domain::ChapterId, f64)>,
    /// When this device last saved the book's place, before it opened.
    saved_at: Option<crate::domain::EpochMillis>,
}

struct Worker {
    cfg: SyncConfig,
    remote: ClientRemote,
    outbox: Outbox,
    cache: Cache,
    /// Place history and listening statistics of this device.
    listening: Listening,
    tally: super::listening::stats::Tally,
    rec: Reconciler,
    scope: Option<Scope>,
    status_tx: watch::Sender<SyncStatus>,
    notices: mpsc::UnboundedSender<Told>,
    engine: Option<EngineLink>,
    bridge: EngineBridge,
    /// The latest engine state the owner heard.
    engine_now: Option<Heard>,
    opened: Option<Opened>,
    /// Speed and volume last asked of the engine for the opened book.
    asked: (Option<f32>, Option<f32>),
    next_playback: u64,
    playing: Option<Playing>,
    link: Link,
    /// When the server last answered (quitting waits for it if recent).
    last_reached: Option<Instant>,
    /// While nothing answers: when the server is asked again.
    reconnect: crate::domain::backoff::Backoff,
    license_checked: Instant,
    last_error: Option<String>,
    shown: Option<Shown>,
    requests: u64,
    want_flush: bool,
    want_fetch: Option<(PlaybackId, BookId)>,
    /// The server has no batch endpoint (404): progress goes one by one.
    single_writes: bool,
    /// When each refused entry may be sent again.
    retry_at: std::collections::HashMap<u64, Instant>,
    /// A stream answered 403 without the license code: the license status
    /// decides whether it is a license stop or no permission.
    forbidden: Option<String>,
    /// Why the journal stopped taking changes (said once; cleared when it
    /// takes them again).
    unsaved: Option<(crate::durable::Fault, String)>,
}

impl Worker {
    async fn run(
        mut self,
        mut rx: mpsc::UnboundedReceiver<Command>,
        mut heard: watch::Receiver<Option<Heard>>,
    ) {
        let mut tick = tokio::time::interval(self.cfg.tick);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        self.drive().await;
        self.publish();
        loop {
            tokio::select! {
                cmd = rx.recv() => match cmd {
                    Some(Command::Quit { timeout, reply }) => {
                        self.latest_heard(&mut heard);
                        let s = self.quit(timeout).await;
                        // The journal's lock goes before the answer: a
                        // session started right after must get the file.
                        drop(self);
                        let _ = reply.send(s);
                        return;
                    }
                    Some(Command::Settle { reply }) => {
                        self.latest_heard(&mut heard);
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
                Ok(()) = heard.changed() => {
                    let h = heard.borrow_and_update().clone();
                    if let Some(h) = h {
                        self.engine_state(h);
                    }
                }
                _ = tick.tick(), if self.wants_tick() => self.on_tick().await,
            }
            self.drive().await;
            self.publish();
        }
    }

    /// Takes in what the owner heard last before acting on a barrier.
    fn latest_heard(&mut self, heard: &mut watch::Receiver<Option<Heard>>) {
        if heard.has_changed().unwrap_or(false)
            && let Some(h) = heard.borrow_and_update().clone()
        {
            self.engine_state(h);
        }
    }

    fn blocked(&self) -> bool {
        self.cfg.local_only
            || matches!(
                self.link,
                Link::NeedsLogin { .. } | Link::LicenseBlocked { .. }
            )
    }

    async fn command(&mut self, cmd: Command) {
        match cmd {
            Command::Open {
                book,
                manifest,
                start,
            } => self.open(book, manifest, start),
            Command::Chose { book, side } => {
                if let Some(o) = self.opened.as_ref().filter(|o| o.book == book) {
                    let playback = o.playback;
                    self.event(Event::Chose { playback, side });
                }
            }
            Command::MarkFinished { book, finished } => self.mark_finished(book, finished).await,
            Command::Settings { speed, volume } => self.settings(speed, volume),
            Command::Queue { book, op } => {
                if let (Op::SettingsDelete, Some(scope)) = (&op, &self.scope) {
                    self.cache.clear_settings(scope, &book);
                }
                self.queue(book, op);
            }
            Command::SessionChanged(client) => {
                self.remote = ClientRemote::new(client);
                self.scope = self.remote.scope();
                if matches!(self.link, Link::NeedsLogin { .. }) {
                    self.link = Link::Online;
                }
                self.reconnect = Default::default();
                self.want_flush = true;
            }
            Command::MarkPlace { book, mark } => self.mark_place(book, mark),
            Command::History { book, reply } => {
                let _ = reply.send(self.listening.history(&book));
            }
            Command::Stats { reply } => {
                let _ = reply.send(self.listening_stats());
            }
            Command::RecheckLicense => self.check_license().await,
            Command::Flush => {
                self.reconnect = Default::default();
                self.want_flush = true;
            }
            Command::Resume => self.resume(),
            Command::StreamRefused { license, message } => match license {
                true => self.license_blocked(message),
                // A 403 without the license code: a license stop only if
                // the license status says so (checked next round).
                false => self.forbidden = Some(message),
            },
            Command::ServerLost(message) => {
                if self.link == Link::Online && !self.blocked() && self.scope.is_some() {
                    self.request_failed(Failure::Retry(message));
                }
            }
            Command::Check => {
                self.reconnect = Default::default();
                self.want_flush = true;
                if let Some((playback, book)) = self.rec.current_playback() {
                    self.want_fetch = Some((playback, book.clone()));
                } else if self.link == Link::Offline {
                    self.probe().await;
                }
            }
            Command::Journal { op, reply } => {
                let _ = reply.send(self.journal(op));
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
            // Send what is queued first, so the server merges it, then ask
            // (a read started ahead of the open would not have seen it).
            if !self.outbox.is_empty() {
                self.remote.forget_prefetched(book);
            }
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
                    self.remember(&w);
                    let op = Op::ProgressWrite(QueuedProgress {
                        chapter_id: w.spot.chapter,
                        position_sec: w.spot.position,
                        finished: w.finished,
                        reset: w.reset,
                        client_updated_at: w.client_updated_at,
                    });
                    self.queue(w.book, op);
                }
                Decision::Hold(w) => self.remember(&w),
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
                Decision::LoadAt { playback, spot } => self.load_at(playback, spot),
                Decision::Choose {
                    book,
                    server,
                    local,
                } => self.notify(Told::Conflict {
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
                Decision::Resume { playback } => self.ask_if_ours(playback, EngineAsk::Play),
                Decision::Pause { playback } => self.ask_if_ours(playback, EngineAsk::Pause),
                Decision::Followed { book, spot } => {
                    self.said(Said::MovedToServer { book, to: spot })
                }
            }
        }
    }

    /// This device's last place for the book (the progress cache).
    fn remember(&mut self, w: &super::reconciler::ProgressWrite) {
        if let Some(scope) = &self.scope {
            self.cache
                .set_progress(scope, &w.book, &w.spot, w.finished, w.client_updated_at);
        }
    }

    /// Journals the change (fsync) before any network call.
    fn queue(&mut self, book: BookId, op: Op) {
        let Some(scope) = self.scope.clone() else {
            // Without a login there is no scope to tag the entry with, so
            // it cannot be journaled: say so instead of claiming it is kept.
            let message = "not logged in: the change was not saved (log in and try again)";
            tracing::warn!(%book, "sync: {message}");
            self.last_error = Some(message.into());
            self.said(Said::Dropped {
                book,
                why: message.into(),
            });
            return;
        };
        // Kept in memory when the journal cannot take it: sent all the same.
        local::kept!(self, push(scope, book, op, now_millis()));
        self.want_flush = true;
    }

    fn notify(&self, n: Told) {
        let _ = self.notices.send(n);
    }

    fn said(&self, s: Said) {
        self.notify(Told::Said(s));
    }

    fn news(&self, n: SyncNews) {
        self.said(Said::Sync(n));
    }

    /// Playback stops (the owner pauses the engine) for `reason`.
    fn stopped(&self, reason: StopReason, message: String) {
        self.notify(Told::Stopped(Stop::new(reason, message)));
    }

    /// The tick has work only while playing (periodic reports), while
    /// writes are queued, the server's place is awaited, the server is
    /// away (it is asked again), or the license blocks sync; otherwise the
    /// worker sleeps until a command or an engine state (an overdue tick
    /// then fires at once).
    fn wants_tick(&self) -> bool {
        self.rec.playing()
            || !self.outbox.is_empty()
            || self.rec.awaiting_server().is_some()
            || matches!(
                self.link,
                Link::LicenseBlocked { .. } | Link::Offline | Link::Throttled(_)
            )
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
        // A playback whose server progress is unknown keeps asking (this is
        // also how a reconnect is noticed when nothing is queued).
        if let Some((playback, book)) = self.rec.awaiting_server()
            && self.want_fetch.is_none()
            && !self.blocked()
            && !self.backing_off()
        {
            self.want_fetch = Some((playback, book.clone()));
        }
        // The server is away: ask it again after each back-off, through
        // the playing book's place (read on return anyway), else a ping.
        if self.link == Link::Offline
            && !self.blocked()
            && !self.backing_off()
            && self.scope.is_some()
        {
            match self.rec.current_playback() {
                Some((playback, book)) if self.want_fetch.is_none() => {
                    self.want_fetch = Some((playback, book.clone()));
                }
                None if self.outbox.is_empty() => self.probe().await,
                _ => {}
            }
        }
    }

    /// Runs pending flushes and fetches (bounded: each may trigger more).
    async fn drive(&mut self) {
        if let Some(message) = self.forbidden.take() {
            self.check_license().await;
            if !matches!(self.link, Link::LicenseBlocked { .. }) {
                self.stopped(StopReason::Forbidden, message);
            }
        }
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
        // The save blocks this thread (fsync): whoever this round woke
        // (the playback owner following a load) goes first.
        tokio::task::yield_now().await;
        if let Err(e) = self.cache.save() {
            tracing::warn!("progress cache: {e}");
        }
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
        self.save_listened();
        self.want_fetch = None;
        self.reconnect = Default::default();
        let deadline = Instant::now() + timeout;
        let timed_out = tokio::time::timeout(timeout, self.flush_to_quit(deadline))
            .await
            .is_err();
        if let Err(e) = self.cache.save() {
            tracing::warn!("progress cache: {e}");
        }
        self.publish();
        QuitSummary {
            left: self.outbox.len(),
            timed_out,
            in_memory: super::session::in_memory(&self.outbox.durability()),
            asked_to_wait: self.remote.throttled().and_then(|t| t.asked),
        }
    }

    fn publish(&mut self) {
        self.saved_again();
        self.throttle_shown();
        let (queued, refused, held) = match &self.scope {
            Some(s) => {
                let mine = self.outbox.in_scope(s);
                let refused = mine.iter().filter(|e| e.is_parked()).count();
                (mine.len() - refused, refused, self.outbox.held(s).len())
            }
            None => (0, 0, self.outbox.len()),
        };
        let status = SyncStatus {
            link: self.link.clone(),
            queued,
            refused,
            held,
            last_error: self.last_error.clone(),
            shown: self.shown.clone(),
            playing: self.playing.clone(),
            durability: self.outbox.durability(),
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
