//! What the player's backend tasks share: the UI sender, the login, the
//! playback owner and the library's arrival. Coarse on purpose: one lock
//! for the login; the owner's handle and the UI sender need none. Depends
//! on no other module of `runtime` (only `cache`'s scope type), so the
//! effect modules above it never form a circle.

use super::cache;
use crate::api::{ApiError, Client};
use crate::config::{Config, Dirs, Profile, Session};
use crate::ctl::Owner;
use crate::domain::locks::{lock, read};
use crate::durable::DiskError;
use crate::ui::event_loop::UiSender;
use crate::ui::state::{Answer, LOG_IN_AGAIN, SessionInfo};
use std::sync::{Mutex, RwLock};

/// The login: profile, session and client change together.
pub(crate) struct Login {
    pub profile: Profile,
    pub session: Option<Session>,
    pub client: Option<Client>,
}

pub(crate) struct Shared {
    pub ui: UiSender,
    pub dirs: Dirs,
    pub login: RwLock<Login>,
    /// The listening session: this process's own owner (engine, sync,
    /// each book's settings), or a running one of the profile, attached.
    pub playback: Owner,
    /// Set once the server's library arrived, so a slower cache read does
    /// not replace it (checked and sent under the lock).
    pub fresh: Mutex<bool>,
    /// Counts library loads: a load stops sending pages once a newer one
    /// has started, so two loads never interleave their pages.
    pub library_load: std::sync::atomic::AtomicU64,
    /// The caches that could not be written, each told once per fault.
    pub unwritten: cache::Unwritten,
}

impl Shared {
    pub(crate) fn client(&self) -> Option<Client> {
        read(&self.login).client.clone()
    }

    /// The library cache's scope of the login.
    pub(crate) fn scope(&self) -> Option<cache::Scope> {
        read(&self.login).session.as_ref().map(Session::account)
    }

    /// Reports a failed request in plain words. Its reason comes from the
    /// playback owner's one classification, which also stops playback and
    /// sync on a license refusal (the banner comes from there).
    pub(crate) fn fail(&self, what: &str, e: &ApiError) {
        let stop = self.playback.refused(e);
        tracing::warn!("{what}: {e}");
        // The HTTP library's chain of causes is for the log: the screen
        // says the first, in earmark's words.
        let e = match e {
            ApiError::Network { address, message } => format!(
                "cannot reach the server at {address} ({})",
                message.split(": ").next().unwrap_or(message)
            ),
            e => e.to_string(),
        };
        let again = match stop.reason.needs_login() {
            true => format!(". {LOG_IN_AGAIN}"),
            false => String::new(),
        };
        self.ui.send(Answer::Failed(format!("{what}: {e}{again}")));
    }

    /// A cache this device could not write (the old file is as it was):
    /// the user is told once per cache and fault, the log has each.
    pub(crate) fn cache_not_written(&self, file: cache::CacheFile, e: &DiskError) {
        tracing::warn!("cannot write a cache ({file:?}): {e}");
        if self.unwritten.first(file, &e.fault) {
            self.ui.send(Answer::Notice(file.not_written(e)));
        }
    }

    /// Sends the library unless the cache would replace the server's.
    pub(crate) fn send_library(&self, books: Vec<crate::domain::Book>, from_cache: bool) {
        let mut fresh = lock(&self.fresh);
        if from_cache && *fresh {
            return;
        }
        *fresh |= !from_cache;
        self.ui.send(Answer::Library { books, from_cache });
    }

    /// A new login: its library is not here yet.
    pub(crate) fn library_stale(&self) {
        *lock(&self.fresh) = false;
    }

    pub(crate) fn send_profiles(&self) {
        let p = read(&self.login).profile.clone();
        self.ui.send(profiles_answer(&self.dirs, &p));
    }
}

pub(crate) fn profiles_answer(dirs: &Dirs, p: &Profile) -> Answer {
    let mut names: Vec<String> = Config::load(&dirs.config_file())
        .map(|c| c.profiles.into_keys().collect())
        .unwrap_or_default();
    if !names.contains(&p.name) {
        names.push(p.name.clone());
    }
    names.sort();
    Answer::Profiles {
        names,
        current: Some(p.name.clone()),
        address: p.server().map(|s| s.to_string()).unwrap_or_default(),
        user: p.user.clone().unwrap_or_default(),
    }
}

/// The session as the header shows it.
pub fn session_info(s: &Session) -> SessionInfo {
    SessionInfo {
        address: s.server.to_string(),
        user: s.user.clone(),
        profile: Some(s.profile.clone()),
    }
}
