//! `earmark play`: headless playback of a book's manifest.

use crate::cli::GlobalArgs;
use crate::domain::{ChapterId, Manifest};
use crate::player::{AudioMode, Command, EngineConfig, EngineHandle, PlayerState, Status};
use crate::sync::headless::HeadlessSync;
use clap::Args;
use std::io::Write;
use std::process::ExitCode;
use std::time::{Duration, Instant};

#[derive(Debug, Args)]
pub struct PlayArgs {
    /// The book to play.
    pub book_id: String,
    /// Start at this chapter (default: the server's progress, else the first).
    #[arg(long)]
    pub chapter: Option<String>,
    /// Start this many seconds into the chapter.
    #[arg(long)]
    pub at: Option<f64>,
    /// Playback speed, 0.5–3.0 (pitch is kept).
    #[arg(long, value_parser = parse_speed)]
    pub speed: Option<f32>,
    /// Stop after this many seconds of wall time.
    #[arg(long = "for", value_name = "SECONDS")]
    pub for_secs: Option<f64>,
    /// Audio output: the default device, none (paced in real time), or auto.
    #[arg(long, value_enum, default_value_t = AudioMode::Auto)]
    pub audio: AudioMode,
}

fn parse_speed(s: &str) -> Result<f32, String> {
    let v: f32 = s.parse().map_err(|_| format!("not a number: {s}"))?;
    if !(0.5..=3.0).contains(&v) {
        return Err(format!("speed must be between 0.5 and 3.0, not {v}"));
    }
    Ok(v)
}

pub fn run(global: &GlobalArgs, args: PlayArgs) -> ExitCode {
    match run_inner(global, args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("earmark play: {e}");
            ExitCode::from(1)
        }
    }
}

/// Where to start: explicit flags win; then the server's progress; else the
/// first chapter at 0.
pub fn start_point(
    manifest: &Manifest,
    chapter: Option<&str>,
    at: Option<f64>,
    progress: Option<(ChapterId, f64)>,
) -> Result<(ChapterId, f64), String> {
    let first = manifest
        .items
        .first()
        .map(|i| i.chapter_id.clone())
        .ok_or_else(|| "the book has no chapters".to_string())?;
    if let Some(at) = at
        && (!at.is_finite() || at < 0.0)
    {
        return Err(format!("--at must be a number of seconds ≥ 0, not {at}"));
    }
    match (chapter, at, progress) {
        (Some(c), at, _) => {
            let id = ChapterId::new(c);
            if manifest.position_of(&id).is_none() {
                return Err(format!("chapter {c} is not in this book"));
            }
            Ok((id, at.unwrap_or(0.0)))
        }
        (None, Some(at), _) => Ok((first, at)),
        (None, None, Some((c, p))) if manifest.position_of(&c).is_some() => Ok((c, p)),
        _ => Ok((first, 0.0)),
    }
}

fn run_inner(global: &GlobalArgs, args: PlayArgs) -> Result<ExitCode, String> {
    let session = PlaySession::open(global)?;
    let manifest = session.manifest(&args.book_id)?;
    // Sync restores the place (the server's progress, else this device's)
    // and reports through the outbox while playing.
    let book = crate::domain::BookId::new(args.book_id.as_str());
    let mut sync = HeadlessSync::start(
        session.client.clone(),
        session.sync_dir.clone(),
        book,
        manifest.clone(),
    )?;
    let restored = sync
        .restore_point(Duration::from_secs(20))
        .map_err(|s| s.message())?;
    let start = start_point(&manifest, args.chapter.as_deref(), args.at, Some(restored))?;
    if args.chapter.is_some() || args.at.is_some() {
        sync.user_start(&start);
    }
    let config = EngineConfig::new(args.audio, session.resolver());
    let engine = crate::player::Engine::spawn(config)?;
    if let Some(n) = engine.notice() {
        eprintln!("earmark: {n}");
    }
    match (args.speed, sync.settings()) {
        (Some(s), _) => {
            engine.send(Command::SetSpeed(s));
            sync.save_speed(s);
        }
        (None, Some(saved)) => {
            engine.send(Command::SetSpeed(saved.speed));
            if let Some(v) = saved.volume {
                engine.send(Command::SetVolume(v));
            }
        }
        (None, None) => {}
    }
    sync.loading(&engine.state());
    engine.send(Command::Load {
        manifest,
        start,
        autoplay: true,
    });
    let code = report_loop(&engine, &mut sync, args.for_secs, global.json);
    let last = engine.state();
    engine.send(Command::Shutdown);
    let left = sync.finish(Some(&last), Duration::from_secs(5)).left;
    if left > 0 {
        eprintln!(
            "earmark: {left} change(s) could not be sent yet; they are kept and sent next time (see `earmark sync pending`)"
        );
    }
    Ok(code)
}

