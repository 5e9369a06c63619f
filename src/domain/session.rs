//! A listening session as every client of it sees it. The player's keys,
//! MPRIS, `earmark play` and `earmark ctl` send [`Command`]s to the one
//! session owner (`crate::playback`) and read what it publishes: one
//! [`Snapshot`] (what is true now) and one stream of [`Event`]s (what
//! happened once). Plain data: the owner decides, each client words it.
//!
//! ```text
//!  keys ─┐                       ┌─ engine (player::Engine)
//!  MPRIS ┼─ Command ─▶ owner ────┼─ sync (outbox, link, reconciler)
//!  ctl ──┤             │         └─ downloads, up next list, sound
//!  play ─┘             └─▶ Snapshot (watch) + Event (stream) ─▶ every client
//! ```

use super::sleep::{SleepChoice, SleepNews, SleepTimer};
use super::{
    Book, BookId, ChapterId, EpochMillis, JumpCause, Manifest, Next, Opening, PlaceMark, Progress,
    Queued, SoundSettings, Stop, UpNextMode,
};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Where an opened book starts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Start {
    /// The server's place (else this device's, else the start); contract
    /// rule 7 decides, and may ask the listener first.
    Resume,
    /// The start of the book: an explicit intent, sent with `reset`.
    Restart,
    /// A place the listener picked: an explicit seek, which may move the
    /// saved place backwards.
    At(ChapterId, f64),
    /// This far into the first chapter (`earmark play --at` without a
    /// chapter: the owner knows the chapters once it read the book).
    First(f64),
}

impl Start {
    /// A chapter named (at `at`, else its start), or `at` in the first
    /// chapter; neither: resume (`earmark play`'s and `ctl play`'s flags).
    pub fn of(chapter: Option<ChapterId>, at: Option<f64>) -> Start {
        match (chapter, at) {
            (Some(c), at) => Start::At(c, at.unwrap_or(0.0)),
            (None, Some(at)) => Start::First(at),
            (None, None) => Start::Resume,
        }
    }
}

/// What the listener (or a script) asks of the session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Command {
    /// Open `book` at `start`. The owner plays its download when it is
    /// complete and current (or the server is away), else the server's
    /// queue. `known`: the book and manifest a screen already read from
    /// the server (saves a round trip; the owner still checks them
    /// against a download).
    Open {
        book: BookId,
        start: Start,
        known: Option<Box<(Book, Manifest)>>,
    },
    /// Pause, or play: the book of the session, opened if it is only
    /// ready; playing on after a pause reads the server's place first.
    Toggle,
    Play,
    Pause,
    /// ± seconds of media from the current place, across chapters.
    SkipBy(f64),
    /// A place in a chapter of the playing book; `cause` goes to the place
    /// history with the place it left.
    Seek {
        chapter: ChapterId,
        position: f64,
        cause: JumpCause,
    },
    /// The next chapter; in the last one (or after the end), up next.
    NextChapter,
    PrevChapter,
    /// The book's speed (0.5–3.0), saved for it.
    Speed(f32),
    /// The book's volume (0–1), saved for it.
    Volume(f32),
    /// Boost, normalisation, skip silence: kept for the book.
    Sound(SoundSettings),
    Sleep(SleepChoice),
    /// The extend key: more time, also while it fades or just stopped.
    SleepExtend,
    UpNext(UpNextCommand),
    /// The library a client read: up next works out a series' next book
    /// from it (without one it reads the server's when a book ends).
    Library(#[serde(with = "shared")] Arc<Vec<Book>>),
    /// The listener's answer to [`Event::Conflict`].
    Choose {
        book: BookId,
        keep: Keep,
    },
    MarkFinished {
        book: BookId,
        finished: bool,
    },
    /// Ask the server again now: what is queued goes out, the playing
    /// book's place is read (a newer one asks), an absent server is tried.
    Recheck,
    /// Write the current place now.
    Flush,
}

/// Which place to keep when this device and the server disagree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Keep {
    Server,
    Local,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum UpNextCommand {
    /// Go to the next book now (`n` in the last chapter, during the
    /// countdown, MPRIS Next at the end).
    Go,
    /// Cancel the countdown.
    Cancel,
    /// Put a book at the end of the list, or take it off when it is there.
    Toggle(Queued),
    /// Move a book earlier (negative) or later in the list.
    Shift { book: BookId, by: isize },
}

