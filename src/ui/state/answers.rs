//! The reducer's half for answers: what the backends (the API calls and
//! the listening session) report.

use super::*;

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
            Answer::LoggedIn(session) => {
                self.login.busy = false;
                self.login.error = None;
                self.login.password = Password::default();
                self.session = Some(session);
                if self.screen == Screen::Login {
                    self.screen = Screen::Library;
                }
                fx.push(Effect::LoadLibrary);
            }
            Answer::LoginFailed(e) => {
                self.login.busy = false;
                self.login.error = Some(e.to_string());
                self.screen = Screen::Login;
                self.login.focus = match e {
                    LoginError::BadCredentials => 2,
                    _ => 0,
                };
            }
            Answer::Library { books, from_cache } => {
                self.library.set_books(books, from_cache);
                self.library.scroll_into_view(self.list_height());
                // Up next works out a series' next book from these.
                let series: Vec<_> = self
                    .library
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
                if !self.library.loaded {
                    self.library.set_books(books, true);
                    self.library.partial = true;
                }
            }
            Answer::LibraryPage {
                books,
                total,
                first,
            } => {
                self.library.page_arrived(books, total, first);
                self.library.scroll_into_view(self.list_height());
            }
            Answer::LibraryIncomplete(why) => {
                self.toast(why.clone(), true);
                self.library.arrival_failed(why);
            }
            Answer::Categories(c) => self.library.categories = c,
            Answer::BookFromDownload { book, manifest } => {
                let id = book.id.clone();
                if self.library.get(&id).is_none() {
                    self.library.merge(vec![book]);
                }
                if self.book.id == id {
                    self.book.loading = false;
                    self.book.manifest = Some(manifest);
                    self.want_cover(fx);
                }
            }
            Answer::DownloadProgress { book, done, total } => {
                self.downloads.progress(book, done, total)
            }
            Answer::DownloadEnded { book, complete } => {
                self.downloads.ended(&book, complete);
                if complete {
                    let title = self.library.get(&book).map(|b| b.title.clone());
                    let title = title.unwrap_or_else(|| book.to_string());
                    self.toast(
                        format!("\"{title}\" is downloaded: it plays without the server."),
                        false,
                    );
                }
            }
            Answer::SearchResults { query, books } => {
                // A late answer for an older query still adds books; that is fine.
                let _ = query;
                self.library.merge(books);
            }
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
                    self.book.loading = false;
                    if manifest.is_some() {
                        self.book.manifest = manifest;
                    }
                    self.book.bookmarks = bookmarks;
                    self.want_cover(fx);
                }
            }
            Answer::BookmarkAdded(bm) => {
                self.toast(
                    format!("Bookmark added at {}", fmt_time(bm.position)),
                    false,
                );
                if self.book.id == bm.book_id {
                    self.book.bookmarks.push(bm);
                }
            }
            Answer::BookmarkDeleted { book, id } => {
                if self.book.id == book {
                    self.book.bookmarks.retain(|b| b.id != id);
                    let len = self.book.bookmarks.len();
                    self.book.cursor = self.book.cursor.min(len.saturating_sub(1));
                }
                self.toast("Bookmark deleted", false);
            }
            Answer::FavoriteSet { book, favorite } => {
                self.library.update_book(&book, |b| b.favorite = favorite)
            }
            Answer::License(status) => {
                if status.valid {
                    self.license_block = None;
                }
                self.license = Some(status);
            }
            Answer::Session(snap) => self.snapshot(snap, fx),
            Answer::SessionEvent(e) => self.session_event(e),
            Answer::History { book, marks } => self.history.set(book, marks),
            Answer::Stats(s) => self.stats = Some(s),
            Answer::Cover { book, image } => self.cover_arrived(book, image),
            Answer::Failed(msg) => {
                self.book.loading = false;
                self.toast(msg, true)
            }
            Answer::Notice(msg) => self.toast(msg, false),
            Answer::Via(via) => self.via = via,
        }
    }
}
