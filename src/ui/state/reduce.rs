//! The reducer's branches for input: actions, the login form and the mouse
//! (answers from the backends and the sleep timer are in `answers`).

use super::*;
use crate::domain::session::{Command, Start};
use crate::domain::{ChapterId, JumpCause};
use crate::ui::views::layout::Areas;

const SPEED_MIN: f32 = 0.5;
const SPEED_MAX: f32 = 3.0;

fn step_speed(speed: f32, delta: f32) -> f32 {
    (((speed + delta) * 20.0).round() / 20.0).clamp(SPEED_MIN, SPEED_MAX)
}

impl App {
    pub(super) fn list_height(&self) -> usize {
        Areas::compute(self.size.0, self.size.1).list_rows()
    }

    /// True (and says why) while the license stops playback.
    fn license_stops(&mut self) -> bool {
        if self.license_block.is_some() {
            self.toast(LICENSE_STOP, true);
        }
        self.license_block.is_some()
    }

    pub(super) fn action(&mut self, action: Action, fx: &mut Vec<Effect>) {
        use Action as A;
        if self.license_block.is_some()
            && matches!(
                action,
                A::PlayPause
                    | A::SkipBackShort
                    | A::SkipForwardShort
                    | A::SkipBackLong
                    | A::SkipForwardLong
                    | A::NextChapter
                    | A::PrevChapter
                    | A::UndoJump
            )
        {
            self.toast(LICENSE_STOP, true);
            return;
        }
        match action {
            A::Quit => {
                fx.push(Effect::Session(Command::Flush));
                fx.push(Effect::Quit);
            }
            A::Help => self.overlay = Some(Overlay::Help { scroll: 0 }),
            A::Back => self.back(fx),
            A::Up | A::Down | A::Top | A::Bottom | A::PageUp | A::PageDown => self.navigate(action),
            A::Open => self.open(fx),
            A::Search => {
                self.screen = Screen::Library;
                if self.library.search.is_none() {
                    self.library.search = Some(Search::default());
                }
                self.search_focus = true;
            }
            // On another book's screen, Space plays that book (its screen
            // says so), not the one in the player bar.
            A::PlayPause if self.screen == Screen::Book && !self.plays(&self.book.id.clone()) => {
                self.play_book(Start::Resume, fx)
            }
            A::PlayPause => fx.push(Effect::Session(Command::Toggle)),
            A::SkipBackShort => self.skip(-self.settings.short_skip, fx),
            A::SkipForwardShort => self.skip(self.settings.short_skip, fx),
            A::SkipBackLong => self.skip(-self.settings.long_skip, fx),
            A::SkipForwardLong => self.skip(self.settings.long_skip, fx),
            A::SpeedDown => self.set_speed(-0.05, fx),
            A::SpeedUp => self.set_speed(0.05, fx),
            A::SpeedDownBig => self.set_speed(-0.25, fx),
            A::SpeedUpBig => self.set_speed(0.25, fx),
            A::VolumeDown | A::VolumeUp => {
                let d = if action == A::VolumeUp { 0.05 } else { -0.05 };
                let now = self.playing().map_or(1.0, |p| p.volume);
                let v = ((now + d) * 20.0).round().clamp(0.0, 20.0) / 20.0;
                fx.push(Effect::Session(Command::Volume(v)));
            }
            A::BoostDown | A::BoostUp | A::Normalize | A::SkipSilence => {
                self.sound_action(action, fx)
            }
            // In the last chapter the session goes on to up next.
            A::NextChapter => fx.push(Effect::Session(Command::NextChapter)),
            A::PrevChapter => fx.push(Effect::Session(Command::PrevChapter)),
            A::SleepTimer => {
                self.overlay = Some(Overlay::Sleep {
                    cursor: 0,
                    typed: String::new(),
                })
            }
            A::SleepExtend => fx.push(Effect::Session(Command::SleepExtend)),
            A::TimeLeftMode => {
                self.media_times = !self.media_times;
                self.toast(
                    if self.media_times {
                        "Times left: in the book's time (as at 1×)"
                    } else {
                        "Times left: at your speed"
                    },
                    false,
                );
            }
            A::Favorite => {
                if let Some(b) = self.current_book() {
                    let (book, favorite) = (b.id.clone(), !b.favorite);
                    self.library.update_book(&book, |b| b.favorite = favorite);
                    fx.push(Effect::SetFavorite { book, favorite });
                }
            }
            A::Filter | A::Category | A::Sort if self.screen == Screen::Library => {
                let keep = self.library.selected().map(|b| b.id.clone());
                match action {
                    A::Filter => self.library.filter = self.library.filter.next(),
                    A::Category => self.library.next_category(),
                    _ => self.library.sort = self.library.sort.next(),
                }
                self.library.rebuild(keep);
            }
            A::Filter | A::Category | A::Sort => {}
            A::Group | A::AuthorBooks | A::NarratorBooks | A::SeriesBooks => self.browse(action),
            A::Refresh if self.screen == Screen::License => fx.push(Effect::LoadLicense),
            A::Refresh if self.screen == Screen::Stats => fx.push(Effect::LoadStats),
            A::Refresh => self.refresh(fx),
            A::NowPlaying => {
                if let Some(id) = self.playing().map(|p| p.book.id.clone()) {
                    self.open_book(id, fx);
                }
            }
            A::Bookmark => self.start_bookmark(),
            A::Bookmarks if self.screen == Screen::Book => {
                self.book.pane = match self.book.pane {
                    BookPane::Chapters => BookPane::Bookmarks,
                    BookPane::Bookmarks => BookPane::History,
                    BookPane::History => BookPane::Chapters,
                };
                self.book.cursor = 0;
            }
            A::UpNextAdd => self.up_next_toggle(fx),
            A::UpNext => self.show_up_next(),
            A::MoveEarlier => self.up_next_shift(-1, fx),
            A::MoveLater => self.up_next_shift(1, fx),
            A::UndoJump => self.undo_jump(fx),
            A::History => self.show_history(fx),
            A::Stats => self.show_stats(fx),
            A::Bookmarks => {}
            A::Delete if self.screen == Screen::UpNext => self.up_next_toggle(fx),
            A::Delete => {
                if self.screen == Screen::Book
                    && self.book.pane == BookPane::Bookmarks
                    && let Some(bm) = self.book.bookmarks.get(self.book.cursor)
                {
                    fx.push(Effect::DeleteBookmark {
                        book: bm.book_id.clone(),
                        id: bm.id.clone(),
                    });
                }
            }
            A::MarkFinished => {
                if let Some(b) = self.current_book() {
                    let finished = !b.progress.as_ref().is_some_and(|p| p.finished);
                    let id = b.id.clone();
                    fx.push(Effect::Session(Command::MarkFinished {
                        book: id,
                        finished,
                    }));
                    self.toast(
                        if finished {
                            "Marked finished"
                        } else {
                            "Marked unfinished"
                        },
                        false,
                    );
                }
            }
            A::RetryRefused | A::DiscardRefused if self.snap.queue.refused == 0 => {
                self.toast("No change was refused by the server.", false)
            }
            A::RetryRefused => fx.push(Effect::RetryRefused),
            A::DiscardRefused => {
                self.overlay = Some(Overlay::ConfirmDiscardRefused {
                    count: self.snap.queue.refused,
                })
            }
            A::Restart => {
                if let Some(b) = self.current_book() {
                    self.overlay = Some(Overlay::ConfirmRestart { book: b.id.clone() });
                }
            }
            A::Download if self.needs_server("Downloading") => {}
            A::Download => {
                if let Some(b) = self.current_book() {
                    let (id, title) = (b.id.clone(), b.title.clone());
                    if matches!(self.downloads.mark(&id), Some(DownloadMark::Running { .. })) {
                        self.toast(format!("\"{title}\" is downloading already."), false);
                    } else {
                        self.downloads.progress(id.clone(), 0, 0);
                        self.toast(format!("Downloading \"{title}\"…"), false);
                        fx.push(Effect::Download(id));
                    }
                }
            }
            A::License => {
                if !matches!(self.screen, Screen::License | Screen::Stats) {
                    self.prev_screen = self.screen;
                }
                self.screen = Screen::License;
                fx.push(Effect::LoadLicense);
            }
            A::Profiles => {
                self.screen = Screen::Login;
                self.login.error = None;
                self.login.busy = false;
            }
        }
    }

