//! Up next: what plays when a book ends. The listener's "play next" list
//! comes first; when it is empty, the next book of the finished book's
//! series (by sequence, as the library's series view orders it). The one
//! decision, [`next_after`], is pure and used by the player and by
//! `earmark play --up-next`.

use super::{Book, BookId, Progress, series_order};
use serde::{Deserialize, Serialize};

/// `[player] up_next` of config.toml.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum UpNextMode {
    /// The list, then the series (the default).
    #[default]
    Series,
    /// Only the list.
    Queue,
    Off,
}

impl UpNextMode {
    /// The setting's value; `None` (not set) is the default. The error
    /// names the setting and what it must be.
    pub fn parse(value: Option<&str>) -> Result<UpNextMode, String> {
        match value {
            None | Some("series") => Ok(UpNextMode::Series),
            Some("queue") => Ok(UpNextMode::Queue),
            Some("off") => Ok(UpNextMode::Off),
            Some(other) => Err(format!(
                "[player] in config.toml: `up_next` = {other:?} is not \"series\" (the play next list, then the series), \"queue\" (only the list) or \"off\""
            )),
        }
    }
}

/// One book of the "play next" list. The title is kept so the list reads
/// before the library has arrived.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Queued {
    pub id: BookId,
    pub title: String,
}

impl Queued {
    pub fn of(book: &Book) -> Queued {
        Queued {
            id: book.id.clone(),
            title: book.title.clone(),
        }
    }
}

/// Where the next book came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum NextFrom {
    /// The head of the play next list (it leaves the list when it starts).
    List,
    /// The next book of this series.
    Series(String),
}

/// The book that plays next.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Next {
    pub book: BookId,
    pub title: String,
    pub from: NextFrom,
}

/// What plays after `finished`: the first book of `list` that is not
/// `finished`; else (in [`UpNextMode::Series`]) the book after it in the
/// first of its series that has one after it, passing over books the
/// library says are finished (they would resume at their end). Ties in
/// the series order go by `library`'s order. `library` only needs the
/// series' books; it may be empty when the list decides.
pub fn next_after(
    mode: UpNextMode,
    finished: &BookId,
    list: &[Queued],
    library: &[Book],
) -> Option<Next> {
    if mode == UpNextMode::Off {
        return None;
    }
    if let Some(q) = list.iter().find(|q| &q.id != finished) {
        return Some(Next {
            book: q.id.clone(),
            title: q.title.clone(),
            from: NextFrom::List,
        });
    }
    if mode == UpNextMode::Queue {
        return None;
    }
    let book = library.iter().find(|b| &b.id == finished)?;
    book.series
        .iter()
        .find_map(|s| next_in_series(&s.name, book, library))
}

/// The book after `book` in the series `name`, by sequence then title.
fn next_in_series(name: &str, book: &Book, library: &[Book]) -> Option<Next> {
    let key = |b: &Book| {
        let seq = b
            .series
            .iter()
            .find(|s| s.name == name)
            .and_then(|s| s.sequence.clone());
        (seq, b.title.clone())
    };
    let order = |a: &Book, b: &Book| {
        let (ka, kb) = (key(a), key(b));
        series_order((ka.0.as_ref(), &ka.1), (kb.0.as_ref(), &kb.1))
            // Equal keys: the library's order decides, as a stable sort would.
            .then_with(|| position(library, &a.id).cmp(&position(library, &b.id)))
    };
    library
        .iter()
        .filter(|b| b.id != book.id && b.series.iter().any(|s| s.name == name))
        .filter(|b| !b.progress.as_ref().is_some_and(|p| p.finished))
        .filter(|b| order(b, book).is_gt())
        .min_by(|a, b| order(a, b))
        .map(|b| Next {
            book: b.id.clone(),
            title: b.title.clone(),
            from: NextFrom::Series(name.to_owned()),
        })
}

fn position(library: &[Book], id: &BookId) -> usize {
    library
        .iter()
        .position(|b| &b.id == id)
        .unwrap_or(usize::MAX)
}

