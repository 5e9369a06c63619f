//! Counting an mp3 stream's frames beside playback: frame headers walked
//! from an exact point forward through bounded range reads (headers only,
//! no decoding), an exact point recorded in the stream's seek map every
//! [`POINT_EVERY`] frames. A seek that would land on an estimate waits a
//! moment for the count to pass its target and then lands exactly; when
//! the count is slower, the seek lands on the estimate and the count goes
//! on, so the demuxer meets a recorded point in the audio it plays and
//! corrects its timestamps (see `MpaDemuxer::next_packet`).

use super::bytes::RangeReader;
use super::frame::{FrameHeader, FrameWalker};
use super::seek_map::POINT_EVERY;
use super::{SharedSeekMap, lock};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// The most bytes one count reads by default: past this the landing stays
/// an estimate (70 min of a 64 kb/s stream, over 2 h at 32 kb/s).
pub const COUNT_BYTES: u64 = 32 * 1024 * 1024;
/// Bytes of each range read, and how many are asked for at once.
const READ: usize = 512 * 1024;
const READS_AT_ONCE: usize = 4;
/// The count goes this far past the byte the demuxer asked for, so that a
/// recorded point lies ahead of the demuxer when it reads on.
const MARGIN: u64 = 64 * 1024;

/// A count running on its own thread; dropping it stops the thread.
pub struct Count {
    state: Arc<State>,
}

struct State {
    /// Walk at least this far (the demuxer moves it on as it plays).
    until: AtomicU64,
    /// And past this frame (a seek's target).
    until_frame: u64,
    cancelled: AtomicBool,
    /// (frames walked, finished) for waiters.
    progress: Mutex<(u64, bool)>,
    changed: Condvar,
}

impl State {
    fn set(&self, frames: u64, finished: bool) {
        let mut p = lock(&self.progress);
        *p = (frames, finished);
        self.changed.notify_all();
    }
}

/// Where a count starts and what it may read.
pub struct CountFrom {
    pub reference: FrameHeader,
    /// An exact point: frame `frame` starts at byte `byte`.
    pub byte: u64,
    pub frame: u64,
    /// The stream's length in bytes, when known.
    pub len: Option<u64>,
    /// The most bytes to read ([`COUNT_BYTES`] by default).
    pub limit: u64,
}

impl Count {
    /// Count from `from` until past byte `until` and frame `until_frame`
    /// (at most `from.limit` bytes), recording exact points in `map`. `None`
    /// when the thread cannot start.
    pub fn start(
        ranges: Arc<dyn RangeReader>,
        map: SharedSeekMap,
        from: CountFrom,
        until: (u64, u64),
    ) -> Option<Count> {
        let state = Arc::new(State {
            until: AtomicU64::new(until.0),
            until_frame: until.1,
            cancelled: AtomicBool::new(false),
            progress: Mutex::new((from.frame, false)),
            changed: Condvar::new(),
        });
        let s = state.clone();
        let started = std::thread::Builder::new()
            .name("earmark-mp3-count".into())
            .spawn(move || {
                let frames = run(&*ranges, &map, &from, &s);
                s.set(frames, true);
            });
        match started {
            Ok(_) => Some(Count { state }),
            Err(e) => {
                tracing::warn!("cannot start counting mp3 frames: {e}");
                None
            }
        }
    }

    /// Count at least up to `byte` (the demuxer reads there, still on an
    /// estimate).
    pub fn extend_to(&self, byte: u64) {
        if self.state.until.fetch_max(byte, Ordering::SeqCst) < byte {
            let _p = self.state.progress.lock();
            self.state.changed.notify_all();
        }
    }

    /// Wait until the count walked past frame `frame`, or `timeout`
    /// passed, or the count ended; whether it walked past it.
    pub fn wait_past(&self, frame: u64, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut p = lock(&self.state.progress);
        loop {
            if p.0 > frame {
                return true;
            }
            let now = Instant::now();
            if p.1 || now >= deadline {
                return false;
            }
            p = self
                .state
                .changed
                .wait_timeout(p, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

impl Drop for Count {
    fn drop(&mut self) {
        self.state.cancelled.store(true, Ordering::SeqCst);
        let _p = self.state.progress.lock();
        self.state.changed.notify_all();
    }
}

/// The count's thread: read, walk, record; park while it is ahead of the
/// demuxer; end when cancelled, at the stream's end, at the budget or on a
/// read that fails.
/// Returns the frames walked.
fn run(ranges: &dyn RangeReader, map: &SharedSeekMap, from: &CountFrom, s: &State) -> u64 {
    let mut walk = FrameWalker::new(from.reference, from.byte, from.frame);
    let limit = from.byte.saturating_add(from.limit);
    let mut pos = from.byte;
    let mut grow = 1;
    loop {
        if s.cancelled.load(Ordering::SeqCst) || pos >= limit {
            return walk.frames();
        }
        if walk.frames() > s.until_frame
            && walk.next_byte() > s.until.load(Ordering::SeqCst).saturating_add(MARGIN)
        {
            // Ahead of the demuxer: wait until it asks for more.
            let p = lock(&s.progress);
            let _ = s.changed.wait_timeout(p, Duration::from_millis(250));
            continue;
        }
        let wanted: Vec<(u64, usize)> = (0..READS_AT_ONCE as u64)
            .map(|k| (pos + k * (READ * grow) as u64, READ * grow))
            .collect();
        let (mut read, mut failed) = (Vec::with_capacity(READS_AT_ONCE * READ * grow), false);
        for r in ranges.read_ranges(&wanted) {
            match r {
                Ok(b) => {
                    let short = b.len() < READ * grow;
                    read.extend_from_slice(&b);
                    if short {
                        break;
                    }
                }
                Err(e) => {
                    tracing::debug!("mp3 frame count: a read at byte {pos} failed: {e}");
                    failed = true;
                    break;
                }
            }
        }
        let short = read.len() < READS_AT_ONCE * READ * grow;
        let eof = !failed && (short || from.len.is_some_and(|l| pos + read.len() as u64 >= l));
        let need = walk.walk(pos, &read, eof, |byte, frame| {
            if frame.is_multiple_of(POINT_EVERY) {
                lock(map).record(byte, frame);
            }
        });
        if eof {
            let end = walk.next_byte().min(pos + read.len() as u64);
            lock(map).set_counted_end(end, walk.frames());
            return walk.frames();
        }
        if failed {
            return walk.frames();
        }
        s.set(walk.frames(), false);
        // No progress: a frame after junk whose successor lies further on.
        grow = if need == pos { grow * 2 } else { 1 };
        pos = need;
    }
}
