//! `earmark play`: headless playback of a book, as one more client of the
//! session owner the player uses too (`crate::playback`: the download or
//! the server's queue, the engine, sync restoring and reporting the place,
//! each book's sound, up next and its countdown, every stop and its
//! reason). It sends the same commands as the player's keys, prints a
//! status line a second and exits with the code of the stop's reason
//! (docs/cli.md). With `--up-next` the owner opens the next book when one
//! ends.

use super::{CommandError, Invocation};
use crate::config::ListeningRules;
use crate::domain::clock::hms as clock;
use crate::domain::session::{
    Command, Event, Landing, Listening, PlayState, Said, Snapshot, Start,
};
use crate::domain::wait::or_never;
use crate::domain::{BookId, ChapterId, Opening, UpNextMode};
use crate::playback::{Events, Expect, Login, Playback, Setup, StopReason};
use crate::player::AudioMode;
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
    /// A detached session's pipe to the `earmark play --detach` that
    /// started it (`crate::ctl::detach`).
    pub session_fd: Option<i32>,
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
    let mut ready = args.session_fd.map(crate::ctl::detach::Ready::from_fd);
    if ready.is_some() {
        crate::ctl::detach::log_to_stderr();
    }
    match rt.block_on(play(global, args, startup, &mut ready)) {
        Ok(code) => code,
        Err(e) => {
            if let Some(r) = ready.as_mut() {
                r.failed(e.code, &e.message);
            }
            eprintln!("earmark play: {}", e.message);
            ExitCode::from(e.code)
        }
    }
}

/// Where to start when flags say so: `--chapter` (at `--at` or 0), or
/// `--at` in the first chapter. `None`: resume.
fn start_point(chapter: Option<&str>, at: Option<f64>) -> Result<Start, String> {
    if let Some(at) = at
        && (!at.is_finite() || at < 0.0)
    {
        return Err(format!("--at must be a number of seconds ≥ 0, not {at}"));
    }
    Ok(Start::of(chapter.map(ChapterId::new), at))
}

/// The session's rules from config.toml; up next only with `--up-next`
/// (asked for while `[player] up_next` is off: the default rule). A
/// script's place is exact: no smart rewind.
fn rules(profile: &crate::config::Profile, up_next: bool) -> Result<ListeningRules, CommandError> {
    let config = crate::config::Config::load(&profile.dirs.config_file())
        .map_err(|e| CommandError::usage(e.to_string()))?;
    let mut rules = ListeningRules::of(&config).map_err(CommandError::usage)?;
    rules.rewind = None;
    rules.up_next = match (up_next, rules.up_next) {
        (false, _) => UpNextMode::Off,
        (true, UpNextMode::Off) => UpNextMode::Series,
        (true, m) => m,
    };
    Ok(rules)
}

async fn play(
    global: &Invocation,
    args: PlayArgs,
    mut startup: Startup,
    ready: &mut Option<crate::ctl::detach::Ready>,
) -> Result<ExitCode, CommandError> {
    let (profile, session) = crate::config::Session::load_for(&global.select)?;
    // One session per profile: the lock, then its control socket.
    let claim = crate::ctl::claim_for_play(&profile)
        .map_err(|(code, message)| CommandError { code, message })?;
    let client = session.client(&profile)?;
    startup.session = Some(Instant::now());
    let book = BookId::new(args.book_id.as_str());
    let start = start_point(args.chapter.as_deref(), args.at).map_err(CommandError::usage)?;
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
    let rules = rules(&profile, args.up_next)?;
    let mut login = Login::of(&profile, Some(&session), Some(client));
    login.sync.follow_server = true;
    // The owner starts first, so the manifest, the place and (for a
    // chapter named, and no download) the stream are asked for together.
    let (playback, events) = Playback::start(Setup {
        dirs: profile.dirs.clone(),
        login,
        audio: args.audio,
        rules,
        ready_last: false,
    });
    startup.engine = Some(Instant::now());
    if let Some(why) = playback.no_audio() {
        let message = format!("no audio: {why}");
        playback.quit(Duration::ZERO).await;
        return Err(CommandError {
            code: StopReason::Local.exit_code(),
            message,
        });
    }
    let detached = ready.is_some();
    let mut serving = match crate::ctl::serve_play(&playback, &profile, claim.as_ref(), detached) {
        Ok(s) => s,
        Err(message) => {
            playback.quit(Duration::ZERO).await;
            let code = StopReason::Local.exit_code();
            return Err(CommandError { code, message });
        }
    };
    // The chapter named, else (no --at) the one this device last played:
    // its stream is asked for beside the manifest and the place.
    let expect = match &start {
        Start::At(c, _) => Expect::Chapter(c.clone()),
        Start::Resume => Expect::Resume,
        _ => Expect::Unknown,
    };
    playback.open_ahead(&book, expect);
    playback.send(Command::Open {
        book: book.clone(),
        start,
        known: None,
    });
    if let Some(ready) = ready.take()
        && let Some(serving) = serving.take()
    {
        // Detached: no terminal, no status lines; it plays until asked to quit.
        let asked = crate::ctl::detach::Asked {
            book,
            speed: args.speed,
            for_secs: args.for_secs,
        };
        return Ok(crate::ctl::detach::session(&playback, events, serving, ready, asked).await);
    }
    let run = Run {
        playback: &playback,
        book,
        for_secs: args.for_secs,
        json: global.json,
        speed: args.speed,
        serving: serving.as_mut(),
    };
    let code = run.follow(events, startup).await;
    crate::ctl::end_play(&playback, serving).await;
    Ok(code)
}

