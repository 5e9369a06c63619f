//! The front door of sync: [`SyncSession`]. The playback owner
//! (`crate::playback`, shared by the player and `earmark play`) hands it
//! the API client and an [`EngineLink`]; it follows the engine's published
//! states itself, decides where a book opens (restore, conflict prompt),
//! asks the owner to load the engine there ([`EngineAsk`]), reports through
//! the durable outbox, and tells what happened through one stream of the
//! session's own [`Event`]s and a published [`SyncStatus`]. Sending never
//! blocks. What this device keeps (queued changes, place history,
//! statistics) is read without a worker through [`super::Records`].

use super::outbox::Op;
use super::reconciler::Side;
use crate::api::Client;
use crate::domain::EpochMillis;
use crate::domain::session::Event;
use crate::domain::{BookId, ChapterId, ListeningStats, Manifest, PlaceMark};
use crate::durable::Durability;
use std::path::PathBuf;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot, watch};

pub use super::engine_bridge::{EngineAsk, EngineLink, Heard, LoadId};
pub use super::reconciler::{Side as Choice, Source, Spot};

/// Tunables; [`SyncConfig::new`] has the defaults.
#[derive(Debug, Clone)]
pub struct SyncConfig {
    pub outbox_path: PathBuf,
    pub cache_path: PathBuf,
    /// The place history and listening statistics (`None`: kept in memory).
    pub listening_dir: Option<PathBuf>,
    /// Report at most this often while playing.
    pub report_interval: Duration,
    /// Server and device further apart than this prompt the user.
    pub prompt_threshold_secs: f64,
    /// Follow the server instead of prompting (`earmark play`).
    pub follow_server: bool,
    /// Never talk to the server: a session that only looks at the journal
    /// and drops from it (`earmark sync discard`).
    pub local_only: bool,
    /// How often the worker wakes up (periodic reports, retries).
    pub tick: Duration,
    /// The link's back-off while nothing answers (the server is asked
    /// again after each step; `domain::backoff::Ladder`), and the first
    /// step of a refused change's.
    pub backoff_min: Duration,
    /// Its cap: the server's return is noticed within this.
    pub backoff_max: Duration,
    /// How often the license is re-checked while it blocks sync.
    pub license_poll: Duration,
}

impl SyncConfig {
    /// Defaults, with the outbox and cache in `data_dir` (see
    /// `config::Profile::sync_dir`).
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        let dir = data_dir.into();
        Self {
            outbox_path: dir.join("outbox.journal"),
            cache_path: dir.join("progress-cache.json"),
            listening_dir: Some(dir.clone()),
            report_interval: report_interval_from_env(),
            prompt_threshold_secs: 60.0,
            follow_server: false,
            local_only: false,
            tick: Duration::from_millis(500),
            backoff_min: Duration::from_secs(1),
            backoff_max: Duration::from_secs(5),
            license_poll: Duration::from_secs(30),
        }
    }
}

/// Names the report interval for a whole process, in ms: a soak that runs
/// the null output N times faster than real time reports every 10 s / N,
/// so the server sees as many writes per minute of media as in real use.
const REPORT_INTERVAL_ENV: &str = "EARMARK_REPORT_INTERVAL_MS";

/// `EARMARK_REPORT_INTERVAL_MS` when it is a whole number ≥ 1, else 10 s.
fn report_interval_from_env() -> Duration {
    let default = Duration::from_secs(10);
    let Ok(v) = std::env::var(REPORT_INTERVAL_ENV) else {
        return default;
    };
    match v.trim().parse::<u64>() {
        Ok(ms) if ms >= 1 => Duration::from_millis(ms),
        _ => {
            tracing::warn!(
                "{REPORT_INTERVAL_ENV}={v:?} is not a whole number of ms ≥ 1; reporting every 10 s"
            );
            default
        }
    }
}

/// Where an opened book starts: the session's own choice.
pub use crate::domain::session::Start as StartAt;

/// The worker's connection to the server.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Link {
    #[default]
    Online,
    /// Unreachable or failing: writes are queued and retried.
    Offline,
    /// The server answered but asked to be left alone (429, 503): writes
    /// are queued and sent when its back-off allows.
    Throttled(crate::domain::backoff::Throttle),
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

/// The book the engine plays for sync, and the engine's id for that load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Playing {
    pub book: BookId,
    pub engine: LoadId,
    /// Opened to resume: when the place it resumes was last saved (here or
    /// by another device), so smart rewind can tell how long the break was.
    pub saved_at: Option<EpochMillis>,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct SyncStatus {
    pub link: Link,
    /// Entries waiting to be sent to the current scope.
    pub queued: usize,
    /// Entries of the current scope the server refused again and again,
    /// set aside until the user retries or discards them.
    pub refused: usize,
    /// Entries of another server instance or account, held for the user.
    pub held: usize,
    pub last_error: Option<String>,
    pub shown: Option<Shown>,
    pub playing: Option<Playing>,
    /// Whether queued changes are on the disk, and if not why (another
    /// earmark holds the journal, the disk is full or read-only, …).
    pub durability: Durability,
    /// Requests made to the server (diagnostics).
    pub requests: u64,
}

