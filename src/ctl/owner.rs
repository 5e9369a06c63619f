//! The session a player talks to: its own (a [`Playback`] in this
//! process, served on the profile's socket), or one already running for
//! the profile (a detached `earmark play`, another player), attached
//! through that socket. The player's backends call the same methods
//! either way.

use super::host::{Host, Quits};
use super::place::{Claim, NotClaimed, Place};
use super::protocol::PlayerAsk;
use super::remote::Remote;
use super::server::{Serving, serve};
use crate::api::ApiError;
use crate::config::Profile;
use crate::domain::Stop;
use crate::domain::locks::lock;
use crate::domain::session::{Command, Listening, Snapshot};
use crate::playback::{Events, Login, Playback, Setup};
use crate::sync::QuitSummary;
use std::sync::Mutex;
use std::time::Duration;
use tokio::sync::watch;

// One per player: its size does not matter.
#[allow(clippy::large_enum_variant)]
enum Inner {
    Own {
        playback: Playback,
        /// Dropped on quit: the socket goes, then the lock.
        serving: Mutex<Option<(Option<Serving>, Claim)>>,
    },
    Attached(Remote),
}

pub struct Owner(Inner);

impl Owner {
    /// Attaches to the profile's running session, else starts this
    /// process's own from `setup` (on `rt`) and serves it. The events are
    /// every event from the start.
    pub fn start(
        rt: &tokio::runtime::Runtime,
        profile: &Profile,
        setup: impl FnOnce() -> Setup,
    ) -> Result<(Owner, Events), String> {
        let place = Place::of(profile);
        let claim = match Claim::take(place) {
            Ok(c) => Some(c),
            Err(NotClaimed::Running(place)) => return attach(rt, &place),
            Err(NotClaimed::Disk(why)) => {
                tracing::warn!("no control socket: the session's lock: {why}");
                None
            }
        };
        let _guard = rt.enter();
        let (playback, events) = Playback::start(setup());
        let serving = claim.map(|claim| {
            let host = Host::new(playback.clone(), profile.clone(), false, Quits::No);
            let served = serve(host, &claim)
                .map_err(|e| tracing::warn!("no control socket: {}", e.0))
                .ok();
            (served, claim)
        });
        let owner = Inner::Own {
            playback,
            serving: Mutex::new(serving),
        };
        Ok((Owner(owner), events))
    }

    pub fn send(&self, c: Command) {
        match &self.0 {
            Inner::Own { playback, .. } => playback.send(c),
            Inner::Attached(r) => match c {
                // A whole library, or a long book's manifest, would not fit
                // a request line: the session reads them from the server.
                Command::Library(_) => {}
                Command::Open { book, start, .. } => r.tell(PlayerAsk::Send(Command::Open {
                    book,
                    start,
                    known: None,
                })),
                c => r.tell(PlayerAsk::Send(c)),
            },
        }
    }

    pub fn snapshot(&self) -> watch::Receiver<Snapshot> {
        match &self.0 {
            Inner::Own { playback, .. } => playback.snapshot(),
            Inner::Attached(r) => r.snapshot(),
        }
    }

    /// See [`Playback::refused`]: classified here, acted on by the session.
    pub fn refused(&self, e: &ApiError) -> Stop {
        let ask = |a| self.tell(a);
        let license = |m| ask(PlayerAsk::LicenseInvalid(m));
        crate::playback::stop::refused(e, license, |m| ask(PlayerAsk::ServerLost(m)))
    }

    /// A player's ask that has no answer: carried out by the own session,
    /// or sent to the attached one.
    pub fn tell(&self, p: PlayerAsk) {
        match &self.0 {
            Inner::Own { playback, .. } => super::host::told(playback, p),
            Inner::Attached(r) => r.tell(p),
        }
    }

