//! The place history as the player keeps it: the marks of each book on
//! this device (loaded from sync, extended as the session marks a jump),
//! "undo jump", and jumps picked in the book screen's history list. The
//! rule for adding a mark is `domain::push_place_mark`, the same one sync
//! stores with.

use super::*;
use crate::domain::session::{Place, Start};
use crate::domain::{BookId, EpochMillis, JumpCause, Manifest, PlaceMark, push_place_mark};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Default)]
pub struct Histories {
    books: BTreeMap<BookId, Vec<PlaceMark>>,
}

impl Histories {
    /// A book's marks, oldest first.
    pub fn of(&self, book: &BookId) -> &[PlaceMark] {
        self.books.get(book).map(Vec::as_slice).unwrap_or(&[])
    }
    pub fn set(&mut self, book: BookId, marks: Vec<PlaceMark>) {
        self.books.insert(book, marks);
    }
    pub fn push(&mut self, book: BookId, mark: PlaceMark) -> bool {
        push_place_mark(self.books.entry(book).or_default(), mark)
    }
    /// The mark the history list shows in row `row` (newest first).
    pub fn row(&self, book: &BookId, row: usize) -> Option<&PlaceMark> {
        let marks = self.of(book);
        marks.len().checked_sub(row + 1).map(|i| &marks[i])
    }
}

/// "just now", "5 min ago", "3 h ago", "2 days ago".
pub fn ago(now: EpochMillis, at: EpochMillis) -> String {
    let s = (now - at).max(0) / 1000;
    match s {
        0..=59 => "just now".into(),
        60..=3599 => format!("{} min ago", s / 60),
        3600..=86_399 => format!("{} h ago", s / 3600),
        86_400..=172_799 => "yesterday".into(),
        _ => format!("{} days ago", s / 86_400),
    }
}

impl App {
    /// Wall-clock now: the loop's clock from its start, on the epoch.
    pub fn wall_now(&self) -> EpochMillis {
        self.clock_origin + self.now as EpochMillis
    }

    /// False (and says so) when the mark's chapter is not in `manifest`
    /// any more (the book was rescanned).
    fn reachable(&mut self, mark: &PlaceMark, manifest: Option<&Manifest>) -> bool {
        let gone = manifest.is_some_and(|m| m.position_of(&mark.chapter_id).is_none());
        if gone {
            self.toast(
                format!(
                    "Chapter {} is no longer in this book; cannot go back there.",
                    mark.chapter_id
                ),
                true,
            );
        }
        !gone
    }

    /// Goes back to where the last jump started; the way back is a jump
    /// too, so pressing it again returns.
    pub(super) fn undo_jump(&mut self, fx: &mut Vec<Effect>) {
        let Some(book) = self.playing().map(|p| p.book.id.clone()) else {
            self.say(NOTHING_PLAYING);
            return;
        };
        let Some(target) = self.book.history.of(&book).last().cloned() else {
            self.say("No jump to undo in this book yet.");
            return;
        };
        let manifest = self.playing().map(|p| (*p.manifest).clone());
        if !self.reachable(&target, manifest.as_ref()) {
            return;
        }
        let at = Place {
            chapter: target.chapter_id.clone(),
            position: target.position,
        };
        self.say(format!(
            "Back to {} (again to return)",
            self.describe_position(&at)
        ));
        fx.push(Effect::Session(Command::Seek {
            chapter: target.chapter_id,
            position: target.position,
            cause: JumpCause::Undo,
        }));
    }

    /// Enter on a row of the history list.
    pub(super) fn history_jump(&mut self, target: PlaceMark, fx: &mut Vec<Effect>) {
        let manifest = self.book.manifest.clone();
        if !self.reachable(&target, manifest.as_ref()) {
            return;
        }
        let at = Start::At(target.chapter_id, target.position);
        self.play_at(at, JumpCause::History, fx);
    }

    /// Opens the history list of the playing book (or the open one).
    pub(super) fn show_history(&mut self, fx: &mut Vec<Effect>) {
        if let Some(id) = self.playing().map(|p| p.book.id.clone())
            && self.screen != Screen::Book
        {
            self.open_book(id, fx);
        }
        if self.screen == Screen::Book {
            self.book.show_pane(BookPane::History);
        }
    }

    /// "ch 7 12:31", with the chapter's number in the playing manifest
    /// (or the open book's).
    pub fn describe_position(&self, p: &Place) -> String {
        let n = self
            .playing()
            .and_then(|np| np.manifest.position_of(&p.chapter))
            .or_else(|| {
                self.book
                    .manifest
                    .as_ref()
                    .and_then(|m| m.position_of(&p.chapter))
            });
        match n {
            Some(i) => format!("ch {} {}", i + 1, fmt_time(p.position)),
            None => format!("{} {}", p.chapter, fmt_time(p.position)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ago;

    #[test]
    fn ages_read_naturally() {
        assert_eq!(ago(100_000, 90_000), "just now");
        assert_eq!(ago(10 * 60_000, 0), "10 min ago");
        assert_eq!(ago(5 * 3_600_000, 0), "5 h ago");
        assert_eq!(ago(30 * 3_600_000, 0), "yesterday");
        assert_eq!(ago(50 * 3_600_000, 0), "2 days ago");
        assert_eq!(ago(0, 5_000), "just now");
    }
}
