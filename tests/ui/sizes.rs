//! Rendering never panics, whatever the size (down to 0×0), and NO_COLOR
//! output carries no color at all.

use crate::fixtures::*;
use earmark::domain::{Stop, StopReason};
use earmark::ui::keymap::KeyCode;
use earmark::ui::state::*;
use earmark::ui::theme::Theme;
use earmark::ui::views;
use proptest::prelude::*;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::style::Color;

fn states() -> Vec<App> {
    let mut v = vec![
        App::new(Default::default(), Default::default()),
        logged_in(),
        book_open(),
        playing(),
    ];
    let mut help = playing();
    help.update(key('?'));
    v.push(help);
    let mut search = logged_in();
    for c in "/三体".chars() {
        search.update(key(c));
    }
    v.push(search);
    let mut conflict = playing();
    news(
        &mut conflict,
        earmark::domain::session::Event::Conflict {
            book: earmark::domain::BookId::new("moby"),
            server: earmark::domain::session::Place {
                chapter: "moby-1".into(),
                position: 1.0,
            },
            local: earmark::domain::session::Place {
                chapter: "moby-3".into(),
                position: 2.0,
            },
        },
    );
    v.push(conflict);
    let mut banner = playing();
    news(
        &mut banner,
        earmark::domain::session::Event::Stopped(Stop::new(StopReason::License, "expired")),
    );
    banner.update(code(KeyCode::Tab));
    v.push(banner);
    // The place history (with a mark) and the statistics screen.
    let mut history = playing();
    history.update(key('n'));
    history.update(key('U'));
    v.push(history);
    let mut stats = logged_in();
    stats.update(key('S'));
    stats.update(Event::Answer(Answer::Stats(
        earmark::domain::ListeningStats {
            today: 100,
            last_30: (71..=100)
                .map(|day| earmark::domain::DayListened {
                    day,
                    wall_secs: day as f64 * 30.0,
                    media_secs: day as f64 * 40.0,
                })
                .collect(),
            books: vec![earmark::domain::BookListened {
                book_id: "moby".into(),
                wall_secs: 3600.0,
                media_secs: 4000.0,
                finished: true,
            }],
            ..Default::default()
        },
    )));
    v.push(stats);
    v
}

#[test]
fn tiny_sizes_never_panic() {
    for mut app in states() {
        for w in 0..=24 {
            for h in 0..=8 {
                render(&mut app, w, h);
            }
        }
    }
}

#[test]
fn at_20x5_the_player_bar_is_still_there() {
    let mut app = playing();
    let text = render(&mut app, 20, 5);
    assert!(text.contains("Moby"), "{text}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn any_size_and_scroll_never_panics(w in 1u16..200, h in 1u16..70, moves in proptest::collection::vec(0u8..6, 0..20)) {
        for mut app in states() {
            for m in &moves {
                let ev = match m {
                    0 => key('j'),
                    1 => key('k'),
                    2 => code(KeyCode::PageDown),
                    3 => key('G'),
                    4 => code(KeyCode::Tab),
                    _ => Event::Resize(w / 2 + 1, h / 2 + 1),
                };
                app.update(ev);
            }
            render(&mut app, w, h);
        }
    }
}

#[test]
fn no_color_means_no_color() {
    let theme = Theme::load(true, None).unwrap();
    for mut app in states() {
        let mut term = Terminal::new(TestBackend::new(80, 24)).unwrap();
        term.draw(|f| views::render(&mut app, &theme, f)).unwrap();
        for cell in term.backend().buffer().content() {
            assert!(
                matches!(cell.fg, Color::Reset) && matches!(cell.bg, Color::Reset),
                "{cell:?}"
            );
        }
    }
}

#[test]
fn a_hundred_thousand_books_render_only_visible_rows() {
    let mut app = logged_in();
    let books: Vec<_> = (0..100_000)
        .map(|i| book(&format!("b{i}"), &format!("Book {i:06}"), "Someone", 3600.0))
        .collect();
    app.update(Event::Answer(Answer::Library {
        books,
        from_cache: true,
    }));
    app.update(key('G'));
    let text = render(&mut app, 80, 24);
    assert!(text.contains("Book 099999"), "{text}");
    assert!(text.contains("100000 books (cached)"), "{text}");
}
