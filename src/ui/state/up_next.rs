//! Up next in the player: the "play next" list (built with its key from
//! the library and book screens, reordered and trimmed on its screen,
//! kept on disk per server and account by the runtime), the "next: …" of
//! the player bar, and what happens when a book ends: a countdown that
//! any key cancels, then the next book (`domain::next_after`: the list,
//! else the series) starts from its synced place (`StartAt::Resume`, so
//! sync restores it by every rule), or, a finished book the list brought
//! back, from its beginning (`StartAt::Restart`). The next key (`n`, MPRIS Next) in the
//! last chapter goes straight to it.

use super::*;
use crate::domain::up_next::list;
use crate::domain::{Account, Book, Next, NextFrom, Opening, Queued, UpNextMode, next_after};

/// How long after the countdown the next book's chapters may take.
const CHAPTERS_WITHIN_MS: Millis = 30_000;

/// `[player] up_next` and `up_next_countdown`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UpNextSettings {
    pub mode: UpNextMode,
    /// How long the notice counts down before the next book starts.
    pub countdown_ms: Millis,
}

impl Default for UpNextSettings {
    fn default() -> Self {
        UpNextSettings {
            mode: UpNextMode::Series,
            countdown_ms: 10_000,
        }
    }
}

/// The next book, about to start.
#[derive(Debug, Clone, PartialEq)]
pub struct Countdown {
    pub next: Next,
    /// When it starts (the loop's clock).
    pub at: Millis,
    /// The book that ended.
    pub after: BookId,
    /// The next book's chapters, once they arrived.
    manifest: Option<Manifest>,
    /// How it opens: `Restart` only when the server's own answer of this
    /// countdown said finished (a cached or downloaded copy may be stale:
    /// a reset from it could wipe a place another device saved since).
    opening: Opening,
}

impl Countdown {
    /// How the book opens, once its chapters came with the server's
    /// answer (before that, `None`: not decided yet).
    pub fn decided(&self) -> Option<Opening> {
        self.manifest.as_ref().map(|_| self.opening)
    }

    /// Whole seconds left, rounded up (what the notice shows).
    pub fn seconds_left(&self, now: Millis) -> u64 {
        self.at.saturating_sub(now).div_ceil(1000)
    }
}

#[derive(Debug, Clone, Default)]
pub struct UpNext {
    /// The play next list of `account`, in order.
    pub list: Vec<Queued>,
    /// Whose list it is; `None` until it was read for this login.
    pub account: Option<Account>,
    pub countdown: Option<Countdown>,
    /// What plays after the playing book (the player bar's "next: …").
    pub next: Option<Next>,
    /// The list screen's selected row.
    pub cursor: usize,
    revision: u64,
    /// What `next` was worked out from (playing book, list revision,
    /// library size, library from the cache).
    worked_out: Option<(Option<BookId>, u64, usize, bool)>,
}

impl App {
    /// Works out "next: …" again when what it depends on changed.
    pub(super) fn up_next_refresh(&mut self) {
        let playing = self.playing.as_ref().map(|p| p.book.id.clone());
        let key = (
            playing.clone(),
            self.up_next.revision,
            self.library.total(),
            self.library.from_cache,
        );
        if self.up_next.worked_out.as_ref() == Some(&key) {
            return;
        }
        self.up_next.worked_out = Some(key);
        let next = playing.and_then(|b| {
            let mode = self.settings.up_next.mode;
            next_after(mode, &b, &self.up_next.list, self.library.books())
        });
        if next != self.up_next.next {
            self.up_next.next = next;
            self.dirty = true;
        }
    }

    /// A new login: its own list is read.
    pub(super) fn up_next_logged_in(&mut self, fx: &mut Vec<Effect>) {
        self.up_next.list.clear();
        self.up_next.account = None;
        self.up_next.countdown = None;
        self.up_next.revision += 1;
        fx.push(Effect::LoadUpNext);
    }

    pub(super) fn up_next_loaded(&mut self, account: Account, books: Vec<Queued>) {
        self.up_next.list = books;
        self.up_next.account = Some(account);
        self.up_next.cursor = self
            .up_next
            .cursor
            .min(self.up_next.list.len().saturating_sub(1));
        self.up_next.revision += 1;
    }

    fn up_next_changed(&mut self, fx: &mut Vec<Effect>) {
        self.up_next.revision += 1;
        if let Some(account) = self.up_next.account.clone() {
            fx.push(Effect::SaveUpNext {
                account,
                books: self.up_next.list.clone(),
            });
        }
    }

