//! Downloads in the player (issue 11): the download key, the per-book
//! gauge, the marker in the library and the offline library view, as
//! snapshots at 80×24 and 40×12 and as reducer flows.

use crate::fixtures::*;
use earmark::domain::BookId;
use earmark::domain::session::{Downloaded, Said};
use earmark::ui::state::*;
use std::sync::Arc;

fn both(name: &str, mut make: impl FnMut() -> App) {
    for (w, h) in [(80, 24), (40, 12)] {
        let mut app = make();
        let text = render(&mut app, w, h);
        insta::assert_snapshot!(format!("{name}_{w}x{h}"), text);
    }
}

/// The session found Moby Dick downloaded and Emma partly.
fn marks(app: &mut App) {
    let mut s = app.snap.clone();
    s.downloads = Arc::new(
        [
            (BookId::new("moby"), Downloaded::Complete),
            (BookId::new("emma"), Downloaded::Partial),
        ]
        .into_iter()
        .collect(),
    );
    session(app, s);
}

#[test]
fn the_library_marks_downloaded_books() {
    both("library_downloads", || {
        let mut app = logged_in();
        marks(&mut app);
        app
    });
}

#[test]
fn offline_the_library_shows_only_downloaded_books_as_playable() {
    both("library_offline", || {
        let mut app = logged_in();
        app.update(Event::Answer(Answer::Library {
            books: library(),
            from_cache: true,
        }));
        marks(&mut app);
        let mut s = app.snap.clone();
        s.link = earmark::domain::session::Link::Offline;
        session(&mut app, s);
        app
    });
}

#[test]
fn the_download_key_starts_a_download_with_a_gauge_on_the_book_screen() {
    both("book_downloading", || {
        let mut app = book_open();
        let fx = app.update(key('D'));
        assert_eq!(fx, vec![Effect::Download(BookId::new("moby"))]);
        // Pressed again while it runs: no second download.
        assert_eq!(app.update(key('D')), vec![]);
        app.update(Event::Answer(Answer::DownloadProgress {
            book: BookId::new("moby"),
            done: 40,
            total: 100,
        }));
        app
    });
}

#[test]
fn a_finished_download_marks_the_book_and_says_it_plays_offline() {
    let mut app = book_open();
    app.update(key('D'));
    app.update(Event::Answer(Answer::DownloadEnded {
        book: BookId::new("moby"),
        complete: true,
    }));
    assert_eq!(
        app.downloads.mark(&BookId::new("moby")),
        Some(DownloadMark::Complete)
    );
    assert!(
        app.toasts
            .iter()
            .any(|t| t.text.contains("plays without the server")),
        "{:?}",
        app.toasts
    );
    // A snapshot from before the session's next look at the disk keeps it.
    let same = app.snap.clone();
    session(&mut app, same);
    assert_eq!(
        app.downloads.mark(&BookId::new("moby")),
        Some(DownloadMark::Complete)
    );
    // A failed one stays partial, to be resumed.
    app.update(Event::Answer(Answer::DownloadEnded {
        book: BookId::new("emma"),
        complete: false,
    }));
    assert_eq!(
        app.downloads.mark(&BookId::new("emma")),
        Some(DownloadMark::Partial)
    );
}

/// A book another earmark (`earmark download`) finished while the player
/// is open: the session finds it on disk, the row marks it and it is said.
#[test]
fn a_download_made_elsewhere_shows_once_the_session_finds_it() {
    let mut app = logged_in();
    let moby = BookId::new("moby");
    assert_eq!(app.downloads.mark(&moby), None);
    let mut s = app.snap.clone();
    s.downloads = Arc::new([(moby.clone(), Downloaded::Complete)].into_iter().collect());
    session(&mut app, s);
    assert_eq!(app.downloads.mark(&moby), Some(DownloadMark::Complete));
    said(&mut app, Said::DownloadAppeared { book: moby });
    assert_eq!(
        toast(&app),
        "\"Moby Dick\" is downloaded: it plays without the server."
    );
}
