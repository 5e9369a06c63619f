//! The front door's read-only view of what sync keeps on this device:
//! [`Records`] reads the queued changes (`earmark sync pending`), the place
//! history (`earmark history`) and the listening statistics (`earmark
//! stats`) without a worker and without taking the journal's lock, so a
//! running player is not disturbed. Every change to the journal goes
//! through [`super::SyncSession`] (`journal`).
//!
//! What it hands out are public types designed for the CLI's text and
//! JSON ([`Pending`], [`PendingChange`]), never the journal's own records.

use super::client_remote::scope_of;
use super::outbox::{Entry, Op, Outbox};
use super::session::{Spot, SyncConfig};
use crate::api::Client;
use crate::domain::{BookId, ChapterId, EpochMillis, ListeningStats, PlaceMark};
use serde::Serialize;
use std::path::PathBuf;

/// Whose change it is: the server instance and account a queued change
/// belongs to (it is only ever sent there, through any of its addresses).
pub use crate::domain::Account as ChangeScope;

/// What a queued change writes (`op` in the JSON).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase", tag = "op")]
pub enum Change {
    #[serde(rename_all = "camelCase")]
    ProgressWrite {
        chapter_id: ChapterId,
        position_sec: f64,
        finished: bool,
        reset: bool,
        client_updated_at: EpochMillis,
    },
    ProgressDelete,
    #[serde(rename_all = "camelCase")]
    SettingsWrite {
        speed: f32,
        volume: Option<f32>,
        client_updated_at: EpochMillis,
    },
    SettingsDelete,
    #[serde(rename_all = "camelCase")]
    FavoriteSet {
        favorite: bool,
    },
    #[serde(rename_all = "camelCase")]
    BookmarkCreate {
        client_id: String,
        chapter_id: ChapterId,
        position_sec: f64,
        note: Option<String>,
    },
    #[serde(rename_all = "camelCase")]
    BookmarkDelete {
        bookmark_id: String,
    },
}

/// How often the server refused a change, and what it said last.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Refusals {
    pub count: u32,
    pub message: String,
}

/// One queued change, as `earmark sync pending` shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingChange {
    /// The change's number in the journal (increasing).
    pub seq: u64,
    pub scope: ChangeScope,
    pub book: BookId,
    pub op: Change,
    pub queued_at: EpochMillis,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rejected: Option<Refusals>,
    /// Short words, e.g. "progress ch_1 at 0:20:34".
    #[serde(skip)]
    pub description: String,
}

impl PendingChange {
    fn of(e: Entry) -> PendingChange {
        let description = e.op.describe();
        let op = match e.op {
            Op::ProgressWrite(p) => Change::ProgressWrite {
                chapter_id: p.chapter_id,
                position_sec: p.position_sec,
                finished: p.finished,
                reset: p.reset,
                client_updated_at: p.client_updated_at,
            },
            Op::ProgressDelete => Change::ProgressDelete,
            Op::SettingsWrite(s) => Change::SettingsWrite {
                speed: s.speed,
                volume: s.volume,
                client_updated_at: s.client_updated_at,
            },
            Op::SettingsDelete => Change::SettingsDelete,
            Op::FavoriteSet { favorite } => Change::FavoriteSet { favorite },
            Op::BookmarkCreate {
                client_id,
                chapter_id,
                position_sec,
                note,
            } => Change::BookmarkCreate {
                client_id,
                chapter_id,
                position_sec,
                note,
            },
            Op::BookmarkDelete { bookmark_id } => Change::BookmarkDelete { bookmark_id },
        };
        PendingChange {
            seq: e.seq,
            scope: e.scope,
            book: e.book,
            op,
            queued_at: e.queued_at,
            rejected: e.rejected.map(|r| Refusals {
                count: r.count,
                message: r.message,
            }),
            description,
        }
    }
}

/// The queued changes of a profile, split by whose they are.
#[derive(Debug, Clone, PartialEq)]
pub struct Pending {
    /// The current login's scope; `None` when not logged in.
    pub scope: Option<ChangeScope>,
    pub queued: Vec<PendingChange>,
    /// The current login's changes the server refused again and again
    /// (each with its last message), set aside until retried or dropped.
    pub refused: Vec<PendingChange>,
    /// Changes of another server instance or account.
    pub held: Vec<PendingChange>,
    /// Damaged records that were skipped while reading.
    pub corrupt_skipped: usize,
}

/// Read-only access to a profile's sync files (see the module header).
#[derive(Debug, Clone)]
pub struct Records {
    config: SyncConfig,
}

impl Records {
    /// The records of the sync directory `dir` (`config::Profile::sync_dir`).
    pub fn new(dir: impl Into<PathBuf>) -> Records {
        Records {
            config: SyncConfig::new(dir),
        }
    }

