//! The server away and back, as the player shows it: sync's view of the
//! connection ([`SyncView`]) arrives here. When the server is lost the
//! header and the player bar say "offline" and the library dims the books
//! that are not downloaded (the views read `sync.offline`); when it comes
//! back the library, and a book screen that could not be read, refresh
//! by themselves.

use super::*;

impl App {
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
