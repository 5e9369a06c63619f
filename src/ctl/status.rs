//! What `status` answers and `watch` streams, made from the session's
//! [`Snapshot`]: pure, so the keys and units of docs/ctl.md are tested
//! here. Positions and durations are seconds of media; instants are
//! milliseconds since the Unix epoch.

use crate::domain::clock::hms as clock;
use crate::domain::session::{Event, Link, Listening, Said, Snapshot};
use crate::domain::sleep::SleepTimer;
use crate::domain::{Stop, now_millis};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Status {
    pub profile: String,
    pub pid: u32,
    /// `none` (no book), or the book's: ready, loading, playing, paused,
    /// buffering, stalled, ended, error.
    pub state: String,
    pub book: Option<BookNow>,
    pub chapter: Option<ChapterNow>,
    pub speed: Option<f32>,
    /// 0–1.
    pub volume: Option<f32>,
    pub sleep: Option<SleepNow>,
    /// online, offline, throttled, needs_login, license_stopped.
    pub link: String,
    /// The server holds this place (false: this device's, not confirmed yet).
    pub confirmed: Option<bool>,
    pub from_download: Option<bool>,
    /// Changes waiting to be sent to the server.
    pub queued: usize,
    pub stop: Option<StopNow>,
    /// The engine's words when the state is `error`.
    pub error: Option<String>,
    /// Why there is no audio output.
    pub no_audio: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BookNow {
    pub id: String,
    pub title: String,
    pub authors: Vec<String>,
    /// Seconds into the book (when every earlier chapter's length is known).
    pub position: Option<f64>,
    pub duration: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChapterNow {
    pub id: String,
    /// 1 for the first chapter.
    pub number: Option<usize>,
    /// Chapters in the book.
    pub count: usize,
    pub title: Option<String>,
    /// Seconds of media into the chapter.
    pub position: f64,
    pub duration: Option<f64>,
}

/// The sleep timer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SleepNow {
    /// timed, chapters, fading, stopped.
    pub kind: String,
    /// `timed`: seconds of wall time left.
    pub left_sec: Option<f64>,
    /// `timed`: counting down now (false: held while paused).
    pub counting: Option<bool>,
    /// `chapters`: it stops at the end of this many chapters, this one included.
    pub chapters: Option<u32>,
    /// `stopped`: when it stopped playback (ms since the epoch).
    pub at: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StopNow {
    /// license, login, no_permission, scope, not_found, network, rejected, local.
    pub reason: String,
    pub message: String,
    /// What `earmark play` exits with for it.
    pub exit_code: u8,
}

impl StopNow {
    pub fn of(s: &Stop) -> StopNow {
        StopNow {
            reason: super::protocol::Code::Server(s.reason).as_str().to_owned(),
            message: s.message.clone(),
            exit_code: s.reason.exit_code(),
        }
    }
}

pub fn link_name(l: &Link) -> &'static str {
    match l {
        Link::Online => "online",
        Link::Offline => "offline",
        Link::Throttled { .. } => "throttled",
        Link::NeedsLogin => "needs_login",
        Link::LicenseStopped => "license_stopped",
    }
}

pub fn sleep_now(t: &SleepTimer, now: i64) -> SleepNow {
    let kind = |kind: &str| SleepNow {
        kind: kind.into(),
        ..SleepNow::default()
    };
    match *t {
        SleepTimer::Timed { since, .. } => SleepNow {
            left_sec: t.left_ms(now).map(|ms| ms as f64 / 1000.0),
            counting: Some(since.is_some()),
            ..kind("timed")
        },
        SleepTimer::Chapters { left } => SleepNow {
            chapters: Some(left),
            ..kind("chapters")
        },
        SleepTimer::Fading { .. } => kind("fading"),
        SleepTimer::Stopped { at } => SleepNow {
            at: Some(at),
            ..kind("stopped")
        },
    }
}

fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

fn book_now(l: &Listening) -> BookNow {
    let (at, total) = l.book_progress();
    BookNow {
        id: l.book.id.to_string(),
        title: l.book.title.clone(),
        authors: l.book.authors.clone(),
        position: at.map(round),
        duration: total.map(round),
    }
}

fn chapter_now(l: &Listening) -> ChapterNow {
    ChapterNow {
        id: l.chapter.to_string(),
        number: l.chapter_index().map(|i| i + 1),
        count: l.manifest.items.len(),
        title: l.chapter_title().map(str::to_owned),
        position: round(l.position),
        duration: l.duration.map(round),
    }
}

/// The status of `snap` at `now`.
pub fn status(snap: &Snapshot, profile: &str, now: i64) -> Status {
    let l = snap.listening.as_ref();
    Status {
        profile: profile.to_owned(),
        pid: std::process::id(),
        state: l.map_or("none", |l| l.state.name()).to_owned(),
        book: l.map(book_now),
        chapter: l.map(chapter_now),
        speed: l.map(|l| l.speed),
        volume: l.map(|l| l.volume),
        sleep: snap.sleep.as_ref().map(|t| sleep_now(t, now)),
        link: link_name(&snap.link).to_owned(),
        confirmed: l.map(|l| l.confirmed),
        from_download: l.map(|l| l.from_download),
        queued: snap.queue.queued,
        stop: snap.stop.as_ref().map(StopNow::of),
        error: l.and_then(|l| match &l.state {
            crate::domain::session::PlayState::Error(e) => Some(e.clone()),
            _ => None,
        }),
        no_audio: snap.no_audio.clone(),
    }
}

pub fn status_now(snap: &Snapshot, profile: &str) -> Status {
    status(snap, profile, now_millis())
}

/// A place event is sent when the place moved this far since the last.
const PLACE_STEP: f64 = 1.0;

/// What one watcher last sent, to send only what changed.
#[derive(Debug, Default, Clone)]
pub struct Watched {
    state: Option<(String, Option<f32>)>,
    chapter: Option<(Option<String>, Option<String>)>,
    place: Option<f64>,
    sleep: Option<Option<SleepNow>>,
    link: Option<String>,
}

impl Watched {
    /// The event lines (objects) `now` calls for, in order: chapter,
    /// state, place, sleep, link.
    pub fn changes(&mut self, now: &Status) -> Vec<Value> {
        let mut out = Vec::new();
        let chapter = (
            now.book.as_ref().map(|b| b.id.clone()),
            now.chapter.as_ref().map(|c| c.id.clone()),
        );
        let new_chapter = self.chapter.as_ref() != Some(&chapter);
        if new_chapter {
            self.chapter = Some(chapter);
            out.push(json!({"event": "chapter", "book": now.book, "chapter": now.chapter}));
        }
        let state = (now.state.clone(), now.speed);
        let new_state = self.state.as_ref() != Some(&state);
        if new_state {
            self.state = Some(state);
            out.push(json!({"event": "state", "state": now.state, "speed": now.speed, "message": now.error}));
        }
        if let Some(c) = &now.chapter {
            let moved = self
                .place
                .is_none_or(|p| (p - c.position).abs() >= PLACE_STEP);
            if moved || new_chapter || new_state {
                self.place = Some(c.position);
                out.push(json!({
                    "event": "place", "chapter": c.id, "position": c.position,
                    "bookPosition": now.book.as_ref().and_then(|b| b.position),
                }));
            }
        }
        // A timed timer's `leftSec` runs down by itself: only its kind,
        // chapters and whether it counts make news.
        let sleep = now.sleep.clone().map(|mut s| {
            s.left_sec = None;
            s
        });
        if self.sleep.as_ref() != Some(&sleep) {
            self.sleep = Some(sleep);
            out.push(json!({"event": "sleep", "sleep": now.sleep}));
        }
        if self.link.as_ref() != Some(&now.link) {
            self.link = Some(now.link.clone());
            out.push(json!({"event": "link", "link": now.link}));
        }
        out
    }
}

/// The event line of a session event, for those a watcher is told.
pub fn event(e: &Event) -> Option<Value> {
    match e {
        Event::Stopped(s) => {
            let s = StopNow::of(s);
            Some(
                json!({"event": "stop", "reason": s.reason, "message": s.message, "exitCode": s.exit_code}),
            )
        }
        Event::Said(Said::MovedToServer { book, to }) => Some(json!({
            "event": "moved", "book": book.as_str(), "chapter": to.chapter.as_str(),
            "position": round(to.position),
        })),
        _ => None,
    }
}

/// The status in lines of text (`earmark ctl status`).
pub fn text(s: &Status) -> Vec<String> {
    let mut out = Vec::new();
    let of = |d: Option<f64>| d.map(|d| format!(" / {}", clock(d))).unwrap_or_default();
    match &s.book {
        Some(b) => out.push(format!("Book:     {} ({})", b.title, b.id)),
        None => out.push("Book:     none".to_owned()),
    }
    if let Some(c) = &s.chapter {
        let n = c.number.map_or("?".to_owned(), |n| n.to_string());
        let title = c
            .title
            .as_deref()
            .map(|t| format!("{t} "))
            .unwrap_or_default();
        out.push(format!(
            "Chapter:  {n}/{} {title}({})  {}{}",
            c.count,
            c.id,
            clock(c.position),
            of(c.duration)
        ));
    }
    if let Some(b) = &s.book {
        let at = b.position.map_or("?".to_owned(), clock);
        out.push(format!("In book:  {at}{}", of(b.duration)));
    }
    let speed = s.speed.map(|x| format!(" · {x:.2}×")).unwrap_or_default();
    out.push(format!("State:    {}{speed}", s.state));
    out.push(format!("Sleep:    {}", sleep_words(s.sleep.as_ref())));
    let mut link = s.link.replace('_', " ");
    if s.queued > 0 {
        link.push_str(&format!(" · {} change(s) queued", s.queued));
    }
    out.push(format!("Server:   {link}"));
    if let Some(stop) = &s.stop {
        out.push(format!("Stopped:  {} ({})", stop.message, stop.reason));
    }
    if let Some(e) = &s.error {
        out.push(format!("Error:    {e}"));
    }
    if let Some(n) = &s.no_audio {
        out.push(format!("Audio:    {n}"));
    }
    out
}

pub fn sleep_words(s: Option<&SleepNow>) -> String {
    let Some(s) = s else { return "off".into() };
    match s.kind.as_str() {
        "timed" => {
            let left = s.left_sec.map_or("?".to_owned(), |l| clock(l.ceil()));
            let held = if s.counting == Some(false) {
                " (held while paused)"
            } else {
                ""
            };
            format!("{left} left{held}")
        }
        "chapters" => match s.chapters {
            Some(1) => "at the end of this chapter".into(),
            Some(n) => format!("at the end of this chapter and {} more", n - 1),
            None => "at a chapter's end".into(),
        },
        "fading" => "fading out".into(),
        _ => "stopped playback (extend resumes it)".into(),
    }
}

#[cfg(test)]
#[path = "status_tests.rs"]
mod tests;
