//! The progress merge policy (docs/contract.md, "Merge policy"). Pure: the
//! route validates and resolves chapters, this decides.

/// What the decision needs of the stored record.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stored {
    pub book_position_sec: f64,
    pub finished: bool,
    pub client_updated_at: i64,
}

/// A validated write (position already clamped to the chapter).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Incoming {
    pub chapter_index: usize,
    pub position_sec: f64,
    pub book_position_sec: f64,
    pub finished: bool,
    pub reset: bool,
    /// Already clamped to the server clock.
    pub client_updated_at: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Applied,
    /// Not newer than the stored record (equal = an idempotent retry).
    Stale,
    /// A position at the very start would replace progress further along.
    ZeroGuarded,
}

/// A client timestamp from the future counts as "now".
pub fn clamp_client_time(client_updated_at: i64, now: i64) -> i64 {
    client_updated_at.min(now)
}

pub fn decide(stored: Option<&Stored>, write: &Incoming) -> Outcome {
    let Some(stored) = stored else {
        return Outcome::Applied;
    };
    if write.client_updated_at <= stored.client_updated_at {
        return Outcome::Stale;
    }
    let at_start = write.chapter_index == 0 && write.position_sec < 1.0;
    let further = stored.finished || stored.book_position_sec > write.book_position_sec;
    if at_start && !write.reset && !write.finished && further {
        return Outcome::ZeroGuarded;
    }
    Outcome::Applied
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn stored(pos: f64, at: i64) -> Stored {
        Stored {
            book_position_sec: pos,
            finished: false,
            client_updated_at: at,
        }
    }

    fn write(ch: usize, pos: f64, at: i64) -> Incoming {
        Incoming {
            chapter_index: ch,
            position_sec: pos,
            book_position_sec: pos + ch as f64 * 100.0,
            finished: false,
            reset: false,
            client_updated_at: at,
        }
    }

    #[test]
    fn first_write_applies_and_newer_wins() {
        assert_eq!(decide(None, &write(0, 0.0, 1)), Outcome::Applied);
        let over = |w: Incoming| decide(Some(&stored(50.0, 10)), &w);
        assert_eq!(over(write(0, 20.0, 11)), Outcome::Applied);
        assert_eq!(over(write(1, 70.0, 9)), Outcome::Stale);
        assert_eq!(over(write(1, 70.0, 10)), Outcome::Stale);
    }

    #[test]
    fn zero_guard_needs_reset_or_finished() {
        let s = stored(150.0, 10);
        assert_eq!(decide(Some(&s), &write(0, 0.0, 11)), Outcome::ZeroGuarded);
        assert_eq!(decide(Some(&s), &write(0, 0.5, 11)), Outcome::ZeroGuarded);
        let reset = Incoming {
            reset: true,
            ..write(0, 0.0, 11)
        };
        assert_eq!(decide(Some(&s), &reset), Outcome::Applied);
        let finished = Incoming {
            finished: true,
            ..write(0, 0.0, 11)
        };
        assert_eq!(decide(Some(&s), &finished), Outcome::Applied);
        // Not at the start of the book: an ordinary backwards seek.
        assert_eq!(decide(Some(&s), &write(1, 0.0, 11)), Outcome::Applied);
        assert_eq!(decide(Some(&s), &write(0, 5.0, 11)), Outcome::Applied);
    }

    #[test]
    fn future_timestamps_are_clamped() {
        assert_eq!(clamp_client_time(5_000, 1_000), 1_000);
        assert_eq!(clamp_client_time(500, 1_000), 500);
    }

    proptest! {
        #[test]
        fn never_applies_what_is_not_newer(pos in 0.0f64..1e5, at in 1i64..1_000_000, older in 0i64..1_000_000, ch in 0usize..5, reset: bool, fin: bool) {
            let s = stored(pos, at);
            let w = Incoming { reset, finished: fin, ..write(ch, pos, at - older) };
            prop_assert_eq!(decide(Some(&s), &w), Outcome::Stale);
        }

        #[test]
        fn a_reset_that_is_newer_always_applies(pos in 0.0f64..1e5, at in 1i64..1_000_000, newer in 1i64..1_000_000, ch in 0usize..5, wpos in 0.0f64..100.0) {
            let s = Stored { finished: true, ..stored(pos, at) };
            let w = Incoming { reset: true, ..write(ch, wpos, at + newer) };
            prop_assert_eq!(decide(Some(&s), &w), Outcome::Applied);
        }
    }
}