    /// The records a session of `config` keeps.
    pub fn of(config: &SyncConfig) -> Records {
        Records {
            config: config.clone(),
        }
    }

    /// The queued changes, as the current login (`client`) sees them.
    pub fn pending(&self, client: Option<&Client>) -> Result<Pending, String> {
        let (entries, load) = Outbox::peek(&self.config.outbox_path).map_err(|e| e.to_string())?;
        let scope = client.and_then(scope_of);
        let (mine, held): (Vec<Entry>, Vec<Entry>) = entries
            .into_iter()
            .partition(|e| scope.as_ref() == Some(&e.scope));
        let (refused, queued): (Vec<Entry>, Vec<Entry>) =
            mine.into_iter().partition(Entry::is_parked);
        let public = |v: Vec<Entry>| v.into_iter().map(PendingChange::of).collect();
        Ok(Pending {
            scope,
            queued: public(queued),
            refused: public(refused),
            held: public(held),
            corrupt_skipped: load.corrupt_skipped,
        })
    }

    /// This device's last known place in `book` for the current login
    /// (`client`), from the progress cache the session keeps (saved after
    /// each of its rounds); `None` when there is none, or it says the book
    /// was finished (resuming then is the server's and sync's call).
    /// A hint only: the server's place still decides (contract rule 7).
    pub fn last_place(&self, client: &Client, book: &BookId) -> Option<Spot> {
        let scope = scope_of(client)?;
        let p = super::cache::Cache::in_memory(&self.config.cache_path).progress(&scope, book)?;
        (!p.finished && p.spot.position.is_finite() && p.spot.position >= 0.0).then_some(p.spot)
    }

    /// The book this device played last for the current login (`client`)
    /// and its place there, unless it was finished: what a session makes
    /// ready to resume. A hint only, as [`Records::last_place`].
    pub fn last_book(&self, client: &Client) -> Option<(BookId, Spot)> {
        let scope = scope_of(client)?;
        let (book, spot) =
            super::cache::Cache::in_memory(&self.config.cache_path).last_book(&scope)?;
        (spot.position.is_finite() && spot.position >= 0.0).then_some((book, spot))
    }

    /// A book's place history on this device, oldest first.
    pub fn history(&self, book: &BookId) -> Result<Vec<PlaceMark>, String> {
        super::listening::read_history(self.listening_dir(), book)
    }

    /// This device's listening statistics until `now`.
    pub fn stats(&self, now: EpochMillis) -> Result<ListeningStats, String> {
        super::listening::read_stats(self.listening_dir(), now)
    }

    fn listening_dir(&self) -> &std::path::Path {
        self.config.listening_dir.as_deref().unwrap_or_else(|| {
            self.config
                .outbox_path
                .parent()
                .unwrap_or(std::path::Path::new("."))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sync::outbox::{QueuedProgress, QueuedSettings, Rejection};

    fn entry(op: Op, rejected: Option<Rejection>) -> Entry {
        Entry {
            seq: 7,
            scope: crate::offline::fixture::account("srv_1", 3),
            book: BookId::new("b1"),
            op,
            queued_at: 1_700_000_000_000,
            rejected,
        }
    }

    /// The CLI's JSON is its own type, but says what it said before: the
    /// journal's record, field for field.
    #[test]
    fn a_pending_change_serializes_as_the_journal_entry_did() {
        let ops = [
            Op::ProgressWrite(QueuedProgress {
                chapter_id: ChapterId::new("c2"),
                position_sec: 12.5,
                finished: false,
                reset: true,
                client_updated_at: 1_700_000_000_001,
            }),
            Op::ProgressDelete,
            Op::SettingsWrite(QueuedSettings {
                speed: 1.25,
                volume: Some(0.5),
                client_updated_at: 1_700_000_000_002,
            }),
            Op::SettingsDelete,
            Op::FavoriteSet { favorite: true },
            Op::BookmarkCreate {
                client_id: "earmark-1".into(),
                chapter_id: ChapterId::new("c1"),
                position_sec: 3.0,
                note: Some("here".into()),
            },
            Op::BookmarkDelete {
                bookmark_id: "bm9".into(),
            },
        ];
        for op in ops {
            for rejected in [
                None,
                Some(Rejection {
                    count: 5,
                    message: "no".into(),
                }),
            ] {
                let e = entry(op.clone(), rejected);
                let before = serde_json::to_value(&e).unwrap();
                let change = PendingChange::of(e.clone());
                assert_eq!(change.description, e.op.describe());
                assert_eq!(serde_json::to_value(&change).unwrap(), before);
            }
        }
    }
}