impl SyncStatus {
    /// The queued changes are on the disk.
    pub fn durable(&self) -> bool {
        self.durability == Durability::Durable
    }

    /// Why the queued changes are only in memory (`None`: on the disk).
    pub fn in_memory(&self) -> Option<String> {
        in_memory(&self.durability)
    }

    /// What a quit left when it was not answered in time: what is queued.
    pub fn unanswered_quit(&self) -> QuitSummary {
        QuitSummary {
            left: self.queued,
            timed_out: true,
            in_memory: self.in_memory(),
            asked_to_wait: None,
        }
    }
}

pub use crate::domain::session::{QuitSummary, SyncNews};

/// Why queued changes are only in memory (`None`: on the disk).
pub(super) fn in_memory(d: &Durability) -> Option<String> {
    match d {
        Durability::Durable => None,
        Durability::Memory(why) => Some(why.to_string()),
    }
}

/// What the worker does; only [`SyncSession`] sends these.
#[derive(Debug)]
pub(super) enum Command {
    Open {
        book: BookId,
        manifest: Manifest,
        start: StartAt,
    },
    Chose {
        book: BookId,
        side: Side,
    },
    MarkFinished {
        book: BookId,
        finished: bool,
    },
    Settings {
        speed: Option<f32>,
        volume: Option<f32>,
    },
    Queue {
        book: BookId,
        op: Op,
    },
    SessionChanged(Option<Client>),
    /// The place before a jump the listener made.
    MarkPlace {
        book: BookId,
        mark: PlaceMark,
    },
    History {
        book: BookId,
        reply: oneshot::Sender<Vec<PlaceMark>>,
    },
    Stats {
        reply: oneshot::Sender<ListeningStats>,
    },
    RecheckLicense,
    Flush,
    /// Play on after a pause, once the server's place allows it.
    Resume,
    /// A stream was refused: by the license code, or a 403 without it
    /// (the license status decides which stop it is).
    StreamRefused {
        license: bool,
        message: String,
    },
    /// A request outside sync found the server unreachable.
    ServerLost(String),
    /// Read the server again now (the listener refreshed).
    Check,
    /// A change to the journal; the reply says how many it moved.
    Journal {
        op: JournalOp,
        reply: oneshot::Sender<usize>,
    },
    Settle {
        reply: oneshot::Sender<()>,
    },
    Quit {
        timeout: Duration,
        reply: oneshot::Sender<QuitSummary>,
    },
}

/// `earmark sync push | retry | discard` and the player's retry and
/// discard of refused changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JournalOp {
    /// Held entries move to the current scope and are sent.
    PushHeld,
    DiscardHeld,
    /// The refused (set aside) entries are sent again.
    RetryRefused,
    DiscardRefused,
    /// Every queued change, of any scope.
    DiscardAll,
}

/// What sync tells whoever draws (the player, `earmark play`), as the
/// session's own events: a conflict to ask about (answer with
/// [`SyncSession::chose`]), a stop (the license, a login, the identity
/// scope, no permission: playback pauses), the license's return, a
/// progress changed or a place marked off the playing book, and what it
/// kept or could not keep (`Said`).
pub type Notices = mpsc::UnboundedReceiver<Event>;

/// Cheap to clone; usable from any thread.
#[derive(Debug, Clone)]
pub struct SyncSession {
    tx: mpsc::UnboundedSender<Command>,
    status: watch::Receiver<SyncStatus>,
    /// What the owner heard last from the engine: the latest state wins,
    /// as the engine's own publishing does.
    heard: std::sync::Arc<watch::Sender<Option<Heard>>>,
}

impl SyncSession {
    /// Starts the worker on the current tokio runtime. When the journal
    /// cannot be opened, the same rules run over an in-memory journal and
    /// the first notice says so.
    pub fn start(
        config: SyncConfig,
        client: Option<Client>,
        engine: Option<EngineLink>,
    ) -> (SyncSession, Notices) {
        let (heard, heard_rx) = watch::channel(None);
        let (tx, status, notices) = super::worker::spawn(config, client, engine, heard_rx);
        let heard = std::sync::Arc::new(heard);
        (SyncSession { tx, status, heard }, notices)
    }

    fn send(&self, cmd: Command) {
        // A stopped worker has flushed already; nothing to do.
        let _ = self.tx.send(cmd);
    }

    /// Sends the command `c` makes and waits for its reply (`None`: the
    /// worker stopped).
    async fn ask<T>(&self, c: impl FnOnce(oneshot::Sender<T>) -> Command) -> Option<T> {
        let (reply, rx) = oneshot::channel();
        self.send(c(reply));
        rx.await.ok()
    }

