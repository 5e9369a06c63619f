//! What is playing, as the player bar shows it, and where any book is as
//! every screen shows it ([`App::listened`]: one source).

use super::App;
use super::msg::{EngineView, PlayState};
use crate::domain::{Book, ChapterId, Manifest};

#[derive(Debug, Clone, PartialEq)]
pub struct NowPlaying {
    pub book: Book,
    pub manifest: Manifest,
    /// The engine's latest published state for this book, once it has one.
    pub engine: Option<EngineView>,
}

impl NowPlaying {
    pub fn state(&self) -> PlayState {
        self.engine
            .as_ref()
            .map_or(PlayState::Loading, |e| e.state.clone())
    }
    pub fn is_playing(&self) -> bool {
        matches!(
            self.state(),
            PlayState::Playing | PlayState::Buffering | PlayState::Loading
        ) && self.engine.is_some()
    }
    pub fn chapter_index(&self) -> Option<usize> {
        let e = self.engine.as_ref()?;
        self.manifest.position_of(&e.chapter)
    }
    pub fn chapter_id(&self) -> Option<&ChapterId> {
        self.engine.as_ref().map(|e| &e.chapter)
    }
    pub fn chapter_title(&self) -> Option<&str> {
        self.manifest
            .items
            .get(self.chapter_index()?)
            .map(|i| i.title.as_str())
    }
    /// (position, duration) inside the current chapter.
    pub fn chapter_progress(&self) -> (f64, Option<f64>) {
        let pos = self.engine.as_ref().map_or(0.0, |e| e.position);
        let dur = self
            .chapter_index()
            .and_then(|i| self.manifest.items[i].duration);
        (pos, dur)
    }
    /// (position, duration) in the whole book.
    pub fn book_progress(&self) -> (Option<f64>, Option<f64>) {
        let total = self.manifest.total_duration().or(self.book.duration);
        let pos = self
            .engine
            .as_ref()
            .and_then(|e| self.manifest.book_position(&e.chapter, e.position));
        (pos, total)
    }
    /// Chapter start offsets as fractions of the book, for tick marks.
    pub fn chapter_ticks(&self) -> Vec<f64> {
        let Some(total) = self.manifest.total_duration().filter(|t| *t > 0.0) else {
            return Vec::new();
        };
        let mut acc = 0.0;
        let mut ticks = Vec::new();
        for item in &self.manifest.items {
            if acc > 0.0 {
                ticks.push(acc / total);
            }
            acc += item.duration.unwrap_or(0.0);
        }
        ticks
    }
}

impl App {
    /// How much of `book` is listened (0 to 1), the one answer the library
    /// row, the book screen and the player bar share: the playing book's
    /// from the engine's place (the bar's), any other's from the library
    /// (the server's place, or what sync last said). `None`: not known.
    pub fn listened(&self, book: &Book) -> Option<f64> {
        listened(book, self.playing.as_ref())
    }
}

/// [`App::listened`], for a view that holds the library mutably.
pub fn listened(book: &Book, playing: Option<&NowPlaying>) -> Option<f64> {
    if book.progress.as_ref().is_some_and(|p| p.finished) {
        return Some(1.0);
    }
    if let Some(np) = playing.filter(|p| p.book.id == book.id && p.engine.is_some())
        && let (Some(at), Some(total)) = np.book_progress()
        && total > 0.0
    {
        return Some((at / total).clamp(0.0, 1.0));
    }
    super::library::fraction(book)
}

/// `h:mm:ss` or `m:ss` of the whole seconds (`domain::clock`, the one
/// rule every clock follows); negative and non-finite values show as 0:00.
pub fn fmt_time(secs: f64) -> String {
    crate::domain::clock::clock(secs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_times() {
        assert_eq!(fmt_time(0.0), "0:00");
        assert_eq!(fmt_time(751.9), "12:31");
        assert_eq!(fmt_time(3723.0), "1:02:03");
        assert_eq!(fmt_time(f64::NAN), "0:00");
        assert_eq!(fmt_time(-5.0), "0:00");
    }
}
