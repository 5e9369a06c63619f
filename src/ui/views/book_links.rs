//! The book screen's series line: the series the book is in (with its
//! place) and the keys that open the author's, narrator's and series'
//! other books in the library.

use crate::domain::{Book, SeriesRef};
use crate::ui::keymap::{Action, Keymap};

/// "Aesop's Fables #2 · more: a author  w narrator  e series", or `None`
/// when the book has nothing to link to. Unbound keys are left out.
pub fn line(book: &Book, keymap: &Keymap) -> Option<String> {
    let key = |a: Action| keymap.keys(a).first().map(|k| k.to_string());
    let mut links = Vec::new();
    for (has, action, word) in [
        (!book.authors.is_empty(), Action::AuthorBooks, "author"),
        (
            !book.narrators.is_empty(),
            Action::NarratorBooks,
            "narrator",
        ),
        (!book.series.is_empty(), Action::SeriesBooks, "series"),
    ] {
        if let (true, Some(k)) = (has, key(action)) {
            links.push(format!("{k} {word}"));
        }
    }
    let series: Vec<String> = book.series.iter().map(SeriesRef::label).collect();
    let mut parts = Vec::new();
    if !series.is_empty() {
        parts.push(series.join(", "));
    }
    if !links.is_empty() {
        parts.push(format!("more: {}", links.join("  ")));
    }
    (!parts.is_empty()).then(|| parts.join(" · "))
}
