//! Issue 25 through the reducer and the views: the player with the
//! server away and back, one place per book, and the smaller items.

use crate::fixtures::*;
use earmark::domain::session::{Command, Link, Start};
use earmark::domain::*;
use earmark::ui::keymap::KeyCode;
use earmark::ui::state::*;

/// The session finds the server away (`offline`) or back.
fn sync(app: &mut App, offline: bool) -> Vec<Effect> {
    let mut s = app.snap.clone();
    s.link = if offline { Link::Offline } else { Link::Online };
    session(app, s)
}

#[test]
fn a_lost_server_shows_in_the_header_the_bar_and_the_rows_and_refreshes_on_its_return() {
    let mut app = logged_in();
    sync(&mut app, true);
    let screen = render(&mut app, 80, 24);
    assert!(
        screen.lines().next().unwrap().contains("offline"),
        "{screen}"
    );
    assert!(screen.contains("unavailable"), "{screen}");
    // Not by colour alone: with the accessible words too.
    app.settings.accessible = true;
    assert!(render(&mut app, 80, 24).contains("unavailable"));
    // The keys that need the server say why.
    let fx = app.update(key('r'));
    assert_eq!(
        fx,
        [Effect::Session(Command::Recheck)],
        "no library load while away"
    );
    assert!(
        app.toasts
            .back()
            .unwrap()
            .text
            .contains("cannot be reached")
    );
    let fx = app.update(key('D'));
    assert!(fx.is_empty(), "{fx:?}");
    assert!(
        app.toasts
            .back()
            .unwrap()
            .text
            .contains("Downloading needs the server")
    );
    // Back: the library refreshes by itself.
    let fx = sync(&mut app, false);
    assert_eq!(fx, [Effect::LoadLibrary]);
    assert!(!render(&mut app, 80, 24).contains("unavailable"));
}

#[test]
fn a_book_that_could_not_be_read_offline_says_why_and_comes_back_with_the_server() {
    let mut app = logged_in();
    sync(&mut app, true);
    for _ in 0..2 {
        app.update(key('j'));
    }
    app.update(code(KeyCode::Enter));
    app.update(Event::Answer(Answer::Failed(
        "Could not open the book: cannot reach the server".into(),
    )));
    let screen = render(&mut app, 80, 24);
    assert!(
        screen.contains("Offline, and this book is not downloaded"),
        "{screen}"
    );
    assert!(app.update(key(' ')).is_empty());
    assert!(
        app.toasts
            .back()
            .unwrap()
            .text
            .contains("plays when the server is back")
    );
    let fx = sync(&mut app, false);
    assert!(
        fx.contains(&Effect::LoadBook(BookId::new("moby"))),
        "{fx:?}"
    );
}

#[test]
fn refresh_asks_the_server_for_the_playing_books_place_too() {
    let mut app = playing();
    let fx = app.update(key('r'));
    assert!(fx.contains(&Effect::LoadLibrary), "{fx:?}");
    assert!(fx.contains(&Effect::Session(Command::Recheck)), "{fx:?}");
}

#[test]
fn the_library_row_the_book_screen_and_the_bar_show_one_place() {
    let mut app = playing(); // moby at ch 2 10:00 = 40:00 of 1:30:00 (44%)
    // The library list says another place (the server's, after `r`).
    let mut moby = library()[0].clone();
    moby.progress = Some(progress("moby-3", 1350.0, 4950.0, false));
    app.update(Event::Answer(Answer::BookLoaded {
        book: moby,
        manifest: Some(manifest("moby", 3, 1800.0)),
        bookmarks: vec![],
    }));
    let book = render(&mut app, 80, 24);
    assert!(book.contains("(44%)"), "{book}");
    assert!(book.contains("40:00 / 1:30:00"), "the bar: {book}");
    app.update(code(KeyCode::Esc));
    let lib = render(&mut app, 80, 24);
    let row = lib.lines().find(|l| l.contains("Moby Dick")).unwrap();
    assert!(row.contains("44%"), "{row}");
    assert!(!row.contains("92%"), "{row}");
}

#[test]
fn space_on_another_books_screen_plays_that_book_not_the_one_playing() {
    let mut app = playing();
    app.update(code(KeyCode::Esc));
    app.update(key('j')); // Pride and Prejudice
    app.update(code(KeyCode::Enter));
    app.update(Event::Answer(Answer::BookLoaded {
        book: library()[1].clone(),
        manifest: Some(manifest("pride", 3, 1800.0)),
        bookmarks: vec![],
    }));
    let fx = app.update(key(' '));
    assert_eq!(
        commands(&fx)
            .iter()
            .map(|c| match c {
                Command::Open { book, start, .. } => Some((book.as_str(), start.clone())),
                _ => None,
            })
            .collect::<Vec<_>>(),
        [Some(("pride", Start::Resume))],
        "pride opens (the session leaves moby), no toggle of moby: {fx:?}"
    );
}

