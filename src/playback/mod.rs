//! The playback session's one owner, shared by the terminal player and
//! `earmark play`: [`Playback`], a thin handle over one worker task (the
//! shape of ncspot's `Spotify` over its worker). Built once from a
//! [`Setup`], it builds the stream resolver and the seek maps, starts the
//! audio engine and sync's session, and from then on:
//! - takes the listener's intents: [`Playback::open`], [`Playback::control`]
//!   (toggle, seek, skip, chapters, speed, volume, sound, …; playing on
//!   after a pause goes through sync's `resume`, which reads the server's
//!   place first),
//!   [`Playback::log_in`], [`Playback::quit`]; sync's bookkeeping (finished,
//!   history, conflicts, queued favorites) through [`Playback::sync`];
//! - publishes one `watch` of what is playing now ([`Now`]: the book, the
//!   engine's state of its load, its sound) for the player, MPRIS and
//!   `earmark play`, and one stream of [`Event`]s: sync's notices, and every
//!   stop ([`Stop`]) with its one reason.
//!
//! The engine handle never leaves this module. Every stop is decided here
//! from one classification (`stop`), whether it came from an API call, a
//! chapter stream or a write of sync, and acted on in one place: the engine
//! pauses, sync stops where the reason says so, the stop is published.
//!
//! - `engine`: the engine, private; every engine command is built there.
//! - `stop`: the one classification ([`StopReason`]) and the stream judge.
//! - `local`: the one stream resolver (downloads, then the login's stream)
//!   and the index of downloaded mp3s.
//! - `address`: playback follows the server to another of its addresses.
//! - `settings`: each book's speed, volume and sound.
//! - `worker`: the task that owns it all.
//! - `up_next`: what `earmark play --up-next` plays when the book ends.
//!
//! Sits between `runtime`/`commands` and `offline`.

mod address;
mod engine;
mod local;
mod settings;
pub mod stop;
pub mod up_next;
mod worker;

pub use crate::domain::{Stop, StopReason};
pub use engine::command_for;
pub use local::LocalIndex;
pub use settings::SoundNow;

use crate::api::{ApiError, Client};
use crate::config::{Dirs, Profile, Session, SoundOwner};
use crate::domain::{BookId, ChapterId, EpochMillis, Manifest, SoundSettings};
use crate::offline::Download;
use crate::player::{AudioMode, EngineHandle, PlayerState};
use crate::sync::{Notice, QuitSummary, Records, StartAt, SyncConfig, SyncSession, SyncStatus};
use std::sync::{Arc, RwLock};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot, watch};

/// Locks are taken one way everywhere: a panic elsewhere while holding one
/// leaves data that is still whole (every write replaces a value), so a
/// poisoned lock is used as it is.
fn read<T>(l: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(|e| e.into_inner())
}

fn write<T>(l: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(|e| e.into_inner())
}

/// The current login's client, shared with the stream resolver and the
/// judge: a new login applies to the next stream without a restart.
#[derive(Clone, Default)]
struct CurrentClient(Arc<RwLock<Option<Client>>>);

impl CurrentClient {
    fn get(&self) -> Option<Client> {
        read(&self.0).clone()
    }

    fn set(&self, c: Option<Client>) {
        *write(&self.0) = c;
    }
}

/// Who plays: a login (or none) and where its sync keeps its files.
pub struct Login {
    pub client: Option<Client>,
    /// Whose books' sound (`sound.json`): the session's server and
    /// account, else the profile.
    pub who: SoundOwner,
    pub sync: SyncConfig,
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
        }
    }
}

