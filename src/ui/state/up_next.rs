//! Up next in the player: the "play next" list screen (built with its key
//! from the library and book screens, reordered and trimmed here), the
//! "next: …" of the player bar and the countdown's notice. The list, what
//! follows a book and the countdown are the session's: its owner keeps
//! the list on disk per server and account, decides what plays when a
//! book ends (`domain::next_after`: the list, else the series), counts
//! down and opens it, for every client alike. The keys send it commands;
//! this model keeps only the list screen's selected row.

use super::toasts::Out;
use crate::domain::session::{Command, UpNextCommand, UpNextNow};
use crate::domain::{Queued, UpNextMode};

#[derive(Debug, Clone, Default)]
pub struct UpNextList {
    /// The list screen's selected row.
    pub cursor: usize,
}

impl UpNextList {
    /// The session's list changed: the cursor stays on a row.
    pub(super) fn list_changed(&mut self, len: usize) {
        self.cursor = self.cursor.min(len.saturating_sub(1));
    }

    pub(super) fn move_by(&mut self, delta: isize, len: usize) {
        self.cursor = self
            .cursor
            .saturating_add_signed(delta)
            .min(len.saturating_sub(1));
    }

    pub fn selected<'a>(&self, now: &'a UpNextNow) -> Option<&'a Queued> {
        now.list.get(self.cursor)
    }

    /// The add key: `book` goes to the end of the list, or leaves it when
    /// it is there.
    pub(super) fn toggle(&self, book: Queued, now: &UpNextNow, out: &mut Out) {
        let list = &now.list;
        out.say(if list.iter().any(|q| q.id == book.id) {
            format!("“{}” is no longer up next", book.title)
        } else {
            match list.len() + 1 {
                1 => format!("“{}” plays next", book.title),
                n => format!("“{}” is number {n} up next", book.title),
            }
        });
        out.send(Command::UpNext(UpNextCommand::Toggle(book)));
    }

    /// Moves the selected book one place earlier (`-1`) or later (`1`);
    /// the cursor follows it.
    pub(super) fn shift(&mut self, by: isize, now: &UpNextNow, out: &mut Out) {
        let Some(q) = self.selected(now) else {
            return;
        };
        let to = self.cursor.checked_add_signed(by);
        if let Some(j) = to.filter(|j| *j < now.list.len()) {
            let book = q.id.clone();
            self.cursor = j;
            out.send(Command::UpNext(UpNextCommand::Shift { book, by }));
        }
    }
}

/// The list's mode in words, for its screen.
pub fn rule(mode: UpNextMode) -> &'static str {
    match mode {
        UpNextMode::Series => "When a book ends, this list plays first; then its series goes on.",
        UpNextMode::Queue => "When a book ends, this list plays (up_next = \"queue\": no series).",
        UpNextMode::Off => "Up next is off (up_next = \"off\"): nothing starts by itself.",
    }
}
