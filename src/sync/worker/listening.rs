//! The worker's side of this device's listening record: the place before
//! the jumps sync makes itself (a restore that moved the place, a conflict
//! choice, opening at a picked place or the start), the marks the player
//! sends, and the time listened, counted from the engine's states.

use super::{Told, Worker};
use crate::domain::session::PlayState;
use crate::domain::{BookId, ChapterId, JumpCause, ListeningStats, PlaceMark, now_millis};
use crate::sync::engine_bridge::Heard;
use crate::sync::listening::local_day;

/// Counted listening is written at least this often while playing.
const SAVE_EVERY_MS: u64 = 30_000;
/// A move shorter than this is not a jump worth remembering.
const MOVED_SECS: f64 = 2.0;

impl Worker {
    pub(super) fn mark_place(&mut self, book: BookId, mark: PlaceMark) {
        self.listening.mark(book, mark);
        self.say_listening_failure();
    }

    fn say_listening_failure(&mut self) {
        if let Some(why) = self.listening.failed.take() {
            self.news(crate::sync::SyncNews::HistoryNotSaved { why });
        }
    }

    /// Where the engine is now, when it plays this book.
    fn engine_place(&self, book: &BookId) -> Option<(ChapterId, f64)> {
        let s = self.engine_now.as_ref()?;
        let playing = self.playing.as_ref()?;
        (playing.engine == s.load && &playing.book == book)
            .then(|| Some((s.chapter.clone()?, s.position)))
            .flatten()
    }

    /// Where a book is before it opens: where the engine plays it
    /// (reopened while playing), else where this device last was.
    pub(super) fn place_before_opening(&self, book: &BookId) -> Option<(ChapterId, f64)> {
        self.engine_place(book).or_else(|| {
            let scope = self.scope.as_ref()?;
            let l = self.cache.progress(scope, book)?;
            Some((l.spot.chapter, l.spot.position))
        })
    }

    /// The opened book moves to `target` while it plays.
    pub(super) fn mark_moved(&mut self, target: &(ChapterId, f64), cause: JumpCause) {
        let Some(book) = self.opened.as_ref().map(|o| o.book.clone()) else {
            return;
        };
        let before = self.engine_place(&book);
        self.record_move(book, before, target, cause);
    }

    pub(super) fn record_move(
        &mut self,
        book: BookId,
        before: Option<(ChapterId, f64)>,
        target: &(ChapterId, f64),
        cause: JumpCause,
    ) {
        let Some((chapter, position)) = before else {
            return;
        };
        if chapter == target.0 && (position - target.1).abs() < MOVED_SECS {
            return;
        }
        let mark = PlaceMark {
            at: now_millis(),
            chapter_id: chapter,
            position,
            cause,
        };
        if self.listening.mark(book.clone(), mark.clone()) {
            self.notify(Told::PlaceMarked { book, mark });
        }
        self.say_listening_failure();
    }

    /// Counts listened time from one engine state of the opened book.
    pub(super) fn count_listening(&mut self, s: &Heard) {
        let Some(playing) = self.playing.clone() else {
            return;
        };
        if playing.engine != s.load {
            return;
        }
        let Some(chapter) = &s.chapter else {
            return;
        };
        let now = now_millis();
        let is_playing = s.state == PlayState::Playing;
        self.tally.observe(
            &playing.book,
            chapter,
            s.position,
            is_playing,
            now,
            local_day(now),
        );
        let newly_ended = s.state == PlayState::Ended
            && self
                .engine_now
                .as_ref()
                .is_none_or(|p| p.state != PlayState::Ended);
        if newly_ended {
            self.listening.finished(playing.book.clone(), true, now);
        }
        if !is_playing || self.tally.pending_wall_ms() >= SAVE_EVERY_MS {
            self.save_listened();
        }
    }

    pub(super) fn save_listened(&mut self) {
        if self.tally.pending_wall_ms() > 0 {
            let days = self.tally.take();
            self.listening.listened(days);
            self.say_listening_failure();
        }
    }

    pub(super) fn listening_stats(&mut self) -> ListeningStats {
        self.save_listened();
        self.listening.stats(local_day(now_millis()))
    }
}
