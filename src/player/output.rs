//! Audio outputs: rodio on the default device, and a null output paced by a
//! real-time clock (no sound card: SSH, CI, tests). Both only call
//! [`Renderer::render`]; neither touches the network.
//!
//! The device output needs the `device-audio` cargo feature (on by default;
//! rodio, cpal, libasound). Without it (the NAS build) only the null output
//! exists: `auto` plays silently and `device` fails, saying why.

use super::render::{Chunk, Renderer};
use crate::domain::locks::lock;
#[cfg(feature = "device-audio")]
use std::num::NonZero;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Which output to use (`--audio`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AudioMode {
    /// The default device, or the null output (with a notice) when none opens.
    #[default]
    Auto,
    /// The default device; fail when it cannot be opened.
    Device,
    /// No sound, paced in real time.
    Null,
}

/// What the null output rendered, for tests.
#[derive(Debug, Default)]
pub struct Captured {
    pub rate: u32,
    pub channels: usize,
    /// Every sample, unless `count_only`.
    pub samples: Vec<f32>,
    /// Keep no samples (long runs): only the counts below.
    pub count_only: bool,
    /// Seconds of output rendered (each chunk at its own rate).
    pub seconds: f64,
    /// Each chapter in the order its audio reached the output, with the
    /// output second at which it began.
    pub chapters: Vec<(crate::domain::ChapterId, f64)>,
}

pub type Capture = Arc<Mutex<Captured>>;

/// A running output. Dropping it stops the sound.
pub enum Output {
    #[cfg(feature = "device-audio")]
    Device(rodio::MixerDeviceSink),
    Null(NullOutput),
}

/// Open the output for `mode`. The `String` is a notice for the user when
/// `auto` fell back to the null output.
pub fn open(
    mode: AudioMode,
    renderer: Arc<Renderer>,
    null_clock_rate: f64,
    capture: Option<Capture>,
) -> Result<(Output, Option<String>), String> {
    match mode {
        AudioMode::Null => Ok((
            Output::Null(NullOutput::start(renderer, null_clock_rate, capture)),
            None,
        )),
        AudioMode::Device => open_device(renderer)
            .map(|o| (o, None))
            .map_err(|e| format!("cannot open the audio device: {e} (try --audio null)")),
        AudioMode::Auto => match open_device(renderer.clone()) {
            Ok(o) => Ok((o, None)),
            Err(e) => Ok((
                Output::Null(NullOutput::start(renderer, null_clock_rate, capture)),
                Some(format!("no audio device ({e}); playing silently")),
            )),
        },
    }
}

/// Why a build without the `device-audio` feature cannot open a device.
#[cfg(not(feature = "device-audio"))]
const NO_DEVICE_AUDIO: &str = "built without the device-audio feature";

#[cfg(not(feature = "device-audio"))]
fn open_device(_renderer: Arc<Renderer>) -> Result<Output, String> {
    Err(NO_DEVICE_AUDIO.to_string())
}

/// Run `f` with fd 2 pointed at /dev/null, so ALSA/cpal chatter never
/// reaches the terminal (errors are returned, and logged by the caller).
#[cfg(feature = "device-audio")]
fn with_stderr_silenced<T>(f: impl FnOnce() -> T) -> T {
    let _restored_when_dropped = redirect_stderr_to(std::path::Path::new("/dev/null"));
    f()
}

/// Where fd 2 pointed before [`redirect_stderr_to`]; dropping this puts it
/// back (call it after leaving the TUI, so later errors reach the terminal).
#[must_use = "dropping the guard restores stderr at once"]
pub struct StderrRedirect {
    saved: libc::c_int,
}

impl Drop for StderrRedirect {
    fn drop(&mut self) {
        // SAFETY: `saved` is a descriptor we own (from dup).
        unsafe {
            libc::dup2(self.saved, 2);
            libc::close(self.saved);
        }
    }
}

/// Point the process's fd 2 at `path` (created 0600 if missing, appended
/// to), so whatever the audio stack (ALSA, cpal, a C library) prints later,
/// from any thread, lands in the log instead of on the TUI. The TUI calls it
/// after opening audio and before entering the alternate screen; the guard
/// restores the terminal's stderr when dropped.
pub fn redirect_stderr_to(path: &std::path::Path) -> std::io::Result<StderrRedirect> {
    use std::os::fd::IntoRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)?;
    let fd = file.into_raw_fd();
    // SAFETY: plain fd juggling on descriptors we own; dup2 is atomic, so
    // other threads see either the old or the new target.
    unsafe {
        let saved = libc::dup(2);
        if saved < 0 {
            let e = std::io::Error::last_os_error();
            libc::close(fd);
            return Err(e);
        }
        if libc::dup2(fd, 2) < 0 {
            let e = std::io::Error::last_os_error();
            libc::close(fd);
            libc::close(saved);
            return Err(e);
        }
        libc::close(fd);
        Ok(StderrRedirect { saved })
    }
}

