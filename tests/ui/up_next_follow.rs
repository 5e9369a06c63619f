//! What up next's first version left out (issue 24's closing note): the
//! next key in the last chapter goes on to the next book by the same path
//! as MPRIS Next (and says when there is none), a finished book the list
//! brings back starts from its beginning, and the library and search rows
//! show a book's place in the list, in signs or in words.

use crate::fixtures::*;
use crate::up_next::{ended, engine, loaded, playing_pride, plays, queued, select, with_list};
use earmark::domain::*;
use earmark::ui::keymap::KeyCode;
use earmark::ui::state::*;

#[test]
fn n_in_the_last_chapter_marks_the_book_finished_and_starts_the_next_at_once() {
    let mut app = with_list(vec![]);
    playing_pride(&mut app);
    let fx = app.update(key('n'));
    assert!(
        fx.contains(&Effect::SetFinished {
            book: BookId::new("pride"),
            finished: true
        }),
        "finished through sync: {fx:?}"
    );
    assert!(fx.contains(&Effect::LoadBook(BookId::new("emma"))));
    assert!(!fx.contains(&Effect::Engine(EngineCmd::NextChapter)));
    assert_eq!(
        plays(&loaded(&mut app, "emma")),
        Some((BookId::new("emma"), StartAt::Resume)),
        "no countdown: n asked for it"
    );
}

#[test]
fn n_during_the_countdown_starts_the_next_book_now_and_other_keys_still_cancel() {
    let mut app = with_list(vec![]);
    playing_pride(&mut app);
    ended(&mut app);
    loaded(&mut app, "emma");
    let fx = app.update(key('n'));
    assert_eq!(plays(&fx), Some((BookId::new("emma"), StartAt::Resume)));

    let mut app = with_list(vec![]);
    playing_pride(&mut app);
    ended(&mut app);
    app.update(key('l'));
    assert!(app.up_next.countdown.is_none(), "any other key cancels");
}

#[test]
fn n_before_the_last_chapter_is_the_next_chapter() {
    let mut app = with_list(vec![]);
    playing_pride(&mut app);
    engine(&mut app, "pride", "pride-1", 10.0, PlayState::Playing);
    let fx = app.update(key('n'));
    assert!(fx.contains(&Effect::Engine(EngineCmd::NextChapter)));
    assert!(app.up_next.countdown.is_none());
}

/// Emma (the last of Austen Novels, 3 chapters) in its last chapter.
fn playing_emma(app: &mut App) {
    select(app, "Emma");
    app.update(code(KeyCode::Enter));
    loaded(app, "emma");
    app.update(key(' '));
    engine(app, "emma", "emma-3", 100.0, PlayState::Playing);
}

#[test]
fn n_with_no_next_book_says_so_on_the_bar() {
    for (mode, why) in [
        (UpNextMode::Series, "no book follows in its series"),
        (UpNextMode::Queue, "the up next list is empty"),
        (UpNextMode::Off, "up next is off"),
    ] {
        let mut app = with_list(vec![]);
        app.settings.up_next.mode = mode;
        playing_emma(&mut app);
        let fx = app.update(key('n'));
        assert!(
            !fx.iter().any(|e| matches!(
                e,
                Effect::LoadBook(_) | Effect::SetFinished { .. } | Effect::Play { .. }
            )),
            "{mode:?}: {fx:?}"
        );
        let toast = &app.toasts.back().unwrap().text;
        assert!(
            toast.contains("This is the last chapter: no next book"),
            "{toast}"
        );
        assert!(toast.contains(why), "{mode:?}: {toast}");
        let text = render(&mut app, 80, 24);
        assert!(text.contains("no next book"), "{text}");
        engine(&mut app, "emma", "emma-3", 1800.0, PlayState::Ended);
        app.update(key('n'));
        let toast = &app.toasts.back().unwrap().text;
        assert!(
            toast.contains("The book has ended: no next book"),
            "{toast}"
        );
    }
}

/// What the next key or MPRIS Next did: its effects, the countdown and
/// the book playing after it.
fn after_next(mut app: App, remote: bool) -> (Vec<Effect>, Option<BookId>, Option<BookId>) {
    let fx = if remote {
        app.update(Event::Answer(Answer::Remote(RemoteCmd::NextChapter)))
    } else {
        app.update(key('n'))
    };
    let counting = app.up_next.countdown.as_ref().map(|c| c.next.book.clone());
    let playing = app.playing.as_ref().map(|p| p.book.id.clone());
    (fx, counting, playing)
}

#[test]
fn the_next_key_and_mpris_next_decide_alike_in_every_state() {
    type Setup = fn(&mut App);
    let states: [(&str, Setup); 6] = [
        ("first chapter", |a| {
            playing_pride(a);
            engine(a, "pride", "pride-1", 10.0, PlayState::Playing);
        }),
        ("last chapter", playing_pride),
        ("ended, counting down", |a| {
            playing_pride(a);
            ended(a);
            loaded(a, "emma");
        }),
        ("ended, cancelled", |a| {
            playing_pride(a);
            ended(a);
            a.update(key('x'));
        }),
        ("last of its series", playing_emma),
        ("nothing playing", |_| {}),
    ];
    for (name, setup) in states {
        let [mut a, mut b] = [with_list(vec![]), with_list(vec![])];
        setup(&mut a);
        setup(&mut b);
        let by_key = after_next(a, false);
        let by_mpris = after_next(b, true);
        assert_eq!(by_key, by_mpris, "{name}");
    }
}

