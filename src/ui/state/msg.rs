//! What flows into the reducer (events) and out of it (effects). Effects
//! are requests to the backends; their answers come back as events.

use crate::domain::{
    Book, BookId, Bookmark, BookmarkId, Category, ChapterId, EpochMillis, LicenseStatus,
    ListeningStats, Manifest, PlaceMark, Progress, Stop,
};
use crate::ui::keymap::Key;
use std::fmt;

/// Monotonic milliseconds, from the event loop's clock.
pub type Millis = u64;

/// What the player adds when a new login helps.
pub const LOG_IN_AGAIN: &str = "Press P to log in again.";

// Messages move a few times per keystroke; boxing would only add noise.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    Key(Key),
    /// Text pasted into the terminal (bracketed paste).
    Paste(String),
    Mouse(Mouse),
    Resize(u16, u16),
    /// The clock moved; sent before other events of a wake-up.
    Tick(Millis),
    Answer(Answer),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mouse {
    Click { x: u16, y: u16 },
    ScrollUp,
    ScrollDown,
}

/// A password that never shows up in logs or Debug output.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct Password(String);

impl Password {
    pub fn new(s: impl Into<String>) -> Self {
        Password(s.into())
    }
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Password {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Password(***)")
    }
}

impl Drop for Password {
    fn drop(&mut self) {
        // Best effort: overwrite the bytes before the allocation is freed.
        // SAFETY: zero bytes are valid UTF-8.
        unsafe { self.0.as_bytes_mut() }.fill(0);
    }
}

/// Where to start playing a book.
#[derive(Debug, Clone, PartialEq)]
pub enum StartAt {
    /// Where the reconciler says (server progress, maybe a conflict prompt).
    Resume,
    /// The user chose a chapter (or a bookmark) explicitly.
    At(ChapterId, f64),
    /// Explicit restart from 0 (the intentional zero of the sync issue).
    Restart,
}

#[derive(Debug, Clone, PartialEq)]
pub enum EngineCmd {
    Toggle,
    Pause,
    /// Seconds of media time, signed.
    SkipBy(f64),
    NextChapter,
    PrevChapter,
    Seek {
        chapter: ChapterId,
        position: f64,
    },
    /// The listener changed the speed: applied and saved for the book.
    SetSpeed(f32),
    /// The listener changed the volume: applied and saved for the book.
    SetVolume(f32),
    /// The sleep timer's fade (and its restore): applied, never saved.
    FadeVolume(f32),
    /// Boost, normalisation, skip silence: applied and kept for the book.
    SetSound(crate::domain::SoundSettings),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConflictChoice {
    Server,
    Local,
}

// Messages move a few times per keystroke; boxing would only add noise.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    Login {
        address: String,
        user: String,
        password: Password,
        profile: Option<String>,
    },
    SwitchProfile(String),
    LoadLibrary,
    Search(String),
    LoadBook(BookId),
    /// Fetch, decode and encode a book's cover for the cover box
    /// (answered with `Answer::Cover`); `url` is the book's `coverUrl`.
    LoadCover {
        book: BookId,
        url: Option<String>,
    },
    /// Download (or resume, or update) a book for offline listening.
    Download(BookId),
    SetFavorite {
        book: BookId,
        favorite: bool,
    },
    AddBookmark {
        book: BookId,
        chapter: ChapterId,
        position: f64,
        note: Option<String>,
    },
    DeleteBookmark {
        book: BookId,
        id: BookmarkId,
    },
    LoadLicense,
    /// Send the changes the server refused (set aside) again.
    RetryRefused,
    /// Drop the changes the server refused (the user confirmed).
    DiscardRefused,
    Play {
        book: Book,
        manifest: Manifest,
        start: StartAt,
    },
    Engine(EngineCmd),
    SetFinished {
        book: BookId,
        finished: bool,
    },
    ResolveConflict {
        book: BookId,
        choice: ConflictChoice,
    },
    /// Write the current progress now (sleep timer fired, quitting).
    FlushProgress,
    /// Ask the server again now: what is queued goes out, the playing
    /// book's place is read (a newer one asks), an absent server is tried.
    Recheck,
    /// Remember the place before a jump (this device's place history).
    MarkPlace {
        book: BookId,
        mark: PlaceMark,
    },
    /// Read a book's place history (answered with `Answer::History`).
    LoadHistory(BookId),
    /// Read the listening statistics (answered with `Answer::Stats`).
    LoadStats,
    /// Read the login's play next list (answered with `Answer::UpNext`).
    LoadUpNext,
    /// Keep `account`'s play next list.
    SaveUpNext {
        account: crate::domain::Account,
        books: Vec<crate::domain::Queued>,
    },
    Quit,
}

/// Why a login failed, in the words the login screen shows.
#[derive(Debug, Clone, PartialEq)]
pub enum LoginError {
    Unreachable(String),
    HtmlPage(String),
    BadCredentials,
    LicenseRequired(String),
    Other(String),
}

impl fmt::Display for LoginError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoginError::Unreachable(a) => write!(
                f,
                "Cannot reach the server at {a}. Check the address and that the server is running."
            ),
            LoginError::HtmlPage(a) => write!(
                f,
                "The server at {a} answered with a web page, not the API. Check the address and gateway prefix."
            ),
            LoginError::BadCredentials => f.write_str("Wrong user name or password."),
            LoginError::LicenseRequired(m) => write!(f, "The server has no valid license: {m}"),
            LoginError::Other(m) => f.write_str(m),
        }
    }
}