    /// The add key: the book looked at goes to the end of the list, or
    /// leaves it when it is there.
    pub(super) fn up_next_toggle(&mut self, fx: &mut Vec<Effect>) {
        let book = match self.screen {
            Screen::UpNext => self.up_next.list.get(self.up_next.cursor).cloned(),
            _ => self.current_book().map(Queued::of),
        };
        let Some(book) = book else {
            return;
        };
        if self.up_next.account.is_none() {
            self.toast(
                "The up next list is not read yet; try again in a moment.",
                false,
            );
            return;
        }
        if list::remove(&mut self.up_next.list, &book.id) {
            self.toast(format!("“{}” is no longer up next", book.title), false);
        } else {
            let title = book.title.clone();
            list::add(&mut self.up_next.list, book);
            let n = self.up_next.list.len();
            let text = match n {
                1 => format!("“{title}” plays next"),
                _ => format!("“{title}” is number {n} up next"),
            };
            self.toast(text, false);
        }
        let len = self.up_next.list.len();
        self.up_next.cursor = self.up_next.cursor.min(len.saturating_sub(1));
        self.up_next_changed(fx);
    }

    pub(super) fn show_up_next(&mut self) {
        if !matches!(
            self.screen,
            Screen::License | Screen::Stats | Screen::UpNext
        ) {
            self.prev_screen = self.screen;
        }
        self.screen = Screen::UpNext;
    }

    /// Moves the selected book one place earlier (`-1`) or later (`1`).
    pub(super) fn up_next_shift(&mut self, by: isize, fx: &mut Vec<Effect>) {
        if self.screen != Screen::UpNext {
            return;
        }
        if let Some(j) = list::shift(&mut self.up_next.list, self.up_next.cursor, by) {
            self.up_next.cursor = j;
            self.up_next_changed(fx);
        }
    }

    pub(super) fn up_next_navigate(&mut self, delta: isize) {
        let len = self.up_next.list.len();
        self.up_next.cursor = self
            .up_next
            .cursor
            .saturating_add_signed(delta)
            .min(len.saturating_sub(1));
    }

    /// Enter on the list: that book's screen.
    pub(super) fn up_next_open(&mut self, fx: &mut Vec<Effect>) {
        if let Some(id) = self
            .up_next
            .list
            .get(self.up_next.cursor)
            .map(|q| q.id.clone())
        {
            self.open_book(id, fx);
        }
    }

    /// A book starts playing: it is no longer up next.
    pub(super) fn up_next_started(&mut self, book: &BookId, fx: &mut Vec<Effect>) {
        self.up_next.countdown = None;
        if list::remove(&mut self.up_next.list, book) {
            let len = self.up_next.list.len();
            self.up_next.cursor = self.up_next.cursor.min(len.saturating_sub(1));
            self.up_next_changed(fx);
        }
    }

    /// The engine's view of the playing book changed state.
    pub(super) fn up_next_engine(&mut self, before: Option<&PlayState>, fx: &mut Vec<Effect>) {
        let Some(np) = self.playing.as_ref() else {
            return;
        };
        if np.state() != PlayState::Ended || before == Some(&PlayState::Ended) {
            return;
        }
        let ended = np.book.id.clone();
        self.up_next_offer(ended, false, fx);
    }

    /// Offers what comes after `ended`: a countdown, or at once.
    fn up_next_offer(&mut self, ended: BookId, at_once: bool, fx: &mut Vec<Effect>) {
        self.up_next_refresh();
        let Some(next) = self.up_next.next.clone() else {
            return;
        };
        if self.license_block.is_some() {
            return;
        }
        let wait = if at_once {
            0
        } else {
            self.settings.up_next.countdown_ms
        };
        self.up_next.countdown = Some(Countdown {
            at: self.now + wait,
            after: ended,
            manifest: None,
            opening: Opening::Resume,
            next: next.clone(),
        });
        self.dirty = true;
        // Its chapters (from the server, or a download's snapshot) come
        // while the notice counts down.
        fx.push(Effect::LoadBook(next.book));
        self.up_next_tick(fx);
    }

    /// Any key while the notice counts down cancels it (and does nothing
    /// else).
    pub(super) fn up_next_cancels(&mut self) -> bool {
        let Some(c) = self.up_next.countdown.take() else {
            return false;
        };
        self.toast(
            format!("Up next cancelled: “{}” does not start.", c.next.title),
            false,
        );
        true
    }

    /// The next book's chapters arrived (a book load answered): `fresh`
    /// is the server's answer of it, read now (`None`: a download's copy).
    /// Only a book from the list that the server itself says is finished
    /// starts over; anything else resumes (rule 7 restores its place).
    pub(super) fn up_next_manifest(
        &mut self,
        book: &BookId,
        manifest: Option<&Manifest>,
        fresh: Option<&Book>,
        fx: &mut Vec<Effect>,
    ) {
        if let Some(c) = self.up_next.countdown.as_mut()
            && &c.next.book == book
            && let Some(m) = manifest
        {
            c.manifest = Some(m.clone());
            c.opening = match fresh {
                Some(b) if c.next.from == NextFrom::List => Opening::of(b.progress.as_ref()),
                _ => Opening::Resume,
            };
            self.up_next_tick(fx);
        }
    }

