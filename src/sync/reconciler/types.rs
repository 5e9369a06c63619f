//! The reconciler's vocabulary: events in, decisions out.

use crate::domain::{BookId, EpochMillis, Manifest, Progress};

/// Identity of one playback session (one book opening). A new id is minted
/// for every opening, so a late event of a previous playback is ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PlaybackId(pub u64);

/// A place in a book.
pub use crate::domain::session::Place as Spot;

/// Progress as this device last knew it (cached on disk).
#[derive(Debug, Clone, PartialEq)]
pub struct LocalProgress {
    pub spot: Spot,
    pub finished: bool,
    pub updated_at: EpochMillis,
}

/// Tunables of the reconciler.
#[derive(Debug, Clone, PartialEq)]
pub struct ReconcilerConfig {
    /// Report at most this often while playing.
    pub report_interval_ms: i64,
    /// Server and local progress further apart than this prompt the user.
    pub prompt_threshold_secs: f64,
    /// Headless playback follows the server instead of prompting.
    pub headless: bool,
}

impl Default for ReconcilerConfig {
    fn default() -> Self {
        Self {
            report_interval_ms: 10_000,
            prompt_threshold_secs: 60.0,
            headless: false,
        }
    }
}

/// Transport and lifecycle actions of the listener.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    Play,
    Pause,
    Stop,
    /// The user sought to this place (the engine has yet to land there).
    Seek(Spot),
    /// The user (or the end of a chapter) moved to another chapter.
    ChapterChange(Spot),
    Quit,
    /// The engine played past the end of the last chapter.
    Ended,
}

/// Explicit user intents: the only way a position at the start of the book
/// may replace progress.
#[derive(Debug, Clone, PartialEq)]
pub enum Intent {
    RestartBook,
    MarkFinished,
    MarkUnfinished,
}

/// Which side the user picked in a "choose" prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Server,
    Local,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A book was opened for playback. `manifest` is the complete queue.
    BookOpened {
        playback: PlaybackId,
        book: BookId,
        manifest: Manifest,
        local: Option<LocalProgress>,
    },
    /// The server's progress for the current book (`None`: no record). Also
    /// sent after reconnecting and after a write was merged.
    ServerProgress {
        playback: PlaybackId,
        progress: Option<Progress>,
    },
    /// The server answered with a progress shape that could not be read:
    /// its place is unknown, which is not "no progress".
    ServerUnreadable {
        playback: PlaybackId,
    },
    /// Fetching the server's progress failed (offline, 5xx, …).
    ServerFetchFailed {
        playback: PlaybackId,
    },
    /// The engine's published position. `landed` is false while a seek or
    /// load is in flight.
    EnginePosition {
        playback: PlaybackId,
        spot: Spot,
        landed: bool,
    },
    /// The engine says its pending load or seek has completed here.
    EngineLanded {
        playback: PlaybackId,
        spot: Spot,
    },
    Action {
        playback: PlaybackId,
        action: Action,
    },
    Intent {
        playback: PlaybackId,
        intent: Intent,
    },
    /// The user answered a [`Decision::Choose`] prompt.
    Chose {
        playback: PlaybackId,
        side: Side,
    },
    /// The listener asked to play on after a pause (Space, a media key,
    /// after smart rewind): the server's place is read first.
    ResumeAsked {
        playback: PlaybackId,
    },
    /// The server answered one of this playback's writes: `applied` false
    /// means it kept its own record (newer, from another device).
    WriteAnswered {
        playback: PlaybackId,
        progress: Progress,
        applied: bool,
    },
    /// Periodic clock tick from the worker.
    Tick,
    Online,
    Offline,
}

/// One progress write to send (through the outbox).
#[derive(Debug, Clone, PartialEq)]
pub struct ProgressWrite {
    pub book: BookId,
    pub spot: Spot,
    pub finished: bool,
    /// An explicit user action: the server may move progress backwards.
    pub reset: bool,
    pub client_updated_at: EpochMillis,
}

/// Where a displayed value came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// Cached on this device, not yet confirmed by the server.
    LocalUnconfirmed,
    /// What the server returned.
    Server,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Queue this write (outbox) and send it.
    Report(ProgressWrite),
    /// Show this progress for the book.
    Display {
        book: BookId,
        spot: Spot,
        finished: bool,
        source: Source,
    },
    /// Load (or move) the engine to this place; nothing is reported until it
    /// has landed there.
    LoadAt { playback: PlaybackId, spot: Spot },
    /// Server and device disagree a lot: ask the user.
    Choose {
        book: BookId,
        server: Spot,
        local: Spot,
    },
    /// Send everything queued, then fetch the server's progress of `book`.
    FlushThenFetch { book: BookId },
    /// A place played before the server's progress is known (opened
    /// offline with nothing on this device): keep it on this device only,
    /// never send it. Once the server answers, the restore rules decide.
    Hold(ProgressWrite),
    /// The engine may play on (a resume the server's place did not stop).
    Resume { playback: PlaybackId },
    /// Pause the engine: a prompt about the place waits for the listener.
    Pause { playback: PlaybackId },
    /// The server kept a newer place than this device's and the player
    /// was moved there (with the `LoadAt` beside it): say so.
    Followed { book: BookId, spot: Spot },
}
