//! A book's loudness at the output: the listener's boost (0–12 dB), the
//! optional normalisation gain, and the true-peak limiter after both.
//!
//! Normalisation measures the book as it plays with an EBU R128 meter
//! (`ebur128`): the gated loudness of a sliding window (`WINDOW_MS`), read
//! every 100 ms of audio. The gain follows that measurement slowly
//! (`SLOW_DB_PER_SEC`) and holds through silence, so pauses and loud
//! moments do not pump. The listener's own changes ramp fast
//! (`FAST_DB_PER_SEC`: 12 dB in under 50 ms), never in one step.
//!
//! With neutral settings the audio passes untouched (no delay, no work).
//! Turning the processing on while playing crossfades into the limiter's
//! delay line, which is primed with the audio just played, so no gap or
//! click marks the switch; once the settings are neutral again and the
//! gains have ramped back to 0 dB, it crossfades back out (skipping the
//! delay's 5 ms) and the audio passes untouched again.

use super::limiter::Limiter;
use crate::domain::SoundSettings;
use ebur128::{EbuR128, Mode};
use std::collections::VecDeque;

/// −1 dBTP: the limiter's ceiling.
const CEILING: f32 = 0.891_250_9;
/// The normalisation's measurement window.
const WINDOW_MS: u32 = 20_000;
/// The listener's changes ramp at this rate.
const FAST_DB_PER_SEC: f32 = 250.0;
/// Normalisation follows its measurement no faster than this.
const SLOW_DB_PER_SEC: f32 = 1.5;
/// Normalisation never changes the level by more than this.
const NORM_MIN_DB: f32 = -12.0;
const NORM_MAX_DB: f32 = 18.0;
/// Quieter than this (momentary) is silence: the gain holds.
const SILENCE_LUFS: f64 = -60.0;

pub struct Loudness {
    rate: u32,
    channels: usize,
    target_lufs: f32,
    settings: SoundSettings,
    /// Gains applied now (dB); they move towards their targets.
    boost_db: f32,
    norm_db: f32,
    /// What the measurement asks for.
    norm_want_db: f32,
    meter: Option<EbuR128>,
    /// Frames until the next reading of the meter.
    until_reading: usize,
    limiter: Option<Limiter>,
    /// Frames left of the crossfade into (or out of) the limiter.
    fade_left: usize,
    fade_len: usize,
    fading_out: bool,
    /// The last frames played while bypassed (primes the limiter).
    recent: VecDeque<f32>,
    /// Gain (linear) of `applied_db`, cached while the gain holds.
    applied_db: f32,
    applied_lin: f32,
}

fn db_to_lin(db: f32) -> f32 {
    10f32.powf(db / 20.0)
}

/// Move `cur` towards `want` by at most `step`.
fn approach(cur: f32, want: f32, step: f32) -> f32 {
    if (want - cur).abs() <= step {
        want
    } else {
        cur + step.copysign(want - cur)
    }
}

impl Loudness {
    pub fn new(rate: u32, channels: usize, target_lufs: f32, settings: SoundSettings) -> Self {
        let settings = settings.clamped();
        let mut l = Self {
            rate: rate.max(8_000),
            channels: channels.max(1),
            target_lufs,
            settings,
            // A new stream starts at the asked boost (nothing to ramp from).
            boost_db: settings.boost_db,
            norm_db: 0.0,
            norm_want_db: 0.0,
            meter: None,
            until_reading: 0,
            limiter: None,
            fade_left: 0,
            fade_len: 0,
            fading_out: false,
            recent: VecDeque::new(),
            applied_db: 0.0,
            applied_lin: 1.0,
        };
        if l.wants_processing() {
            l.limiter = Some(Limiter::new(l.rate, l.channels, CEILING));
        }
        l
    }

    /// Same format: the state carries over to the next chunk.
    pub fn fits(&self, rate: u32, channels: usize) -> bool {
        self.rate == rate.max(8_000) && self.channels == channels.max(1)
    }

    pub fn set(&mut self, settings: SoundSettings) {
        let settings = settings.clamped();
        if settings.normalize && !self.settings.normalize {
            self.norm_want_db = self.norm_db;
        }
        self.settings = settings;
    }

    /// The normalisation gain applied now, when normalising.
    pub fn norm_gain_db(&self) -> Option<f32> {
        self.settings.normalize.then_some(self.norm_db)
    }

    fn wants_processing(&self) -> bool {
        self.settings.boost_db != 0.0
            || self.settings.normalize
            || self.boost_db != 0.0
            || self.norm_db != 0.0
    }

    /// A seek or a new chapter: the output jumps, so the limiter's delay
    /// line (and the choice to bypass it) starts afresh. The measurement
    /// and gains carry on.
    pub fn restart(&mut self) {
        self.fade_left = 0;
        self.fading_out = false;
        self.recent.clear();
        self.limiter = self
            .wants_processing()
            .then(|| Limiter::new(self.rate, self.channels, CEILING));
    }

