//! The terminal cursor follows the user's attention in every screen (issue
//! 24 §3): the selected row, the field or search line being typed in, the
//! chosen line of a box. Screen readers and braille displays read there.
//! (`e2e.rs` checks the same in a real terminal.)

use crate::fixtures::*;
use earmark::ui::keymap::KeyCode;
use earmark::ui::state::*;
use earmark::ui::theme::Theme;
use earmark::ui::views;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

/// Draws `app` at `w`×`h`; the cursor's cell and the text of its row.
fn cursor(app: &mut App, w: u16, h: u16) -> ((u16, u16), String) {
    let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
    app.update(Event::Resize(w, h));
    term.draw(|f| views::render(app, &Theme::monochrome(), f))
        .unwrap();
    let p = term.get_cursor_position().unwrap();
    let buf = term.backend().buffer();
    // The cells a wide letter covers are not text.
    let mut row = String::new();
    let mut x = 0;
    while x < w {
        let s = buf[(x, p.y)].symbol();
        row.push_str(s);
        x += ratatui::buffer::CellWidth::cell_width(s).max(1);
    }
    ((p.x, p.y), row)
}

#[test]
fn the_cursor_is_on_the_selected_library_row() {
    let mut app = logged_in();
    // Sorted by title: Cafe, Emma, Moby, Pride, 三体; the list starts on line 2.
    let (at, row) = cursor(&mut app, 80, 24);
    assert_eq!(at, (0, 2));
    assert!(row.contains("Cafe\u{301} Stories"), "{row}");
    app.update(key('j'));
    app.update(key('j'));
    let (at, row) = cursor(&mut app, 80, 24);
    assert_eq!(at, (0, 4));
    assert!(row.contains("Moby Dick"), "{row}");
    app.update(key('G'));
    let (at, row) = cursor(&mut app, 40, 12);
    assert_eq!(at, (0, 6));
    assert!(row.contains("三体"), "{row}");
}

#[test]
fn the_cursor_is_on_the_selected_group() {
    let mut app = logged_in();
    app.update(key('v')); // by author
    app.update(key('j'));
    let (at, row) = cursor(&mut app, 80, 24);
    assert_eq!(at, (0, 3));
    assert!(row.contains("Herman Melville"), "{row}");
}

#[test]
fn the_cursor_is_at_the_end_of_the_search_while_typing_then_on_the_row() {
    let mut app = logged_in();
    app.update(key('/'));
    let (at, row) = cursor(&mut app, 80, 24);
    assert_eq!(at, (3, 1), "after ` / `: {row}");
    for c in "三体".chars() {
        app.update(key(c));
    }
    let (at, _) = cursor(&mut app, 80, 24);
    assert_eq!(at, (7, 1), "two wide letters after ` / `");
    app.update(code(KeyCode::Enter)); // to the list
    let (at, row) = cursor(&mut app, 80, 24);
    assert_eq!(at, (0, 2));
    assert!(row.contains("三体"), "{row}");
    // A search that finds nothing: the cursor is on what the list says.
    app.update(code(KeyCode::Esc));
    app.update(key('/'));
    for c in "zzzzq".chars() {
        app.update(key(c));
    }
    app.update(code(KeyCode::Enter));
    let (at, row) = cursor(&mut app, 80, 24);
    assert_eq!(at.1, 2);
    assert!(row.contains("No book matches"), "{row}");
}

#[test]
fn the_cursor_is_on_the_selected_chapter_bookmark_and_history_row() {
    let mut app = book_open();
    let (at, row) = cursor(&mut app, 80, 24);
    assert!(row.contains("1  Chapter 1"), "{row}");
    let first = at;
    app.update(key('j'));
    let (at, row) = cursor(&mut app, 80, 24);
    assert_eq!(at, (first.0, first.1 + 1));
    assert!(row.contains("2  Chapter 2"), "{row}");
    app.update(code(KeyCode::Tab)); // bookmarks
    let (_, row) = cursor(&mut app, 80, 24);
    assert!(row.contains("the sermon"), "{row}");
    // Small: no cover box, the list lower on the screen.
    let (at, row) = cursor(&mut app, 40, 12);
    assert_eq!(at.0, 1);
    assert!(row.contains("the sermon"), "{row}");
}

#[test]
fn the_cursor_is_in_the_focused_login_field() {
    let mut app = App::new(Default::default(), Default::default());
    app.update(Event::Answer(Answer::Profiles {
        names: vec!["default".into()],
        current: Some("default".into()),
        address: "nas.local:8686".into(),
        user: "anna".into(),
    }));
    let (at, row) = cursor(&mut app, 80, 24);
    assert!(row.contains("nas.local:8686"), "{row}");
    let start = row.find("nas.local").unwrap();
    // The form is centred: the cursor is after the address's 14 cells.
    assert_eq!(usize::from(at.0), row[..start].chars().count() + 14);
    app.update(code(KeyCode::Tab));
    app.update(code(KeyCode::Tab));
    for c in "secret".chars() {
        app.update(key(c));
    }
    let (at, row) = cursor(&mut app, 80, 24);
    assert!(row.contains("••••••"), "{row}");
    let dots = row.find('•').unwrap();
    assert_eq!(usize::from(at.0), row[..dots].chars().count() + 6);
}

#[test]
fn the_cursor_is_on_the_chosen_line_of_a_box() {
    let mut app = playing();
    app.update(key('s'));
    app.update(key('j'));
    let (_, row) = cursor(&mut app, 80, 24);
    assert!(row.contains(&choice_label(SLEEP_CHOICES[1])), "{row}");
    for c in "25".chars() {
        app.update(key(c));
    }
    let (at, row) = cursor(&mut app, 80, 24);
    assert!(row.contains("25▏ Enter sets it"), "{row}");
    assert_eq!(
        usize::from(at.0),
        row[..row.find("25▏").unwrap()].chars().count() + 2
    );
    app.update(code(KeyCode::Esc));
    app.update(key('b'));
    for c in "call me".chars() {
        app.update(key(c));
    }
    let (at, row) = cursor(&mut app, 80, 24);
    assert_eq!(
        usize::from(at.0),
        row[..row.find("call me").unwrap()].chars().count() + 7
    );
    app.update(code(KeyCode::Esc));
    news(
        &mut app,
        earmark::domain::session::Event::Conflict {
            book: earmark::domain::BookId::new("moby"),
            server: earmark::domain::session::Place {
                chapter: "moby-1".into(),
                position: 751.0,
            },
            local: earmark::domain::session::Place {
                chapter: "moby-3".into(),
                position: 190.0,
            },
        },
    );
    app.update(key('j'));
    let (_, row) = cursor(&mut app, 80, 24);
    assert!(row.contains("this device: ch 3"), "{row}");
}

#[test]
fn screens_without_a_list_hold_the_cursor_on_their_first_line() {
    let mut app = logged_in();
    app.update(key('S'));
    let (at, _) = cursor(&mut app, 80, 24);
    assert_eq!(at, (1, 1));
    let mut app = logged_in();
    app.update(key('i'));
    let (at, row) = cursor(&mut app, 80, 24);
    assert_eq!(at, (1, 1));
    assert!(row.contains("Server license"), "{row}");
}

#[test]
fn the_cursor_stays_inside_every_small_terminal() {
    for mut app in [logged_in(), book_open(), playing()] {
        for w in 1..=24 {
            for h in 1..=8 {
                let ((x, y), _) = cursor(&mut app, w, h);
                assert!(x < w && y < h, "({x}, {y}) in {w}×{h}");
            }
        }
    }
}
