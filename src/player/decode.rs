//! Decoding one stream to interleaved `f32` with symphonia 0.6, with
//! timestamps in seconds of the stream, and sample-exact seeking.
//!
//! MPEG audio (mp3) is demuxed by [`super::mpa`]: its seeks go through the
//! stream's exact index points, a count of its frames up to the target
//! (bounded), or else its Xing TOC / VBRI table or an estimate (then
//! [`StreamDecoder::approximate`] says so, and each [`Decoded`] run
//! carries it until the count corrects it). Every seek then decodes
//! forward and drops frames before the target; other formats have an
//! index and seek accurately.

use crate::domain::locks::lock;
use std::io::{Read, Seek, SeekFrom};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use symphonia::core::codecs::audio::well_known::{
    CODEC_ID_AAC, CODEC_ID_ALAC, CODEC_ID_FLAC, CODEC_ID_OPUS,
};
use symphonia::core::codecs::audio::{AudioDecoder, AudioDecoderOptions};
use symphonia::core::errors::Error as SymError;
use symphonia::core::formats::probe::{Hint, Probe};
use symphonia::core::formats::{FormatOptions, FormatReader, SeekMode, SeekTo, TrackType};
use symphonia::core::io::{MediaSource, MediaSourceStream, MediaSourceStreamOptions};
use symphonia::core::meta::MetadataOptions;
use symphonia::core::packet::Packet;
use symphonia::core::units::{Duration as SymDuration, Time, TimeBase, Timestamp};

use super::mpa::{MpaDemuxer, RangeReader, SharedSeekMap};

mod boundary;
use boundary::Idle;
pub use boundary::{catch_panics, quiet_caught_panics};

/// A decoded run of audio.
#[derive(Debug, Clone)]
pub struct Decoded {
    pub rate: u32,
    pub channels: usize,
    /// Seconds into the stream of the first frame.
    pub start: f64,
    /// Interleaved samples.
    pub samples: Vec<f32>,
    /// `start` is an estimate (an mp3 seek that landed on one).
    pub approximate: bool,
}

impl Decoded {
    pub fn frames(&self) -> usize {
        self.samples.len() / self.channels.max(1)
    }
    pub fn end(&self) -> f64 {
        self.start + self.frames() as f64 / self.rate as f64
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The bytes are not audio we can decode.
    #[error("unsupported audio: {0}")]
    Unsupported(String),
    /// The stream is damaged.
    #[error("corrupt audio: {0}")]
    Corrupt(String),
    /// Reading the stream failed (network error, cancelled).
    #[error("read error: {0}")]
    Io(String),
    /// The decoder panicked, or worked on without producing audio: the
    /// chapter cannot be decoded (see [`catch_panics`]).
    #[error("this chapter could not be decoded ({0})")]
    Failed(String),
}

/// Seconds decoded and dropped before a seek target (lossy codecs).
const PREROLL: f64 = 0.2;

/// Frames decoded and dropped before an mp3 seek target (bit reservoir).
const MPA_PREROLL_FRAMES: f64 = 24.0;

/// Consecutive undecodable packets before the stream is declared corrupt.
const MAX_BAD_PACKETS: u32 = 20;

/// What the layer above knows about a stream before opening it.
#[derive(Default)]
pub struct StreamHints<'a> {
    pub mime: Option<&'a str>,
    /// The stream's duration from elsewhere (the server), seconds.
    pub duration: Option<f64>,
    /// The stream's seek map, kept across opens of the same stream, given
    /// the byte where its first frame starts (mp3 only).
    pub seek_map: Option<Box<dyn FnOnce(u64) -> SharedSeekMap + 'a>>,
    /// Bounded reads of the same stream (mp3 only: bitrate probes, counts).
    pub ranges: Option<Arc<dyn RangeReader>>,
    /// How many bytes an mp3 seek may count frames through (`None`: the
    /// default, [`super::mpa::count::COUNT_BYTES`]).
    pub count_limit: Option<u64>,
}

/// One source read by two owners in turn: symphonia's probe, then the
/// mp3 demuxer (which always seeks before it reads). It keeps the furthest
/// byte read: reading new bytes is progress (see `boundary`).
#[derive(Clone)]
struct SharedSource {
    inner: Arc<Mutex<(Box<dyn MediaSource>, u64)>>,
    furthest: Arc<AtomicU64>,
}