    /// The book the user is looking at: the open book, or the selected row.
    pub(super) fn current_book(&self) -> Option<&crate::domain::Book> {
        match self.screen {
            Screen::Book => self.library.get(&self.book.id),
            Screen::Library => self.library.selected(),
            _ => None,
        }
    }

    fn back(&mut self, fx: &mut Vec<Effect>) {
        match self.screen {
            Screen::Book => self.screen = Screen::Library,
            Screen::License | Screen::Stats | Screen::UpNext => self.screen = self.prev_screen,
            Screen::Library if self.library.search.is_some() => self.close_search(),
            Screen::Library if self.library.focus.is_some() || self.library.group.is_some() => {
                self.browse_back();
            }
            Screen::Library | Screen::Login => {
                fx.push(Effect::Session(Command::Flush));
                fx.push(Effect::Quit);
            }
        }
    }

    fn navigate(&mut self, action: Action) {
        let page = self.list_height().max(1) as isize;
        let delta = match action {
            Action::Up => -1,
            Action::Down => 1,
            Action::PageUp => -page,
            Action::PageDown => page,
            Action::Top => isize::MIN / 2,
            _ => isize::MAX / 2,
        };
        match self.screen {
            Screen::Library => {
                self.library.move_by(delta);
                self.library.scroll_into_view(self.list_height());
            }
            Screen::Book => {
                let len = match self.book.pane {
                    BookPane::Chapters => self.book.manifest.as_ref().map_or(0, |m| m.items.len()),
                    BookPane::Bookmarks => self.book.bookmarks.len(),
                    BookPane::History => self.history.of(&self.book.id).len(),
                };
                self.book.cursor = self
                    .book
                    .cursor
                    .saturating_add_signed(delta)
                    .min(len.saturating_sub(1));
            }
            Screen::UpNext => {
                let len = self.snap.up_next.list.len();
                self.up_next_cursor = self
                    .up_next_cursor
                    .saturating_add_signed(delta)
                    .min(len.saturating_sub(1));
            }
            _ => {}
        }
    }

