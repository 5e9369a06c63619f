//! Browsing by author, narrator and series from the keys: grouping the
//! library, opening a group, and following a book's links to the other
//! books of its author, narrator or series.

use super::*;
use crate::ui::state::library::Facet;

impl App {
    pub(super) fn browse(&mut self, action: Action) {
        let facet = match action {
            Action::AuthorBooks => Facet::Author,
            Action::NarratorBooks => Facet::Narrator,
            Action::SeriesBooks => Facet::Series,
            _ => {
                if self.screen == Screen::Library {
                    self.library.next_group();
                    let said = match self.library.group {
                        Some(f) => format!("Grouped by {}", f.label()),
                        None => "Not grouped".to_owned(),
                    };
                    self.toast(said, false);
                }
                return;
            }
        };
        let book = match self.screen {
            Screen::Book => self.library.get(&self.book.id),
            Screen::Library => self.library.selected(),
            _ => None,
        };
        let Some(book) = book.cloned() else {
            return;
        };
        if facet.names(&book).is_empty() {
            // Nothing to follow: the library stays as the user left it.
            let none = match facet {
                Facet::Author => "No author is known for this book.",
                Facet::Narrator => "No narrator is known for this book.",
                Facet::Series => "This book is not part of a series.",
            };
            self.toast(none, false);
            return;
        }
        // A link shows all of the name's books: no filter, category or search.
        self.library.filter = Filter::All;
        self.library.category = None;
        self.library.search = None;
        self.search_focus = false;
        if self.library.focus_on(facet, &book) {
            self.screen = Screen::Library;
        }
    }

    /// Esc in the library with a focus or a grouping: back one level (the
    /// focus to its group list, the group list to the whole library).
    pub(super) fn browse_back(&mut self) {
        if self.library.focus.is_some() {
            self.library.set_focus(None);
        } else if self.library.group.is_some() {
            self.library.group = None;
            self.library.cursor = 0;
            self.library.offset = 0;
            self.library.rebuild(None);
        }
    }
}
