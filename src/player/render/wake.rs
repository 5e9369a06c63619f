//! When the parked engine is woken: it arms for a set of reasons (every
//! edge, or only the output's ticks while playing), and the pipeline and
//! output threads wake it once, on the first edge it armed for. Waking
//! never blocks those threads.

use super::Renderer;
use crate::domain::locks::lock;
use std::sync::atomic::Ordering;

/// What wakes a parked engine (`Renderer::engine_armed`): a set of the
/// `WOKEN_BY_*` reasons below.
pub(super) const WAKE_NONE: u8 = 0;
/// A block queued (a paused or loading engine waits for its target).
pub(super) const WOKEN_BY_QUEUED: u8 = 1;
/// The output ran dry or got audio again.
pub(super) const WOKEN_BY_UNDERRUN: u8 = 2;
/// A position tick, the first audio after a load, the end, an error.
pub(super) const WOKEN_BY_OUTPUT: u8 = 4;
/// Any edge.
pub(super) const WAKE_ALL: u8 = WOKEN_BY_QUEUED | WOKEN_BY_UNDERRUN | WOKEN_BY_OUTPUT;
/// Playing: ticks and edges, not every queued block and not an underrun
/// (the engine's own check notices one that lasts; an output faster than
/// the decode runs dry at every block).
pub(super) const WAKE_PLAYING: u8 = WOKEN_BY_OUTPUT;
/// Buffering while playing: the output getting audio again, too.
pub(super) const WAKE_BUFFERING: u8 = WOKEN_BY_UNDERRUN | WOKEN_BY_OUTPUT;

pub(super) type Waker = Box<dyn Fn() + Send + Sync>;

impl Renderer {
    /// The callback that wakes the engine thread (called from the pipeline
    /// and output threads; it must not block).
    pub fn set_engine_waker(&self, waker: impl Fn() + Send + Sync + 'static) {
        *lock(&self.engine_waker) = Some(Box::new(waker));
    }

    /// Ask for one wake-up on the next published edge.
    pub fn arm_engine_wake(&self) {
        self.engine_armed.store(WAKE_ALL, Ordering::SeqCst);
    }

    /// Playing: wake the engine on the output's ticks and edges only (the
    /// pipeline queues a block every few ms). Keeps a wake-up already taken
    /// since `arm_engine_wake`.
    pub fn arm_engine_wake_playing(&self) {
        self.narrow_engine_wake(WAKE_PLAYING);
    }

    /// Buffering while playing: as [`Self::arm_engine_wake_playing`], and the
    /// end of the underrun.
    pub fn arm_engine_wake_buffering(&self) {
        self.narrow_engine_wake(WAKE_BUFFERING);
    }

    fn narrow_engine_wake(&self, to: u8) {
        let _ =
            self.engine_armed
                .compare_exchange(WAKE_ALL, to, Ordering::SeqCst, Ordering::SeqCst);
    }

    /// Wake the engine if it is armed for `reason` (one of `WOKEN_BY_*`).
    pub(super) fn wake_engine(&self, reason: u8) {
        let mut armed = self.engine_armed.load(Ordering::SeqCst);
        let taken = loop {
            if armed & reason == 0 {
                break false;
            }
            // The engine may narrow what it is armed for meanwhile: retry.
            match self.engine_armed.compare_exchange(
                armed,
                WAKE_NONE,
                Ordering::SeqCst,
                Ordering::SeqCst,
            ) {
                Ok(_) => break true,
                Err(now) => armed = now,
            }
        };
        if taken && let Some(w) = lock(&self.engine_waker).as_ref() {
            w();
        }
    }
}