/// What the engine does with the session's book.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum PlayState {
    /// Not opened in this run: Space (or `ctl play`) resumes it where the
    /// server says.
    Ready,
    Loading,
    Playing,
    Paused,
    Buffering,
    Stalled,
    Ended,
    /// The engine's words for a failure (the stop comes as an event).
    Error(String),
}

impl PlayState {
    /// Audio comes out, or is about to (a toggle pauses).
    pub fn is_playing(&self) -> bool {
        matches!(
            self,
            PlayState::Playing | PlayState::Buffering | PlayState::Stalled
        )
    }

    pub fn name(&self) -> &'static str {
        match self {
            PlayState::Ready => "ready",
            PlayState::Loading => "loading",
            PlayState::Playing => "playing",
            PlayState::Paused => "paused",
            PlayState::Buffering => "buffering",
            PlayState::Stalled => "stalled",
            PlayState::Ended => "ended",
            PlayState::Error(_) => "error",
        }
    }
}

/// Whether the place shown is the place heard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Landing {
    /// A load or seek is on its way there.
    Pending,
    Exact,
    /// Estimated (an mp3 without an index): corrected once known.
    Approximate,
}

/// Where a chapter's length came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum LengthFrom {
    Server,
    /// The decoder counted it.
    Measured,
}

/// The book's sound now: its settings and what they did.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct SoundNow {
    pub settings: SoundSettings,
    /// Seconds of silence skip silence saved in this book, and in all.
    pub saved_book: f64,
    pub saved_total: f64,
    /// The normalisation gain applied now, while normalising.
    pub norm_gain_db: Option<f32>,
    /// Media seconds of silence skipped since this load.
    pub skipped_now: f64,
}

/// The session's book: playing, paused, or ready to resume.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Listening {
    #[serde(with = "shared")]
    pub book: Arc<Book>,
    #[serde(with = "shared")]
    pub manifest: Arc<Manifest>,
    pub chapter: ChapterId,
    /// Seconds into the chapter (media time).
    pub position: f64,
    pub duration: Option<f64>,
    pub duration_from: LengthFrom,
    /// Seconds into the book, when every earlier chapter's length is known.
    pub book_position: Option<f64>,
    pub state: PlayState,
    pub landed: Landing,
    /// The server holds this place (false: this device's, not confirmed).
    pub confirmed: bool,
    pub speed: f32,
    pub volume: f32,
    pub sound: SoundNow,
    /// Each load (open, restore, up next) has its own number.
    pub load: u64,
    /// The chapters play from this device's download.
    pub from_download: bool,
}

impl Listening {
    /// The chapter's index in the manifest.
    pub fn chapter_index(&self) -> Option<usize> {
        self.manifest.position_of(&self.chapter)
    }

    pub fn chapter_title(&self) -> Option<&str> {
        let i = self.chapter_index()?;
        self.manifest.items.get(i).map(|i| i.title.as_str())
    }

    /// (position, length) inside the chapter.
    pub fn chapter_progress(&self) -> (f64, Option<f64>) {
        (self.position, self.duration)
    }

    /// (position, length) in the whole book.
    pub fn book_progress(&self) -> (Option<f64>, Option<f64>) {
        let total = self.manifest.total_duration().or(self.book.duration);
        let at = self
            .book_position
            .or_else(|| self.manifest.book_position(&self.chapter, self.position));
        (at, total)
    }

    /// Chapter starts as fractions of the book, for tick marks.
    pub fn chapter_ticks(&self) -> Vec<f64> {
        let Some(total) = self.manifest.total_duration().filter(|t| *t > 0.0) else {
            return Vec::new();
        };
        let mut acc = 0.0;
        let mut ticks = Vec::new();
        for item in &self.manifest.items {
            if acc > 0.0 {
                ticks.push(acc / total);
            }
            acc += item.duration.unwrap_or(0.0);
        }
        ticks
    }

    /// Seconds of media to the chapter's end.
    pub fn chapter_left(&self) -> Option<f64> {
        self.duration.map(|d| (d - self.position).max(0.0))
    }
}

