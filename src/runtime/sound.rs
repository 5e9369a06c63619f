//! Each book's sound in the player: applied when a book starts, changed by
//! the listener, the silence skipped counted; kept by
//! [`crate::config::SoundBooks`] (`sound.json`, shared with `earmark play`).

use super::live::{Shared, read};
use crate::config::{Config, Dirs, sound_key};
use crate::domain::{BookId, SoundSettings};
use crate::player::silence::SilenceRule;
use crate::player::{Command, EngineConfig, PlayerState};
use crate::ui::event_loop::UiSender;
use crate::ui::state::{Answer, SoundView};
use std::sync::Arc;

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
    config.silence =
        SilenceRule::from_ms(s.silence_threshold_db, s.silence_min_ms, s.silence_gap_ms);
}

/// The key of `book` for the logged-in server and user.
fn key(sh: &Shared, book: &BookId) -> String {
    let login = read(&sh.login);
    let server = login.session.as_ref().map(|s| s.server.to_string());
    let who = server
        .as_deref()
        .zip(login.session.as_ref().map(|s| s.user.as_str()));
    sound_key(who, &login.profile.name, book)
}

/// What the player shows of `book`'s sound.
fn view(sh: &Shared, key: &str, book: &BookId) -> SoundView {
    let (saved_book, saved_total) = sh.sound.saved(key);
    SoundView {
        book: Some(book.clone()),
        settings: sh.sound.settings(key),
        norm_gain_db: None,
        saved_book,
        saved_total,
    }
}

/// Saves `sound.json`; a failure is logged (the settings stay in memory).
pub(super) fn save(sh: &Shared) {
    if let Err(e) = sh.sound.save() {
        tracing::warn!("{e}");
    }
}

fn save_in_background(sh: &Arc<Shared>) {
    let sh = sh.clone();
    if let Ok(rt) = tokio::runtime::Handle::try_current() {
        rt.spawn_blocking(move || save(&sh));
    } else {
        std::thread::spawn(move || save(&sh));
    }
}

/// A book is about to play: its sound goes to the engine first.
pub(super) fn opening(sh: &Shared, book: &BookId) {
    let view = view(sh, &key(sh, book), book);
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
            let want = sh.sound.settings(&k);
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
        let mut view = view(sh, &k, book);
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
