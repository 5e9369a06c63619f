//! What the session does for each request: a command to its owner (the
//! same [`Command`]s as the player's keys), then the reply once the
//! snapshot shows it done (or after [`SETTLE`]), so `earmark ctl seek 90;
//! earmark ctl status` reads 90.

use super::place::Place;
use super::protocol::{Ask, Code, Open, PlayerAsk, Refusal, SPEEDS, Seek, Speed};
use super::status::status_now;
use crate::api::NewBookmark;
use crate::config::Profile;
use crate::domain::session::{Command, Event, Listening, Said, Snapshot, Start};
use crate::domain::{JumpCause, now_millis};
use crate::playback::{Login, Playback};
use crate::sync::JournalOp;
use serde_json::{Value, json};
use std::time::Duration;
use tokio::sync::watch;

/// How long a reply waits for the session to show a command done.
const SETTLE: Duration = Duration::from_secs(2);
/// Opening a book reads the server: it may take longer.
const SETTLE_OPEN: Duration = Duration::from_secs(10);

/// The owner's news that the command failed: a stop (an unknown book or
/// chapter, the license, the login), or a book that cannot open.
fn refusal_of(e: &Event) -> Option<Refusal> {
    use crate::domain::StopReason as R;
    match e {
        Event::Stopped(stop) => Some(Refusal::new(
            Code::Server(stop.reason),
            stop.message.clone(),
        )),
        Event::Said(Said::NotDownloaded { book, why }) => Some(Refusal::new(
            Code::Server(R::Network),
            format!("{book} is not downloaded and the server is away: {why}"),
        )),
        Event::Said(Said::NoChapters { book }) => Some(Refusal::new(
            Code::Server(R::Rejected),
            format!("{book} has no chapters to play"),
        )),
        _ => None,
    }
}

/// Whether `quit` ends the session's process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quits {
    /// `earmark play`, detached or not.
    Yes,
    /// The player's own session: it is quit from its terminal.
    No,
}

/// The session a socket serves.
pub struct Host {
    pub playback: Playback,
    pub place: Place,
    /// For `player`'s `logIn`: the profile's login is read again.
    profile: Profile,
    follow_server: bool,
    quits: Quits,
    quit: watch::Sender<bool>,
}

impl Host {
    pub fn new(playback: Playback, profile: Profile, follow_server: bool, quits: Quits) -> Host {
        Host {
            playback,
            place: Place::of(&profile),
            profile,
            follow_server,
            quits,
            quit: watch::channel(false).0,
        }
    }

    pub(super) fn quit_watch(&self) -> watch::Receiver<bool> {
        self.quit.subscribe()
    }

    pub(super) fn snapshot(&self) -> Snapshot {
        self.playback.snapshot().borrow().clone()
    }

    fn status(&self) -> Value {
        serde_json::to_value(status_now(&self.snapshot(), &self.place.profile)).unwrap_or_default()
    }

    /// The session's book, or `nothing_playing`.
    fn listening(&self) -> Result<Listening, Refusal> {
        self.snapshot().listening.ok_or_else(|| {
            Refusal::new(
                Code::NothingPlaying,
                "the session has no book: `play BOOK` opens one",
            )
        })
    }

