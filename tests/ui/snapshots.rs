//! Every screen at 80×24 and 40×12 (text only; styles are checked by the
//! NO_COLOR test). Review changes with `cargo insta review`.

use crate::fixtures::*;
use earmark::domain::session::{Command, Event as SessionEvent, Landing, Link, Place, Queue};
use earmark::domain::*;
use earmark::ui::keymap::KeyCode;
use earmark::ui::state::*;

fn both(name: &str, mut make: impl FnMut() -> App) {
    for (w, h) in [(80, 24), (40, 12)] {
        let mut app = make();
        let text = render(&mut app, w, h);
        insta::assert_snapshot!(format!("{name}_{w}x{h}"), text);
    }
}

#[test]
fn login_screen() {
    both("login", || {
        let mut app = App::new(Default::default(), Default::default());
        app.update(Event::Answer(Answer::Profiles {
            names: vec!["default".into(), "nas".into()],
            current: Some("default".into()),
            address: "nas.local:8686".into(),
            user: "anna".into(),
        }));
        app.update(code(KeyCode::Tab));
        app.update(code(KeyCode::Tab));
        for c in "secret".chars() {
            app.update(key(c));
        }
        app
    });
}

#[test]
fn login_errors_in_plain_words() {
    for (name, err) in [
        (
            "login_unreachable",
            LoginError::Unreachable("http://nas.local:8686/api/v1".into()),
        ),
        (
            "login_html",
            LoginError::HtmlPage("https://example.org/books/api/v1".into()),
        ),
        ("login_401", LoginError::BadCredentials),
        (
            "login_license",
            LoginError::LicenseRequired("the license expired on 2026-10-01".into()),
        ),
    ] {
        both(name, || {
            let mut app = App::new(Default::default(), Default::default());
            app.update(Event::Answer(Answer::LoginFailed(err.clone())));
            app
        });
    }
}

#[test]
fn library_screen() {
    both("library", logged_in);
}

#[test]
fn library_search_highlights() {
    both("library_search", || {
        let mut app = logged_in();
        for c in "/austen".chars() {
            app.update(key(c));
        }
        app
    });
}

#[test]
fn library_with_player_bar() {
    both("library_playing", || {
        let mut app = playing();
        app.update(code(KeyCode::Esc));
        app
    });
}

#[test]
fn a_place_the_engine_estimated_is_marked_in_the_bar() {
    both("library_playing_estimated", || {
        let mut app = playing();
        let mut l = app.snap.listening.clone().unwrap();
        l.landed = Landing::Approximate;
        session(&mut app, snap(l));
        app.update(code(KeyCode::Esc));
        app
    });
}

#[test]
fn library_grouped_and_focused() {
    both("library_by_author", || {
        let mut app = logged_in();
        app.update(key('v'));
        app.update(key('j'));
        app
    });
    both("library_series", || {
        let mut app = logged_in();
        for _ in 0..3 {
            app.update(key('v'));
        }
        app.update(code(KeyCode::Enter));
        app
    });
}

#[test]
fn book_screen_links_to_its_series() {
    both("book_series", || {
        let mut app = logged_in();
        app.update(key('j'));
        app.update(code(KeyCode::Enter));
        app.update(Event::Answer(Answer::BookLoaded {
            book: library()[2].clone(),
            manifest: Some(manifest("emma", 3, 1800.0)),
            bookmarks: Vec::new(),
        }));
        app
    });
}

#[test]
fn a_short_screen_keeps_the_chapter_list_and_folds_the_series_into_the_facts() {
    let mut app = logged_in();
    let mut books = library();
    books[2].description = Some("A young woman of wealth plays matchmaker.".repeat(3));
    app.update(Event::Answer(Answer::Library {
        books: books.clone(),
        from_cache: false,
    }));
    app.update(key('j'));
    app.update(code(KeyCode::Enter));
    app.update(Event::Answer(Answer::BookLoaded {
        book: books[2].clone(),
        manifest: Some(manifest("emma", 3, 1800.0)),
        bookmarks: Vec::new(),
    }));
    let text = render(&mut app, 40, 12);
    assert!(!text.contains("more:"), "no links line:\n{text}");
    assert!(
        text.contains(" Austen Novels #4 · by Jane Austen"),
        "{text}"
    );
    assert!(text.contains("1  Chapter 1"), "a chapter row:\n{text}");
    // Tall enough: the links line is back and the facts are as before.
    let text = render(&mut app, 80, 24);
    assert!(text.contains(" by Jane Austen · "), "{text}");
    assert!(text.contains("Austen Novels #4 · more: a author"), "{text}");
}