/// How the next book opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Opening {
    /// At its synced place, restored by every rule of contract rule 7.
    Resume,
    /// From the start of its first chapter: the listener queued a book
    /// they had finished, so they asked to hear it again. An explicit
    /// restart (sent with `reset`), never "a 0 over a valid place".
    Restart,
}

impl Opening {
    /// The one rule for the player and `earmark play --up-next`, from the
    /// place the library or the server holds for the next book: finished
    /// restarts; anything else, or a place that could not be read
    /// (`None`), resumes (the open reads the server's place itself).
    pub fn of(place: Option<&Progress>) -> Opening {
        match place {
            Some(p) if p.finished => Opening::Restart,
            _ => Opening::Resume,
        }
    }
}

/// Edits of the play next list; each tells whether it changed it.
pub mod list {
    use super::{BookId, Queued};

    /// Adds `book` at the end; a book already in the list stays where it is.
    pub fn add(list: &mut Vec<Queued>, book: Queued) -> bool {
        if list.iter().any(|q| q.id == book.id) {
            return false;
        }
        list.push(book);
        true
    }

    /// Removes `book`; true when it was there.
    pub fn remove(list: &mut Vec<Queued>, book: &BookId) -> bool {
        let before = list.len();
        list.retain(|q| &q.id != book);
        list.len() != before
    }

