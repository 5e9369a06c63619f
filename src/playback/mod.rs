//! The listening session's one owner, shared by the terminal player,
//! MPRIS, `earmark play` and `earmark ctl`: [`Playback`], a thin handle
//! over one task (the shape of ncspot's `Spotify` over its worker). Built
//! once from a [`Setup`], it starts the audio engine and sync's session,
//! and from then on it alone:
//! - takes every client's [`Command`] (`domain::session`): open a book
//!   (its download or the server's queue, chosen here), play, pause,
//!   seek, chapters, speed, volume, sound, the sleep timer, up next, the
//!   answer to a conflict;
//! - watches the engine and tells sync what it heard (sync never sees the
//!   engine), carries out what sync decides, follows the server to
//!   another of its addresses, keeps each book's sound;
//! - publishes one [`Snapshot`] (`watch`) and one stream of [`Event`]s.
//!
//! The engine handle never leaves this module. Every stop has one
//! vocabulary (`domain::StopReason`: an API call's and a chapter stream's
//! classified here by `stop`, a write's by sync, which sends it as the
//! session's event) and is acted on in one place: the engine pauses, sync
//! stops where the reason says so, the stop is published.
//!
//! - `owner`: the task that owns it all (its loop and commands);
//! - `opening`: a book opened (download or stream) or made ready;
//! - `heard`: the engine's states: the snapshot, sync, sleep, rewind;
//! - `news`: sync's notices and status, the stops;
//! - `up_next`: what plays when a book ends, and the countdown;
//! - `engine`: the engine, private: its start, and sync's asks as engine
//!   commands;
//! - `stop`: the one classification ([`StopReason`]) and the stream judge;
//! - `local`: the one stream resolver (downloads, then the login's
//!   stream), the downloads on disk and the index of downloaded mp3s;
//! - `address`: playback follows the server to another of its addresses;
//! - `settings`: each book's sound.
//!
//! Sits between `runtime`/`commands`/`ctl` and `offline`/`sync`.

mod address;
mod engine;
mod heard;
mod local;
mod news;
mod opening;
mod owner;
mod settings;
pub mod stop;
mod up_next;

pub use crate::domain::session::{Command, Event, Snapshot};
pub use crate::domain::{Stop, StopReason};
pub use engine::command_for;

use crate::api::{ApiError, Client};
use crate::config::{Dirs, ListeningRules, Profile, Session, SoundOwner};
use crate::domain::locks::{read, write};
use crate::domain::{BookId, ChapterId};
use crate::player::{AudioMode, EngineHandle};
use crate::sync::{QuitSummary, SyncConfig, SyncSession};
use std::sync::{Arc, RwLock};
use std::time::Duration;
use tokio::sync::{broadcast, mpsc, oneshot, watch};

/// A value the owner shares with the engine's threads, read at each use:
/// the current login's client (with the stream resolver and the judge: a
/// new login applies to the next stream without a restart), the address
/// the last stream came from.
#[derive(Clone)]
struct Shared<T>(Arc<RwLock<Option<T>>>);

impl<T> Default for Shared<T> {
    fn default() -> Self {
        Shared(Arc::default())
    }
}

impl<T: Clone> Shared<T> {
    fn get(&self) -> Option<T> {
        read(&self.0).clone()
    }

    fn set(&self, v: Option<T>) {
        *write(&self.0) = v;
    }
}

type CurrentClient = Shared<Client>;

/// Who plays: a login (or none) and where its sync keeps its files.
pub struct Login {
    pub client: Option<Client>,
    /// Whose books' sound (`sound.json`): the session's server and
    /// account, else the profile.
    pub who: SoundOwner,
    pub sync: SyncConfig,
    /// The login's session (its downloads and up next list are its
    /// server's and account's).
    pub session: Option<Session>,
}

impl Login {
    /// `profile`'s login with `session` (and its `client`), if any.
    pub fn of(profile: &Profile, session: Option<&Session>, client: Option<Client>) -> Login {
        Login {
            client,
            who: SoundOwner {
                login: session.map(Session::sound_login),
                profile: profile.name.clone(),
            },
            sync: SyncConfig::new(profile.sync_dir()),
            session: session.cloned(),
        }
    }
}

/// What the owner is built from.
pub struct Setup {
    /// config.toml (`[sound]`) and the data directory (`sound.json`,
    /// downloads, the up next list).
    pub dirs: Dirs,
    pub login: Login,
    pub audio: AudioMode,
    /// The sleep timer, smart rewind and up next (`[player]`, `[sleep]`).
    pub rules: ListeningRules,
    /// Make the book this device played last ready to resume (the player
    /// does; `earmark play` names its book).
    pub ready_last: bool,
}

/// What start-up expects to play, before the manifest is in.
#[derive(Debug, Clone, PartialEq)]
pub enum Expect {
    /// The chapter named (`earmark play --chapter`).
    Chapter(ChapterId),
    /// Resuming: this device's last known place names the chapter.
    Resume,
    /// Not known before the manifest (`--at` in its first chapter, a
    /// download): only the place is read ahead.
    Unknown,
}

