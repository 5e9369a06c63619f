//! An HTTP stream as a blocking `Read + Seek` for the decoder.
//!
//! A prefetch task on a small network runtime downloads ahead of the reader
//! into a bounded window; the reader (the pipeline thread) only copies from
//! that window and waits on a condvar. Seeks outside the window restart the
//! download with a Range request (`bytes=N-`); servers that ignore Range get
//! a progressive download that skips to the offset. A broken connection is
//! retried with back-off from the same byte offset. A refusal (an error
//! status, or a success whose body is not audio by its first bytes or its
//! type, see `http_error::sniff`) is never decoded: the judge of the layer
//! above (`EngineConfig::judge`) says what it means, and it is fatal.
//! A `file://` URL (a downloaded book) is read from disk the same way, with
//! no network at all.
//!
//! Here: the window, the reader (`Read + Seek`) and its monitor; `fetch`:
//! the task that fills the window; `ranges`: bounded reads beside it;
//! `answer`: what an answer is before its body is decoded.

mod answer;
mod fetch;
mod heads;
mod ranges;
mod request;

pub use heads::open_ahead;
pub use ranges::HttpRanges;

use super::{ErrorKind, RefusalJudge};
use crate::domain::locks::lock;
use std::io::{self, Read, Seek, SeekFrom};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// One HTTP GET: absolute URL and extra headers (e.g. `Authorization`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamRequest {
    pub url: String,
    pub headers: Vec<(String, String)>,
}

/// An answer on a stream that is not audio to play: an error status (a
/// 4xx other than 416), or a success whose body is not audio (`{`, `[`,
/// `<` first, or a JSON, HTML or text type without an audio signature).
/// The judge of the layer above says what it means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub status: u16,
    pub content_type: Option<String>,
    /// The body's first bytes (at most [`REFUSAL_BODY_MAX`]).
    pub body: Vec<u8>,
}

/// Bytes of a refusal's body kept for its judge.
pub const REFUSAL_BODY_MAX: usize = 64 * 1024;

/// Why a stream cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SourceError {
    /// The server refused the stream; judged by `EngineConfig::judge`.
    #[error("{message}")]
    Refused { kind: ErrorKind, message: String },
    #[error("{0}")]
    Http(String),
    #[error("cancelled")]
    Cancelled,
}

/// Bytes kept behind the reader (decoders step back a little).
const KEEP_BEHIND: u64 = 512 * 1024;
/// The most bytes downloaded ahead of the reader before the task waits
/// (default; `EngineConfig::read_ahead`).
pub const READ_AHEAD: u64 = 8 * 1024 * 1024;
/// Once a stream's bitrate is known, it downloads this many seconds of
/// audio ahead (an outage this long plays on), within the floor and the
/// ceiling: 1 MiB (2 min 11 s) of a 64 kb/s book instead of 17 minutes'
/// 8 MiB, 1.9 MB of a 128 kb/s one.
pub const READ_AHEAD_SECS: f64 = 120.0;
/// Bytes ahead before the bitrate is known, and at least after.
pub const READ_AHEAD_FLOOR: u64 = 1024 * 1024;
/// The window drops what lies further behind the reader than
/// `KEEP_BEHIND` in steps of at least this.
const DROP_BEHIND_STEP: usize = 256 * 1024;

/// Bytes to download ahead of the reader for a stream of `bytes_per_sec`
/// (`None`: unknown, so `ceiling`, which also bounds it).
pub fn read_ahead_for(bytes_per_sec: Option<f64>, ceiling: u64) -> u64 {
    match bytes_per_sec {
        Some(r) if r.is_finite() && r > 0.0 => {
            ((r * READ_AHEAD_SECS) as u64).clamp(READ_AHEAD_FLOOR.min(ceiling), ceiling)
        }
        _ => ceiling,
    }
}
/// The smallest read-ahead.
const MIN_READ_AHEAD: u64 = 64 * 1024;
/// A forward seek this close to the downloaded end waits instead of restarting.
const FORWARD_SLACK: u64 = 256 * 1024;
/// A connection that delivers nothing for this long is retried.
const CHUNK_TIMEOUT: Duration = Duration::from_secs(3);
/// A reader waiting on a stalled stream re-checks this often (every
/// change notifies it anyway; this is only a safety net).
const STALLED_RECHECK: Duration = Duration::from_secs(1);

