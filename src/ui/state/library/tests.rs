//! The library list: sorting, filters, search and scrolling.

use super::*;
use crate::domain::Progress;

fn book(id: &str, title: &str, author: &str) -> Book {
    Book {
        id: BookId::new(id),
        title: title.into(),
        authors: vec![author.into()],
        duration: Some(3600.0),
        ..Book::default()
    }
}

fn lib() -> Library {
    let mut l = Library::default();
    let mut started = book("3", "Moby Dick", "Melville");
    started.progress = Some(Progress {
        chapter_id: "c1".into(),
        position: 30.0,
        book_position: Some(900.0),
        finished: false,
        client_updated_at: Some(5),
        server_updated_at: None,
    });
    let mut fav = book("2", "Emma", "Austen");
    fav.favorite = true;
    l.set_books(
        vec![book("1", "Pride and Prejudice", "Austen"), fav, started],
        false,
    );
    l
}

#[test]
fn sorts_and_filters() {
    let mut l = lib();
    let titles = |l: &Library| {
        (0..l.len())
            .map(|i| l.row(i).unwrap().title.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(titles(&l), ["Emma", "Moby Dick", "Pride and Prejudice"]);
    l.sort = Sort::Recent;
    l.rebuild(None);
    assert_eq!(titles(&l)[0], "Moby Dick");
    l.filter = Filter::Favorites;
    l.rebuild(None);
    assert_eq!(titles(&l), ["Emma"]);
    l.filter = Filter::InProgress;
    l.rebuild(None);
    assert_eq!(titles(&l), ["Moby Dick"]);
    assert_eq!(fraction(l.row(0).unwrap()), Some(0.25));
}

#[test]
fn fuzzy_search_ranks_and_highlights() {
    let mut l = lib();
    l.search = Some(Search {
        query: "pp".into(),
        ..Search::default()
    });
    l.rebuild(None);
    assert_eq!(l.len(), 1);
    let b = l.row(0).unwrap().clone();
    assert_eq!(b.title, "Pride and Prejudice");
    let idx = l.title_matches(&b);
    assert_eq!(idx.len(), 2);
    // Matches authors too.
    l.search.as_mut().unwrap().query = "melv".into();
    l.rebuild(None);
    assert_eq!(l.row(0).unwrap().title, "Moby Dick");
}

#[test]
fn merge_adds_server_results_and_keeps_the_cursor() {
    let mut l = lib();
    l.move_to(1);
    let id = l.selected().unwrap().id.clone();
    l.merge(vec![book("9", "Aaa", "Zed")]);
    assert_eq!(l.total(), 4);
    assert_eq!(l.selected().unwrap().id, id);
}

#[test]
fn scrolling_keeps_cursor_visible() {
    let mut l = Library::default();
    l.set_books(
        (0..1000)
            .map(|i| book(&i.to_string(), &format!("{i:04}"), "a"))
            .collect(),
        true,
    );
    l.move_by(500);
    l.scroll_into_view(10);
    assert_eq!(l.offset, 491);
    l.move_by(-10_000);
    l.scroll_into_view(10);
    assert_eq!((l.cursor, l.offset), (0, 0));
}