impl SharedSource {
    fn new(source: Box<dyn MediaSource>) -> Self {
        Self {
            inner: Arc::new(Mutex::new((source, 0))),
            furthest: Arc::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, (Box<dyn MediaSource>, u64)> {
        lock(&self.inner)
    }
}

impl Read for SharedSource {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let mut g = self.lock();
        let n = g.0.read(buf)?;
        g.1 += n as u64;
        self.furthest.fetch_max(g.1, Ordering::Relaxed);
        Ok(n)
    }
}

impl Seek for SharedSource {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        let mut g = self.lock();
        let at = g.0.seek(pos)?;
        g.1 = at;
        Ok(at)
    }
}

impl MediaSource for SharedSource {
    fn is_seekable(&self) -> bool {
        self.lock().0.is_seekable()
    }
    fn byte_len(&self) -> Option<u64> {
        self.lock().0.byte_len()
    }
}

enum Demux {
    Symphonia(Box<dyn FormatReader>),
    Mpa(Box<MpaDemuxer<SharedSource>>),
}

pub struct StreamDecoder {
    demux: Demux,
    decoder: Box<dyn AudioDecoder>,
    track_id: u32,
    time_base: Option<TimeBase>,
    rate: u32,
    channels: usize,
    coarse_seek: bool,
    lossless: bool,
    /// Frames of encoder delay to drop at the start (AAC priming).
    delay: u64,
    /// Drop decoded frames before this stream time (after a seek).
    skip_until: Option<f64>,
    /// Stream time of the next frame when packets carry no usable pts.
    next_time: f64,
    duration: Option<f64>,
    /// The duration is the stream's own (a container's or tag's figure),
    /// not a hint or an estimate.
    measured: bool,
    /// mp3: where the valid samples end (encoder padding after it).
    end_time: Option<f64>,
    scratch: Vec<f32>,
    /// The furthest byte of the stream read so far.
    furthest_read: Arc<AtomicU64>,
}

/// symphonia's formats, and of its tag readers only ID3v2 (at the start).
/// The others (ID3v1, APE) sit at the end of a file, and with them the
/// probe reads the stream's end before its start: over HTTP two more
/// requests in series (the end, then the start again) before any audio,
/// for tags the player does not read.
fn probe() -> &'static Probe {
    use symphonia::default::{formats, meta};
    static PROBE: std::sync::OnceLock<Probe> = std::sync::OnceLock::new();
    PROBE.get_or_init(|| {
        let mut p = Probe::default();
        p.register_format::<formats::AdtsReader<'_>>();
        p.register_format::<formats::CafReader<'_>>();
        p.register_format::<formats::FlacReader<'_>>();
        p.register_format::<formats::IsoMp4Reader<'_>>();
        p.register_format::<formats::MpaReader<'_>>();
        p.register_format::<formats::AiffReader<'_>>();
        p.register_format::<formats::WavReader<'_>>();
        p.register_format::<formats::OggReader<'_>>();
        p.register_format::<formats::MkvReader<'_>>();
        p.register_metadata::<meta::Id3v2Reader<'_>>();
        p
    })
}

/// symphonia's decoders, plus Opus (libopus) with the `opus` feature.
fn codecs() -> &'static symphonia::core::codecs::registry::CodecRegistry {
    #[cfg(feature = "opus")]
    {
        static CODECS: std::sync::OnceLock<symphonia::core::codecs::registry::CodecRegistry> =
            std::sync::OnceLock::new();
        CODECS.get_or_init(|| {
            let mut r = symphonia::core::codecs::registry::CodecRegistry::new();
            symphonia::default::register_enabled_codecs(&mut r);
            r.register_audio_decoder::<super::opus::OpusDecoder>();
            r
        })
    }
    #[cfg(not(feature = "opus"))]
    symphonia::default::get_codecs()
}

fn sym_err(e: SymError) -> DecodeError {
    match e {
        SymError::IoError(io) => DecodeError::Io(io.to_string()),
        SymError::Unsupported(m) => DecodeError::Unsupported(m.to_string()),
        other => DecodeError::Corrupt(other.to_string()),
    }
}

