//! The reducer's half for answers: what the backends (the API calls and
//! the listening session) report, each taken by the sub-model it is for.

use super::*;
use crate::domain::Book;

impl App {
    pub(super) fn backend(&mut self, b: Answer, fx: &mut Vec<Effect>) {
        match b {
            Answer::Profiles {
                names,
                current,
                address,
                user,
            } => {
                self.login.profiles = names;
                self.login.profile = current;
                self.login.address = address;
                self.login.user = user;
            }
            Answer::LoggedIn(session) => self.logged_in(session, fx),
            Answer::LoginFailed(e) => {
                self.login.failed(e);
                self.screen = Screen::Login;
            }
            Answer::Via(via) => self.via = via,
            Answer::Session(snap) => self.snapshot(snap, fx),
            Answer::SessionEvent(e) => self.session_event(e, fx),
            Answer::License(status) => {
                if status.valid {
                    self.license_block = None;
                }
                self.license = Some(status);
            }
            Answer::Stats(s) => self.stats = Some(s),
            Answer::RefusedRetried(n) => {
                self.say(format!("Sending {} again.", count(n, "refused change")))
            }
            Answer::RefusedDropped(n) => {
                self.say(format!("Dropped {}.", count(n, "refused change")))
            }
            Answer::Failed(msg) => {
                self.book.loading = false;
                self.toast(msg, true)
            }
            Answer::Notice(msg) => self.say(msg),
            other => {
                if let Some(other) = self.library_answer(other, fx) {
                    self.book_answer(other, fx);
                }
            }
        }
    }

    fn logged_in(&mut self, session: SessionInfo, fx: &mut Vec<Effect>) {
        self.login.busy = false;
        self.login.error = None;
        self.login.password = Password::default();
        self.session = Some(session);
        if self.screen == Screen::Login {
            self.screen = Screen::Library;
        }
        fx.push(Effect::LoadLibrary);
    }

    /// The library's answers; any other is handed back.
    fn library_answer(&mut self, a: Answer, fx: &mut Vec<Effect>) -> Option<Answer> {
        let rows = self.list_height();
        let lib = &mut self.library;
        match a {
            Answer::Library { books, from_cache } => {
                lib.set_books(books, from_cache);
                lib.scroll_into_view(rows);
                // Up next works out a series' next book from these.
                let series: Vec<Book> = lib
                    .books()
                    .iter()
                    .filter(|b| !b.series.is_empty())
                    .cloned()
                    .collect();
                fx.push(Effect::Session(Command::Library(std::sync::Arc::new(
                    series,
                ))));
            }
            Answer::LibraryHead(books) => {
                if !lib.loaded {
                    lib.set_books(books, true);
                    lib.partial = true;
                }
            }
            Answer::LibraryPage {
                books,
                total,
                first,
            } => {
                lib.page_arrived(books, total, first);
                lib.scroll_into_view(rows);
            }
            Answer::LibraryIncomplete(why) => {
                self.toast(why.clone(), true);
                self.library.arrival_failed(why);
            }
            Answer::Categories(c) => lib.categories = c,
            // A late answer for an older query still adds books; that is fine.
            Answer::SearchResults { books, .. } => lib.merge(books),
            Answer::FavoriteSet { book, favorite } => {
                lib.update_book(&book, |b| b.favorite = favorite)
            }
            other => return Some(other),
        }
        None
    }

    /// The book screen's answers (and the downloads'); any other is dropped.
    fn book_answer(&mut self, a: Answer, fx: &mut Vec<Effect>) {
        match a {
            Answer::BookLoaded {
                book,
                manifest,
                bookmarks,
            } => {
                let id = book.id.clone();
                if self.library.get(&id).is_some() {
                    self.library.update_book(&id, |b| *b = book);
                } else {
                    self.library.merge(vec![book]);
                }
                if self.book.id == id {
                    self.book.loaded(manifest, bookmarks);
                    self.want_cover(fx);
                }
            }
            Answer::BookFromDownload { book, manifest } => {
                let id = book.id.clone();
                if self.library.get(&id).is_none() {
                    self.library.merge(vec![book]);
                }
                if self.book.id == id {
                    let marks = std::mem::take(&mut self.book.bookmarks);
                    self.book.loaded(Some(manifest), marks);
                    self.want_cover(fx);
                }
            }
            Answer::BookmarkAdded(bm) => {
                let at = fmt_time(bm.position);
                self.book.bookmark_added(bm);
                self.say(format!("Bookmark added at {at}"));
            }
            Answer::BookmarkDeleted { book, id } => {
                self.book.bookmark_deleted(&book, &id);
                self.say("Bookmark deleted");
            }
            Answer::History { book, marks } => self.book.history.set(book, marks),
            Answer::Cover { book, image } => self.book.cover_arrived(&book, image),
            Answer::DownloadProgress { book, done, total } => {
                self.downloads.progress(book, done, total)
            }
            Answer::DownloadEnded { book, complete } => {
                self.downloads.ended(&book, complete);
                if complete {
                    let title = self.library.get(&book).map(|b| b.title.clone());
                    let title = title.unwrap_or_else(|| book.to_string());
                    self.say(format!(
                        "\"{title}\" is downloaded: it plays without the server."
                    ));
                }
            }
            _ => {}
        }
    }
}