    fn open(&mut self, fx: &mut Vec<Effect>) {
        match self.screen {
            Screen::Library if self.library.showing_groups() => self.library.open_group(),
            Screen::Library => {
                if let Some(id) = self.library.selected().map(|b| b.id.clone()) {
                    self.open_book(id, fx);
                }
            }
            Screen::Book if self.book.pane == BookPane::History => self.history_jump(fx),
            Screen::UpNext => self.up_next_open(fx),
            Screen::Book => {
                let start = match self.book.pane {
                    BookPane::History => None,
                    BookPane::Chapters => self
                        .book
                        .manifest
                        .as_ref()
                        .and_then(|m| m.items.get(self.book.cursor))
                        .map(|i| Start::At(i.chapter_id.clone(), 0.0)),
                    BookPane::Bookmarks => self
                        .book
                        .bookmarks
                        .get(self.book.cursor)
                        .map(|b| Start::At(b.chapter_id.clone(), b.position)),
                };
                let cause = match self.book.pane {
                    BookPane::Bookmarks => JumpCause::Bookmark,
                    _ => JumpCause::Chapter,
                };
                if let Some(start) = start {
                    self.play_at(start, cause, fx);
                }
            }
            _ => {}
        }
    }

    pub(super) fn open_book(&mut self, id: BookId, fx: &mut Vec<Effect>) {
        if self.book.id != id || self.book.manifest.is_none() {
            self.book = BookScreen {
                id: id.clone(),
                loading: true,
                ..BookScreen::default()
            };
        }
        // Land on the current chapter when it is the playing book.
        if let Some(i) = self
            .playing()
            .filter(|p| p.book.id == id)
            .and_then(|p| p.chapter_index())
        {
            self.book.pane = BookPane::Chapters;
            self.book.cursor = i;
        }
        self.screen = Screen::Book;
        fx.push(Effect::LoadHistory(id.clone()));
        fx.push(Effect::LoadBook(id));
        self.want_cover(fx);
    }