/// What the owner is built from.
pub struct Setup {
    /// config.toml (`[sound]`) and the data directory (`sound.json`).
    pub dirs: Dirs,
    pub login: Login,
    pub audio: AudioMode,
    /// The complete downloads a chapter may play from.
    pub downloads: LocalIndex,
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

/// The one answer to "which chapter will resuming `book` play?" before
/// the server says: this device's last known place (sync's progress
/// cache, saved after each of its rounds). Its stream is opened ahead
/// while the server's place is read; contract rule 7 still decides where
/// playback starts, and a stream the `Load` does not ask for is dropped
/// unplayed. Opened at the chapter's head, not at the place's byte: a new
/// process keeps no head or index of the stream, and the head (its Xing
/// TOC, or the frames a CBR guess is made from) is what the landing's one
/// request is computed from, so the landing costs that request and no
/// probe. `None`: nothing known here (as without this).
fn resume_ahead(places: &RwLock<Records>, client: &Client, book: &BookId) -> Option<ChapterId> {
    read(places).last_place(client, book).map(|s| s.chapter)
}

/// What the listener asks of playback.
#[derive(Debug, Clone, PartialEq)]
pub enum Control {
    /// Pause, or play on after a pause once sync has read the server's
    /// place (contract rule 7: it may ask the listener first).
    Toggle,
    Pause,
    /// Stop playback and drop the queue.
    Stop,
    /// ± media seconds, across chapters.
    SkipBy(f64),
    NextChapter,
    PrevChapter,
    Seek {
        chapter: ChapterId,
        position: f64,
    },
    /// Applied, and saved for the opened book.
    Speed(f32),
    /// Applied, and saved for the opened book.
    Volume(f32),
    /// The sleep timer's fade (and its restore): applied, never saved.
    Fade(f32),
    /// Boost, normalisation, skip silence: applied and kept for the book.
    Sound(SoundSettings),
}

/// What is playing now.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Now {
    /// The book the engine plays for sync (from its load on).
    pub book: Option<BookId>,
    /// The engine's state of that book's load, once the engine took it.
    pub state: Option<PlayerState>,
    /// Opened to resume: when its place was last saved, here or by
    /// another device (smart rewind after a break).
    pub saved_at: Option<EpochMillis>,
    /// The book opened last, and its sound.
    pub sound: Option<(BookId, SoundNow)>,
}

/// One-off news from the owner.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// Sync's notices (conflict prompts, progress changed, dropped or
    /// refused changes, information), and the owner's own information and
    /// failures. The stops among sync's notices come as [`Event::Stopped`].
    Notice(Notice),
    /// Playback stopped, and sync where the reason says so (license: all
    /// of it; login and scope: its writes).
    Stopped(Stop),
}

pub type Events = mpsc::UnboundedReceiver<Event>;

/// What the worker does; only [`Playback`] sends these.
enum Intent {
    Open {
        book: BookId,
        manifest: Manifest,
        start: StartAt,
    },
    Control(Control),
    Stop(Stop),
    LicenseValid,
    LogIn {
        login: Login,
        done: oneshot::Sender<()>,
    },
    Quit {
        timeout: Duration,
        reply: oneshot::Sender<QuitSummary>,
    },
}

/// The handle: cheap to clone, usable from any thread, never blocks.
#[derive(Clone)]
pub struct Playback {
    tx: mpsc::UnboundedSender<Intent>,
    now: watch::Receiver<Now>,
    sync_status: watch::Receiver<SyncStatus>,
    sync: Arc<RwLock<SyncSession>>,
    downloads: Arc<RwLock<LocalIndex>>,
    /// Private: only for `first_audio_at` and `open_ahead`.
    engine: Option<EngineHandle>,
    /// The current login's client (start-up's reads ahead).
    client: CurrentClient,
    /// The current login's records (the last known places).
    places: Arc<RwLock<Records>>,
    no_audio: Option<String>,
}

impl Playback {
    /// Builds everything and starts the engine, sync's session and the
    /// worker on the current tokio runtime. Without an audio output the
    /// rest still runs ([`Playback::no_audio`] says why).
    pub fn start(setup: Setup) -> (Playback, Events) {
        worker::start(setup)
    }