#[derive(Default)]
struct Window {
    start: u64,
    data: Vec<u8>,
    /// Where the reader is; the task restarts when `restart` is set.
    want: u64,
    restart: bool,
    total: Option<u64>,
    ranges: bool,
    headers_seen: bool,
    eof: bool,
    fatal: Option<SourceError>,
    cancel: bool,
    stalled: bool,
    generation: u64,
    /// Bounded range reads are running: the reader is about to jump, so the
    /// download pauses (hangs up) until the reader reads again.
    hold: bool,
    /// The content type of the answer accepted as audio from byte 0.
    accepted_type: Option<String>,
    /// Started from a kept head: nothing is fetched until the reader
    /// nears its end or seeks past it (a seek's first request is where it
    /// lands, not the head again).
    lazy: bool,
    /// The head of this stream was kept (see `heads`).
    head_kept: bool,
}

impl Window {
    fn end(&self) -> u64 {
        self.start + self.data.len() as u64
    }
}

struct Shared {
    w: Mutex<Window>,
    data_ready: Condvar,
    wake_task: Notify,
    stall_after: Duration,
    /// Bytes ahead of the reader; set once the bitrate is known.
    read_ahead: AtomicU64,
    judge: RefusalJudge,
    /// The connection pool every request of this stream goes out on.
    http: std::sync::Arc<dyn crate::player::StreamPool>,
    /// The stream's key among the kept heads.
    key: String,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Window> {
        lock(&self.w)
    }

    fn read_ahead(&self) -> u64 {
        self.read_ahead.load(Ordering::Relaxed)
    }

    /// Waits for news of the window (data, EOF, a fatal error and `cancel`
    /// all notify), marking it stalled once the reader has waited
    /// `stall_after` since `since`: the time-out only marks the stall (then
    /// a slow safety net, not a poll).
    fn wait<'a>(&'a self, mut w: MutexGuard<'a, Window>, since: Instant) -> MutexGuard<'a, Window> {
        if since.elapsed() >= self.stall_after {
            w.stalled = true;
        }
        let wait = if w.stalled {
            STALLED_RECHECK
        } else {
            self.stall_after.saturating_sub(since.elapsed())
        };
        self.data_ready
            .wait_timeout(w, wait.max(Duration::from_millis(1)))
            .unwrap_or_else(|e| e.into_inner())
            .0
    }
}

fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("earmark-net")
            .enable_all()
            .build()
            .expect("network runtime")
    })
}

/// Read-only view of a stream's health for the engine.
#[derive(Clone)]
pub struct SourceMonitor(Arc<Shared>);

impl SourceMonitor {
    pub fn stalled(&self) -> bool {
        self.0.lock().stalled
    }
    /// The fatal error that ended the stream, if any.
    pub fn fatal(&self) -> Option<SourceError> {
        self.0.lock().fatal.clone()
    }
    /// Download `bytes` ahead of the reader from now on (at least 64 KiB).
    pub fn set_read_ahead(&self, bytes: u64) {
        self.0
            .read_ahead
            .store(bytes.max(MIN_READ_AHEAD), Ordering::Relaxed);
        // A task waiting for the reader re-checks against the new size.
        self.0.wake_task.notify_one();
    }

    /// Wake a reader blocked in `read` and make it fail with `Cancelled`.
    pub fn cancel(&self) {
        self.0.lock().cancel = true;
        self.0.data_ready.notify_all();
        self.0.wake_task.notify_one();
    }
}