/// Print one status line per second until `--for` runs out, the book ends,
/// or playback fails.
fn report_loop(
    engine: &EngineHandle,
    sync: &mut HeadlessSync,
    for_secs: Option<f64>,
    json: bool,
) -> ExitCode {
    let began = Instant::now();
    let limit = for_secs.map(|s| Duration::from_secs_f64(s.max(0.0)));
    let mut next_line = began;
    let mut out = std::io::stdout().lock();
    loop {
        let s = engine.state();
        if let Some(stop) = sync.pump(&s) {
            if stop == crate::sync::headless::Stop::Interrupted {
                return ExitCode::from(130);
            }
            engine.send(Command::Stop);
            eprintln!("earmark play: {}", stop.message());
            return ExitCode::from(1);
        }
        let done = matches!(s.status, Status::Ended | Status::Error(_));
        let timed_out = limit.is_some_and(|l| began.elapsed() >= l);
        // Nothing to report until the engine has taken the Load.
        let loaded = s.playback_id.0 > 0;
        if loaded && (Instant::now() >= next_line || done || timed_out) {
            let _ = writeln!(out, "{}", status_line(&s, json));
            let _ = out.flush();
            next_line += Duration::from_secs(1);
        }
        if let Status::Error(e) = &s.status {
            eprintln!("earmark play: {e}");
            return ExitCode::from(1);
        }
        if done || timed_out {
            return ExitCode::SUCCESS;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn status_line(s: &PlayerState, json: bool) -> String {
    let chapter = s.chapter_id.as_ref().map(|c| c.as_str()).unwrap_or("-");
    if json {
        serde_json::json!({
            "playback_id": s.playback_id.0,
            "chapter_id": s.chapter_id.as_ref().map(|c| c.as_str()),
            "position": (s.position * 1000.0).round() / 1000.0,
            "book_position": s.book_position.map(|b| (b * 1000.0).round() / 1000.0),
            "state": s.status.name(),
            "speed": s.speed,
            "landed": s.landed,
            "error": match &s.status { Status::Error(e) => Some(e.to_string()), _ => None },
        })
        .to_string()
    } else {
        let dur = s
            .duration
            .map(|d| format!(" / {}", clock(d)))
            .unwrap_or_default();
        format!(
            "[{}] {chapter} {}{dur}  {:.2}x",
            s.status.name(),
            clock(s.position),
            s.speed
        )
    }
}

fn clock(secs: f64) -> String {
    let t = secs.max(0.0) as u64;
    format!("{}:{:02}:{:02}", t / 3600, t / 60 % 60, t % 60)
}

/// The logged-in session as `play` needs it: the manifest, authorised
/// stream requests, and where this profile's sync outbox lives.
struct PlaySession {
    client: crate::api::Client,
    sync_dir: std::path::PathBuf,
}

impl PlaySession {
    fn open(global: &GlobalArgs) -> Result<Self, String> {
        let (profile, session) =
            crate::config::Session::load_for(global).map_err(|e| e.to_string())?;
        let client = session.client(&profile).map_err(|e| e.to_string())?;
        Ok(Self {
            client,
            sync_dir: crate::sync::cli::sync_dir(&profile),
        })
    }

    fn manifest(&self, book: &str) -> Result<Manifest, String> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        rt.block_on(self.client.manifest(&crate::domain::BookId::new(book)))
            .map_err(|e| e.to_string())
    }

    fn resolver(&self) -> crate::player::StreamResolver {
        let client = self.client.clone();
        std::sync::Arc::new(move |item: &crate::domain::ManifestItem| {
            let r = client.stream_request(item);
            crate::player::StreamRequest {
                url: r.url.to_string(),
                headers: r.headers,
            }
        })
    }
}