    /// Process interleaved output in place (same number of frames).
    pub fn process(&mut self, samples: &mut [f32]) {
        if self.limiter.is_none() {
            if !self.wants_processing() {
                self.remember(samples);
                return;
            }
            self.start_limiter();
        } else if self.fade_left == 0 && !self.wants_processing() {
            // Neutral again, gains at 0 dB: fade back to the direct signal.
            self.fade_len = self.limiter.as_ref().map_or(1, |l| l.latency().max(1));
            self.fade_left = self.fade_len;
            self.fading_out = true;
        }
        if self.settings.normalize {
            self.measure(samples);
        } else {
            self.meter = None;
            self.norm_want_db = 0.0;
        }
        self.apply_gain(samples);
        let Some(lim) = self.limiter.as_mut() else {
            return;
        };
        if self.fade_left == 0 {
            lim.process(samples);
            return;
        }
        // Crossfade from the direct signal into the limiter's output.
        let direct = samples.to_vec();
        lim.process(samples);
        let ch = self.channels;
        for (out, dir) in samples.chunks_exact_mut(ch).zip(direct.chunks_exact(ch)) {
            if self.fade_left == 0 {
                if self.fading_out {
                    // Faded out: the rest of the chunk is the direct signal.
                    out.copy_from_slice(dir);
                    continue;
                }
                break;
            }
            let mut a = 1.0 - self.fade_left as f32 / self.fade_len as f32;
            if self.fading_out {
                a = 1.0 - a;
            }
            for (o, d) in out.iter_mut().zip(dir) {
                *o = *o * a + *d * (1.0 - a);
            }
            self.fade_left -= 1;
        }
        if self.fading_out && self.fade_left == 0 {
            self.fading_out = false;
            self.limiter = None;
            self.remember(samples);
        }
    }

    fn remember(&mut self, samples: &[f32]) {
        let keep = (self.rate as usize / 50) * self.channels;
        self.recent.extend(samples.iter().copied());
        if self.recent.len() > keep {
            let drop = self.recent.len() - keep;
            self.recent.drain(..drop);
        }
    }

    fn start_limiter(&mut self) {
        let mut lim = Limiter::new(self.rate, self.channels, CEILING);
        if !self.recent.is_empty() {
            // Prime the delay line with what was just played, then fade
            // from the direct signal into it over the delay's length.
            let mut primer: Vec<f32> = self.recent.drain(..).collect();
            lim.process(&mut primer);
            self.fade_len = lim.latency().max(1);
            self.fade_left = self.fade_len;
        }
        self.limiter = Some(lim);
    }

    fn measure(&mut self, samples: &[f32]) {
        if self.meter.is_none() {
            let mut m = EbuR128::new(self.channels as u32, self.rate, Mode::I).ok();
            if let Some(m) = m.as_mut()
                && m.set_max_history(WINDOW_MS).is_err()
            {
                tracing::warn!("the loudness meter refused its window");
            }
            self.meter = m;
            self.until_reading = self.rate as usize / 10;
        }
        let Some(m) = self.meter.as_mut() else {
            return;
        };
        let frames = samples.len() / self.channels;
        let step = self.rate as usize / 10;
        let mut off = 0;
        while off < frames {
            let n = (frames - off).min(self.until_reading);
            let ch = self.channels;
            if m.add_frames_f32(&samples[off * ch..(off + n) * ch])
                .is_err()
            {
                return;
            }
            off += n;
            self.until_reading -= n;
            if self.until_reading == 0 {
                self.until_reading = step;
                let momentary = m.loudness_momentary().unwrap_or(f64::NEG_INFINITY);
                let window = m.loudness_global().unwrap_or(f64::NEG_INFINITY);
                if momentary > SILENCE_LUFS && window.is_finite() {
                    self.norm_want_db =
                        (self.target_lufs - window as f32).clamp(NORM_MIN_DB, NORM_MAX_DB);
                }
            }
        }
    }

    fn apply_gain(&mut self, samples: &mut [f32]) {
        let fast = FAST_DB_PER_SEC / self.rate as f32;
        let slow = SLOW_DB_PER_SEC / self.rate as f32;
        let (norm_want, norm_step) = if self.settings.normalize {
            (self.norm_want_db, slow)
        } else {
            (0.0, fast)
        };
        for frame in samples.chunks_exact_mut(self.channels) {
            self.boost_db = approach(self.boost_db, self.settings.boost_db, fast);
            self.norm_db = approach(self.norm_db, norm_want, norm_step);
            let db = self.boost_db + self.norm_db;
            if db != self.applied_db {
                self.applied_db = db;
                self.applied_lin = db_to_lin(db);
            }
            let g = self.applied_lin;
            if g != 1.0 {
                frame.iter_mut().for_each(|s| *s *= g);
            }
        }
    }
}

#[cfg(test)]
mod tests;