    /// Plays the open book at `start`: the chapter, bookmark or history
    /// place picked (the playing book moves there and plays), or where
    /// the server says.
    pub(super) fn play_at(&mut self, start: Start, cause: JumpCause, fx: &mut Vec<Effect>) {
        if self.plays(&self.book.id.clone())
            && let Start::At(chapter, position) = start
        {
            if self.license_stops() {
                return;
            }
            fx.push(Effect::Session(Command::Seek {
                chapter,
                position,
                cause,
            }));
            if !self.is_playing() {
                fx.push(Effect::Session(Command::Play));
            }
            return;
        }
        self.play_book(start, fx);
    }

    pub(super) fn play_book(&mut self, start: Start, fx: &mut Vec<Effect>) {
        if self.license_stops() {
            return;
        }
        let Some(manifest) = self.book.manifest.clone() else {
            self.no_chapters_yet();
            return;
        };
        let Some(book) = self.library.get(&self.book.id).cloned() else {
            return;
        };
        if self.plays(&book.id) && start == Start::Resume {
            fx.push(Effect::Session(Command::Toggle));
            return;
        }
        fx.push(Effect::Session(Command::Open {
            book: book.id.clone(),
            start,
            known: crate::domain::session::known(book, manifest),
        }));
    }

    pub(super) fn restart(&mut self, book: BookId, fx: &mut Vec<Effect>) {
        if self.book.id == book && self.book.manifest.is_some() {
            // A new playback from 0: sync sees the explicit restart intent.
            self.play_book(Start::Restart, fx);
        } else {
            fx.push(Effect::Session(Command::MarkFinished {
                book,
                finished: false,
            }));
        }
        self.toast("Restarted from the beginning", false);
    }

    fn skip(&mut self, listened: f64, fx: &mut Vec<Effect>) {
        // The interval is listened time; at 2× it covers twice the media.
        let media = listened * f64::from(self.speed());
        fx.push(Effect::Session(Command::SkipBy(media)));
    }

    fn set_speed(&mut self, delta: f32, fx: &mut Vec<Effect>) {
        let speed = step_speed(self.speed(), delta);
        fx.push(Effect::Session(Command::Speed(speed)));
    }

    fn start_bookmark(&mut self) {
        let Some(np) = self.playing() else {
            self.toast("Start playing to add a bookmark here.", false);
            return;
        };
        self.overlay = Some(Overlay::BookmarkNote {
            book: np.book.id.clone(),
            chapter: np.chapter.clone(),
            position: np.position,
            note: String::new(),
        });
    }