    /// Changes the journal; returns how many changes it moved or dropped.
    pub async fn journal(&self, op: JournalOp) -> usize {
        let n = self.ask(|reply| Command::Journal { op, reply }).await;
        n.unwrap_or(0)
    }

    /// Opens `book` for playback; the engine is loaded once the place is
    /// known (or the user chose it).
    pub fn open(&self, book: BookId, manifest: Manifest, start: StartAt) {
        self.send(Command::Open {
            book,
            manifest,
            start,
        });
    }

    /// The user's answer to [`Event::Conflict`].
    pub fn chose(&self, book: BookId, choice: Choice) {
        self.send(Command::Chose { book, side: choice });
    }

    /// Mark a book (playing or not) finished or unfinished.
    pub fn mark_finished(&self, book: BookId, finished: bool) {
        self.send(Command::MarkFinished { book, finished });
    }

    /// The user changed the speed or volume: asked of the engine and saved
    /// for the opened book.
    pub fn settings_changed(&self, speed: Option<f32>, volume: Option<f32>) {
        self.send(Command::Settings { speed, volume });
    }

    /// A favorite change the server could not take now: kept and sent later.
    pub fn queue_favorite(&self, book: BookId, favorite: bool) {
        self.send(Command::Queue {
            book,
            op: Op::FavoriteSet { favorite },
        });
    }

    /// A bookmark the server could not take now: kept and sent later
    /// (`client_id` makes the later create idempotent).
    pub fn queue_bookmark(
        &self,
        book: BookId,
        client_id: String,
        chapter: ChapterId,
        position: f64,
        note: Option<String>,
    ) {
        self.send(Command::Queue {
            book,
            op: Op::BookmarkCreate {
                client_id,
                chapter_id: chapter,
                position_sec: position,
                note,
            },
        });
    }

    /// Records the place before a jump the listener made (this device's
    /// place history; the jump itself reaches sync through the engine).
    pub fn mark_place(&self, book: BookId, mark: PlaceMark) {
        self.send(Command::MarkPlace { book, mark });
    }

    /// A book's place history on this device, oldest first.
    pub async fn history(&self, book: BookId) -> Vec<PlaceMark> {
        let marks = self.ask(|reply| Command::History { book, reply }).await;
        marks.unwrap_or_default()
    }

    /// This device's listening statistics (what was listened until now).
    pub async fn stats(&self) -> ListeningStats {
        let stats = self.ask(|reply| Command::Stats { reply }).await;
        stats.unwrap_or_default()
    }

    /// A new login (or a logout): sync continues in the new scope.
    pub fn session_changed(&self, client: Option<Client>) {
        self.send(Command::SessionChanged(client));
    }

    /// Re-check the license now (a 403 was seen, or the user asked).
    pub fn recheck_license(&self) {
        self.send(Command::RecheckLicense);
    }

    /// Send what is queued now, ignoring the back-off.
    pub fn flush(&self) {
        self.send(Command::Flush);
    }

    /// The listener asked to play on after a pause: the server's place is
    /// read first (contract rule 7), then the owner is asked to play
    /// ([`EngineAsk::Play`]), or the listener to choose.
    pub fn resume(&self) {
        self.send(Command::Resume);
    }

    /// One state of the engine, as the owner heard it (sync never watches
    /// the engine itself).
    pub fn heard(&self, h: Heard) {
        self.heard.send_replace(Some(h));
    }

    /// A chapter stream was refused with the license code (`license`), or
    /// with a 403 without it: sync checks the license status to tell a
    /// license stop from no permission.
    pub fn stream_refused(&self, license: bool, message: String) {
        self.send(Command::StreamRefused { license, message });
    }

    /// A request outside sync found the server unreachable: sync shows
    /// it offline and keeps asking it until it answers.
    pub fn server_lost(&self, message: String) {
        self.send(Command::ServerLost(message));
    }

    /// Read the server now: send what is queued, read the playing book's
    /// place (a newer one asks the listener), and, offline, try it again.
    pub fn check(&self) {
        self.send(Command::Check);
    }

    pub fn status(&self) -> SyncStatus {
        self.status.borrow().clone()
    }

    /// A receiver that wakes when the status changes.
    pub fn watch(&self) -> watch::Receiver<SyncStatus> {
        self.status.clone()
    }

    /// Waits until every command sent before was handled (and what it
    /// queued was attempted).
    pub async fn settle(&self) {
        self.ask(|reply| Command::Settle { reply }).await;
    }

    /// Reports the last place, flushes within `timeout`, and stops. What
    /// was not sent stays in the outbox for the next start.
    pub async fn quit(&self, timeout: Duration) -> QuitSummary {
        let (reply, rx) = oneshot::channel();
        self.send(Command::Quit { timeout, reply });
        match tokio::time::timeout(timeout + Duration::from_secs(1), rx).await {
            Ok(Ok(s)) => s,
            _ => self.status().unanswered_quit(),
        }
    }
}