#[test]
fn a_finished_book_from_the_list_starts_from_its_beginning_and_an_unfinished_one_resumes() {
    // Pride and Prejudice is finished in the library.
    let mut app = with_list(vec![queued("pride", "Pride and Prejudice")]);
    playing_emma(&mut app);
    engine(&mut app, "emma", "emma-3", 1800.0, PlayState::Ended);
    let t = app.now;
    loaded(&mut app, "pride");
    let text = render(&mut app, 80, 24);
    assert!(text.contains("from the beginning"), "{text}");
    let fx = app.update(Event::Tick(t + 10_000));
    assert_eq!(
        plays(&fx),
        Some((BookId::new("pride"), StartAt::Restart)),
        "an explicit restart: sync sends it with reset"
    );
    assert!(
        app.toasts
            .back()
            .unwrap()
            .text
            .contains("from the beginning"),
        "{:?}",
        app.toasts
    );

    let mut app = with_list(vec![queued("pride", "Pride and Prejudice")]);
    app.update(key('>'));
    let text = render(&mut app, 80, 24);
    assert!(
        row(&text, "Pride").contains("Pride and Prejudice · finished: from the start"),
        "the list screen says it: {text}"
    );

    let mut app = with_list(vec![queued("moby", "Moby Dick")]);
    playing_emma(&mut app);
    engine(&mut app, "emma", "emma-3", 1800.0, PlayState::Ended);
    let t = app.now;
    loaded(&mut app, "moby");
    assert!(render(&mut app, 80, 24).contains("from where you left it"));
    let fx = app.update(Event::Tick(t + 10_000));
    assert_eq!(plays(&fx), Some((BookId::new("moby"), StartAt::Resume)));
}

#[test]
fn a_book_the_library_copy_calls_finished_resumes_unless_the_servers_answer_says_so() {
    // The copy says finished, the server's answer of this countdown does
    // not (listened on another device since): it resumes, no reset.
    let mut app = with_list(vec![queued("pride", "Pride and Prejudice")]);
    playing_emma(&mut app);
    engine(&mut app, "emma", "emma-3", 1800.0, PlayState::Ended);
    let t = app.now;
    let mut book = library()
        .into_iter()
        .find(|b| b.id.as_str() == "pride")
        .unwrap();
    book.progress = None;
    app.update(Event::Answer(Answer::BookLoaded {
        book,
        manifest: Some(manifest("pride", 3, 1800.0)),
        bookmarks: vec![],
    }));
    assert!(render(&mut app, 80, 24).contains("from where you left it"));
    let fx = app.update(Event::Tick(t + 10_000));
    assert_eq!(plays(&fx), Some((BookId::new("pride"), StartAt::Resume)));

    // Offline, the chapters of a download: the copy may be stale, so
    // nothing is reset from it.
    let mut app = with_list(vec![queued("pride", "Pride and Prejudice")]);
    playing_emma(&mut app);
    engine(&mut app, "emma", "emma-3", 1800.0, PlayState::Ended);
    let t = app.now;
    let book = library()
        .into_iter()
        .find(|b| b.id.as_str() == "pride")
        .unwrap();
    assert!(
        book.progress.as_ref().is_some_and(|p| p.finished),
        "the copy says finished"
    );
    app.update(Event::Answer(Answer::BookFromDownload {
        book,
        manifest: manifest("pride", 3, 1800.0),
    }));
    let fx = app.update(Event::Tick(t + 10_000));
    assert_eq!(plays(&fx), Some((BookId::new("pride"), StartAt::Resume)));
}

#[test]
fn n_typed_in_the_search_line_during_the_countdown_cancels_it_and_starts_nothing() {
    let mut app = with_list(vec![]);
    playing_pride(&mut app);
    app.update(code(KeyCode::Esc));
    app.update(key('/'));
    ended(&mut app);
    loaded(&mut app, "emma");
    assert!(app.up_next.countdown.is_some(), "counting down");
    let fx = app.update(key('n'));
    assert_eq!(plays(&fx), None, "{fx:?}");
    assert!(app.up_next.countdown.is_none(), "the key cancelled it");
}

/// The library's row of `title` on screen.
fn row<'a>(text: &'a str, title: &str) -> &'a str {
    text.lines()
        .find(|l| l.contains(title))
        .unwrap_or_else(|| panic!("no row of {title}: {text}"))
}

#[test]
fn queued_books_show_their_place_in_the_library_and_in_search_results() {
    let list = vec![queued("moby", "Moby Dick"), queued("emma", "Emma")];
    let mut app = with_list(list.clone());
    let text = render(&mut app, 80, 24);
    assert!(row(&text, "Moby").contains("»1 Moby"), "{text}");
    assert!(row(&text, "Emma").contains("»2 Emma"), "{text}");
    assert!(!row(&text, "Pride").contains('»'), "{text}");

    // In words, and without colour.
    let mut app = with_list(list);
    app.settings.accessible = true;
    let text = render_with(&mut app, 40, 12, &earmark::ui::theme::Theme::monochrome());
    assert!(row(&text, "Moby").contains("next 1: Moby"), "{text}");
    assert!(row(&text, "Emma").contains("next 2: Emma"), "{text}");

    app.update(key('/'));
    for c in "emm".chars() {
        app.update(key(c));
    }
    let text = render(&mut app, 80, 24);
    assert!(row(&text, "Emma").contains("next 2: Emma"), "{text}");
    assert!(row(&text, "Moby").contains("next 1: Moby"), "{text}");
}

#[test]
fn queued_marks_snapshots() {
    for accessible in [false, true] {
        for (w, h) in [(80, 24), (40, 12)] {
            let mut app = with_list(vec![queued("moby", "Moby Dick"), queued("emma", "Emma")]);
            app.settings.accessible = accessible;
            let name = match accessible {
                false => format!("up_next_marks_{w}x{h}"),
                true => format!("up_next_marks_accessible_{w}x{h}"),
            };
            insta::assert_snapshot!(name, render(&mut app, w, h));
        }
    }
}
