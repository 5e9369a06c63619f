//! A look-ahead true-peak limiter, so a boosted book never clips.
//!
//! The detector reads each frame's true peak (the samples and three points
//! between each pair, from a 4× windowed-sinc interpolation), and the gain
//! each frame needs to stay under the ceiling. The applied gain is a
//! sliding minimum of that over the look-ahead, smoothed by a moving average
//! of the same length, so it ramps down over the look-ahead and is already
//! low enough when a peak leaves the delay line; it recovers slowly
//! (`RELEASE_SECS`), so speech is not pumped.

use std::collections::VecDeque;

/// Taps of the interpolator: x[m-3..=m+4] for the points between m and m+1.
const TAPS: usize = 8;
/// Frames the detector lags its input (it needs x[m+4]).
const LAG: usize = TAPS / 2;
/// Look-ahead: the gain reaches its target over this long.
const LOOKAHEAD_SECS: f64 = 0.005;
/// Time constant of the gain's recovery after a peak.
const RELEASE_SECS: f64 = 0.150;

/// Interpolation filters for the points 1/4, 2/4, 3/4 of the way from
/// x[m] to x[m+1] (Hann-windowed sinc over x[m-3..=m+4], unity DC gain).
fn phases() -> [[f32; TAPS]; 3] {
    let mut out = [[0f32; TAPS]; 3];
    for (k, taps) in out.iter_mut().enumerate() {
        let frac = (k + 1) as f64 / 4.0;
        let mut sum = 0.0;
        let mut h = [0f64; TAPS];
        for (j, v) in h.iter_mut().enumerate() {
            // Distance from tap x[m-3+j] to the point m + frac.
            let d = frac - (j as f64 - 3.0);
            let sinc = if d.abs() < 1e-9 {
                1.0
            } else {
                (std::f64::consts::PI * d).sin() / (std::f64::consts::PI * d)
            };
            let w = 0.5 + 0.5 * (std::f64::consts::PI * d / (TAPS as f64 / 2.0 + 1.0)).cos();
            *v = sinc * w;
            sum += *v;
        }
        for (t, v) in taps.iter_mut().zip(h) {
            *t = (v / sum) as f32;
        }
    }
    out
}

pub struct Limiter {
    channels: usize,
    ceiling: f32,
    look: usize,
    release: f32,
    filters: [[f32; TAPS]; 3],
    /// The last `TAPS` input frames, per channel, written twice (at `i` and
    /// `i + TAPS`) so the window is always one contiguous slice.
    taps: Vec<[f32; 2 * TAPS]>,
    tap_at: usize,
    /// The delay line: a ring of `latency()` frames.
    delay: Vec<f32>,
    delay_at: usize,
    /// Peak of the interval ending at the previous detector frame.
    prev_interval: f32,
    /// Monotonic deque for the sliding minimum: (frame, needed gain).
    mins: VecDeque<(u64, f32)>,
    /// The last `look` sliding minima (a ring), and their sum.
    box_vals: Vec<f32>,
    box_at: usize,
    box_sum: f64,
    env: f32,
    frame: u64,
}

impl Limiter {
    /// `ceiling` is linear (0.891 for −1 dBTP).
    pub fn new(rate: u32, channels: usize, ceiling: f32) -> Self {
        let channels = channels.max(1);
        let rate = rate.max(8_000) as f64;
        let look = ((rate * LOOKAHEAD_SECS).round() as usize).max(1);
        let release = 1.0 - (-1.0 / (RELEASE_SECS * rate)).exp() as f32;
        Self {
            channels,
            ceiling,
            look,
            release,
            filters: phases(),
            taps: vec![[0.0; 2 * TAPS]; channels],
            tap_at: 0,
            // Starts full of silence: output lags input by the latency.
            delay: vec![0.0; (look + LAG - 1) * channels],
            delay_at: 0,
            prev_interval: 0.0,
            mins: VecDeque::new(),
            box_vals: vec![1.0; look],
            box_at: 0,
            box_sum: look as f64,
            env: 1.0,
            frame: 0,
        }
    }

    /// Frames between a frame going in and coming out.
    pub fn latency(&self) -> usize {
        self.look - 1 + LAG
    }