#[cfg(feature = "device-audio")]
fn open_device(renderer: Arc<Renderer>) -> Result<Output, String> {
    // rodio's default stream-error callback eprintln!s (xruns, unplugged
    // devices) from the audio thread while we play: log those instead.
    let sink = with_stderr_silenced(|| {
        rodio::DeviceSinkBuilder::from_default_device()
            .map(|b| b.with_error_callback(|e| tracing::warn!("audio stream error: {e}")))
            .and_then(|b| b.open_sink_or_fallback())
            .or_else(|_| rodio::DeviceSinkBuilder::open_default_sink())
    })
    .map_err(|e| e.to_string())?;
    let mut sink = sink;
    sink.log_on_drop(false);
    sink.mixer().add(RendererSource::new(renderer));
    tracing::info!("audio device opened: {:?}", sink.config());
    Ok(Output::Device(sink))
}

/// Frames per chunk handed to rodio (bounds the latency of speed changes).
#[cfg(feature = "device-audio")]
const DEVICE_CHUNK: usize = 2048;

/// Feeds rodio's mixer from the renderer; silence while paused or starved.
#[cfg(feature = "device-audio")]
struct RendererSource {
    renderer: Arc<Renderer>,
    chunk: Chunk,
    idx: usize,
}

#[cfg(feature = "device-audio")]
impl RendererSource {
    fn new(renderer: Arc<Renderer>) -> Self {
        let mut s = Self {
            renderer,
            chunk: Chunk {
                rate: 44_100,
                channels: 2,
                ..Chunk::default()
            },
            idx: 0,
        };
        s.refill();
        s
    }

    fn refill(&mut self) {
        let (rate, channels) = (self.chunk.rate, self.chunk.channels);
        self.renderer.render(DEVICE_CHUNK, &mut self.chunk);
        if !self.chunk.audible || self.chunk.samples.is_empty() {
            // Keep the last format; silence does not move the position.
            self.chunk.rate = rate.max(1);
            self.chunk.channels = channels.max(1);
            self.chunk.samples.clear();
            self.chunk.samples.resize(1024 * self.chunk.channels, 0.0);
        }
        self.idx = 0;
    }
}

#[cfg(feature = "device-audio")]
impl Iterator for RendererSource {
    type Item = rodio::Sample;
    fn next(&mut self) -> Option<rodio::Sample> {
        let s = self.chunk.samples[self.idx];
        self.idx += 1;
        if self.idx >= self.chunk.samples.len() {
            self.refill();
        }
        Some(s as rodio::Sample)
    }
}

#[cfg(feature = "device-audio")]
impl rodio::Source for RendererSource {
    fn current_span_len(&self) -> Option<usize> {
        Some(self.chunk.samples.len() - self.idx)
    }
    fn channels(&self) -> rodio::ChannelCount {
        NonZero::new(self.chunk.channels as u16).unwrap_or(NonZero::<u16>::MIN)
    }
    fn sample_rate(&self) -> rodio::SampleRate {
        NonZero::new(self.chunk.rate).unwrap_or(NonZero::<u32>::MIN)
    }
    fn total_duration(&self) -> Option<Duration> {
        None
    }
}

/// A clock thread that consumes audio at `rate` × real time (1.0 = real
/// time; 0.0 = as fast as possible, for tests). With nothing to play
/// (idle, paused, ended, buffering, stalled) it parks on the renderer
/// until something changes: no periodic wake-ups.
pub struct NullOutput {
    stop: Arc<AtomicBool>,
    renderer: Arc<Renderer>,
    thread: Option<JoinHandle<()>>,
}

impl NullOutput {
    pub fn start(renderer: Arc<Renderer>, clock_rate: f64, capture: Option<Capture>) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = stop.clone();
        let r2 = renderer.clone();
        let thread = std::thread::Builder::new()
            .name("earmark-null-out".into())
            .spawn(move || null_loop(r2, clock_rate, capture, stop2))
            .expect("spawn null output thread");
        Self {
            stop,
            renderer,
            thread: Some(thread),
        }
    }
}

