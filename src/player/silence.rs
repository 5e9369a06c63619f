//! Skip silence: shortens every silence longer than `min_silence` to
//! `gap`, between decode and the stretcher (the pipeline runs decoded audio
//! through a [`SilenceTrimmer`] per chapter).
//!
//! Audio is judged in 10 ms windows: a window is silent when its RMS (over
//! all channels) is under the threshold. A long silence keeps its first and
//! last `gap / 2`, so speech never starts or ends abruptly; the cut lies in
//! silence, where the jump cannot be heard. Every span of audio it hands
//! on keeps its media position, so positions, sync and chapters stay in
//! media time; a span after a cut says how much was cut before it.

/// What counts as a long silence, and what it is shortened to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SilenceRule {
    /// Windows quieter than this (dBFS, RMS) are silent.
    pub threshold_db: f32,
    /// Silences longer than this (seconds) are shortened...
    pub min_silence: f64,
    /// ...to this (seconds).
    pub gap: f64,
}

impl SilenceRule {
    /// From `config.toml`'s `[sound]` units (dBFS and milliseconds).
    pub fn from_ms(threshold_db: f32, min_ms: u32, gap_ms: u32) -> Self {
        Self {
            threshold_db,
            min_silence: f64::from(min_ms) / 1000.0,
            gap: f64::from(gap_ms) / 1000.0,
        }
    }
}

impl Default for SilenceRule {
    fn default() -> Self {
        Self {
            threshold_db: -45.0,
            min_silence: 0.6,
            gap: 0.25,
        }
    }
}

/// Audio handed on: `pos` is the media second of its first frame;
/// `skipped_before` the media seconds cut just before it.
#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    pub pos: f64,
    pub samples: Vec<f32>,
    pub skipped_before: f64,
}

pub struct SilenceTrimmer {
    rate: u32,
    channels: usize,
    /// Mean square (per sample) under which a window is silent.
    threshold_ms: f32,
    window: usize,
    min_frames: usize,
    half_gap: usize,
    /// Media second of frame 0 of the current run of contiguous input.
    origin: f64,
    /// Input frames seen since `origin`.
    seen: u64,
    /// Frames not yet judged (less than a window), from frame `seen - len`.
    pending: Vec<f32>,
    /// The silence being held: its first frame, and its frames (all of
    /// them while short; once long, only the last `half_gap`).
    run_start: u64,
    run: Vec<f32>,
    run_len: usize,
    run_long: bool,
    out: Vec<Span>,
    /// Frames cut since the last span handed on.
    cut: u64,
}

impl SilenceTrimmer {
    pub fn new(rate: u32, channels: usize, rule: SilenceRule) -> Self {
        let rate = rate.max(1);
        let amp = 10f32.powf(rule.threshold_db / 20.0);
        let frames = |s: f64| (s.max(0.0) * rate as f64).round() as usize;
        Self {
            rate,
            channels: channels.max(1),
            threshold_ms: amp * amp,
            window: (rate as usize / 100).max(1),
            min_frames: frames(rule.min_silence),
            half_gap: frames(rule.gap) / 2,
            origin: 0.0,
            seen: 0,
            pending: Vec::new(),
            run_start: 0,
            run: Vec::new(),
            run_len: 0,
            run_long: false,
            out: Vec::new(),
            cut: 0,
        }
    }

    pub fn format(&self) -> (u32, usize) {
        (self.rate, self.channels)
    }

    pub fn fits(&self, rate: u32, channels: usize) -> bool {
        self.rate == rate.max(1) && self.channels == channels.max(1)
    }

    fn pos_of(&self, frame: u64) -> f64 {
        self.origin + frame as f64 / self.rate as f64
    }

    /// Feed decoded audio at media second `pos`; returns what can be
    /// handed on now (silence is held until it is known to be short or long).
    pub fn push(&mut self, pos: f64, samples: &[f32]) -> Vec<Span> {
        let held = (self.pending.len() / self.channels) as u64;
        let expected = self.pos_of(self.seen + held);
        if self.seen == 0 && self.pending.is_empty() && self.run_len == 0 {
            self.origin = pos;
        } else if (pos - expected).abs() > 1.5 / self.rate as f64 {
            // Not contiguous (the decoder skipped): close what is held and
            // count frames afresh from here.
            self.flush_held();
            self.origin = pos;
            self.seen = 0;
        }
        let ch = self.channels;
        let mut rest = samples;
        while !rest.is_empty() {
            let want = self.window * ch - self.pending.len();
            let n = want.min(rest.len());
            self.pending.extend_from_slice(&rest[..n]);
            rest = &rest[n..];
            if self.pending.len() == self.window * ch {
                let w = std::mem::take(&mut self.pending);
                self.judge(w);
            }
        }
        std::mem::take(&mut self.out)
    }

    /// The end of the chapter: hand on everything held.
    pub fn finish(&mut self) -> Vec<Span> {
        self.flush_held();
        std::mem::take(&mut self.out)
    }

    fn flush_held(&mut self) {
        if !self.pending.is_empty() {
            let w = std::mem::take(&mut self.pending);
            self.judge(w);
        }
        self.close_run();
    }

