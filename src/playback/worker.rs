//! The owner's task: one tokio task that selects over the handle's
//! intents, the engine's published states, and the current sync session's
//! notices and status, so what happens to playback never travels through
//! a UI to reach the code that reacts to it. It is the one place that acts
//! on a stop.

use super::address::{self, Follow, StreamingFrom};
use super::settings::Sounds;
use super::{
    CurrentClient, Event, Intent, LocalIndex, Login, Now, Playback, Setup, Stop, StopReason,
    engine, local, settings, stop, write,
};
use crate::config::SoundBooks;
use crate::domain::BookId;
use crate::player::{EngineHandle, ErrorKind, PlaybackError, PlayerState, Status, mpa::SeekMaps};
use crate::sync::{
    EngineLink, LoginReason, Notice, Notices, Playing, QuitSummary, Records, SyncSession,
    SyncStatus,
};
use std::collections::HashSet;
use std::sync::{Arc, RwLock};
use std::time::Duration;
use tokio::sync::{mpsc, watch};

/// Builds the owner and spawns its worker (see [`Playback::start`]).
pub(super) fn start(setup: Setup) -> (Playback, super::Events) {
    let (events_tx, events) = mpsc::unbounded_channel();
    let say = |n: Notice| {
        let _ = events_tx.send(Event::Notice(n));
    };
    let client = CurrentClient::default();
    client.set(setup.login.client.clone());
    let downloads = Arc::new(RwLock::new(setup.downloads));
    let seek_maps = SeekMaps::default();
    let streaming = StreamingFrom::default();
    let (sound, warning) = settings::config_sound(&setup.dirs);
    if let Some(w) = warning {
        say(Notice::Info(w));
    }
    let started = engine::spawn(engine::Start {
        audio: setup.audio,
        resolve: local::resolver(downloads.clone(), client.clone(), streaming.clone()),
        client: client.clone(),
        seek_maps: seek_maps.clone(),
        sound,
    });
    let (engine, no_audio) = match started {
        Ok(e) => {
            if let Some(n) = e.notice() {
                say(Notice::Info(n.to_owned()));
            }
            (Some(e), None)
        }
        Err(e) => {
            let why = format!("No audio: {e}");
            say(Notice::Failed(why.clone()));
            (None, Some(why))
        }
    };
    let sounds = Sounds::new(SoundBooks::open(&setup.dirs.data), setup.login.who.clone());
    if let Some(why) = sounds.damaged() {
        say(Notice::Info(why));
    }
    let places = Arc::new(RwLock::new(Records::of(&setup.login.sync)));
    let link = engine.as_ref().map(engine::link);
    let (sync, notices) = SyncSession::start(setup.login.sync, setup.login.client, link.clone());
    let (status_tx, sync_status) = watch::channel(sync.status());
    let (now_tx, now) = watch::channel(Now::default());
    let (tx, rx) = mpsc::unbounded_channel();
    let sync = Arc::new(RwLock::new(sync));
    let follow = Follow::new(streaming, &client);
    let worker_client = client.clone();
    let worker = Worker {
        follow,
        engine: engine.clone(),
        link,
        sync: sync.clone(),
        notices: Some(notices),
        status: Some(super::read(&sync).watch()),
        status_out: status_tx,
        client,
        places: places.clone(),
        sounds,
        downloads: downloads.clone(),
        seek_maps,
        indexed: HashSet::new(),
        now: now_tx,
        events: events_tx,
        playing: None,
        opened: None,
        last_status: None,
        stopped: HashSet::new(),
        forbidden: false,
    };
    tokio::spawn(worker.run(rx));
    let playback = Playback {
        tx,
        now,
        sync_status,
        sync,
        downloads,
        engine,
        client: worker_client,
        places,
        no_audio,
    };
    (playback, events)
}

/// Where a stop was seen first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seen {
    /// Sync saw it (and stopped itself).
    Sync,
    /// The engine, or an API call of the caller.
    Elsewhere,
}

