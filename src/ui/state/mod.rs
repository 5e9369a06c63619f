//! The app state as plain data, and the reducer: `App::update(Event)`
//! returns the effects (backend requests) to carry out. No I/O here.

pub mod downloads;
pub mod history;
pub mod library;
pub mod msg;
mod offline;
mod overlay;
mod playback;
mod session;
mod sleep;
mod sound;
mod stats;
pub mod up_next;

pub use crate::domain::session::{PlayState, Snapshot};
pub use crate::domain::sleep::{SLEEP_CHOICES, SleepChoice, SleepTimer, parse_sleep};
pub use downloads::{DownloadMark, Downloads};
pub use library::{Filter, Library, Search, Sort};
pub use msg::*;
pub use overlay::Overlay;
pub use playback::{NowPlaying, fmt_time, listened};
pub use sleep::choice_label;
pub use sound::sound_parts;

use crate::domain::session::{Command, UpNextCommand};
use crate::domain::{BookId, Bookmark, LicenseStatus, Manifest};
use crate::ui::keymap::{Action, Key, KeyCode, Keymap};
use std::collections::VecDeque;

/// How long the search waits after the last keystroke before asking the server.
pub const SEARCH_DEBOUNCE_MS: Millis = 350;
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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoginField {
    Address,
    User,
    Password,
    Profile,
}

#[derive(Debug, Clone, Default)]
pub struct LoginForm {
    pub address: String,
    pub user: String,
    pub password: Password,
    pub focus: usize,
    pub error: Option<String>,
    pub busy: bool,
    pub profiles: Vec<String>,
    pub profile: Option<String>,
}