    /// The clock: the next book starts when its time came and its
    /// chapters are here; without them long after, it is given up.
    pub(super) fn up_next_tick(&mut self, fx: &mut Vec<Effect>) {
        if let Some(c) = self.up_next.countdown.as_ref()
            && c.manifest.is_none()
            && self.now >= c.at + CHAPTERS_WITHIN_MS
        {
            let title = c.next.title.clone();
            self.up_next.countdown = None;
            self.toast(
                format!("Up next: “{title}” could not be opened (its chapters did not come)."),
                true,
            );
            return;
        }
        let due = self
            .up_next
            .countdown
            .as_ref()
            .is_some_and(|c| c.at <= self.now && c.manifest.is_some());
        if self.up_next.countdown.is_some() {
            self.dirty = true;
        }
        if !due {
            return;
        }
        let Some(Countdown {
            next,
            after,
            manifest: Some(manifest),
            opening,
            ..
        }) = self.up_next.countdown.take()
        else {
            return;
        };
        let book = self
            .library
            .get(&next.book)
            .cloned()
            .unwrap_or_else(|| Book {
                id: next.book.clone(),
                title: next.title.clone(),
                ..Book::default()
            });
        let follow = self.screen == Screen::Book && self.book.id == after;
        let start = match opening {
            Opening::Restart => StartAt::Restart,
            Opening::Resume => StartAt::Resume,
        };
        self.begin(book, manifest, start, fx);
        if follow {
            self.open_book(next.book.clone(), fx);
        }
        let why = match &next.from {
            NextFrom::List => "from your up next list".to_owned(),
            NextFrom::Series(s) => format!("next in {s}"),
        };
        let again = match opening {
            Opening::Restart => ", from the beginning: you had finished it",
            Opening::Resume => "",
        };
        self.toast(format!("Up next: “{}” ({why}{again})", next.title), false);
    }

    /// When the loop must wake for the countdown: each second it shows.
    pub(super) fn up_next_wake(&self) -> Option<Millis> {
        let c = self.up_next.countdown.as_ref()?;
        let left = c.at.saturating_sub(self.now);
        Some(
            self.now
                + if left == 0 {
                    1000
                } else {
                    (left - 1) % 1000 + 1
                },
        )
    }

    /// The next key (`n`, MPRIS Next): during the countdown the next book
    /// starts now; after the end, too; in the last chapter, the book is
    /// marked finished and the next one starts at once; with nothing up
    /// next there, the bar says so. True when it was handled here (before
    /// the last chapter it is the engine's next chapter).
    pub(super) fn up_next_go(&mut self, fx: &mut Vec<Effect>) -> bool {
        if let Some(c) = self.up_next.countdown.as_mut() {
            c.at = self.now;
            self.up_next_tick(fx);
            return true;
        }
        let Some((book, ended, in_last)) = self.playing.as_ref().map(|np| {
            let last = np.manifest.items.len().checked_sub(1);
            let i = np.chapter_index();
            (
                np.book.id.clone(),
                np.state() == PlayState::Ended,
                i.is_some() && i == last,
            )
        }) else {
            return false;
        };
        if !ended && !in_last {
            return false;
        }
        self.up_next_refresh();
        if self.up_next.next.is_none() {
            let why = match self.settings.up_next.mode {
                UpNextMode::Off => "up next is off",
                UpNextMode::Queue => "the up next list is empty",
                UpNextMode::Series => "the up next list is empty and no book follows in its series",
            };
            let here = if ended {
                "The book has ended"
            } else {
                "This is the last chapter"
            };
            self.toast(format!("{here}: no next book ({why})."), false);
            return true;
        }
        if ended {
            self.up_next_offer(book, true, fx);
            return true;
        }
        // Finished through sync, as the mark-finished key does (a jump to
        // the end would land after sync stopped reporting this book).
        self.mark_here(crate::domain::JumpCause::Finished, fx);
        fx.push(Effect::SetFinished {
            book: book.clone(),
            finished: true,
        });
        self.up_next_offer(book, true, fx);
        true
    }

    /// The list's mode in words, for its screen.
    pub fn up_next_rule(&self) -> &'static str {
        match self.settings.up_next.mode {
            UpNextMode::Series => {
                "When a book ends, this list plays first; then its series goes on."
            }
            UpNextMode::Queue => {
                "When a book ends, this list plays (up_next = \"queue\": no series)."
            }
            UpNextMode::Off => "Up next is off (up_next = \"off\"): nothing starts by itself.",
        }
    }
}
