//! Byte offset ↔ frame index of one MPEG audio stream, for seeking.
//!
//! Two kinds of knowledge:
//! - exact points, recorded while frames are demuxed in order from a known
//!   start (every [`POINT_EVERY`] frames): a seek near one (within the walk
//!   limit in frames, or an estimated [`WALK_BYTES`]) walks frame headers
//!   forward from it and is exact;
//! - anchors that are estimates: the Xing TOC or VBRI table, and the end of
//!   the stream (its frame count from the tag, the server's duration, or a
//!   bitrate guess). A seek far from every exact point interpolates
//!   linearly between the nearest anchors around the target (exact points
//!   count as anchors too) and is approximate.
//!
//! Pure logic: no I/O.

/// An exact point is recorded every this many frames (~2 s at 44.1 kHz).
pub const POINT_EVERY: u64 = 80;

/// A seek counts frames from an exact point when the target is estimated to
/// be at most this many bytes further (a few short reads, not a download).
pub const WALK_BYTES: u64 = 1024 * 1024;

/// Frame index as a fractional estimate.
type FrameF = f64;

#[derive(Debug, Clone, PartialEq)]
pub enum Plan {
    /// Jump to an exact point and walk frame headers forward (exact).
    Walk { byte: u64, frame: u64 },
    /// Jump near `byte` and resync (the landing is an estimate).
    Estimate { byte: u64 },
}

#[derive(Debug, Clone, Default)]
pub struct SeekMap {
    /// (byte, frame), sorted; both strictly increasing.
    exact: Vec<(u64, u64)>,
    /// Estimated anchors (TOC, VBRI), sorted by frame.
    table: Vec<(u64, FrameF)>,
    /// End of the audio: (byte, frames), estimated unless from the tag.
    end: Option<(u64, FrameF)>,
    /// `end` was counted (every frame walked), not estimated.
    end_counted: bool,
    /// Frames within which a seek walks from an exact point.
    walk_frames: u64,
}

impl SeekMap {
    /// A map whose frame 0 starts at byte `first`. `walk_frames`: how far a
    /// seek may walk headers from an exact point instead of estimating.
    pub fn new(first: u64, walk_frames: u64) -> Self {
        Self {
            exact: vec![(first, 0)],
            walk_frames: walk_frames.max(1),
            ..Self::default()
        }
    }

    pub fn first_byte(&self) -> u64 {
        self.exact[0].0
    }

    /// Set the table anchors (byte, frame); non-monotone input is dropped.
    pub fn set_table(&mut self, anchors: Vec<(u64, FrameF)>) {
        let ok = anchors
            .windows(2)
            .all(|w| w[0].0 <= w[1].0 && w[0].1 <= w[1].1);
        self.table = if ok { anchors } else { Vec::new() };
    }

    /// The end of the audio: byte after the last frame and the frame count
    /// (an estimate; a counted end is kept).
    pub fn set_end(&mut self, byte: u64, frames: FrameF) {
        if byte > self.first_byte() && frames > 0.0 && !self.end_counted {
            self.end = Some((byte, frames));
        }
    }

    /// The end of the audio as counted: every frame up to `byte` walked.
    pub fn set_counted_end(&mut self, byte: u64, frames: u64) {
        if byte > self.first_byte() && frames > 0 {
            self.end = Some((byte, frames as FrameF));
            self.end_counted = true;
        }
    }

    /// The frame count, when every frame was counted.
    pub fn counted_frames(&self) -> Option<u64> {
        self.end.filter(|_| self.end_counted).map(|(_, f)| f as u64)
    }

    /// The last exact point at or before frame `frame`: (byte, frame).
    pub fn exact_before(&self, frame: u64) -> (u64, u64) {
        let i = self.exact.partition_point(|p| p.1 <= frame);
        self.exact[i.saturating_sub(1)]
    }

    /// Whether estimated anchors (a TOC, a VBRI table, a measured profile)
    /// are known.
    pub fn has_table(&self) -> bool {
        !self.table.is_empty()
    }

