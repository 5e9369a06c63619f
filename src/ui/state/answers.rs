//! The reducer's half for answers: what the backends (API, engine, sync)
//! report, and the sleep timer driven by the clock.

use super::*;

impl App {
    pub(super) fn backend(&mut self, b: Answer, fx: &mut Vec<Effect>) {
        match b {
            Answer::Profiles {
                names,
                current,
                address,
                user,
            } => {
                self.login.profiles = names;
                self.login.profile = current;
                self.login.address = address;
                self.login.user = user;
            }
            Answer::LoggedIn(session) => {
                self.login.busy = false;
                self.login.error = None;
                self.login.password = Password::default();
                self.session = Some(session);
                if self.screen == Screen::Login {
                    self.screen = Screen::Library;
                }
                fx.push(Effect::LoadLibrary);
            }
            Answer::LoginFailed(e) => {
                self.login.busy = false;
                self.login.error = Some(e.to_string());
                self.screen = Screen::Login;
                self.login.focus = match e {
                    LoginError::BadCredentials => 2,
                    _ => 0,
                };
            }
            Answer::Library { books, from_cache } => {
                self.library.set_books(books, from_cache);
                self.library.scroll_into_view(self.list_height());
            }
            Answer::LibraryHead(books) => {
                if !self.library.loaded {
                    self.library.set_books(books, true);
                    self.library.partial = true;
                }
            }
            Answer::Categories(c) => self.library.categories = c,
            Answer::SearchResults { query, books } => {
                // A late answer for an older query still adds books; that is fine.
                let _ = query;
                self.library.merge(books);
            }
            Answer::BookLoaded {
                book,
                manifest,
                bookmarks,
            } => {
                let id = book.id.clone();
                if self.library.get(&id).is_some() {
                    self.library.update_book(&id, |b| *b = book);
                } else {
                    self.library.merge(vec![book]);
                }
                if self.book.id == id {
                    self.book.loading = false;
                    if manifest.is_some() {
                        self.book.manifest = manifest;
                    }
                    self.book.bookmarks = bookmarks;
                }
            }
            Answer::BookmarkAdded(bm) => {
                self.toast(
                    format!("Bookmark added at {}", fmt_time(bm.position)),
                    false,
                );
                if self.book.id == bm.book_id {
                    self.book.bookmarks.push(bm);
                }
            }
            Answer::BookmarkDeleted { book, id } => {
                if self.book.id == book {
                    self.book.bookmarks.retain(|b| b.id != id);
                    let len = self.book.bookmarks.len();
                    self.book.cursor = self.book.cursor.min(len.saturating_sub(1));
                }
                self.toast("Bookmark deleted", false);
            }
            Answer::FavoriteSet { book, favorite } => {
                self.library.update_book(&book, |b| b.favorite = favorite)
            }
            Answer::ProgressChanged { book, progress } => self
                .library
                .update_book(&book, |b| b.progress = Some(progress)),
            Answer::License(status) => {
                if status.valid {
                    self.license_block = None;
                }
                self.license = Some(status);
            }
            Answer::LicenseRequired(msg) => {
                self.license_block = Some(msg);
                self.login.busy = false;
            }
            Answer::Engine(view) => self.engine(view, fx),
            Answer::Sync(s) => self.sync = s,
            Answer::Conflict {
                book,
                server,
                local,
            } => {
                self.overlay = Some(Overlay::Conflict {
                    book,
                    server,
                    local,
                    cursor: 0,
                })
            }
            Answer::Failed(msg) => {
                self.book.loading = false;
                self.toast(msg, true)
            }
            Answer::Notice(msg) => self.toast(msg, false),
            Answer::Remote(cmd) => self.remote(cmd, fx),
        }
    }

    pub(super) fn engine(&mut self, view: EngineView, fx: &mut Vec<Effect>) {
        let Some(np) = self.playing.as_mut().filter(|p| p.book.id == view.book) else {
            return;
        };
        let prev_chapter = np.engine.as_ref().map(|e| e.chapter.clone());
        if let PlayState::Error(e) = &view.state
            && np.engine.as_ref().is_none_or(|old| old.state != view.state)
        {
            let e = e.clone();
            self.toast(e, true);
        }
        let Some(np) = self.playing.as_mut() else {
            return;
        };
        if !matches!(self.sleep, Some(SleepTimer::Fading { .. })) {
            self.volume = view.volume;
        }
        self.speed = view.speed;
        let chapter_changed = prev_chapter.is_some_and(|c| c != view.chapter);
        np.engine = Some(view);
        if chapter_changed && self.sleep == Some(SleepTimer::EndOfChapter) {
            // The chapter ended before the fade could start (a short chapter).
            fx.push(Effect::Engine(EngineCmd::Pause));
            fx.push(Effect::FlushProgress);
            self.sleep = None;
            self.toast("Sleep timer: paused at the end of the chapter", false);
        }
        self.sleep_tick(fx);
    }

    pub(super) fn sleep_tick(&mut self, fx: &mut Vec<Effect>) {
        let Some(timer) = self.sleep else {
            return;
        };
        let playing = self.is_playing();
        match timer {
            SleepTimer::Until(t) if self.now >= t && playing => self.start_fade(),
            SleepTimer::Until(_) => {}
            SleepTimer::EndOfChapter => {
                let left = self.playing.as_ref().and_then(|np| {
                    let (pos, dur) = np.chapter_progress();
                    dur.map(|d| (d - pos) / f64::from(self.speed.max(0.1)))
                });
                if playing && left.is_some_and(|l| l * 1000.0 <= playback::FADE_MS as f64) {
                    self.start_fade();
                }
            }
            SleepTimer::Fading { since, volume } => {
                let done = self.now.saturating_sub(since) as f32 / playback::FADE_MS as f32;
                if done >= 1.0 || !playing {
                    self.sleep = None;
                    fx.push(Effect::Engine(EngineCmd::Pause));
                    fx.push(Effect::Engine(EngineCmd::FadeVolume(volume)));
                    fx.push(Effect::FlushProgress);
                    self.volume = volume;
                    self.toast("Sleep timer: paused", false);
                } else {
                    fx.push(Effect::Engine(EngineCmd::FadeVolume(volume * (1.0 - done))));
                }
            }
        }
    }

    pub(super) fn start_fade(&mut self) {
        self.sleep = Some(SleepTimer::Fading {
            since: self.now,
            volume: self.volume,
        });
        self.dirty = true;
    }
}
