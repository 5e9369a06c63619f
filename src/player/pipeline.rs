//! One pipeline thread per load/seek: walks the manifest from the start
//! point in server order, streams and decodes each chapter, and queues the
//! audio into the renderer. Consecutive items that share a stream (embedded
//! chapters) continue on the same decoder without reopening it. With skip
//! silence on, each chapter's audio goes through a `SilenceTrimmer` on its
//! way to the renderer. Each block says whether its position is an
//! estimate, and each chapter's length as its stream says is recorded for
//! the engine once the decoder knows it. A decoder that panics or works on without output
//! fails its chapter ("this chapter could not be decoded"), never the
//! player.

use super::decode::{DecodeError, Decoded, StreamDecoder, StreamHints, catch_panics};
use super::mpa::SeekMaps;
use super::render::{Block, Renderer};
use super::silence::{SilenceRule, SilenceTrimmer, Span};
use super::source::{self, HttpSource, SourceError, SourceMonitor};
use super::{ErrorKind, PlaybackError, StreamResolver};
use crate::domain::locks::lock;
use crate::domain::{ChapterId, Manifest, ManifestItem};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What the engine keeps to stop a pipeline and watch its stream.
#[derive(Default)]
pub(super) struct PipelineShared {
    cancelled: AtomicBool,
    /// The audio decoded last is on an estimate (see `PlayerState`): set
    /// before the first audio of a landing is queued.
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
        lock(&self.monitor)
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
    /// Chapters' lengths as their streams say, for the engine.
    pub lengths: MeasuredLengths,
    /// How far an mp3 seek may count frames (`None`: the default).
    pub count_limit: Option<u64>,
}

/// Lengths of chapters as their streams say (the decoder's, never the
/// manifest's), by chapter: written by the pipelines of one load, read by
/// the engine.
pub(super) type MeasuredLengths = Arc<Mutex<HashMap<ChapterId, f64>>>;

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
        approximate: head.approximate,
    };
    (Some(head), Some(tail))
}

