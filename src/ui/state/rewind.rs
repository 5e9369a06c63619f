//! Smart rewind: after a pause, playback resumes a little earlier, more the
//! longer the pause (a curve from config.toml). Also after the sleep
//! timer's stop (a pause), a stall or error of the stream or device (once
//! it plays again), and when a book is resumed after a break, also between
//! two runs: the pause is the time since its place was last saved, as
//! sync knows it (`Answer::Resumed`, from the playback owner), never the
//! library list's timestamps, which are stale once the book played. The rewind is a
//! seek the listener could have made: it goes to the place history, and
//! sync treats it like any seek. It stays inside the current chapter unless
//! `smart_rewind_past_chapter_start` is set.

use super::*;
use crate::domain::{EpochMillis, JumpCause};

/// (pause seconds, rewind seconds), pause ascending. Below the first point
/// nothing; between points linear; past the last, the last rewind.
#[derive(Debug, Clone, PartialEq)]
pub struct RewindCurve {
    points: Vec<(f64, f64)>,
}

impl Default for RewindCurve {
    /// None under 10 s, 2 s after a minute, 10 s after 10 minutes, at most
    /// 30 s after an hour.
    fn default() -> Self {
        RewindCurve {
            points: vec![(10.0, 0.0), (60.0, 2.0), (600.0, 10.0), (3600.0, 30.0)],
        }
    }
}

impl RewindCurve {
    /// Checks the points: at least one, pauses strictly ascending, rewinds
    /// between 0 and 600 s.
    pub fn new(points: Vec<(f64, f64)>) -> Result<RewindCurve, String> {
        if points.is_empty() {
            return Err("the curve needs at least one [pause, rewind] point".into());
        }
        for (i, (p, r)) in points.iter().enumerate() {
            if !p.is_finite() || *p < 0.0 {
                return Err(format!("point {}: the pause must be seconds ≥ 0", i + 1));
            }
            if !r.is_finite() || !(0.0..=600.0).contains(r) {
                return Err(format!(
                    "point {}: the rewind must be seconds between 0 and 600",
                    i + 1
                ));
            }
            if i > 0 && points[i - 1].0 >= *p {
                return Err(format!(
                    "point {}: pauses must grow from point to point",
                    i + 1
                ));
            }
        }
        Ok(RewindCurve { points })
    }

    /// Seconds to rewind after a pause of `pause` seconds.
    pub fn rewind(&self, pause: f64) -> f64 {
        if !pause.is_finite() || pause < self.points[0].0 {
            return 0.0;
        }
        for w in self.points.windows(2) {
            let ((p0, r0), (p1, r1)) = (w[0], w[1]);
            if pause < p1 {
                return r0 + (r1 - r0) * (pause - p0) / (p1 - p0);
            }
        }
        self.points.last().map_or(0.0, |p| p.1)
    }
}

/// Rewinds shorter than this are not worth a seek.
const MIN_REWIND: f64 = 0.5;

/// What smart rewind follows between engine states.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Pauses {
    /// Paused since (loop clock).
    pub paused_since: Option<Millis>,
    /// Stalled or failing since (loop clock).
    pub interrupted_since: Option<Millis>,
    /// A book resumed after a break, and when its place was last saved.
    pub resumed: Option<(BookId, EpochMillis)>,
}

impl App {
    /// The playback owner opened `book` to resume a place saved at
    /// `saved_at`: the first time it plays, the break is rewound.
    pub(super) fn resumed(&mut self, book: BookId, saved_at: EpochMillis) {
        if self.playing.as_ref().is_some_and(|p| p.book.id == book) {
            self.pauses.resumed = Some((book, saved_at));
        }
    }