struct Worker {
    /// Playback follows the server to another of its addresses.
    follow: Follow,
    engine: Option<EngineHandle>,
    link: Option<EngineLink>,
    sync: Arc<RwLock<SyncSession>>,
    /// The current session's notices and status (`None` once it ended).
    notices: Option<Notices>,
    status: Option<watch::Receiver<SyncStatus>>,
    status_out: watch::Sender<SyncStatus>,
    client: CurrentClient,
    /// The current login's records (the last known places).
    places: Arc<RwLock<Records>>,
    sounds: Sounds,
    downloads: Arc<RwLock<LocalIndex>>,
    seek_maps: SeekMaps,
    /// Books whose downloaded mp3s were indexed in this run.
    indexed: HashSet<BookId>,
    now: watch::Sender<Now>,
    events: mpsc::UnboundedSender<Event>,
    /// The book the engine plays for sync, and its load.
    playing: Option<Playing>,
    /// The book opened last.
    opened: Option<BookId>,
    /// The engine's last status of the playing load.
    last_status: Option<Status>,
    /// The stops in force (a second path to the same stop is not news).
    stopped: HashSet<StopReason>,
    /// A stream's 403 without the license code: sync checks the license
    /// status and says which stop it is.
    forbidden: bool,
}

async fn next_state(states: &mut Option<watch::Receiver<PlayerState>>) -> Option<PlayerState> {
    match states {
        Some(rx) => match rx.changed().await {
            Ok(()) => Some(rx.borrow_and_update().clone()),
            Err(_) => None,
        },
        None => std::future::pending().await,
    }
}