/// Through the player's real backends: a timer set for one book is gone
/// when the listener opens another (the session's owner forgets it).
#[test]
fn a_sleep_timer_does_not_follow_into_another_book() {
    use crate::backend::{demo_library, listening, log_in, next_answer, open};
    use earmark::domain::session::Start;
    use earmark::ui::event_loop::{Backends, UiSender};
    let rt = tokio::runtime::Runtime::new().unwrap();
    let server = rt
        .block_on(crate::harness::TestServer::start(demo_library()))
        .unwrap();
    let home = tempfile::tempdir().unwrap();
    let (profile, done) = log_in(&rt, &server, home.path());
    let c = done.client.clone();
    let books: Vec<(Book, Manifest)> = rt.block_on(async {
        let mut out = Vec::new();
        for b in c
            .books(&Default::default())
            .await
            .unwrap()
            .into_iter()
            .take(2)
        {
            let m = c.manifest(&b.id).await.unwrap();
            out.push((b, m));
        }
        out
    });
    let (ui, rx) = UiSender::channel();
    let mut live = earmark::runtime::Live::start(
        ui,
        profile,
        Some(done.session),
        earmark::player::AudioMode::Null,
        Default::default(),
    )
    .unwrap();
    let ((a, am), (b, bm)) = (&books[0], &books[1]);
    open(&mut live, a, am, Start::Resume);
    next_answer(&rx, "A playing", |x| {
        listening(x).is_some_and(|l| l.book.id == a.id && l.state == PlayState::Playing)
    });
    live.handle(Effect::Session(Command::Sleep(SleepChoice::Minutes(5))));
    next_answer(
        &rx,
        "A's timer",
        |x| matches!(x, Answer::Session(s) if s.sleep.is_some()),
    );
    open(&mut live, b, bm, Start::Resume);
    next_answer(&rx, "B without a timer", |x| {
        matches!(x, Answer::Session(s)
            if s.listening.as_ref().is_some_and(|l| l.book.id == b.id) && s.sleep.is_none())
    });
    live.shutdown();
}

#[test]
fn one_book_and_one_chapter_are_singular() {
    let mut app = App::new(
        earmark::ui::keymap::Keymap::default(),
        UiSettings::default(),
    );
    app.update(Event::Answer(Answer::LoggedIn(SessionInfo {
        address: "http://h/api/v1".into(),
        user: "u".into(),
        profile: None,
    })));
    let mut one = book("one", "Only", "A", 60.0);
    one.chapter_count = Some(1);
    app.update(Event::Answer(Answer::Library {
        books: vec![one.clone()],
        from_cache: false,
    }));
    let lib = render(&mut app, 80, 24);
    assert!(lib.contains("· 1 book "), "{lib}");
    app.update(code(KeyCode::Enter));
    app.update(Event::Answer(Answer::BookLoaded {
        book: one,
        manifest: Some(manifest("one", 1, 60.0)),
        bookmarks: vec![],
    }));
    let screen = render(&mut app, 80, 24);
    assert!(screen.contains("· 1 chapter"), "{screen}");
    assert!(!screen.contains("1 chapters"), "{screen}");
}

#[test]
fn the_help_overlay_names_each_group_once() {
    let mut app = logged_in();
    app.update(key('?'));
    let screen = render(&mut app, 80, 200);
    let headings: Vec<&str> = screen
        .lines()
        .filter_map(|l| l.split('—').nth(1).map(str::trim))
        .filter(|h| !h.is_empty())
        .collect();
    assert!(headings.len() >= 3, "{screen}");
    for h in &headings {
        let n = headings.iter().filter(|x| *x == h).count();
        assert_eq!(n, 1, "{h}: {n} times\n{screen}");
    }
}

/// Scenario 5 through the player's real backends (engine on the null
/// output, sync, the reference server): `n` while paused reaches the
/// server, `l` right after sends its own place (not the one before it),
/// and `←` while paused with the server away is queued.
#[test]
fn seeks_while_paused_reach_the_server_at_once_or_are_queued() {
    use crate::driver::Driver;
    use earmark::ui::event_loop::Backends;
    let mut d = Driver::start(earmark::config::ListeningRules {
        rewind: None,
        ..Default::default()
    });
    let ch = |i: usize| d.manifest.items[i].chapter_id.clone();
    let (ch1, ch2) = (ch(0), ch(1));
    d.step(code(KeyCode::Enter)); // chapter 1 from 0
    d.follow(
        "playing",
        |a| matches!(Driver::at(a), Some((PlayState::Playing, _, p)) if p >= 2.0),
    );
    d.step(key(' '));
    d.follow("paused", |a| {
        matches!(Driver::at(a), Some((PlayState::Paused, _, _)))
    });
    let held = |d: &Driver, what: &str, f: &dyn Fn(&Progress) -> bool| {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        loop {
            let p = d.server_progress();
            if f(&p) {
                return;
            }
            assert!(std::time::Instant::now() < deadline, "{what}: {p:?}");
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    };
    held(&d, "the pause", &|p| p.chapter_id == ch1);
    d.step(key('n'));
    held(&d, "n while paused", &|p| {
        p.chapter_id == ch2 && p.position < 1.0
    });
    d.step(key('l'));
    held(&d, "l right after", &|p| {
        p.chapter_id == ch2 && (p.position - 30.0).abs() < 1.0
    });
    d.stop_server();
    d.step(key('h'));
    d.follow("queued while the server is away", |a| {
        a.snap.queue.queued == 1
    });
    d.restart_server();
    d.follow("sent when it is back", |a| a.snap.queue.queued == 0);
    held(&d, "← while away", &|p| {
        p.chapter_id == ch2 && p.position < 1.0
    });
    d.live.shutdown();
}
