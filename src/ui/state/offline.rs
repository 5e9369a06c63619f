//! The server away and back, as the player shows it: sync's view of the
//! connection ([`SyncView`]) arrives here. When the server is lost the
//! header and the player bar say "offline" and the library dims the books
//! that are not downloaded (the views read `sync.offline`), and the keys
//! that need the server say so; when it comes back the library, and a
//! book screen that could not be read, refresh by themselves. `r` asks
//! the server again in either case.

use super::*;

impl App {
    /// `r`: the library, the open book and the playing book's place on
    /// the server (a newer one asks); offline, the server is asked again
    /// and the library comes back by itself with it.
    pub(super) fn refresh(&mut self, fx: &mut Vec<Effect>) {
        if self.sync.offline {
            fx.push(Effect::Recheck);
            self.toast(
                "The server cannot be reached: earmark asks it again and refreshes the library when it is back.",
                false,
            );
            return;
        }
        fx.push(Effect::LoadLibrary);
        fx.push(Effect::Recheck);
        if self.screen == Screen::Book {
            fx.push(Effect::LoadBook(self.book.id.clone()));
        }
    }

    /// True (and says so) when `what` needs the server and it is away.
    pub(super) fn needs_server(&mut self, what: &str) -> bool {
        if self.sync.offline {
            self.toast(
                format!("{what} needs the server, which cannot be reached now."),
                false,
            );
        }
        self.sync.offline
    }

    /// Play was asked of a book whose chapters are not here.
    pub(super) fn no_chapters_yet(&mut self) {
        self.toast(
            if self.sync.offline && !self.book.loading {
                "This book is not downloaded and the server cannot be reached: it plays when the server is back."
            } else {
                "The chapter list is still loading."
            },
            false,
        );
    }

    pub(super) fn sync_changed(&mut self, s: SyncView, fx: &mut Vec<Effect>) {
        let was = self.sync.offline;
        self.sync = s;
        // Lost or back: the header, the bar and the library say it (no
        // toast to hide what sync says then, a place it moved to).
        match (was, s.offline) {
            (true, false) if self.session.is_some() => {
                fx.push(Effect::LoadLibrary);
                if self.screen == Screen::Book && self.book.manifest.is_none() {
                    self.book.loading = true;
                    fx.push(Effect::LoadBook(self.book.id.clone()));
                }
            }
            _ => {}
        }
    }
}
