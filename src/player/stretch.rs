//! Pitch-preserving time-stretch behind a trait, so the algorithm can be
//! swapped. [`FastWsola`] (ours): the similarity search runs coarse-to-fine
//! on a decimated mono signal, ~50× faster than the `wsola` crate's
//! brute-force search. See docs/benchmarks.md for the measurements.

/// A streaming time-stretcher over interleaved `f32` frames.
pub trait Stretcher: Send {
    /// Media seconds per output second; applies to the next output.
    fn set_speed(&mut self, speed: f32);
    /// Feed input frames (interleaved, whole frames).
    fn push(&mut self, samples: &[f32]);
    /// Append up to `max_frames` output frames to `out`; 0 means it needs input.
    fn pull(&mut self, out: &mut Vec<f32>, max_frames: usize) -> usize;
    /// Input frames fed but not yet turned into output.
    fn buffered_input(&self) -> usize;
    /// End of input: append what is left to `out` and start afresh.
    fn finish(&mut self, out: &mut Vec<f32>);
    /// Drop all state (after a seek).
    fn reset(&mut self);
}

/// WSOLA with a coarse-to-fine similarity search.
///
/// Output is laid down in hops of `hop` frames with a 50% Hann overlap; each
/// new frame is taken from the input near its ideal position (advancing
/// `hop * speed` per hop) where its waveform best continues the previous
/// frame. The search first scans every `decim`-th candidate on every
/// `decim`-th sample of a mono mix, then refines around the best one.
pub struct FastWsola {
    channels: usize,
    hop: usize,
    search: usize,
    decim: usize,
    window: Vec<f32>,
    speed: f64,
    /// Interleaved input; frame `origin` is `input[0..channels]`.
    input: Vec<f32>,
    /// Mono mix of `input`.
    mono: Vec<f32>,
    origin: usize,
    /// Absolute input frame where the next output frame ideally starts.
    ideal: f64,
    /// Absolute input frame of the previous output frame.
    prev_src: usize,
    primed: bool,
    /// Second (falling) half of the previous windowed frame.
    accum: Vec<f32>,
    /// Output produced but not handed out yet.
    pending: Vec<f32>,
    pending_off: usize,
}

impl FastWsola {
    pub fn new(rate: u32, channels: usize) -> Self {
        let rate = rate.max(8_000) as f64;
        let hop = (rate * 0.012).round() as usize;
        let search = (rate * 0.010).round() as usize;
        let decim = ((rate / 5_500.0).round() as usize).max(1);
        let n = 2 * hop;
        let window = (0..n)
            .map(|i| {
                let x = std::f32::consts::PI * i as f32 / n as f32;
                x.sin() * x.sin()
            })
            .collect();
        let channels = channels.max(1);
        Self {
            channels,
            hop,
            search,
            decim,
            window,
            speed: 1.0,
            input: Vec::new(),
            mono: Vec::new(),
            origin: 0,
            ideal: 0.0,
            prev_src: 0,
            primed: false,
            accum: vec![0.0; hop * channels],
            pending: Vec::new(),
            pending_off: 0,
        }
    }

    fn avail_end(&self) -> usize {
        self.origin + self.mono.len()
    }

    /// Normalised correlation of the target segment with a candidate, on
    /// every `step`-th sample.
    fn score(&self, target: usize, cand: usize, step: usize) -> f32 {
        let t = &self.mono[target - self.origin..target - self.origin + self.hop];
        let c = &self.mono[cand - self.origin..cand - self.origin + self.hop];
        let (mut dot, mut energy) = (0.0f32, 0.0f32);
        let mut i = 0;
        while i < self.hop {
            dot += t[i] * c[i];
            energy += c[i] * c[i];
            i += step;
        }
        dot / (energy.sqrt() + 1e-9)
    }

