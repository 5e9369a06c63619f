//! Effects for the audio engine, and progress reports to the server.
//!
//! Reporting rules (the sync issue's pitfalls): nothing is reported before
//! the engine has `landed` on the restored place; a position under 1 s is
//! never reported unless the user asked for it (restart, mark unfinished);
//! only the current playback reports, so book X never gets book Y's place.
//! The durable outbox and reconciler of `crate::sync` replace the direct
//! writes here once a `sync::remote::Remote` for the client exists.

use super::Shared;
use crate::api::{ApiError, ProgressWrite};
use crate::domain::{BookId, ChapterId, Manifest, now_millis};
use crate::player::{Command, EngineHandle, PlayerState, Status};
use crate::ui::state::{Backend as Answer, EngineCmd, EngineView, PlayState, StartAt, SyncView};
use std::sync::Arc;
use std::time::Duration;

/// Seconds between periodic reports while playing.
const REPORT_EVERY: Duration = Duration::from_secs(10);

/// The book the engine plays, as the reporter needs it.
#[derive(Debug, Clone)]
pub(crate) struct Current {
    pub book: BookId,
    pub playback: u64,
    /// Direct writes only: the server's progress was read (or the user
    /// chose the place). Unchecked, nothing is reported: the server may
    /// hold progress this playback would overwrite.
    pub checked: bool,
    /// Direct writes only: the server says the book is finished; reports
    /// keep it so (only restart or mark unfinished may unmark it).
    pub finished: bool,
}

fn client(sh: &Shared) -> Option<crate::api::Client> {
    sh.client.read().ok().and_then(|c| c.clone())
}

fn engine(sh: &Shared) -> Option<EngineHandle> {
    sh.engine.lock().ok().and_then(|e| e.clone())
}

pub(super) fn to_command(cmd: EngineCmd) -> Command {
    match cmd {
        EngineCmd::Toggle => Command::Toggle,
        EngineCmd::Pause => Command::Pause,
        EngineCmd::SkipBy(s) => Command::SkipBy(s),
        EngineCmd::NextChapter => Command::NextChapter,
        EngineCmd::PrevChapter => Command::PrevChapter,
        EngineCmd::Seek { chapter, position } => Command::Seek { chapter, position },
        EngineCmd::SetSpeed(s) => Command::SetSpeed(s),
        EngineCmd::SetVolume(v) | EngineCmd::FadeVolume(v) => Command::SetVolume(v),
    }
}

/// Loads `manifest` at the start the user asked for (resume: the server's
/// progress, else the first chapter).
pub(super) async fn play(
    sh: Arc<Shared>,
    book: BookId,
    manifest: Manifest,
    start: StartAt,
    seq: u64,
) {
    let Some(engine) = engine(&sh) else {
        sh.ui
            .send(Answer::Failed("No audio engine: playback is off.".into()));
        return;
    };
    let Some(first) = manifest.items.first().map(|i| i.chapter_id.clone()) else {
        sh.ui
            .send(Answer::Failed("This book has no chapters to play.".into()));
        return;
    };
    // The book playing before reports its last place first.
    report(&sh, false).await;
    if let Some(link) = sh.ensure_sync() {
        let latest = sh.plays.lock().unwrap_or_else(|e| e.into_inner());
        if *latest == seq {
            link.open(book, manifest, start);
        }
        return;
    }
    // Direct writes (the sync worker could not start): the server's
    // record decides whether and how this playback may report.
    let server = match (&start, client(&sh)) {
        (StartAt::Restart, _) | (_, None) => None,
        (_, Some(c)) => Some(c.progress(&book).await),
    };
    let checked = matches!(start, StartAt::Restart) || matches!(server, Some(Ok(_)));
    let finished = match &server {
        Some(Ok(state)) => state.progress.as_ref().is_some_and(|p| p.finished),
        _ => false,
    };
    let spot = match start {
        StartAt::At(c, p) => (c, p),
        StartAt::Restart => {
            if let Some(c) = client(&sh) {
                let w = write(first.clone(), 0.0, false, true);
                if let Err(e) = c.post_progress(&book, &w).await {
                    super::api::fail(&sh, "Could not restart on the server", &e);
                }
            }
            (first, 0.0)
        }
        StartAt::Resume => match server {
            None => (first, 0.0),
            Some(state) => match state {
                Ok(state) => match state.progress {
                    Some(p) if !p.finished && manifest.position_of(&p.chapter_id).is_some() => {
                        if let Some(s) = state.settings {
                            engine.send(Command::SetSpeed(crate::player::clamp_speed(s.speed)));
                        }
                        (p.chapter_id, p.position.max(0.0))
                    }
                    _ => (first, 0.0),
                },
                Err(e) => {
                    // Offline: start where asked, never report before landing.
                    if e.is_license() {
                        super::api::fail(&sh, "Cannot play", &e);
                        return;
                    }
                    sh.ui.send(Answer::Notice(format!(
                        "Could not read your progress ({e}); starting at the beginning. It is not saved until the server can be reached."
                    )));
                    (first, 0.0)
                }
            },
        },
    };
    let latest = sh.plays.lock().unwrap_or_else(|e| e.into_inner());
    if *latest != seq {
        return; // another book was asked for meanwhile
    }
    sh.load_engine(&engine, manifest, spot, |id| {
        if let Ok(mut cur) = sh.current.lock() {
            *cur = Some(Current {
                book: book.clone(),
                playback: id,
                checked,
                finished,
            });
        }
    });
}