/// Who we are logged in as.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionInfo {
    pub address: String,
    pub user: String,
    pub profile: Option<String>,
}

/// Engine state as the UI needs it (mirrors the engine's published state).
#[derive(Debug, Clone, PartialEq)]
pub struct EngineView {
    pub playback_id: u64,
    pub book: BookId,
    pub chapter: ChapterId,
    /// Seconds into the chapter, media time.
    pub position: f64,
    pub state: PlayState,
    pub speed: f32,
    pub volume: f32,
    /// `position` is the engine's estimate (a far seek it could not count),
    /// not yet the audio's true place.
    pub approximate: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub enum PlayState {
    Loading,
    Playing,
    Paused,
    Buffering,
    Stalled,
    Ended,
    Error(String),
}

/// What the sync worker tells about the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SyncView {
    pub offline: bool,
    pub syncing: bool,
    pub queued: usize,
    /// Changes the server refused again and again, set aside.
    pub refused: usize,
    /// The place shown is this device's, not yet confirmed by the server.
    pub unconfirmed: bool,
}

/// A position as the conflict prompt shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Position {
    pub chapter: ChapterId,
    pub position: f64,
}

// Messages move a few times per keystroke; boxing would only add noise.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// The playing book's sound settings and what skip silence saved.
    Sound(super::SoundView),
    Profiles {
        names: Vec<String>,
        current: Option<String>,
        address: String,
        user: String,
    },
    LoggedIn(SessionInfo),
    /// The server's address in use (a few words), when the profile lists
    /// several; `None` otherwise.
    Via(Option<String>),
    LoginFailed(LoginError),
    Library {
        books: Vec<Book>,
        from_cache: bool,
    },
    /// The first screenful of the cached library, while the rest loads.
    LibraryHead(Vec<Book>),
    /// One page of the server's library as it arrives (`first`: a new
    /// load starts); the whole list follows as `Library` when complete.
    LibraryPage {
        books: Vec<Book>,
        total: Option<u64>,
        first: bool,
    },
    /// The rest of the library could not be loaded (after retries): what
    /// arrived stays, and this says why.
    LibraryIncomplete(String),
    Categories(Vec<Category>),
    SearchResults {
        query: String,
        books: Vec<Book>,
    },
    BookLoaded {
        book: Book,
        manifest: Option<Manifest>,
        bookmarks: Vec<Bookmark>,
    },
    BookmarkAdded(Bookmark),
    BookmarkDeleted {
        book: BookId,
        id: BookmarkId,
    },
    FavoriteSet {
        book: BookId,
        favorite: bool,
    },
    ProgressChanged {
        book: BookId,
        progress: Progress,
    },
    License(LicenseStatus),
    /// Playback stopped (and sync, for a license), for one reason decided
    /// by the playback owner: a license refusal anywhere raises the banner,
    /// a login or scope problem asks to log in again, the rest is said.
    Stopped(Stop),
    /// A book opened to resume, and when its place was last saved (here
    /// or by another device): smart rewind after the break. Comes before
    /// the book's first engine view.
    Resumed {
        book: BookId,
        saved_at: EpochMillis,
    },
    Engine(EngineView),
    Sync(SyncView),
    Conflict {
        book: BookId,
        server: Position,
        local: Position,
    },
    /// A book's place history on this device, oldest first.
    History {
        book: BookId,
        marks: Vec<PlaceMark>,
    },
    /// Sync moved the place itself (a restore): where it was.
    PlaceMarked {
        book: BookId,
        mark: PlaceMark,
    },
    Stats(ListeningStats),
    /// A book's cover for the cover box; `None`: it has none, or it could
    /// not be fetched or read (the placeholder stays).
    Cover {
        book: BookId,
        image: Option<crate::ui::covers::CoverImage>,
    },
    /// The server is away: the book screen from the download's snapshot
    /// (`book` is only added when the library does not have it).
    BookFromDownload {
        book: Book,
        manifest: Manifest,
    },
    /// The downloads on disk (sent at start and after each download).
    Downloads(Vec<(BookId, crate::ui::state::DownloadMark)>),
    DownloadProgress {
        book: BookId,
        done: u64,
        total: u64,
    },
    /// A download ended; `complete` false when it failed (the reason
    /// comes as `Failed`).
    DownloadEnded {
        book: BookId,
        complete: bool,
    },
    /// A plain-words failure of some request.
    Failed(String),
    Notice(String),
    /// A media key or desktop widget (MPRIS) asks for this; handled like
    /// the player's own keys.
    Remote(RemoteCmd),
    /// The play next list of the login's account, as kept on disk.
    UpNext {
        account: crate::domain::Account,
        books: Vec<crate::domain::Queued>,
    },
}

/// What a remote control (MPRIS) can ask of the player.
#[derive(Debug, Clone, PartialEq)]
pub enum RemoteCmd {
    PlayPause,
    Play,
    Pause,
    NextChapter,
    PrevChapter,
    /// ± media seconds, across chapters.
    SkipBy(f64),
    /// A place in the chapter now playing (ignored for another chapter).
    SeekTo {
        chapter: ChapterId,
        position: f64,
    },
}
