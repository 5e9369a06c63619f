//! Effects that are plain API calls: login, library, search, book details,
//! favorites, bookmarks, license. Every failure becomes plain words
//! (`Shared::fail`); a 403 `license_required` anywhere stops playback and
//! sync through the playback owner, which raises the banner.

use super::cache;
use super::shared::{Shared, session_info};
use crate::api::error::BodyKind;
use crate::api::{ApiError, BookQuery, Client, Listing, NewBookmark};
use crate::config::{Profile, ProfileSelector, SessionError};
use crate::ctl::protocol::PlayerAsk;
use crate::domain::locks::write;
use crate::domain::{Book, BookId, BookmarkId, ChapterId};
use crate::ui::state::{Answer, LoginError, Password};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// Rows read from the cache for the first frame.
const HEAD_ROWS: usize = 200;

/// Flow step 2, after login and on start: an invalid license shows the
/// banner (and stops sync) before anything fails.
pub(super) async fn license_check(sh: Arc<Shared>) {
    let Some(c) = sh.client() else { return };
    match c.license_status().await {
        Ok(s) => {
            let valid = s.valid || s.state == crate::domain::LicenseState::Valid;
            let message = s.message.clone().unwrap_or_else(|| {
                "The server has no valid license; ask its administrator.".into()
            });
            sh.ui.send(Answer::License(s));
            if !valid {
                sh.playback.tell(PlayerAsk::LicenseInvalid(message));
            }
        }
        Err(e) => sh.fail("Could not read the license status", &e),
    }
}

pub(super) async fn search(sh: Arc<Shared>, q: String) {
    let Some(c) = sh.client() else { return };
    let query = BookQuery {
        text: Some(q.clone()),
        ..BookQuery::default()
    };
    match c.search(&query).await {
        Ok(books) => sh.ui.send(Answer::SearchResults { query: q, books }),
        Err(e) => sh.fail("Search on the server failed", &e),
    }
}

/// The book screen: the book, its chapters and its bookmarks, asked
/// together (offline: from the download).
pub(super) async fn load_book(sh: Arc<Shared>, id: BookId) {
    let Some(c) = sh.client() else { return };
    let (book, manifest, bookmarks) = tokio::join!(c.book(&id), c.manifest(&id), c.bookmarks(&id));
    if super::offline::book_screen(&sh, &id, &book, &manifest) {
        return;
    }
    let book = match book {
        Ok(b) => b,
        Err(e) => return sh.fail("Could not open the book", &e),
    };
    let manifest = manifest
        .map_err(|e| sh.fail("Could not load the chapter list", &e))
        .ok();
    let bookmarks = bookmarks.unwrap_or_else(|e| {
        if e.is_license() {
            sh.fail("Bookmarks are unavailable", &e);
        }
        Vec::new()
    });
    sh.ui.send(Answer::BookLoaded {
        book,
        manifest,
        bookmarks,
    });
}

/// Offline, the favorite is queued for the server; refused, the screen
/// takes it back.
pub(super) async fn set_favorite(sh: Arc<Shared>, book: BookId, favorite: bool) {
    let Some(c) = sh.client() else { return };
    let r = if favorite {
        c.add_favorite(&book).await
    } else {
        c.remove_favorite(&book).await
    };
    match r {
        Ok(()) => sh.ui.send(Answer::FavoriteSet { book, favorite }),
        Err(e) if e.is_transient() => {
            sh.playback
                .tell(PlayerAsk::QueueFavorite { book, favorite });
            sh.ui.send(Answer::Notice(
                "Offline: the favorite is saved here and sent when the server is back.".into(),
            ))
        }
        Err(e) => {
            sh.ui.send(Answer::FavoriteSet {
                book,
                favorite: !favorite,
            });
            sh.fail("Could not change the favorite", &e);
        }
    }
}

/// Offline, the bookmark is queued with its client id (the server
/// dedupes a retry by it).
pub(super) async fn add_bookmark(
    sh: Arc<Shared>,
    book: BookId,
    chapter: ChapterId,
    position: f64,
    note: Option<String>,
) {
    let Some(c) = sh.client() else { return };
    let client_id = format!("earmark-{}", crate::domain::now_millis());
    let new = NewBookmark {
        book_id: book.clone(),
        chapter_id: chapter.clone(),
        position,
        note: note.clone(),
        client_id: Some(client_id.clone()),
    };
    match c.add_bookmark(&new).await {
        Ok(bm) => sh.ui.send(Answer::BookmarkAdded(bm)),
        Err(e) if e.is_transient() => {
            sh.playback.tell(PlayerAsk::QueueBookmark {
                book,
                client_id,
                chapter,
                position,
                note,
            });
            sh.ui.send(Answer::Notice(
                "Offline: the bookmark is kept here and sent when the server is back.".into(),
            ));
        }
        Err(e) => sh.fail("Could not save the bookmark", &e),
    }
}

