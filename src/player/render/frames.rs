//! The renderer's queue turned into output frames, under its lock: at 1×
//! straight from the front block, otherwise through the stretcher, one
//! chapter and format per stretcher, its tail played when the chapter,
//! the format or the speed changes. The position follows the media.

use super::{Chunk, Inner, Item};
use crate::domain::ChapterId;
use crate::player::stretch::{FastWsola, Stretcher};
use std::collections::VecDeque;

pub(super) struct StretchState {
    st: Box<dyn Stretcher>,
    rate: u32,
    channels: usize,
    chapter: ChapterId,
    /// Media position (chapter seconds) of the next output frame.
    pos: f64,
    /// Media position just after the last frame pushed in.
    fed_to: f64,
    /// Whether the frames fed last are on an estimate.
    fed_approximate: bool,
    /// Jumps in the media position inside the stretcher (a cut by skip
    /// silence, or a corrected estimate): where it happens in the media
    /// pushed in, how far it jumps, and whether the audio after it is an
    /// estimate; `pos` takes them as it passes.
    cuts: VecDeque<Cut>,
}

struct Cut {
    at: f64,
    by: f64,
    approximate: bool,
}

fn pop_front(g: &mut Inner) {
    if let Some(Item::Audio(b)) = g.queue.pop_front() {
        g.queued_secs = (g.queued_secs - b.secs()).max(0.0);
    }
    g.front_off = 0;
}

pub(super) fn render_inner(g: &mut Inner, max_frames: usize, out: &mut Chunk) {
    // Terminal items first.
    match g.queue.front() {
        None => {
            // Underrun. Keep the stretcher and what it holds: flushing it
            // here would restart it on every underrun (each restart adds
            // output and a seam). Its few ms play when audio comes back.
            g.underrun = true;
            return;
        }
        Some(Item::End) => {
            if !close_stretch(g, out) {
                g.ended = true;
            }
            return;
        }
        Some(Item::Error(e)) => {
            g.error = Some(e.clone());
            return;
        }
        Some(Item::Audio(_)) => {}
    }
    let speed = g.speed;
    let unity = (speed - 1.0).abs() < 1e-3;
    // Back to 1×: play the stretcher's tail, then bypass it.
    if unity && close_stretch(g, out) {
        return;
    }
    if unity {
        let off = g.front_off;
        let Some(Item::Audio(b)) = g.queue.front() else {
            return;
        };
        let skipped = if off == 0 { b.skipped_before } else { 0.0 };
        let n = (b.frames() - off).min(max_frames);
        out.rate = b.rate;
        out.channels = b.channels;
        out.samples
            .extend_from_slice(&b.samples[off * b.channels..(off + n) * b.channels]);
        out.audible = n > 0;
        let pos = b.pos + (off + n) as f64 / b.rate as f64;
        let chapter = b.chapter.clone();
        let done = off + n >= b.frames();
        g.silence_skipped += skipped;
        g.position = Some((chapter, pos));
        g.approximate = b.approximate;
        if done {
            pop_front(g);
        } else {
            g.front_off += n;
        }
        return;
    }
    render_stretched(g, speed, max_frames, out);
}

/// Takes the stretcher (if any) and plays its tail; the position is then
/// the end of what it was fed. True when the tail went out.
fn close_stretch(g: &mut Inner, out: &mut Chunk) -> bool {
    let Some(mut s) = g.stretch.take() else {
        return false;
    };
    finish_stretch(&mut s, g.speed, out);
    g.position = Some((s.chapter.clone(), s.fed_to));
    g.approximate = s.fed_approximate;
    out.audible
}

/// Play the stretcher's tail, no longer than the media it still holds
/// (at the current speed), so output duration stays input / speed.
fn finish_stretch(s: &mut StretchState, speed: f32, out: &mut Chunk) {
    out.rate = s.rate;
    out.channels = s.channels;
    let before = out.samples.len();
    s.st.finish(&mut out.samples);
    let left = ((s.fed_to - s.pos).max(0.0) * s.rate as f64 / speed.max(0.1) as f64).round();
    let max = before + left as usize * s.channels;
    if out.samples.len() > max {
        out.samples.truncate(max);
    }
    out.audible = out.samples.len() > before;
}