    /// Follows the engine's states (call with the state before the new view).
    pub(super) fn rewind_watch(&mut self, before: Option<PlayState>, fx: &mut Vec<Effect>) {
        let Some(now) = self.playing.as_ref().and_then(|p| p.engine.clone()) else {
            return;
        };
        let changed = before.as_ref() != Some(&now.state);
        match now.state {
            PlayState::Paused if changed => self.pauses.paused_since = Some(self.now),
            PlayState::Stalled | PlayState::Error(_) => {
                self.pauses.interrupted_since.get_or_insert(self.now);
            }
            PlayState::Playing => {
                if let Some(since) = self.pauses.interrupted_since.take() {
                    let secs = self.now.saturating_sub(since) as f64 / 1000.0;
                    self.rewind_after(secs, "an interruption", fx);
                }
                if let Some((book, saved)) = self.pauses.resumed.take()
                    && book == now.book
                {
                    let secs = (self.wall_now() - saved).max(0) as f64 / 1000.0;
                    self.rewind_after(secs, "a break", fx);
                }
                self.pauses.paused_since = None;
            }
            _ => {}
        }
    }

    /// Play after a pause: rewinds first when the pause was long enough.
    pub(super) fn resume_after_pause(&mut self, fx: &mut Vec<Effect>) {
        let paused = self
            .playing
            .as_ref()
            .is_some_and(|p| p.state() == PlayState::Paused);
        if paused && let Some(since) = self.pauses.paused_since.take() {
            let secs = self.now.saturating_sub(since) as f64 / 1000.0;
            self.rewind_after(secs, "a pause", fx);
        }
    }

    fn rewind_after(&mut self, pause_secs: f64, why: &str, fx: &mut Vec<Effect>) {
        let Some(curve) = self.settings.smart_rewind.clone() else {
            return;
        };
        let back = curve.rewind(pause_secs);
        let Some((chapter, pos)) = self
            .playing
            .as_ref()
            .and_then(|p| p.engine.as_ref())
            .map(|e| (e.chapter.clone(), e.position))
        else {
            return;
        };
        let back = if self.settings.rewind_past_chapter_start {
            back
        } else {
            back.min(pos)
        };
        if back < MIN_REWIND {
            return;
        }
        self.mark_here(JumpCause::Rewind, fx);
        if self.settings.rewind_past_chapter_start {
            fx.push(Effect::Engine(EngineCmd::SkipBy(-back)));
        } else {
            fx.push(Effect::Engine(EngineCmd::Seek {
                chapter,
                position: pos - back,
            }));
        }
        self.toast(format!("Rewound {:.0} s after {why}", back), false);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_default_curve_follows_the_issue() {
        let c = RewindCurve::default();
        assert_eq!(c.rewind(5.0), 0.0);
        assert_eq!(c.rewind(60.0), 2.0);
        assert_eq!(c.rewind(600.0), 10.0);
        assert_eq!(c.rewind(3600.0), 30.0);
        assert_eq!(c.rewind(86_400.0), 30.0);
        assert!((c.rewind(330.0) - 6.0).abs() < 1e-9);
    }

    #[test]
    fn bad_curves_are_refused_with_the_reason() {
        assert!(RewindCurve::new(vec![]).is_err());
        let e = RewindCurve::new(vec![(60.0, 2.0), (30.0, 4.0)]).unwrap_err();
        assert!(e.contains("point 2"), "{e}");
        assert!(RewindCurve::new(vec![(1.0, 700.0)]).is_err());
        assert!(RewindCurve::new(vec![(-1.0, 1.0)]).is_err());
    }

    proptest! {
        #[test]
        fn never_more_than_the_largest_point_and_never_negative(
            mut pts in proptest::collection::vec((0.0f64..10_000.0, 0.0f64..600.0), 1..6),
            pause in -10.0f64..100_000.0,
        ) {
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            pts.dedup_by(|a, b| a.0 == b.0);
            let c = RewindCurve::new(pts.clone()).unwrap();
            let r = c.rewind(pause);
            let max = pts.iter().map(|p| p.1).fold(0.0, f64::max);
            prop_assert!((0.0..=max + 1e-9).contains(&r));
        }

        #[test]
        fn the_default_grows_with_the_pause(a in 0.0f64..10_000.0, b in 0.0f64..10_000.0) {
            let c = RewindCurve::default();
            let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
            prop_assert!(c.rewind(lo) <= c.rewind(hi) + 1e-9);
        }
    }
}
