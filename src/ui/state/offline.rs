//! The server away, as the player shows it (the session's snapshot says
//! so; `session` refreshes what needs it when it is back). When the
//! server is lost the header and the player bar say "offline" and the
//! library dims the books that are not downloaded, and the keys that need
//! the server say so. `r` asks the server again in either case.

use super::*;
use crate::domain::session::Command;

impl App {
    /// `r`: the library, the open book and the playing book's place on
    /// the server (a newer one asks); offline, the server is asked again
    /// and the library comes back by itself with it.
    pub(super) fn refresh(&mut self, fx: &mut Vec<Effect>) {
        if self.offline() {
            fx.push(Effect::Session(Command::Recheck));
            self.say("The server cannot be reached: earmark asks it again and refreshes the library when it is back.");
            return;
        }
        fx.push(Effect::LoadLibrary);
        fx.push(Effect::Session(Command::Recheck));
        if self.screen == Screen::Book {
            fx.push(Effect::LoadBook(self.book.id.clone()));
        }
    }

    /// True (and says so) when `what` needs the server and it is away.
    pub(super) fn needs_server(&mut self, what: &str) -> bool {
        let away = self.offline();
        if away {
            self.say(format!(
                "{what} needs the server, which cannot be reached now."
            ));
        }
        away
    }

    /// Play was asked of a book whose chapters are not here.
    pub(super) fn no_chapters_yet(&mut self) {
        self.say(if self.offline() && !self.book.loading {
                "This book is not downloaded and the server cannot be reached: it plays when the server is back."
            } else {
                "The chapter list is still loading."
            });
    }
}
