//! Place history, undo jump and the statistics screen, through the
//! reducer's events, and their snapshots at 80×24 and 40×12.

use crate::fixtures::*;
use earmark::domain::session::{Command, Event as SessionEvent};
use earmark::domain::*;
use earmark::ui::keymap::KeyCode;
use earmark::ui::state::*;

fn at(app: &mut App, chapter: &str, position: f64) {
    heard(app, chapter, position, PlayState::Playing);
}

/// The session marked the place before a jump (its owner does for every
/// skip, seek and chapter change; the player keeps the list).
fn marked(app: &mut App, chapter: &str, position: f64, cause: JumpCause) {
    let mark = PlaceMark {
        at: app.wall_now(),
        chapter_id: ChapterId::new(chapter),
        position,
        cause,
    };
    let book = BookId::new("moby");
    news(app, SessionEvent::PlaceMarked { book, mark });
}

/// The seeks among `fx`: chapter, position and why.
fn seeks(fx: &[Effect]) -> Vec<(String, f64, JumpCause)> {
    commands(fx)
        .into_iter()
        .filter_map(|c| match c {
            Command::Seek {
                chapter,
                position,
                cause,
            } => Some((chapter.to_string(), position, cause)),
            _ => None,
        })
        .collect()
}

#[test]
fn undo_returns_to_the_place_before_a_skip_and_again_undoes_the_undo() {
    let mut app = playing();
    assert_eq!(
        commands(&app.update(code(KeyCode::Left))),
        [Command::SkipBy(-12.5)]
    );
    marked(&mut app, "moby-2", 600.0, JumpCause::Skip);
    at(&mut app, "moby-2", 587.5);
    let fx = app.update(key('u'));
    assert_eq!(seeks(&fx), [("moby-2".to_owned(), 600.0, JumpCause::Undo)]);
    assert_eq!(toast(&app), "Back to ch 2 10:00 (again to return)");
    marked(&mut app, "moby-2", 587.5, JumpCause::Undo);
    at(&mut app, "moby-2", 600.0);
    let fx = app.update(key('u'));
    assert_eq!(seeks(&fx), [("moby-2".to_owned(), 587.5, JumpCause::Undo)]);
}

#[test]
fn skips_in_a_row_are_one_jump_so_undo_goes_back_before_the_first() {
    let mut app = playing();
    marked(&mut app, "moby-2", 600.0, JumpCause::Skip);
    at(&mut app, "moby-2", 587.5);
    marked(&mut app, "moby-2", 587.5, JumpCause::Skip);
    at(&mut app, "moby-2", 575.0);
    assert_eq!(app.book.history.of(&BookId::new("moby")).len(), 1);
    let fx = app.update(key('u'));
    assert_eq!(seeks(&fx), [("moby-2".to_owned(), 600.0, JumpCause::Undo)]);
}

#[test]
fn chapter_changes_and_bookmark_jumps_say_their_cause() {
    let mut app = playing();
    assert_eq!(commands(&app.update(key('n'))), [Command::NextChapter]);
    at(&mut app, "moby-3", 0.0);
    app.update(key('B')); // bookmarks pane
    let fx = app.update(code(KeyCode::Enter));
    assert_eq!(
        seeks(&fx),
        [("moby-2".to_owned(), 751.0, JumpCause::Bookmark)]
    );
}

#[test]
fn the_history_list_jumps_where_enter_is_pressed_and_marks_that_jump() {
    let mut app = playing();
    marked(&mut app, "moby-2", 600.0, JumpCause::Chapter);
    at(&mut app, "moby-3", 30.0);
    // Sync restored elsewhere once: the place it left is marked too.
    marked(&mut app, "moby-1", 42.0, JumpCause::Restore);
    app.update(key('U'));
    assert_eq!(app.book.pane, BookPane::History);
    // Newest first: the restore, then the chapter change.
    app.update(key('j'));
    let fx = app.update(code(KeyCode::Enter));
    assert_eq!(
        seeks(&fx),
        [("moby-2".to_owned(), 600.0, JumpCause::History)]
    );
}

#[test]
fn undo_without_a_jump_says_so_and_moves_nothing() {
    let mut app = playing();
    let fx = app.update(key('u'));
    assert!(seeks(&fx).is_empty());
    assert!(
        app.toasts
            .iter()
            .any(|t| t.text.contains("No jump to undo"))
    );
}

