//! The hand-over point between the pipeline (decoded audio, in media time)
//! and the output: a bounded queue of blocks, the stretcher, volume, and the
//! playback clock, then the book's loudness (boost, normalisation,
//! limiter, see `loudness`) and the volume. The output calls [`Renderer::render`]; it never touches
//! the network and never waits for the pipeline. When the queue is empty the
//! output gets silence and the position does not move.
//!
//! This file owns the queue, the settings and the clock's ticks; `frames`
//! turns the queue into output frames (directly or through the
//! stretcher), and `wake` decides when the parked engine is woken.

mod frames;
mod wake;

use super::loudness::Loudness;
use super::{DEFAULT_LOUDNESS_TARGET, PlaybackError, clamp_speed};
use crate::domain::locks::lock;
use crate::domain::{ChapterId, SoundSettings};
use frames::{StretchState, render_inner};
use std::collections::VecDeque;
use std::sync::atomic::AtomicU8;
use std::sync::{Condvar, Mutex, MutexGuard};
use wake::{WAKE_NONE, WOKEN_BY_OUTPUT, WOKEN_BY_QUEUED, WOKEN_BY_UNDERRUN, Waker};

/// Media seconds the pipeline may queue ahead of the output.
const MAX_AHEAD: f64 = 2.0;
/// Once the queue is full, the pipeline waits until it drops below this:
/// it then decodes a second at once instead of a block per output tick.
const REFILL_BELOW: f64 = 1.0;
/// While playing, the output wakes the engine to publish the position at
/// least this often (per second of output), and whenever the whole media
/// second changes (so a clock shown in seconds turns on time).
const POSITION_TICKS_PER_SEC: u32 = 4;

/// Position ticks are at least this far apart in wall time.
const MIN_TICK_GAP: std::time::Duration = std::time::Duration::from_millis(50);

/// Decoded audio of one chapter.
#[derive(Debug, Clone)]
pub struct Block {
    pub chapter: ChapterId,
    pub rate: u32,
    pub channels: usize,
    /// Seconds into the chapter of the first frame.
    pub pos: f64,
    pub samples: Vec<f32>,
    /// Media seconds skip silence cut just before this block (its `pos`
    /// is that much past the previous block's end).
    pub skipped_before: f64,
    /// `pos` is an estimate (an mp3 landing not yet counted). A block
    /// whose `pos` does not follow on from the previous one's end (beyond
    /// `skipped_before`) is a correction: the position jumps there.
    pub approximate: bool,
}

impl Block {
    fn frames(&self) -> usize {
        self.samples.len() / self.channels.max(1)
    }
    fn secs(&self) -> f64 {
        self.frames() as f64 / self.rate as f64
    }
}

#[derive(Debug)]
enum Item {
    Audio(Block),
    End,
    Error(PlaybackError),
}

/// A run of output frames in one format.
#[derive(Debug, Default, Clone)]
pub struct Chunk {
    pub rate: u32,
    pub channels: usize,
    pub samples: Vec<f32>,
    /// False for silence that does not advance the position.
    pub audible: bool,
    /// Playing but no audio ready yet.
    pub waiting: bool,
    /// The chapter these frames belong to (audible chunks only; every
    /// chunk holds one chapter's audio). Cloned only when it changes.
    pub chapter: Option<ChapterId>,
    /// The renderer's change counter when this chunk was made; an output
    /// with nothing to play passes it to [`Renderer::wait_for_change`].
    pub seen: u64,
}

/// What the engine reads back.
#[derive(Debug, Clone, PartialEq)]
pub struct RenderStatus {
    pub generation: u64,
    /// Where playback is, once audio of this generation has been played.
    pub position: Option<(ChapterId, f64)>,
    /// `position` is an estimate (the audio at it came from a block that
    /// said so).
    pub approximate: bool,
    pub buffered_to: Option<f64>,
    pub underrun: bool,
    pub ended: bool,
    pub error: Option<PlaybackError>,
    /// When the first audio of this generation went to the output.
    pub first_audio_at: Option<std::time::Instant>,
    /// Media seconds skip silence has played past since creation.
    pub silence_skipped: f64,
    /// The normalisation gain applied now, while normalising.
    pub norm_gain_db: Option<f32>,
}

