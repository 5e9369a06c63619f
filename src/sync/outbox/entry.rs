//! What the outbox holds: one queued change ([`Entry`]) of a scope, book
//! and slot, the change itself ([`Op`]), and the server's refusals of it.
//! These serialize as the journal's records and `earmark --json sync
//! pending` rows, so field names are a format: change them only with a
//! reader of the old one.

use crate::domain::clock::hms as clock;
use crate::domain::{BookId, EpochMillis};
use serde::{Deserialize, Serialize};

/// Who a write belongs to: the server instance and the account, whichever
/// of the server's addresses carries it. Entries are only ever sent to
/// their own scope. (A journal from before addresses also names the
/// address as `base`: it is read and left out.)
pub use crate::domain::Account as Scope;

/// What an entry writes. One entry per (scope, book, slot) is kept.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "slot", content = "id")]
pub enum Slot {
    Progress,
    PlaybackSettings,
    Favorite,
    /// A bookmark, by the client's idempotency key or the server's id.
    Bookmark(String),
}

/// A queued progress write.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QueuedProgress {
    pub chapter_id: crate::domain::ChapterId,
    pub position_sec: f64,
    pub finished: bool,
    pub reset: bool,
    pub client_updated_at: EpochMillis,
}

/// A queued playback-settings write.
pub use crate::api::SettingsWrite as QueuedSettings;

/// A queued change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "op")]
pub enum Op {
    ProgressWrite(QueuedProgress),
    ProgressDelete,
    SettingsWrite(QueuedSettings),
    SettingsDelete,
    #[serde(rename_all = "camelCase")]
    FavoriteSet {
        favorite: bool,
    },
    #[serde(rename_all = "camelCase")]
    BookmarkCreate {
        client_id: String,
        chapter_id: crate::domain::ChapterId,
        position_sec: f64,
        note: Option<String>,
    },
    #[serde(rename_all = "camelCase")]
    BookmarkDelete {
        bookmark_id: String,
    },
}

impl Op {
    pub fn slot(&self) -> Slot {
        match self {
            Op::ProgressWrite(_) | Op::ProgressDelete => Slot::Progress,
            Op::SettingsWrite(_) | Op::SettingsDelete => Slot::PlaybackSettings,
            Op::FavoriteSet { .. } => Slot::Favorite,
            Op::BookmarkCreate { client_id, .. } => Slot::Bookmark(client_id.clone()),
            Op::BookmarkDelete { bookmark_id } => Slot::Bookmark(bookmark_id.clone()),
        }
    }

    /// Short human description for `earmark sync pending`.
    pub fn describe(&self) -> String {
        match self {
            Op::ProgressWrite(p) => {
                let mut s = format!("progress {} at {}", p.chapter_id, clock(p.position_sec));
                if p.finished {
                    s.push_str(" (finished)");
                }
                if p.reset {
                    s.push_str(" (reset)");
                }
                s
            }
            Op::ProgressDelete => "delete progress".into(),
            Op::SettingsWrite(s) => match s.volume {
                Some(v) => format!("playback settings: speed {}x, volume {v}", s.speed),
                None => format!("playback settings: speed {}x", s.speed),
            },
            Op::SettingsDelete => "delete playback settings".into(),
            Op::FavoriteSet { favorite: true } => "add to favorites".into(),
            Op::FavoriteSet { favorite: false } => "remove from favorites".into(),
            Op::BookmarkCreate {
                chapter_id,
                position_sec,
                ..
            } => format!("bookmark {chapter_id} at {}", clock(*position_sec)),
            Op::BookmarkDelete { bookmark_id } => format!("delete bookmark {bookmark_id}"),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    /// Unique, increasing; a tombstone names it.
    pub seq: u64,
    pub scope: Scope,
    pub book: BookId,
    pub op: Op,
    pub queued_at: EpochMillis,
    /// The server refused this write (not a network failure).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rejected: Option<Rejection>,
}

/// How often the server refused an entry, and what it said last.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Rejection {
    pub count: u32,
    pub message: String,
}

/// Refusals after which an entry is set aside until the user retries it.
pub const PARK_AFTER: u32 = 5;

impl Entry {
    /// Set aside: refused [`PARK_AFTER`] times; sent again only when the
    /// user asks (`earmark sync retry`).
    pub fn is_parked(&self) -> bool {
        self.rejected
            .as_ref()
            .is_some_and(|r| r.count >= PARK_AFTER)
    }

    /// What coalesces: one entry per scope, book and slot.
    pub(super) fn key(&self) -> (Scope, BookId, Slot) {
        (self.scope.clone(), self.book.clone(), self.op.slot())
    }
}