impl Drop for NullOutput {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        self.renderer.wake_outputs();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Names the null output's clock rate for a whole process: tests and soaks
/// run the real binary faster than real time (`0` = as fast as it can).
pub const NULL_CLOCK_RATE_ENV: &str = "EARMARK_NULL_CLOCK_RATE";

/// The clock rate `EARMARK_NULL_CLOCK_RATE` asks for, else 1.0 (real
/// time). A value that is not a finite number ≥ 0 is ignored, with a log
/// line: pacing in real time is never wrong, only slow.
pub fn null_clock_rate_from_env() -> f64 {
    let Ok(v) = std::env::var(NULL_CLOCK_RATE_ENV) else {
        return 1.0;
    };
    match v.trim().parse::<f64>() {
        Ok(r) if r.is_finite() && r >= 0.0 => r,
        _ => {
            tracing::warn!("{NULL_CLOCK_RATE_ENV}={v:?} is not a rate ≥ 0; pacing in real time");
            1.0
        }
    }
}

/// How often the null output renders while playing.
const NULL_TICKS_PER_SEC: u32 = 10;

fn null_loop(
    renderer: Arc<Renderer>,
    clock_rate: f64,
    capture: Option<Capture>,
    stop: Arc<AtomicBool>,
) {
    let mut chunk = Chunk::default();
    let mut deadline = Instant::now();
    while !stop.load(Ordering::SeqCst) {
        // Up to 100 ms of output per tick at the stream's rate (44.1 kHz
        // until known); a render stops at the end of the front block (one
        // decoded packet: ~26 ms of mp3, so ~38 wake-ups a second there).
        // A speed change or a pause applies within two ticks.
        let tick = (chunk.rate.max(8_000) / NULL_TICKS_PER_SEC) as usize;
        // Recorded under the renderer's lock: once a pause is published,
        // everything rendered before it is in the capture.
        renderer.render_then(tick, &mut chunk, |chunk| {
            if let Some(c) = &capture {
                record(c, chunk);
            }
        });
        if !chunk.audible {
            // Nothing to play: park until audio is queued, Play, a flush,
            // or `Drop` (which sets `stop`, then bumps the counter: checking
            // `stop` after reading `seen` cannot miss it).
            if stop.load(Ordering::SeqCst) {
                break;
            }
            renderer.wait_for_change(chunk.seen);
            deadline = Instant::now();
            continue;
        }
        let frames = chunk.samples.len() / chunk.channels.max(1);
        if clock_rate > 0.0 {
            deadline += Duration::from_secs_f64(frames as f64 / chunk.rate as f64 / clock_rate);
            let now = Instant::now();
            if deadline > now {
                std::thread::sleep(deadline - now);
            } else if now - deadline > Duration::from_millis(200) {
                // We fell far behind (suspended); don't rush to catch up.
                deadline = now;
            }
        }
    }
}

fn record(capture: &Capture, chunk: &Chunk) {
    let frames = chunk.samples.len() / chunk.channels.max(1);
    let mut c = lock(capture);
    c.rate = chunk.rate;
    c.channels = chunk.channels;
    if !c.count_only {
        c.samples.extend_from_slice(&chunk.samples);
    }
    if let Some(ch) = &chunk.chapter
        && c.chapters.last().map(|l| &l.0) != Some(ch)
    {
        let at = c.seconds;
        c.chapters.push((ch.clone(), at));
    }
    c.seconds += frames as f64 / chunk.rate.max(1) as f64;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    fn fd2_identity() -> (u64, u64) {
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        assert_eq!(unsafe { libc::fstat(2, &mut st) }, 0);
        (st.st_dev, st.st_ino)
    }

    #[test]
    fn redirect_stderr_sends_fd_2_to_the_file_and_restores_it() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("audio.log");
        let before = fd2_identity();
        {
            let _guard = redirect_stderr_to(&log).unwrap();
            let meta = std::fs::metadata(&log).unwrap();
            assert_eq!(fd2_identity(), (meta.dev(), meta.ino()));
            assert_eq!(meta.permissions().mode() & 0o777, 0o600);
            // What a C library does from any thread: write to fd 2 directly.
            let msg = b"ALSA lib pcm.c:8570:(snd_pcm_recover) underrun occurred\n";
            let n = std::thread::spawn(move || unsafe {
                libc::write(2, msg.as_ptr().cast(), msg.len())
            })
            .join()
            .unwrap();
            assert_eq!(n, msg.len() as isize);
        }
        assert_eq!(fd2_identity(), before, "stderr was not restored");
        let text = std::fs::read_to_string(&log).unwrap();
        assert!(text.contains("underrun occurred"), "{text:?}");
    }
}
