//! Up next in the player: the keys that build, reorder and trim the play
//! next list (each a command to the session, which keeps the list), what
//! the screens show of the session's up next (the bar's "next: …", the
//! countdown over any box, the list screen), and what a key does during
//! the countdown. What plays next and when is the session owner's
//! (`domain::next_after`'s tests, and tests/ui/up_next_live.rs through
//! the real backends).

use crate::fixtures::*;
use earmark::domain::session::{Command, Countdown, UpNextCommand, UpNextNow};
use earmark::domain::up_next::list;
use earmark::domain::*;
use earmark::ui::keymap::KeyCode;
use earmark::ui::state::*;

pub(crate) fn queued(id: &str, title: &str) -> Queued {
    Queued {
        id: BookId::new(id),
        title: title.into(),
    }
}

/// The session's up next now `u`.
pub(crate) fn up_next(app: &mut App, u: UpNextNow) {
    let mut s = app.snap.clone();
    s.up_next = u;
    session(app, s);
}

/// Logged in, the session's list `list`, the library on screen.
pub(crate) fn with_list(list: Vec<Queued>) -> App {
    let mut app = logged_in();
    up_next(
        &mut app,
        UpNextNow {
            list,
            ..UpNextNow::default()
        },
    );
    app
}

/// What the session's owner does with the up next commands among `fx`
/// (`domain::up_next::list`'s edits), published back.
pub(crate) fn owner_edits(app: &mut App, fx: &[Effect]) {
    let mut u = app.snap.up_next.clone();
    for c in commands(fx) {
        match c {
            Command::UpNext(UpNextCommand::Toggle(q)) if !list::remove(&mut u.list, &q.id) => {
                list::add(&mut u.list, q);
            }
            Command::UpNext(UpNextCommand::Shift { book, by }) => {
                let i = u.list.iter().position(|q| q.id == book).unwrap();
                list::shift(&mut u.list, i, by);
            }
            _ => {}
        }
    }
    up_next(app, u);
}

/// The library row of `title` selected (sorted by title: Cafe, Emma,
/// Moby, Pride, 三体).
pub(crate) fn select(app: &mut App, title: &str) {
    app.update(key('g'));
    let rows = ["Cafe", "Emma", "Moby", "Pride", "三体"];
    let i = rows.iter().position(|r| title.starts_with(r)).unwrap();
    for _ in 0..i {
        app.update(key('j'));
    }
}

/// Emma, next in Austen Novels (#4).
pub(crate) fn emma_next() -> Next {
    Next {
        book: BookId::new("emma"),
        title: "Emma".into(),
        from: NextFrom::Series("Austen Novels".into()),
    }
}

/// Pride and Prejudice (Austen Novels #2, 2 chapters of 60 s) playing
/// near the end of its last chapter, Emma next.
pub(crate) fn playing_pride(app: &mut App) {
    select(app, "Pride");
    app.update(code(KeyCode::Enter));
    let pride = library().into_iter().find(|b| b.id.as_str() == "pride");
    let (pride, m) = (pride.unwrap(), manifest("pride", 2, 60.0));
    app.update(Event::Answer(Answer::BookLoaded {
        book: pride.clone(),
        manifest: Some(m.clone()),
        bookmarks: vec![],
    }));
    let fx = app.update(key(' '));
    assert!(
        matches!(commands(&fx).as_slice(), [Command::Open { .. }]),
        "{fx:?}"
    );
    let mut s = snap(listening(pride, m, "pride-2", 55.0, PlayState::Playing));
    s.up_next = UpNextNow {
        next: Some(emma_next()),
        ..app.snap.up_next.clone()
    };
    session(app, s);
}

/// The book ended and the session counts down to `next` (10 s).
pub(crate) fn counting_down(app: &mut App, next: Next, opening: Option<Opening>) {
    heard(app, "pride-2", 60.0, PlayState::Ended);
    let mut u = app.snap.up_next.clone();
    u.countdown = Some(Countdown {
        next,
        starts_at: app.wall_now() + 10_000,
        opening,
    });
    up_next(app, u);
}

#[test]
fn the_bar_says_what_plays_next_and_the_countdown_shows_over_any_box() {
    let mut app = with_list(vec![]);
    playing_pride(&mut app);
    assert!(render(&mut app, 80, 24).contains("next: Emma"));
    app.update(key('?'));
    counting_down(&mut app, emma_next(), Some(Opening::Resume));
    let t = app.now;
    assert_eq!(
        app.next_wake(),
        Some(t + PLAYING_TICK_MS),
        "it redraws while it counts"
    );
    let text = render(&mut app, 80, 24);
    assert!(text.contains("“Emma” starts in 10 s"), "{text}");
    assert!(text.contains("next in the series: Austen Novels"), "{text}");
    // Its key only cancels, over the box too.
    let fx = app.update(key('j'));
    assert_eq!(commands(&fx), [Command::UpNext(UpNextCommand::Cancel)]);
    assert!(app.overlays.is_open(), "help is still open");
}

#[test]
fn a_key_cancels_the_countdown_and_does_nothing_else() {
    let mut app = with_list(vec![]);
    playing_pride(&mut app);
    counting_down(&mut app, emma_next(), None);
    let fx = app.update(key(' '));
    assert_eq!(commands(&fx), [Command::UpNext(UpNextCommand::Cancel)]);
    assert_eq!(fx.len(), 1, "the key only cancels: {fx:?}");
    assert_eq!(toast(&app), "Up next cancelled: “Emma” does not start.");
}

