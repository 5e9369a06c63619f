//! One pipeline thread per load/seek: walks the manifest from the start
//! point in server order, streams and decodes each chapter, and queues the
//! audio into the renderer. Consecutive items that share a stream (embedded
//! chapters) continue on the same decoder without reopening it. With skip
//! silence on, each chapter's audio goes through a `SilenceTrimmer` on its
//! way to the renderer. A decoder that panics or works on without output
//! fails its chapter ("this chapter could not be decoded"), never the
//! player.

use super::decode::{DecodeError, Decoded, StreamDecoder, StreamHints, catch_panics};
use super::mpa::SeekMaps;
use super::render::{Block, Renderer};
use super::silence::{SilenceRule, SilenceTrimmer, Span};
use super::source::{self, HttpSource, SourceError, SourceMonitor};
use super::{ErrorKind, PlaybackError, StreamResolver};
use crate::domain::{Manifest, ManifestItem};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What the engine keeps to stop a pipeline and watch its stream.
#[derive(Default)]
pub(super) struct PipelineShared {
    cancelled: AtomicBool,
    /// The stream being played landed on an estimate (see `PlayerState`).
    approximate: AtomicBool,
    monitor: Mutex<Option<SourceMonitor>>,
}

impl PipelineShared {
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::SeqCst);
        if let Some(m) = self.lock_monitor().as_ref() {
            m.cancel();
        }
    }

    pub fn approximate(&self) -> bool {
        self.approximate.load(Ordering::SeqCst)
    }

    pub fn stalled(&self) -> bool {
        self.lock_monitor().as_ref().is_some_and(|m| m.stalled())
    }

    fn lock_monitor(&self) -> std::sync::MutexGuard<'_, Option<SourceMonitor>> {
        self.monitor.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn set_monitor(&self, m: SourceMonitor) {
        *self.lock_monitor() = Some(m.clone());
        if self.cancelled.load(Ordering::SeqCst) {
            m.cancel();
        }
    }

    fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::SeqCst)
    }
}

pub(super) struct Pipeline {
    pub generation: u64,
    pub manifest: Arc<Manifest>,
    pub start_index: usize,
    pub start_pos: f64,
    pub resolve: StreamResolver,
    pub renderer: Arc<Renderer>,
    pub shared: Arc<PipelineShared>,
    pub stall_after: Duration,
    pub read_ahead: u64,
    pub seek_maps: SeekMaps,
    /// Skip silence, read for every decoded block (the engine sets it).
    pub skip_silence: Arc<AtomicBool>,
    pub silence: SilenceRule,
    pub judge: super::RefusalJudge,
    pub pool: Option<super::HttpPool>,
    /// The first stream may start from its kept head (see `source::heads`).
    pub reuse_head: bool,
}

pub(super) fn spawn(p: Pipeline) {
    let r = std::thread::Builder::new()
        .name("earmark-pipeline".into())
        .spawn(move || p.run());
    if let Err(e) = r {
        tracing::error!("cannot start the pipeline thread: {e}");
    }
}

fn source_error(e: SourceError, item: &ManifestItem) -> PlaybackError {
    let (kind, message) = match e {
        SourceError::Refused { kind, message } => (kind, message),
        other => (ErrorKind::Http, other.to_string()),
    };
    PlaybackError {
        kind,
        chapter: Some(item.chapter_id.clone()),
        message,
    }
}

fn decode_error(e: DecodeError, item: &ManifestItem) -> PlaybackError {
    PlaybackError {
        kind: ErrorKind::Decode,
        chapter: Some(item.chapter_id.clone()),
        message: format!("cannot play \"{}\": {e}", item.title),
    }
}

/// Split `d` at stream time `t`: frames before and from `t`.
fn split_at(d: Decoded, t: f64) -> (Option<Decoded>, Option<Decoded>) {
    if t <= d.start {
        return (None, Some(d));
    }
    if t >= d.end() {
        return (Some(d), None);
    }
    let frames = (((t - d.start) * d.rate as f64).round() as usize).min(d.frames());
    let mut head = d;
    let tail_samples = head.samples.split_off(frames * head.channels);
    let tail = Decoded {
        rate: head.rate,
        channels: head.channels,
        start: head.start + frames as f64 / head.rate as f64,
        samples: tail_samples,
    };
    (Some(head), Some(tail))
}