    pub fn end(&self) -> Option<(u64, FrameF)> {
        self.end
    }

    /// Record that the frame `frame` starts at `byte` (both exact).
    pub fn record(&mut self, byte: u64, frame: u64) {
        let i = self.exact.partition_point(|p| p.1 < frame);
        if self.exact.get(i).is_some_and(|p| p.1 == frame) {
            return;
        }
        // Keep both coordinates increasing; a contradiction means the
        // stream changed under us: believe the newer reading.
        let before_ok = i == 0 || self.exact[i - 1].0 < byte;
        let after_ok = self.exact.get(i).is_none_or(|p| p.0 > byte);
        if before_ok && after_ok {
            self.exact.insert(i, (byte, frame));
        } else if i > 0 {
            self.exact
                .retain(|p| p.1 == 0 || (p.0 < byte) == (p.1 < frame));
            self.record(byte, frame);
        }
    }

    /// The exact frame index starting at `byte`, if one was recorded.
    pub fn exact_at(&self, byte: u64) -> Option<u64> {
        let i = self.exact.partition_point(|p| p.0 < byte);
        self.exact.get(i).filter(|p| p.0 == byte).map(|p| p.1)
    }

    pub fn exact_points(&self) -> usize {
        self.exact.len()
    }

    /// How to reach frame `target`.
    pub fn plan(&self, target: u64) -> Plan {
        let (from_byte, frame) = self.exact_before(target);
        let walk = Plan::Walk {
            byte: from_byte,
            frame,
        };
        if target - frame <= self.walk_frames {
            return walk;
        }
        let t = target as FrameF;
        let (lo, hi) = self.bracket(|a| a.1, t);
        let byte = match hi {
            Some(hi) if hi.1 > lo.1 => {
                lo.0 as f64 + (t - lo.1) * (hi.0 as f64 - lo.0 as f64) / (hi.1 - lo.1)
            }
            _ => lo.0 as f64,
        };
        let byte = byte.max(lo.0 as f64).round() as u64;
        // Close enough in bytes: counting the frames there is cheap, exact.
        if byte.saturating_sub(from_byte) <= WALK_BYTES {
            return walk;
        }
        Plan::Estimate { byte }
    }

    /// The estimated frame index at `byte` (the inverse of `plan`).
    pub fn frame_at(&self, byte: u64) -> FrameF {
        let b = byte as f64;
        let (lo, hi) = self.bracket(|a| a.0 as f64, b);
        match hi {
            Some(hi) if hi.0 > lo.0 => {
                lo.1 + (b - lo.0 as f64) * (hi.1 - lo.1) / (hi.0 as f64 - lo.0 as f64)
            }
            _ => lo.1,
        }
    }

    /// The nearest anchors at or below and above `x` along `key`. Table
    /// anchors count only between the exact ones around `x` (exact points
    /// win where they disagree).
    fn bracket(
        &self,
        key: impl Fn(&(u64, FrameF)) -> f64,
        x: f64,
    ) -> ((u64, FrameF), Option<(u64, FrameF)>) {
        let mut lo = (self.exact[0].0, 0.0);
        let mut hi: Option<(u64, FrameF)> = None;
        let consider = |a: (u64, FrameF), lo: &mut (u64, FrameF), hi: &mut Option<_>| {
            if key(&a) <= x {
                if key(&a) >= key(lo) {
                    *lo = a;
                }
            } else if hi.is_none_or(|h: (u64, FrameF)| key(&a) < key(&h)) {
                *hi = Some(a);
            }
        };
        for a in self
            .exact
            .iter()
            .map(|p| (p.0, p.1 as FrameF))
            .chain(self.end)
        {
            consider(a, &mut lo, &mut hi);
        }
        let (elo, ehi) = (lo, hi);
        for a in &self.table {
            let inside =
                a.0 >= elo.0 && a.1 >= elo.1 && ehi.is_none_or(|h| a.0 <= h.0 && a.1 <= h.1);
            if inside {
                consider(*a, &mut lo, &mut hi);
            }
        }
        (lo, hi)
    }
}