/// How one item's audio ended.
enum ItemEnd {
    /// The stream ended; the item's audio stopped at `last_end` (seconds of
    /// the stream).
    Eof { last_end: f64 },
    /// The item ended inside the stream: the next item goes on from the
    /// carried rest.
    Split,
    /// Stop: cancelled, or a failure already reported.
    Stop,
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
                let reuse_head = self.reuse_head && i == self.start_index;
                match self.open_stream(item, req, offset, reuse_head) {
                    Some(dec) => open = Some((url, dec)),
                    None => return,
                }
            }
            let Some((_, dec)) = open.as_mut() else {
                return;
            };
            match self.play_item(dec, item, offset, &mut carry) {
                ItemEnd::Stop => return,
                ItemEnd::Split => prev_end = item.end,
                ItemEnd::Eof { last_end } => {
                    if !self.ended_whole(dec, item, last_end) {
                        return;
                    }
                    open = None;
                    prev_end = None;
                }
            }
        }
        self.renderer.push_end(self.generation);
    }

    /// Open `item`'s stream and seek to `offset` into the item. `None`
    /// when that failed (and was reported) or was cancelled.
    fn open_stream(
        &self,
        item: &ManifestItem,
        req: super::StreamRequest,
        offset: f64,
        reuse_head: bool,
    ) -> Option<StreamDecoder> {
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
            reuse_head,
        );
        self.shared.set_monitor(src.monitor());
        if let Err(e) = src.wait_headers() {
            if e != SourceError::Cancelled {
                self.renderer
                    .push_error(self.generation, source_error(e, item));
            }
            return None;
        }
        let monitor = src.monitor();
        let len = src.len().unwrap_or(0);
        let ranges = src
            .range_reader()
            .map(|r| Arc::new(r) as Arc<dyn super::mpa::RangeReader>);
        let maps = self.seek_maps.clone();
        let hints = StreamHints {
            mime: item.mime_type.as_deref(),
            // The server's duration is the whole stream's only when this
            // item runs to its end.
            duration: item
                .end
                .is_none()
                .then_some(item.duration.map(|d| item.start + d))
                .flatten(),
            seek_map: Some(Box::new(move |first| maps.get(&url, len, first))),
            ranges,
            count_limit: self.count_limit,
        };
        // Every decoder call is a chapter boundary: a panic in it fails
        // this chapter, not the player (`catch_panics`).
        let mut dec = match catch_panics(|| StreamDecoder::open(Box::new(src), hints)) {
            Ok(d) => d,
            Err(e) => {
                self.fail(e, Some(&monitor), item);
                return None;
            }
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
            self.fail(e, Some(&monitor), item);
            return None;
        }
        // Before any audio of this stream is queued.
        self.shared
            .approximate
            .store(dec.approximate(), Ordering::SeqCst);
        self.note_length(&dec, item);
        Some(dec)
    }

    /// Decode `item`'s audio (after `carry`, the rest of the previous
    /// item's last run) and queue it, up to the item's end or the stream's.
    fn play_item(
        &self,
        dec: &mut StreamDecoder,
        item: &ManifestItem,
        offset: f64,
        carry: &mut Option<Decoded>,
    ) -> ItemEnd {
        let mut last_end = item.start + offset;
        let mut trimmer: Option<SilenceTrimmer> = None;
        let mut approximate = dec.approximate();
        let mut measured = false;
        let end = loop {
            let d = match carry.take() {
                Some(d) => d,
                None => match catch_panics(|| dec.next_block()) {
                    Ok(Some(d)) => d,
                    Ok(None) => break ItemEnd::Eof { last_end },
                    Err(e) => {
                        let monitor = self.shared.lock_monitor().clone();
                        self.fail(e, monitor.as_ref(), item);
                        return ItemEnd::Stop;
                    }
                },
            };
            if d.approximate != approximate {
                approximate = d.approximate;
                self.shared.approximate.store(approximate, Ordering::SeqCst);
            }
            // A count beside playback may reach the stream's end.
            if !measured {
                measured = self.note_length(dec, item);
            }
            let (mine, rest) = match item.end {
                Some(end) => split_at(d, end),
                None => (Some(d), None),
            };
            if let Some(m) = mine {
                last_end = m.end();
                if !self.queue(item, &mut trimmer, Some(m), approximate) {
                    return ItemEnd::Stop;
                }
            }
            if rest.is_some() {
                *carry = rest;
                break ItemEnd::Split;
            }
        };
        // The chapter's last held silence.
        if !self.queue(item, &mut trimmer, None, approximate) {
            return ItemEnd::Stop;
        }
        end
    }

    /// Record `item`'s length as its stream says, once the decoder knows
    /// it (only for an item that runs to the stream's end); whether known.
    fn note_length(&self, dec: &StreamDecoder, item: &ManifestItem) -> bool {
        if item.end.is_some() {
            return true;
        }
        let Some(total) = dec.measured_duration() else {
            return false;
        };
        lock(&self.lengths).insert(item.chapter_id.clone(), (total - item.start).max(0.0));
        true
    }

    /// The stream of `item` ended at `last_end`: false (and an error
    /// queued) when that is well before where its audio should end.
    fn ended_whole(&self, dec: &StreamDecoder, item: &ManifestItem, last_end: f64) -> bool {
        self.note_length(dec, item);
        // The stream's own length before the manifest's: a server's
        // figure in another unit must not make a whole file "truncated".
        let expected = item
            .end
            .or(dec.measured_duration())
            .or(item.duration.map(|d| item.start + d))
            .or(dec.duration());
        let Some(x) = expected else {
            return true;
        };
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
            return false;
        }
        true
    }

    /// Queue decoded audio of `item` (`None`: its end), through the
    /// silence trimmer while skip silence is on. False when the generation
    /// moved on.
    fn queue(
        &self,
        item: &ManifestItem,
        trimmer: &mut Option<SilenceTrimmer>,
        d: Option<Decoded>,
        approximate: bool,
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
                approximate,
            };
            if !self.renderer.push_audio(self.generation, block) {
                return false;
            }
        }
        true
    }

    /// A decode failed: reported as the stream's failure when it has one.
    fn fail(&self, e: DecodeError, monitor: Option<&SourceMonitor>, item: &ManifestItem) {
        if self.shared.is_cancelled() {
            return;
        }
        let err = match monitor.and_then(SourceMonitor::fatal) {
            Some(f) => source_error(f, item),
            None => decode_error(e, item),
        };
        self.renderer.push_error(self.generation, err);
    }
}