fn write(chapter: ChapterId, position: f64, finished: bool, reset: bool) -> ProgressWrite {
    ProgressWrite {
        chapter_id: chapter,
        position,
        client_updated_at: now_millis(),
        finished,
        device_id: None,
        reset,
    }
}

/// Reports the engine's place for the current book, when it is safe to.
pub(super) async fn report(sh: &Arc<Shared>, _explicit: bool) {
    if let Some(link) = sh.sync_link() {
        // The outbox has every position already; send what is queued now.
        if let Some(e) = engine(sh) {
            link.engine_state(&e.state());
        }
        link.handle.send(crate::sync::worker::Command::Flush);
        return;
    }
    let (Some(c), Some(engine)) = (client(sh), engine(sh)) else {
        return;
    };
    let Some(cur) = sh.current.lock().ok().and_then(|c| c.clone()) else {
        return;
    };
    let s = engine.state();
    if !cur.checked {
        return; // the server's progress is unknown: never overwrite it
    }
    if s.playback_id.0 != cur.playback || !s.landed || matches!(s.status, Status::Error(_)) {
        return;
    }
    let Some(chapter) = s.chapter_id.clone() else {
        return;
    };
    let first = s.book_position.is_some_and(|b| b < 1.0);
    if s.position < 1.0 && first {
        return; // a transient 0 never replaces progress
    }
    let key = (
        cur.playback,
        chapter.clone(),
        (s.position * 10.0).round() as i64,
    );
    if sh
        .last_report
        .lock()
        .ok()
        .is_some_and(|l| l.as_ref() == Some(&key))
    {
        return;
    }
    let w = write(
        chapter,
        s.position,
        cur.finished || matches!(s.status, Status::Ended),
        false,
    );
    sync_view(sh, |v| v.syncing = true);
    match c.post_progress(&cur.book, &w).await {
        Ok(_) => {
            if let Ok(mut l) = sh.last_report.lock() {
                *l = Some(key);
            }
            sync_view(sh, |v| {
                v.syncing = false;
                v.offline = false;
                v.queued = 0;
            });
        }
        Err(e) => {
            let offline = matches!(e, ApiError::Network { .. } | ApiError::Server { .. });
            sync_view(sh, |v| {
                v.syncing = false;
                v.offline = offline;
                v.queued = 1;
            });
            if e.is_license() || e.needs_login() {
                super::api::fail(sh, "Could not save your progress", &e);
            }
        }
    }
}