#[derive(Default)]
struct Inner {
    generation: u64,
    queue: VecDeque<Item>,
    queued_secs: f64,
    /// The queue reached `MAX_AHEAD`; the pipeline waits until it drops
    /// below `REFILL_BELOW`.
    full: bool,
    /// Frames of the front block already consumed.
    front_off: usize,
    playing: bool,
    speed: f32,
    volume: f32,
    stretch: Option<StretchState>,
    position: Option<(ChapterId, f64)>,
    approximate: bool,
    underrun: bool,
    ended: bool,
    error: Option<PlaybackError>,
    frames_out: u64,
    first_audio_at: Option<std::time::Instant>,
    scratch: Vec<f32>,
    sound: SoundSettings,
    loudness_target: f32,
    /// Made for the first audible chunk's format.
    loudness: Option<Loudness>,
    silence_skipped: f64,
    /// Bumped whenever an output that rendered nothing might now render
    /// something (audio queued, play, flush, wake).
    changes: u64,
    /// `frames_out` and the whole media second at the last position tick.
    ticked_frames: u64,
    ticked_second: i64,
    ticked_at: Option<std::time::Instant>,
}

pub struct Renderer {
    inner: Mutex<Inner>,
    space: Condvar,
    /// Parked outputs wait on this.
    changed: Condvar,
    engine_waker: Mutex<Option<Waker>>,
    /// What the parked engine wants to be woken for (`WAKE_*`).
    engine_armed: AtomicU8,
}

impl Default for Renderer {
    fn default() -> Self {
        Self::new()
    }
}