#[test]
fn book_screen() {
    both("book", book_open);
    both("book_playing", playing);
    both("book_bookmarks", || {
        let mut app = playing();
        app.update(code(KeyCode::Tab));
        app
    });
}

#[test]
fn overlays() {
    both("help", || {
        let mut app = logged_in();
        app.update(key('?'));
        app
    });
    both("sleep_menu", || {
        let mut app = playing();
        app.update(key('s'));
        app
    });
    both("bookmark_note", || {
        let mut app = playing();
        app.update(key('b'));
        for c in "call me Ishmael".chars() {
            app.update(key(c));
        }
        app
    });
    both("confirm_restart", || {
        let mut app = book_open();
        app.update(key('R'));
        app
    });
    both("conflict", || {
        let mut app = playing();
        news(
            &mut app,
            SessionEvent::Conflict {
                book: BookId::new("moby"),
                server: Place {
                    chapter: ChapterId::new("moby-1"),
                    position: 751.0,
                },
                local: Place {
                    chapter: ChapterId::new("moby-3"),
                    position: 190.0,
                },
            },
        );
        app
    });
}

#[test]
fn license_screen_and_banner() {
    both("license", || {
        let mut app = playing();
        news(
            &mut app,
            SessionEvent::Stopped(Stop::new(StopReason::License, "The license expired.")),
        );
        app.update(key('i'));
        app.update(Event::Answer(Answer::License(LicenseStatus {
            state: LicenseState::Expired,
            valid: false,
            message: Some("expired on 2026-10-01".into()),
        })));
        app
    });
}

#[test]
fn toast_and_sleep_countdown() {
    both("toast", || {
        let mut app = playing();
        app.update(key('s'));
        app.update(key('j'));
        app.update(code(KeyCode::Enter));
        app.update(Event::Answer(Answer::Failed(
            "Could not save the bookmark: the server is unreachable.".into(),
        )));
        let mut s = app.snap.clone();
        s.sleep = Some(SleepTimer::Timed {
            left_ms: 15 * 60_000,
            since: Some(app.wall_now()),
        });
        s.link = Link::Offline;
        s.queue = Queue {
            queued: 2,
            ..Queue::default()
        };
        session(&mut app, s);
        app
    });
}

#[test]
fn cjk_title_playing() {
    both("cjk_playing", || {
        let mut app = logged_in();
        app.update(code(KeyCode::End));
        app.update(code(KeyCode::Enter));
        let mut b = library()[3].clone();
        b.description = Some("地球往事三部曲之一。文化大革命期间，物理学家叶文洁……".into());
        app.update(Event::Answer(Answer::BookLoaded {
            book: b,
            manifest: Some(Manifest {
                book_id: BookId::new("santi"),
                items: manifest("santi", 2, 1200.0)
                    .items
                    .into_iter()
                    .enumerate()
                    .map(|(i, mut it)| {
                        it.title = format!("第{}章 科学边界", i + 1);
                        it
                    })
                    .collect(),
            }),
            bookmarks: vec![],
        }));
        let fx = app.update(key(' '));
        let Some(Command::Open {
            known: Some(known), ..
        }) = commands(&fx).pop()
        else {
            panic!("{fx:?}")
        };
        let (book, manifest) = *known;
        let l = listening(book, manifest, "santi-2", 65.0, PlayState::Paused);
        session(&mut app, snap(l));
        app
    });
}

/// Issue 29: "0:17 / 0:22 -0:04" did not add up. Elapsed plus what is left
/// is the length shown, in the bar and the chapter list, for the chapter
/// and the book (at 1×).
#[test]
fn the_bar_times_add_up() {
    let mut app = playing();
    let mut l = app.snap.listening.clone().unwrap();
    (l.position, l.speed) = (599.6, 1.0);
    session(&mut app, snap(l));
    let text = render(&mut app, 80, 24);
    // Chapter 2 of three 30:00 chapters: 9:59 in, so 20:01 left (not
    // 20:00); 39:59 into the book (its time left does not fit at 80).
    assert_eq!(
        text.matches("9:59 / 30:00 -20:01").count(),
        2,
        "bar and list: {text}"
    );
    assert!(text.contains("39:59 / 1:30:00"), "{text}");
}
