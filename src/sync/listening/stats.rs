//! Listening statistics, pure: the tally that turns the engine's states
//! into listened time, and the summary the stats view and `earmark stats`
//! show (last 30 days, totals, streaks, books finished). No clocks: every
//! call gets the wall time and the local day.

use crate::domain::{BookId, BookListened, ChapterId, DayListened, EpochMillis, ListeningStats};
use std::collections::BTreeMap;

/// Gaps between two playing states longer than this were not listened
/// (the engine publishes every 50 ms while it plays).
const MAX_GAP_MS: i64 = 2_000;
/// Faster than the fastest speed (3×), with room: a jump, not listening.
const MAX_RATE: f64 = 3.5;

/// Listened time per (day, book): milliseconds of wall and media time.
pub type Days = BTreeMap<(i64, BookId), (u64, u64)>;

/// One reading of the engine while it plays a book.
#[derive(Debug, Clone, PartialEq)]
struct Reading {
    book: BookId,
    chapter: ChapterId,
    position: f64,
    at: EpochMillis,
}

/// Counts listened time between consecutive playing states of one book
/// and chapter; a seek, a chapter change or a gap counts nothing.
#[derive(Debug, Default)]
pub struct Tally {
    last: Option<Reading>,
    pending: Days,
    pending_wall_ms: u64,
}

impl Tally {
    /// A state of the engine: `playing` is false for anything but playing.
    pub fn observe(
        &mut self,
        book: &BookId,
        chapter: &ChapterId,
        position: f64,
        playing: bool,
        at: EpochMillis,
        day: i64,
    ) {
        let now = Reading {
            book: book.clone(),
            chapter: chapter.clone(),
            position,
            at,
        };
        let Some(prev) = self.last.take() else {
            self.last = playing.then_some(now);
            return;
        };
        let wall = at - prev.at;
        let media = position - prev.position;
        let same = prev.book == now.book && prev.chapter == now.chapter;
        if same && (1..=MAX_GAP_MS).contains(&wall) && media.is_finite() && media >= 0.0 {
            let media_ms = (media * 1000.0).round();
            if media_ms <= wall as f64 * MAX_RATE {
                let e = self.pending.entry((day, now.book.clone())).or_default();
                e.0 += wall as u64;
                e.1 += media_ms as u64;
                self.pending_wall_ms += wall as u64;
            }
        }
        self.last = playing.then_some(now);
    }

    /// Wall milliseconds counted but not taken yet.
    pub fn pending_wall_ms(&self) -> u64 {
        self.pending_wall_ms
    }

    /// What was counted since the last take.
    pub fn take(&mut self) -> Days {
        self.pending_wall_ms = 0;
        std::mem::take(&mut self.pending)
    }
}

/// The longest run of consecutive days in `days` (sorted, distinct).
pub fn longest_streak(days: &[i64]) -> u32 {
    let (mut best, mut run) = (0u32, 0u32);
    for (i, d) in days.iter().enumerate() {
        run = if i > 0 && days[i - 1] + 1 == *d {
            run + 1
        } else {
            1
        };
        best = best.max(run);
    }
    best
}

/// The run that ends today, or yesterday (today may still come).
pub fn current_streak(days: &[i64], today: i64) -> u32 {
    let mut want = if days.last() == Some(&today) {
        today
    } else {
        today - 1
    };
    let mut n = 0;
    for d in days.iter().rev() {
        if *d == want {
            n += 1;
            want -= 1;
        } else if *d < want {
            break;
        }
    }
    n
}

/// Days with less than this much listening do not make a streak.
const STREAK_MIN_MS: u64 = 60_000;