pub(super) async fn delete_bookmark(sh: Arc<Shared>, book: BookId, id: BookmarkId) {
    let Some(c) = sh.client() else { return };
    match c.remove_bookmark(&id).await {
        Ok(()) => sh.ui.send(Answer::BookmarkDeleted { book, id }),
        Err(e) => sh.fail("Could not delete the bookmark", &e),
    }
}

pub(super) async fn load_license(sh: Arc<Shared>) {
    let Some(c) = sh.client() else { return };
    match c.license_status().await {
        Ok(s) => {
            if s.valid {
                // Valid again: sync resumes now, not at its next poll.
                sh.playback.tell(PlayerAsk::LicenseValid);
            }
            sh.ui.send(Answer::License(s));
        }
        Err(e) => sh.fail("Could not read the license status", &e),
    }
}

fn login_error(address: &str, e: SessionError) -> LoginError {
    match e {
        SessionError::Api(api) => match api {
            ApiError::Network { address, .. } => LoginError::Unreachable(address),
            ApiError::NotJson {
                address,
                kind: BodyKind::Html,
                ..
            } => LoginError::HtmlPage(address),
            ApiError::Unauthorized { .. } => LoginError::BadCredentials,
            ApiError::LicenseRequired { message } => LoginError::LicenseRequired(message),
            other => LoginError::Other(format!("Login failed: {other}")),
        },
        SessionError::Config(c) => LoginError::Other(format!("The address {address:?}: {c}")),
        other => LoginError::Other(format!("Login failed: {other}")),
    }
}

pub(super) async fn login(
    sh: Arc<Shared>,
    address: String,
    user: String,
    password: Password,
    profile: Option<String>,
) {
    let mut global = ProfileSelector {
        profile,
        server: None,
        user: Some(user.clone()),
    };
    // The address the form showed (the profile's first) keeps all of the
    // profile's addresses; another one typed is that one alone.
    let listed = Profile::resolve_in(&global, sh.dirs.clone())
        .ok()
        .and_then(|p| p.server().cloned());
    if listed.is_none_or(|first| crate::api::BaseUrl::parse(&address).ok() != Some(first)) {
        global.server = Some(address.clone());
    }
    let profile = match Profile::resolve_in(&global, sh.dirs.clone()) {
        Ok(p) => p,
        Err(e) => {
            sh.ui
                .send(Answer::LoginFailed(login_error(&address, e.into())));
            return;
        }
    };
    let result = crate::config::login(&profile, Some(&user), password.expose()).await;
    drop(password);
    match result {
        Ok(done) => {
            let info = session_info(&done.session);
            let owner_login = crate::playback::Login::of(
                &profile,
                Some(&done.session),
                Some(done.client.clone()),
            );
            {
                let mut l = write(&sh.login);
                l.client = Some(done.client);
                l.session = Some(done.session);
                l.profile = profile;
            }
            sh.library_stale();
            // A new login gets its own sync session (scope, outbox); the
            // old one flushes and stops first.
            sh.playback.log_in(owner_login).await;
            sh.ui.send(Answer::LoggedIn(info));
            if let Some(c) = sh.client() {
                tokio::spawn(super::notices::addresses(sh.clone(), c));
            }
            if let Some(w) = done.store_warning {
                sh.ui.send(Answer::Notice(w));
            }
            // The reducer asks for the library; meanwhile the cache shows
            // and the license status is read (the owner read the new
            // login's downloads and up next list itself).
            tokio::join!(show_cache(&sh), license_check(sh.clone()));
        }
        Err(e) => sh.ui.send(Answer::LoginFailed(login_error(&address, e))),
    }
}

/// Sends the cached library: the head at once, then the whole of it,
/// unless the server's answer arrived first.
async fn show_cache(sh: &Arc<Shared>) {
    let Some(scope) = sh.scope() else { return };
    let dir = sh.dirs.cache.clone();
    let sh2 = sh.clone();
    let _ = tokio::task::spawn_blocking(move || {
        if let Some(head) = cache::load_head(&dir, &scope, HEAD_ROWS) {
            sh2.ui.send(Answer::LibraryHead(head));
            if let Some(all) = cache::load(&dir, &scope) {
                sh2.send_library(all, true);
            }
        }
    })
    .await;
}

