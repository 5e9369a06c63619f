//! `earmark play`: headless playback of a book's manifest, through the
//! playback owner the player uses too (`crate::playback`: the engine,
//! sync's session restoring and reporting the place, each book's sound
//! and `[sound]` of config.toml, every stop and its reason). This command
//! picks the queue (the server's, or a download's), then only prints a
//! status line a second and exits with the code of the stop's reason
//! (docs/cli.md). With `--up-next` a book's end opens the next one
//! (`playback::up_next`).

use super::{CommandError, Invocation};
use crate::domain::{BookId, ChapterId, Manifest, Next, Opening};
use crate::playback::{
    Control, Event, Events, Expect, LocalIndex, Login, Now, Playback, Setup, StopReason,
};
use crate::player::{AudioMode, PlayerState, Status};
use crate::sync::{Notice, StartAt};
use std::io::Write;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// How long the place may take to be restored before `play` gives up.
const RESTORE_WITHIN: Duration = Duration::from_secs(20);

/// What `earmark play` was asked (parsed in `crate::cli`).
#[derive(Debug)]
pub struct PlayArgs {
    /// The book to play.
    pub book_id: String,
    /// Start at this chapter (default: the server's progress, else the first).
    pub chapter: Option<String>,
    /// Start this many seconds into the chapter.
    pub at: Option<f64>,
    /// Playback speed, 0.5–3.0 (pitch is kept).
    pub speed: Option<f32>,
    /// Stop after this many seconds of wall time (the audio is paused there,
    /// and that place is printed and saved).
    pub for_secs: Option<f64>,
    pub audio: AudioMode,
    /// When the book ends, play on as the player does: the up next list, then the series.
    pub up_next: bool,
}

/// When each start-up phase ended (`--json` prints them once audio plays).
struct Startup {
    /// `main` began (after exec and dynamic loading).
    main: Instant,
    /// Session and token read, API client made.
    session: Option<Instant>,
    /// The manifest fetched (and a download checked).
    manifest: Option<Instant>,
    /// The engine thread and the output started.
    engine: Option<Instant>,
    /// Sync asked the engine for the first `Load` (after its progress read).
    load: Option<Instant>,
}

impl Startup {
    /// `{"startup": {...}}`: each phase's end in ms since `main`, the first
    /// sample handed to the output likewise, and that instant on the
    /// system's monotonic clock (so a parent can time it from its `fork`).
    fn json(&self, first_audio: Instant) -> serde_json::Value {
        let ms = |t: Option<Instant>| {
            t.map(|t| (t.saturating_duration_since(self.main).as_secs_f64() * 1e6).round() / 1e3)
        };
        serde_json::json!({"startup": {
            "sessionMs": ms(self.session),
            "manifestMs": ms(self.manifest),
            "engineMs": ms(self.engine),
            "loadMs": ms(self.load),
            "firstAudioMs": ms(Some(first_audio)),
            "firstAudioMonotonicMs": monotonic_ms(first_audio),
        }})
    }
}

/// `at` on CLOCK_MONOTONIC, in ms (what `Instant` counts on Linux, but
/// `Instant` does not expose it).
fn monotonic_ms(at: Instant) -> Option<f64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime only writes the timespec we pass.
    if unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) } != 0 {
        return None;
    }
    let now = ts.tv_sec as f64 * 1e3 + ts.tv_nsec as f64 / 1e6;
    let ago = Instant::now().saturating_duration_since(at).as_secs_f64() * 1e3;
    Some(((now - ago) * 1e3).round() / 1e3)
}

pub fn run(global: &Invocation, args: PlayArgs, started: Instant) -> ExitCode {
    // One thread for sync's worker and the playback owner; the status
    // lines are printed from this thread.
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("earmark-play")
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("earmark play: cannot start: {e}");
            return ExitCode::from(1);
        }
    };
    let startup = Startup {
        main: started,
        session: None,
        manifest: None,
        engine: None,
        load: None,
    };
    match rt.block_on(play(global, args, startup)) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("earmark play: {}", e.message);
            ExitCode::from(e.code)
        }
    }
}

