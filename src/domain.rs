//! Domain types shared by the client, the player, sync and the UI.
//!
//! `backoff` is the one rule for when a server is asked again after it
//! failed or said "slow down" (for api, sync, player and offline alike);
//! `locks` the one way a lock is taken (a poisoned one is used as it is);
//! `wait::or_never` a wait that may have nothing to wait for.
//!
//! Ids (`ids`) are opaque strings chosen by the server: never parsed,
//! never derived from list positions. Times are seconds of media time
//! (`f64`), wall-clock instants are milliseconds since the Unix epoch.

use serde::{Deserialize, Serialize};

mod account;
pub mod backoff;
pub mod clock;
mod ids;
mod length;
mod local_time;
pub mod locks;
pub mod mpeg_audio;
pub mod rewind;
mod series;
pub mod session;
pub mod sleep;
mod stop;
pub mod up_next;
pub mod wait;
pub use account::Account;
pub use ids::{BookId, BookmarkId, CategoryId, ChapterId, ServerId, UserId};
pub use length::{DurationSource, Measure, Unit, Unitless, unit_of};
pub use local_time::utc_offset_secs;
pub use series::{Sequence, SeriesRef, series_order};
pub use stop::{Stop, StopReason};
pub use up_next::{Next, NextFrom, Opening, Queued, UpNextMode, next_after};

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
    /// Each narrator by name (a server's "A, B" string stays one name).
    #[serde(default)]
    pub narrators: Vec<String>,
    /// The series the book is part of, in the server's order.
    #[serde(default)]
    pub series: Vec<SeriesRef>,
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

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Chapter {
    pub id: ChapterId,
    pub title: String,
    /// Seconds, when known.
    pub duration: Option<f64>,
    /// Where `duration` came from, or the server's number not yet read.
    #[serde(default)]
    pub duration_source: DurationSource,
}

/// One entry of the playback manifest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ManifestItem {
    pub chapter_id: ChapterId,
    pub title: String,
    /// Seconds of media in this chapter, when known.
    pub duration: Option<f64>,
    /// Where `duration` came from, or the server's number not yet read
    /// (then `duration` is `None`).
    #[serde(default)]
    pub duration_source: DurationSource,
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

impl ManifestItem {
    /// Chapter `id`, a whole stream with no URL of its own (`None`: the
    /// client builds the play URL) and the server's length `secs`.
    pub fn whole(id: impl Into<String>, title: impl Into<String>, secs: Option<f64>) -> Self {
        ManifestItem {
            chapter_id: ChapterId::new(id),
            title: title.into(),
            duration: secs,
            duration_source: Default::default(),
            url: None,
            mime_type: None,
            size_bytes: None,
            start: 0.0,
            end: None,
        }
    }
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

    /// The decoder counted `chapter`'s true length: it is the chapter's
    /// length from now on, whatever the server said (false when the
    /// chapter is not in the book or `secs` is no length).
    pub fn set_measured(&mut self, chapter: &ChapterId, secs: f64) -> bool {
        let Some(item) = self.items.iter_mut().find(|i| &i.chapter_id == chapter) else {
            return false;
        };
        if !(secs.is_finite() && secs > 0.0) {
            return false;
        }
        item.duration = Some(secs);
        item.duration_source = DurationSource::Measured;
        true
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

    /// "boost +6 dB, normalised, skip silence" (empty when neutral).
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if self.boost_db > 0.0 {
            let b = self.boost_db;
            parts.push(if b.fract() == 0.0 {
                format!("boost +{b:.0} dB")
            } else {
                format!("boost +{b:.1} dB")
            });
        }
        if self.normalize {
            parts.push("normalised".to_owned());
        }
        if self.skip_silence {
            parts.push("skip silence".to_owned());
        }
        parts.join(", ")
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

/// Why the place moved: recorded with the place *before* a jump.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum JumpCause {
    /// A seek on the progress bar.
    Seek,
    /// A short or long skip.
    Skip,
    /// Next / previous chapter, or a chapter picked in the list.
    Chapter,
    Bookmark,
    /// Opening the book moved the place (the server's, or a conflict choice).
    Restore,
    /// The sleep timer stopped playback here.
    Sleep,
    Restart,
    Finished,
    /// "Undo jump" went back from here.
    Undo,
    /// A jump picked in the place history.
    History,
    /// Smart rewind after a pause or an interruption.
    Rewind,
}

impl JumpCause {
    /// The word the history list and `earmark history` show.
    pub fn word(self) -> &'static str {
        match self {
            JumpCause::Seek => "seek",
            JumpCause::Skip => "skip",
            JumpCause::Chapter => "chapter",
            JumpCause::Bookmark => "bookmark",
            JumpCause::Restore => "restore",
            JumpCause::Sleep => "sleep timer",
            JumpCause::Restart => "restart",
            JumpCause::Finished => "finished",
            JumpCause::Undo => "undo",
            JumpCause::History => "history",
            JumpCause::Rewind => "rewind",
        }
    }
}

