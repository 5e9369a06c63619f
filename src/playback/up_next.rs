//! Up next, decided by the owner for every client: the account's play
//! next list (`config::UpNextStore`, edited through the session's
//! commands), what follows the session's book (`domain::next_after`: the
//! list, then the next book of its series, from the library a client
//! shared or, at the end, the server's), and what happens when the book
//! ends: a countdown, then the next book opens from its synced place, or
//! from its beginning when the list brought back a book the server says
//! is finished. With the server away only a downloaded book is offered.

use super::owner::{Done, Owner};
use crate::config::{ListeningRules, Session, UpNextStore};
use crate::domain::locks::lock;
use crate::domain::session::{Countdown, Said, Start, UpNextCommand, UpNextNow, UpNextWhy};
use crate::domain::up_next::list;
use crate::domain::{
    Book, BookId, EpochMillis, Next, NextFrom, Opening, Queued, UpNextMode, next_after, now_millis,
};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;

/// What the owner's background reads of up next bring back.
pub(super) enum Found {
    /// The account's list as kept on disk (`Err`: why it could not be read).
    List(Result<Vec<Queued>, String>),
    /// What follows `ended`, read from the server's library.
    After {
        ended: BookId,
        next: Result<Option<Next>, String>,
    },
    /// How a book the list brought back opens (the server's own answer).
    Opening { book: BookId, opening: Opening },
}

/// The countdown running, and what it waits for.
struct Counting {
    shown: Countdown,
    /// The book that ended.
    after: BookId,
}

pub(super) struct UpNext {
    mode: UpNextMode,
    countdown: Duration,
    data: PathBuf,
    store: Option<UpNextStore>,
    list: Vec<Queued>,
    /// The library a client shared (a series' next book comes from it).
    library: Arc<Vec<Book>>,
    /// What follows the session's book (the bar's "next: …").
    next: Option<Next>,
    counting: Option<Counting>,
    /// Each save takes its number; a save that finds a later one written
    /// is dropped, so a slow older save never lands over a newer list.
    saves: Arc<(AtomicU64, Mutex<u64>)>,
    /// Edits made before the account's list was read: applied to it then
    /// (`None`: it was read).
    unread: Option<Vec<UpNextCommand>>,
}

impl UpNext {
    pub fn new(rules: &ListeningRules, dirs: &crate::config::Dirs, s: Option<&Session>) -> UpNext {
        UpNext {
            mode: rules.up_next,
            countdown: rules.up_next_countdown,
            data: dirs.data.clone(),
            store: s.map(|s| UpNextStore::of(&dirs.data, &s.account())),
            list: Vec::new(),
            library: Arc::default(),
            next: None,
            counting: None,
            saves: Arc::default(),
            unread: s.map(|_| Vec::new()),
        }
    }

    pub fn now(&self) -> UpNextNow {
        UpNextNow {
            mode: self.mode,
            list: self.list.clone(),
            next: self.next.clone(),
            countdown: self.counting.as_ref().map(|c| c.shown.clone()),
        }
    }

    /// When the countdown runs out (once how it opens is known: the
    /// server's answer wakes the owner itself).
    pub fn wake(&self) -> Option<EpochMillis> {
        let c = self.counting.as_ref()?;
        c.shown.opening.map(|_| c.shown.starts_at)
    }

    /// Reads the account's list in the background.
    pub fn load_list(&self, done: &mpsc::UnboundedSender<Done>) {
        let Some(store) = self.store.clone() else {
            return;
        };
        let done = done.clone();
        tokio::task::spawn_blocking(move || {
            let _ = done.send(Done::Up(Found::List(store.load())));
        });
    }

    pub fn log_in(&mut self, s: Option<&Session>, done: &mpsc::UnboundedSender<Done>) {
        self.store = s.map(|s| UpNextStore::of(&self.data, &s.account()));
        self.list.clear();
        self.unread = s.map(|_| Vec::new());
        self.library = Arc::default();
        self.counting = None;
        self.load_list(done);
    }

    pub fn library(&mut self, books: Arc<Vec<Book>>, playing: Option<BookId>) {
        self.library = books;
        self.next = playing.and_then(|b| next_after(self.mode, &b, &self.list, &self.library));
    }