/// Where to start when flags say so: `--chapter` (at `--at` or 0), or
/// `--at` in the first chapter. `None`: resume.
fn start_point(
    manifest: &Manifest,
    chapter: Option<&str>,
    at: Option<f64>,
) -> Result<Option<(ChapterId, f64)>, String> {
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
    match (chapter, at) {
        (Some(c), at) => {
            let id = ChapterId::new(c);
            if manifest.position_of(&id).is_none() {
                return Err(format!("chapter {c} is not in this book"));
            }
            Ok(Some((id, at.unwrap_or(0.0))))
        }
        (None, Some(at)) => Ok(Some((first, at))),
        (None, None) => Ok(None),
    }
}

async fn play(
    global: &Invocation,
    args: PlayArgs,
    mut startup: Startup,
) -> Result<ExitCode, CommandError> {
    let (profile, session) = crate::config::Session::load_for(&global.select)?;
    let client = session.client(&profile)?;
    startup.session = Some(Instant::now());
    let book = BookId::new(args.book_id.as_str());
    let local = local_copy(&profile, &session, &book);
    if client.addresses().len() > 1 {
        // A profile of several addresses: each switch is said on stderr.
        let mut switches = client.watch_base();
        tokio::spawn(async move {
            while switches.changed().await.is_ok() {
                let now = switches.borrow_and_update().clone();
                eprintln!("earmark: the server answers at {now} now.");
            }
        });
    }
    let follow_on = match args.up_next {
        true => {
            use crate::playback::up_next::FollowOn;
            let (rule, said) = FollowOn::for_play(&profile, &session, client.clone(), &book)
                .map_err(CommandError::usage)?;
            if let Some(why) = said {
                eprintln!("earmark: {why}");
            }
            Some(rule)
        }
        false => None,
    };
    let mut login = Login::of(&profile, Some(&session), Some(client.clone()));
    login.sync.follow_server = true;
    // The owner starts first, so the manifest, the place and (for a
    // chapter named, and no download) the stream are asked for together.
    let (playback, events) = Playback::start(Setup {
        dirs: profile.dirs.clone(),
        login,
        audio: args.audio,
        downloads: LocalIndex::default(),
    });
    startup.engine = Some(Instant::now());
    if let Some(why) = playback.no_audio() {
        let message = why.to_owned();
        playback.quit(Duration::ZERO).await;
        return Err(CommandError {
            code: StopReason::Local.exit_code(),
            message,
        });
    }
    // The chapter named, else (no --at) the one this device last played:
    // its stream is asked for beside the manifest and the place.
    let expect = match (&args.chapter, args.at) {
        _ if local.is_some() => Expect::Unknown,
        (Some(c), _) => Expect::Chapter(ChapterId::new(c.as_str())),
        (None, None) => Expect::Resume,
        (None, Some(_)) => Expect::Unknown,
    };
    playback.open_ahead(&book, expect);
    let queued = queue(&client, &book, local)
        .await
        .and_then(|(manifest, download)| {
            let start = start_point(&manifest, args.chapter.as_deref(), args.at)
                .map_err(CommandError::usage)?;
            Ok((manifest, download, start))
        });
    let (manifest, download, start) = match queued {
        Ok(q) => q,
        Err(e) => {
            playback.quit(Duration::ZERO).await;
            return Err(e);
        }
    };
    startup.manifest = Some(Instant::now());
    let start = match start {
        Some((c, p)) => StartAt::At(c, p),
        None => StartAt::Resume,
    };
    playback.set_downloads(LocalIndex::of(download.into_iter().collect()));
    playback.open(book.clone(), manifest, start);
    if let Some(s) = args.speed {
        playback.control(Control::Speed(s));
    }
    let next = follow_on.map(|rule| PlayOn {
        rule,
        profile: &profile,
        session: &session,
        client: &client,
    });
    let code = follow(
        &playback,
        book,
        events,
        args.for_secs,
        global.json,
        startup,
        next.as_ref(),
    )
    .await;
    // Kept for next time only when the journal is on the disk.
    if let Some(line) = playback.quit(Duration::from_secs(5)).await.farewell() {
        eprintln!("earmark: {line}");
    }
    Ok(code)
}