/// What `follow` works with.
struct Run<'a> {
    playback: &'a Playback,
    book: BookId,
    for_secs: Option<f64>,
    json: bool,
    /// `--speed`: sent once the book is the session's.
    speed: Option<f32>,
    /// The control socket: `earmark ctl quit` ends the command.
    serving: Option<&'a mut crate::ctl::Serving>,
}

/// What one of the session's events means for this command.
enum Then {
    Go,
    Exit(u8, String),
    /// Up next has nothing more: the book that ended was the last.
    Done,
}

impl Run<'_> {
    /// The session's book, when it is ours.
    fn ours<'s>(&self, snap: &'s Snapshot) -> Option<&'s Listening> {
        snap.listening.as_ref().filter(|l| l.book.id == self.book)
    }

    fn event(&mut self, e: Event) -> Then {
        match e {
            Event::Stopped(s) => {
                let message = match s.reason {
                    StopReason::License => format!("{} Playback and sync are stopped.", s.message),
                    StopReason::Forbidden => format!("no permission: {}", s.message),
                    _ => s.message,
                };
                Then::Exit(s.reason.exit_code(), message)
            }
            Event::Said(said) => self.said(said),
            _ => Then::Go,
        }
    }

    fn said(&mut self, said: Said) -> Then {
        let book = &self.book;
        match said {
            Said::Failed(m) => return Then::Exit(StopReason::Local.exit_code(), m),
            Said::NoChapters { .. } => {
                let why = "this book has no chapters to play".to_owned();
                return Then::Exit(StopReason::Local.exit_code(), why);
            }
            Said::UpNextUnread { why, .. } => {
                return Then::Exit(StopReason::Local.exit_code(), format!("up next: {why}"));
            }
            Said::SoundConfig { why } => eprintln!("earmark: {why}; using the defaults."),
            Said::SoundFileAside { to } => eprintln!(
                "earmark: sound.json could not be read; it was moved to {to} and the defaults apply"
            ),
            Said::NotDownloaded { book, why } => {
                let why = format!("{why}; {book} is not downloaded");
                return Then::Exit(StopReason::Network.exit_code(), why);
            }
            Said::FromDownload { offline: false, .. } => {
                eprintln!("earmark: playing the downloaded copy of {book}.")
            }
            Said::FromDownload { offline: true, .. } => eprintln!(
                "earmark: the server cannot be reached: playing the downloaded copy of {book}; progress is kept and sent when the server is back."
            ),
            Said::DownloadOutdated { .. } => eprintln!(
                "earmark: the server's manifest of {book} changed since it was downloaded: streaming the server's queue instead. `earmark download {book}` updates the download."
            ),
            Said::Dropped { book, why } => {
                eprintln!("earmark: a queued change for {book} was dropped: {why}")
            }
            Said::MovedToServer { to, .. } => eprintln!(
                "earmark: the server has a newer place for this book (another device's): chapter {} at {}; playing from there.",
                to.chapter,
                clock(to.position)
            ),
            Said::UpNextStarting { next, opening } => {
                let again = match opening {
                    Opening::Restart => ", from the beginning: it was finished",
                    Opening::Resume => "",
                };
                eprintln!("earmark: up next: {} ({}){again}", next.title, next.book);
                self.book = next.book;
            }
            Said::UpNextNone(why) => {
                use crate::domain::session::UpNextWhy;
                if why == UpNextWhy::NotDownloaded {
                    eprintln!(
                        "earmark: up next: the next book is not downloaded and the server cannot be reached."
                    );
                }
                return Then::Done;
            }
            Said::Info(m) => eprintln!("earmark: {m}"),
            Said::Sync(n) => eprintln!("earmark: {}", crate::ui::words::sync_news(&n)),
            _ => {}
        }
        Then::Go
    }

    /// Prints one status line a second until `--for` runs out, the book
    /// ends (with `--up-next`: the last one), playback stops (with its
    /// reason's exit code), or a signal arrives.
    async fn follow(mut self, mut events: Events, mut startup: Startup) -> ExitCode {
        let began = tokio::time::Instant::now();
        let limit = self
            .for_secs
            .map(|s| began + Duration::from_secs_f64(s.max(0.0)));
        let mut snap = self.playback.snapshot();
        let mut lines = tokio::time::interval(Duration::from_secs(1));
        lines.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut ends = crate::ctl::Ends::listen();
        let mut out = std::io::stdout().lock();
        let mut seen = Seen::default();
        let mut serving = self.serving.take();
        loop {
            let restored = self.ours(&snap.borrow()).is_some_and(|l| l.load != 0);
            if restored && startup.load.is_none() {
                startup.load = Some(Instant::now());
            }
            let deadline = match (restored, limit) {
                (false, l) => {
                    Some(l.map_or(began + RESTORE_WITHIN, |l| l.min(began + RESTORE_WITHIN)))
                }
                (true, l) => l,
            };
            tokio::select! {
                e = events.recv() => {
                    let then = match e {
                        Ok(e) => self.event(e),
                        Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => Then::Go,
                        Err(_) => Then::Exit(StopReason::Local.exit_code(), "playback stopped".into()),
                    };
                    match then {
                        Then::Go => {}
                        Then::Done => return ExitCode::SUCCESS,
                        Then::Exit(code, message) => {
                            if let Some(l) = self.ours(&snap.borrow()) {
                                let _ = writeln!(out, "{}", status_line(l, self.json));
                            }
                            return self.stop(code, &message);
                        }
                    }
                }
                changed = snap.changed() => {
                    if changed.is_err() {
                        return self.stop(StopReason::Local.exit_code(), "the session stopped");
                    }
                    let now = snap.borrow_and_update().clone();
                    if let Some(code) = self.changed(&now, &mut seen, &mut startup, &mut out) {
                        return code;
                    }
                }
                _ = lines.tick() => {
                    // Nothing to report until the engine has taken the Load.
                    if let Some(l) = self.ours(&snap.borrow()).filter(|l| l.load != 0) {
                        let _ = writeln!(out, "{}", status_line(l, self.json));
                        let _ = out.flush();
                    }
                }
                code = ends.next(serving.as_deref_mut()) => return code,
                _ = or_never(deadline.map(tokio::time::sleep_until)) => {
                    if !restored {
                        return self.stop(StopReason::Network.exit_code(), &format!(
                            "could not restore the position: no answer within {} s",
                            RESTORE_WITHIN.as_secs()
                        ));
                    }
                    // Stop the audio where it is, so the place printed and
                    // reported is where listening stopped, not the last tick's.
                    if let Some(l) = self.pause_and_read(&mut snap).await {
                        let _ = writeln!(out, "{}", status_line(&l, self.json));
                    }
                    return ExitCode::SUCCESS;
                }
            }
        }
    }

    /// One new snapshot: start-up's figures, the book's sound, `--speed`,
    /// the countdown's line, the end. `Some`: exit with it.
    fn changed(
        &mut self,
        snap: &Snapshot,
        seen: &mut Seen,
        startup: &mut Startup,
        out: &mut impl Write,
    ) -> Option<ExitCode> {
        if let Some(c) = &snap.up_next.countdown
            && seen.countdown.as_ref() != Some(&c.next.book)
        {
            seen.countdown = Some(c.next.book.clone());
            let secs = (c.starts_at - crate::domain::now_millis()).max(0) as f64 / 1000.0;
            if secs > 0.0 {
                eprintln!(
                    "earmark: next: {} in {} s, Ctrl-C to stop",
                    c.next.title,
                    secs.ceil()
                );
            }
        }
        say_throttle(&snap.link, &mut seen.throttle);
        let l = self.ours(snap)?;
        // The owner read the manifest (and chose the download or stream).
        startup.manifest.get_or_insert_with(Instant::now);
        if let Some(s) = self.speed.take() {
            self.playback.send(Command::Speed(s));
        }
        if !seen.startup
            && self.json
            && let Some(t) = self.playback.first_audio_at()
        {
            seen.startup = true;
            let _ = writeln!(out, "{}", startup.json(t));
        }
        if seen.sound.as_ref() != Some(&self.book) && l.load != 0 {
            seen.sound = Some(self.book.clone());
            if !l.sound.settings.is_neutral() {
                eprintln!(
                    "earmark: this book's sound: {}.",
                    l.sound.settings.describe()
                );
            }
        }
        if l.state == PlayState::Ended && seen.ended != Some(l.load) {
            seen.ended = Some(l.load);
            let _ = writeln!(out, "{}", status_line(l, self.json));
            let _ = out.flush();
            // Without up next the command is done; with it, the owner
            // counts down (or says nothing follows).
            if snap.up_next.mode == UpNextMode::Off {
                return Some(ExitCode::SUCCESS);
            }
        }
        None
    }

    fn stop(&self, code: u8, message: &str) -> ExitCode {
        self.playback.send(Command::Pause);
        eprintln!("earmark play: {message}");
        ExitCode::from(code)
    }

    /// Pauses and returns the place once paused (or the latest one after
    /// 1 s: an engine that cannot pause still gets its place saved).
    async fn pause_and_read(
        &self,
        snap: &mut tokio::sync::watch::Receiver<Snapshot>,
    ) -> Option<Listening> {
        self.playback.send(Command::Pause);
        let book = self.book.clone();
        let paused = tokio::time::timeout(
            Duration::from_secs(1),
            snap.wait_for(|s| {
                s.listening
                    .as_ref()
                    .is_some_and(|l| l.book.id == book && l.state != PlayState::Playing)
            }),
        )
        .await
        .ok()
        .and_then(Result::ok)
        .and_then(|s| s.listening.clone());
        paused.or_else(|| self.ours(&snap.borrow()).cloned())
    }
}

