//! Up next in the player: the "play next" list screen (built with its key
//! from the library and book screens, reordered and trimmed here), the
//! "next: …" of the player bar and the countdown's notice. The list, what
//! follows a book and the countdown are the session's: its owner keeps
//! the list on disk per server and account, decides what plays when a
//! book ends (`domain::next_after`: the list, else the series), counts
//! down and opens it, for every client alike. The keys send it commands.

use super::*;
use crate::domain::session::{Command, UpNextCommand};
use crate::domain::{Queued, UpNextMode};

impl App {
    fn up_next(&self, c: UpNextCommand, fx: &mut Vec<Effect>) {
        fx.push(Effect::Session(Command::UpNext(c)));
    }

    /// The add key: the book looked at goes to the end of the list, or
    /// leaves it when it is there.
    pub(super) fn up_next_toggle(&mut self, fx: &mut Vec<Effect>) {
        let book = match self.screen {
            Screen::UpNext => self.snap.up_next.list.get(self.up_next_cursor).cloned(),
            _ => self.current_book().map(Queued::of),
        };
        let Some(book) = book else {
            return;
        };
        let list = &self.snap.up_next.list;
        let text = if list.iter().any(|q| q.id == book.id) {
            format!("“{}” is no longer up next", book.title)
        } else {
            match list.len() + 1 {
                1 => format!("“{}” plays next", book.title),
                n => format!("“{}” is number {n} up next", book.title),
            }
        };
        self.toast(text, false);
        self.up_next(UpNextCommand::Toggle(book), fx);
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
        let len = self.snap.up_next.list.len();
        let Some(q) = self.snap.up_next.list.get(self.up_next_cursor) else {
            return;
        };
        let j = self
            .up_next_cursor
            .checked_add_signed(by)
            .filter(|j| *j < len);
        if let Some(j) = j {
            let book = q.id.clone();
            self.up_next_cursor = j;
            self.up_next(UpNextCommand::Shift { book, by }, fx);
        }
    }

    /// Enter on the list: that book's screen.
    pub(super) fn up_next_open(&mut self, fx: &mut Vec<Effect>) {
        let id = self.snap.up_next.list.get(self.up_next_cursor);
        if let Some(id) = id.map(|q| q.id.clone()) {
            self.open_book(id, fx);
        }
    }

    /// Where `book` is in the list (1 is next), if it is.
    pub fn up_next_place(&self, book: &BookId) -> Option<usize> {
        let list = &self.snap.up_next.list;
        list.iter().position(|q| &q.id == book).map(|i| i + 1)
    }

    /// The list's mode in words, for its screen.
    pub fn up_next_rule(&self) -> &'static str {
        match self.snap.up_next.mode {
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