    /// Opens `book` to play: its sound first, then sync loads the engine
    /// once the place is known (or the user chose it).
    pub fn open(&self, book: BookId, manifest: Manifest, start: StartAt) {
        self.send(Intent::Open {
            book,
            manifest,
            start,
        });
    }

    /// Start-up, before the manifest is in: reads `book`'s place and opens
    /// the stream of the chapter start-up expects (at its default address;
    /// the manifest's item takes it over when its request is the same,
    /// else it is dropped unused), so the manifest, the place and the
    /// stream's first bytes arrive together. Where playback starts is
    /// still sync's decision.
    pub fn open_ahead(&self, book: &BookId, expect: Expect) {
        let Some(client) = self.client.get() else {
            return;
        };
        client.prefetch_progress(book);
        let chapter = match expect {
            Expect::Chapter(c) => Some(c),
            Expect::Resume => resume_ahead(&self.places, &client, book),
            Expect::Unknown => None,
        };
        if let (Some(chapter), Some(e)) = (chapter, &self.engine) {
            let item = crate::domain::ManifestItem {
                chapter_id: chapter,
                title: String::new(),
                duration: None,
                duration_source: Default::default(),
                url: None,
                mime_type: None,
                size_bytes: None,
                start: 0.0,
                end: None,
            };
            engine::open_ahead(e, item);
        }
    }

    pub fn control(&self, c: Control) {
        self.send(Intent::Control(c));
    }

    /// An API call of the caller failed: its stop, classified. A license
    /// refusal also stops playback and sync here.
    pub fn refused(&self, e: &ApiError) -> Stop {
        let stop = stop::stop_of_api(e);
        if stop.reason == StopReason::License {
            self.send(Intent::Stop(stop.clone()));
        }
        if e.is_retryable() {
            // The server is away: sync shows it and asks it until it is back.
            self.sync().server_lost(e.to_string());
        }
        stop
    }

    /// The server's license status says it is not valid.
    pub fn license_invalid(&self, message: String) {
        self.send(Intent::Stop(Stop::new(StopReason::License, message)));
    }

    /// The server's license status says it is valid: a license stop is
    /// over (and sync resumes now, not at its next poll).
    pub fn license_valid(&self) {
        self.send(Intent::LicenseValid);
    }

    /// A new login (or a logout): the current sync session flushes and
    /// stops first (two sessions must never share a journal), then the
    /// next one starts; streams use the new client from now on.
    pub async fn log_in(&self, login: Login) {
        let (done, rx) = oneshot::channel();
        self.send(Intent::LogIn { login, done });
        let _ = rx.await;
    }

    /// Replaces the downloads a chapter may play from.
    pub fn set_downloads(&self, index: LocalIndex) {
        *write(&self.downloads) = index;
    }

    /// The download of `book`, complete or not.
    pub fn download(&self, book: &BookId) -> Option<Download> {
        read(&self.downloads).get(book).cloned()
    }

    /// Every download, complete or not.
    pub fn downloads(&self) -> Vec<Download> {
        read(&self.downloads).books().to_vec()
    }

    /// Sync's front door of the current login.
    pub fn sync(&self) -> SyncSession {
        read(&self.sync).clone()
    }

    /// What is playing now.
    pub fn now(&self) -> watch::Receiver<Now> {
        self.now.clone()
    }

    /// Sync's status, across logins.
    pub fn sync_status(&self) -> watch::Receiver<SyncStatus> {
        self.sync_status.clone()
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
        self.send(Intent::Quit { timeout, reply });
        match tokio::time::timeout(timeout + Duration::from_secs(2), rx).await {
            Ok(Ok(s)) => s,
            _ => QuitSummary {
                left: self.sync_status.borrow().queued,
                timed_out: true,
                durability: self.sync_status.borrow().durability.clone(),
            },
        }
    }

    fn send(&self, i: Intent) {
        // A stopped worker has quit already; nothing to do.
        let _ = self.tx.send(i);
    }
}
