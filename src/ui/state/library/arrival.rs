//! The server's library arriving page by page. On a first start nothing is
//! on screen, so rows are shown from the first page on, in the order the
//! server sent them, and a count says how much has arrived; a refresh of a
//! list already shown loads behind it and only counts. Either way the
//! whole list replaces what is shown when it is complete (`set_books`).

use super::{Library, order_by};
use crate::domain::Book;

/// A load of the server's list that has not completed.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Arrival {
    /// Books received by this load so far.
    pub arrived: usize,
    /// The total the server reported, if it does.
    pub total: Option<u64>,
    /// Its pages are on screen as they come (nothing was shown before);
    /// otherwise it refreshes behind the list on screen.
    pub shown: bool,
    /// Why the rest could not be loaded, once given up (what arrived stays).
    pub failed: Option<String>,
}

/// 12345 → "12,345".
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

impl Arrival {
    /// "12,000 of 100,000", or "12,000" when the server sends no total.
    pub fn count(&self) -> String {
        let n = thousands(self.arrived as u64);
        match self.total {
            Some(t) => format!("{n} of {}", thousands(t.max(self.arrived as u64))),
            None => n,
        }
    }

    /// The library line's words for it; `narrow` for a small terminal.
    pub fn status(&self, narrow: bool) -> String {
        let count = self.count();
        match (self.shown, &self.failed) {
            (true, Some(_)) if narrow => format!("{count}; rest missing (r)"),
            (false, Some(_)) if narrow => format!("update stopped at {count} (r)"),
            (true, None) => format!("{count} loaded…"),
            (true, Some(_)) => format!("{count} loaded; the rest could not be loaded (r retries)"),
            (false, None) => format!("updating: {count}…"),
            (false, Some(_)) => format!("update stopped at {count} (r retries)"),
        }
    }
}

impl Library {
    /// A page of the server's list arrived; `first` starts a new load.
    pub fn page_arrived(&mut self, books: Vec<Book>, total: Option<u64>, first: bool) {
        if first || self.arrival.is_none() {
            // A newer load replaced one whose pages were on screen: the
            // screen shows the new one arriving (a part of an older list
            // must not stand for the library until the new one completes).
            if self
                .arrival
                .as_ref()
                .is_some_and(|a| a.shown && a.failed.is_none())
            {
                self.set_books(Vec::new(), false);
                self.loaded = false;
                self.order = None;
            }
            self.arrival = Some(Arrival {
                shown: !self.loaded,
                ..Arrival::default()
            });
        }
        let Some(a) = self.arrival.as_mut() else {
            return;
        };
        a.arrived += books.len();
        a.total = total.or(a.total);
        a.failed = None;
        if a.shown {
            self.append(books);
        }
    }

    /// The rest of the list could not be loaded; what arrived stays.
    pub fn arrival_failed(&mut self, why: String) {
        let a = self.arrival.get_or_insert_with(|| Arrival {
            shown: !self.loaded,
            ..Arrival::default()
        });
        a.failed = Some(why);
    }

