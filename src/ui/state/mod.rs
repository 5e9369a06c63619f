//! The app state as plain data, and the reducer: `App::update(Event)`
//! returns the effects (backend requests) to carry out. No I/O here.
//!
//! The app keeps the screen, the listening session's snapshot (read only:
//! the session's owner publishes it) and the routing of keys and answers.
//! Each part of the screen is a sub-model that owns its state and update:
//! - `library`: the list, its search, filter, sort and groups;
//! - `book`: the book screen, its panes and the place histories;
//! - `player`: the player bar's keys, each a command to the session;
//! - `overlay`: the box open over the screen and its keys;
//! - `up_next`: the play next list screen;
//! - `login`: the login form; `toasts`: the messages they say.
//!
//! Around them: `session` takes the snapshots and events and words the
//! session's news, `answers` routes the backends' answers, `reduce` routes
//! the keys and the mouse, `history` jumps back (undo, the history list).

pub mod book;
pub mod downloads;
pub mod history;
pub mod library;
pub mod login;
pub mod msg;
mod offline;
pub mod overlay;
mod playback;
pub mod player;
mod session;
mod sleep;
pub mod toasts;
pub mod up_next;

/// `h:mm:ss` or `m:ss` of the whole seconds: the one rule every clock
/// follows (`domain::clock`).
pub use crate::domain::clock::clock as fmt_time;
pub use crate::domain::session::{PlayState, Snapshot};
pub use crate::domain::sleep::{SLEEP_CHOICES, SleepChoice, SleepTimer, parse_sleep};
pub use crate::ui::words::count;
pub use book::{BookPane, BookScreen};
pub use downloads::{DownloadMark, Downloads};
pub use library::{Filter, Library, SEARCH_DEBOUNCE_MS, Search, Sort};
pub use login::{LoginField, LoginForm};
pub use msg::*;
pub use overlay::{Overlay, Overlays};
pub use playback::{NowPlaying, listened};
pub use player::{NOTHING_PLAYING, Player};
pub use sleep::choice_label;
pub use toasts::{Toast, Toasts};
pub use up_next::UpNextList;

use crate::domain::LicenseStatus;
use crate::domain::session::{Command, UpNextCommand};
use crate::ui::keymap::{Action, Key, KeyCode, Keymap};
use toasts::Out;

/// While playing, the clock ticks at most this often.
pub const PLAYING_TICK_MS: Millis = 250;

#[derive(Debug, Clone, PartialEq)]
pub struct UiSettings {
    /// Listened seconds; media seconds = this × speed.
    pub short_skip: f64,
    pub long_skip: f64,
    /// `[ui] covers`: the book screen's cover box, and how it is drawn.
    pub covers: crate::ui::covers::CoverMode,
    /// `[ui] accessible` / `--accessible`: no borders, bars or covers; the
    /// player's state in words (docs/ui.md).
    pub accessible: bool,
}