    /// Produce one hop of output into `pending`. False when more input is needed.
    fn step(&mut self, draining: bool) -> bool {
        let (hop, ch) = (self.hop, self.channels);
        let frame = 2 * hop;
        let end = self.avail_end();
        if !self.primed {
            if self.origin + frame > end {
                return false;
            }
            // First hop unwindowed, so a stream starts without a fade-in.
            let s = (self.ideal.round() as usize).max(self.origin);
            let base = (s - self.origin) * ch;
            self.pending
                .extend_from_slice(&self.input[base..base + hop * ch]);
            for i in 0..hop * ch {
                self.accum[i] = self.input[base + hop * ch + i] * self.window[hop + i / ch];
            }
            self.prev_src = s;
            self.ideal = s as f64 + hop as f64 * self.speed;
            self.primed = true;
            return true;
        }
        let target = self.prev_src + hop;
        let base = self.ideal.round() as usize;
        let lo = base.saturating_sub(self.search).max(self.origin);
        let mut hi = base + self.search;
        if hi + frame > end || target + hop > end {
            if !draining || target + hop > end || lo + frame > end {
                return false;
            }
            hi = end - frame;
        }
        // Coarse pass, then refine around the best coarse candidate.
        let d = self.decim;
        let (mut best, mut best_score) = (lo, f32::NEG_INFINITY);
        let mut c = lo;
        while c <= hi {
            let sc = self.score(target, c, d);
            if sc > best_score {
                (best, best_score) = (c, sc);
            }
            c += d;
        }
        let (rlo, rhi) = (best.saturating_sub(d).max(lo), (best + d).min(hi));
        best_score = f32::NEG_INFINITY;
        for c in rlo..=rhi {
            let sc = self.score(target, c, 1);
            if sc > best_score {
                (best, best_score) = (c, sc);
            }
        }
        let b = (best - self.origin) * ch;
        for i in 0..hop * ch {
            let w = i / ch;
            self.pending
                .push(self.accum[i] + self.input[b + i] * self.window[w]);
        }
        for i in 0..hop * ch {
            self.accum[i] = self.input[b + hop * ch + i] * self.window[hop + i / ch];
        }
        self.prev_src = best;
        self.ideal += hop as f64 * self.speed;
        self.compact();
        true
    }

    /// Drop input no future step can reach.
    fn compact(&mut self) {
        let keep_from = self
            .prev_src
            .min((self.ideal as usize).saturating_sub(self.search + 1));
        if keep_from > self.origin + 8 * self.hop {
            let n = keep_from - self.origin;
            self.input.drain(..n * self.channels);
            self.mono.drain(..n);
            self.origin = keep_from;
        }
    }

    fn take_pending(&mut self, out: &mut Vec<f32>, max_frames: usize) -> usize {
        let avail = (self.pending.len() - self.pending_off) / self.channels;
        let n = avail.min(max_frames);
        let s = self.pending_off;
        out.extend_from_slice(&self.pending[s..s + n * self.channels]);
        self.pending_off += n * self.channels;
        if self.pending_off == self.pending.len() {
            self.pending.clear();
            self.pending_off = 0;
        }
        n
    }
}

impl Stretcher for FastWsola {
    fn set_speed(&mut self, speed: f32) {
        if speed.is_finite() && speed > 0.0 {
            self.speed = speed.clamp(0.25, 4.0) as f64;
        }
    }

    fn push(&mut self, samples: &[f32]) {
        let ch = self.channels;
        self.input.extend_from_slice(samples);
        let scale = 1.0 / ch as f32;
        self.mono.extend(
            samples
                .chunks_exact(ch)
                .map(|f| f.iter().sum::<f32>() * scale),
        );
    }

    fn pull(&mut self, out: &mut Vec<f32>, max_frames: usize) -> usize {
        let mut done = self.take_pending(out, max_frames);
        while done < max_frames && self.step(false) {
            done += self.take_pending(out, max_frames - done);
        }
        done
    }

    fn buffered_input(&self) -> usize {
        self.avail_end().saturating_sub(self.ideal as usize)
    }

    fn finish(&mut self, out: &mut Vec<f32>) {
        while self.step(true) {}
        let rest = (self.pending.len() - self.pending_off) / self.channels;
        self.take_pending(out, rest);
        if self.primed {
            out.extend_from_slice(&self.accum);
        }
        self.reset();
    }

    fn reset(&mut self) {
        self.input.clear();
        self.mono.clear();
        self.origin = 0;
        self.ideal = 0.0;
        self.prev_src = 0;
        self.primed = false;
        self.accum.fill(0.0);
        self.pending.clear();
        self.pending_off = 0;
    }
}