    /// Sends `c`, waits until `done` holds of a snapshot (or `within`),
    /// and answers with the status then.
    async fn command(
        &self,
        c: Command,
        within: Duration,
        done: impl Fn(&Snapshot) -> bool,
    ) -> Result<Value, Refusal> {
        let mut snap = self.playback.snapshot();
        snap.borrow_and_update();
        // Subscribed before sending: a stop the command causes is heard.
        let mut events = self.playback.events();
        self.playback.send(c);
        let settled = snap.wait_for(|s| done(s) || s.stop.is_some());
        let failed = async {
            loop {
                match events.recv().await {
                    Ok(e) => {
                        if let Some(r) = refusal_of(&e) {
                            return r;
                        }
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                    Err(_) => std::future::pending::<()>().await,
                }
            }
        };
        tokio::select! {
            r = failed => Err(r),
            _ = tokio::time::timeout(within, settled) => Ok(self.status()),
        }
    }

    pub async fn answer(&self, ask: Ask) -> Result<Value, Refusal> {
        match ask {
            Ask::Status => Ok(self.status()),
            Ask::Play(None) => {
                self.listening()?;
                self.command(Command::Play, SETTLE, |s| playing(s, true))
                    .await
            }
            Ask::Play(Some(o)) => self.open(o).await,
            Ask::Pause => {
                self.listening()?;
                self.command(Command::Pause, SETTLE, |s| playing(s, false))
                    .await
            }
            Ask::Toggle => {
                let was = self.listening()?.state.is_playing();
                self.command(Command::Toggle, SETTLE, move |s| playing(s, !was))
                    .await
            }
            Ask::Seek(to) => self.seek(to).await,
            Ask::Next | Ask::Prev => {
                let l = self.listening()?;
                let c = match ask {
                    Ask::Next => Command::NextChapter,
                    _ => Command::PrevChapter,
                };
                let moved = move |s: &Snapshot| {
                    s.listening
                        .as_ref()
                        .is_some_and(|n| n.load != l.load || (n.chapter != l.chapter && landed(n)))
                };
                self.command(c, SETTLE, moved).await
            }
            Ask::Speed(s) => {
                let l = self.listening()?;
                let to = match s {
                    Speed::To(x) => x,
                    Speed::By(d) => l.speed + d,
                };
                let to = (to * 100.0).round() / 100.0;
                let to = to.clamp(*SPEEDS.start(), *SPEEDS.end());
                let done = move |s: &Snapshot| {
                    s.listening
                        .as_ref()
                        .is_some_and(|l| (l.speed - to).abs() < 0.005)
                };
                self.command(Command::Speed(to), SETTLE, done).await
            }
            Ask::Sleep(choice) => {
                self.listening()?;
                let before = self.snapshot().sleep;
                let off = choice == crate::domain::sleep::SleepChoice::Off;
                let done = move |s: &Snapshot| match off {
                    true => s.sleep.is_none(),
                    false => s.sleep.is_some() && s.sleep != before,
                };
                self.command(Command::Sleep(choice), SETTLE, done).await
            }
            Ask::Bookmark(note) => self.bookmark(note).await,
            Ask::Quit => match self.quits {
                Quits::Yes => {
                    self.quit.send_replace(true);
                    Ok(json!({"quitting": true}))
                }
                Quits::No => Err(Refusal::new(
                    Code::Refused,
                    "this session is a player's in a terminal: quit it there (or `stop` it: `pause`)",
                )),
            },
            Ask::Player(p) => self.player(*p).await,
            Ask::Watch(_) => Err(Refusal::new(
                Code::Internal,
                "watch is served by the connection",
            )),
        }
    }

    async fn open(&self, o: Open) -> Result<Value, Refusal> {
        let start = Start::of(o.chapter, o.at);
        let before = self.snapshot().listening.map_or(0, |l| l.load);
        let book = o.book.clone();
        let c = Command::Open {
            book: o.book,
            start,
            known: None,
        };
        let opened = move |s: &Snapshot| {
            s.listening
                .as_ref()
                .is_some_and(|l| l.book.id == book && l.load != before && landed(l))
        };
        self.command(c, SETTLE_OPEN, opened).await
    }

    async fn seek(&self, to: Seek) -> Result<Value, Refusal> {
        let l = self.listening()?;
        match to {
            Seek::To(x) => {
                if let Some(d) = l.duration.filter(|d| x > *d) {
                    return Err(Refusal::new(
                        Code::BadArgument,
                        format!(
                            "chapter {} is {} s long; `seek {x}` is past its end (`next` goes on)",
                            l.chapter,
                            d.floor()
                        ),
                    ));
                }
                let chapter = l.chapter.clone();
                let c = Command::Seek {
                    chapter: chapter.clone(),
                    position: x,
                    cause: JumpCause::Seek,
                };
                let there = move |s: &Snapshot| {
                    s.listening.as_ref().is_some_and(|n| {
                        n.chapter == chapter && landed(n) && (n.position - x).abs() < 1.5
                    })
                };
                self.command(c, SETTLE, there).await
            }
            Seek::By(d) => {
                let target = l.position + d;
                let there = move |s: &Snapshot| {
                    s.listening.as_ref().is_some_and(|n| {
                        landed(n) && (n.chapter != l.chapter || (n.position - target).abs() < 1.5)
                    })
                };
                self.command(Command::SkipBy(d), SETTLE, there).await
            }
        }
    }

    /// A bookmark at the current place, written with the session's login
    /// (kept in sync's queue when the server is away).
    async fn bookmark(&self, note: Option<String>) -> Result<Value, Refusal> {
        let l = self.listening()?;
        let client = self.playback.client().ok_or_else(|| {
            let r = crate::domain::StopReason::Login;
            Refusal::new(Code::Server(r), "not logged in: run `earmark login`")
        })?;
        let client_id = format!("ctl-{}-{}", now_millis(), std::process::id());
        let position = (l.position * 1000.0).round() / 1000.0;
        let new = NewBookmark {
            book_id: l.book.id.clone(),
            chapter_id: l.chapter.clone(),
            position,
            note: note.clone(),
            client_id: Some(client_id.clone()),
        };
        match client.add_bookmark(&new).await {
            Ok(b) => Ok(json!({"bookmark": {
                "id": b.id.as_str(), "bookId": b.book_id.as_str(),
                "chapterId": b.chapter_id.as_str(), "position": b.position, "note": b.note,
            }, "queued": false})),
            Err(e) if e.is_transient() => {
                let sync = self.playback.sync();
                sync.queue_bookmark(
                    l.book.id.clone(),
                    client_id,
                    l.chapter.clone(),
                    position,
                    note.clone(),
                );
                Ok(json!({"bookmark": {
                    "id": null, "bookId": l.book.id.as_str(), "chapterId": l.chapter.as_str(),
                    "position": position, "note": note,
                }, "queued": true}))
            }
            Err(e) => {
                let stop = self.playback.refused(&e);
                Err(Refusal::new(Code::Server(stop.reason), stop.message))
            }
        }
    }

    async fn player(&self, p: PlayerAsk) -> Result<Value, Refusal> {
        match p {
            PlayerAsk::LogIn => self.log_in_again().await.map(|()| Value::Null),
            p => asked(&self.playback, p).await,
        }
    }

    /// The player logged in anew (the session record on disk changed):
    /// the session's sync and streams take the new login.
    async fn log_in_again(&self) -> Result<(), Refusal> {
        let session = crate::config::Session::load(&self.profile).ok();
        let client = match &session {
            Some(s) => Some(s.client(&self.profile).map_err(|e| {
                Refusal::new(
                    Code::Server(crate::domain::StopReason::Login),
                    e.to_string(),
                )
            })?),
            None => None,
        };
        let mut login = Login::of(&self.profile, session.as_ref(), client);
        login.sync.follow_server = self.follow_server;
        self.playback.log_in(login).await;
        Ok(())
    }
}

/// A player's ask of `pb`'s session (`null`: it has no answer).
pub(super) async fn asked(pb: &Playback, p: PlayerAsk) -> Result<Value, Refusal> {
    let json = |v: Result<Value, serde_json::Error>| {
        v.map_err(|e| Refusal::new(Code::Internal, e.to_string()))
    };
    match p {
        PlayerAsk::History(book) => json(serde_json::to_value(pb.sync().history(book).await)),
        PlayerAsk::Stats => json(serde_json::to_value(pb.sync().stats().await)),
        PlayerAsk::RetryRefused => Ok(json!(pb.sync().journal(JournalOp::RetryRefused).await)),
        PlayerAsk::DiscardRefused => Ok(json!(pb.sync().journal(JournalOp::DiscardRefused).await)),
        p => {
            told(pb, p);
            Ok(Value::Null)
        }
    }
}

/// A player's ask that has no answer, carried out by `pb`'s session.
pub(super) fn told(pb: &Playback, p: PlayerAsk) {
    match p {
        PlayerAsk::Send(c) => pb.send(c),
        PlayerAsk::QueueFavorite { book, favorite } => pb.sync().queue_favorite(book, favorite),
        PlayerAsk::QueueBookmark {
            book,
            client_id,
            chapter,
            position,
            note,
        } => pb
            .sync()
            .queue_bookmark(book, client_id, chapter, position, note),
        PlayerAsk::LicenseValid => pb.license_valid(),
        PlayerAsk::LicenseInvalid(m) => pb.license_invalid(m),
        PlayerAsk::ServerLost(m) => pb.sync().server_lost(m),
        PlayerAsk::DownloadsChanged => pb.downloads_changed(),
        // Answered (`asked`), or the host's own (the login read again).
        PlayerAsk::History(_)
        | PlayerAsk::Stats
        | PlayerAsk::RetryRefused
        | PlayerAsk::DiscardRefused
        | PlayerAsk::LogIn => {}
    }
}

/// The engine has landed where the place says (not on its way).
fn landed(l: &Listening) -> bool {
    l.landed != crate::domain::session::Landing::Pending
}

fn playing(s: &Snapshot, yes: bool) -> bool {
    s.listening.as_ref().is_some_and(|l| {
        l.state.is_playing() == yes
            && !matches!(l.state, crate::domain::session::PlayState::Loading)
    })
}