/// What was said or printed once.
#[derive(Default)]
struct Seen {
    startup: bool,
    sound: Option<BookId>,
    ended: Option<u64>,
    countdown: Option<BookId>,
    throttle: bool,
}

/// A server's "slow down", said once.
fn say_throttle(link: &crate::domain::session::Link, said: &mut bool) {
    use crate::domain::backoff::Slowdown;
    let crate::domain::session::Link::Throttled(t) = link else {
        return;
    };
    if !std::mem::replace(said, true) {
        match t {
            Slowdown::Asked { secs } => eprintln!(
                "earmark: the server asked to wait {secs} s; changes are kept and sent then."
            ),
            Slowdown::Busy => {
                eprintln!("earmark: the server is busy; changes are kept and sent later.")
            }
        }
    }
}

fn status_line(l: &Listening, json: bool) -> String {
    let chapter = l.chapter.as_str();
    if json {
        let landed = match l.landed {
            Landing::Exact => serde_json::json!(true),
            Landing::Pending => serde_json::json!(false),
            Landing::Approximate => serde_json::json!("approximate"),
        };
        serde_json::json!({
            "playback_id": l.load,
            "chapter_id": chapter,
            "position": (l.position * 1000.0).round() / 1000.0,
            "book_position": l.book_progress().0.map(|b| (b * 1000.0).round() / 1000.0),
            "duration": l.duration.map(|d| (d * 1000.0).round() / 1000.0),
            "durationSource": match l.duration_from {
                crate::domain::session::LengthFrom::Server => "server",
                crate::domain::session::LengthFrom::Measured => "measured",
            },
            "state": l.state.name(),
            "speed": l.speed,
            "landed": landed,
            "sound": l.sound.settings,
            "silence_skipped": (l.sound.skipped_now * 1000.0).round() / 1000.0,
            "error": match &l.state { PlayState::Error(e) => Some(e.clone()), _ => None },
        })
        .to_string()
    } else {
        let dur = l
            .duration
            .map(|d| format!(" / {}", clock(d)))
            .unwrap_or_default();
        // `~`: the place is an estimate.
        let about = if l.landed == Landing::Approximate {
            "~"
        } else {
            ""
        };
        format!(
            "[{}] {chapter} {about}{}{dur}  {:.2}x",
            l.state.name(),
            clock(l.position),
            l.speed
        )
    }
}
