//! Each book's sound (boost, normalisation, skip silence) and the silence
//! skip silence saved, kept on this device in `sound.json` in the data
//! directory, keyed by server, user and book.
//!
//! The contract's playback settings carry no such fields (docs/contract.md),
//! and a real server may refuse a write with fields it does not know, so
//! these never travel: speed and volume sync, these stay here. A damaged
//! file is moved aside (`sound.json.damaged`), never overwritten.

use super::live::{Shared, read};
use crate::config::{Config, Dirs};
use crate::domain::{BookId, SoundSettings};
use crate::player::silence::SilenceRule;
use crate::player::{Command, EngineConfig, PlayerState};
use crate::ui::event_loop::UiSender;
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
    /// One save at a time (they share the temp file).
    saving: Mutex<()>,
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
            stored: Mutex::new(Stored {
                books,
                unsaved: 0.0,
            }),
            saving: Mutex::new(()),
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
        let _one = self.saving.lock().unwrap_or_else(|e| e.into_inner());
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

/// `[sound]` of config.toml into the engine's config; a value out of range
/// is named to the listener and the defaults are used.
pub(super) fn tune(config: &mut EngineConfig, dirs: &Dirs, ui: &UiSender) {
    let Ok(c) = Config::load(&dirs.config_file()) else {
        return; // The launch reports an unreadable file.
    };
    let s = c.sound.unwrap_or_default();
    if let Err(e) = s.check() {
        ui.send(Answer::Failed(format!("{e}; using the defaults.")));
        return;
    }
    config.loudness_target = s.loudness_target;
    config.silence = SilenceRule {
        threshold_db: s.silence_threshold_db,
        min_silence: f64::from(s.silence_min_ms) / 1000.0,
        gap: f64::from(s.silence_gap_ms) / 1000.0,
    };
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_and_silence_saved_survive_a_restart() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sound.json");
        let book = BookId::new("b1");
        let s = SoundSettings {
            boost_db: 6.0,
            normalize: true,
            skip_silence: true,
        };
        let store = SoundBooks::load(path.clone());
        store.set("srv|u|b1".into(), s);
        assert!(!store.add_saved("srv|u|b1".into(), 10.0));
        assert!(
            store.add_saved("srv|u|b2".into(), 5.0),
            "15 s unsaved: write"
        );
        store.save();
        let again = SoundBooks::load(path);
        let v = again.view("srv|u|b1", &book);
        assert_eq!(v.settings, s);
        assert_eq!((v.saved_book, v.saved_total), (10.0, 15.0));
        assert_eq!(
            again.view("other|u|b1", &book).settings,
            SoundSettings::default()
        );
    }

    #[test]
    fn a_damaged_file_is_moved_aside_not_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sound.json");
        std::fs::write(&path, b"{\"srv|u|b1\": {\"boostDb\": ").unwrap();
        let store = SoundBooks::load(path.clone());
        assert_eq!(
            store.view("srv|u|b1", &BookId::new("b1")).settings.boost_db,
            0.0
        );
        let aside = std::fs::read(dir.path().join("sound.json.damaged")).unwrap();
        assert_eq!(aside, b"{\"srv|u|b1\": {\"boostDb\": ");
    }

    #[test]
    fn sound_config_names_a_value_out_of_range() {
        use crate::config::SoundConfig;
        assert_eq!(SoundConfig::default().check(), Ok(()));
        let c: crate::config::Config = toml::from_str("[sound]\nsilence_min_ms = 50\n").unwrap();
        let e = c.sound.unwrap().check().unwrap_err();
        assert!(e.contains("silence_min_ms = 50"), "{e}");
        assert!(toml::from_str::<crate::config::Config>("[sound]\nloud = 1\n").is_err());
    }
}