pub fn summarize(days: &Days, finished: &BTreeMap<BookId, bool>, today: i64) -> ListeningStats {
    let mut per_day: BTreeMap<i64, (u64, u64)> = BTreeMap::new();
    let mut per_book: BTreeMap<BookId, (u64, u64)> = BTreeMap::new();
    for ((day, book), (w, m)) in days {
        let d = per_day.entry(*day).or_default();
        d.0 += w;
        d.1 += m;
        let b = per_book.entry(book.clone()).or_default();
        b.0 += w;
        b.1 += m;
    }
    let secs = |ms: u64| ms as f64 / 1000.0;
    let last_30 = (today - 29..=today)
        .map(|day| {
            let (w, m) = per_day.get(&day).copied().unwrap_or_default();
            DayListened {
                day,
                wall_secs: secs(w),
                media_secs: secs(m),
            }
        })
        .collect();
    let streak_days: Vec<i64> = per_day
        .iter()
        .filter(|(_, (w, _))| *w >= STREAK_MIN_MS)
        .map(|(d, _)| *d)
        .collect();
    let mut books: Vec<BookListened> = per_book
        .iter()
        .map(|(b, (w, m))| BookListened {
            book_id: b.clone(),
            wall_secs: secs(*w),
            media_secs: secs(*m),
            finished: finished.get(b).copied().unwrap_or(false),
        })
        .collect();
    books.sort_by(|a, b| b.wall_secs.total_cmp(&a.wall_secs));
    ListeningStats {
        today,
        last_30,
        total_wall_secs: secs(per_day.values().map(|d| d.0).sum()),
        total_media_secs: secs(per_day.values().map(|d| d.1).sum()),
        longest_streak_days: longest_streak(&streak_days),
        current_streak_days: current_streak(&streak_days, today),
        books_finished: finished.values().filter(|f| **f).count() as u32,
        books,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn id(s: &str) -> BookId {
        BookId::new(s)
    }

    #[test]
    fn playing_at_double_speed_counts_twice_the_media() {
        let (b, c) = (id("b"), ChapterId::new("c"));
        let mut t = Tally::default();
        for i in 0..=20 {
            t.observe(&b, &c, 10.0 + i as f64 * 0.1, true, 1_000 + i * 50, 5);
        }
        let got = t.take();
        assert_eq!(got[&(5, b)], (1_000, 2_000));
    }

    #[test]
    fn seeks_gaps_pauses_and_chapter_changes_count_nothing() {
        let (b, c, d) = (id("b"), ChapterId::new("c"), ChapterId::new("d"));
        let mut t = Tally::default();
        t.observe(&b, &c, 10.0, true, 0, 1);
        t.observe(&b, &c, 300.0, true, 50, 1); // a seek forward
        t.observe(&b, &c, 250.0, true, 100, 1); // back
        t.observe(&b, &d, 0.0, true, 150, 1); // another chapter
        t.observe(&b, &d, 0.05, false, 200, 1); // paused: the last 50 ms count
        t.observe(&b, &d, 0.05, true, 60_000, 1); // resumed a minute later
        t.observe(&b, &d, 0.10, true, 60_050, 1);
        assert_eq!(t.take()[&(1, b)], (100, 100));
    }

    #[test]
    fn streaks() {
        assert_eq!(longest_streak(&[]), 0);
        assert_eq!(longest_streak(&[3, 4, 5, 9, 10]), 3);
        assert_eq!(current_streak(&[3, 4, 5, 9, 10], 10), 2);
        assert_eq!(current_streak(&[3, 4, 5, 9, 10], 11), 2);
        assert_eq!(current_streak(&[3, 4, 5, 9, 10], 12), 0);
    }

    #[test]
    fn summary_fills_thirty_days_and_counts_finished_books() {
        let mut days = Days::new();
        days.insert((100, id("a")), (120_000, 240_000));
        days.insert((100, id("b")), (30_000, 30_000));
        days.insert((99, id("a")), (61_000, 61_000));
        days.insert((50, id("a")), (10_000, 10_000));
        let finished = BTreeMap::from([(id("a"), true), (id("b"), false)]);
        let s = summarize(&days, &finished, 100);
        assert_eq!(s.last_30.len(), 30);
        assert_eq!(s.last_30[29].day, 100);
        assert_eq!(s.last_30[29].wall_secs, 150.0);
        assert_eq!(s.last_30[29].media_secs, 270.0);
        assert_eq!(s.total_wall_secs, 221.0);
        assert_eq!(s.longest_streak_days, 2);
        assert_eq!(s.current_streak_days, 2);
        assert_eq!(s.books_finished, 1);
        assert_eq!(s.books[0].book_id, id("a"));
    }

    proptest! {
        #[test]
        fn streaks_are_bounded_by_the_days(mut days in proptest::collection::vec(0i64..60, 0..40), today in 0i64..70) {
            days.sort();
            days.dedup();
            let longest = longest_streak(&days);
            prop_assert!(longest as usize <= days.len());
            prop_assert!(current_streak(&days, today) <= longest);
        }

        #[test]
        fn counted_media_never_outruns_the_fastest_speed(
            steps in proptest::collection::vec((1i64..3000, -50.0f64..50.0, any::<bool>()), 1..100)
        ) {
            let (b, c) = (id("b"), ChapterId::new("c"));
            let mut t = Tally::default();
            let (mut at, mut pos) = (0i64, 100.0f64);
            for (dt, dp, playing) in steps {
                at += dt;
                pos = (pos + dp).max(0.0);
                t.observe(&b, &c, pos, playing, at, 0);
            }
            let total_wall = t.pending_wall_ms();
            for (w, m) in t.take().values() {
                prop_assert!(*w <= total_wall);
                prop_assert!(*m as f64 <= *w as f64 * MAX_RATE + 1.0);
            }
        }
    }
}