    /// The peak (absolute) of the stretch from x[m] to x[m+1], where the
    /// detector window holds x[m-3..=m+4].
    fn interval_peak(&self) -> f32 {
        let mut peak = 0f32;
        for ring in &self.taps {
            let x = &ring[self.tap_at..self.tap_at + TAPS];
            peak = peak.max(x[3].abs()).max(x[4].abs());
            for f in &self.filters {
                let y: f32 = f.iter().zip(x).map(|(h, v)| h * v).sum();
                peak = peak.max(y.abs());
            }
        }
        peak
    }

    /// Limit `samples` (interleaved) in place: each frame is replaced by
    /// the limited frame `latency()` frames earlier.
    pub fn process(&mut self, samples: &mut [f32]) {
        let ch = self.channels;
        let delay_frames = self.delay.len() / ch;
        for frame in samples.chunks_exact_mut(ch) {
            // Oldest tap out, this frame in (at both copies).
            for (ring, &v) in self.taps.iter_mut().zip(frame.iter()) {
                ring[self.tap_at] = v;
                ring[self.tap_at + TAPS] = v;
            }
            self.tap_at = (self.tap_at + 1) % TAPS;
            // Detector frame m = n - LAG: the peak around it, both sides.
            let interval = self.interval_peak();
            let peak = interval.max(self.prev_interval);
            self.prev_interval = interval;
            let need = if peak > self.ceiling {
                self.ceiling / peak
            } else {
                1.0
            };
            let n = self.frame;
            self.frame += 1;
            while self.mins.back().is_some_and(|&(_, v)| v >= need) {
                self.mins.pop_back();
            }
            self.mins.push_back((n, need));
            while self
                .mins
                .front()
                .is_some_and(|&(i, _)| i + (self.look as u64) <= n)
            {
                self.mins.pop_front();
            }
            let min = self.mins.front().map_or(1.0, |&(_, v)| v);
            let old = std::mem::replace(&mut self.box_vals[self.box_at], min);
            self.box_at = (self.box_at + 1) % self.look;
            self.box_sum += min as f64 - old as f64;
            let smooth = (self.box_sum / self.look as f64).clamp(0.0, 1.0) as f32;
            self.env = smooth.min(self.env + (1.0 - self.env) * self.release);
            // Swap this frame with the oldest in the delay line.
            let at = self.delay_at * ch;
            for (s, d) in frame.iter_mut().zip(&mut self.delay[at..at + ch]) {
                let out = *d * self.env;
                *d = *s;
                *s = out;
            }
            self.delay_at = (self.delay_at + 1) % delay_frames;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interpolation_filters_have_unity_dc_gain_and_pass_the_midpoint_of_a_ramp() {
        for f in phases() {
            assert!((f.iter().sum::<f32>() - 1.0).abs() < 1e-5);
        }
        // A linear ramp is interpolated linearly (symmetric filter at 1/2).
        let mid = phases()[1];
        let y: f32 = mid.iter().enumerate().map(|(j, h)| h * j as f32).sum();
        assert!((y - 3.5).abs() < 1e-3, "{y}");
    }

    #[test]
    fn a_quiet_signal_passes_unchanged_after_the_latency() {
        let mut l = Limiter::new(48_000, 1, 0.891);
        let x: Vec<f32> = (0..4800).map(|i| 0.5 * (i as f32 * 0.05).sin()).collect();
        let mut y = x.clone();
        l.process(&mut y);
        let d = l.latency();
        for i in d..x.len() {
            assert!((y[i] - x[i - d]).abs() < 1e-6, "frame {i}");
        }
    }

    #[test]
    fn a_loud_tone_never_exceeds_the_ceiling() {
        let mut l = Limiter::new(48_000, 2, 0.891);
        let mut y: Vec<f32> = (0..12_000)
            .flat_map(|i| {
                let v = 3.0 * (i as f32 * 0.3).sin();
                [v, -v]
            })
            .collect();
        l.process(&mut y);
        let peak = y.iter().fold(0f32, |m, v| m.max(v.abs()));
        assert!(peak <= 0.8911, "{peak}");
        assert!(peak > 0.8, "limited far more than needed: {peak}");
    }
}