#[test]
fn the_next_book_starting_is_said_and_its_screen_follows() {
    let mut app = with_list(vec![]);
    playing_pride(&mut app);
    use earmark::domain::session::Said;
    let fx = said(
        &mut app,
        Said::UpNextStarting {
            next: emma_next(),
            opening: Opening::Resume,
        },
    );
    assert_eq!(toast(&app), "Up next: “Emma”, next in Austen Novels");
    // On the finished book's screen, the next book's screen opens (where
    // Space would not play the finished one again).
    assert!(
        fx.contains(&Effect::LoadBook(BookId::new("emma"))),
        "{fx:?}"
    );
    assert_eq!((app.screen, app.book.id.as_str()), (Screen::Book, "emma"));
    said(
        &mut app,
        Said::UpNextStarting {
            next: Next {
                from: NextFrom::List,
                ..emma_next()
            },
            opening: Opening::Restart,
        },
    );
    assert_eq!(
        toast(&app),
        "Up next: “Emma”, from your up next list, from the beginning"
    );
}

#[test]
fn the_add_key_builds_the_list_and_says_each_place() {
    let mut app = with_list(vec![]);
    for (title, said) in [
        ("Moby", "“Moby Dick” plays next"),
        ("Emma", "“Emma” is number 2 up next"),
        ("Moby", "“Moby Dick” is no longer up next"),
    ] {
        select(&mut app, title);
        let fx = app.update(key('A'));
        assert!(
            matches!(
                commands(&fx).as_slice(),
                [Command::UpNext(UpNextCommand::Toggle(_))]
            ),
            "{fx:?}"
        );
        owner_edits(&mut app, &fx);
        assert_eq!(toast(&app), said);
    }
    assert_eq!(app.snap.up_next.list, [queued("emma", "Emma")]);
}

#[test]
fn the_list_screen_reorders_removes_and_opens() {
    let mut app = with_list(vec![
        queued("moby", "Moby Dick"),
        queued("emma", "Emma"),
        queued("cafe", "Cafe"),
    ]);
    app.update(key('>'));
    assert_eq!(app.screen, Screen::UpNext);
    let shift = |book: &str, by| {
        vec![Command::UpNext(UpNextCommand::Shift {
            book: BookId::new(book),
            by,
        })]
    };
    let fx = app.update(key('J'));
    assert_eq!(commands(&fx), shift("moby", 1));
    owner_edits(&mut app, &fx);
    assert_eq!(app.up_next.cursor, 1, "the cursor follows the book");
    let fx = app.update(key('K'));
    assert_eq!(commands(&fx), shift("moby", -1));
    owner_edits(&mut app, &fx);
    assert!(commands(&app.update(key('K'))).is_empty(), "already first");
    app.update(key('G'));
    let fx = app.update(key('d'));
    assert_eq!(
        commands(&fx),
        [Command::UpNext(UpNextCommand::Toggle(queued(
            "cafe", "Cafe"
        )))]
    );
    owner_edits(&mut app, &fx);
    assert_eq!(app.up_next.cursor, 1, "on the last row left");
    let fx = app.update(code(KeyCode::Enter));
    assert!(
        fx.contains(&Effect::LoadBook(BookId::new("emma"))),
        "{fx:?}"
    );
    assert_eq!(app.screen, Screen::Book);
    let fx = app.update(key('A'));
    owner_edits(&mut app, &fx);
    assert_eq!(
        app.snap.up_next.list.len(),
        1,
        "A on the book screen takes it off"
    );
    app.update(key('>'));
    app.update(code(KeyCode::Esc));
    assert_eq!(app.screen, Screen::Book, "back where it came from");
}

#[test]
fn with_up_next_off_the_bar_offers_nothing() {
    let mut app = with_list(vec![queued("moby", "Moby Dick")]);
    playing_pride(&mut app);
    up_next(
        &mut app,
        UpNextNow {
            mode: UpNextMode::Off,
            list: vec![queued("moby", "Moby Dick")],
            ..UpNextNow::default()
        },
    );
    assert!(!render(&mut app, 80, 24).contains("next:"));
    app.update(key('>'));
    assert!(render(&mut app, 80, 24).contains("Up next is off"));
}

#[test]
fn up_next_snapshots() {
    for (w, h) in [(80, 24), (40, 12)] {
        let mut app = with_list(vec![]);
        playing_pride(&mut app);
        insta::assert_snapshot!(format!("up_next_bar_{w}x{h}"), render(&mut app, w, h));
        counting_down(&mut app, emma_next(), Some(Opening::Resume));
        let t = app.now;
        app.update(Event::Tick(t + 2_500));
        insta::assert_snapshot!(format!("up_next_countdown_{w}x{h}"), render(&mut app, w, h));
        let mut app = with_list(vec![
            queued("moby", "Moby Dick"),
            queued("santi", "三体 · The Three-Body Problem"),
            queued("gone", "A book the library no longer lists"),
        ]);
        app.update(key('>'));
        app.update(key('j'));
        insta::assert_snapshot!(format!("up_next_list_{w}x{h}"), render(&mut app, w, h));
    }
}

#[test]
fn the_countdown_is_said_in_words_in_the_accessible_mode() {
    let mut app = with_list(vec![]);
    app.settings.accessible = true;
    playing_pride(&mut app);
    counting_down(&mut app, emma_next(), None);
    let text = render(&mut app, 80, 24);
    assert!(text.contains("Up next"), "{text}");
    assert!(text.contains("“Emma” starts in 10 s"), "{text}");
    assert!(text.contains("any key cancels"), "{text}");
    assert!(!text.contains('┌'), "{text}");
}
