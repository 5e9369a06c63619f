//! The control socket and `earmark ctl`: one more client of the session
//! owner (`crate::playback`), beside the player, MPRIS and `earmark play`.
//! It owns:
//! - `place`: where a profile's session is found (its socket, its lock:
//!   one session per profile);
//! - `protocol`: the versioned JSON-lines protocol, the request decoder
//!   (pure, property-tested, fuzzed) and the error codes (docs/ctl.md);
//!   `args`: its commands' arguments;
//! - `status`: what `status` answers and `watch` streams, from the
//!   session's snapshot (pure);
//! - `server` and `host`: the socket server of a session (bounded queues,
//!   a cap on clients, the peer's uid checked) and what each request does;
//! - `client`: `earmark ctl COMMAND`;
//! - `detach`: `earmark play --detach`, a session with no terminal;
//! - `remote` and `owner`: a player attached to a running session, or
//!   serving its own: the one door the player's backends use.
//!
//! Sits beside `commands` and `runtime` (which use it) above `playback`;
//! it imports neither of them.

mod args;
pub mod client;
pub mod detach;
mod host;
mod owner;
pub mod place;
pub mod protocol;
mod remote;
mod server;
pub mod status;

pub use client::{CtlArgs, EXIT_NO_SESSION, EXIT_RUNNING};
pub use host::{Host, Quits};
pub use owner::Owner;
pub use place::{Claim, NotClaimed, Place};
pub use server::{MAX_CLIENTS, NotServed, QUEUE, Serving, serve};

use crate::config::Profile;
use crate::domain::session::Listening;
use crate::domain::wait::or_never;
use crate::playback::Playback;
use crate::player::AudioMode;
use std::ffi::OsString;
use tokio::signal::unix::{Signal, SignalKind, signal};

/// How a player's own session is left playing: a detached `earmark play`
/// of the same profile, audio output and up next.
pub struct Leave {
    pub profile: Profile,
    pub audio: AudioMode,
    pub up_next: bool,
}

impl Leave {
    /// `earmark play`'s arguments to play on from `l`'s place.
    pub fn args(&self, l: &Listening) -> Vec<OsString> {
        let audio = match self.audio {
            AudioMode::Auto => "auto",
            AudioMode::Device => "device",
            AudioMode::Null => "null",
        };
        let mut a: Vec<String> = vec![
            "play".into(),
            l.book.id.to_string(),
            "--chapter".into(),
            l.chapter.to_string(),
            "--at".into(),
            format!("{:.3}", l.position.max(0.0)),
            "--speed".into(),
            format!("{:.2}", l.speed.clamp(0.5, 3.0)),
            "--audio".into(),
            audio.into(),
            "--profile".into(),
            self.profile.name.clone(),
        ];
        if self.up_next {
            a.push("--up-next".into());
        }
        if self.profile.server_from_args
            && let Some(s) = self.profile.server()
        {
            a.extend(["--server".into(), s.to_string()]);
        }
        if let Some(u) = &self.profile.user {
            a.extend(["--user".into(), u.clone()]);
        }
        a.into_iter().map(OsString::from).collect()
    }
}

/// `earmark play` claims the profile's session: the error (exit code and
/// sentence) says how to reach the one running. Where the lock cannot be
/// made (a read-only data disk) it plays on without one, and says so.
pub fn claim_for_play(profile: &Profile) -> Result<Option<Claim>, (u8, String)> {
    match Claim::take(Place::of(profile)) {
        Ok(c) => Ok(Some(c)),
        Err(NotClaimed::Running(place)) => Err((
            EXIT_RUNNING,
            format!(
                "a session of profile {} is already running; `earmark ctl status` reaches it (socket {}), `earmark ctl quit` ends it",
                place.profile,
                place.socket.display()
            ),
        )),
        Err(NotClaimed::Disk(why)) => {
            eprintln!(
                "earmark: no control socket (`earmark ctl` cannot reach this session): the session's lock: {why}"
            );
            Ok(None)
        }
    }
}

/// What ends a session from outside: `earmark ctl quit` (success), or
/// SIGINT or SIGTERM (130). Listened to from the start: a signal that
/// arrives between two waits is not missed.
pub struct Ends {
    int: Option<Signal>,
    term: Option<Signal>,
}

impl Ends {
    pub fn listen() -> Ends {
        Ends {
            int: signal(SignalKind::interrupt()).ok(),
            term: signal(SignalKind::terminate()).ok(),
        }
    }

    /// The exit code, once one of them came (`serving`: none, no socket).
    pub async fn next(&mut self, serving: Option<&mut Serving>) -> std::process::ExitCode {
        tokio::select! {
            _ = or_never(serving.map(|s| s.quit_asked())) => std::process::ExitCode::SUCCESS,
            _ = or_never(self.int.as_mut().map(Signal::recv)) => std::process::ExitCode::from(130),
            _ = or_never(self.term.as_mut().map(Signal::recv)) => std::process::ExitCode::from(130),
        }
    }
}

/// `earmark play` ends: the place is written (5 s at most), what could
/// not be sent is said, then the socket goes (its watchers are told).
pub async fn end_play(playback: &Playback, serving: Option<Serving>) {
    let quit = playback.quit(std::time::Duration::from_secs(5)).await;
    if let Some(line) = crate::ui::words::farewell(&quit) {
        eprintln!("earmark: {line}");
    }
    if let Some(s) = serving {
        s.close().await;
    }
}

/// `earmark play`'s control socket: served, or (for a detached session,
/// which is nothing without it) why it cannot be. A session in a terminal
/// plays on without one, and says so.
pub fn serve_play(
    playback: &Playback,
    profile: &Profile,
    claim: Option<&Claim>,
    detached: bool,
) -> Result<Option<Serving>, String> {
    let Some(claim) = claim else {
        return match detached {
            true => Err("no control socket: the session's lock cannot be taken".into()),
            false => Ok(None),
        };
    };
    let host = Host::new(playback.clone(), profile.clone(), true, Quits::Yes);
    match serve(host, claim) {
        Ok(s) => Ok(Some(s)),
        Err(e) if detached => Err(format!("no control socket: {}", e.0)),
        Err(e) => {
            eprintln!(
                "earmark: no control socket (`earmark ctl` cannot reach this session): {}",
                e.0
            );
            Ok(None)
        }
    }
}
