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
    /// Scratch for the coarse search: the target and the candidates' span
    /// on every `decim`-th sample.
    coarse_target: Vec<f32>,
    coarse_span: Vec<f32>,
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
            coarse_target: Vec::new(),
            coarse_span: Vec::new(),
        }
    }

    fn avail_end(&self) -> usize {
        self.origin + self.mono.len()
    }

    /// Pick the candidate start in `lo..=hi` whose waveform best continues
    /// the target segment: every `decim`-th candidate on every `decim`-th
    /// sample, then every candidate around the best one on every sample.
    fn best_candidate(&mut self, target: usize, lo: usize, hi: usize) -> usize {
        let (hop, d, o) = (self.hop, self.decim, self.origin);
        // Coarse pass on gathered (contiguous) decimated copies, so the
        // correlation loops run over slices and vectorise.
        let taps = hop.div_ceil(d);
        let cands = (hi - lo) / d + 1;
        self.coarse_target.clear();
        self.coarse_target
            .extend((0..taps).map(|i| self.mono[target - o + i * d]));
        self.coarse_span.clear();
        self.coarse_span
            .extend((0..cands + taps - 1).map(|k| self.mono[lo - o + k * d]));
        let j = best_match(&self.coarse_target, &self.coarse_span);
        let best = lo + j * d;
        let (rlo, rhi) = (best.saturating_sub(d).max(lo), (best + d).min(hi));
        let t = &self.mono[target - o..target - o + hop];
        rlo + best_match(t, &self.mono[rlo - o..rhi - o + hop])
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
        let best = self.best_candidate(target, lo, hi);
        let b = (best - self.origin) * ch;
        let start = self.pending.len();
        self.pending.resize(start + hop * ch, 0.0);
        // Frame by frame (no division per sample); the same sums as before.
        let rising = &self.window[..hop];
        let falling = &self.window[hop..];
        let src = &self.input[b..b + frame * ch];
        let (head, tail) = src.split_at(hop * ch);
        for (((o, a), x), w) in self.pending[start..]
            .chunks_exact_mut(ch)
            .zip(self.accum.chunks_exact(ch))
            .zip(head.chunks_exact(ch))
            .zip(rising)
        {
            for k in 0..ch {
                o[k] = a[k] + x[k] * w;
            }
        }
        for ((a, x), w) in self
            .accum
            .chunks_exact_mut(ch)
            .zip(tail.chunks_exact(ch))
            .zip(falling)
        {
            for k in 0..ch {
                a[k] = x[k] * w;
            }
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

/// The offset in `span` where a window of `t.len()` samples correlates
/// best with `t`, normalised by the window's energy (`t·c / |c|`); the
/// first of equal scores.
fn best_match(t: &[f32], span: &[f32]) -> usize {
    let n = t.len();
    // The window's energy slides along in f64 (add the new sample's square,
    // drop the old one's) instead of being summed again per candidate.
    let mut energy: f64 = span[..n].iter().map(|&x| (x * x) as f64).sum();
    let (mut best, mut best_score) = (0, f32::NEG_INFINITY);
    for c in 0..=span.len() - n {
        if c > 0 {
            let (new, old) = (span[c + n - 1], span[c - 1]);
            energy += (new * new) as f64 - (old * old) as f64;
        }
        let score = dot(t, &span[c..c + n]) / (energy.max(0.0).sqrt() as f32 + 1e-9);
        if score > best_score {
            (best, best_score) = (c, score);
        }
    }
    best
}

/// `a·b` over `a.len()` samples, in eight running sums so it vectorises.
fn dot(a: &[f32], b: &[f32]) -> f32 {
    const LANES: usize = 8;
    let mut acc = [0.0f32; LANES];
    let (ac, ar) = a.as_chunks::<LANES>();
    let (bc, br) = b[..a.len()].as_chunks::<LANES>();
    for (x, y) in ac.iter().zip(bc) {
        for k in 0..LANES {
            acc[k] += x[k] * y[k];
        }
    }
    let tail: f32 = ar.iter().zip(br).map(|(x, y)| x * y).sum();
    acc.iter().sum::<f32>() + tail
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic noisy signal with a few partials.
    fn speechy(n: usize, seed: u32) -> Vec<f32> {
        let mut x = seed;
        (0..n)
            .map(|i| {
                x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                let noise = (x >> 8) as f32 / (1 << 24) as f32 - 0.5;
                let t = i as f32 / 44_100.0;
                (t * 2.0 * std::f32::consts::PI * 180.0).sin() * 0.5
                    + (t * 2.0 * std::f32::consts::PI * 530.0).sin() * 0.2
                    + noise * 0.1
            })
            .collect()
    }

    #[test]
    fn best_match_finds_the_offset_a_plain_scalar_search_finds() {
        for seed in 0..20 {
            let span = speechy(1_500, seed);
            let t: Vec<f32> = speechy(529, seed + 100);
            let naive = (0..=span.len() - t.len())
                .map(|c| {
                    let w = &span[c..c + t.len()];
                    let dot: f64 = t.iter().zip(w).map(|(a, b)| (a * b) as f64).sum();
                    let e: f64 = w.iter().map(|b| (b * b) as f64).sum();
                    (c, dot / (e.sqrt() + 1e-9))
                })
                .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)))
                .unwrap()
                .0;
            assert_eq!(best_match(&t, &span), naive, "seed {seed}");
        }
    }

    #[test]
    fn best_match_finds_a_copy_of_the_target_inside_the_span() {
        let span = speechy(2_000, 7);
        for at in [0, 1, 333, 1_471] {
            assert_eq!(best_match(&span[at..at + 529], &span), at);
        }
    }

    #[test]
    fn output_lasts_input_over_speed_at_each_speed() {
        let input: Vec<f32> = speechy(44_100 * 4, 3)
            .into_iter()
            .flat_map(|s| [s, -s])
            .collect();
        for speed in [0.5f32, 1.5, 2.0, 3.0] {
            let mut st = FastWsola::new(44_100, 2);
            st.set_speed(speed);
            let mut out = Vec::new();
            for chunk in input.chunks(2_048) {
                st.push(chunk);
                while st.pull(&mut out, 4_096) > 0 {}
            }
            st.finish(&mut out);
            let want = input.len() as f64 / speed as f64;
            let got = out.len() as f64;
            // Within two hops (the tail) of input / speed.
            assert!(
                (got - want).abs() < 4.0 * 529.0 * 2.0,
                "{speed}: {got} vs {want}"
            );
            assert!(out.iter().all(|s| s.is_finite()));
        }
    }
}