    /// Adds arrived books to what is shown, doing work in proportion to
    /// the page: no sort while the server's order is kept, a merge
    /// otherwise, and a running or finished search scores only them.
    fn append(&mut self, books: Vec<Book>) {
        let keep = self.selected().map(|b| b.id.clone());
        let was_empty = self.books.is_empty();
        let mut fresh: Vec<u32> = Vec::with_capacity(books.len());
        for b in books {
            fresh.extend(self.place(b));
        }
        if !self.loaded {
            self.loaded = true;
            self.from_cache = false;
            self.partial = false;
        }
        match self.order.as_mut() {
            Some((_, order)) if self.arrival_order => order.extend_from_slice(&fresh),
            Some((sort, order)) => {
                // The stable sort finds the sorted run and merges the page
                // in (an equal book stays after the ones shown).
                order.extend_from_slice(&fresh);
                order.sort_by(order_by(*sort, &self.books));
            }
            None if was_empty => {
                self.order = Some((self.sort, fresh.clone()));
                self.arrival_order = true;
            }
            None => {}
        }
        let passing = self.passing(fresh.iter().copied());
        if !self.has_query() {
            // Grouped or focused lists are re-counted or re-ordered whole.
            let plain = self.group.is_none() && self.focus.is_none();
            if plain
                && self.arrival_order
                && self.order.as_ref().is_some_and(|(s, _)| *s == self.sort)
            {
                self.view.extend(passing);
                self.cursor = self.cursor.min(self.view.len().saturating_sub(1));
            } else {
                self.rebuild(keep);
            }
            return;
        }
        // Views remembered for shorter queries lack the new books.
        self.narrowing.clear();
        match self.scan.as_mut() {
            // The scan goes on over the new books on the next ticks.
            Some(scan) => scan.candidates.extend(passing),
            None => self.rebuild(keep),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::BookId;
    use crate::ui::state::library::{Search, Sort};

    fn page(from: usize, n: usize) -> Vec<Book> {
        (from..from + n)
            .map(|i| Book {
                id: BookId::new(format!("b{i}")),
                // Server order is not title order: the last title first.
                title: format!("Title {:04}", 9999 - i),
                authors: vec!["A".into()],
                ..Book::default()
            })
            .collect()
    }

    fn titles(l: &Library) -> Vec<String> {
        (0..l.len())
            .map(|i| l.row(i).unwrap().title.clone())
            .collect()
    }

    #[test]
    fn thousands_groups_digits() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(12_000), "12,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }

    #[test]
    fn pages_are_shown_in_server_order_and_counted() {
        let mut l = Library::default();
        l.page_arrived(page(0, 3), Some(7), true);
        assert!(l.loaded);
        assert_eq!(titles(&l), ["Title 9999", "Title 9998", "Title 9997"]);
        l.move_by(1);
        l.page_arrived(page(3, 3), Some(7), false);
        assert_eq!(l.len(), 6);
        assert_eq!(l.selected().unwrap().title, "Title 9998");
        let a = l.arrival.clone().unwrap();
        assert_eq!(
            (a.arrived, a.status(false)),
            (6, "6 of 7 loaded…".to_owned())
        );
        // The complete list replaces the pages and ends the arrival.
        let mut all = page(0, 7);
        all.reverse();
        l.set_books(all, false);
        assert!(l.arrival.is_none());
        assert_eq!(l.len(), 7);
        assert_eq!(l.selected().unwrap().title, "Title 9998");
    }

    #[test]
    fn a_changed_sort_merges_later_pages_in_order() {
        let mut l = Library::default();
        l.page_arrived(page(0, 3), None, true);
        l.sort = Sort::Author;
        l.rebuild(None);
        l.page_arrived(page(3, 4), None, false);
        let t = titles(&l);
        let mut sorted = t.clone();
        sorted.sort();
        assert_eq!(t, sorted);
        assert_eq!(l.arrival.as_ref().unwrap().status(false), "7 loaded…");
    }

    #[test]
    fn a_search_covers_books_that_arrive_after_it() {
        let mut l = Library::default();
        l.page_arrived(page(0, 50), Some(100), true);
        l.search = Some(Search {
            query: "9920".into(),
            ..Search::default()
        });
        l.rebuild(None);
        while l.step_scan() {}
        assert_eq!(l.len(), 0);
        // "Title 9920" is book 79, in the second page.
        l.page_arrived(page(50, 50), Some(100), false);
        while l.step_scan() {}
        assert_eq!(titles(&l), ["Title 9920"]);
    }

    #[test]
    fn a_refresh_loads_behind_the_list_on_screen() {
        let mut l = Library::default();
        l.set_books(page(0, 5), true);
        l.page_arrived(page(0, 2), Some(5), true);
        assert_eq!(l.len(), 5);
        let a = l.arrival.clone().unwrap();
        assert!(!a.shown);
        assert_eq!(a.status(false), "updating: 2 of 5…");
        l.arrival_failed("the server is not answering".into());
        assert_eq!(
            l.arrival.as_ref().unwrap().status(false),
            "update stopped at 2 of 5 (r retries)"
        );
    }

    #[test]
    fn a_newer_load_replaces_an_unfinished_one_on_screen() {
        let mut l = Library::default();
        l.page_arrived(page(0, 4), Some(10), true);
        l.page_arrived(page(20, 2), Some(30), true);
        assert_eq!(titles(&l), ["Title 9979", "Title 9978"]);
        let a = l.arrival.clone().unwrap();
        assert!(a.shown);
        assert_eq!(a.count(), "2 of 30");
    }

    #[test]
    fn a_failed_load_keeps_what_arrived_and_says_so() {
        let mut l = Library::default();
        l.page_arrived(page(0, 4), Some(10), true);
        l.arrival_failed("timed out".into());
        assert_eq!(l.len(), 4);
        let a = l.arrival.as_ref().unwrap();
        assert_eq!(
            a.status(false),
            "4 of 10 loaded; the rest could not be loaded (r retries)"
        );
        assert_eq!(a.status(true), "4 of 10; rest missing (r)");
    }
}
