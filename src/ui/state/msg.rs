//! What flows into the reducer (events) and out of it (effects). Effects
//! are requests to the backends; their answers come back as events.
// Messages move a few times per keystroke; boxing would only add noise.
#![allow(clippy::large_enum_variant)]

use crate::domain::session::{Command, Event as SessionEvent, Snapshot};
use crate::domain::{
    Book, BookId, Bookmark, BookmarkId, Category, ChapterId, LicenseStatus, ListeningStats,
    Manifest, PlaceMark,
};
use crate::ui::keymap::Key;
use std::fmt;

/// Monotonic milliseconds, from the event loop's clock.
pub type Millis = u64;

/// What the player adds when a new login helps.
pub const LOG_IN_AGAIN: &str = "Press P to log in again.";

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
    /// A command for the listening session (its owner carries it out).
    Session(Command),
    /// Read a book's place history (answered with `Answer::History`).
    LoadHistory(BookId),
    /// Read the listening statistics (answered with `Answer::Stats`).
    LoadStats,
    /// The player quits and the book plays on without it (the runtime
    /// leaves the session running, detached); `Quit` follows.
    LeavePlaying,
    Quit,
}

/// Why a login failed, in the words the login screen shows.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LoginError {
    #[error("Cannot reach the server at {0}. Check the address and that the server is running.")]
    Unreachable(String),
    #[error(
        "The server at {0} answered with a web page, not the API. Check the address and gateway prefix."
    )]
    HtmlPage(String),
    #[error("Wrong user name or password.")]
    BadCredentials,
    #[error("The server has no valid license: {0}")]
    LicenseRequired(String),
    #[error("{0}")]
    Other(String),
}

/// Who we are logged in as.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionInfo {
    pub address: String,
    pub user: String,
    pub profile: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
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
    License(LicenseStatus),
    /// What the listening session is now (published on each change).
    Session(Snapshot),
    /// One-off news of the listening session.
    SessionEvent(SessionEvent),
    /// A book's place history on this device, oldest first.
    History {
        book: BookId,
        marks: Vec<PlaceMark>,
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
    /// This many changes the server refused are sent again.
    RefusedRetried(usize),
    /// This many changes the server refused were dropped.
    RefusedDropped(usize),
    /// A plain-words failure of some request.
    Failed(String),
    Notice(String),
}
