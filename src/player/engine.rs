//! The engine thread: owns the queue (the manifest, in server order), turns
//! commands into pipeline starts and renderer settings, and publishes
//! [`PlayerState`] snapshots on a `watch` channel.
//!
//! It has no clock of its own: it parks on its channel, and commands and
//! the renderer wake it: on its edges (first audio, end, error; audio
//! queued only when not playing, the end of an underrun only when
//! buffering) and, while playing, on the output's position ticks (4 per
//! second of output and on every whole media second), so it publishes as
//! the output consumes audio. A playing engine notices an underrun that
//! lasts with a 400 ms time-out (a decode slower than the output runs dry
//! at every block); `Buffering`/`Stalled` re-check 4× a second for a stall.

use super::mpa::SeekMaps;
use super::output::{self, Output};
use super::pipeline::{self, MeasuredLengths, Pipeline, PipelineShared};
use super::render::Renderer;
use super::{Command, EngineConfig, ErrorKind, PlaybackError, PlayerState, Status, clamp_speed};
use crate::domain::{BookId, ChapterId, Manifest, ManifestItem, SoundSettings};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::Duration;
use tokio::sync::watch;

mod snapshot;

/// While playing: how soon an underrun shows as buffering (the output's
/// ticks, 4 a second, wake us before this while audio flows; a short
/// underrun does not wake us at all).
const PLAYING_CHECK: Duration = Duration::from_millis(400);
/// While buffering: how soon to look again for a stall.
const BUFFERING_CHECK: Duration = Duration::from_millis(250);
/// `PrevChapter` restarts the chapter when further in than this.
const RESTART_THRESHOLD: f64 = 3.0;

/// Starts the engine.
pub struct Engine;

/// What the engine thread receives.
enum Msg {
    Cmd(Command),
    /// The renderer saw an edge worth publishing.
    Wake,
}

/// A cloneable handle to the engine thread.
#[derive(Clone)]
pub struct EngineHandle {
    tx: Sender<Msg>,
    state: watch::Receiver<PlayerState>,
    notice: Option<String>,
    renderer: Arc<Renderer>,
    /// The renderer's waker keeps the channel open, so the engine thread
    /// cannot notice the last handle going away: this tells it.
    _alive: Arc<Alive>,
}

struct Alive(Sender<Msg>);

impl Drop for Alive {
    fn drop(&mut self) {
        let _ = self.0.send(Msg::Cmd(Command::Shutdown));
    }
}

impl EngineHandle {
    /// Queue a command. False when the engine has shut down.
    pub fn send(&self, cmd: Command) -> bool {
        self.tx.send(Msg::Cmd(cmd)).is_ok()
    }

    /// The latest published state.
    pub fn state(&self) -> PlayerState {
        self.state.borrow().clone()
    }

    /// A receiver that is notified on every change.
    pub fn subscribe(&self) -> watch::Receiver<PlayerState> {
        self.state.clone()
    }

    /// A message for the user when `--audio auto` fell back to the null output.
    pub fn notice(&self) -> Option<&str> {
        self.notice.as_deref()
    }

    /// When the first audio of the current load/seek reached the output.
    pub fn first_audio_at(&self) -> Option<std::time::Instant> {
        self.renderer.status().first_audio_at
    }