fn sync_view(sh: &Shared, f: impl FnOnce(&mut SyncView)) {
    if let Ok(mut v) = sh.sync_view.lock() {
        let before = *v;
        f(&mut v);
        if *v != before {
            sh.ui.send(Answer::Sync(*v));
        }
    }
}

/// Marks a book finished or unfinished. The open book goes through the
/// reconciler's intent (at the landed position); another book is marked at
/// the server's place (or, offline, the place this device last knew) and
/// the write is journaled in the outbox, so it is sent when it can be.
pub(super) async fn set_finished(sh: Arc<Shared>, book: BookId, finished: bool) {
    if sh.sync_link().is_some_and(|l| l.finished(&book, finished)) {
        return;
    }
    let Some(c) = client(&sh) else { return };
    let (progress, manifest) = tokio::join!(c.progress(&book), c.manifest(&book));
    let offline = matches!(&progress, Err(e) if super::api::transient(e));
    if let Err(e) = &progress
        && e.is_license()
    {
        return super::api::fail(&sh, "Could not mark the book", e);
    }
    let mut place = match (progress, manifest) {
        (Ok(state), _) if state.progress.is_some() => {
            state.progress.map(|p| (p.chapter_id, p.position))
        }
        // Only a server that answered "no progress" means the start.
        (Ok(_), Ok(m)) => m.items.first().map(|i| (i.chapter_id.clone(), 0.0)),
        _ => None,
    };
    let link = sh.ensure_sync();
    if place.is_none() && offline && link.is_some() {
        place = cached_place(&sh, &c, &book).await;
    }
    let Some((chapter, position)) = place else {
        sh.ui.send(Answer::Failed(if offline {
            "Could not mark the book: the server cannot be reached and this device does not know your place in it.".into()
        } else {
            "Could not find the book's chapters.".into()
        }));
        return;
    };
    let w = write(chapter, position, finished, !finished);
    if let Some(link) = link {
        link.handle.send(crate::sync::worker::Command::Queue {
            book: book.clone(),
            op: crate::sync::outbox::Op::ProgressWrite(crate::sync::outbox::QueuedProgress {
                chapter_id: w.chapter_id.clone(),
                position_sec: w.position,
                finished: w.finished,
                reset: w.reset,
                client_updated_at: w.client_updated_at,
            }),
        });
        sh.ui.send(Answer::ProgressChanged {
            book,
            progress: crate::domain::Progress {
                chapter_id: w.chapter_id,
                position: w.position,
                book_position: None,
                finished,
                client_updated_at: Some(w.client_updated_at),
                server_updated_at: None,
            },
        });
        if offline {
            sh.ui.send(Answer::Notice(
                "Offline: the change is saved here and sent when the server is back.".into(),
            ));
        }
        return;
    }
    match c.post_progress(&book, &w).await {
        Ok(out) => {
            if let Some(p) = out.record {
                sh.ui.send(Answer::ProgressChanged { book, progress: p });
            }
        }
        Err(e) => super::api::fail(&sh, "Could not mark the book", &e),
    }
}

/// The place this device last knew for `book` (the sync worker's cache).
async fn cached_place(
    sh: &Shared,
    c: &crate::api::Client,
    book: &BookId,
) -> Option<(ChapterId, f64)> {
    let scope = crate::sync::client_remote::scope_of(c)?;
    let path = {
        let p = sh.profile.read().ok()?;
        crate::sync::cli::sync_dir(&p).join("progress-cache.json")
    };
    let book = book.clone();
    tokio::task::spawn_blocking(move || {
        crate::sync::cache::Cache::load(path)
            .progress(&scope, &book)
            .map(|l| (l.spot.chapter, l.spot.position))
    })
    .await
    .ok()
    .flatten()
}

