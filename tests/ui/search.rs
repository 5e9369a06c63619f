//! The time-sliced fuzzy search over a big library: every step scores at
//! most one chunk, and the finished scan equals a full synchronous scan.

use crate::bench::big_library;
use crate::fixtures::*;
use earmark::domain::*;
use earmark::ui::keymap::KeyCode;
use earmark::ui::state::library::SCAN_CHUNK;
use earmark::ui::state::*;
use nucleo_matcher::pattern::{CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher, Utf32String};

/// The reference: every book scored at once, best first, ties by position.
fn full_scan(books: &[Book], query: &str) -> Vec<BookId> {
    let pattern = Pattern::parse(query, CaseMatching::Smart, Normalization::Smart);
    let mut matcher = Matcher::new(Config::DEFAULT);
    let mut scored: Vec<(u32, usize)> = books
        .iter()
        .enumerate()
        .filter_map(|(i, b)| {
            let key = Utf32String::from(format!("{}  {}", b.title, b.authors.join(", ")));
            pattern.score(key.slice(..), &mut matcher).map(|s| (s, i))
        })
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    scored
        .into_iter()
        .map(|(_, i)| books[i].id.clone())
        .collect()
}

fn view(app: &App) -> Vec<BookId> {
    (0..app.library.len())
        .map(|i| app.library.row(i).unwrap().id.clone())
        .collect()
}

/// Sends `ev`, then ticks until the scan is done, checking that no step
/// scores more than one chunk and that each step redraws. Returns the steps.
fn run(app: &mut App, ev: Event) -> usize {
    app.update(ev);
    if let Some((done, _)) = app.library.scan_progress() {
        assert!(done <= SCAN_CHUNK, "the keystroke scored {done} items");
    }
    1 + finish(app)
}

/// Ticks a running scan to its end with the same checks; returns the steps.
fn finish(app: &mut App) -> usize {
    let mut steps = 0;
    while let Some((done, total)) = app.library.scan_progress() {
        app.dirty = false;
        app.update(Event::Tick(0));
        let scored = app.library.scan_progress().map_or(total, |p| p.0) - done;
        assert!(
            scored > 0 && scored <= SCAN_CHUNK,
            "a step scored {scored} items"
        );
        assert!(app.dirty, "every step redraws");
        steps += 1;
        assert!(steps < 10_000, "the scan never finishes");
    }
    steps
}

fn searching_app(n: usize) -> (App, Vec<Book>) {
    let books = big_library(n);
    let mut app = App::new(Default::default(), Default::default());
    app.update(Event::Answer(Answer::Library {
        books: books.clone(),
        from_cache: true,
    }));
    app.screen = Screen::Library;
    app.update(key('/'));
    (app, books)
}

#[test]
fn sliced_search_over_100k_equals_a_full_scan() {
    let (mut app, books) = searching_app(100_000);
    // The first letter scans everything, one chunk per step.
    let steps = run(&mut app, key('w'));
    assert_eq!(steps, 100_000usize.div_ceil(SCAN_CHUNK));
    assert_eq!(view(&app), full_scan(&books, "w"));
    // Idle again once the scan is done: only the server search's debounce
    // is left to wake for.
    assert!(
        app.next_wake().is_none_or(|t| t > 0),
        "{:?}",
        app.next_wake()
    );
    // Narrowing from a finished scan.
    run(&mut app, key('h'));
    assert_eq!(view(&app), full_scan(&books, "wh"));
    // Backspace reuses the remembered view.
    app.update(code(KeyCode::Backspace));
    assert!(!app.library.searching());
    assert_eq!(view(&app), full_scan(&books, "w"));
}

#[test]
fn typing_during_a_scan_narrows_it_and_stays_complete() {
    let (mut app, books) = searching_app(30_000);
    app.update(key('s'));
    assert!(app.library.searching(), "a first letter over 30k is sliced");
    assert_eq!(
        app.next_wake(),
        Some(0),
        "the loop continues the scan at once"
    );
    // Some matches are visible already, best first.
    assert!(!app.library.is_empty());
    app.update(Event::Tick(0));
    // The next letters arrive before the scan is done.
    app.update(key('t'));
    app.update(key('o'));
    finish(&mut app);
    assert_eq!(view(&app), full_scan(&books, "sto"));
    // A query that does not extend the running one starts over from the base.
    app.update(code(KeyCode::Backspace));
    app.update(code(KeyCode::Backspace));
    app.update(code(KeyCode::Backspace));
    app.update(key('r'));
    app.update(key('i'));
    finish(&mut app);
    assert_eq!(view(&app), full_scan(&books, "ri"));
    // Closing the search stops the scan and shows the whole library.
    app.update(key('x'));
    app.update(code(KeyCode::Esc));
    assert!(!app.library.searching());
    assert_eq!(app.library.len(), 30_000);
}