impl Renderer {
    pub fn new() -> Self {
        Self {
            inner: Mutex::new(Inner {
                speed: 1.0,
                volume: 1.0,
                loudness_target: DEFAULT_LOUDNESS_TARGET,
                ticked_second: -1,
                ..Inner::default()
            }),
            space: Condvar::new(),
            changed: Condvar::new(),
            engine_waker: Mutex::new(None),
            engine_armed: AtomicU8::new(WAKE_NONE),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        lock(&self.inner)
    }

    /// Wake parked outputs: something they might render has changed.
    fn changed(&self, g: &mut Inner) {
        g.changes = g.changes.wrapping_add(1);
        self.changed.notify_all();
    }

    /// Wake parked outputs without a state change (an output stopping).
    pub fn wake_outputs(&self) {
        let mut g = self.lock();
        self.changed(&mut g);
    }

    /// Block until the change counter moves past `seen` (from
    /// [`Chunk::seen`]). Outputs call this instead of polling.
    pub fn wait_for_change(&self, seen: u64) {
        let mut g = self.lock();
        while g.changes == seen {
            g = self.changed.wait(g).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Drop everything queued and start a new generation (load, seek).
    pub fn flush(&self, generation: u64) {
        let mut g = self.lock();
        g.generation = generation;
        g.queue.clear();
        g.queued_secs = 0.0;
        g.full = false;
        g.front_off = 0;
        g.stretch = None;
        g.position = None;
        g.approximate = false;
        g.underrun = false;
        g.ended = false;
        g.error = None;
        g.first_audio_at = None;
        if let Some(l) = g.loudness.as_mut() {
            l.restart();
        }
        self.space.notify_all();
        self.changed(&mut g);
    }

    pub fn set_playing(&self, playing: bool) {
        let mut g = self.lock();
        g.playing = playing;
        self.changed(&mut g);
    }

    pub fn set_speed(&self, speed: f32) {
        self.lock().speed = clamp_speed(speed);
    }

    pub fn set_volume(&self, volume: f32) {
        self.lock().volume = if volume.is_finite() {
            volume.clamp(0.0, 1.0)
        } else {
            1.0
        };
    }

    /// Boost, normalisation (skip silence is the pipeline's).
    pub fn set_sound(&self, sound: SoundSettings) {
        let mut g = self.lock();
        g.sound = sound;
        if let Some(l) = g.loudness.as_mut() {
            l.set(sound);
        }
    }

    /// Normalisation's target, LUFS.
    pub fn set_loudness_target(&self, lufs: f32) {
        let mut g = self.lock();
        g.loudness_target = lufs;
        g.loudness = None;
    }

    /// Another book: its loudness is measured afresh.
    pub fn new_book(&self) {
        self.lock().loudness = None;
    }

    pub fn status(&self) -> RenderStatus {
        let g = self.lock();
        let chapter = g.position.as_ref().map(|p| p.0.clone()).or_else(|| {
            g.queue.iter().find_map(|i| match i {
                Item::Audio(b) => Some(b.chapter.clone()),
                _ => None,
            })
        });
        let buffered_to = chapter.and_then(|ch| {
            g.queue.iter().rev().find_map(|i| match i {
                Item::Audio(b) if b.chapter == ch => Some(b.pos + b.secs()),
                _ => None,
            })
        });
        RenderStatus {
            generation: g.generation,
            position: g.position.clone(),
            approximate: g.approximate,
            buffered_to,
            underrun: g.underrun,
            ended: g.ended,
            error: g.error.clone(),
            first_audio_at: g.first_audio_at,
            silence_skipped: g.silence_skipped,
            norm_gain_db: g.loudness.as_ref().and_then(|l| l.norm_gain_db()),
        }
    }

    /// Queue a block, waiting while the queue is full. False when the
    /// generation moved on (the caller should stop).
    pub fn push_audio(&self, generation: u64, block: Block) -> bool {
        self.push(generation, Item::Audio(block))
    }

    pub fn push_end(&self, generation: u64) -> bool {
        self.push(generation, Item::End)
    }

    pub fn push_error(&self, generation: u64, err: PlaybackError) -> bool {
        self.push(generation, Item::Error(err))
    }

    fn push(&self, generation: u64, item: Item) -> bool {
        let mut g = self.lock();
        loop {
            if g.generation != generation {
                return false;
            }
            if !g.full || !matches!(item, Item::Audio(_)) {
                break;
            }
            // `flush` (the only way the generation moves) notifies.
            g = self.space.wait(g).unwrap_or_else(|e| e.into_inner());
        }
        if let Item::Audio(b) = &item {
            g.queued_secs += b.secs();
            g.full = g.queued_secs >= MAX_AHEAD;
        }
        g.queue.push_back(item);
        self.changed(&mut g);
        drop(g);
        self.wake_engine(WOKEN_BY_QUEUED);
        true
    }

    /// Produce up to `max_frames` output frames. Never blocks on the pipeline.
    pub fn render(&self, max_frames: usize, out: &mut Chunk) {
        self.render_then(max_frames, out, |_| {});
    }

    /// [`Self::render`], then `sink` sees the audible chunk before the lock
    /// is released: a pause or a seek, which take the lock, can't come
    /// between rendering a chunk and recording it (the null output's capture).
    pub fn render_then(&self, max_frames: usize, out: &mut Chunk, sink: impl FnOnce(&Chunk)) {
        let mut g = self.lock();
        out.samples.clear();
        out.audible = false;
        out.waiting = false;
        out.seen = g.changes;
        if !g.playing || g.ended || g.error.is_some() {
            return;
        }
        let edges = (g.position.is_some(), g.underrun, g.ended, g.error.is_some());
        let mut tick = false;
        // A call that renders nothing may still make progress (a block of
        // another chapter closes the stretcher, a tail is drained): go on
        // until there is audio or nothing left, so a silent result really
        // means "park until something changes".
        for _ in 0..64 {
            render_inner(&mut g, max_frames, out);
            if out.audible || g.ended || g.error.is_some() || g.queue.is_empty() {
                break;
            }
        }
        if g.full && g.queued_secs < REFILL_BELOW {
            g.full = false;
            self.space.notify_all();
        }
        if out.audible {
            let (rate, channels, sound, target) =
                (out.rate, out.channels, g.sound, g.loudness_target);
            let l = match g.loudness.take() {
                Some(l) if l.fits(rate, channels) => l,
                _ => Loudness::new(rate, channels, target, sound),
            };
            let l = g.loudness.insert(l);
            l.process(&mut out.samples);
            let vol = g.volume;
            if vol < 0.999 {
                out.samples.iter_mut().for_each(|s| *s *= vol);
            }
            g.frames_out += (out.samples.len() / out.channels.max(1)) as u64;
            let second = g.position.as_ref().map_or(-1, |p| p.1.floor() as i64);
            let now = std::time::Instant::now();
            if (second != g.ticked_second
                || g.frames_out - g.ticked_frames
                    >= u64::from(out.rate / POSITION_TICKS_PER_SEC))
                // An output faster than real time (tests) is not followed
                // block by block.
                && g.ticked_at.is_none_or(|t| now - t >= MIN_TICK_GAP)
            {
                g.ticked_second = second;
                g.ticked_frames = g.frames_out;
                g.ticked_at = Some(now);
                tick = true;
            }
            if g.first_audio_at.is_none() {
                g.first_audio_at = Some(std::time::Instant::now());
            }
            g.underrun = false;
            if let Some((c, _)) = &g.position
                && out.chapter.as_ref() != Some(c)
            {
                out.chapter = Some(c.clone());
            }
        } else {
            out.waiting = !g.ended && g.error.is_none();
        }
        let now = (g.position.is_some(), g.underrun, g.ended, g.error.is_some());
        if out.audible {
            sink(out);
        }
        drop(g);
        let mut reason = if tick { WOKEN_BY_OUTPUT } else { 0 };
        if now.1 != edges.1 {
            reason |= WOKEN_BY_UNDERRUN;
        }
        if (now.0, now.2, now.3) != (edges.0, edges.2, edges.3) {
            reason |= WOKEN_BY_OUTPUT;
        }
        if reason != 0 {
            self.wake_engine(reason);
        }
    }
}

#[cfg(test)]
mod tests;
