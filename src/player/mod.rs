//! The audio engine: HTTP source, decode, skip silence (`silence`),
//! pitch-preserving stretch, the book's loudness (`loudness`: boost,
//! EBU R128 normalisation, true-peak `limiter`), output (device or null)
//! and the engine thread that owns playback.
//!
//! Public API (everything else is internal):
//! - [`Engine::spawn`] starts the engine thread and returns an [`EngineHandle`].
//! - [`EngineHandle::send`] queues a [`Command`]; it never blocks.
//! - [`EngineHandle::state`] returns the latest [`PlayerState`] snapshot, and
//!   [`EngineHandle::subscribe`] a `tokio::sync::watch::Receiver` of it. Both
//!   read a published value: readers never wait on I/O or on the engine.
//! - Positions are media time (seconds of audio, independent of speed) and
//!   every snapshot carries the [`PlaybackId`] of the `Load` it belongs to.
//!   After a `Load`/`Seek` the published position is the target (never a
//!   transient 0 or a previous chapter's value) and `landed` turns true once
//!   audio from the target is being played.
//!
//! Threads: the engine thread (commands, state), one pipeline thread per
//! load/seek (source + decode, feeding [`render::Renderer`]), one prefetch
//! worker per open stream (network), and the output (rodio's callback thread
//! or the null output's clock thread), which only calls the renderer.

pub mod decode;
mod engine;
mod http_error;
mod limiter;
pub mod loudness;
pub mod mpa;
#[cfg(feature = "opus")]
mod opus;
pub mod output;
mod pipeline;
pub mod render;
pub mod silence;
pub mod source;
pub mod stretch;

use crate::domain::{ChapterId, Manifest, ManifestItem, SoundSettings};
use std::fmt;
use std::sync::Arc;

pub use engine::{Engine, EngineHandle};
pub use output::AudioMode;
pub use source::{Refusal, StreamRequest};

/// What a [`Refusal`] on a stream means: one of the answer kinds of
/// [`ErrorKind`] and a sentence for the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judgement {
    pub kind: ErrorKind,
    pub message: String,
}

/// Reads a stream's refusal the way every other endpoint's errors are
/// read. The player does not know the API's error bodies: the layer above
/// gives it one ([`EngineConfig::judge`]); the default knows only statuses
/// and a `license_required` code.
pub type RefusalJudge = Arc<dyn Fn(&Refusal) -> Judgement + Send + Sync>;

/// Identifies one `Load`: state with another id belongs to another playback.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct PlaybackId(pub u64);

impl fmt::Display for PlaybackId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Commands the engine understands. Positions are media seconds.
#[derive(Debug, Clone)]
pub enum Command {
    /// Replace the queue with `manifest` (kept in server order) and prepare
    /// playback at `start`. Playback starts paused unless `autoplay`.
    Load {
        manifest: Manifest,
        start: (ChapterId, f64),
        autoplay: bool,
    },
    Play,
    Pause,
    Seek {
        chapter: ChapterId,
        position: f64,
    },
    /// Skip by ± media seconds (the UI converts listened seconds with the speed).
    /// Crosses chapter boundaries.
    SkipBy(f64),
    NextChapter,
    /// Previous chapter, or restart the current one when more than 3 s in.
    PrevChapter,
    /// 0.5–3.0, applied live.
    SetSpeed(f32),
    /// 0.0–1.0.
    SetVolume(f32),
    /// Boost, normalisation and skip silence (kept across loads: the layer
    /// above sends each book's own). Gain changes apply within 100 ms;
    /// skip silence from the audio decoded next (up to ~2 s ahead).
    SetSound(SoundSettings),
    /// Open this item's stream now, before its `Load` (start-up, while the
    /// manifest and the place are read): the `Load` whose first stream is
    /// the same request takes it over instead of asking again.
    OpenAhead(ManifestItem),
    /// End the engine thread.
    Shutdown,
}

/// What the engine is doing.
#[derive(Debug, Clone, PartialEq)]
pub enum Status {
    /// Nothing loaded.
    Idle,
    Playing,
    Paused,
    /// Waiting for the first audio after a load, seek or chapter change.
    Buffering,
    /// The network stopped delivering; playback resumes by itself.
    Stalled,
    /// The whole manifest was played.
    Ended,
    Error(PlaybackError),
}

impl Status {
    pub fn name(&self) -> &'static str {
        match self {
            Status::Idle => "idle",
            Status::Playing => "playing",
            Status::Paused => "paused",
            Status::Buffering => "buffering",
            Status::Stalled => "stalled",
            Status::Ended => "ended",
            Status::Error(_) => "error",
        }
    }
}

