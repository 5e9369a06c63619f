//! Sync's news, taken in by the owner: its notices become the session's
//! events (or stops, each acted on once), and its status says which load
//! is the session's, where the place stands and whether the server holds
//! it.

use super::owner::Owner;
use super::{Stop, StopReason};
use crate::domain::session::{Event, Said};
use crate::sync::{LoginReason, Notice, SyncStatus};

impl Owner {
    pub(super) fn notice(&mut self, n: Notice) {
        match n {
            Notice::Choose {
                book,
                server,
                local,
            } => self.event(Event::Conflict {
                book,
                server,
                local,
            }),
            Notice::LicenseStopped { message } => {
                self.stop(Stop::new(StopReason::License, message), true)
            }
            Notice::LoginRequired { message, reason } => {
                let reason = match reason {
                    LoginReason::Expired => StopReason::Login,
                    LoginReason::ScopeChanged => StopReason::Scope,
                };
                self.stop(Stop::new(reason, message), true)
            }
            Notice::ScopeRefused { message, .. } => {
                self.stop(Stop::new(StopReason::Scope, message), true)
            }
            // The license is valid: a stream's 403 is no permission.
            Notice::Forbidden { message } => {
                self.stop(Stop::new(StopReason::Forbidden, message), true)
            }
            Notice::LicenseRestored => self.license_restored(),
            Notice::ProgressChanged { book, progress } => {
                self.event(Event::ProgressChanged { book, progress })
            }
            Notice::PlaceMarked { book, mark } => self.event(Event::PlaceMarked { book, mark }),
            Notice::Moved { book, to } => self.say(Said::MovedToServer { book, to }),
            Notice::Dropped { book, message } => self.say(Said::Dropped { book, why: message }),
            Notice::News(n) => self.say(Said::Sync(n)),
        }
    }

    pub(super) fn sync_changed(&mut self, s: SyncStatus) {
        // Only a load of the session's book is the session's (sync may
        // still report the last book's while the next one opens).
        let mut s = s;
        let book = self.book_id();
        s.playing = s.playing.filter(|p| Some(&p.book) == book.as_ref());
        if s.playing != self.playing {
            // Another load of the session's book (or none).
            self.playing = s.playing.clone();
            self.heard = None;
            self.load_played = false;
            self.rewind.loaded();
            if let Some(p) = &self.playing
                && let Some(at) = p.saved_at
            {
                self.rewind.resumed(p.book.clone(), at);
            }
            // The engine may have published the new load already.
            if let Some(e) = &self.engine {
                let state = e.state();
                self.sync_status = s.clone();
                self.engine_state(state);
            }
        }
        let came_back = self.sync_status.link != crate::sync::Link::Online
            && s.link == crate::sync::Link::Online;
        let went = self.sync_status.link == crate::sync::Link::Online
            && s.link == crate::sync::Link::Offline;
        self.sync_status = s;
        if went {
            // Away: what plays from this device is what is downloaded now.
            self.look_at_downloads();
        }
        if came_back {
            self.up_next.server_back();
        }
    }
}
