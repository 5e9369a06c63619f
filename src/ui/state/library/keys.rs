//! The library screen's update: the search line (typed, then asked of the
//! server after a pause), filter, category and sort, grouping by author,
//! narrator or series, and following a book's links to the other books
//! of its author, narrator or series.

use super::{Facet, Filter, Library, Search};
use crate::domain::Book;
use crate::ui::keymap::{Action, Key, KeyCode};
use crate::ui::state::msg::{Effect, Millis};
use crate::ui::state::toasts::Out;

/// How long the search waits after the last keystroke before asking the server.
pub const SEARCH_DEBOUNCE_MS: Millis = 350;

/// What the search line says when the server cannot be asked.
const OFFLINE_SEARCH: &str =
    "The server cannot be reached: only the books shown here are searched.";

impl Library {
    /// The search line owns the keys.
    pub fn search_editing(&self) -> bool {
        self.search.is_some() && self.search_focus
    }

    /// `/`: the search line, typed into.
    pub(crate) fn open_search(&mut self) {
        if self.search.is_none() {
            self.search = Some(Search::default());
        }
        self.search_focus = true;
    }

    /// A key typed into the search line; false hands it on (to move in
    /// the list while typing).
    pub(crate) fn search_key(
        &mut self,
        key: Key,
        now: Millis,
        offline: bool,
        out: &mut Out,
    ) -> bool {
        let Some(search) = self.search.as_mut() else {
            return false;
        };
        match key.code {
            KeyCode::Char(c) if !key.ctrl && !key.alt => search.query.push(c),
            KeyCode::Backspace => {
                if search.query.pop().is_none() {
                    self.close_search();
                    return true;
                }
            }
            KeyCode::Esc => {
                self.close_search();
                return true;
            }
            KeyCode::Enter => {
                search.ask_server_at = None;
                self.search_focus = false;
                self.ask_server(offline, true, out);
                return true;
            }
            KeyCode::Up | KeyCode::Down | KeyCode::PageUp | KeyCode::PageDown => return false,
            _ => return true,
        }
        search.ask_server_at = Some(now + SEARCH_DEBOUNCE_MS);
        self.rebuild(None);
        self.offset = 0;
        true
    }

    /// Asks the server for the query unless it was asked already; offline,
    /// the books already here are what is searched (`say`: said so).
    fn ask_server(&mut self, offline: bool, say: bool, out: &mut Out) -> Option<()> {
        let search = self.search.as_mut()?;
        let q = search.query.trim().to_owned();
        if q.is_empty() || search.asked.as_deref() == Some(q.as_str()) {
            return None;
        }
        search.asked = Some(q.clone());
        if offline {
            if say {
                out.say(OFFLINE_SEARCH);
            }
            return None;
        }
        out.effect(Effect::Search(q));
        Some(())
    }

    pub(crate) fn close_search(&mut self) {
        let keep = self.selected().map(|b| b.id.clone());
        self.search = None;
        self.search_focus = false;
        self.rebuild(keep);
    }

    /// The clock: a search asks the server after its pause, and a running
    /// scan takes its next chunk. True when the rows changed.
    pub(crate) fn tick(&mut self, now: Millis, offline: bool, out: &mut Out) -> bool {
        if let Some(search) = self.search.as_mut()
            && search.ask_server_at.is_some_and(|t| t <= now)
        {
            search.ask_server_at = None;
            // Quietly: the line is still being typed in.
            self.ask_server(offline, false, out);
        }
        self.step_scan()
    }

    /// Filter, category or sort: the next one.
    pub(crate) fn next_view(&mut self, action: Action) {
        let keep = self.selected().map(|b| b.id.clone());
        match action {
            Action::Filter => self.filter = self.filter.next(),
            Action::Category => self.next_category(),
            _ => self.sort = self.sort.next(),
        }
        self.rebuild(keep);
    }

    /// `v`: group by author, narrator, series, or not at all.
    pub(crate) fn group_key(&mut self, out: &mut Out) {
        self.set_group(Facet::next_group(self.group));
        out.say(match self.group {
            Some(f) => format!("Grouped by {}", f.label()),
            None => "Not grouped".to_owned(),
        });
    }

    /// A link of `book` to the other books of its author, narrator or
    /// series: all of them, with no filter, category or search. False
    /// when the library stays as it was.
    pub(crate) fn follow_link(&mut self, facet: Facet, book: &Book, out: &mut Out) -> bool {
        if facet.names(book).is_empty() {
            out.say(match facet {
                Facet::Author => "No author is known for this book.",
                Facet::Narrator => "No narrator is known for this book.",
                Facet::Series => "This book is not part of a series.",
            });
            return false;
        }
        self.filter = Filter::All;
        self.category = None;
        self.search = None;
        self.search_focus = false;
        self.focus_on(facet, book)
    }

    /// Esc in the library: the search closes, else a focus goes back to
    /// its group list, else the group list to the whole library. False
    /// when there was nothing to go back from.
    pub(crate) fn back(&mut self) -> bool {
        if self.search.is_some() {
            self.close_search();
        } else if self.focus.is_some() {
            self.set_focus(None);
        } else if self.group.is_some() {
            self.set_group(None);
        } else {
            return false;
        }
        true
    }
}
