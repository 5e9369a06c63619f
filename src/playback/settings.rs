//! Each book's playback settings, in one place for the player and `earmark
//! play`:
//! - speed and volume are kept per book and synced by sync: the listener's
//!   changes go to sync (`SyncSession::settings_changed`), which saves them
//!   and asks the engine for them, also when a book opens with saved ones;
//! - boost, normalisation and skip silence are kept on this device
//!   ([`crate::config::SoundBooks`], `sound.json`): applied here when a
//!   book opens, changed by the listener, the silence skipped counted;
//! - `[sound]` of config.toml (the engine's normalisation target and what
//!   skip silence shortens) is read here once, for the engine.

use crate::config::{Config, Dirs, SoundBooks, SoundConfig, SoundOwner};
use crate::domain::session::SoundNow;
use crate::domain::{BookId, SoundSettings};
use crate::player::{Command, EngineHandle, PlayerState};
use std::sync::Arc;

/// `[sound]` of config.toml for the engine, and a sentence when a value
/// is out of range (the defaults apply then). An unreadable file is the
/// launch's to report.
pub(super) fn config_sound(dirs: &Dirs) -> (Option<SoundConfig>, Option<String>) {
    let Ok(c) = Config::load(&dirs.config_file()) else {
        return (None, None);
    };
    let s = c.sound.unwrap_or_default();
    match s.check() {
        Ok(()) => (Some(s), None),
        Err(e) => (None, Some(e.to_string())),
    }
}

/// The sound of the books played: the store, and what the engine plays.
pub(super) struct Sounds {
    store: Arc<SoundBooks>,
    pub who: SoundOwner,
    /// The book the engine played last (whose sound it got).
    book: Option<BookId>,
    /// The engine's silence count for the current load, already added.
    counted: (u64, f64),
}

impl Sounds {
    pub fn new(store: SoundBooks, who: SoundOwner) -> Sounds {
        Sounds {
            store: Arc::new(store),
            who,
            book: None,
            counted: (0, 0.0),
        }
    }

    /// Where an unreadable `sound.json` was moved aside, once at start.
    pub fn damaged(&self) -> Option<String> {
        self.store
            .damaged()
            .map(|aside| aside.display().to_string())
    }

    fn now(&self, book: &BookId) -> SoundNow {
        let key = self.store.key(&self.who, book);
        let (saved_book, saved_total) = self.store.saved(&key);
        SoundNow {
            settings: self.store.settings(&key),
            norm_gain_db: None,
            saved_book,
            saved_total,
            skipped_now: 0.0,
        }
    }

    /// A book is about to play: its sound goes to the engine first (when
    /// the engine has another).
    pub fn opening(&mut self, engine: Option<&EngineHandle>, book: &BookId) -> SoundNow {
        let now = self.now(book);
        if let Some(e) = engine
            && e.state().sound != now.settings
        {
            e.send(Command::SetSound(now.settings));
        }
        now
    }

    /// The listener changed `book`'s sound: applied and kept.
    pub fn changed(
        &mut self,
        engine: Option<&EngineHandle>,
        book: Option<&BookId>,
        settings: SoundSettings,
    ) {
        let settings = settings.clamped();
        if let Some(e) = engine {
            e.send(Command::SetSound(settings));
        }
        if let Some(book) = book {
            self.store.set(self.store.key(&self.who, book), settings);
            self.save_in_background();
        }
    }

    /// One engine state of `book`'s load: applies the book's sound when the
    /// engine plays another book, counts the silence skipped.
    pub fn follow(
        &mut self,
        engine: Option<&EngineHandle>,
        book: &BookId,
        s: &PlayerState,
    ) -> SoundNow {
        let key = self.store.key(&self.who, book);
        if self.book.as_ref() != Some(book) {
            self.book = Some(book.clone());
            let want = self.store.settings(&key);
            if s.sound != want
                && let Some(e) = engine
            {
                e.send(Command::SetSound(want));
            }
        }
        let load = s.playback_id.0;
        if self.counted.0 != load {
            self.counted = (load, 0.0);
        }
        let delta = s.silence_skipped - self.counted.1;
        if delta > 0.0 {
            self.counted.1 = s.silence_skipped;
            if self.store.add_saved(key, delta) {
                self.save_in_background();
            }
        }
        let mut now = self.now(book);
        now.norm_gain_db = s.norm_gain_db;
        now
    }

    /// Saves `sound.json`; a failure is logged (the settings stay in memory).
    pub fn save(&self) {
        if let Err(e) = self.store.save() {
            tracing::warn!("{e}");
        }
    }

    fn save_in_background(&self) {
        let store = self.store.clone();
        let save = move || {
            if let Err(e) = store.save() {
                tracing::warn!("{e}");
            }
        };
        // File I/O: the runtime's blocking pool.
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn_blocking(save);
        } else {
            save();
        }
    }
}
