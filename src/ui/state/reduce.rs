//! The reducer's routing of input: each action goes to the sub-model it
//! belongs to (the player's keys, the screens and lists, what is done to
//! a book), and the mouse (answers from the backends are in `answers`).

use super::book::Pick;
use super::library::Facet;
use super::*;
use crate::domain::session::Start;
use crate::domain::{BookId, ChapterId, JumpCause, Manifest, Queued};
use crate::ui::views::layout::Areas;

const LICENSE_STOP: &str =
    "Playback is stopped: the server has no valid license (press i for details).";

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
        let plays = matches!(
            action,
            A::PlayPause
                | A::SkipBackShort
                | A::SkipForwardShort
                | A::SkipBackLong
                | A::SkipForwardLong
                | A::NextChapter
                | A::PrevChapter
                | A::UndoJump
        );
        if plays && self.license_stops() {
            return;
        }
        if !self.playback_action(action, fx) && !self.screen_action(action, fx) {
            self.book_action(action, fx);
        }
    }

    /// The keys of the session's book; false when `a` is not one.
    fn playback_action(&mut self, a: Action, fx: &mut Vec<Effect>) -> bool {
        use Action as A;
        match a {
            // On another book's screen, Space plays that book (its screen
            // says so), not the one in the player bar.
            A::PlayPause if self.screen == Screen::Book && !self.plays(&self.book.id.clone()) => {
                self.play_book(Start::Resume, fx)
            }
            A::SleepTimer => self.overlays.sleep_menu(),
            A::Bookmark => self.start_bookmark(),
            A::UndoJump => self.undo_jump(fx),
            A::NowPlaying => match self.playing().map(|p| p.book.id.clone()) {
                Some(id) => self.open_book(id, fx),
                None => self.say(NOTHING_PLAYING),
            },
            _ => {
                let mut out = Out::new(fx, &mut self.toasts);
                let np = self.snap.listening.as_ref();
                return self.player.action(a, np, &self.settings, &mut out);
            }
        }
        true
    }

    /// Moving between screens and in lists; false when `a` is not such a key.
    fn screen_action(&mut self, a: Action, fx: &mut Vec<Effect>) -> bool {
        use Action as A;
        match a {
            A::Quit => fx.extend([Effect::Session(Command::Flush), Effect::Quit]),
            A::LeavePlaying => fx.extend([Effect::LeavePlaying, Effect::Quit]),
            A::Help => self.overlays.show(Overlay::Help { scroll: 0 }),
            A::Back => self.back(fx),
            A::Up | A::Down | A::Top | A::Bottom | A::PageUp | A::PageDown => self.navigate(a),
            A::Open => self.open(fx),
            A::Search => {
                self.screen = Screen::Library;
                self.library.open_search();
            }
            A::Refresh if self.screen == Screen::License => fx.push(Effect::LoadLicense),
            A::Refresh if self.screen == Screen::Stats => fx.push(Effect::LoadStats),
            A::Refresh => self.refresh(fx),
            A::History => self.show_history(fx),
            A::Stats => {
                self.go_to(Screen::Stats);
                fx.push(Effect::LoadStats);
            }
            A::UpNext => self.go_to(Screen::UpNext),
            A::License => {
                self.go_to(Screen::License);
                fx.push(Effect::LoadLicense);
            }
            A::Profiles => {
                self.screen = Screen::Login;
                self.login.error = None;
                self.login.busy = false;
            }
            A::Filter | A::Category | A::Sort if self.screen == Screen::Library => {
                self.library.next_view(a)
            }
            A::Group if self.screen == Screen::Library => {
                let mut out = Out::new(fx, &mut self.toasts);
                self.library.group_key(&mut out);
            }
            A::AuthorBooks => self.follow_link(Facet::Author, fx),
            A::NarratorBooks => self.follow_link(Facet::Narrator, fx),
            A::SeriesBooks => self.follow_link(Facet::Series, fx),
            _ => return false,
        }
        true
    }

    /// What is done to the book looked at, the up next list and the
    /// changes the server refused.
    fn book_action(&mut self, a: Action, fx: &mut Vec<Effect>) {
        use Action as A;
        let current = self.current_book().cloned();
        let mut out = Out::new(fx, &mut self.toasts);
        let on_up_next = self.screen == Screen::UpNext;
        match a {
            A::Favorite => {
                if let Some(b) = current {
                    let (book, favorite) = (b.id.clone(), !b.favorite);
                    self.library.update_book(&book, |b| b.favorite = favorite);
                    out.effect(Effect::SetFavorite { book, favorite });
                }
            }
            A::Bookmarks if self.screen == Screen::Book => self.book.next_pane(),
            A::Delete if on_up_next => self.up_next_toggle(fx),
            A::Delete if self.screen == Screen::Book => self.book.delete_bookmark(&mut out),
            A::MarkFinished => {
                if let Some(b) = current {
                    let finished = !b.progress.as_ref().is_some_and(|p| p.finished);
                    let book = b.id.clone();
                    out.send(Command::MarkFinished {
                        book: book.clone(),
                        finished,
                    });
                    out.say(match finished {
                        true => "Marked finished",
                        false => "Marked unfinished",
                    });
                    self.marked_finished(&book, finished);
                }
            }
            A::RetryRefused | A::DiscardRefused if self.snap.queue.refused == 0 => {
                out.say("No change was refused by the server.")
            }
            A::RetryRefused => out.effect(Effect::RetryRefused),
            A::DiscardRefused => self.overlays.show(Overlay::ConfirmDiscardRefused {
                count: self.snap.queue.refused,
            }),
            A::Restart => {
                if let Some(b) = current {
                    self.overlays.show(Overlay::ConfirmRestart { book: b.id });
                }
            }
            A::Download => self.download(fx),
            A::UpNextAdd => self.up_next_toggle(fx),
            A::MoveEarlier | A::MoveLater if on_up_next => {
                let by = if a == A::MoveEarlier { -1 } else { 1 };
                self.up_next.shift(by, &self.snap.up_next, &mut out);
            }
            _ => {}
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

    /// The session's book was marked: its row says so at once (sync tells
    /// the new place of any other book, not of the session's), so the
    /// next `m` undoes it.
    fn marked_finished(&mut self, book: &BookId, finished: bool) {
        let Some(np) = self.playing().filter(|p| &p.book.id == book) else {
            return;
        };
        let here = crate::domain::Progress {
            chapter_id: np.chapter.clone(),
            position: np.position,
            book_position: np.book_progress().0,
            finished,
            client_updated_at: Some(self.wall_now()),
            server_updated_at: None,
        };
        self.library.update_book(book, |b| match &mut b.progress {
            Some(p) => p.finished = finished,
            None => b.progress = Some(here),
        });
    }

    fn follow_link(&mut self, facet: Facet, fx: &mut Vec<Effect>) {
        let Some(book) = self.current_book().cloned() else {
            return;
        };
        let mut out = Out::new(fx, &mut self.toasts);
        if self.library.follow_link(facet, &book, &mut out) {
            self.screen = Screen::Library;
        }
    }

    fn download(&mut self, fx: &mut Vec<Effect>) {
        if self.needs_server("Downloading") {
            return;
        }
        let Some(b) = self.current_book() else {
            return;
        };
        let (id, title) = (b.id.clone(), b.title.clone());
        if matches!(self.downloads.mark(&id), Some(DownloadMark::Running { .. })) {
            self.say(format!("\"{title}\" is downloading already."));
        } else {
            self.downloads.progress(id.clone(), 0, 0);
            self.say(format!("Downloading \"{title}\"…"));
            fx.push(Effect::Download(id));
        }
    }

    /// The add key: the book looked at (or the list's selected row) goes
    /// to the end of the up next list, or leaves it.
    fn up_next_toggle(&mut self, fx: &mut Vec<Effect>) {
        let book = match self.screen {
            Screen::UpNext => self.up_next.selected(&self.snap.up_next).cloned(),
            _ => self.current_book().map(Queued::of),
        };
        if let Some(book) = book {
            let mut out = Out::new(fx, &mut self.toasts);
            self.up_next.toggle(book, &self.snap.up_next, &mut out);
        }
    }

    fn back(&mut self, fx: &mut Vec<Effect>) {
        match self.screen {
            Screen::Book => self.screen = Screen::Library,
            Screen::License | Screen::Stats | Screen::UpNext => self.screen = self.prev_screen,
            Screen::Library if self.library.back() => {}
            Screen::Library | Screen::Login => {
                fx.extend([Effect::Session(Command::Flush), Effect::Quit])
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
            Screen::Book => self.book.move_by(delta),
            Screen::UpNext => self.up_next.move_by(delta, self.snap.up_next.list.len()),
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
            Screen::UpNext => {
                if let Some(q) = self.up_next.selected(&self.snap.up_next) {
                    let id = q.id.clone();
                    self.open_book(id, fx);
                }
            }
            Screen::Book => match self.book.picked() {
                Some(Pick::At(start, cause)) => self.play_at(start, cause, fx),
                Some(Pick::Mark(mark)) => self.history_jump(mark, fx),
                None => {}
            },
            _ => {}
        }
    }

    pub(super) fn open_book(&mut self, id: BookId, fx: &mut Vec<Effect>) {
        self.book.show(id.clone());
        // Land on the current chapter when it is the playing book.
        if let Some(i) = self
            .playing()
            .filter(|p| p.book.id == id)
            .and_then(|p| p.chapter_index())
        {
            self.book.land_on(i);
        }
        self.screen = Screen::Book;
        fx.push(Effect::LoadHistory(id.clone()));
        fx.push(Effect::LoadBook(id));
        self.want_cover(fx);
    }

    /// True when `book` is the session's (playing, paused or ready).
    pub(super) fn plays(&self, book: &BookId) -> bool {
        self.playing().is_some_and(|p| &p.book.id == book)
    }

    /// True when `book` is the session's and its load goes on (opened in
    /// this run, not ended or failed): a place picked is a seek in it.
    /// Else the place is opened (a play after the end opens the book
    /// again where the server says, which would lose the place picked).
    fn seekable(&self, book: &BookId) -> bool {
        self.playing().is_some_and(|p| {
            &p.book.id == book
                && !matches!(
                    p.state,
                    PlayState::Ready | PlayState::Ended | PlayState::Error(_)
                )
        })
    }

    /// Plays the open book at `start`: the chapter, bookmark or history
    /// place picked (the session's book moves there and plays, also when
    /// it was paused), or where the server says.
    pub(super) fn play_at(&mut self, start: Start, cause: JumpCause, fx: &mut Vec<Effect>) {
        if self.seekable(&self.book.id.clone())
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
        self.say("Restarted from the beginning");
    }

    fn start_bookmark(&mut self) {
        let Some(np) = self.playing() else {
            self.say("Start playing to add a bookmark here.");
            return;
        };
        let note = Overlay::BookmarkNote {
            book: np.book.id.clone(),
            chapter: np.chapter.clone(),
            position: np.position,
            note: String::new(),
        };
        self.overlays.show(note);
    }

    pub(super) fn mouse(&mut self, m: Mouse, fx: &mut Vec<Effect>) {
        if self.overlays.is_open() {
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
                    self.click_bar(frac, fx);
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

    /// A click on the book's bar: that place of the book.
    fn click_bar(&mut self, frac: f64, fx: &mut Vec<Effect>) {
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
    }
}

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