/// Anchors from a Xing TOC: `toc[i]/256` of `bytes` (counted from
/// `tag_byte`, the tag frame) at `i`% of `frames`.
pub fn toc_anchors(toc: &[u8], tag_byte: u64, bytes: u64, frames: u64) -> Vec<(u64, FrameF)> {
    toc.iter()
        .enumerate()
        .map(|(i, &t)| {
            (
                tag_byte + (u64::from(t) * bytes) / 256,
                i as f64 / toc.len() as f64 * frames as f64,
            )
        })
        .collect()
}

/// Anchors from a VBRI table: cumulative segment sizes from `first`.
pub fn vbri_anchors(first: u64, sizes: &[u64], frames_per_entry: u64) -> Vec<(u64, FrameF)> {
    let mut byte = first;
    let mut out = Vec::with_capacity(sizes.len());
    for (i, s) in sizes.iter().enumerate() {
        byte += s;
        out.push((byte, ((i as u64 + 1) * frames_per_entry) as f64));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn walks_near_an_exact_point_and_estimates_far_from_one() {
        // 40 kB frames, so byte distances exceed WALK_BYTES.
        let mut m = SeekMap::new(100, 50);
        m.set_end(100 + 1000 * 40_000, 1000.0);
        assert_eq!(
            m.plan(30),
            Plan::Walk {
                byte: 100,
                frame: 0
            }
        );
        // Constant frame size: the estimate is the linear one.
        assert_eq!(
            m.plan(500),
            Plan::Estimate {
                byte: 100 + 20_000_000
            }
        );
        // Near in bytes, though not in frames: counted.
        let mut small = SeekMap::new(0, 5);
        small.set_end(1000 * 400, 1000.0);
        assert_eq!(small.plan(500), Plan::Walk { byte: 0, frame: 0 });
        m.record(100 + 480 * 40_000, 480);
        assert_eq!(
            m.plan(500),
            Plan::Walk {
                byte: 100 + 19_200_000,
                frame: 480
            }
        );
        assert_eq!(m.exact_at(100 + 19_200_000), Some(480));
    }

    #[test]
    fn a_toc_bends_the_estimate() {
        // First half 10 kB a frame, second half 40 kB.
        let mut m = SeekMap::new(0, 10);
        m.set_end(5_000_000 + 20_000_000, 1000.0);
        m.set_table(vec![(0, 0.0), (5_000_000, 500.0), (25_000_000, 1000.0)]);
        assert_eq!(m.plan(250), Plan::Estimate { byte: 2_500_000 });
        assert_eq!(m.plan(750), Plan::Estimate { byte: 15_000_000 });
        assert!((m.frame_at(15_000_000) - 750.0).abs() < 1e-9);
    }

    proptest! {
        #[test]
        fn estimates_are_monotone_and_invert(
            sizes in proptest::collection::vec(50_000u64..1_500_000, 20..200),
            probe in 0.0f64..1.0,
        ) {
            let mut m = SeekMap::new(0, 5);
            let total: u64 = sizes.iter().sum();
            m.set_end(total, sizes.len() as f64);
            let mut b = 0;
            for (i, s) in sizes.iter().enumerate() {
                if i % 7 == 0 { m.record(b, i as u64); }
                b += s;
            }
            let n = sizes.len() as u64;
            let t = ((n - 1) as f64 * probe) as u64;
            let mut last = 0;
            for f in 0..n {
                let byte = match m.plan(f) {
                    Plan::Walk { byte, .. } | Plan::Estimate { byte } => byte,
                };
                prop_assert!(byte <= total);
                if let Plan::Estimate { byte } = m.plan(f) {
                    prop_assert!(byte >= last);
                    last = byte;
                    prop_assert!((m.frame_at(byte) - f as f64).abs() < 1.0);
                }
            }
            let _ = t;
        }
    }
}