impl StreamDecoder {
    /// Probe the stream and set up a decoder for its first audio track.
    pub fn open(source: Box<dyn MediaSource>, hints: StreamHints<'_>) -> Result<Self, DecodeError> {
        let shared = SharedSource::new(source);
        let furthest_read = shared.furthest.clone();
        let mss = MediaSourceStream::new(
            Box::new(shared.clone()),
            MediaSourceStreamOptions::default(),
        );
        let mut hint = Hint::new();
        if let Some(m) = hints.mime {
            hint.mime_type(m);
        }
        let format = probe()
            .probe(
                &hint,
                mss,
                FormatOptions::default(),
                MetadataOptions::default(),
            )
            .map_err(|e| match e {
                SymError::IoError(io) => DecodeError::Io(io.to_string()),
                other => DecodeError::Unsupported(other.to_string()),
            })?;
        let short_name = format.format_info().short_name;
        let is_mpa = ["mp1", "mp2", "mp3"].contains(&short_name);
        // isomp4 too: its coarse mode is the sync-sample index.
        let coarse_seek = short_name.contains("mp");
        let track = format
            .default_track(TrackType::Audio)
            .ok_or_else(|| DecodeError::Unsupported("no audio track".into()))?;
        let params = track
            .codec_params
            .as_ref()
            .and_then(|p| p.audio())
            .ok_or_else(|| DecodeError::Unsupported("no audio codec parameters".into()))?;
        let decoder = codecs()
            .make_audio_decoder(params, &AudioDecoderOptions::default())
            .map_err(sym_err)?;
        let rate = params
            .sample_rate
            .ok_or_else(|| DecodeError::Unsupported("unknown sample rate".into()))?;
        let channels = params.channels.as_ref().map(|c| c.count()).unwrap_or(0);
        let time_base = track.time_base;
        let duration = match (track.num_frames, time_base) {
            (Some(n), _) => Some(n as f64 / rate as f64),
            (None, Some(tb)) => track
                .duration
                .and_then(|d| tb.calc_duration(d))
                .map(|t| t.as_secs_f64()),
            _ => None,
        };
        let track_id = track.id;
        let codec = params.codec;
        let lossless = [CODEC_ID_FLAC, CODEC_ID_ALAC].contains(&codec)
            || format.format_info().short_name == "wave";
        // symphonia's mp4 reader does not apply the edit list; AAC encoders
        // prime with 1024 frames (ffmpeg, fdk; Apple uses 2112 and says so).
        let delay = if codec == CODEC_ID_AAC && track.delay.is_none() {
            1024
        } else if codec == CODEC_ID_OPUS {
            // symphonia's Ogg reader declares the pre-skip as the track's
            // delay but leaves it in the packets' timeline and in the frame
            // count. (Its Matroska reader declares none and starts the
            // timeline at -pre-skip already, to the millisecond.)
            u64::from(track.delay.unwrap_or(0))
        } else {
            0
        };
        let duration = match duration {
            Some(d) if codec == CODEC_ID_OPUS => Some((d - delay as f64 / rate as f64).max(0.0)),
            other => other,
        };
        let mut dec = Self {
            demux: Demux::Symphonia(format),
            decoder,
            track_id,
            time_base,
            rate,
            channels,
            coarse_seek,
            lossless,
            delay,
            skip_until: (delay > 0).then_some(0.0),
            next_time: 0.0,
            measured: duration.is_some(),
            duration,
            end_time: None,
            scratch: Vec::new(),
            furthest_read,
        };
        if is_mpa {
            dec.use_mpa_demuxer(shared, hints)?;
        }
        Ok(dec)
    }

    /// Replace symphonia's mp3 reader by ours (see the module docs).
    fn use_mpa_demuxer(
        &mut self,
        source: SharedSource,
        hints: StreamHints<'_>,
    ) -> Result<(), DecodeError> {
        let len = source.byte_len();
        let map_for = hints.seek_map.unwrap_or_else(|| {
            Box::new(|first| Arc::new(Mutex::new(super::mpa::seek_map::SeekMap::new(first, 0))))
        });
        let mut demux = MpaDemuxer::open(source, len, map_for, hints.duration, hints.ranges)
            .map_err(|e| {
                if e.kind() == std::io::ErrorKind::InvalidData {
                    DecodeError::Unsupported(e.to_string())
                } else {
                    DecodeError::Io(e.to_string())
                }
            })?;
        if let Some(limit) = hints.count_limit {
            demux.set_count_limit(limit);
        }
        let rate = demux.sample_rate();
        self.rate = rate;
        self.time_base =
            std::num::NonZero::new(rate).map(|r| TimeBase::new(std::num::NonZero::<u32>::MIN, r));
        self.end_time = demux.total_samples().map(|n| n as f64 / rate as f64);
        // symphonia's figure for an mp3 is its own guess.
        self.measured = false;
        if let Some(n) = demux.measured_samples() {
            self.duration = Some(n as f64 / rate as f64);
            self.measured = true;
        } else if let Some(d) = hints.duration {
            self.duration = Some(d);
        } else if let Some(n) = demux.estimated_samples() {
            self.duration = Some(n / rate as f64);
        }
        if demux.delay() > 0 {
            self.skip_until = Some(0.0);
        }
        self.coarse_seek = true;
        self.demux = Demux::Mpa(Box::new(demux));
        Ok(())
    }