/// Why playback stopped. The kinds a stream's answer can give
/// (`Unauthorized` … `Http`) are decided by [`EngineConfig::judge`] from a
/// [`Refusal`], never by the player itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Log in again (401).
    Unauthorized,
    /// The server's license is not valid (`license_required`).
    LicenseRequired,
    /// Any other refusal of access (403); the message carries the server's
    /// words for the layer above.
    Forbidden,
    /// The chapter does not exist (404).
    NotFound,
    /// The identity scope is wrong (409/428/400 `listening_scope_*`).
    Scope,
    /// The server rejected the request itself (another 4xx).
    Rejected,
    /// Another HTTP failure, or an answer that is neither audio nor a
    /// recognised error.
    Http,
    /// Truncated, corrupt or unsupported audio.
    Decode,
    /// A command named a chapter that is not in the manifest.
    UnknownChapter,
}

/// Why playback stopped; names the chapter when one is involved.
#[derive(Debug, Clone, PartialEq)]
pub struct PlaybackError {
    pub kind: ErrorKind,
    pub chapter: Option<ChapterId>,
    pub message: String,
}

impl fmt::Display for PlaybackError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.chapter {
            Some(ch) => write!(f, "chapter {ch}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

/// The published snapshot. Cheap to clone.
#[derive(Debug, Clone, PartialEq)]
pub struct PlayerState {
    /// Increments on every `Load`; 0 before the first.
    pub playback_id: PlaybackId,
    /// Bumped on every published change.
    pub version: u64,
    pub status: Status,
    pub chapter_id: Option<ChapterId>,
    /// Seconds into the chapter (relative to the item's `start`).
    pub position: f64,
    /// Seconds into the book, when every earlier chapter's length is
    /// known: as its stream says once decoded, else as the manifest says.
    pub book_position: Option<f64>,
    /// The chapter's length, when known: as its stream says once the
    /// decoder knows it (a container's or tag's figure, or every mp3 frame
    /// counted), else as the manifest says.
    pub duration: Option<f64>,
    /// Seconds into the chapter up to which audio is decoded ahead.
    pub buffered_to: f64,
    /// True once the last load/seek target is being played.
    pub landed: bool,
    /// True when `position` is an estimate the engine cannot vouch for:
    /// an mp3 seek that landed more than 30 s of frames and 1 MiB past
    /// every exact point (the stream's start, audio already played or
    /// counted) and whose frames up to the target could not be counted
    /// through range reads in time (within `mp3_count_limit`, 32 MiB by
    /// default, and 1.5 s), so the time was interpolated (Xing TOC, VBRI
    /// table, or a bitrate profile measured with 16 bounded Range reads of
    /// 16 KiB). Set before the first audio of that load/seek is queued and
    /// kept while the audio played is on the estimate. Cleared, and the
    /// position corrected to the true one (it jumps by the estimate's
    /// error), as soon as the decoder knows where it is: when the count
    /// going on beside playback, or a complete index of a local file
    /// (`mpa::SeekMaps::index_local_file`), reaches the audio playing; or
    /// by the next load/seek/chapter change that lands exactly. Never set
    /// for non-mp3 streams or CBR mp3s with a LAME `Info` tag. Every seek
    /// into the same 10 s cell lands on that cell's one estimate when
    /// nothing more was counted. Sync must not report such a position as
    /// exact; `earmark play --json` prints `"landed": "approximate"`.
    pub approximate: bool,
    pub speed: f32,
    pub volume: f32,
    pub sound: SoundSettings,
    /// Media seconds of silence skipped (played past) since this `Load`.
    pub silence_skipped: f64,
    /// The normalisation gain applied now, while normalising.
    pub norm_gain_db: Option<f32>,
}

impl Default for PlayerState {
    fn default() -> Self {
        Self {
            playback_id: PlaybackId(0),
            version: 0,
            status: Status::Idle,
            chapter_id: None,
            position: 0.0,
            book_position: None,
            duration: None,
            buffered_to: 0.0,
            landed: false,
            approximate: false,
            speed: 1.0,
            volume: 1.0,
            sound: SoundSettings::default(),
            silence_skipped: 0.0,
            norm_gain_db: None,
        }
    }
}

/// Turns a manifest item into the HTTP request that streams it (URL and
/// headers such as `Authorization`). `earmark::api::Client` provides one.
pub type StreamResolver = Arc<dyn Fn(&ManifestItem) -> StreamRequest + Send + Sync>;

/// The connection pools a stream's requests go out on, chosen per URL by
/// the layer above (the login's: shared with its API calls, HTTP/2 where
/// the server speaks it). Pools must follow no redirect (the player follows
/// them by hand, the token staying on its origin).
pub trait StreamPool: Send + Sync {
    /// The pool for a request to `url`.
    fn pool(&self, url: &str) -> reqwest::Client;
    /// A request to `url` on its pool failed with `error` before any
    /// answer: the pool to send it again on at once, when that pool was a
    /// guess that may have gone stale (h2c); `None`: the error stands.
    fn retry_pool(&self, url: &str, error: &reqwest::Error) -> Option<reqwest::Client>;
    /// The back-off states a 429 or 503 on a stream closes, shared with
    /// whoever else asks that server for audio (a login's downloads).
    fn throttles(&self) -> Arc<crate::domain::backoff::Throttles> {
        own_throttles()
    }
}

/// The player's own back-off states, for pools that have none.
fn own_throttles() -> Arc<crate::domain::backoff::Throttles> {
    use crate::domain::backoff::{Ladder, Throttles};
    use std::time::Duration;
    static T: std::sync::OnceLock<Arc<Throttles>> = std::sync::OnceLock::new();
    T.get_or_init(|| {
        Arc::new(Throttles::new(Ladder::new(
            Duration::from_secs(1),
            Duration::from_secs(60),
        )))
    })
    .clone()
}

/// One pool for every URL, nothing to fall back to.
impl StreamPool for reqwest::Client {
    fn pool(&self, _: &str) -> reqwest::Client {
        self.clone()
    }
    fn retry_pool(&self, _: &str, _: &reqwest::Error) -> Option<reqwest::Client> {
        None
    }
}

/// The pools a stream goes out on, asked for as each opens (the current
/// login's, so a new login's from its first stream).
pub type HttpPool = Arc<dyn Fn() -> Option<Arc<dyn StreamPool>> + Send + Sync>;

/// How to start the engine.
#[derive(Clone)]
pub struct EngineConfig {
    pub audio: AudioMode,
    pub resolve: StreamResolver,
    /// Null output only: how many times faster than real time its clock runs.
    /// 1.0 (the default) is real-time pacing; tests use more (and the
    /// binary's tests set `EARMARK_NULL_CLOCK_RATE`).
    pub null_clock_rate: f64,
    /// Null output only: keep a copy of every rendered sample (tests).
    pub capture: Option<output::Capture>,
    /// Seconds without data before a stream is reported `Stalled`.
    pub stall_after: f64,
    /// The most bytes each stream downloads ahead of the decoder; within
    /// it, `source::READ_AHEAD_SECS` of audio once the bitrate is known.
    pub read_ahead: u64,
    /// Loudness normalisation's target, LUFS.
    pub loudness_target: f32,
    /// What skip silence shortens.
    pub silence: silence::SilenceRule,
    /// Where mp3 frames are, per stream: learned while playing, or given
    /// by a complete index of a local file (`SeekMaps::index_local_file`).
    pub seek_maps: mpa::SeekMaps,
    /// What a stream's refusal (an error status, or a body that is not
    /// audio) means.
    pub judge: RefusalJudge,
    /// The streams' connection pool (`None`: the player's own).
    pub pool: Option<HttpPool>,
    /// How many bytes of an mp3 a far seek may count frames through
    /// before it lands (`None`: `mpa::count::COUNT_BYTES`; 0: never, every
    /// far seek lands on an estimate).
    pub mp3_count_limit: Option<u64>,
}

impl EngineConfig {
    pub fn new(audio: AudioMode, resolve: StreamResolver) -> Self {
        Self {
            audio,
            resolve,
            null_clock_rate: output::null_clock_rate_from_env(),
            capture: None,
            stall_after: 2.0,
            read_ahead: source::READ_AHEAD,
            loudness_target: DEFAULT_LOUDNESS_TARGET,
            silence: silence::SilenceRule::default(),
            seek_maps: mpa::SeekMaps::default(),
            judge: http_error::default_judge(),
            pool: None,
            mp3_count_limit: None,
        }
    }
}

/// Loudness normalisation's default target (LUFS): speech at a
/// comfortable level, with room for the limiter.
pub const DEFAULT_LOUDNESS_TARGET: f32 = -18.0;

/// Clamp a speed to what the engine supports (0.5–3.0).
pub fn clamp_speed(speed: f32) -> f32 {
    if speed.is_finite() {
        speed.clamp(0.5, 3.0)
    } else {
        1.0
    }
}