    /// Works out what follows `book` (the session's).
    pub fn work_out(&mut self, book: Option<&Arc<Book>>) {
        self.next = book.and_then(|b| next_after(self.mode, &b.id, &self.list, &self.library));
    }

    /// `book` starts: it is no longer up next, and no countdown runs.
    pub fn started(&mut self, book: &BookId) {
        self.counting = None;
        if list::remove(&mut self.list, book) {
            self.save();
        }
    }

    /// The server is back: nothing to do now (the next end reads it).
    pub fn server_back(&mut self) {}

    fn save(&self) {
        let Some(store) = self.store.clone() else {
            return;
        };
        let books = self.list.clone();
        let saves = self.saves.clone();
        let n = saves.0.fetch_add(1, Ordering::SeqCst) + 1;
        // File I/O: the runtime's blocking pool, in the order made.
        tokio::task::spawn_blocking(move || {
            let mut written = lock(&saves.1);
            if *written > n {
                return;
            }
            match store.save(&books) {
                Ok(()) => *written = n,
                Err(e) => tracing::warn!("the up next list was not kept: {e}"),
            }
        });
    }

    fn edit(&mut self, c: &UpNextCommand) -> bool {
        match c {
            UpNextCommand::Toggle(q) => {
                if !list::remove(&mut self.list, &q.id) {
                    self.list.push(q.clone());
                }
                true
            }
            UpNextCommand::Shift { book, by } => {
                let at = self.list.iter().position(|q| &q.id == book);
                at.and_then(|i| list::shift(&mut self.list, i, *by))
                    .is_some()
            }
            UpNextCommand::Go | UpNextCommand::Cancel => false,
        }
    }

    /// Why nothing follows now.
    fn why_none(&self) -> UpNextWhy {
        match self.mode {
            UpNextMode::Off => UpNextWhy::Off,
            _ => UpNextWhy::NothingFollows,
        }
    }
}

impl Owner {
    pub(super) fn up_next_command(&mut self, c: UpNextCommand) {
        match c {
            UpNextCommand::Go => self.up_next_go(),
            UpNextCommand::Cancel => self.up_next.counting = None,
            edit if self.up_next.unread.is_some() => {
                if let Some(edits) = self.up_next.unread.as_mut() {
                    edits.push(edit);
                }
            }
            edit => {
                if self.up_next.edit(&edit) {
                    self.up_next.save();
                    let info = self.book.as_ref().map(|b| b.info.clone());
                    self.up_next.work_out(info.as_ref());
                }
            }
        }
    }

    /// `n`: the next chapter; in the last one (or after the end), or
    /// during the countdown, the next book now.
    pub(super) fn next_chapter(&mut self) {
        let last = self
            .book
            .as_ref()
            .zip(self.heard.as_ref())
            .is_some_and(|(b, h)| {
                h.status == crate::player::Status::Ended
                    || h.chapter_id
                        .as_ref()
                        .is_some_and(|c| b.manifest.items.last().map(|i| &i.chapter_id) == Some(c))
            });
        if last || self.up_next.counting.is_some() {
            return self.up_next_go();
        }
        self.mark_here(crate::domain::JumpCause::Chapter);
        self.command_engine(crate::player::Command::NextChapter);
    }

    /// Goes to the next book at once: the countdown's, else (in the last
    /// chapter) what follows the book, which is marked finished first.
    fn up_next_go(&mut self) {
        if let Some(c) = self.up_next.counting.take() {
            return self.open_next(c.shown.next, c.shown.opening);
        }
        let Some(book) = self.book_id() else {
            return self.say(Said::NothingPlaying);
        };
        match self.up_next.next.clone() {
            Some(next) if self.offered(&next) => {
                self.sync().mark_finished(book, true);
                self.open_next(next, None);
            }
            Some(_) => self.say(Said::UpNextNone(UpNextWhy::NotDownloaded)),
            None => self.say(Said::UpNextNone(self.up_next.why_none())),
        }
    }

    /// With the server away (as sync found it, or as the open of the
    /// book that ended did), only a downloaded book can be offered.
    fn offered(&self, next: &Next) -> bool {
        let away = self.sync_status.link == crate::sync::Link::Offline
            || self.book.as_ref().is_some_and(|b| b.server_away);
        !away || self.snap.borrow().playable_offline(&next.book)
    }

