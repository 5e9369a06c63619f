//! Smart rewind, pure: after a pause, playback resumes a little earlier,
//! more the longer the pause ([`RewindCurve`], from config.toml). Also
//! after the sleep timer's stop (a pause), a stall or error of the stream
//! or device (once it plays again), and when a book is resumed after a
//! break, also between two runs: the break is the time since its place
//! was last saved, as sync knows it. The session owner drives [`Rewind`]
//! and carries out the rewind as a seek the listener could have made (it
//! goes to the place history; sync treats it like any seek).

use super::{BookId, EpochMillis};
use serde::{Deserialize, Serialize};

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

/// Why playback rewound.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum RewindAfter {
    Pause,
    Interruption,
    Break,
}

/// A rewind to carry out: `back` seconds of media.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rewound {
    pub back: f64,
    pub after: RewindAfter,
    /// It may cross into the previous chapter (a skip, not a seek).
    pub past_chapter_start: bool,
}

/// What the engine does, as the rewind needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Playing,
    Paused,
    /// Stalled or failed.
    Interrupted,
    Other,
}

/// What smart rewind follows between the engine's states.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rewind {
    /// `None`: smart rewind is off.
    pub curve: Option<RewindCurve>,
    pub past_chapter_start: bool,
    paused_since: Option<EpochMillis>,
    interrupted_since: Option<EpochMillis>,
    /// A book resumed after a break, and when its place was last saved.
    resumed: Option<(BookId, EpochMillis)>,
    last: Option<Flow>,
}

impl Rewind {
    pub fn new(curve: Option<RewindCurve>, past_chapter_start: bool) -> Rewind {
        Rewind {
            curve,
            past_chapter_start,
            ..Rewind::default()
        }
    }

    /// `book` opened to resume a place saved at `saved_at`: the first
    /// time it plays, the break is rewound.
    pub fn resumed(&mut self, book: BookId, saved_at: EpochMillis) {
        self.resumed = Some((book, saved_at));
    }

    /// Another load began: what was followed belongs to the last one.
    pub fn loaded(&mut self) {
        self.paused_since = None;
        self.interrupted_since = None;
        self.last = None;
    }

    /// One engine state of `book` (at `position` in its chapter).
    pub fn follow(
        &mut self,
        book: &BookId,
        flow: Flow,
        position: f64,
        now: EpochMillis,
    ) -> Option<Rewound> {
        let changed = self.last != Some(flow);
        self.last = Some(flow);
        match flow {
            Flow::Paused if changed => self.paused_since = Some(now),
            Flow::Interrupted => {
                self.interrupted_since.get_or_insert(now);
            }
            Flow::Playing => {
                self.paused_since = None;
                if let Some(since) = self.interrupted_since.take() {
                    return self.after(now - since, RewindAfter::Interruption, position);
                }
                if let Some((b, saved)) = self.resumed.take()
                    && &b == book
                {
                    return self.after(now - saved, RewindAfter::Break, position);
                }
            }
            _ => {}
        }
        None
    }

    /// Play after a pause: the rewind the pause earned.
    pub fn play_after_pause(&mut self, position: f64, now: EpochMillis) -> Option<Rewound> {
        let since = self.paused_since.take()?;
        self.after(now - since, RewindAfter::Pause, position)
    }

    fn after(&self, ms: EpochMillis, after: RewindAfter, position: f64) -> Option<Rewound> {
        let curve = self.curve.as_ref()?;
        let back = curve.rewind(ms.max(0) as f64 / 1000.0);
        let back = match self.past_chapter_start {
            true => back,
            false => back.min(position.max(0.0)),
        };
        (back >= MIN_REWIND).then_some(Rewound {
            back,
            after,
            past_chapter_start: self.past_chapter_start,
        })
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

    #[test]
    fn a_pause_a_stall_and_a_break_each_rewind_once() {
        let book = BookId::new("b");
        let mut r = Rewind::new(Some(RewindCurve::default()), false);
        r.follow(&book, Flow::Playing, 100.0, 0);
        r.follow(&book, Flow::Paused, 100.0, 1_000);
        let p = r.play_after_pause(100.0, 601_000).unwrap();
        assert_eq!((p.back, p.after), (10.0, RewindAfter::Pause));
        assert_eq!(r.play_after_pause(100.0, 700_000), None, "once");
        r.follow(&book, Flow::Interrupted, 50.0, 800_000);
        let i = r.follow(&book, Flow::Playing, 50.0, 860_000).unwrap();
        assert_eq!((i.back, i.after), (2.0, RewindAfter::Interruption));
        r.resumed(book.clone(), 0);
        let b = r.follow(&book, Flow::Playing, 5.0, 3_600_000).unwrap();
        assert_eq!(
            (b.back, b.after),
            (5.0, RewindAfter::Break),
            "kept in the chapter"
        );
    }

    // What the player's tests asserted of its own rewind before the
    // session owned it (tests/ui/rewind.rs): now the machine's.

    fn paused_for(r: &mut Rewind, position: f64, ms: EpochMillis) -> Option<Rewound> {
        let book = BookId::new("b");
        r.follow(&book, Flow::Playing, position, 0);
        r.follow(&book, Flow::Paused, position, 1_000);
        r.play_after_pause(position, 1_000 + ms)
    }

    #[test]
    fn a_short_pause_does_not_rewind_and_off_never_does() {
        let mut r = Rewind::new(Some(RewindCurve::default()), false);
        assert_eq!(paused_for(&mut r, 600.0, 5_000), None);
        let mut off = Rewind::new(None, false);
        assert_eq!(paused_for(&mut off, 600.0, 600_000), None);
    }

    #[test]
    fn the_rewind_stops_at_the_chapter_start_unless_it_may_cross_it() {
        let mut r = Rewind::new(Some(RewindCurve::default()), false);
        let p = paused_for(&mut r, 4.0, 3_600_000).unwrap();
        assert_eq!((p.back, p.past_chapter_start), (4.0, false));
        let mut across = Rewind::new(Some(RewindCurve::default()), true);
        let p = paused_for(&mut across, 4.0, 3_600_000).unwrap();
        assert_eq!((p.back, p.past_chapter_start), (30.0, true));
    }

    #[test]
    fn a_two_minute_stall_rewinds_between_a_minutes_and_ten_minutes() {
        let book = BookId::new("b");
        let mut r = Rewind::new(Some(RewindCurve::default()), false);
        r.follow(&book, Flow::Playing, 600.0, 0);
        r.follow(&book, Flow::Interrupted, 600.0, 1_000);
        r.follow(&book, Flow::Interrupted, 600.0, 60_000);
        let s = r.follow(&book, Flow::Playing, 600.0, 121_000).unwrap();
        assert!((2.0..10.0).contains(&s.back), "{s:?}");
        assert_eq!(r.follow(&book, Flow::Playing, 598.0, 122_000), None, "once");
    }

    #[test]
    fn a_book_resumed_half_an_hour_after_its_save_rewinds_eighteen_seconds() {
        let book = BookId::new("b");
        let mut r = Rewind::new(Some(RewindCurve::default()), false);
        r.resumed(book.clone(), 1_000);
        // 30 min: 10 s + (1800 - 600) / (3600 - 600) × 20 s = 18 s.
        let b = r.follow(&book, Flow::Playing, 600.0, 1_801_000).unwrap();
        assert!((b.back - 18.0).abs() < 1e-9 && b.after == RewindAfter::Break);
        assert_eq!(
            r.follow(&book, Flow::Playing, 582.0, 1_802_000),
            None,
            "once"
        );
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