impl Pipeline {
    fn run(self) {
        let mut open: Option<(String, StreamDecoder)> = None;
        let mut carry: Option<Decoded> = None;
        let mut prev_end: Option<f64> = None;
        for (i, item) in self
            .manifest
            .items
            .iter()
            .enumerate()
            .skip(self.start_index)
        {
            if self.shared.is_cancelled() {
                return;
            }
            let offset = if i == self.start_index {
                self.start_pos.max(0.0)
            } else {
                0.0
            };
            let req = (self.resolve)(item);
            let continues = offset == 0.0
                && prev_end.is_some_and(|e| (e - item.start).abs() < 0.01)
                && open.as_ref().is_some_and(|(u, _)| *u == req.url);
            if !continues {
                carry = None;
                drop(open.take());
                let url = req.url.clone();
                // Until the bitrate is known, download little ahead.
                let first_ahead = self.read_ahead.min(source::READ_AHEAD_FLOOR);
                let http = self.pool.as_ref().and_then(|p| p());
                let src = HttpSource::reopen(
                    http,
                    req,
                    self.stall_after,
                    first_ahead,
                    self.judge.clone(),
                    self.reuse_head && i == self.start_index,
                );
                self.shared.set_monitor(src.monitor());
                if let Err(e) = src.wait_headers() {
                    if e != SourceError::Cancelled {
                        self.renderer
                            .push_error(self.generation, source_error(e, item));
                    }
                    return;
                }
                let monitor = src.monitor();
                let len = src.len().unwrap_or(0);
                let ranges = src
                    .range_reader()
                    .map(|r| Box::new(r) as Box<dyn super::mpa::RangeReader>);
                let maps = self.seek_maps.clone();
                let key = url.clone();
                let hints = StreamHints {
                    mime: item.mime_type.as_deref(),
                    // The server's duration is the whole stream's only
                    // when this item runs to its end.
                    duration: item
                        .end
                        .is_none()
                        .then_some(item.duration.map(|d| item.start + d))
                        .flatten(),
                    seek_map: Some(Box::new(move |first| maps.get(&key, len, first))),
                    ranges,
                };
                // Every decoder call is a chapter boundary: a panic in it
                // fails this chapter, not the player (`catch_panics`).
                let mut dec = match catch_panics(|| StreamDecoder::open(Box::new(src), hints)) {
                    Ok(d) => d,
                    Err(e) => return self.fail(e, &monitor, item),
                };
                let bytes_per_sec = dec
                    .duration()
                    .filter(|d| *d > 1.0 && len > 0)
                    .map(|d| len as f64 / d);
                monitor.set_read_ahead(source::read_ahead_for(bytes_per_sec, self.read_ahead));
                let target = item.start + offset;
                if target > 0.0
                    && let Err(e) = catch_panics(|| dec.seek(target))
                {
                    return self.fail(e, &monitor, item);
                }
                // Before any audio of this stream is queued.
                self.shared
                    .approximate
                    .store(dec.approximate(), Ordering::SeqCst);
                open = Some((url, dec));
            }
            let Some((_, dec)) = open.as_mut() else {
                return;
            };
            let mut last_end = item.start + offset;
            let mut hit_eof = false;
            let mut trimmer: Option<SilenceTrimmer> = None;
            loop {
                let d = match carry.take() {
                    Some(d) => d,
                    None => match catch_panics(|| dec.next_block()) {
                        Ok(Some(d)) => d,
                        Ok(None) => {
                            hit_eof = true;
                            break;
                        }
                        Err(e) => {
                            if self.shared.is_cancelled() {
                                return;
                            }
                            let monitor = self.shared.lock_monitor().clone();
                            match monitor {
                                Some(m) => return self.fail(e, &m, item),
                                None => {
                                    self.renderer
                                        .push_error(self.generation, decode_error(e, item));
                                    return;
                                }
                            }
                        }
                    },
                };
                let (mine, rest) = match item.end {
                    Some(end) => split_at(d, end),
                    None => (Some(d), None),
                };
                if let Some(m) = mine {
                    last_end = m.end();
                    if !self.queue(item, &mut trimmer, Some(m)) {
                        return;
                    }
                }
                if rest.is_some() {
                    carry = rest;
                    break;
                }
            }
            // The chapter's last held silence.
            if !self.queue(item, &mut trimmer, None) {
                return;
            }
            if hit_eof {
                let expected = item
                    .end
                    .or(item.duration.map(|d| item.start + d))
                    .or(dec.duration());
                if let Some(x) = expected {
                    let slack = (0.02 * (x - item.start)).max(0.5);
                    if x - last_end > slack && last_end < x {
                        let err = PlaybackError {
                            kind: ErrorKind::Decode,
                            chapter: Some(item.chapter_id.clone()),
                            message: format!(
                                "\"{}\" is truncated: its audio stops at {:.1} s of {:.1} s",
                                item.title,
                                (last_end - item.start).max(0.0),
                                x - item.start
                            ),
                        };
                        self.renderer.push_error(self.generation, err);
                        return;
                    }
                }
                open = None;
            }
            prev_end = if hit_eof { None } else { item.end };
        }
        self.renderer.push_end(self.generation);
    }

    /// Queue decoded audio of `item` (`None`: its end), through the
    /// silence trimmer while skip silence is on. False when the generation
    /// moved on.
    fn queue(
        &self,
        item: &ManifestItem,
        trimmer: &mut Option<SilenceTrimmer>,
        d: Option<Decoded>,
    ) -> bool {
        let skip = self.skip_silence.load(Ordering::Relaxed);
        let mut spans: Vec<(u32, usize, Span)> = Vec::new();
        let fits = |t: &SilenceTrimmer| d.as_ref().is_some_and(|d| t.fits(d.rate, d.channels));
        if trimmer.as_ref().is_some_and(|t| !skip || !fits(t))
            && let Some(mut t) = trimmer.take()
        {
            let (rate, channels) = t.format();
            spans.extend(t.finish().into_iter().map(|s| (rate, channels, s)));
        }
        if let Some(d) = d {
            let pos = (d.start - item.start).max(0.0);
            if skip {
                let t = trimmer
                    .get_or_insert_with(|| SilenceTrimmer::new(d.rate, d.channels, self.silence));
                let out = t.push(pos, &d.samples);
                spans.extend(out.into_iter().map(|s| (d.rate, d.channels, s)));
            } else {
                let span = Span {
                    pos,
                    samples: d.samples,
                    skipped_before: 0.0,
                };
                spans.push((d.rate, d.channels, span));
            }
        }
        for (rate, channels, span) in spans {
            let block = Block {
                chapter: item.chapter_id.clone(),
                rate,
                channels,
                pos: span.pos,
                samples: span.samples,
                skipped_before: span.skipped_before,
            };
            if !self.renderer.push_audio(self.generation, block) {
                return false;
            }
        }
        true
    }

    fn fail(&self, e: DecodeError, monitor: &SourceMonitor, item: &ManifestItem) {
        if self.shared.is_cancelled() {
            return;
        }
        let err = match monitor.fatal() {
            Some(f) => source_error(f, item),
            None => decode_error(e, item),
        };
        self.renderer.push_error(self.generation, err);
    }
}