/// Frames fed to the stretcher per step.
const FEED_FRAMES: usize = 1024;

/// Makes the stretcher fit the front block's chapter and format, closing
/// the previous chapter with its tail. False: nothing more this call (no
/// audio in front, or the tail went out).
fn fit_stretcher(g: &mut Inner, out: &mut Chunk) -> bool {
    // (Re)create the stretcher when the front block's chapter or format differs.
    let (rate, channels, chapter, pos, approximate) = match g.queue.front() {
        Some(Item::Audio(b)) => (
            b.rate,
            b.channels,
            b.chapter.clone(),
            b.pos + g.front_off as f64 / b.rate as f64,
            b.approximate,
        ),
        _ => return false,
    };
    let fits = g
        .stretch
        .as_ref()
        .is_some_and(|s| s.rate == rate && s.channels == channels && s.chapter == chapter);
    if !fits {
        // Close the previous chapter with its tail; the next call starts this one.
        if close_stretch(g, out) {
            return false;
        }
        g.stretch = Some(StretchState {
            st: Box::new(FastWsola::new(rate, channels)),
            rate,
            channels,
            chapter,
            pos,
            fed_to: pos,
            fed_approximate: approximate,
            cuts: VecDeque::new(),
        });
        g.approximate = approximate;
    }
    true
}

fn render_stretched(g: &mut Inner, speed: f32, max_frames: usize, out: &mut Chunk) {
    if !fit_stretcher(g, out) {
        return;
    }
    let mut scratch = std::mem::take(&mut g.scratch);
    scratch.clear();
    let mut produced = 0usize;
    loop {
        let s = g.stretch.as_mut().expect("stretcher present");
        s.st.set_speed(speed);
        produced += s.st.pull(&mut scratch, max_frames - produced);
        if produced >= max_frames {
            break;
        }
        // Needs input: feed from the front block if it belongs to this stretcher.
        let off = g.front_off;
        let feed = match g.queue.front() {
            Some(Item::Audio(b))
                if b.chapter == s.chapter && b.rate == s.rate && b.channels == s.channels =>
            {
                let n = (b.frames() - off).min(FEED_FRAMES);
                if off == 0 {
                    // Silence cut before it, or an estimate corrected.
                    let by = b.pos - s.fed_to;
                    if by.abs() > 1e-6 || b.approximate != s.fed_approximate {
                        s.cuts.push_back(Cut {
                            at: s.fed_to,
                            by,
                            approximate: b.approximate,
                        });
                    }
                    s.fed_approximate = b.approximate;
                    g.silence_skipped += b.skipped_before;
                }
                s.st.push(&b.samples[off * b.channels..(off + n) * b.channels]);
                s.fed_to = b.pos + (off + n) as f64 / b.rate as f64;
                Some((n, off + n >= b.frames()))
            }
            _ => None,
        };
        match feed {
            Some((_, true)) => pop_front(g),
            Some((n, false)) => g.front_off += n,
            None => break,
        }
    }
    let s = g.stretch.as_mut().expect("stretcher present");
    s.pos += produced as f64 * speed as f64 / s.rate as f64;
    while let Some(cut) = s.cuts.front()
        && s.pos >= cut.at
    {
        s.pos += cut.by;
        g.approximate = cut.approximate;
        s.cuts.pop_front();
    }
    // Not past what was fed, counted on this side of the jumps still ahead.
    let ahead: f64 = s.cuts.iter().map(|c| c.by).sum();
    s.pos = s.pos.min(s.fed_to - ahead);
    out.rate = s.rate;
    out.channels = s.channels;
    out.samples.extend_from_slice(&scratch);
    out.audible = produced > 0;
    if produced > 0 {
        g.position = Some((s.chapter.clone(), s.pos));
    }
    g.scratch = scratch;
}
