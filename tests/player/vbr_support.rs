//! Test-side helpers for the long mp3s of [`crate::oracle`].

pub use crate::oracle::*;
use crate::support::{TestEngine, mono};
use std::path::Path;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The generated files, made once per target dir.
pub fn files() -> &'static Files {
    static F: OnceLock<Files> = OnceLock::new();
    F.get_or_init(|| make_files(Path::new(env!("CARGO_TARGET_TMPDIR")).join("earmark-vbr-v1")))
}

/// Wait until the engine landed and `secs` of audio after `from` (a sample
/// index into the capture) were captured; the mono samples from `from`.
pub fn captured_after(e: &TestEngine, from: usize, secs: f64) -> Vec<f32> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (rate, ch, samples) = {
            let c = e.capture.lock().unwrap();
            (c.rate, c.channels.max(1), c.samples.len())
        };
        if rate > 0 && samples >= from + (secs * rate as f64) as usize * ch {
            let (_, ch, s) = e.captured();
            return mono(&s[from..], ch);
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {secs} s of audio; state {:?}",
            e.handle.state()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}