    /// A player's ask, answered as `T` by the own session or the attached
    /// one; `Err` says why it was not (never a made-up answer).
    pub async fn ask<T: serde::de::DeserializeOwned>(&self, p: PlayerAsk) -> Result<T, String> {
        let answer = match &self.0 {
            Inner::Own { playback, .. } => super::host::asked(playback, p).await,
            Inner::Attached(r) => r.ask(p).await,
        };
        let read = answer.map_err(|r| r.message).and_then(|v| {
            serde_json::from_value(v).map_err(|e| format!("an unreadable answer: {e}"))
        });
        if let Err(e) = &read {
            tracing::warn!("the session could not answer: {e}");
        }
        read
    }

    /// A new login: the own session takes it; an attached one reads the
    /// profile's login again (the login was written to disk).
    pub async fn log_in(&self, login: Login) {
        match &self.0 {
            Inner::Own { playback, .. } => playback.log_in(login).await,
            Inner::Attached(r) => {
                let _ = r.ask(PlayerAsk::LogIn).await;
            }
        }
    }

    /// Why there is no audio output.
    pub fn no_audio(&self) -> Option<String> {
        match &self.0 {
            Inner::Own { playback, .. } => playback.no_audio().map(str::to_owned),
            Inner::Attached(r) => r.snapshot().borrow().no_audio.clone(),
        }
    }

    /// The player quits: its own session writes the last place and stops
    /// (`Some`); an attached one plays on (`None`).
    pub async fn quit(&self, timeout: Duration) -> Option<QuitSummary> {
        match &self.0 {
            Inner::Own { playback, serving } => {
                let summary = playback.quit(timeout).await;
                let taken = lock(serving).take();
                if let Some((Some(s), _claim)) = taken {
                    s.close().await;
                }
                Some(summary)
            }
            Inner::Attached(_) => None,
        }
    }

    /// What an attached player says as it quits: the session plays on.
    pub fn plays_on(&self) -> Option<String> {
        let Inner::Attached(r) = &self.0 else {
            return None;
        };
        let pid = r.pid.map(|p| format!(" (pid {p})")).unwrap_or_default();
        Some(format!(
            "the session plays on{pid}: `earmark ctl status` reaches it, `earmark ctl quit` ends it"
        ))
    }

    /// The player quits and leaves the book playing. Its own session
    /// writes its place, stops, and a detached `earmark play` takes over
    /// at that place (`leave`: how to start it); an attached session plays
    /// on. The words say where it plays.
    pub async fn leave_playing(&self, leave: &super::Leave) -> Result<String, String> {
        let playback = match &self.0 {
            Inner::Attached(_) => return Ok(self.plays_on().unwrap_or_default()),
            Inner::Own { playback, .. } => playback,
        };
        let listening: Option<Listening> = playback.snapshot().borrow().listening.clone();
        let summary = self.quit(Duration::from_secs(3)).await;
        let Some(l) = listening else {
            return Err("nothing was playing to leave playing".into());
        };
        if let Some(words) = summary.as_ref().and_then(crate::ui::words::farewell) {
            tracing::warn!("{words}");
        }
        let args = leave.args(&l);
        let log = Place::of(&leave.profile).log;
        let started = tokio::task::spawn_blocking(move || super::detach::start(&args, &log))
            .await
            .map_err(|e| e.to_string())?
            .map_err(|f| f.message)?;
        Ok(format!(
            "{} plays on in the background (pid {}): `earmark ctl status` reaches it ({})",
            l.book.title,
            started.pid,
            started.socket.display()
        ))
    }
}

/// Attaches to the session `place` names; it may be starting (its lock is
/// taken before its socket), so this tries for a few seconds.
fn attach(rt: &tokio::runtime::Runtime, place: &Place) -> Result<(Owner, Events), String> {
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        match rt.block_on(Remote::attach(&place.socket, &place.data)) {
            Ok(r) => {
                let events = r.events();
                return Ok((Owner(Inner::Attached(r)), events));
            }
            Err(e) if std::time::Instant::now() >= deadline => {
                return Err(format!(
                    "a session of profile {} is running, but it does not answer: {}",
                    place.profile, e.0
                ));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(100)),
        }
    }
}