    pub(super) fn login_key(&mut self, key: Key, fx: &mut Vec<Effect>) {
        let form = &mut self.login;
        let field = form.field();
        match key.code {
            KeyCode::Esc => {
                if self.session.is_some() {
                    self.screen = Screen::Library;
                } else {
                    fx.push(Effect::Quit);
                }
            }
            KeyCode::Tab | KeyCode::Down => form.focus = (form.focus + 1) % LoginForm::FIELDS.len(),
            KeyCode::BackTab | KeyCode::Up => {
                form.focus = (form.focus + LoginForm::FIELDS.len() - 1) % LoginForm::FIELDS.len()
            }
            KeyCode::Left | KeyCode::Right
                if field == LoginField::Profile && !form.profiles.is_empty() =>
            {
                let cur = form
                    .profile
                    .as_ref()
                    .and_then(|p| form.profiles.iter().position(|x| x == p));
                let n = form.profiles.len();
                let next = match (cur, key.code) {
                    (None, _) => 0,
                    (Some(i), KeyCode::Right) => (i + 1) % n,
                    (Some(i), _) => (i + n - 1) % n,
                };
                let name = form.profiles[next].clone();
                form.profile = Some(name.clone());
                fx.push(Effect::SwitchProfile(name));
            }
            KeyCode::Enter => {
                if form.address.trim().is_empty() {
                    form.error = Some("Enter the server address.".into());
                    form.focus = 0;
                } else if form.user.trim().is_empty() {
                    form.error = Some("Enter your user name.".into());
                    form.focus = 1;
                } else if field != LoginField::Password && form.password.expose().is_empty() {
                    form.focus = 2;
                } else {
                    form.error = None;
                    form.busy = true;
                    // The password leaves the form here and is not kept.
                    let password = std::mem::take(&mut form.password);
                    fx.push(Effect::Login {
                        address: form.address.trim().to_owned(),
                        user: form.user.trim().to_owned(),
                        password,
                        profile: form.profile.clone(),
                    });
                }
            }
            KeyCode::Backspace => {
                match field {
                    LoginField::Address => {
                        form.address.pop();
                    }
                    LoginField::User => {
                        form.user.pop();
                    }
                    LoginField::Password => {
                        let mut p = form.password.expose().to_owned();
                        p.pop();
                        form.password = Password::new(p);
                    }
                    LoginField::Profile => {}
                };
            }
            KeyCode::Char(c) if !key.ctrl && !key.alt => match field {
                LoginField::Address => form.address.push(c),
                LoginField::User => form.user.push(c),
                LoginField::Password => {
                    let mut p = form.password.expose().to_owned();
                    p.push(c);
                    form.password = Password::new(p);
                }
                LoginField::Profile => {}
            },
            _ => {}
        }
    }

    pub(super) fn mouse(&mut self, m: Mouse, fx: &mut Vec<Effect>) {
        if self.overlay.is_some() {
            return;
        }
        let areas = Areas::compute(self.size.0, self.size.1);
        match m {
            Mouse::ScrollUp => self.navigate(Action::Up),
            Mouse::ScrollDown => self.navigate(Action::Down),
            Mouse::Click { x, y } => {
                if let Some(frac) = areas.book_bar_fraction(x, y)
                    && self.playing().is_some()
                {
                    if self.license_stops() {
                        return;
                    }
                    let Some(np) = self.playing() else {
                        return;
                    };
                    let (_, total) = np.book_progress();
                    if let Some(target) = total.map(|t| t * frac)
                        && let Some((chapter, position)) = locate(&np.manifest, target)
                    {
                        fx.push(Effect::Session(Command::Seek {
                            chapter,
                            position,
                            cause: JumpCause::Seek,
                        }));
                    }
                    return;
                }
                if self.screen == Screen::Library
                    && let Some(row) = areas.list_row(y)
                {
                    let i = self.library.offset + row;
                    if i < self.library.len() {
                        if i == self.library.cursor {
                            self.open(fx);
                        } else {
                            self.library.move_to(i);
                        }
                    }
                }
            }
        }
    }
}

const LICENSE_STOP: &str =
    "Playback is stopped: the server has no valid license (press i for details).";

/// The chapter and offset at `target` seconds into the book.
fn locate(manifest: &Manifest, target: f64) -> Option<(ChapterId, f64)> {
    let mut acc = 0.0;
    for item in &manifest.items {
        let d = item.duration?;
        if target < acc + d {
            return Some((item.chapter_id.clone(), (target - acc).max(0.0)));
        }
        acc += d;
    }
    let last = manifest.items.last()?;
    Some((last.chapter_id.clone(), last.duration.unwrap_or(0.0)))
}
