//! What up next's first version left out (issue 24's closing note): the
//! next key in the last chapter goes on to the next book by the same path
//! as MPRIS Next (and says when there is none), a finished book the list
//! brings back starts from its beginning, and the library and search rows
//! show a book's place in the list, in signs or in words.

use crate::fixtures::*;
use crate::up_next::{counting_down, emma_next, playing_pride, queued, up_next, with_list};
use earmark::domain::session::{Command, Said, UpNextCommand, UpNextNow, UpNextWhy};
use earmark::domain::*;
use earmark::ui::keymap::KeyCode;
use earmark::ui::state::*;

/// `n` is the session's next chapter in every state (the session's owner
/// decides: the next chapter, or in the last one or after the end the
/// next book, as for MPRIS's Next, which sends the same command); during
/// the countdown it is "go now", which the owner takes alike.
#[test]
fn the_next_key_sends_what_mpris_next_sends_in_every_state() {
    type Setup = fn(&mut App);
    let states: [(&str, Setup); 4] = [
        ("first chapter", |a| {
            playing_pride(a);
            heard(a, "pride-1", 10.0, PlayState::Playing);
        }),
        ("last chapter", playing_pride),
        ("ended", |a| {
            playing_pride(a);
            heard(a, "pride-2", 60.0, PlayState::Ended);
        }),
        ("nothing playing", |_| {}),
    ];
    for (name, setup) in states {
        let mut app = with_list(vec![]);
        setup(&mut app);
        assert_eq!(
            commands(&app.update(key('n'))),
            [Command::NextChapter],
            "{name}"
        );
    }
    let mut app = with_list(vec![]);
    playing_pride(&mut app);
    counting_down(&mut app, emma_next(), None);
    assert_eq!(
        commands(&app.update(key('n'))),
        [Command::UpNext(UpNextCommand::Go)]
    );
}

#[test]
fn n_with_no_next_book_says_so_and_why() {
    for (mode, why) in [
        (UpNextMode::Series, "no book follows in its series"),
        (UpNextMode::Queue, "(the up next list is empty)"),
        (UpNextMode::Off, "up next is off"),
    ] {
        let mut app = with_list(vec![]);
        playing_pride(&mut app);
        up_next(
            &mut app,
            UpNextNow {
                mode,
                ..UpNextNow::default()
            },
        );
        let why_none = match mode {
            UpNextMode::Off => UpNextWhy::Off,
            _ => UpNextWhy::NothingFollows,
        };
        said(&mut app, Said::UpNextNone(why_none));
        let words = toast(&app);
        assert!(
            words.starts_with("This is the last chapter: no next book"),
            "{words}"
        );
        assert!(words.contains(why), "{mode:?}: {words}");
        let text = render(&mut app, 80, 24);
        assert!(text.contains("no next book"), "{text}");
        heard(&mut app, "pride-2", 60.0, PlayState::Ended);
        said(&mut app, Said::UpNextNone(why_none));
        let words = toast(&app);
        assert!(
            words.starts_with("The book has ended: no next book"),
            "{words}"
        );
    }
}

#[test]
fn the_countdown_says_how_the_next_book_opens() {
    // The server said it was finished: it starts over.
    let mut app = with_list(vec![queued("pride", "Pride and Prejudice")]);
    playing_pride(&mut app);
    let pride = Next {
        book: BookId::new("pride"),
        title: "Pride and Prejudice".into(),
        from: NextFrom::List,
    };
    counting_down(&mut app, pride.clone(), Some(Opening::Restart));
    let text = render(&mut app, 80, 24);
    assert!(text.contains("from the beginning"), "{text}");
    // The library's copy says finished but the server's answer of this
    // countdown does not (listened on another device since): it resumes.
    counting_down(&mut app, pride, Some(Opening::Resume));
    assert!(render(&mut app, 80, 24).contains("from where you left it"));

    let mut app = with_list(vec![queued("pride", "Pride and Prejudice")]);
    app.update(key('>'));
    let text = render(&mut app, 80, 24);
    assert!(
        row(&text, "Pride").contains("Pride and Prejudice · finished: from the start"),
        "the list screen says it: {text}"
    );
}

#[test]
fn n_typed_in_the_search_line_during_the_countdown_cancels_it_and_starts_nothing() {
    let mut app = with_list(vec![]);
    playing_pride(&mut app);
    app.update(code(KeyCode::Esc));
    app.update(key('/'));
    counting_down(&mut app, emma_next(), None);
    let fx = app.update(key('n'));
    assert_eq!(commands(&fx), [Command::UpNext(UpNextCommand::Cancel)]);
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