/// Refreshes the library (and categories) from the server, then saves the
/// cache. With `cache_first`, the cache is shown while the request runs.
/// Pages go to the UI as they arrive; the whole list follows when it is
/// complete (only a complete list is cached).
pub(super) async fn library(sh: Arc<Shared>, cache_first: bool) {
    let Some(c) = sh.client() else { return };
    let load = sh.library_load.fetch_add(1, Ordering::SeqCst) + 1;
    let sh2 = sh.clone();
    let cached = async move {
        if cache_first {
            show_cache(&sh2).await;
        }
    };
    let fetch = async { tokio::join!(stream_books(&sh, &c, load), c.categories()) };
    let ((), (books, cats)) = tokio::join!(cached, fetch);
    if let Ok(cats) = cats {
        sh.ui.send(Answer::Categories(cats));
    }
    let Some(listing) = books else { return };
    let books = listing.items;
    if let Some(first) = listing.skipped.first() {
        // The rest of the list works; the log has every reason.
        let books = crate::ui::state::count(listing.skipped.len(), "book");
        sh.ui.send(Answer::Notice(format!(
            "{books} could not be read ({}); the log says why.",
            first.reason
        )));
    }
    sh.send_library(books.clone(), false);
    if let Some(scope) = sh.scope() {
        let dir = sh.dirs.cache.clone();
        let saved = tokio::task::spawn_blocking(move || cache::save(&dir, &scope, &books)).await;
        if let Ok(Err(e)) = saved {
            sh.cache_not_written(cache::CacheFile::Library, &e);
        }
    }
}

/// Times a failed page is asked again before the load gives up.
const PAGE_RETRIES: u32 = 4;

/// Wait before asking a failed page again: the server's `Retry-After` if
/// it gave one (at most a minute), else a step of 1, 2, 4, 8 s with
/// jitter (`domain::backoff`).
fn retry_delay(e: &ApiError, attempt: u32) -> Duration {
    let steps = crate::domain::backoff::Ladder::new(Duration::from_secs(1), Duration::from_secs(8));
    match e.retry_after() {
        Some(d) => d.min(Duration::from_secs(60)),
        None => steps.wait(attempt + 1),
    }
}

/// Reads the whole library page by page, sending each page to the UI as
/// it arrives. A failed page is asked again (transient failures only);
/// when it still fails, or the list ends short of what the server says it
/// has, the UI is told that the rest is missing and `None` is returned: a
/// part of the list is never passed off as the library.
/// `None` too when a newer load has started.
async fn stream_books(sh: &Arc<Shared>, c: &Client, load: u64) -> Option<Listing<Book>> {
    let mut pager = c.book_pager(&BookQuery::default());
    let mut items: Vec<Book> = Vec::new();
    let mut first = true;
    let mut attempt = 0;
    loop {
        if sh.library_load.load(Ordering::SeqCst) != load {
            return None;
        }
        match pager.next_page().await {
            Ok(Some(page)) => {
                attempt = 0;
                if first || !page.items.is_empty() {
                    sh.ui.send(Answer::LibraryPage {
                        books: page.items.clone(),
                        total: pager.total(),
                        first,
                    });
                    first = false;
                }
                items.extend(page.items);
            }
            Ok(None) => break,
            Err(e) if e.is_transient() && attempt < PAGE_RETRIES => {
                let wait = retry_delay(&e, attempt);
                attempt += 1;
                tracing::warn!(
                    "library page after {} books failed ({e}); asking again in {:.1} s",
                    items.len(),
                    wait.as_secs_f64()
                );
                tokio::time::sleep(wait).await;
            }
            Err(_) if sh.library_load.load(Ordering::SeqCst) != load => return None,
            Err(e) => {
                let stop = sh.playback.refused(&e);
                let what = if items.is_empty() {
                    "Could not load the library".to_owned()
                } else {
                    format!(
                        "Loaded {} books; the rest of the library could not be loaded",
                        items.len()
                    )
                };
                let login = if stop.reason.needs_login() {
                    format!(" {}", crate::ui::state::LOG_IN_AGAIN)
                } else {
                    String::new()
                };
                sh.ui
                    .send(Answer::LibraryIncomplete(format!("{what}: {e}.{login}")));
                return None;
            }
        }
    }
    if let Some(short) = pager.shortfall() {
        // What arrived stays on screen and is not cached.
        let why = format!("The library is incomplete: {}.", short.describe("books"));
        sh.ui.send(Answer::LibraryIncomplete(why));
        return None;
    }
    Some(pager.into_listing(items))
}
