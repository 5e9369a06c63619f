//! Pitch-preserving time-stretch behind a trait, so the algorithm can be
//! swapped. The implementation is WSOLA (the `wsola` crate, pure Rust):
//! see docs/benchmarks.md for the measurements behind the choice.

use std::num::{NonZeroU16, NonZeroU32};

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

/// WSOLA with a 15 ms hop and a 12 ms search, tuned for speech.
pub struct WsolaStretcher {
    ts: wsola::TimeStretch,
    channels: usize,
    tmp: Vec<f32>,
    /// Output pulled from the stretcher but not handed out yet.
    pending: Vec<f32>,
    pending_off: usize,
}

impl WsolaStretcher {
    pub fn new(rate: u32, channels: usize) -> Self {
        let sr = NonZeroU32::new(rate.max(1)).unwrap_or(NonZeroU32::MIN);
        let ch =
            NonZeroU16::new(channels.clamp(1, u16::MAX as usize) as u16).unwrap_or(NonZeroU16::MIN);
        let ts = wsola::TimeStretch::new(sr, ch).expect("wsola construction is infallible");
        let tmp = vec![0.0; ts.min_output_buff_size()];
        Self {
            ts,
            channels: channels.max(1),
            tmp,
            pending: Vec::new(),
            pending_off: 0,
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

impl Stretcher for WsolaStretcher {
    fn set_speed(&mut self, speed: f32) {
        self.ts.set_tempo(speed);
    }

    fn push(&mut self, samples: &[f32]) {
        self.ts.push(samples);
    }

    fn pull(&mut self, out: &mut Vec<f32>, max_frames: usize) -> usize {
        let mut done = self.take_pending(out, max_frames);
        while done < max_frames {
            match self.ts.pull(&mut self.tmp) {
                Ok(n) if n > 0 => {
                    self.pending.extend_from_slice(&self.tmp[..n]);
                    done += self.take_pending(out, max_frames - done);
                }
                _ => break,
            }
        }
        done
    }

    fn buffered_input(&self) -> usize {
        self.ts.buffered()
    }

    fn finish(&mut self, out: &mut Vec<f32>) {
        let rest = self.pending.len() - self.pending_off;
        self.take_pending(out, rest / self.channels);
        self.ts.set_draining();
        let mut big = vec![0.0; self.tmp.len() * 64];
        while let Ok(n) = self.ts.pull(&mut big) {
            out.extend_from_slice(&big[..n]);
            if !self.ts.is_draining() || n < big.len() {
                break;
            }
        }
        self.ts.reset();
    }

    fn reset(&mut self) {
        self.ts.reset();
        self.pending.clear();
        self.pending_off = 0;
    }
}