/// The download of `book` in this session's scope, if any (read before
/// the network, so start-up knows whether to open a stream ahead).
fn local_copy(
    profile: &crate::config::Profile,
    session: &crate::config::Session,
    book: &BookId,
) -> Option<crate::offline::Download> {
    use crate::offline::{Scope, Store};
    Store::new(&profile.dirs.data)
        .get(&Scope::of(session), book)
        .unwrap_or_else(|e| {
            eprintln!("earmark: the download of {book} cannot be used: {e}");
            None
        })
}

/// The queue to play: the download when it matches the server's manifest
/// (or the server is away), else the server's; and the complete download
/// of the book, if any, for the resolver.
async fn queue(
    client: &crate::api::Client,
    book: &BookId,
    local: Option<crate::offline::Download>,
) -> Result<(Manifest, Option<crate::offline::Download>), CommandError> {
    use crate::offline::{self, Source, Why};
    let (source, why) = offline::choose(client.manifest(book).await, local.as_ref())?;
    match why {
        Why::Current => eprintln!("earmark: playing the downloaded copy of {book}."),
        Why::ServerUnreachable => eprintln!(
            "earmark: the server cannot be reached: playing the downloaded copy of {book}; progress is kept and sent when the server is back."
        ),
        Why::Outdated => eprintln!(
            "earmark: the server's manifest of {book} changed since it was downloaded: streaming the server's queue instead. `earmark download {book}` updates the download."
        ),
        Why::NotDownloaded => {}
    }
    Ok(match source {
        Source::Local(m) => (m, local),
        // The server's queue streams: a changed download plays no part.
        Source::Stream(m) => (m, None),
    })
}

/// `--up-next`: the rule, and what opening the next book needs.
struct PlayOn<'a> {
    rule: crate::playback::up_next::FollowOn,
    profile: &'a crate::config::Profile,
    session: &'a crate::config::Session,
    client: &'a crate::api::Client,
}

impl PlayOn<'_> {
    /// What follows `ended`, or the exit code and why it could not be
    /// worked out (`Ok(None)`: nothing follows).
    async fn next_after(
        &self,
        playback: &Playback,
        ended: &BookId,
    ) -> Result<Option<Next>, (u8, String)> {
        self.rule.next_after(ended).await.map_err(|e| {
            let stop = e.stop(playback);
            (
                stop.reason.exit_code(),
                format!("up next: {}", stop.message),
            )
        })
    }

    /// Opens `next`: its id, or the exit code and why not.
    async fn open(&self, playback: &Playback, next: Next) -> Result<BookId, (u8, String)> {
        let local = local_copy(self.profile, self.session, &next.book);
        let (manifest, download) = queue(self.client, &next.book, local)
            .await
            .map_err(|e| (e.code, e.message))?;
        let (start, again) = match self.rule.opening(&next).await {
            Opening::Resume => (StartAt::Resume, ""),
            Opening::Restart => (StartAt::Restart, ", from the beginning: it was finished"),
        };
        eprintln!("earmark: up next: {} ({}){again}", next.title, next.book);
        playback.set_downloads(LocalIndex::of(download.into_iter().collect()));
        playback.open(next.book.clone(), manifest, start);
        Ok(next.book)
    }
}

/// How the countdown before the next book ended.
enum Countdown {
    Over,
    /// Ctrl-C or SIGTERM: nothing more starts.
    Signal,
    /// `--for` ran out.
    Limit,
}

