//! Domain types shared by the client, the player, sync and the UI.
//!
//! Ids are opaque strings chosen by the server: never parsed, never derived
//! from list positions. Times are seconds of media time (`f64`), wall-clock
//! instants are milliseconds since the Unix epoch.

use serde::{Deserialize, Serialize};
use std::fmt;

macro_rules! opaque_id {
    ($(#[$meta:meta])* $name:ident) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            pub fn new(id: impl Into<String>) -> Self {
                Self(id.into())
            }
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<&str> for $name {
            fn from(s: &str) -> Self {
                Self(s.to_owned())
            }
        }

        impl From<String> for $name {
            fn from(s: String) -> Self {
                Self(s)
            }
        }
    };
}

opaque_id!(
    /// A book, as the server names it.
    BookId
);
opaque_id!(
    /// A chapter: the persistent identity of a manifest item.
    ChapterId
);
opaque_id!(
    /// A category.
    CategoryId
);
opaque_id!(
    /// A bookmark.
    BookmarkId
);
opaque_id!(
    /// The server instance; changes when the instance is rebuilt.
    ServerId
);

/// The logged-in user's id; numeric by contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct UserId(pub u64);

impl fmt::Display for UserId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Milliseconds since the Unix epoch.
pub type EpochMillis = i64;

pub fn now_millis() -> EpochMillis {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Category {
    pub id: CategoryId,
    pub name: String,
    pub book_count: Option<u64>,
}

/// A book as listed, searched or detailed.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Book {
    pub id: BookId,
    pub title: String,
    pub authors: Vec<String>,
    pub narrator: Option<String>,
    pub description: Option<String>,
    /// Seconds; `None` when the server does not say.
    pub duration: Option<f64>,
    pub chapter_count: Option<u32>,
    pub categories: Vec<Category>,
    pub cover_url: Option<String>,
    pub favorite: bool,
    pub added_at: Option<EpochMillis>,
    pub progress: Option<Progress>,
}

// Written out: the id macro derives no Default for the other ids.
#[allow(clippy::derivable_impls)]
impl Default for BookId {
    fn default() -> Self {
        Self(String::new())
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Chapter {
    pub id: ChapterId,
    pub title: String,
    pub duration: Option<f64>,
}

/// One entry of the playback manifest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ManifestItem {
    pub chapter_id: ChapterId,
    pub title: String,
    /// Seconds of media in this chapter, when known.
    pub duration: Option<f64>,
    /// Stream URL as the server gave it (relative to the base, or absolute).
    /// `None` means the client builds `/chapters/{chapterId}/play?raw=1`.
    pub url: Option<String>,
    pub mime_type: Option<String>,
    pub size_bytes: Option<u64>,
    /// Where this chapter starts inside its stream (embedded-chapter files).
    pub start: f64,
    /// Where it ends inside its stream; `None`: the end of the stream.
    pub end: Option<f64>,
}

/// The complete, ordered playback queue of a book. Server order is kept.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub book_id: BookId,
    pub items: Vec<ManifestItem>,
}

impl Manifest {
    pub fn position_of(&self, chapter: &ChapterId) -> Option<usize> {
        self.items.iter().position(|i| &i.chapter_id == chapter)
    }

    pub fn item(&self, chapter: &ChapterId) -> Option<&ManifestItem> {
        self.items.iter().find(|i| &i.chapter_id == chapter)
    }

    /// Total seconds, when every item's duration is known.
    pub fn total_duration(&self) -> Option<f64> {
        self.items.iter().map(|i| i.duration).sum()
    }

    /// Seconds from the start of the book to `position` in `chapter`.
    pub fn book_position(&self, chapter: &ChapterId, position: f64) -> Option<f64> {
        let idx = self.position_of(chapter)?;
        let before: Option<f64> = self.items[..idx].iter().map(|i| i.duration).sum();
        Some(before? + position)
    }
}

/// Reading progress of one book, keyed by chapter id and position.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Progress {
    pub chapter_id: ChapterId,
    /// Seconds into the chapter.
    pub position: f64,
    pub book_position: Option<f64>,
    pub finished: bool,
    pub client_updated_at: Option<EpochMillis>,
    pub server_updated_at: Option<EpochMillis>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlaybackSettings {
    pub speed: f32,
    pub volume: Option<f32>,
    pub client_updated_at: Option<EpochMillis>,
}

/// How a book sounds, kept per book on this device: an extra gain,
/// loudness normalisation and skipping long silences. The default changes
/// nothing.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SoundSettings {
    /// Extra gain in dB, 0 to [`SoundSettings::MAX_BOOST_DB`].
    pub boost_db: f32,
    /// Bring the book to the target loudness (measured as it plays).
    pub normalize: bool,
    /// Shorten long silences.
    pub skip_silence: bool,
}

impl SoundSettings {
    pub const MAX_BOOST_DB: f32 = 12.0;

    /// The same settings with the boost made valid (0–12 dB, 0 when not a number).
    pub fn clamped(self) -> Self {
        let boost_db = if self.boost_db.is_finite() {
            self.boost_db.clamp(0.0, Self::MAX_BOOST_DB)
        } else {
            0.0
        };
        Self { boost_db, ..self }
    }

    /// True when the settings leave the audio as it is.
    pub fn is_neutral(&self) -> bool {
        self.boost_db == 0.0 && !self.normalize && !self.skip_silence
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bookmark {
    pub id: BookmarkId,
    pub book_id: BookId,
    pub chapter_id: ChapterId,
    pub position: f64,
    pub note: Option<String>,
    pub created_at: Option<EpochMillis>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LicenseState {
    Valid,
    Expired,
    Missing,
    /// Any other word a real server may use for "not valid".
    Invalid,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LicenseStatus {
    pub state: LicenseState,
    pub valid: bool,
    pub message: Option<String>,
}