/// The server as the session last found it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub enum Link {
    #[default]
    Online,
    /// Unreachable: changes are queued; downloads play.
    Offline,
    /// The server said "slow down" (429, or 503 with Retry-After): what
    /// it asked waits for it.
    Throttled(super::backoff::Slowdown),
    /// 401 or 409: log in again (the words come with the stop).
    NeedsLogin,
    /// 403 `license_required`: playback and all sync stopped.
    LicenseStopped,
}

/// What sync keeps for the server.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Queue {
    /// Changes waiting to be sent.
    pub queued: usize,
    /// Changes the server refused again and again, set aside.
    pub refused: usize,
    /// Changes of another server instance or account.
    pub held: usize,
    /// `None`: on the disk; else why they are kept only in memory.
    pub not_durable: Option<String>,
}

/// A downloaded book.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Downloaded {
    Complete,
    Partial,
}

/// Up next: the list, what follows the session's book, the countdown.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct UpNextNow {
    pub mode: UpNextMode,
    pub list: Vec<Queued>,
    /// What plays after the session's book (`None`: nothing, or not
    /// worked out yet).
    pub next: Option<Next>,
    pub countdown: Option<Countdown>,
}

/// The next book, about to start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Countdown {
    pub next: Next,
    pub starts_at: EpochMillis,
    /// How it opens (decided by the server's own answer; `None` until then).
    pub opening: Option<Opening>,
}

/// Everything a client needs to draw the session, published on each change.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Snapshot {
    pub listening: Option<Listening>,
    pub link: Link,
    pub queue: Queue,
    pub sleep: Option<SleepTimer>,
    pub up_next: UpNextNow,
    /// This login's downloads on disk (also those another earmark made).
    #[serde(with = "shared")]
    pub downloads: Arc<BTreeMap<BookId, Downloaded>>,
    /// The stop in force (a license stop until the license is valid).
    pub stop: Option<Stop>,
    /// Why there is no audio output (playback is off then).
    pub no_audio: Option<String>,
}

impl Snapshot {
    /// Worth a client's redraw after `old`: anything but the place
    /// changed, or the place moved by `step` seconds (the player and an
    /// attached player thin the place's ticks with it).
    pub fn differs_from(&self, old: &Snapshot, step: f64) -> bool {
        let (Some(a), Some(b)) = (&old.listening, &self.listening) else {
            return old != self;
        };
        let mut moved = old.clone();
        if let Some(m) = &mut moved.listening {
            m.position = b.position;
            m.book_position = b.book_position;
        }
        moved != *self || (a.position - b.position).abs() >= step
    }

    /// Worth drawing after `last` (none: the first): anything but the
    /// place changed, or the place moved by 0.2 s (the player, and what
    /// the socket sends an attached player).
    pub fn worth_drawing(&self, last: Option<&Snapshot>) -> bool {
        last.is_none_or(|old| self.differs_from(old, 0.2))
    }

    /// The book plays from this device.
    pub fn playable_offline(&self, book: &BookId) -> bool {
        self.downloads.get(book) == Some(&Downloaded::Complete)
    }
}

/// A place in a book (sync's `Spot`; a prompt shows two).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Place {
    pub chapter: ChapterId,
    pub position: f64,
}

impl Place {
    pub fn new(chapter: impl Into<ChapterId>, position: f64) -> Self {
        Self {
            chapter: chapter.into(),
            position,
        }
    }
}

/// What the session says, as data (each client words it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Said {
    /// A command that needs a book while none is open or ready.
    NothingPlaying,
    /// The book is not downloaded and the server cannot be reached
    /// (`why`: what the request found).
    NotDownloaded {
        book: BookId,
        why: String,
    },
    /// Playing the download (`offline`: because the server is away).
    FromDownload {
        book: BookId,
        offline: bool,
    },
    /// The server's chapters changed since the download: it streams.
    DownloadOutdated {
        book: BookId,
    },
    Sleep(SleepNews),
    Rewound {
        back: f64,
        after: super::rewind::RewindAfter,
    },
    /// The server's newer place (another device's) won with no one to
    /// ask, or the server did not apply a write: playback moved there and
    /// this device's place went to the place history.
    MovedToServer {
        book: BookId,
        to: Place,
    },
    UpNextStarting {
        next: Next,
        opening: Opening,
    },
    /// Up next has nothing to play, and why.
    UpNextNone(UpNextWhy),
    /// The license is valid again: sync resumed.
    LicenseRestored,
    /// No audio output (its words): playback is off.
    NoAudio {
        why: String,
    },
    /// The book has no chapters to play.
    NoChapters {
        book: BookId,
    },
    /// `[sound]` of config.toml is wrong (its words): the defaults apply.
    SoundConfig {
        why: String,
    },
    /// sound.json could not be read: it was moved aside to `to`, and the
    /// defaults apply.
    SoundFileAside {
        to: String,
    },
    /// Up next could not read its list (`list`) or the library.
    UpNextUnread {
        list: bool,
        why: String,
    },
    /// Another earmark's download of this book finished meanwhile.
    DownloadAppeared {
        book: BookId,
    },
    /// A queued change was dropped (its book or chapter is gone).
    Dropped {
        book: BookId,
        why: String,
    },
    Sync(SyncNews),
    /// Something the session or the server reported, in their words.
    Info(String),
    Failed(String),
}