/// Prints one status line a second until `--for` runs out, the book ends
/// (with `--up-next`: the last one), playback stops (with its reason's
/// exit code), or a signal arrives.
async fn follow(
    playback: &Playback,
    mut book: BookId,
    mut events: Events,
    for_secs: Option<f64>,
    json: bool,
    mut startup: Startup,
    next: Option<&PlayOn<'_>>,
) -> ExitCode {
    // The load whose end was handled (the next book's state comes later).
    let mut ended = None;
    let mut startup_printed = !json;
    let mut sound_said = false;
    use tokio::signal::unix::{SignalKind, signal};
    let began = tokio::time::Instant::now();
    let limit = for_secs.map(|s| began + Duration::from_secs_f64(s.max(0.0)));
    let mut now = playback.now();
    // Sync's own status: the load is timed where sync asks for it, not
    // where the owner (on the same thread as sync) relays it.
    let mut sync = playback.sync().watch();
    let mut lines = tokio::time::interval(Duration::from_secs(1));
    lines.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    // Created once: a listener made anew each round would miss a signal
    // that arrives between rounds.
    let mut int = signal(SignalKind::interrupt()).ok();
    let mut term = signal(SignalKind::terminate()).ok();
    let mut out = std::io::stdout().lock();
    let stop = |code: u8, message: &str| {
        playback.control(Control::Stop);
        eprintln!("earmark play: {message}");
        ExitCode::from(code)
    };
    loop {
        let restored = sync.borrow().playing.is_some();
        if restored && startup.load.is_none() {
            startup.load = Some(Instant::now());
        }
        let deadline = match (restored, limit) {
            (false, l) => Some(l.map_or(began + RESTORE_WITHIN, |l| l.min(began + RESTORE_WITHIN))),
            (true, l) => l,
        };
        tokio::select! {
            e = events.recv() => match e {
                Some(Event::Stopped(s)) => {
                    if let Some(state) = now.borrow().state.as_ref() {
                        let _ = writeln!(out, "{}", status_line(state, json));
                    }
                    let message = match s.reason {
                        StopReason::License => format!("{} Playback and sync are stopped.", s.message),
                        _ => s.message,
                    };
                    return stop(s.reason.exit_code(), &message);
                }
                Some(Event::Notice(Notice::Failed(m))) => return stop(StopReason::Local.exit_code(), &m),
                Some(Event::Notice(Notice::Dropped { book, message })) => {
                    eprintln!("earmark: a queued change for {book} was dropped: {message}");
                }
                Some(Event::Notice(Notice::Info(m))) => eprintln!("earmark: {m}"),
                Some(_) => {}
                None => return stop(StopReason::Local.exit_code(), "playback stopped"),
            },
            changed = now.changed() => {
                if changed.is_err() {
                    return stop(StopReason::Local.exit_code(), "the audio engine stopped");
                }
                let n = now.borrow_and_update().clone();
                if !sound_said
                    && let Some((b, sound)) = &n.sound
                    && *b == book
                {
                    sound_said = true;
                    if !sound.settings.is_neutral() {
                        eprintln!("earmark: this book's sound: {}.", sound.settings.describe());
                    }
                }
                let Some(s) = n.state else { continue };
                if !startup_printed && let Some(t) = playback.first_audio_at() {
                    startup_printed = true;
                    let _ = writeln!(out, "{}", startup.json(t));
                }
                let this_book = n.book.as_ref() == Some(&book);
                if s.status == Status::Ended && this_book && ended != Some(s.playback_id) {
                    ended = Some(s.playback_id);
                    let _ = writeln!(out, "{}", status_line(&s, json));
                    let Some(on) = next else { return ExitCode::SUCCESS };
                    let following = match on.next_after(playback, &book).await {
                        Ok(Some(n)) => n,
                        Ok(None) => return ExitCode::SUCCESS,
                        Err((code, message)) => return stop(code, &message),
                    };
                    let _ = out.flush();
                    let wait = on.rule.countdown;
                    if !wait.is_zero() {
                        eprintln!(
                            "earmark: next: {} in {} s, Ctrl-C to stop",
                            following.title,
                            wait.as_secs_f64().ceil()
                        );
                    }
                    let over = tokio::select! {
                        _ = tokio::time::sleep(wait) => Countdown::Over,
                        _ = next_signal(&mut int) => Countdown::Signal,
                        _ = next_signal(&mut term) => Countdown::Signal,
                        _ = async { match limit { Some(d) => tokio::time::sleep_until(d).await, None => std::future::pending().await } } => Countdown::Limit,
                    };
                    match over {
                        Countdown::Over => {}
                        Countdown::Signal => return ExitCode::from(130),
                        Countdown::Limit => return ExitCode::SUCCESS,
                    }
                    match on.open(playback, following).await {
                        Ok(b) => {
                            book = b;
                            sound_said = false;
                        }
                        Err((code, message)) => return stop(code, &message),
                    }
                }
            }
            changed = sync.changed() => {
                if changed.is_err() {
                    return stop(StopReason::Local.exit_code(), "sync stopped");
                }
            }
            _ = lines.tick() => {
                // Nothing to report until the engine has taken the Load.
                if let Some(s) = now.borrow().state.as_ref() {
                    let _ = writeln!(out, "{}", status_line(s, json));
                    let _ = out.flush();
                }
            }
            _ = next_signal(&mut int) => return ExitCode::from(130),
            _ = next_signal(&mut term) => return ExitCode::from(130),
            _ = async { match deadline { Some(d) => tokio::time::sleep_until(d).await, None => std::future::pending().await } } => {
                if !restored {
                    return stop(StopReason::Network.exit_code(), &format!(
                        "could not restore the position: no answer within {} s",
                        RESTORE_WITHIN.as_secs()
                    ));
                }
                // Stop the audio where it is, so the place printed and
                // reported is where listening stopped, not the last tick's.
                let s = pause_and_read(playback, &mut now).await;
                if let Some(s) = s {
                    let _ = writeln!(out, "{}", status_line(&s, json));
                }
                return ExitCode::SUCCESS;
            }
        }
    }
}

