//! The chapter boundary: a decoder call that panics (a dependency's bug on
//! a hostile file) or reads on without producing audio fails its chapter
//! with [`DecodeError::Failed`], never the pipeline thread or the player.

use super::DecodeError;

/// Packets read in a row with no audio out, no progress in stream time and
/// no new byte read (empty or repeated decodes, a demuxer going round in
/// circles) before the stream is given up: a hostile file must not keep a
/// pipeline busy forever.
const MAX_IDLE_PACKETS: u32 = 10_000;

thread_local! {
    /// Set while this thread runs a decoder under [`catch_panics`].
    static CATCHING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs one decoder call (open, seek, next block) so that a panic in it,
/// a dependency's bug on a hostile file, becomes [`DecodeError::Failed`]
/// for this chapter instead of killing the pipeline thread and freezing
/// the player. Its panic message goes to the log only (see
/// [`quiet_caught_panics`]). The decoder that panicked must not be used
/// again.
pub fn catch_panics<T>(call: impl FnOnce() -> Result<T, DecodeError>) -> Result<T, DecodeError> {
    static QUIET: std::sync::Once = std::sync::Once::new();
    QUIET.call_once(quiet_caught_panics);
    let was = CATCHING.replace(true);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(call));
    CATCHING.set(was);
    result.unwrap_or_else(|payload| {
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "no message".into());
        Err(DecodeError::Failed(format!("the decoder failed: {what}")))
    })
}

/// Wraps the panic hook so that a panic [`catch_panics`] will catch is only
/// logged: the hooks installed before (the terminal's, which leaves the
/// alternate screen, and the default message on stderr) never see it.
/// [`catch_panics`] installs it on first use; a caller that installs a hook
/// later (the terminal's) calls this again after it.
pub fn quiet_caught_panics() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if CATCHING.get() {
            tracing::error!("decoder panic (caught, its chapter is reported undecodable): {info}");
        } else {
            previous(info);
        }
    }));
}

/// Counts the packets one `next_block` reads without progress: no audio
/// out, no new stream time reached (dropping audio before a seek target
/// is progress, decoding the same time again is not) and no new byte read.
pub(super) struct Idle {
    packets: u32,
    time: f64,
    byte: u64,
}

impl Idle {
    pub(super) fn new(byte: u64) -> Self {
        Self {
            packets: 0,
            time: f64::NEG_INFINITY,
            byte,
        }
    }

    /// One more packet, with the furthest byte read by now.
    pub(super) fn packet(&mut self, furthest_byte: u64) -> Result<(), DecodeError> {
        if furthest_byte > self.byte {
            self.byte = furthest_byte;
            self.packets = 0;
        }
        self.packets += 1;
        if self.packets > MAX_IDLE_PACKETS {
            return Err(DecodeError::Failed(format!(
                "{MAX_IDLE_PACKETS} packets in a row gave no audio"
            )));
        }
        Ok(())
    }

    /// Audio up to stream time `end` was decoded (and dropped).
    pub(super) fn reached(&mut self, end: f64) {
        if end > self.time {
            self.time = end;
            self.packets = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn a_decoder_reading_on_without_progress_fails_after_the_idle_bound() {
        // The same packet again and again (a demuxer going round in circles).
        let mut idle = Idle::new(100);
        let mut n = 0;
        let err = loop {
            idle.reached(3.0);
            match idle.packet(100) {
                Ok(()) => n += 1,
                Err(e) => break e,
            }
        };
        assert_eq!(n, MAX_IDLE_PACKETS);
        assert!(
            err.to_string()
                .starts_with("this chapter could not be decoded")
        );
        // Skipping forward to a seek target, or packets of another track
        // that read new bytes, are progress: never given up.
        let mut idle = Idle::new(0);
        for i in 0..3 * MAX_IDLE_PACKETS {
            idle.packet(0).unwrap();
            idle.reached(f64::from(i) * 0.02);
        }
        let mut idle = Idle::new(0);
        for i in 0..3 * MAX_IDLE_PACKETS {
            idle.packet(u64::from(i / 100)).unwrap();
        }
    }

    #[test]
    fn a_decoder_panic_fails_its_chapter_and_reaches_no_earlier_panic_hook() {
        // A hook installed before ours (like the terminal's) counts the
        // panics of this thread that reach it.
        let me = std::thread::current().id();
        let reached = Arc::new(AtomicUsize::new(0));
        let previous = std::panic::take_hook();
        let seen = reached.clone();
        std::panic::set_hook(Box::new(move |info| {
            if std::thread::current().id() == me {
                seen.fetch_add(1, Ordering::SeqCst);
            }
            previous(info);
        }));
        quiet_caught_panics();
        let r: Result<(), DecodeError> = catch_panics(|| panic!("index out of bounds: 7"));
        assert_eq!(
            r,
            Err(DecodeError::Failed(
                "the decoder failed: index out of bounds: 7".into()
            ))
        );
        assert_eq!(
            r.unwrap_err().to_string(),
            "this chapter could not be decoded (the decoder failed: index out of bounds: 7)"
        );
        assert_eq!(reached.load(Ordering::SeqCst), 0);
        // Outside `catch_panics`, a panic still reaches the earlier hook.
        assert!(std::panic::catch_unwind(|| panic!("not a decoder")).is_err());
        assert_eq!(reached.load(Ordering::SeqCst), 1);
        // Results and errors pass through unchanged.
        assert_eq!(catch_panics(|| Ok(7)), Ok(7));
        assert_eq!(
            catch_panics::<()>(|| Err(DecodeError::Io("x".into()))),
            Err(DecodeError::Io("x".into()))
        );
    }
}