#[test]
fn opening_a_book_reads_its_history_and_the_answer_fills_the_list() {
    let mut app = logged_in();
    app.update(key('j'));
    app.update(key('j'));
    let fx = app.update(code(KeyCode::Enter));
    assert!(fx.contains(&Effect::LoadHistory(BookId::new("moby"))));
    let mark = PlaceMark {
        at: 1,
        chapter_id: ChapterId::new("moby-2"),
        position: 12.0,
        cause: JumpCause::Seek,
    };
    app.update(Event::Answer(Answer::History {
        book: BookId::new("moby"),
        marks: vec![mark.clone()],
    }));
    assert_eq!(app.book.history.of(&BookId::new("moby")), [mark]);
}

fn with_history() -> App {
    let mut app = playing();
    app.clock_origin = 1_700_000_000_000;
    let base = app.wall_now();
    let list = [
        (base - 3 * 86_400_000, "moby-1", 65.0, JumpCause::Restore),
        (base - 2 * 3_600_000, "moby-2", 300.0, JumpCause::Sleep),
        (base - 20 * 60_000, "moby-2", 612.0, JumpCause::Skip),
        (base - 5_000, "moby-3", 10.0, JumpCause::Chapter),
    ];
    let marks = list
        .iter()
        .map(|(at, ch, pos, cause)| PlaceMark {
            at: *at,
            chapter_id: ChapterId::new(*ch),
            position: *pos,
            cause: *cause,
        })
        .collect();
    app.update(Event::Answer(Answer::History {
        book: BookId::new("moby"),
        marks,
    }));
    app.update(key('U'));
    app
}

#[test]
fn history_pane_snapshots() {
    for (w, h) in [(80, 24), (40, 12)] {
        let mut app = with_history();
        insta::assert_snapshot!(format!("book_history_{w}x{h}"), render(&mut app, w, h));
    }
}

fn stats() -> ListeningStats {
    let today = 20_000;
    let last_30 = (today - 29..=today)
        .map(|day| {
            let k = (day - today + 29) as f64;
            let wall = if (day % 7) == 3 {
                0.0
            } else {
                600.0 + 97.0 * k
            };
            DayListened {
                day,
                wall_secs: wall,
                media_secs: wall * 1.25,
            }
        })
        .collect();
    ListeningStats {
        today,
        last_30,
        total_wall_secs: 45.0 * 3600.0,
        total_media_secs: 56.0 * 3600.0,
        longest_streak_days: 12,
        current_streak_days: 4,
        books_finished: 2,
        books: vec![
            BookListened {
                book_id: BookId::new("moby"),
                wall_secs: 30.0 * 3600.0,
                media_secs: 37.0 * 3600.0,
                finished: false,
            },
            BookListened {
                book_id: BookId::new("pride"),
                wall_secs: 15.0 * 3600.0,
                media_secs: 19.0 * 3600.0,
                finished: true,
            },
        ],
    }
}

#[test]
fn stats_screen_asks_for_the_numbers_and_back_returns() {
    let mut app = logged_in();
    let fx = app.update(key('S'));
    assert_eq!(app.screen, Screen::Stats);
    assert!(fx.contains(&Effect::LoadStats));
    app.update(Event::Answer(Answer::Stats(stats())));
    app.update(code(KeyCode::Esc));
    assert_eq!(app.screen, Screen::Library);
}

#[test]
fn stats_screen_snapshots() {
    for (w, h) in [(80, 24), (40, 12)] {
        let mut app = logged_in();
        app.update(key('S'));
        app.update(Event::Answer(Answer::Stats(stats())));
        insta::assert_snapshot!(format!("stats_{w}x{h}"), render(&mut app, w, h));
    }
}

#[test]
fn a_mark_whose_chapter_left_the_book_is_not_jumped_to() {
    let mut app = playing();
    app.update(Event::Answer(Answer::History {
        book: BookId::new("moby"),
        marks: vec![PlaceMark {
            at: 1,
            chapter_id: ChapterId::new("gone"),
            position: 5.0,
            cause: JumpCause::Seek,
        }],
    }));
    let fx = app.update(key('u'));
    assert!(seeks(&fx).is_empty(), "{fx:?}");
    app.update(key('U'));
    let fx = app.update(code(KeyCode::Enter));
    assert!(seeks(&fx).is_empty(), "{fx:?}");
    assert!(
        app.toasts
            .back()
            .unwrap()
            .text
            .contains("no longer in this book")
    );
}