async fn next_notice(notices: &mut Option<Notices>) -> Option<Notice> {
    match notices {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}

async fn next_status(status: &mut Option<watch::Receiver<SyncStatus>>) -> Option<SyncStatus> {
    match status {
        Some(rx) => match rx.changed().await {
            Ok(()) => Some(rx.borrow_and_update().clone()),
            Err(_) => None,
        },
        None => std::future::pending().await,
    }
}

impl Worker {
    async fn run(mut self, mut rx: mpsc::UnboundedReceiver<Intent>) {
        let mut states = self.engine.as_ref().map(EngineHandle::subscribe);
        loop {
            tokio::select! {
                i = rx.recv() => match i {
                    Some(Intent::Quit { timeout, reply }) => {
                        let s = self.quit(timeout).await;
                        let _ = reply.send(s);
                        return;
                    }
                    Some(i) => self.intent(i).await,
                    None => {
                        self.quit(Duration::from_secs(2)).await;
                        return;
                    }
                },
                s = next_state(&mut states) => match s {
                    Some(s) => self.engine_state(s),
                    None => states = None,
                },
                n = next_notice(&mut self.notices) => match n {
                    Some(n) => self.notice(n),
                    None => self.notices = None,
                },
                s = next_status(&mut self.status) => match s {
                    Some(s) => self.sync_status(s),
                    None => self.status = None,
                },
                s = address::next_switch(&mut self.follow.switches) => match s {
                    Some(()) => self.reopen_if_moved(),
                    None => self.follow.switches = None,
                },
                Some(()) = self.follow.look.recv() => self.reopen_if_moved(),
            }
        }
    }

    fn sync(&self) -> SyncSession {
        super::read(&self.sync).clone()
    }

    fn say(&self, e: Event) {
        let _ = self.events.send(e);
    }

    async fn intent(&mut self, i: Intent) {
        match i {
            Intent::Open {
                book,
                manifest,
                start,
            } => self.open(book, manifest, start),
            Intent::Control(c) => self.control(c),
            Intent::Stop(s) => self.stop(s, Seen::Elsewhere),
            Intent::LicenseValid => {
                self.sync().recheck_license();
                self.license_restored();
            }
            Intent::LogIn { login, done } => {
                self.log_in(login).await;
                let _ = done.send(());
            }
            Intent::Quit { .. } => unreachable!("handled in run"),
        }
    }

    fn open(
        &mut self,
        book: BookId,
        manifest: crate::domain::Manifest,
        start: crate::sync::StartAt,
    ) {
        // A new playback: what stopped the last one is past (the license
        // stays until it is valid again).
        self.stopped.retain(|r| *r == StopReason::License);
        self.forbidden = false;
        let sound = self.sounds.opening(self.engine.as_ref(), &book);
        self.now
            .send_modify(|n| n.sound = Some((book.clone(), sound)));
        if !self.indexed.contains(&book)
            && let Some(d) = super::read(&self.downloads).complete(&book)
        {
            local::index_mp3s(d, &self.seek_maps);
            self.indexed.insert(book.clone());
        }
        if start == crate::sync::StartAt::Resume {
            self.resume_ahead(&book, &manifest);
        }
        self.opened = Some(book.clone());
        self.sync().open(book, manifest, start);
    }

    /// Resuming: the chapter this device last knew is opened ahead (its
    /// manifest item, so a download resolves to its file and opens
    /// nothing) while sync reads the server's place: one round trip for
    /// both where the place is the same.
    fn resume_ahead(&self, book: &BookId, manifest: &crate::domain::Manifest) {
        if self.playing.as_ref().is_some_and(|p| p.book == *book) {
            // Its stream is open already.
            return;
        }
        let (Some(e), Some(client)) = (&self.engine, self.client.get()) else {
            return;
        };
        let Some(chapter) = super::resume_ahead(&self.places, &client, book) else {
            return;
        };
        if let Some(item) = manifest.items.iter().find(|i| i.chapter_id == chapter) {
            engine::open_ahead(e, item.clone());
        }
    }

    fn control(&mut self, c: super::Control) {
        use super::Control;
        match c {
            // Saved per book by sync, which asks the engine for them.
            Control::Speed(s) => self.sync().settings_changed(Some(s), None),
            Control::Volume(v) => self.sync().settings_changed(None, Some(v)),
            Control::Sound(s) => {
                let book = self.opened.clone();
                if let Some(now) = self.sounds.changed(self.engine.as_ref(), book.as_ref(), s)
                    && let Some(book) = book
                {
                    self.now.send_modify(|n| n.sound = Some((book, now)));
                }
            }
            Control::Toggle => {
                let Some(e) = &self.engine else { return };
                match e.state().status {
                    Status::Playing | Status::Buffering | Status::Stalled => {
                        engine::control(e, Control::Pause)
                    }
                    // Sync reads the server's place, then asks to play.
                    _ => self.sync().resume(),
                }
            }
            c => {
                if let Some(e) = &self.engine {
                    engine::control(e, c);
                }
            }
        }
    }

    /// The one place a stop is acted on: the engine pauses where it is,
    /// sync stops where the reason says so, and the stop is published.
    fn stop(&mut self, stop: Stop, seen: Seen) {
        if !self.stopped.insert(stop.reason) {
            return;
        }
        self.forbidden = false;
        if let Some(e) = &self.engine {
            engine::pause(e);
        }
        // Sync checks the license itself and stops all its requests.
        if stop.reason == StopReason::License && seen != Seen::Sync {
            self.sync().recheck_license();
        }
        self.say(Event::Stopped(stop));
    }

    fn notice(&mut self, n: Notice) {
        match n {
            Notice::LicenseStopped { message } => {
                self.stop(Stop::new(StopReason::License, message), Seen::Sync)
            }
            Notice::LoginRequired { message, reason } => {
                let reason = match reason {
                    LoginReason::Expired => StopReason::Login,
                    LoginReason::ScopeChanged => StopReason::Scope,
                };
                self.stop(Stop::new(reason, message), Seen::Sync)
            }
            Notice::ScopeRefused { message, .. } => {
                self.stop(Stop::new(StopReason::Scope, message), Seen::Sync)
            }
            // Sync's verdict on a stream's 403 without the license code:
            // the license status is valid, so it is no permission.
            Notice::Failed(message) if self.forbidden => {
                self.stop(Stop::new(StopReason::Forbidden, message), Seen::Sync)
            }
            Notice::LicenseRestored => self.license_restored(),
            other => self.say(Event::Notice(other)),
        }
    }

    /// The license stop in force is over: said once, whoever saw it first
    /// (sync's poll, or a valid status the caller read).
    fn license_restored(&mut self) {
        if self.stopped.remove(&StopReason::License) {
            self.say(Event::Notice(Notice::LicenseRestored));
        }
    }

    fn sync_status(&mut self, s: SyncStatus) {
        if s.playing != self.playing {
            self.playing = s.playing.clone();
            self.last_status = None;
            let (book, saved_at) = match &self.playing {
                Some(p) => (Some(p.book.clone()), p.saved_at),
                None => (None, None),
            };
            self.now.send_modify(|n| {
                n.book = book;
                n.state = None;
                n.saved_at = saved_at;
            });
            // The engine may have published the new load already.
            if let Some(e) = &self.engine {
                self.engine_state(e.state());
            }
        }
        self.status_out.send_replace(s);
    }

    /// One published engine state: the playing load's goes out as [`Now`],
    /// with the book's sound; an error of it is a stop.
    fn engine_state(&mut self, s: PlayerState) {
        let Some(book) = self
            .playing
            .as_ref()
            .filter(|p| p.engine == s.playback_id)
            .map(|p| p.book.clone())
        else {
            return;
        };
        if self.last_status.as_ref() != Some(&s.status) {
            if let Status::Error(e) = &s.status {
                self.engine_failed(e);
            }
            if let (Status::Buffering | Status::Stalled, Some(e)) = (&s.status, &self.engine) {
                self.follow.waiting(e, &self.client, &s);
            }
            self.last_status = Some(s.status.clone());
        }
        let sound = self.sounds.follow(self.engine.as_ref(), &book, &s);
        self.now.send_modify(|n| {
            n.state = Some(s);
            n.sound = Some((book, sound));
        });
    }

    fn engine_failed(&mut self, e: &PlaybackError) {
        let reason = stop::of_engine(e.kind);
        if reason == StopReason::Network {
            // The stream found the server away: sync shows it offline.
            self.sync().server_lost(e.to_string());
        }
        match e.kind {
            // Sync reads the license status and says which stop it is.
            ErrorKind::Forbidden => self.forbidden = true,
            ErrorKind::LicenseRequired => {
                self.stop(Stop::new(reason, e.message.clone()), Seen::Elsewhere)
            }
            _ => self.stop(Stop::new(reason, e.to_string()), Seen::Elsewhere),
        }
    }

    fn reopen_if_moved(&mut self) {
        if let Some(e) = &self.engine {
            self.follow.reopen_if_moved(e, &self.client);
        }
    }

    async fn log_in(&mut self, login: Login) {
        self.sync().quit(Duration::from_secs(3)).await;
        self.client.set(login.client.clone());
        self.follow.login(&self.client);
        self.sounds.who = login.who;
        *write(&self.places) = Records::of(&login.sync);
        let (session, notices) = SyncSession::start(login.sync, login.client, self.link.clone());
        self.status = Some(session.watch());
        self.notices = Some(notices);
        self.status_out.send_replace(session.status());
        *write(&self.sync) = session;
        self.stopped.clear();
        self.forbidden = false;
    }

    async fn quit(&mut self, timeout: Duration) -> QuitSummary {
        // The last place is written before the engine stops.
        let summary = self.sync().quit(timeout).await;
        if let Some(e) = &self.engine {
            engine::shutdown(e);
        }
        self.sounds.save();
        summary
    }
}