    /// Moves the entry at `i` one place earlier (`-1`) or later (`1`);
    /// its new index, or `None` at an end.
    pub fn shift(list: &mut [Queued], i: usize, by: isize) -> Option<usize> {
        let j = i.checked_add_signed(by)?;
        if i >= list.len() || j >= list.len() {
            return None;
        }
        list.swap(i, j);
        Some(j)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::SeriesRef;
    use proptest::prelude::*;

    fn book(id: &str, series: &[(&str, Option<&str>)]) -> Book {
        Book {
            id: BookId::new(id),
            title: id.to_owned(),
            series: series
                .iter()
                .filter_map(|(n, s)| SeriesRef::new(n, *s))
                .collect(),
            ..Book::default()
        }
    }

    fn queued(id: &str) -> Queued {
        Queued {
            id: BookId::new(id),
            title: id.to_uppercase(),
        }
    }

    fn progress(finished: bool) -> Progress {
        Progress {
            chapter_id: crate::domain::ChapterId::new("c9"),
            position: 30.0,
            book_position: None,
            finished,
            client_updated_at: None,
            server_updated_at: None,
        }
    }

    fn next_id(mode: UpNextMode, finished: &str, list: &[Queued], lib: &[Book]) -> Option<String> {
        next_after(mode, &BookId::new(finished), list, lib).map(|n| n.book.to_string())
    }

    #[test]
    fn the_series_goes_on_by_sequence_not_by_text_or_library_order() {
        let lib = [
            book("ten", &[("Saga", Some("#10"))]),
            book("two", &[("Saga", Some("2"))]),
            book("half", &[("Saga", Some("1.5"))]),
            book("one", &[("Saga", Some("1"))]),
            book("loose", &[("Saga", None)]),
            book("other", &[("Other", Some("3"))]),
        ];
        let s = UpNextMode::Series;
        assert_eq!(next_id(s, "one", &[], &lib).as_deref(), Some("half"));
        assert_eq!(next_id(s, "half", &[], &lib).as_deref(), Some("two"));
        assert_eq!(next_id(s, "two", &[], &lib).as_deref(), Some("ten"));
        assert_eq!(
            next_id(s, "ten", &[], &lib).as_deref(),
            Some("loose"),
            "books without a sequence come last, as `e` shows them"
        );
        assert_eq!(next_id(s, "loose", &[], &lib), None, "the series ends");
        assert_eq!(next_id(s, "other", &[], &lib), None);
        let n = next_after(s, &BookId::new("one"), &[], &lib).unwrap();
        assert_eq!(n.from, NextFrom::Series("Saga".into()));
    }

    #[test]
    fn the_list_comes_first_and_the_finished_book_is_never_next() {
        let lib = [
            book("one", &[("Saga", Some("1"))]),
            book("two", &[("Saga", Some("2"))]),
        ];
        let list = [queued("one"), queued("x")];
        let n = next_after(UpNextMode::Series, &BookId::new("one"), &list, &lib).unwrap();
        assert_eq!(n.book, BookId::new("x"));
        assert_eq!(n.title, "X");
        assert_eq!(n.from, NextFrom::List);
        assert_eq!(
            next_id(UpNextMode::Queue, "one", &[queued("one")], &lib),
            None,
            "queue mode: only the list"
        );
        assert_eq!(next_id(UpNextMode::Off, "one", &list, &lib), None);
        assert_eq!(
            next_id(UpNextMode::Series, "two", &[], &lib),
            None,
            "the last of its series"
        );
    }

    #[test]
    fn books_already_finished_are_passed_over() {
        let mut lib = vec![
            book("one", &[("Saga", Some("1"))]),
            book("two", &[("Saga", Some("2"))]),
            book("three", &[("Saga", Some("3"))]),
        ];
        lib[1].progress = Some(progress(true));
        assert_eq!(
            next_id(UpNextMode::Series, "one", &[], &lib).as_deref(),
            Some("three")
        );
        lib[2].progress = lib[1].progress.clone();
        assert_eq!(next_id(UpNextMode::Series, "one", &[], &lib), None);
    }

    #[test]
    fn a_book_in_two_series_follows_the_first_that_goes_on() {
        let lib = [
            book("a", &[("Sub", Some("3")), ("World", Some("7"))]),
            book("b", &[("World", Some("8"))]),
            book("c", &[("Sub", Some("1"))]),
        ];
        assert_eq!(
            next_id(UpNextMode::Series, "a", &[], &lib).as_deref(),
            Some("b"),
            "Sub ends with a; World goes on"
        );
        assert_eq!(
            next_id(UpNextMode::Series, "unknown", &[], &lib),
            None,
            "a book the library does not have"
        );
    }

    #[test]
    fn a_place_that_could_not_be_read_resumes() {
        assert_eq!(Opening::of(None), Opening::Resume);
    }

    #[test]
    fn the_mode_is_read_and_a_bad_one_is_named() {
        assert_eq!(UpNextMode::parse(None), Ok(UpNextMode::Series));
        assert_eq!(UpNextMode::parse(Some("queue")), Ok(UpNextMode::Queue));
        assert_eq!(UpNextMode::parse(Some("off")), Ok(UpNextMode::Off));
        let e = UpNextMode::parse(Some("Series")).unwrap_err();
        assert!(e.contains("`up_next`") && e.contains("\"Series\""), "{e}");
    }

    #[test]
    fn list_edits_keep_one_entry_per_book() {
        let mut l = vec![queued("a")];
        assert!(list::add(&mut l, queued("b")));
        assert!(!list::add(&mut l, queued("a")), "already there");
        assert_eq!(list::shift(&mut l, 1, -1), Some(0));
        assert_eq!(l[0].id, BookId::new("b"));
        assert_eq!(list::shift(&mut l, 0, -1), None);
        assert_eq!(list::shift(&mut l, 1, 1), None);
        assert_eq!(list::shift(&mut l, 5, 1), None);
        assert!(list::remove(&mut l, &BookId::new("b")));
        assert!(!list::remove(&mut l, &BookId::new("b")));
        assert_eq!(l, vec![queued("a")]);
    }

    fn any_library() -> impl Strategy<Value = Vec<Book>> {
        let seq = prop_oneof![
            Just(None),
            (0u32..6).prop_map(|n| Some(n.to_string())),
            Just(Some("Prequel".to_owned())),
        ];
        let series = prop_oneof![Just("Saga"), Just("Other")];
        proptest::collection::vec(proptest::collection::vec((series, seq), 0..3), 1..12).prop_map(
            |books| {
                books
                    .into_iter()
                    .enumerate()
                    .map(|(i, s)| {
                        let refs: Vec<(&str, Option<&str>)> =
                            s.iter().map(|(n, q)| (*n, q.as_deref())).collect();
                        let mut b = book(&format!("b{i}"), &refs);
                        // Some books share a title: the library's order decides.
                        b.title = format!("t{}", i % 4);
                        b
                    })
                    .collect()
            },
        )
    }

    proptest! {
        /// Walking the series from its first book visits each of its books
        /// once, in the order the series view sorts them.
        #[test]
        fn following_the_series_walks_it_in_order(lib in any_library()) {
            let name = "Saga";
            let mut members: Vec<&Book> = lib
                .iter()
                .filter(|b| b.series.iter().any(|s| s.name == name))
                .collect();
            let seq = |b: &Book| b.series.iter().find(|s| s.name == name).and_then(|s| s.sequence.clone());
            members.sort_by(|a, b| series_order((seq(a).as_ref(), &a.title), (seq(b).as_ref(), &b.title)));
            prop_assume!(!members.is_empty());
            // Only the books whose first series is this one follow it alone.
            let mut at = members[0].id.clone();
            let mut walked = vec![at.clone()];
            while let Some(n) = next_in_series(name, lib.iter().find(|b| b.id == at).unwrap(), &lib) {
                prop_assert!(!walked.contains(&n.book), "{:?} twice", n.book);
                at = n.book;
                walked.push(at.clone());
            }
            let want: Vec<BookId> = members.iter().map(|b| b.id.clone()).collect();
            prop_assert_eq!(walked, want);
        }

        /// A finished book opens from its beginning only when the list
        /// brought it back (the series passes over finished books);
        /// every other next book resumes at its place.
        #[test]
        fn only_a_finished_book_from_the_list_restarts(
            lib in any_library(),
            done in proptest::collection::vec(any::<bool>(), 12),
            i in 0usize..12,
            listed in proptest::collection::vec(0usize..12, 0..3),
        ) {
            let mut lib = lib;
            for (b, d) in lib.iter_mut().zip(&done) {
                b.progress = Some(progress(*d));
            }
            let ended = BookId::new(format!("b{}", i % lib.len()));
            let list: Vec<Queued> = listed.iter().map(|j| queued(&format!("b{j}"))).collect();
            for mode in [UpNextMode::Series, UpNextMode::Queue] {
                let Some(n) = next_after(mode, &ended, &list, &lib) else { continue };
                let place = lib.iter().find(|b| b.id == n.book).and_then(|b| b.progress.as_ref());
                let opening = Opening::of(place);
                let finished = place.is_some_and(|p| p.finished);
                prop_assert_eq!(opening == Opening::Restart, finished);
                if opening == Opening::Restart {
                    prop_assert_eq!(&n.from, &NextFrom::List);
                }
            }
        }

        #[test]
        fn the_next_book_is_never_the_finished_one(
            lib in any_library(),
            i in 0usize..12,
            listed in proptest::collection::vec(0usize..12, 0..3),
        ) {
            let finished = BookId::new(format!("b{}", i % lib.len()));
            let list: Vec<Queued> = listed.iter().map(|j| queued(&format!("b{j}"))).collect();
            for mode in [UpNextMode::Series, UpNextMode::Queue, UpNextMode::Off] {
                let n = next_after(mode, &finished, &list, &lib);
                if let Some(n) = &n {
                    prop_assert_ne!(&n.book, &finished);
                }
                let from_list = list.iter().find(|q| q.id != finished);
                match (mode, from_list) {
                    (UpNextMode::Off, _) => prop_assert!(n.is_none()),
                    (_, Some(q)) => prop_assert_eq!(n.map(|n| n.book), Some(q.id.clone())),
                    (UpNextMode::Queue, None) => prop_assert!(n.is_none()),
                    (UpNextMode::Series, None) => {
                        if let Some(n) = n {
                            prop_assert!(matches!(n.from, NextFrom::Series(_)));
                        }
                    }
                }
            }
        }
    }
}
