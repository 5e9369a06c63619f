//! This device's last known progress and playback settings per book, so a
//! book opens at once (marked unconfirmed) and still opens offline. Kept
//! in one small JSON file replaced atomically (`durable::write_atomic`); a
//! damaged file is ignored.

use super::outbox::Scope;
use super::reconciler::{LocalProgress, Spot};
use crate::domain::{BookId, ChapterId, EpochMillis, PlaybackSettings};
use crate::durable::{DiskError, write_atomic};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CachedBook {
    pub chapter_id: Option<ChapterId>,
    pub position_sec: Option<f64>,
    #[serde(default)]
    pub finished: bool,
    #[serde(default)]
    pub updated_at: EpochMillis,
    pub speed: Option<f32>,
    pub volume: Option<f32>,
    pub settings_updated_at: Option<EpochMillis>,
}

#[derive(Debug, Default)]
pub struct Cache {
    path: Option<PathBuf>,
    books: BTreeMap<String, CachedBook>,
    dirty: bool,
}

fn key(scope: &Scope, book: &BookId) -> String {
    format!("{}|{}|{}", scope.server_id, scope.user_id, book)
}

/// A key from before addresses (`{address}|{server}|{user}|{book}`, the
/// address ending in `/api/v1`) without its address; newer keys as they
/// are. Of two that become one, the later place wins.
fn migrate(books: BTreeMap<String, CachedBook>) -> BTreeMap<String, CachedBook> {
    let mut out: BTreeMap<String, CachedBook> = BTreeMap::new();
    for (k, b) in books {
        let k = match k.split_once("/api/v1|") {
            Some((address, rest)) if address.starts_with("http") => rest.to_owned(),
            _ => k,
        };
        if out
            .get(&k)
            .is_none_or(|have| have.updated_at < b.updated_at)
        {
            out.insert(k, b);
        }
    }
    out
}

impl Cache {
    /// Loads the cache; a missing or damaged file gives an empty cache.
    pub fn load(path: impl Into<PathBuf>) -> Self {
        let path = path.into();
        let books = std::fs::read(&path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .map(migrate)
            .unwrap_or_default();
        Self {
            path: Some(path),
            books,
            dirty: false,
        }
    }

    /// What the file holds, never written back: for a session whose
    /// journal is in memory (another process owns the files).
    pub fn in_memory(path: &Path) -> Self {
        Self {
            path: None,
            ..Self::load(path)
        }
    }

    pub fn progress(&self, scope: &Scope, book: &BookId) -> Option<LocalProgress> {
        let b = self.books.get(&key(scope, book))?;
        Some(LocalProgress {
            spot: Spot::new(b.chapter_id.clone()?, b.position_sec?),
            finished: b.finished,
            updated_at: b.updated_at,
        })
    }

    /// The book of `scope` whose place this device saved last (and did
    /// not finish), with that place.
    pub fn last_book(&self, scope: &Scope) -> Option<(BookId, Spot)> {
        let prefix = format!("{}|{}|", scope.server_id, scope.user_id);
        self.books
            .iter()
            .filter(|(_, b)| !b.finished)
            .filter_map(|(k, b)| {
                let book = k.strip_prefix(&prefix)?;
                let spot = Spot::new(b.chapter_id.clone()?, b.position_sec?);
                Some((b.updated_at, BookId::new(book), spot))
            })
            .max_by_key(|(at, ..)| *at)
            .map(|(_, book, spot)| (book, spot))
    }

    pub fn settings(&self, scope: &Scope, book: &BookId) -> Option<PlaybackSettings> {
        let b = self.books.get(&key(scope, book))?;
        Some(PlaybackSettings {
            speed: b.speed?,
            volume: b.volume,
            client_updated_at: b.settings_updated_at,
        })
    }

    /// Records progress unless the cache already holds a newer one.
    pub fn set_progress(
        &mut self,
        scope: &Scope,
        book: &BookId,
        spot: &Spot,
        finished: bool,
        at: EpochMillis,
    ) {
        let b = self.books.entry(key(scope, book)).or_default();
        if b.chapter_id.is_some() && b.updated_at > at {
            return;
        }
        b.chapter_id = Some(spot.chapter.clone());
        b.position_sec = Some(spot.position);
        b.finished = finished;
        b.updated_at = at;
        self.dirty = true;
    }

    pub fn set_settings(&mut self, scope: &Scope, book: &BookId, s: &PlaybackSettings) {
        let b = self.books.entry(key(scope, book)).or_default();
        b.speed = Some(s.speed);
        b.volume = s.volume;
        b.settings_updated_at = s.client_updated_at;
        self.dirty = true;
    }

    pub fn clear_settings(&mut self, scope: &Scope, book: &BookId) {
        if let Some(b) = self.books.get_mut(&key(scope, book)) {
            b.speed = None;
            b.volume = None;
            b.settings_updated_at = None;
            self.dirty = true;
        }
    }

    /// Writes the cache if it changed, atomically; a failure leaves the
    /// old file and keeps the change for the next save.
    pub fn save(&mut self) -> Result<(), DiskError> {
        let (Some(path), true) = (&self.path, self.dirty) else {
            return Ok(());
        };
        let bytes = serde_json::to_vec(&self.books).expect("the cache serializes");
        write_atomic(path, &bytes)?;
        self.dirty = false;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_place_kept_under_an_address_is_read_for_the_server_and_account() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cache.json");
        let place = |pos: f64, at: u64| serde_json::json!({"chapterId": "c1", "positionSec": pos, "updatedAt": at});
        let old = serde_json::json!({
            "http://nas.local:8686/api/v1|s|1|b1": place(10.0, 1),
            "https://vpn.example/nas/api/v1|s|1|b1": place(20.0, 2),
        });
        std::fs::write(&path, old.to_string()).unwrap();
        let scope = crate::offline::fixture::account("s", 1);
        let p = Cache::load(&path)
            .progress(&scope, &BookId::new("b1"))
            .unwrap();
        assert_eq!(p.spot.position, 20.0, "the later of the two");
    }
}
