//! The accessible mode (issue 24 §3): no box-drawing borders, no bars, the
//! player's state in words, and nothing told by colour alone, with or
//! without NO_COLOR. Snapshots at 80×24 and 40×12.

use crate::fixtures::*;
use earmark::domain::*;
use earmark::ui::covers::CoverMode;
use earmark::ui::keymap::KeyCode;
use earmark::ui::state::*;
use earmark::ui::theme::Theme;
use earmark::ui::views;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::Modifier;

/// As `[ui] accessible = true` sets it (covers off unless asked for).
fn accessible(mut app: App) -> App {
    let ui = earmark::ui::UiConfig::from_toml("[ui]\naccessible = true\n", true, false).unwrap();
    assert_eq!(ui.settings.covers, CoverMode::Off);
    app.settings.accessible = ui.settings.accessible;
    app.settings.covers = ui.settings.covers;
    app
}

fn stats(mut app: App) -> App {
    app.update(key('S'));
    app.update(Event::Answer(Answer::Stats(ListeningStats {
        today: 100,
        last_30: (71..=100)
            .map(|day| DayListened {
                day,
                wall_secs: if day % 3 == 0 { 0.0 } else { day as f64 * 30.0 },
                media_secs: day as f64 * 40.0,
            })
            .collect(),
        current_streak_days: 2,
        longest_streak_days: 9,
        books_finished: 1,
        total_wall_secs: 36_000.0,
        total_media_secs: 40_000.0,
        books: vec![BookListened {
            book_id: "moby".into(),
            wall_secs: 3600.0,
            media_secs: 4000.0,
            finished: true,
        }],
    })));
    app
}

/// Every screen and box the accessible mode changes.
fn screens() -> Vec<(&'static str, App)> {
    let mut v = vec![
        ("library", accessible(logged_in())),
        ("book_playing", accessible(playing())),
        ("stats", stats(accessible(logged_in()))),
    ];
    let mut lib = accessible(playing());
    lib.update(code(KeyCode::Esc));
    v.push(("library_playing", lib));
    let mut sleep = accessible(playing());
    sleep.update(key('s'));
    v.push(("sleep_menu", sleep));
    let mut note = accessible(playing());
    note.update(key('b'));
    for c in "call me Ishmael".chars() {
        note.update(key(c));
    }
    v.push(("bookmark_note", note));
    let mut toast = accessible(playing());
    toast.update(Event::Answer(Answer::Failed(
        "Could not save the bookmark: the server is unreachable.".into(),
    )));
    v.push(("error_toast", toast));
    let mut login = accessible(App::new(Default::default(), Default::default()));
    login.update(Event::Answer(Answer::Profiles {
        names: vec!["default".into()],
        current: Some("default".into()),
        address: "nas.local:8686".into(),
        user: "anna".into(),
    }));
    v.push(("login", login));
    v
}

fn draw(app: &mut App, w: u16, h: u16, theme: &Theme) -> Buffer {
    let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
    app.update(Event::Resize(w, h));
    term.draw(|f| views::render(app, theme, f)).unwrap();
    term.backend().buffer().clone()
}

#[test]
fn accessible_screens() {
    for (name, mut app) in screens() {
        for (w, h) in [(80, 24), (40, 12)] {
            let text = render(&mut app, w, h);
            insta::assert_snapshot!(format!("accessible_{name}_{w}x{h}"), text);
        }
    }
}

#[test]
fn no_borders_no_bars_no_spinner_glyphs() {
    for (name, mut app) in screens() {
        for (w, h) in [(80, 24), (40, 12), (120, 40)] {
            let text = render(&mut app, w, h);
            let drawn: Vec<char> = text
                .chars()
                .filter(|c| {
                    ('\u{2500}'..='\u{259F}').contains(c) // box drawing, blocks
                        || "◌▶⏸■✖⚠▏".contains(*c)
                })
                .collect();
            assert!(drawn.is_empty(), "{name} {w}×{h}: {drawn:?}\n{text}");
        }
    }
}

#[test]
fn the_player_bar_says_the_state_in_words() {
    let mut app = accessible(playing());
    let text = render(&mut app, 80, 24);
    // Moby Dick: 3 × 30:00, at 2400 s of 5400 s, 1.25×: 40 minutes left.
    assert!(
        text.contains("Playing, chapter 2 of 3, 40 minutes left"),
        "{text}"
    );
    assert!(text.contains("speed 1.25×, volume 80%"), "{text}");
    assert!(
        text.contains("chapter 10:00 of 30:00, 16:00 left"),
        "{text}"
    );
    assert!(
        text.contains("book 40:00 of 1:30:00 (44%), 40:00 left"),
        "{text}"
    );
    heard(&mut app, "moby-2", 600.0, PlayState::Paused);
    let text = render(&mut app, 40, 12);
    assert!(text.contains("Paused, chapter 2 of 3"), "{text}");
    app.update(key('T')); // times in the book's own time
    let text = render(&mut app, 80, 24);
    assert!(text.contains("chapter 2 of 3, 50 minutes left"), "{text}");
}

/// Selection, focus, matches, errors and the state show without colour:
/// by reverse video, underline, bold and words (NO_COLOR's theme, in the
/// accessible mode and out of it).
#[test]
fn nothing_is_told_by_colour_alone() {
    let theme = Theme::load(true, None).unwrap();
    for mode in [false, true] {
        let set = |mut app: App| {
            app.settings.accessible = mode;
            app
        };
        // The selected library row, book row and box line are reversed.
        for (mut app, needle) in [
            (set(logged_in()), "Emma"),
            (set(book_open()), "Chapter 2"),
            (set(playing()), "15 min"),
        ] {
            if needle == "15 min" {
                app.update(key('s'));
            }
            app.update(key('j'));
            let buf = draw(&mut app, 80, 24, &theme);
            let y = (0..24)
                .find(|y| row_text(&buf, *y).contains(needle))
                .unwrap_or_else(|| panic!("{needle} not drawn"));
            let x = col(&buf, y, needle);
            assert!(
                buf[(x, y)].modifier.contains(Modifier::REVERSED),
                "mode {mode}: {needle} is selected by reverse video"
            );
        }
        // Matched letters are underlined.
        let mut app = set(logged_in());
        for c in "/emma".chars() {
            app.update(key(c));
        }
        let buf = draw(&mut app, 80, 24, &theme);
        let x = col(&buf, 2, "Emma");
        assert!(buf[(x, 2)].modifier.contains(Modifier::UNDERLINED));
        // The focused login field is reversed.
        let mut app = set(App::new(Default::default(), Default::default()));
        let buf = draw(&mut app, 80, 24, &theme);
        let y = (0..24)
            .find(|y| row_text(&buf, *y).contains("Server"))
            .unwrap();
        let x = col(&buf, y, "Server") + 10;
        assert!(buf[(x, y)].modifier.contains(Modifier::REVERSED));
    }
    // An error toast says so in words, not only in red.
    let mut app = accessible(playing());
    app.update(Event::Answer(Answer::Failed("Could not save.".into())));
    let text = render(&mut app, 80, 24);
    assert!(text.contains(" Error: Could not save. "), "{text}");
}

fn row_text(buf: &Buffer, y: u16) -> String {
    (0..buf.area.width)
        .map(|x| buf[(x, y)].symbol().to_owned())
        .collect()
}

/// The cell where `needle` starts on row `y` (rows of one-cell letters).
fn col(buf: &Buffer, y: u16, needle: &str) -> u16 {
    let row = row_text(buf, y);
    row[..row.find(needle).unwrap()].chars().count() as u16
}