    /// The session's book played to its end.
    pub(super) fn book_ended(&mut self) {
        let Some(ended) = self.book_id() else { return };
        if self.up_next.mode == UpNextMode::Off {
            return;
        }
        if let Some(next) = self.up_next.next.clone() {
            return self.count_down(ended, next);
        }
        // Nothing follows: the book ends quietly (docs/ui.md).
        if self.up_next.mode != UpNextMode::Series {
            return;
        }
        // The series from the server's library.
        let (Some(client), mode) = (self.client.get(), self.up_next.mode) else {
            return;
        };
        let done = self.done.clone();
        tokio::spawn(async move {
            let next = client
                .books(&crate::api::BookQuery::default())
                .await
                .map(|library| next_after(mode, &ended, &[], &library))
                .map_err(|e| e.to_string());
            let _ = done.send(Done::Up(Found::After { ended, next }));
        });
    }

    fn count_down(&mut self, after: BookId, next: Next) {
        if !self.offered(&next) {
            return self.say(Said::UpNextNone(UpNextWhy::NotDownloaded));
        }
        let starts_at = now_millis() + self.up_next.countdown.as_millis() as i64;
        // A book the list brought back: the server's own answer says
        // whether it was finished (then it starts over).
        let opening = match next.from {
            NextFrom::List => {
                self.read_opening(&next.book);
                None
            }
            NextFrom::Series(_) => Some(Opening::Resume),
        };
        self.up_next.counting = Some(Counting {
            shown: Countdown {
                next,
                starts_at,
                opening,
            },
            after,
        });
        if self.up_next.countdown.is_zero() {
            self.countdown_over();
        }
    }

    fn read_opening(&self, book: &BookId) {
        let Some(client) = self.client.get() else {
            return;
        };
        let (done, book) = (self.done.clone(), book.clone());
        tokio::spawn(async move {
            // A place that cannot be read resumes: the open reads it again,
            // by every rule of rule 7.
            let opening = match client.progress(&book).await {
                Ok(state) => Opening::of(state.progress.as_ref()),
                Err(_) => Opening::Resume,
            };
            let _ = done.send(Done::Up(Found::Opening { book, opening }));
        });
    }

    /// The clock: a countdown that ran out opens its book, once the
    /// server's answer said how (a finished book starts over).
    pub(super) fn countdown_over(&mut self) {
        let over = self
            .up_next
            .counting
            .as_ref()
            .is_some_and(|c| now_millis() >= c.shown.starts_at && c.shown.opening.is_some());
        if over && let Some(c) = self.up_next.counting.take() {
            if self.book_id().as_ref() != Some(&c.after) {
                return;
            }
            self.open_next(c.shown.next, c.shown.opening);
        }
    }

    fn open_next(&mut self, next: Next, opening: Option<Opening>) {
        let opening = opening.unwrap_or(Opening::Resume);
        self.say(Said::UpNextStarting {
            next: next.clone(),
            opening,
        });
        let start = match opening {
            Opening::Resume => Start::Resume,
            Opening::Restart => Start::Restart,
        };
        // The session goes on: the sleep timer stays with it.
        self.keep_sleep = true;
        self.open(next.book, start, None);
    }

    pub(super) fn up_next_found(&mut self, f: Found) {
        match f {
            Found::List(Ok(books)) => {
                self.up_next.list = books;
                let mut edited = false;
                for e in self.up_next.unread.take().unwrap_or_default() {
                    edited |= self.up_next.edit(&e);
                }
                if edited {
                    self.up_next.save();
                }
                let info = self.book.as_ref().map(|b| b.info.clone());
                self.up_next.work_out(info.as_ref());
            }
            Found::List(Err(why)) => {
                // Not read: what was edited meanwhile is not written over it.
                self.up_next.unread = None;
                self.say(Said::UpNextUnread { list: true, why })
            }
            Found::After { ended, next } => match next {
                Ok(Some(next)) if self.book_id().as_ref() == Some(&ended) => {
                    self.count_down(ended, next)
                }
                Ok(_) => {}
                Err(why) => self.say(Said::UpNextUnread { list: false, why }),
            },
            Found::Opening { book, opening } => {
                if let Some(c) = self
                    .up_next
                    .counting
                    .as_mut()
                    .filter(|c| c.shown.next.book == book)
                {
                    c.shown.opening = Some(opening);
                }
                self.countdown_over();
            }
        }
    }
}