    /// Block the calling thread until `pred` holds or `timeout` passes.
    /// For headless use and tests; the UI uses `subscribe` instead.
    pub fn wait_for(
        &self,
        timeout: Duration,
        mut pred: impl FnMut(&PlayerState) -> bool,
    ) -> Option<PlayerState> {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            let s = self.state();
            if pred(&s) {
                return Some(s);
            }
            if std::time::Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

impl Engine {
    /// Start the engine thread and open the output. Fails only when
    /// `--audio device` was asked for and no device opens.
    pub fn spawn(config: EngineConfig) -> Result<EngineHandle, String> {
        let (tx, rx) = std::sync::mpsc::channel();
        let (state_tx, state_rx) = watch::channel(PlayerState::default());
        let renderer = Arc::new(Renderer::new());
        renderer.set_loudness_target(config.loudness_target);
        let wake_tx = tx.clone();
        renderer.set_engine_waker(move || {
            let _ = wake_tx.send(Msg::Wake);
        });
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let r2 = renderer.clone();
        std::thread::Builder::new()
            .name("earmark-engine".into())
            .spawn(move || {
                let opened = output::open(
                    config.audio,
                    r2.clone(),
                    config.null_clock_rate,
                    config.capture.clone(),
                );
                let (out, notice) = match opened {
                    Ok(o) => o,
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                };
                let _ = ready_tx.send(Ok(notice));
                EngineLoop::new(config, r2, state_tx, out).run(rx);
            })
            .map_err(|e| e.to_string())?;
        let notice = ready_rx
            .recv()
            .map_err(|_| "the engine thread died".to_string())??;
        if let Some(n) = &notice {
            tracing::warn!("{n}");
        }
        Ok(EngineHandle {
            _alive: Arc::new(Alive(tx.clone())),
            tx,
            state: state_rx,
            notice,
            renderer,
        })
    }
}

/// A chapter's length as the manifest says.
fn manifest_length(item: &ManifestItem) -> Option<f64> {
    item.duration
        .or(item.end.map(|e| (e - item.start).max(0.0)))
}

struct EngineLoop {
    config: EngineConfig,
    renderer: Arc<Renderer>,
    tx: watch::Sender<PlayerState>,
    _output: Output,
    manifest: Option<Arc<Manifest>>,
    playback_id: u64,
    generation: u64,
    pipeline: Option<Arc<PipelineShared>>,
    /// What playback learned about where mp3 frames are, kept across seeks.
    seek_maps: SeekMaps,
    /// This load's chapters' lengths as their streams say, once decoded.
    lengths: MeasuredLengths,
    /// Load/seek target until audio from it plays.
    target: Option<(ChapterId, f64)>,
    playing: bool,
    speed: f32,
    volume: f32,
    sound: SoundSettings,
    /// Shared with every pipeline: skip silence on or off.
    skip_silence: Arc<AtomicBool>,
    /// The renderer's silence count when this load began.
    skipped_at_load: f64,
    book: Option<BookId>,
    error: Option<PlaybackError>,
    version: u64,
}

impl EngineLoop {
    fn new(
        config: EngineConfig,
        renderer: Arc<Renderer>,
        tx: watch::Sender<PlayerState>,
        output: Output,
    ) -> Self {
        let seek_maps = config.seek_maps.clone();
        Self {
            config,
            renderer,
            tx,
            _output: output,
            manifest: None,
            playback_id: 0,
            generation: 0,
            pipeline: None,
            seek_maps,
            lengths: MeasuredLengths::default(),
            target: None,
            playing: false,
            speed: 1.0,
            volume: 1.0,
            sound: SoundSettings::default(),
            skip_silence: Arc::new(AtomicBool::new(false)),
            skipped_at_load: 0.0,
            book: None,
            error: None,
            version: 0,
        }
    }

    fn run(mut self, rx: Receiver<Msg>) {
        loop {
            // Arm before the snapshot, so an edge after it wakes us.
            self.renderer.arm_engine_wake();
            let status = self.publish();
            let msg = match status {
                Status::Playing => {
                    self.renderer.arm_engine_wake_playing();
                    rx.recv_timeout(PLAYING_CHECK)
                }
                // Stalled too: a stream that comes back must be seen even
                // if the renderer's edge was missed (a test caught one).
                Status::Buffering | Status::Stalled => {
                    // Playing, the output's edge (audio again) says when the
                    // wait is over: a block queued alone needn't wake us.
                    if self.playing {
                        self.renderer.arm_engine_wake_buffering();
                    }
                    rx.recv_timeout(BUFFERING_CHECK)
                }
                // Idle, paused, ended, error: park.
                _ => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
            };
            match msg {
                Ok(Msg::Cmd(Command::Shutdown)) | Err(RecvTimeoutError::Disconnected) => break,
                Ok(Msg::Cmd(cmd)) => self.handle(cmd),
                Ok(Msg::Wake) | Err(RecvTimeoutError::Timeout) => {}
            }
        }
        self.stop_pipeline();
        self.renderer.set_playing(false);
        // Release a pipeline thread blocked on a full queue.
        self.generation += 1;
        self.renderer.flush(self.generation);
    }

    fn stop_pipeline(&mut self) {
        if let Some(p) = self.pipeline.take() {
            p.cancel();
        }
    }

    /// Cancel what is playing and start decoding at `index`/`pos`.
    fn start_at(&mut self, index: usize, pos: f64) {
        self.start_from(index, pos, true);
    }

    /// [`start_at`](Self::start_at); `reuse_head`: the stream's kept head
    /// may stand in for its first request (a move within this load, whose
    /// stream the server has answered; never a load or a retry).
    fn start_from(&mut self, index: usize, pos: f64, reuse_head: bool) {
        let Some(manifest) = self.manifest.clone() else {
            return;
        };
        let Some(item) = manifest.items.get(index) else {
            return;
        };
        let mut pos = pos.max(0.0);
        if let Some(d) = self.length(index) {
            pos = pos.min(d);
        }
        self.stop_pipeline();
        self.generation += 1;
        self.renderer.flush(self.generation);
        self.error = None;
        self.target = Some((item.chapter_id.clone(), pos));
        let shared = Arc::new(PipelineShared::default());
        self.pipeline = Some(shared.clone());
        pipeline::spawn(Pipeline {
            generation: self.generation,
            manifest,
            start_index: index,
            start_pos: pos,
            resolve: self.config.resolve.clone(),
            renderer: self.renderer.clone(),
            shared,
            stall_after: Duration::from_secs_f64(self.config.stall_after.max(0.05)),
            read_ahead: self.config.read_ahead,
            seek_maps: self.seek_maps.clone(),
            skip_silence: self.skip_silence.clone(),
            silence: self.config.silence,
            judge: self.config.judge.clone(),
            pool: self.config.pool.clone(),
            reuse_head,
            lengths: self.lengths.clone(),
            count_limit: self.config.mp3_count_limit,
        });
    }

    fn unknown_chapter(&mut self, chapter: &ChapterId) {
        self.error = Some(PlaybackError {
            kind: ErrorKind::UnknownChapter,
            chapter: Some(chapter.clone()),
            message: format!("chapter {chapter} is not in this book's manifest"),
        });
    }

    /// Where playback is now: the renderer's clock, else the pending target.
    fn current(&self) -> Option<(ChapterId, f64)> {
        let r = self.renderer.status();
        if r.generation == self.generation
            && let Some(p) = r.position
        {
            return Some(p);
        }
        self.target.clone()
    }

    fn handle(&mut self, cmd: Command) {
        match cmd {
            Command::Load {
                manifest,
                start,
                autoplay,
            } => self.load(manifest, start, autoplay),
            Command::Play => self.set_playing(true),
            Command::Pause => self.set_playing(false),
            Command::Seek { chapter, position } => {
                match self.manifest.as_ref().and_then(|m| m.position_of(&chapter)) {
                    Some(i) => self.start_at(i, position),
                    None => self.unknown_chapter(&chapter),
                }
            }
            Command::SkipBy(delta) => self.skip_by(delta),
            Command::NextChapter => {
                if let Some((i, _)) = self.current_index() {
                    let len = self.manifest.as_ref().map_or(0, |m| m.items.len());
                    if i + 1 < len {
                        self.start_at(i + 1, 0.0);
                    } else if let Some(d) = self.length(i) {
                        self.start_at(i, d);
                    }
                }
            }
            Command::PrevChapter => {
                if let Some((i, pos)) = self.current_index() {
                    let back = pos <= RESTART_THRESHOLD && i > 0;
                    self.start_at(i - usize::from(back), 0.0);
                }
            }
            Command::SetSpeed(s) => {
                self.speed = clamp_speed(s);
                self.renderer.set_speed(self.speed);
            }
            Command::SetVolume(v) => {
                self.volume = if v.is_finite() {
                    v.clamp(0.0, 1.0)
                } else {
                    1.0
                };
                self.renderer.set_volume(self.volume);
            }
            Command::SetSound(s) => {
                self.sound = s.clamped();
                self.skip_silence
                    .store(self.sound.skip_silence, Ordering::Relaxed);
                self.renderer.set_sound(self.sound);
            }
            Command::OpenAhead(item) => {
                let req = (self.config.resolve)(&item);
                if req.url.starts_with("http") {
                    super::source::open_ahead(
                        self.config.pool.as_ref().and_then(|p| p()),
                        req,
                        Duration::from_secs_f64(self.config.stall_after.max(0.05)),
                        self.config.judge.clone(),
                    );
                }
            }
            Command::Shutdown => {}
        }
    }

    /// A new load: `manifest` (in server order) from `start`.
    fn load(&mut self, manifest: Manifest, start: (ChapterId, f64), autoplay: bool) {
        self.playback_id += 1;
        self.stop_pipeline();
        if self.book.as_ref() != Some(&manifest.book_id) {
            self.book = Some(manifest.book_id.clone());
            self.renderer.new_book();
        }
        self.skipped_at_load = self.renderer.status().silence_skipped;
        // Another load, its own lengths (the same chapter id may
        // come with other audio).
        self.lengths = MeasuredLengths::default();
        let (chapter, pos) = start;
        let index = manifest.position_of(&chapter);
        self.manifest = Some(Arc::new(manifest));
        self.playing = autoplay;
        self.renderer.set_playing(autoplay);
        match index {
            Some(i) => self.start_from(i, pos, false),
            None => {
                self.generation += 1;
                self.renderer.flush(self.generation);
                self.target = None;
                self.unknown_chapter(&chapter);
            }
        }
    }

    fn set_playing(&mut self, playing: bool) {
        if playing && self.renderer.status().ended {
            // Play at the end of the book: stay ended.
            return;
        }
        self.playing = playing;
        self.renderer.set_playing(playing);
        // Resume after an error (e.g. a license renewed): retry where we were.
        if playing
            && (self.error.is_some() || self.renderer.status().error.is_some())
            && let Some((i, pos)) = self.current_index()
        {
            self.start_from(i, pos, false);
        }
    }

    fn item(&self, i: usize) -> Option<&ManifestItem> {
        self.manifest.as_ref()?.items.get(i)
    }

    fn current_index(&self) -> Option<(usize, f64)> {
        let (ch, pos) = self.current()?;
        let i = self.manifest.as_ref()?.position_of(&ch)?;
        Some((i, pos))
    }

    fn skip_by(&mut self, delta: f64) {
        let Some((mut i, pos)) = self.current_index() else {
            return;
        };
        if !delta.is_finite() {
            return;
        }
        let mut pos = pos + delta;
        while pos < 0.0 {
            let Some(d) = i.checked_sub(1).and_then(|p| self.length(p)) else {
                pos = 0.0;
                break;
            };
            i -= 1;
            pos += d;
        }
        while let Some(d) = self.length(i) {
            if pos < d {
                break;
            }
            if self.item(i + 1).is_none() {
                pos = d;
                break;
            }
            pos -= d;
            i += 1;
        }
        self.start_at(i, pos);
    }
}
