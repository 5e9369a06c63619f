//! Up next in the reducer: the countdown when a book ends (and a key
//! cancelling it), the next book of the series or of the list starting
//! from its synced place, the list built, reordered and kept per account,
//! MPRIS's Next at the end of the last chapter; and what the screen shows.

use crate::fixtures::*;
use earmark::domain::*;
use earmark::ui::keymap::KeyCode;
use earmark::ui::state::*;

pub(crate) fn account(user: &str) -> Account {
    Account {
        server_id: ServerId::new("srv-1"),
        user_id: UserId::parse(user).unwrap(),
    }
}

pub(crate) fn queued(id: &str, title: &str) -> Queued {
    Queued {
        id: BookId::new(id),
        title: title.into(),
    }
}

/// Logged in, the account's list read (`list`), the library on screen.
pub(crate) fn with_list(list: Vec<Queued>) -> App {
    let mut app = logged_in();
    app.update(Event::Answer(Answer::UpNext {
        account: account("1"),
        books: list,
    }));
    app
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

/// Pride and Prejudice (Austen Novels #2, 2 chapters of 60 s) playing
/// near the end of its last chapter.
pub(crate) fn playing_pride(app: &mut App) {
    select(app, "Pride");
    app.update(code(KeyCode::Enter));
    let pride = library().into_iter().find(|b| b.id.as_str() == "pride");
    app.update(Event::Answer(Answer::BookLoaded {
        book: pride.unwrap(),
        manifest: Some(manifest("pride", 2, 60.0)),
        bookmarks: vec![],
    }));
    let fx = app.update(key(' '));
    assert!(
        fx.iter().any(|e| matches!(e, Effect::Play { .. })),
        "{fx:?}"
    );
    engine(app, "pride", "pride-2", 55.0, PlayState::Playing);
}

pub(crate) fn engine(
    app: &mut App,
    book: &str,
    chapter: &str,
    position: f64,
    state: PlayState,
) -> Vec<Effect> {
    app.update(Event::Answer(Answer::Engine(EngineView {
        playback_id: 7,
        book: BookId::new(book),
        chapter: ChapterId::new(chapter),
        position,
        state,
        speed: 1.0,
        volume: 1.0,
        approximate: false,
    })))
}

pub(crate) fn ended(app: &mut App) -> Vec<Effect> {
    engine(app, "pride", "pride-2", 60.0, PlayState::Ended)
}

pub(crate) fn loaded(app: &mut App, id: &str) -> Vec<Effect> {
    let book = library().into_iter().find(|b| b.id.as_str() == id).unwrap();
    app.update(Event::Answer(Answer::BookLoaded {
        book,
        manifest: Some(manifest(id, 3, 1800.0)),
        bookmarks: vec![],
    }))
}

pub(crate) fn plays(fx: &[Effect]) -> Option<(BookId, StartAt)> {
    fx.iter().find_map(|e| match e {
        Effect::Play { book, start, .. } => Some((book.id.clone(), start.clone())),
        _ => None,
    })
}

pub(crate) fn saved(fx: &[Effect]) -> Option<Vec<String>> {
    fx.iter().find_map(|e| match e {
        Effect::SaveUpNext { books, .. } => Some(books.iter().map(|q| q.id.to_string()).collect()),
        _ => None,
    })
}

#[test]
fn a_finished_book_counts_down_ten_seconds_then_the_next_of_its_series_resumes() {
    let mut app = with_list(vec![]);
    playing_pride(&mut app);
    assert_eq!(
        app.up_next.next.as_ref().map(|n| n.title.as_str()),
        Some("Emma")
    );
    let fx = ended(&mut app);
    assert!(
        fx.contains(&Effect::LoadBook(BookId::new("emma"))),
        "{fx:?}"
    );
    let t = app.now;
    let c = app
        .up_next
        .countdown
        .clone()
        .expect("the notice counts down");
    assert_eq!(c.next.book, BookId::new("emma"));
    assert_eq!(c.at, t + 10_000, "10 s by default");
    assert_eq!(app.next_wake(), Some(t + 1_000), "it redraws each second");
    // Its chapters arrive during the countdown: it waits on.
    assert_eq!(plays(&loaded(&mut app, "emma")), None);
    assert_eq!(plays(&app.update(Event::Tick(t + 9_900))), None);
    let fx = app.update(Event::Tick(t + 10_000));
    assert_eq!(
        plays(&fx),
        Some((BookId::new("emma"), StartAt::Resume)),
        "from its synced place: sync restores it, never 0 over a place"
    );
    assert_eq!(app.playing.as_ref().unwrap().book.id, BookId::new("emma"));
    assert!(app.up_next.countdown.is_none());
    assert!(
        app.toasts
            .back()
            .unwrap()
            .text
            .contains("next in Austen Novels"),
        "{:?}",
        app.toasts
    );
}

#[test]
fn a_key_cancels_the_countdown_and_does_nothing_else() {
    let mut app = with_list(vec![]);
    playing_pride(&mut app);
    ended(&mut app);
    let t = app.now;
    loaded(&mut app, "emma");
    let fx = app.update(key(' '));
    assert!(fx.is_empty(), "the key only cancels: {fx:?}");
    assert!(app.up_next.countdown.is_none());
    assert!(app.toasts.back().unwrap().text.contains("cancelled"));
    assert_eq!(plays(&app.update(Event::Tick(t + 20_000))), None);
    assert_eq!(app.playing.as_ref().unwrap().book.id, BookId::new("pride"));
}

#[test]
fn the_next_book_waits_for_its_chapters_when_they_come_late() {
    let mut app = with_list(vec![]);
    playing_pride(&mut app);
    ended(&mut app);
    let t = app.now;
    assert_eq!(plays(&app.update(Event::Tick(t + 12_000))), None);
    assert_eq!(
        plays(&loaded(&mut app, "emma")),
        Some((BookId::new("emma"), StartAt::Resume))
    );
}

#[test]
fn the_list_comes_before_the_series_and_its_book_leaves_it() {
    let mut app = with_list(vec![]);
    select(&mut app, "Moby");
    let fx = app.update(key('A'));
    assert_eq!(saved(&fx), Some(vec!["moby".to_owned()]));
    assert!(app.toasts.back().unwrap().text.contains("plays next"));
    playing_pride(&mut app);
    let text = render(&mut app, 80, 24);
    assert!(text.contains("next: Moby Dick"), "{text}");
    ended(&mut app);
    let t = app.now;
    loaded(&mut app, "moby");
    let fx = app.update(Event::Tick(t + 10_000));
    assert_eq!(plays(&fx), Some((BookId::new("moby"), StartAt::Resume)));
    assert_eq!(saved(&fx), Some(vec![]), "it left the list");
    assert!(app.up_next.list.is_empty());
}

#[test]
fn a_next_book_whose_chapters_never_come_is_given_up_and_said() {
    let mut app = with_list(vec![]);
    playing_pride(&mut app);
    ended(&mut app);
    let t = app.now;
    app.update(Event::Tick(t + 39_000));
    assert!(app.up_next.countdown.is_some(), "still waiting");
    app.update(Event::Tick(t + 40_000));
    assert!(app.up_next.countdown.is_none());
    let toast = app.toasts.back().unwrap();
    assert!(
        toast.error && toast.text.contains("could not be opened"),
        "{toast:?}"
    );
    assert_eq!(plays(&loaded(&mut app, "emma")), None, "too late");
}

#[test]
fn the_countdown_shows_over_an_open_box_and_its_key_only_cancels() {
    let mut app = with_list(vec![]);
    playing_pride(&mut app);
    app.update(key('?'));
    ended(&mut app);
    assert!(render(&mut app, 80, 24).contains("starts in 10 s"));
    app.update(key('j'));
    assert!(app.up_next.countdown.is_none());
    assert!(app.overlay.is_some(), "help is still open");
}

#[test]
fn a_book_played_by_hand_leaves_the_list_too() {
    let mut app = with_list(vec![
        queued("pride", "Pride and Prejudice"),
        queued("moby", "Moby Dick"),
    ]);
    select(&mut app, "Pride");
    app.update(code(KeyCode::Enter));
    loaded(&mut app, "pride");
    let fx = app.update(key(' '));
    assert_eq!(saved(&fx), Some(vec!["moby".to_owned()]));
}

#[test]
fn queue_mode_never_follows_the_series_and_off_offers_nothing() {
    for (mode, list) in [
        (UpNextMode::Queue, vec![]),
        (UpNextMode::Off, vec![queued("moby", "Moby Dick")]),
    ] {
        let mut app = with_list(list);
        app.settings.up_next.mode = mode;
        playing_pride(&mut app);
        let fx = ended(&mut app);
        assert!(app.up_next.countdown.is_none(), "{mode:?}");
        assert!(
            !fx.iter().any(|e| matches!(e, Effect::LoadBook(_))),
            "{fx:?}"
        );
        assert!(!render(&mut app, 80, 24).contains("next:"), "{mode:?}");
    }
}

#[test]
fn the_last_of_a_series_ends_quietly() {
    let mut app = with_list(vec![]);
    select(&mut app, "Emma");
    app.update(code(KeyCode::Enter));
    loaded(&mut app, "emma");
    app.update(key(' '));
    engine(&mut app, "emma", "emma-3", 1800.0, PlayState::Ended);
    assert!(app.up_next.countdown.is_none());
    assert!(app.up_next.next.is_none());
}

#[test]
fn mpris_next_in_the_last_chapter_marks_the_book_finished_and_starts_the_next_at_once() {
    let mut app = with_list(vec![]);
    playing_pride(&mut app);
    let fx = app.update(Event::Answer(Answer::Remote(RemoteCmd::NextChapter)));
    assert!(
        fx.contains(&Effect::SetFinished {
            book: BookId::new("pride"),
            finished: true
        }),
        "finished through sync: {fx:?}"
    );
    assert!(
        fx.iter().any(
            |e| matches!(e, Effect::MarkPlace { mark, .. } if mark.cause == JumpCause::Finished)
        )
    );
    assert!(fx.contains(&Effect::LoadBook(BookId::new("emma"))));
    assert!(!fx.contains(&Effect::Engine(EngineCmd::NextChapter)));
    let fx = loaded(&mut app, "emma");
    assert_eq!(
        plays(&fx),
        Some((BookId::new("emma"), StartAt::Resume)),
        "no countdown: Next asked for it"
    );
}

#[test]
fn mpris_next_during_the_countdown_or_after_the_end_starts_the_next_now() {
    let mut app = with_list(vec![]);
    playing_pride(&mut app);
    ended(&mut app);
    loaded(&mut app, "emma");
    let fx = app.update(Event::Answer(Answer::Remote(RemoteCmd::NextChapter)));
    assert_eq!(plays(&fx), Some((BookId::new("emma"), StartAt::Resume)));

    let mut app = with_list(vec![]);
    playing_pride(&mut app);
    ended(&mut app);
    app.update(key('x')); // cancelled
    let fx = app.update(Event::Answer(Answer::Remote(RemoteCmd::NextChapter)));
    assert!(
        fx.contains(&Effect::LoadBook(BookId::new("emma"))),
        "{fx:?}"
    );
    assert!(!fx.contains(&Effect::Engine(EngineCmd::NextChapter)));
    assert_eq!(
        plays(&loaded(&mut app, "emma")),
        Some((BookId::new("emma"), StartAt::Resume))
    );
}

#[test]
fn mpris_next_before_the_last_chapter_is_the_next_chapter() {
    let mut app = with_list(vec![]);
    playing_pride(&mut app);
    engine(&mut app, "pride", "pride-1", 10.0, PlayState::Playing);
    let fx = app.update(Event::Answer(Answer::Remote(RemoteCmd::NextChapter)));
    assert!(fx.contains(&Effect::Engine(EngineCmd::NextChapter)));
    engine(&mut app, "pride", "pride-2", 0.0, PlayState::Playing);
    let fx = ended(&mut app);
    assert!(
        app.up_next.countdown.as_ref().unwrap().at > app.now,
        "{fx:?}"
    );
}

#[test]
fn the_list_screen_reorders_removes_and_opens() {
    let mut app = with_list(vec![]);
    for title in ["Moby", "Emma", "Cafe"] {
        select(&mut app, title);
        app.update(key('A'));
    }
    app.update(key('>'));
    assert_eq!(app.screen, Screen::UpNext);
    let fx = app.update(key('J'));
    assert_eq!(
        saved(&fx),
        Some(vec!["emma".into(), "moby".into(), "cafe".into()])
    );
    assert_eq!(app.up_next.cursor, 1, "the cursor follows the book");
    let fx = app.update(key('K'));
    assert_eq!(
        saved(&fx),
        Some(vec!["moby".into(), "emma".into(), "cafe".into()])
    );
    assert_eq!(saved(&app.update(key('K'))), None, "already first");
    app.update(key('G'));
    let fx = app.update(key('d'));
    assert_eq!(saved(&fx), Some(vec!["moby".into(), "emma".into()]));
    assert_eq!(app.up_next.cursor, 1);
    let fx = app.update(code(KeyCode::Enter));
    assert!(
        fx.contains(&Effect::LoadBook(BookId::new("emma"))),
        "{fx:?}"
    );
    assert_eq!(app.screen, Screen::Book);
    app.update(key('A'));
    assert_eq!(
        app.up_next.list.len(),
        1,
        "A on the book screen takes it off"
    );
    app.update(key('>'));
    app.update(code(KeyCode::Esc));
    assert_eq!(app.screen, Screen::Book, "back where it came from");
}

#[test]
fn a_new_login_reads_its_own_list_and_nothing_is_added_before_it() {
    let mut app = with_list(vec![queued("moby", "Moby Dick")]);
    let fx = app.update(Event::Answer(Answer::LoggedIn(SessionInfo {
        address: "http://127.0.0.1:8686/api/v1".into(),
        user: "bob".into(),
        profile: None,
    })));
    assert!(fx.contains(&Effect::LoadUpNext), "{fx:?}");
    assert!(app.up_next.list.is_empty() && app.up_next.account.is_none());
    select(&mut app, "Emma");
    let fx = app.update(key('A'));
    assert_eq!(saved(&fx), None, "not into another account's list");
    assert!(app.toasts.back().unwrap().text.contains("not read yet"));
    app.update(Event::Answer(Answer::UpNext {
        account: account("2"),
        books: vec![],
    }));
    let fx = app.update(key('A'));
    let Some(Effect::SaveUpNext { account: a, books }) =
        fx.iter().find(|e| matches!(e, Effect::SaveUpNext { .. }))
    else {
        panic!("{fx:?}")
    };
    assert_eq!((a, books.len()), (&account("2"), 1));
}

#[test]
fn up_next_snapshots() {
    for (w, h) in [(80, 24), (40, 12)] {
        let mut app = with_list(vec![]);
        playing_pride(&mut app);
        insta::assert_snapshot!(format!("up_next_bar_{w}x{h}"), render(&mut app, w, h));
        ended(&mut app);
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
    ended(&mut app);
    let text = render(&mut app, 80, 24);
    assert!(text.contains("Up next"), "{text}");
    assert!(text.contains("“Emma” starts in 10 s"), "{text}");
    assert!(text.contains("any key cancels"), "{text}");
    assert!(!text.contains('┌'), "{text}");
}
