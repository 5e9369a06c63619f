//! Browsing by author, narrator and series through the reducer: grouping,
//! opening a group, links from a book, Esc back, and series order.

use crate::fixtures::*;
use earmark::domain::*;
use earmark::ui::keymap::KeyCode;
use earmark::ui::state::library::{Facet, Focus};
use earmark::ui::state::*;

fn titles(app: &App) -> Vec<String> {
    (0..app.library.len())
        .filter_map(|i| app.library.row(i).map(|b| b.title.clone()))
        .collect()
}

fn group_names(app: &App) -> Vec<(Option<String>, usize)> {
    app.library
        .groups()
        .iter()
        .map(|g| (g.name.clone(), g.books))
        .collect()
}

#[test]
fn v_groups_by_author_narrator_series_then_none() {
    let mut app = logged_in();
    app.update(key('v'));
    assert_eq!(app.library.group, Some(Facet::Author));
    assert!(app.library.showing_groups());
    assert_eq!(
        group_names(&app),
        [
            (Some("Anonymous".into()), 1),
            (Some("Herman Melville".into()), 1),
            (Some("Jane Austen".into()), 2),
            (Some("刘慈欣 (Liu Cixin)".into()), 1),
        ]
    );
    assert!(app.library.selected().is_none(), "a group row is no book");
    app.update(key('v'));
    assert_eq!(
        group_names(&app),
        [(Some("Stewart Wills".into()), 1), (None, 4)]
    );
    app.update(key('v'));
    assert_eq!(
        group_names(&app),
        [(Some("Austen Novels".into()), 2), (None, 3)]
    );
    app.update(key('v'));
    assert_eq!(app.library.group, None);
    assert_eq!(app.library.len(), 5);
}

#[test]
fn enter_opens_a_group_in_series_order_and_esc_goes_back_a_level() {
    let mut app = logged_in();
    for _ in 0..3 {
        app.update(key('v'));
    }
    app.update(code(KeyCode::Enter));
    assert_eq!(
        app.library.focus,
        Some(Focus {
            facet: Facet::Series,
            name: Some("Austen Novels".into())
        })
    );
    // #2 before 4, although "Emma" sorts before "Pride" by title.
    assert_eq!(titles(&app), ["Pride and Prejudice", "Emma"]);
    app.update(code(KeyCode::Esc));
    assert!(app.library.showing_groups(), "back to the series list");
    assert_eq!(app.library.cursor, 0);
    app.update(key('j'));
    app.update(code(KeyCode::Enter));
    assert_eq!(titles(&app).len(), 3, "the books in no series");
    app.update(code(KeyCode::Esc));
    app.update(code(KeyCode::Esc));
    assert_eq!(app.library.group, None, "Esc ungroups");
    let fx = app.update(code(KeyCode::Esc));
    assert!(fx.contains(&Effect::Quit), "then Esc quits as before");
}

#[test]
fn links_from_a_book_show_all_of_its_authors_narrators_and_series_books() {
    let mut app = book_open();
    // A filter set before is dropped: the link shows every book of the name.
    app.library.filter = Filter::Favorites;
    app.update(key('a'));
    assert_eq!(app.screen, Screen::Library);
    assert_eq!(titles(&app), ["Moby Dick"]);
    assert_eq!(app.library.filter, Filter::All);
    app.update(key('w'));
    assert_eq!(
        app.library.focus.as_ref().and_then(|f| f.name.clone()),
        Some("Stewart Wills".into())
    );
    let fx = app.update(key('e'));
    assert!(fx.is_empty());
    assert_eq!(
        app.library.focus.as_ref().map(|f| f.facet),
        Some(Facet::Narrator),
        "no series: the focus stays"
    );
    // From a row of the library: Emma's series, the cursor stays on Emma.
    app.update(code(KeyCode::Esc));
    app.update(key('g'));
    app.update(key('j'));
    assert_eq!(app.library.selected().unwrap().title, "Emma");
    app.update(key('e'));
    assert_eq!(titles(&app), ["Pride and Prejudice", "Emma"]);
    assert_eq!(app.library.selected().unwrap().title, "Emma");
}

#[test]
fn a_book_in_two_series_goes_to_each_in_turn() {
    let mut app = logged_in();
    let mut books = library();
    books[2].series = vec![
        SeriesRef::new("Austen Novels", Some("1")).unwrap(),
        SeriesRef::new("Regency", Some("10")).unwrap(),
    ];
    app.update(Event::Answer(Answer::Library {
        books,
        from_cache: false,
    }));
    app.update(key('j'));
    assert_eq!(app.library.selected().unwrap().title, "Emma");
    app.update(key('e'));
    assert_eq!(titles(&app), ["Emma", "Pride and Prejudice"]);
    app.update(key('e'));
    assert_eq!(titles(&app), ["Emma"]);
    app.update(key('e'));
    assert_eq!(titles(&app).len(), 2, "and round again");
}

#[test]
fn a_link_with_no_name_keeps_the_filter_category_and_search() {
    let mut app = book_open();
    app.library.filter = Filter::Favorites;
    app.library.category = Some(CategoryId::new("classics"));
    app.library.search = Some(Search {
        query: "moby".into(),
        ..Search::default()
    });
    // Moby Dick is in no series: nothing to follow.
    let fx = app.update(key('e'));
    assert!(fx.is_empty(), "{fx:?}");
    assert_eq!(app.screen, Screen::Book);
    assert_eq!(
        app.toasts.back().map(|t| t.text.as_str()),
        Some("This book is not part of a series.")
    );
    assert_eq!(app.library.filter, Filter::Favorites);
    assert_eq!(app.library.category, Some(CategoryId::new("classics")));
    assert_eq!(
        app.library.search.as_ref().map(|s| s.query.as_str()),
        Some("moby")
    );
}