/// What the owner's task takes: the clients' commands, and the owner's
/// own business (only [`Playback`] and sync's link send these).
// A few a keystroke: boxing would only add noise.
#[allow(clippy::large_enum_variant)]
enum Intent {
    Command(Command),
    /// Sync decided where the engine goes ([`EngineAsk`]).
    Ask(crate::sync::EngineAsk),
    Stop(Stop),
    LicenseValid,
    LogIn {
        login: Login,
        done: oneshot::Sender<()>,
    },
    /// Start-up: read the place and open the expected chapter's stream
    /// while the manifest is read.
    OpenAhead(BookId, Expect),
    /// A download was made or removed: look at the disk now.
    LookAtDownloads,
    Quit {
        timeout: Duration,
        reply: oneshot::Sender<QuitSummary>,
    },
}

/// One-off news from the owner; every client may subscribe.
pub type Events = broadcast::Receiver<Event>;

/// The handle: cheap to clone, usable from any thread, never blocks.
#[derive(Clone)]
pub struct Playback {
    tx: mpsc::UnboundedSender<Intent>,
    snapshot: watch::Receiver<Snapshot>,
    events: broadcast::Sender<Event>,
    sync: Arc<RwLock<SyncSession>>,
    /// The current login's client (`earmark ctl bookmark` writes with it).
    client: CurrentClient,
    /// Private: only for `first_audio_at`.
    engine: Option<EngineHandle>,
    no_audio: Option<String>,
}

impl Playback {
    /// Builds everything and starts the engine, sync's session and the
    /// owner's task on the current tokio runtime. Without an audio output
    /// the rest still runs ([`Playback::no_audio`] says why). The events
    /// returned are every event from the start.
    pub fn start(setup: Setup) -> (Playback, Events) {
        owner::start(setup)
    }

    /// What a client asks of the session.
    pub fn send(&self, c: Command) {
        self.intent(Intent::Command(c));
    }

    /// What is true now, published on every change.
    pub fn snapshot(&self) -> watch::Receiver<Snapshot> {
        self.snapshot.clone()
    }

    /// One-off news from now on.
    pub fn events(&self) -> Events {
        self.events.subscribe()
    }

    /// Start-up, before the manifest is in: reads `book`'s place and opens
    /// the stream of the chapter start-up expects (at its default address;
    /// the manifest's item takes it over when its request is the same,
    /// else it is dropped unused), so the manifest, the place and the
    /// stream's first bytes arrive together. Where playback starts is
    /// still sync's decision.
    pub fn open_ahead(&self, book: &BookId, expect: Expect) {
        self.intent(Intent::OpenAhead(book.clone(), expect));
    }

    /// An API call of a client failed: its stop, classified
    /// ([`stop::refused`]). A license refusal also stops playback and sync.
    pub fn refused(&self, e: &ApiError) -> Stop {
        let lost = |m| self.sync().server_lost(m);
        stop::refused(e, |m| self.license_invalid(m), lost)
    }

    /// The server's license status says it is not valid.
    pub fn license_invalid(&self, message: String) {
        self.intent(Intent::Stop(Stop::new(StopReason::License, message)));
    }

    /// The server's license status says it is valid: a license stop is
    /// over (and sync resumes now, not at its next poll).
    pub fn license_valid(&self) {
        self.intent(Intent::LicenseValid);
    }

    /// A new login (or a logout): the current sync session flushes and
    /// stops first (two sessions must never share a journal), then the
    /// next one starts; streams use the new client from now on.
    pub async fn log_in(&self, login: Login) {
        let (done, rx) = oneshot::channel();
        self.intent(Intent::LogIn { login, done });
        let _ = rx.await;
    }

    /// A client downloaded (or removed) a book: the owner looks at the
    /// disk now rather than at its next look.
    pub fn downloads_changed(&self) {
        self.intent(Intent::LookAtDownloads);
    }

    /// Sync's front door of the current login (its journal, history and
    /// statistics; the session's own commands go through [`Playback::send`]).
    pub fn sync(&self) -> SyncSession {
        read(&self.sync).clone()
    }

    /// The current login's API client, if logged in.
    pub fn client(&self) -> Option<Client> {
        self.client.get()
    }

    /// Why there is no audio output (playback is off then).
    pub fn no_audio(&self) -> Option<&str> {
        self.no_audio.as_deref()
    }

    /// When the first sample went to the output (start-up timing).
    pub fn first_audio_at(&self) -> Option<std::time::Instant> {
        self.engine.as_ref()?.first_audio_at()
    }

    /// Reports the last place and flushes within `timeout`, stops the
    /// engine, saves each book's sound. What was not sent stays queued.
    pub async fn quit(&self, timeout: Duration) -> QuitSummary {
        let (reply, rx) = oneshot::channel();
        self.intent(Intent::Quit { timeout, reply });
        match tokio::time::timeout(timeout + Duration::from_secs(2), rx).await {
            Ok(Ok(s)) => s,
            _ => self.sync().status().unanswered_quit(),
        }
    }

    fn intent(&self, i: Intent) {
        // A stopped owner has quit already; nothing to do.
        let _ = self.tx.send(i);
    }
}