impl Default for UiSettings {
    fn default() -> Self {
        UiSettings {
            short_skip: 10.0,
            long_skip: 30.0,
            covers: Default::default(),
            accessible: false,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Screen {
    #[default]
    Login,
    Library,
    Book,
    License,
    /// Listening statistics of this device.
    Stats,
    /// The play next list: reorder and remove.
    UpNext,
}

#[derive(Debug, Default)]
pub struct App {
    pub keymap: Keymap,
    pub settings: UiSettings,
    pub now: Millis,
    pub size: (u16, u16),
    pub screen: Screen,
    /// Where Back goes from the license, statistics and up next screens.
    pub prev_screen: Screen,
    /// The listening session as its owner published it last: the book
    /// (playing, paused or ready), the server's link, the sleep timer, up
    /// next, the downloads. The player draws it; it never changes it.
    pub snap: Snapshot,
    pub login: LoginForm,
    pub session: Option<SessionInfo>,
    /// The server's address in use, when the profile lists several (the
    /// player bar says it).
    pub via: Option<String>,
    pub library: Library,
    pub book: BookScreen,
    pub player: Player,
    pub overlays: Overlays,
    pub up_next: UpNextList,
    /// The wall-clock time at the loop's clock 0 (set by the event loop).
    pub clock_origin: crate::domain::EpochMillis,
    /// The local time zone's offset from UTC (set by the event loop).
    pub utc_offset_s: i64,
    /// The last listening statistics read (the stats screen).
    pub stats: Option<crate::domain::ListeningStats>,
    pub license: Option<LicenseStatus>,
    /// Set on 403 license_required: playback and sync are stopped.
    pub license_block: Option<String>,
    pub toasts: Toasts,
    /// Downloads: on disk (the session's) and running here (their gauges).
    pub downloads: Downloads,
    /// Something visible changed since the last frame.
    pub dirty: bool,
    pub quit: bool,
}

impl App {
    pub fn new(keymap: Keymap, settings: UiSettings) -> Self {
        App {
            keymap,
            settings,
            size: (80, 24),
            prev_screen: Screen::Library,
            dirty: true,
            ..App::default()
        }
    }

    /// The reducer. Marks the app dirty when something visible changed.
    pub fn update(&mut self, event: Event) -> Vec<Effect> {
        let mut fx = Vec::new();
        match event {
            Event::Tick(now) => self.tick(now, &mut fx),
            Event::Resize(w, h) => {
                self.size = (w, h);
                self.dirty = true;
                self.want_cover(&mut fx);
            }
            Event::Key(key) => {
                self.dirty = true;
                self.key(key.normalized(), &mut fx);
            }
            Event::Paste(text) => {
                self.dirty = true;
                let line: String = text.chars().filter(|c| !c.is_control()).collect();
                for c in line.chars() {
                    self.key(Key::ch(c), &mut fx);
                }
            }
            Event::Mouse(m) => {
                self.dirty = true;
                self.mouse(m, &mut fx);
            }
            Event::Answer(b) => {
                // A snapshot where only the place moved waits for the next
                // tick, so playing draws at most 4 frames a second.
                if !self.place_only(&b) {
                    self.dirty = true;
                }
                self.backend(b, &mut fx);
            }
        }
        if fx.contains(&Effect::Quit) {
            self.quit = true;
        }
        fx
    }

    /// When the loop must wake up even with no input, if at all.
    pub fn next_wake(&self) -> Option<Millis> {
        let mut wake: Option<Millis> = None;
        let mut at = |t: Millis| wake = Some(wake.map_or(t, |w| w.min(t)));
        if self.is_playing() {
            at(self.now + PLAYING_TICK_MS);
        }
        if let Some(t) = self.session_wake() {
            at(t);
        }
        if let Some(t) = self.toasts.next_change() {
            at(t);
        }
        if let Some(t) = self.library.search.as_ref().and_then(|s| s.ask_server_at) {
            at(t);
        }
        // An unfinished search scan continues at once, one chunk a frame.
        if self.library.searching() {
            at(self.now);
        }
        wake
    }

    pub fn is_playing(&self) -> bool {
        self.playing().is_some_and(|p| p.state.is_playing())
    }

    /// The session's book (playing, paused, or ready to resume).
    pub fn playing(&self) -> Option<&NowPlaying> {
        self.snap.listening.as_ref()
    }

    /// A toast (the sub-models say theirs through [`Out`]).
    pub fn toast(&mut self, text: impl Into<String>, error: bool) {
        self.toasts.push(text.into(), error);
        self.dirty = true;
    }

    /// A toast that is not an error.
    pub fn say(&mut self, text: impl Into<String>) {
        self.toast(text, false);
    }

    fn tick(&mut self, now: Millis, fx: &mut Vec<Effect>) {
        self.now = now;
        if self.toasts.tick(now) {
            self.dirty = true;
        }
        let offline = self.offline();
        let mut out = Out::new(fx, &mut self.toasts);
        if self.library.tick(now, offline, &mut out) || self.is_playing() {
            self.dirty = true;
        }
    }

    fn key(&mut self, key: Key, fx: &mut Vec<Effect>) {
        if key.ctrl && key.code == KeyCode::Char('c') {
            fx.extend([Effect::Session(Command::Flush), Effect::Quit]);
            return;
        }
        // The next key during the countdown starts the book now, as
        // MPRIS Next does; any other key only cancels it, also over a box.
        // Typed text is not a key: an `n` in the search line or the login
        // form cancels.
        let typing = self.screen == Screen::Login || self.search_editing();
        if let Some(c) = &self.snap.up_next.countdown {
            let go = !typing
                && !self.overlays.is_open()
                && self.keymap.action(key) == Some(Action::NextChapter);
            let c = match go {
                true => UpNextCommand::Go,
                false => {
                    let text = format!("Up next cancelled: “{}” does not start.", c.next.title);
                    self.say(text);
                    UpNextCommand::Cancel
                }
            };
            fx.push(Effect::Session(Command::UpNext(c)));
            return;
        }
        if self.overlays.is_open() {
            self.overlay_key(key, fx);
            return;
        }
        // Text input first: the login form and the search line own the keys.
        if self.screen == Screen::Login {
            if self.login.key(key, self.session.is_some(), fx) == login::Leave::Back {
                self.screen = Screen::Library;
            }
            return;
        }
        if self.search_editing() {
            let offline = self.offline();
            let mut out = Out::new(fx, &mut self.toasts);
            if self.library.search_key(key, self.now, offline, &mut out) {
                return;
            }
        }
        let Some(action) = self.keymap.action(key) else {
            return;
        };
        self.action(action, fx);
    }

    fn search_editing(&self) -> bool {
        self.screen == Screen::Library && self.library.search_editing()
    }

    /// A key for the open box, and what its closing leaves to do.
    fn overlay_key(&mut self, key: Key, fx: &mut Vec<Effect>) {
        let action = self.keymap.action(key);
        let mut out = Out::new(fx, &mut self.toasts);
        match self.overlays.key(key, action, &mut out) {
            overlay::Closed::Nothing => {}
            overlay::Closed::Restart(book) => self.restart(book, fx),
            overlay::Closed::Continue(at) => {
                let text = format!("Continuing at {}", self.describe_position(&at));
                self.say(text);
            }
        }
    }

    /// Opens a screen reached from anywhere (license, statistics, up
    /// next); Back returns to where it was opened from.
    fn go_to(&mut self, screen: Screen) {
        if !matches!(
            self.screen,
            Screen::License | Screen::Stats | Screen::UpNext
        ) {
            self.prev_screen = self.screen;
        }
        self.screen = screen;
    }
}

mod answers;
mod cover;
mod reduce;