/// A blocking, seekable reader over an HTTP resource.
pub struct HttpSource {
    shared: Arc<Shared>,
    pos: u64,
    req: StreamRequest,
}

impl HttpSource {
    /// Start downloading without waiting, at most `read_ahead` bytes ahead
    /// of the reader (see [`SourceMonitor::set_read_ahead`]), on `http`'s
    /// connection pool (the session's one, shared with the API: see
    /// `EngineConfig::pool`), else the player's own.
    pub fn start_on(
        http: Option<std::sync::Arc<dyn crate::player::StreamPool>>,
        req: StreamRequest,
        stall_after: Duration,
        read_ahead: u64,
        judge: RefusalJudge,
    ) -> Self {
        Self::spawn(http, req, stall_after, read_ahead, judge, None)
    }

    /// [`HttpSource::start_on`], or without a request for what the player
    /// has of the stream already: the stream opened ahead for this request
    /// ([`open_ahead`]), else (`reuse_head`) its kept head, from which the
    /// decoder probes while the first request goes where the reader wants.
    /// A load or a retry does not reuse a head: the server says again
    /// whether it may be played.
    pub fn reopen(
        http: Option<std::sync::Arc<dyn crate::player::StreamPool>>,
        req: StreamRequest,
        stall_after: Duration,
        read_ahead: u64,
        judge: RefusalJudge,
        reuse_head: bool,
    ) -> Self {
        let key = heads::key(&req);
        if let Some(src) = heads::take_parked(&key) {
            src.monitor().set_read_ahead(read_ahead);
            return src;
        }
        let head = heads::head(&key).filter(|_| reuse_head);
        Self::spawn(http, req, stall_after, read_ahead, judge, head)
    }

    fn spawn(
        http: Option<std::sync::Arc<dyn crate::player::StreamPool>>,
        req: StreamRequest,
        stall_after: Duration,
        read_ahead: u64,
        judge: RefusalJudge,
        head: Option<heads::Head>,
    ) -> Self {
        let from_head = head.is_some();
        let (data, total, accepted_type) = match head {
            Some(h) => (h.bytes.to_vec(), h.total, h.content_type),
            None => (Vec::new(), None, None),
        };
        let shared = Arc::new(Shared {
            w: Mutex::new(Window {
                data,
                total,
                ranges: from_head,
                headers_seen: from_head,
                accepted_type,
                lazy: from_head,
                head_kept: from_head,
                ..Window::default()
            }),
            data_ready: Condvar::new(),
            wake_task: Notify::new(),
            stall_after,
            read_ahead: AtomicU64::new(read_ahead.max(MIN_READ_AHEAD)),
            judge,
            http: http.unwrap_or_else(request::default_pool),
            key: heads::key(&req),
        });
        let task_shared = shared.clone();
        runtime().spawn(fetch::fetch_task(task_shared, req.clone()));
        HttpSource {
            shared,
            pos: 0,
            req,
        }
    }

    /// Wait for the response headers (so the length and Range support are
    /// known), through network failures (reported as stalled) until the
    /// server answers, a fatal status, or `cancel`.
    pub fn wait_headers(&self) -> Result<(), SourceError> {
        let mut w = self.shared.lock();
        let began = Instant::now();
        loop {
            if let Some(e) = &w.fatal {
                return Err(e.clone());
            }
            if w.cancel {
                return Err(SourceError::Cancelled);
            }
            if w.headers_seen {
                return Ok(());
            }
            w = self.shared.wait(w, began);
        }
    }

    pub fn monitor(&self) -> SourceMonitor {
        SourceMonitor(self.shared.clone())
    }

    pub fn len(&self) -> Option<u64> {
        self.shared.lock().total
    }

    pub fn is_empty(&self) -> bool {
        self.len() == Some(0)
    }