/// Pauses and returns the state once paused (or the latest one after
/// 1 s: an engine that cannot pause still gets its place saved).
async fn pause_and_read(
    playback: &Playback,
    now: &mut tokio::sync::watch::Receiver<Now>,
) -> Option<PlayerState> {
    playback.control(Control::Pause);
    let paused = tokio::time::timeout(
        Duration::from_secs(1),
        now.wait_for(|n| {
            n.state
                .as_ref()
                .is_some_and(|s| s.status != Status::Playing)
        }),
    )
    .await
    .ok()
    .and_then(Result::ok)
    .map(|n| n.state.clone());
    paused.unwrap_or_else(|| now.borrow().state.clone())
}

async fn next_signal(s: &mut Option<tokio::signal::unix::Signal>) {
    match s {
        Some(s) => {
            s.recv().await;
        }
        None => std::future::pending().await,
    }
}

/// One status line. `landed`: `true` once the place asked is playing,
/// `false` before, and `"approximate"` while the place playing is the
/// engine's estimate (a far seek in an mp3 it could not count; the
/// position is corrected, and `true` printed, once it knows).
fn status_line(s: &PlayerState, json: bool) -> String {
    let chapter = s.chapter_id.as_ref().map(|c| c.as_str()).unwrap_or("-");
    if json {
        let landed = match (s.landed, s.approximate) {
            (true, true) => serde_json::json!("approximate"),
            (landed, _) => serde_json::json!(landed),
        };
        serde_json::json!({
            "playback_id": s.playback_id.0,
            "chapter_id": s.chapter_id.as_ref().map(|c| c.as_str()),
            "position": (s.position * 1000.0).round() / 1000.0,
            "book_position": s.book_position.map(|b| (b * 1000.0).round() / 1000.0),
            "state": s.status.name(),
            "speed": s.speed,
            "landed": landed,
            "sound": s.sound,
            "silence_skipped": (s.silence_skipped * 1000.0).round() / 1000.0,
            "error": match &s.status { Status::Error(e) => Some(e.to_string()), _ => None },
        })
        .to_string()
    } else {
        let dur = s
            .duration
            .map(|d| format!(" / {}", clock(d)))
            .unwrap_or_default();
        // `~`: the place is an estimate.
        let about = if s.landed && s.approximate { "~" } else { "" };
        format!(
            "[{}] {chapter} {about}{}{dur}  {:.2}x",
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

#[cfg(test)]
mod status_line_tests {
    use super::*;

    #[test]
    fn a_place_landed_by_estimate_says_approximate_and_never_true() {
        let landed = |s: &PlayerState| {
            let line: serde_json::Value = serde_json::from_str(&status_line(s, true)).unwrap();
            line["landed"].clone()
        };
        let mut s = PlayerState {
            landed: true,
            position: 1140.0,
            ..PlayerState::default()
        };
        assert_eq!(landed(&s), serde_json::json!(true));
        s.approximate = true;
        assert_eq!(landed(&s), serde_json::json!("approximate"));
        assert!(status_line(&s, false).contains("~0:19:00"));
        s.landed = false;
        assert_eq!(landed(&s), serde_json::json!(false));
    }
}
