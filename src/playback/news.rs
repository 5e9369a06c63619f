//! Sync's news, taken in by the owner: its notices are the session's
//! events (its stops acted on once), and its status says which load
//! is the session's, where the place stands and whether the server holds
//! it.

use super::owner::Owner;
use crate::domain::session::{Event, Said};
use crate::sync::SyncStatus;

impl Owner {
    /// Sync's news is the session's own: a stop is acted on (once), the
    /// license's return only while its stop is in force.
    pub(super) fn notice(&mut self, e: Event) {
        match e {
            Event::Stopped(stop) => self.stop(stop, true),
            Event::Said(Said::LicenseRestored) => self.license_restored(),
            e => self.event(e),
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