/// Forwards the engine's published state to the UI (at most ~5 per second
/// unless something other than the position changed) and reports progress
/// every `REPORT_EVERY` while playing and on pause.
pub(super) async fn forward(sh: Arc<Shared>, engine: EngineHandle) {
    let mut rx = engine.subscribe();
    let mut last_sent: Option<PlayerState> = None;
    let mut last_report = tokio::time::Instant::now();
    loop {
        if rx.changed().await.is_err() {
            return;
        }
        let s = rx.borrow_and_update().clone();
        let link = sh.sync_link();
        if let Some(link) = &link {
            link.engine_state(&s);
        }
        let Some(cur) = sh.current.lock().ok().and_then(|c| c.clone()) else {
            continue;
        };
        let paused_now = last_sent
            .as_ref()
            .is_some_and(|l| l.status == Status::Playing && s.status != Status::Playing);
        let important = last_sent.as_ref().is_none_or(|l| {
            l.status != s.status
                || l.chapter_id != s.chapter_id
                || l.playback_id != s.playback_id
                || l.speed != s.speed
                || l.volume != s.volume
        });
        let moved = last_sent
            .as_ref()
            .is_none_or(|l| (l.position - s.position).abs() >= 0.2);
        if s.playback_id.0 == cur.playback
            && (important || moved)
            && let Some(chapter) = s.chapter_id.clone()
        {
            sh.ui.send(Answer::Engine(EngineView {
                playback_id: s.playback_id.0,
                book: cur.book.clone(),
                chapter,
                position: s.position,
                state: match &s.status {
                    Status::Idle => PlayState::Loading,
                    Status::Playing => PlayState::Playing,
                    Status::Paused => PlayState::Paused,
                    Status::Buffering => PlayState::Buffering,
                    Status::Stalled => PlayState::Stalled,
                    Status::Ended => PlayState::Ended,
                    Status::Error(e) => PlayState::Error(e.to_string()),
                },
                speed: s.speed,
                volume: s.volume,
            }));
            if let Status::Error(e) = &s.status
                && e.kind == crate::player::ErrorKind::LicenseRequired
            {
                super::api::license_required(&sh, e.message.clone());
            }
            last_sent = Some(s.clone());
        }
        if link.is_none()
            && (paused_now
                || (s.status == Status::Playing && last_report.elapsed() >= REPORT_EVERY))
        {
            last_report = tokio::time::Instant::now();
            let sh2 = sh.clone();
            tokio::spawn(async move { report(&sh2, false).await });
        }
    }
}

/// The playing book and its settings after a change: the changed value,
/// and the other one as the engine has it (a write carries both).
fn settings_after(
    sh: &Shared,
    speed: Option<f32>,
    volume: Option<f32>,
) -> Option<(BookId, f32, Option<f32>)> {
    let cur = sh.current.lock().ok().and_then(|c| c.clone())?;
    let now = engine(sh).map(|e| e.state());
    let speed = speed.or(now.as_ref().map(|s| s.speed)).unwrap_or(1.0);
    let volume = volume.or(now.as_ref().map(|s| s.volume));
    Some((cur.book, speed, volume))
}

/// Queues the playing book's settings in the sync worker (never blocks).
/// False when there is no worker (the caller writes directly).
pub(super) fn queue_settings(sh: &Shared, speed: Option<f32>, volume: Option<f32>) -> bool {
    let Some(link) = sh.sync_link() else {
        return false;
    };
    if let Some((book, speed, volume)) = settings_after(sh, speed, volume) {
        link.handle.set_settings(book, speed, volume);
    }
    true
}

/// Writes the playing book's settings directly (no sync worker).
pub(super) async fn save_settings(sh: Arc<Shared>, speed: Option<f32>, volume: Option<f32>) {
    let Some((book, speed, volume)) = settings_after(&sh, speed, volume) else {
        return;
    };
    let Some(c) = client(&sh) else { return };
    let w = crate::api::SettingsWrite {
        speed,
        volume,
        client_updated_at: now_millis(),
    };
    if let Err(e) = c.post_playback_settings(&book, &w).await
        && (e.is_license() || e.needs_login())
    {
        super::api::fail(&sh, "Could not save the playback settings", &e);
    }
}