/// What sync kept or could not keep on this device, and what the server
/// made of a change, as data (clients word it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum SyncNews {
    /// The sync journal was damaged (a crash, a full disk).
    JournalDamaged { recovered: usize, skipped: usize },
    /// The place history and statistics likewise.
    HistoryDamaged { kept: usize, skipped: usize },
    /// Another earmark holds this profile's journal: changes are kept in
    /// memory only.
    JournalLocked,
    /// Changes (and, `history`, the listening history) cannot be saved on
    /// this device (the disk's words): kept in memory, sent while the
    /// server is reachable.
    NotSaved { history: bool, why: String },
    /// The journal takes changes again.
    SavedAgain,
    /// The place history cannot be saved (the disk's words): kept in
    /// memory until quitting.
    HistoryNotSaved { why: String },
    /// The server refused a change `times` times (its words): set aside.
    SetAside {
        book: BookId,
        times: u32,
        why: String,
    },
    /// A book could not be marked finished or unfinished.
    NotMarked(NotMarked),
    /// Offline: a change is kept here and sent when the server is back.
    KeptOffline,
    /// The server's place of `book` could not be read: nothing is reported
    /// until the listener picks a place.
    PlaceUnreadable { book: BookId },
}

/// Why a book could not be marked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum NotMarked {
    /// Its place on the server could not be read (earmark never writes
    /// over a place it cannot see).
    PlaceUnreadable,
    /// Offline, and this device does not know the place.
    OfflineUnknown,
    /// Its chapters could not be read.
    NoChapters,
}

/// What quitting achieved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuitSummary {
    /// Changes still queued: sent at the next start when they are on the
    /// disk, else lost.
    pub left: usize,
    pub timed_out: bool,
    /// Why they are only in memory (`None`: on the disk).
    pub in_memory: Option<String>,
    /// What the server asked to wait when quitting stopped short of it.
    pub asked_to_wait: Option<std::time::Duration>,
}

/// Why up next plays nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum UpNextWhy {
    Off,
    /// The list is empty and no book follows in the series.
    NothingFollows,
    /// The next book is not downloaded and the server is away.
    NotDownloaded,
}

/// One-off news.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Event {
    /// Ask the listener which place to keep; nothing is written meanwhile.
    Conflict {
        book: BookId,
        server: Place,
        local: Place,
    },
    /// Playback stopped (and sync, for a license) for one reason.
    Stopped(Stop),
    /// The progress of a book that is not the session's changed.
    ProgressChanged {
        book: BookId,
        progress: Progress,
    },
    /// The place before a jump went to the book's history.
    PlaceMarked {
        book: BookId,
        mark: PlaceMark,
    },
    Said(Said),
}

/// `known` for [`Command::Open`] from what a screen read.
pub fn known(book: Book, manifest: Manifest) -> Option<Box<(Book, Manifest)>> {
    Some(Box::new((book, manifest)))
}

/// An `Arc`'s value as its own (serde's `rc` feature, for these fields
/// only): the snapshot crosses `earmark ctl`'s socket to an attached player.
mod shared {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use std::sync::Arc;

    pub fn serialize<T: Serialize, S: Serializer>(v: &Arc<T>, s: S) -> Result<S::Ok, S::Error> {
        T::serialize(v, s)
    }

    pub fn deserialize<'de, T: Deserialize<'de>, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Arc<T>, D::Error> {
        T::deserialize(d).map(Arc::new)
    }
}
