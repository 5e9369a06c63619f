//! Each book's sound (boost, normalisation, skip silence) and the silence
//! skip silence saved, kept on this device in `sound.json` in the data
//! directory, keyed by server, user and book.
//!
//! The contract's playback settings carry no such fields (docs/contract.md),
//! and a real server may refuse a write with fields it does not know, so
//! these never travel: speed and volume sync, these stay here. A damaged
//! file is moved aside (`sound.json.damaged`), never overwritten.

use super::live::{Shared, read};
use crate::domain::{BookId, SoundSettings};
use crate::player::{Command, PlayerState};
use crate::ui::state::{Answer, SoundView};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Unsaved skipped seconds worth a write.
const SAVE_EVERY_SECS: f64 = 15.0;

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct BookSound {
    #[serde(flatten)]
    settings: SoundSettings,
    silence_saved_sec: f64,
}

#[derive(Debug, Default)]
struct Stored {
    books: BTreeMap<String, BookSound>,
    unsaved: f64,
}

pub(crate) struct SoundBooks {
    path: PathBuf,
    stored: Mutex<Stored>,
}

fn lock(m: &Mutex<Stored>) -> std::sync::MutexGuard<'_, Stored> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl SoundBooks {
    pub fn load(path: PathBuf) -> Self {
        let books = match std::fs::read(&path) {
            Ok(bytes) => match serde_json::from_slice(&bytes) {
                Ok(b) => b,
                Err(e) => {
                    let aside = path.with_extension("json.damaged");
                    tracing::warn!(
                        "{} is not readable ({e}); moved to {}",
                        path.display(),
                        aside.display()
                    );
                    let _ = std::fs::rename(&path, &aside);
                    BTreeMap::new()
                }
            },
            Err(_) => BTreeMap::new(),
        };
        Self {
            path,
            stored: Mutex::new(Stored { books, unsaved: 0.0 }),
        }
    }

    fn view(&self, key: &str, book: &BookId) -> SoundView {
        let s = lock(&self.stored);
        let b = s.books.get(key).copied().unwrap_or_default();
        SoundView {
            book: Some(book.clone()),
            settings: b.settings,
            norm_gain_db: None,
            saved_book: b.silence_saved_sec,
            saved_total: s.books.values().map(|b| b.silence_saved_sec).sum(),
        }
    }

    fn set(&self, key: String, settings: SoundSettings) {
        lock(&self.stored).books.entry(key).or_default().settings = settings;
    }

    /// Adds skipped seconds; true when enough is unsaved to write.
    fn add_saved(&self, key: String, secs: f64) -> bool {
        let mut s = lock(&self.stored);
        s.books.entry(key).or_default().silence_saved_sec += secs;
        s.unsaved += secs;
        s.unsaved >= SAVE_EVERY_SECS
    }

    /// Writes the file (temp file, fsync, rename). Blocking.
    pub fn save(&self) {
        let bytes = {
            let mut s = lock(&self.stored);
            s.unsaved = 0.0;
            match serde_json::to_vec_pretty(&s.books) {
                Ok(b) => b,
                Err(_) => return,
            }
        };
        if let Err(e) = write_atomic(&self.path, &bytes) {
            tracing::warn!("cannot save {}: {e}", self.path.display());
        }
    }
}

fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = path.with_extension("json.tmp");
    let mut f = std::fs::File::create(&tmp)?;
    f.write_all(bytes)?;
    f.sync_all()?;
    std::fs::rename(&tmp, path)
}

/// The key of `book` for the logged-in server and user.
fn key(sh: &Shared, book: &BookId) -> String {
    let login = read(&sh.login);
    match &login.session {
        Some(s) => format!("{}|{}|{book}", s.server, s.user),
        None => format!("|{}|{book}", login.profile.name),
    }
}

fn save_in_background(sh: &Arc<Shared>) {
    let sh = sh.clone();
    if let Ok(rt) = tokio::runtime::Handle::try_current() {
        rt.spawn_blocking(move || sh.sound.save());
    } else {
        std::thread::spawn(move || sh.sound.save());
    }
}

/// A book is about to play: its sound goes to the engine first.
pub(super) fn opening(sh: &Shared, book: &BookId) {
    let view = sh.sound.view(&key(sh, book), book);
    if let Some(e) = &sh.engine {
        e.send(Command::SetSound(view.settings));
    }
    sh.ui.send(Answer::Sound(view));
}

/// The listener changed the playing book's sound.
pub(super) fn changed(sh: &Arc<Shared>, settings: SoundSettings) {
    let settings = settings.clamped();
    if let Some(e) = &sh.engine {
        e.send(Command::SetSound(settings));
    }
    let Some(playing) = sh.sync().status().playing else {
        return;
    };
    sh.sound.set(key(sh, &playing.book), settings);
    save_in_background(sh);
}

/// Follows the engine for the playing book: applies the book's sound when
/// another book starts, counts the silence skipped, tells the player.
#[derive(Default)]
pub(super) struct Follower {
    book: Option<BookId>,
    /// The engine's count for the current load, already added.
    counted: (u64, f64),
    shown: Option<SoundView>,
}

impl Follower {
    pub fn update(&mut self, sh: &Arc<Shared>, book: &BookId, s: &PlayerState) {
        let k = key(sh, book);
        if self.book.as_ref() != Some(book) {
            self.book = Some(book.clone());
            let want = sh.sound.view(&k, book).settings;
            if s.sound != want
                && let Some(e) = &sh.engine
            {
                e.send(Command::SetSound(want));
            }
            self.shown = None;
        }
        let load = s.playback_id.0;
        if self.counted.0 != load {
            self.counted = (load, 0.0);
        }
        let delta = s.silence_skipped - self.counted.1;
        if delta > 0.0 {
            self.counted.1 = s.silence_skipped;
            if sh.sound.add_saved(k.clone(), delta) {
                save_in_background(sh);
            }
        }
        let mut view = sh.sound.view(&k, book);
        view.norm_gain_db = s.norm_gain_db;
        let worth = self.shown.as_ref().is_none_or(|old| {
            old.settings != view.settings
                || (old.saved_book - view.saved_book).abs() >= 1.0
                || match (old.norm_gain_db, view.norm_gain_db) {
                    (Some(a), Some(b)) => (a - b).abs() >= 0.1,
                    (a, b) => a.is_some() != b.is_some(),
                }
        });
        if worth {
            sh.ui.send(Answer::Sound(view.clone()));
            self.shown = Some(view);
        }
    }
}