    /// True when the last seek landed on an estimate (an mp3 region with no
    /// exact index point near it): timestamps from here on are estimates.
    pub fn approximate(&self) -> bool {
        match &self.demux {
            Demux::Mpa(m) => !m.is_exact(),
            Demux::Symphonia(_) => false,
        }
    }

    /// The stream's duration in seconds, when the container says (or,
    /// for an mp3 without a frame count, the hint or an estimate).
    pub fn duration(&self) -> Option<f64> {
        self.duration
    }

    /// The stream's length as the stream itself says, once known: a
    /// container's or tag's figure, or every mp3 frame counted (an index,
    /// a count beside playback, or playback to the end). Never a hint.
    pub fn measured_duration(&self) -> Option<f64> {
        match &self.demux {
            Demux::Mpa(m) => m
                .measured_samples()
                .map(|n| n as f64 / f64::from(m.sample_rate())),
            Demux::Symphonia(_) => self.duration.filter(|_| self.measured),
        }
    }

    /// Position the decoder so the next frame returned is at `secs`.
    pub fn seek(&mut self, secs: f64) -> Result<(), DecodeError> {
        let secs = secs.max(0.0);
        if secs < 0.001 && self.next_time < 0.001 && self.delay == 0 {
            return Ok(());
        }
        // Lossy decoders need a little audio before the target to rebuild
        // their state (MDCT overlap, mp3 bit reservoir): seek earlier and
        // drop the pre-roll.
        let preroll = if self.lossless { 0.0 } else { PREROLL };
        if let Demux::Mpa(m) = &mut self.demux {
            // The bit reservoir reaches back up to 511 bytes: at 8 kb/s
            // that is 20 frames, more than 0.2 s.
            let spf = m.samples_per_frame() as f64;
            let frames = (preroll * self.rate as f64 / spf)
                .ceil()
                .max(MPA_PREROLL_FRAMES);
            let target = (secs * self.rate as f64).floor() as i64;
            let pts = m
                .seek(target, frames as u64)
                .map_err(|e| DecodeError::Io(e.to_string()))?;
            self.decoder.reset();
            self.next_time = pts as f64 / self.rate as f64;
            self.skip_until = Some(secs);
            return Ok(());
        }
        let time = Time::try_from_secs_f64((secs - preroll).max(0.0) + self.delay_secs())
            .ok_or_else(|| DecodeError::Corrupt(format!("bad seek target {secs}")))?;
        let mode = if self.coarse_seek {
            SeekMode::Coarse
        } else {
            SeekMode::Accurate
        };
        let Demux::Symphonia(format) = &mut self.demux else {
            return Ok(());
        };
        match format.seek(
            mode,
            SeekTo::Time {
                time,
                track_id: Some(self.track_id),
            },
        ) {
            Ok(seeked) => {
                self.decoder.reset();
                self.next_time = self
                    .ts_secs(seeked.actual_ts)
                    .map(|t| t - self.delay_secs())
                    .unwrap_or(secs);
                self.skip_until = Some(secs);
                Ok(())
            }
            // Past the end (e.g. a duration estimate was long, or a finished
            // book restored to its very end; flac's seek then reads past
            // EOF): nothing left. A truncated file is still caught by the
            // pipeline, which compares where audio stopped with the length.
            Err(SymError::IoError(e)) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                self.skip_until = Some(f64::INFINITY);
                Ok(())
            }
            Err(SymError::SeekError(_)) => {
                self.skip_until = Some(f64::INFINITY);
                Ok(())
            }
            Err(e) => Err(sym_err(e)),
        }
    }

    fn delay_secs(&self) -> f64 {
        self.delay as f64 / self.rate.max(1) as f64
    }

    fn ts_secs(&self, ts: Timestamp) -> Option<f64> {
        let tb = self.time_base?;
        tb.calc_time(ts).map(|t| t.as_secs_f64())
    }

    /// The next decoded run, or `None` at the end of the stream.
    /// The next packet of our track (`None`: the end). A damaged one is
    /// skipped and counted in `bad`; each look counts against `idle`.
    fn read_packet(
        &mut self,
        idle: &mut Idle,
        bad: &mut u32,
    ) -> Result<Option<Packet>, DecodeError> {
        loop {
            idle.packet(self.furthest_read.load(Ordering::Relaxed))?;
            let next = match &mut self.demux {
                Demux::Symphonia(f) => f.next_packet(),
                Demux::Mpa(m) => match m.next_packet() {
                    Ok(p) => Ok(p.map(|p| {
                        Packet::new(
                            self.track_id,
                            Timestamp::new(p.pts),
                            SymDuration::new(1),
                            p.data,
                        )
                    })),
                    Err(e) => Err(SymError::IoError(e)),
                },
            };
            let packet = match next {
                Ok(Some(p)) => p,
                Ok(None) => return Ok(None),
                Err(SymError::IoError(e)) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                    return Ok(None);
                }
                Err(SymError::ResetRequired) => return Ok(None),
                Err(SymError::DecodeError(m)) => {
                    *bad += 1;
                    if *bad > MAX_BAD_PACKETS {
                        return Err(DecodeError::Corrupt(m.to_string()));
                    }
                    continue;
                }
                Err(e) => return Err(sym_err(e)),
            };
            if packet.track_id == self.track_id {
                return Ok(Some(packet));
            }
        }
    }

    pub fn next_block(&mut self) -> Result<Option<Decoded>, DecodeError> {
        let mut bad = 0u32;
        let mut idle = Idle::new(self.furthest_read.load(Ordering::Relaxed));
        loop {
            let Some(packet) = self.read_packet(&mut idle, &mut bad)? else {
                return Ok(None);
            };
            let delay = self.delay_secs();
            let pts = self.ts_secs(packet.pts).map(|t| t - delay);
            let mpa = matches!(self.demux, Demux::Mpa(_));
            let buf = match self.decoder.decode(&packet) {
                Ok(b) => b,
                Err(SymError::DecodeError(m)) => {
                    bad += 1;
                    if bad > MAX_BAD_PACKETS {
                        return Err(DecodeError::Corrupt(m.to_string()));
                    }
                    continue;
                }
                Err(SymError::IoError(e)) => return Err(DecodeError::Io(e.to_string())),
                Err(e) => return Err(sym_err(e)),
            };
            bad = 0;
            let frames = buf.frames();
            if frames == 0 {
                continue;
            }
            let channels = buf.spec().channels().count().max(1);
            let rate = buf.spec().rate();
            self.channels = channels;
            self.rate = rate;
            buf.copy_to_vec_interleaved::<f32>(&mut self.scratch);
            // mp3 pts start negative (encoder delay); skip_until drops that.
            let start = pts
                .filter(|p| mpa || *p >= -delay - 1e-9)
                .unwrap_or(self.next_time);
            let end = start + frames as f64 / rate as f64;
            self.next_time = end;
            let mut samples = std::mem::take(&mut self.scratch);
            samples.truncate(frames * channels);
            if let Some(stop) = self.end_time
                && end > stop
            {
                // Encoder padding.
                let keep = ((stop - start).max(0.0) * rate as f64).round() as usize;
                samples.truncate(keep.min(frames) * channels);
                if samples.is_empty() {
                    return Ok(None);
                }
            }
            let mut start = start;
            if let Some(target) = self.skip_until {
                if end <= target {
                    self.scratch = samples;
                    idle.reached(end);
                    continue;
                }
                if start < target {
                    let drop_frames = (((target - start) * rate as f64).round() as usize)
                        .min(samples.len() / channels);
                    samples.drain(..drop_frames * channels);
                    start += drop_frames as f64 / rate as f64;
                }
                self.skip_until = None;
            }
            return Ok(Some(Decoded {
                rate,
                channels,
                start,
                samples,
                approximate: self.approximate(),
            }));
        }
    }
}