/// A place before a jump, on this device: keyed by chapter id and
/// position (never an index), with the wall time and the cause.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlaceMark {
    pub at: EpochMillis,
    pub chapter_id: ChapterId,
    pub position: f64,
    pub cause: JumpCause,
}

/// Time listened on one local day (days since 1970-01-01, local time).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DayListened {
    pub day: i64,
    /// Seconds of the listener's time.
    pub wall_secs: f64,
    /// Seconds of the book (at 2× this is twice the wall time).
    pub media_secs: f64,
}

/// Listening statistics of this device, as the stats view draws them.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListeningStats {
    /// Today, as a local day number.
    pub today: i64,
    /// The last 30 days, oldest first, today last (days without listening are 0).
    pub last_30: Vec<DayListened>,
    pub total_wall_secs: f64,
    pub total_media_secs: f64,
    pub longest_streak_days: u32,
    pub current_streak_days: u32,
    pub books_finished: u32,
    /// Per book, most listened first: (book, wall seconds, media seconds).
    pub books: Vec<BookListened>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BookListened {
    pub book_id: BookId,
    pub wall_secs: f64,
    pub media_secs: f64,
    pub finished: bool,
}

/// `YYYY-MM-DD` of a day number (days since 1970-01-01), proleptic Gregorian.
pub fn civil_date(day: i64) -> String {
    // Howard Hinnant's days_from_civil, inverted.
    let z = day + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

#[cfg(test)]
mod listening_tests {
    #[test]
    fn civil_dates_of_known_days() {
        assert_eq!(super::civil_date(0), "1970-01-01");
        assert_eq!(super::civil_date(19_723), "2024-01-01");
        assert_eq!(super::civil_date(19_782), "2024-02-29");
        assert_eq!(super::civil_date(-1), "1969-12-31");
    }
}

/// Marks kept per book on this device.
pub const PLACE_HISTORY_KEEP: usize = 50;
/// Skips this close together are one jump: the place before the first is kept.
pub const SKIP_COALESCE_MS: EpochMillis = 5_000;

/// Adds `mark` to a book's place history (oldest first), keeping the last
/// [`PLACE_HISTORY_KEEP`]. A skip right after a skip is not a new place:
/// the earlier mark already holds where the listener was. False when the
/// mark was folded in that way.
pub fn push_place_mark(marks: &mut Vec<PlaceMark>, mark: PlaceMark) -> bool {
    if mark.cause == JumpCause::Skip
        && let Some(last) = marks.last()
        && last.cause == JumpCause::Skip
        && (0..SKIP_COALESCE_MS).contains(&(mark.at - last.at))
    {
        return false;
    }
    if !mark.position.is_finite() || mark.position < 0.0 {
        return false;
    }
    marks.push(mark);
    if marks.len() > PLACE_HISTORY_KEEP {
        let extra = marks.len() - PLACE_HISTORY_KEEP;
        marks.drain(..extra);
    }
    true
}

#[cfg(test)]
mod place_history_tests {
    use super::*;
    use proptest::prelude::*;

    fn mark(at: i64, pos: f64, cause: JumpCause) -> PlaceMark {
        PlaceMark {
            at,
            chapter_id: ChapterId::new("c1"),
            position: pos,
            cause,
        }
    }

    #[test]
    fn skips_in_a_row_keep_the_place_before_the_first() {
        let mut m = Vec::new();
        assert!(push_place_mark(&mut m, mark(1_000, 100.0, JumpCause::Skip)));
        assert!(!push_place_mark(&mut m, mark(3_000, 90.0, JumpCause::Skip)));
        assert!(push_place_mark(
            &mut m,
            mark(3_500, 80.0, JumpCause::Chapter)
        ));
        assert!(push_place_mark(&mut m, mark(20_000, 70.0, JumpCause::Skip)));
        let places: Vec<f64> = m.iter().map(|m| m.position).collect();
        assert_eq!(places, vec![100.0, 80.0, 70.0]);
    }

    #[test]
    fn a_bad_position_is_not_a_place() {
        let mut m = Vec::new();
        assert!(!push_place_mark(&mut m, mark(1, f64::NAN, JumpCause::Seek)));
        assert!(!push_place_mark(&mut m, mark(1, -3.0, JumpCause::Seek)));
        assert!(m.is_empty());
    }

    proptest! {
        #[test]
        fn never_more_than_fifty_and_the_newest_is_last(
            steps in proptest::collection::vec((0i64..20_000, 0.0f64..5000.0, 0usize..3), 0..200)
        ) {
            let causes = [JumpCause::Skip, JumpCause::Seek, JumpCause::Undo];
            let mut m = Vec::new();
            let mut at = 0;
            for (dt, pos, c) in steps {
                at += dt;
                let new = mark(at, pos, causes[c]);
                let kept = push_place_mark(&mut m, new.clone());
                prop_assert!(m.len() <= PLACE_HISTORY_KEEP);
                if kept {
                    prop_assert_eq!(m.last(), Some(&new));
                }
                prop_assert!(m.windows(2).all(|w| w[0].at <= w[1].at));
            }
        }
    }
}