impl LoginForm {
    pub const FIELDS: [LoginField; 4] = [
        LoginField::Address,
        LoginField::User,
        LoginField::Password,
        LoginField::Profile,
    ];
    pub fn field(&self) -> LoginField {
        Self::FIELDS[self.focus % Self::FIELDS.len()]
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BookPane {
    #[default]
    Chapters,
    Bookmarks,
    /// This device's place history of the book, newest first.
    History,
}

#[derive(Debug, Clone, Default)]
pub struct BookScreen {
    pub id: BookId,
    pub manifest: Option<Manifest>,
    pub bookmarks: Vec<Bookmark>,
    pub loading: bool,
    pub pane: BookPane,
    pub cursor: usize,
    pub cover: crate::ui::covers::CoverState,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Screen {
    Login,
    Library,
    Book,
    License,
    /// Listening statistics of this device.
    Stats,
    /// The play next list: reorder and remove.
    UpNext,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Toast {
    pub text: String,
    pub error: bool,
    pub until: Millis,
}

#[derive(Debug)]
pub struct App {
    pub keymap: Keymap,
    pub settings: UiSettings,
    pub now: Millis,
    pub size: (u16, u16),
    pub screen: Screen,
    /// Where Back goes from the license screen.
    pub prev_screen: Screen,
    pub overlay: Option<Overlay>,
    pub login: LoginForm,
    pub session: Option<crate::ui::state::SessionInfo>,
    /// The server's address in use, when the profile lists several (the
    /// player bar says it).
    pub via: Option<String>,
    pub library: Library,
    pub book: BookScreen,
    /// The listening session as its owner published it last: the book
    /// (playing, paused or ready), the server's link, the sleep timer, up
    /// next, the downloads. The player draws it; it never changes it.
    pub snap: Snapshot,
    /// The up next list screen's selected row.
    pub up_next_cursor: usize,
    /// Place history per book (this device).
    pub history: history::Histories,
    /// The wall-clock time at the loop's clock 0 (set by the event loop).
    pub clock_origin: crate::domain::EpochMillis,
    /// The local time zone's offset from UTC (set by the event loop).
    pub utc_offset_s: i64,
    /// Times left are shown in the book's time instead of at the speed.
    pub media_times: bool,
    /// The last listening statistics read (the stats screen).
    pub stats: Option<crate::domain::ListeningStats>,
    pub license: Option<LicenseStatus>,
    /// Set on 403 license_required: playback and sync are stopped.
    pub license_block: Option<String>,
    pub toasts: VecDeque<Toast>,
    /// Downloads this player runs (their gauges).
    pub downloads: Downloads,
    /// Keys go to the search line (false once Enter moved focus to the list).
    pub search_focus: bool,
    /// Something visible changed since the last frame.
    pub dirty: bool,
    pub quit: bool,
}

impl App {
    pub fn new(keymap: Keymap, settings: UiSettings) -> Self {
        App {
            keymap,
            settings,
            now: 0,
            size: (80, 24),
            screen: Screen::Login,
            prev_screen: Screen::Library,
            overlay: None,
            login: LoginForm::default(),
            session: None,
            via: None,
            library: Library::default(),
            book: BookScreen::default(),
            snap: Snapshot::default(),
            up_next_cursor: 0,
            history: Default::default(),
            clock_origin: 0,
            utc_offset_s: 0,
            stats: None,
            media_times: false,
            license: None,
            license_block: None,
            toasts: VecDeque::new(),
            downloads: Downloads::default(),
            search_focus: false,
            dirty: true,
            quit: false,
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
        if let Some(t) = self.toasts.front() {
            at(t.until);
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

    pub fn toast(&mut self, text: impl Into<String>, error: bool) {
        let until = self.now + if error { 6000 } else { 3000 };
        self.toasts.push_back(Toast {
            text: text.into(),
            error,
            until,
        });
        while self.toasts.len() > 3 {
            self.toasts.pop_front();
        }
        self.dirty = true;
    }

    fn tick(&mut self, now: Millis, fx: &mut Vec<Effect>) {
        self.now = now;
        let before = self.toasts.len();
        while self.toasts.front().is_some_and(|t| t.until <= now) {
            self.toasts.pop_front();
        }
        if self.toasts.len() != before {
            self.dirty = true;
        }
        if let Some(search) = self.library.search.as_mut()
            && search.ask_server_at.is_some_and(|t| t <= now)
        {
            search.ask_server_at = None;
            let q = search.query.trim().to_owned();
            if !q.is_empty() && search.asked.as_deref() != Some(q.as_str()) {
                search.asked = Some(q.clone());
                // Offline, the books already here are what is searched.
                if !self.offline() {
                    fx.push(Effect::Search(q));
                }
            }
        }
        if self.library.step_scan() {
            self.dirty = true;
        }
        if self.is_playing() {
            self.dirty = true;
        }
    }

    fn key(&mut self, key: Key, fx: &mut Vec<Effect>) {
        if key.ctrl && key.code == KeyCode::Char('c') {
            fx.push(Effect::Session(Command::Flush));
            fx.push(Effect::Quit);
            return;
        }
        // The next key during the countdown starts the book now, as
        // MPRIS Next does; any other key cancels it. Typed text is not a
        // key: an `n` in the search line or the login form cancels.
        let typing = self.screen == Screen::Login
            || (self.screen == Screen::Library && self.search_editing());
        if self.snap.up_next.countdown.is_some() && self.overlay.is_none() {
            let go = !typing && self.keymap.action(key) == Some(Action::NextChapter);
            let c = if go {
                UpNextCommand::Go
            } else {
                UpNextCommand::Cancel
            };
            fx.push(Effect::Session(Command::UpNext(c)));
            return;
        }
        if self.overlay.is_some() {
            self.overlay_key(key, fx);
            return;
        }
        // Text input first: the login form and the search line own the keys.
        if self.screen == Screen::Login {
            self.login_key(key, fx);
            return;
        }
        if self.screen == Screen::Library && self.search_editing() && self.search_key(key, fx) {
            return;
        }
        let Some(action) = self.keymap.action(key) else {
            return;
        };
        self.action(action, fx);
    }

    fn search_editing(&self) -> bool {
        self.library.search.is_some() && self.screen == Screen::Library && self.search_focus
    }

    /// Handles a key typed into the search line; false hands it on.
    fn search_key(&mut self, key: Key, fx: &mut Vec<Effect>) -> bool {
        let Some(search) = self.library.search.as_mut() else {
            return false;
        };
        match key.code {
            KeyCode::Char(c) if !key.ctrl && !key.alt => search.query.push(c),
            KeyCode::Backspace => {
                if search.query.pop().is_none() {
                    self.close_search();
                    return true;
                }
            }
            KeyCode::Esc => {
                self.close_search();
                return true;
            }
            KeyCode::Enter => {
                let q = search.query.trim().to_owned();
                search.ask_server_at = None;
                if !q.is_empty() && search.asked.as_deref() != Some(q.as_str()) {
                    search.asked = Some(q.clone());
                    if self.offline() {
                        self.search_focus = false;
                        self.toast(
                            "The server cannot be reached: only the books shown here are searched.",
                            false,
                        );
                        return true;
                    }
                    fx.push(Effect::Search(q));
                }
                self.search_focus = false;
                return true;
            }
            KeyCode::Up | KeyCode::Down | KeyCode::PageUp | KeyCode::PageDown => return false,
            _ => return true,
        }
        search.ask_server_at = Some(self.now + SEARCH_DEBOUNCE_MS);
        self.library.rebuild(None);
        self.library.offset = 0;
        true
    }

    fn close_search(&mut self) {
        let keep = self.library.selected().map(|b| b.id.clone());
        self.library.search = None;
        self.search_focus = false;
        self.library.rebuild(keep);
    }
}

mod answers;
mod browse;
mod cover;
mod reduce;