    fn judge(&mut self, w: Vec<f32>) {
        let frames = w.len() / self.channels;
        let start = self.seen;
        self.seen += frames as u64;
        let ms = w.iter().map(|s| s * s).sum::<f32>() / w.len().max(1) as f32;
        if ms >= self.threshold_ms {
            self.close_run();
            self.emit(start, &w);
            return;
        }
        if self.run_len == 0 {
            self.run_start = start;
        }
        self.run_len += frames;
        self.run.extend_from_slice(&w);
        if !self.run_long && self.run_len > self.min_frames {
            // Long: hand on its first half gap, keep only its tail.
            self.run_long = true;
            let head = self.half_gap * self.channels;
            let run = std::mem::take(&mut self.run);
            let (first, _) = run.split_at(head.min(run.len()));
            self.emit(self.run_start, first);
            self.run = run;
        }
        if self.run_long {
            let keep = self.half_gap * self.channels;
            if self.run.len() > keep {
                let drop = self.run.len() - keep;
                self.run.drain(..drop);
            }
        }
    }

    fn close_run(&mut self) {
        if self.run_len == 0 {
            return;
        }
        let run = std::mem::take(&mut self.run);
        let frames = (run.len() / self.channels) as u64;
        let end = self.run_start + self.run_len as u64;
        if self.run_long {
            let tail_start = end - frames;
            self.cut += tail_start - (self.run_start + self.half_gap as u64);
            self.emit(tail_start, &run);
        } else {
            self.emit(self.run_start, &run);
        }
        self.run_len = 0;
        self.run_long = false;
    }

    /// Hand on `samples` starting at input frame `frame`, joined to the
    /// previous span when contiguous.
    fn emit(&mut self, frame: u64, samples: &[f32]) {
        if samples.is_empty() {
            return;
        }
        let pos = self.pos_of(frame);
        let rate = self.rate as f64;
        let ch = self.channels;
        if self.cut == 0
            && let Some(last) = self.out.last_mut()
            && (last.pos + (last.samples.len() / ch) as f64 / rate - pos).abs() < 0.5 / rate
        {
            last.samples.extend_from_slice(samples);
            return;
        }
        self.out.push(Span {
            pos,
            samples: samples.to_vec(),
            skipped_before: self.cut as f64 / rate,
        });
        self.cut = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RATE: u32 = 8_000;

    fn tone(secs: f64) -> Vec<f32> {
        (0..(secs * RATE as f64) as usize)
            .map(|i| 0.3 * (i as f32 * 0.2).sin())
            .collect()
    }

    fn silence(secs: f64) -> Vec<f32> {
        vec![0.001; (secs * RATE as f64) as usize]
    }

    /// Feeds `x` in decoder-sized blocks and returns the spans.
    fn trim(x: &[f32]) -> Vec<Span> {
        let mut t = SilenceTrimmer::new(RATE, 1, SilenceRule::default());
        let mut out = Vec::new();
        for (i, b) in x.chunks(1152).enumerate() {
            out.extend(t.push(i as f64 * 1152.0 / RATE as f64, b));
        }
        out.extend(t.finish());
        out
    }

    fn concat(spans: &[Span]) -> Vec<f32> {
        spans
            .iter()
            .flat_map(|s| s.samples.iter().copied())
            .collect()
    }

    fn total(spans: &[Span]) -> f64 {
        spans.iter().map(|s| s.samples.len() as f64).sum::<f64>() / RATE as f64
    }

    #[test]
    fn a_long_silence_is_shortened_to_the_gap_and_positions_stay_in_media_time() {
        let x = [tone(1.0), silence(2.0), tone(1.0)].concat();
        let spans = trim(&x);
        assert!((total(&spans) - 2.25).abs() < 0.011, "{}", total(&spans));
        let cuts: Vec<&Span> = spans.iter().filter(|s| s.skipped_before > 0.0).collect();
        assert_eq!(cuts.len(), 1, "one cut");
        let after = cuts[0];
        assert!((after.skipped_before - 1.75).abs() < 0.011);
        // The span after the cut starts where its frames are in the input.
        let at = (after.pos * RATE as f64).round() as usize;
        assert_eq!(&x[at..at + after.samples.len()], &after.samples[..]);
        assert!((after.pos - (3.0 - 0.125)).abs() < 0.011, "{}", after.pos);
    }

    #[test]
    fn a_silence_shorter_than_the_threshold_is_kept_whole() {
        let x = [tone(1.0), silence(0.55), tone(1.0)].concat();
        let spans = trim(&x);
        assert!(spans.iter().all(|s| s.skipped_before == 0.0));
        assert_eq!(concat(&spans), x);
        assert_eq!(spans[0].pos, 0.0);
    }

    #[test]
    fn silence_at_the_end_of_a_chapter_is_shortened_too() {
        let x = [tone(0.5), silence(3.0)].concat();
        let spans = trim(&x);
        assert!((total(&spans) - 0.75).abs() < 0.011, "{}", total(&spans));
    }
}