    /// Bounded range reads of this stream, when its server honours Range
    /// (known once the headers are in).
    pub fn range_reader(&self) -> Option<HttpRanges> {
        self.shared.lock().ranges.then(|| HttpRanges {
            shared: self.shared.clone(),
            req: self.req.clone(),
        })
    }
}
impl Drop for HttpSource {
    fn drop(&mut self) {
        self.monitor().cancel();
    }
}

impl Read for HttpSource {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let shared = self.shared.clone();
        let mut w = shared.lock();
        let mut waiting_since: Option<Instant> = None;
        loop {
            if w.cancel {
                return Err(io::Error::new(io::ErrorKind::Interrupted, "cancelled"));
            }
            if let Some(e) = &w.fatal {
                return Err(io::Error::other(e.to_string()));
            }
            if w.hold {
                w.hold = false;
                shared.wake_task.notify_one();
            }
            let pos = self.pos;
            if pos >= w.start && pos < w.end() {
                let off = (pos - w.start) as usize;
                let n = buf.len().min(w.data.len() - off);
                buf[..n].copy_from_slice(&w.data[off..off + n]);
                self.pos += n as u64;
                w.want = self.pos;
                w.stalled = false;
                // A task that is far enough ahead waits until the reader
                // has used half the read-ahead: wake it only then, not on
                // every read (a finished download only waits for a seek).
                if !w.eof && w.end() < w.want + shared.read_ahead() / 2 {
                    shared.wake_task.notify_one();
                }
                return Ok(n);
            }
            if let Some(total) = w.total
                && pos >= total
            {
                return Ok(0);
            }
            if w.eof && pos >= w.end() && w.total.is_none() {
                return Ok(0);
            }
            let in_reach = pos >= w.start && pos <= w.end() + FORWARD_SLACK;
            if !(in_reach || (w.restart && w.want == pos)) {
                w.restart = true;
                w.eof = false;
            }
            // Starving: always tell the task (at most once per wake-up
            // here), so a task waiting for room is never left waiting.
            w.want = pos;
            shared.wake_task.notify_one();
            let since = *waiting_since.get_or_insert_with(Instant::now);
            w = shared.wait(w, since);
        }
    }
}

impl Seek for HttpSource {
    fn seek(&mut self, from: SeekFrom) -> io::Result<u64> {
        let total = self.shared.lock().total;
        let target = match from {
            SeekFrom::Start(n) => Some(n as i128),
            SeekFrom::Current(d) => Some(self.pos as i128 + d as i128),
            SeekFrom::End(d) => total.map(|t| t as i128 + d as i128),
        };
        match target {
            Some(t) if t >= 0 => {
                self.pos = t as u64;
                Ok(self.pos)
            }
            Some(_) => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "seek before the start of the stream",
            )),
            None => Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "the stream's length is unknown",
            )),
        }
    }
}

impl symphonia::core::io::MediaSource for HttpSource {
    fn is_seekable(&self) -> bool {
        self.shared.lock().total.is_some()
    }
    fn byte_len(&self) -> Option<u64> {
        self.shared.lock().total
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_ahead_is_two_minutes_of_audio_within_the_floor_and_ceiling() {
        let kbps = |k: f64| Some(k * 1000.0 / 8.0);
        assert_eq!(read_ahead_for(kbps(128.0), READ_AHEAD), 1_920_000);
        // A low bitrate keeps the floor; a high one stops at the ceiling.
        assert_eq!(read_ahead_for(kbps(64.0), READ_AHEAD), READ_AHEAD_FLOOR);
        assert_eq!(read_ahead_for(kbps(1000.0), READ_AHEAD), READ_AHEAD);
        // Unknown or nonsense rates keep the ceiling (the old behaviour).
        for r in [None, Some(0.0), Some(-1.0), Some(f64::NAN)] {
            assert_eq!(read_ahead_for(r, READ_AHEAD), READ_AHEAD);
        }
        // A ceiling under the floor (tests) wins.
        assert_eq!(read_ahead_for(kbps(64.0), 64 * 1024), 64 * 1024);
    }
}
