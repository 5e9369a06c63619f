//! The session's book, as the player bar shows it, and where any book is as
//! every screen shows it ([`App::listened`]: one source).

use super::App;
use crate::domain::Book;

/// The session's book as the player shows it: the snapshot's.
pub type NowPlaying = crate::domain::session::Listening;

impl App {
    /// How much of `book` is listened (0 to 1), the one answer the library
    /// row, the book screen and the player bar share: the playing book's
    /// from the engine's place (the bar's), any other's from the library
    /// (the server's place, or what sync last said). `None`: not known.
    pub fn listened(&self, book: &Book) -> Option<f64> {
        listened(book, self.playing())
    }
}

/// [`App::listened`], for a view that holds the library mutably.
pub fn listened(book: &Book, playing: Option<&NowPlaying>) -> Option<f64> {
    if book.progress.as_ref().is_some_and(|p| p.finished) {
        return Some(1.0);
    }
    if let Some(np) = playing.filter(|p| p.book.id == book.id)
        && let (Some(at), Some(total)) = np.book_progress()
        && total > 0.0
    {
        return Some((at / total).clamp(0.0, 1.0));
    }
    super::library::fraction(book)
}
