//! Browsing by author, narrator and series: the group list (one row per
//! name with its count) and the focus on one name, which narrows the book
//! list and, for a series, orders it by sequence then title.
//!
//! The group list is built when the library view is rebuilt (a change of
//! books, filter, category or grouping), never per frame.

use super::{Book, Library, caseless};
use crate::domain::{Sequence, SeriesRef, series_order};
use std::collections::HashMap;

/// What books can be grouped by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Facet {
    Author,
    Narrator,
    Series,
}

impl Facet {
    pub fn label(self) -> &'static str {
        match self {
            Facet::Author => "author",
            Facet::Narrator => "narrator",
            Facet::Series => "series",
        }
    }

    /// The row of books that have none.
    pub fn none_label(self) -> &'static str {
        match self {
            Facet::Author => "(unknown author)",
            Facet::Narrator => "(no narrator)",
            Facet::Series => "(not in a series)",
        }
    }

    /// The next grouping: none → author → narrator → series → none.
    pub fn next_group(group: Option<Facet>) -> Option<Facet> {
        match group {
            None => Some(Facet::Author),
            Some(Facet::Author) => Some(Facet::Narrator),
            Some(Facet::Narrator) => Some(Facet::Series),
            Some(Facet::Series) => None,
        }
    }

    /// The names a book has for this facet, in the book's order (without
    /// allocating: the filter asks this of every book).
    fn each(self, b: &Book) -> impl Iterator<Item = &str> {
        let (people, series): (&[String], &[SeriesRef]) = match self {
            Facet::Author => (&b.authors, &[]),
            Facet::Narrator => (&b.narrators, &[]),
            Facet::Series => (&[], &b.series),
        };
        let series = series.iter().map(|s| s.name.as_str());
        people.iter().map(String::as_str).chain(series)
    }

    pub fn names(self, b: &Book) -> Vec<&str> {
        self.each(b).collect()
    }
}

/// The library narrowed to one author, narrator or series.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Focus {
    pub facet: Facet,
    /// `None`: the books that have no name for the facet.
    pub name: Option<String>,
}

impl Focus {
    pub fn passes(&self, b: &Book) -> bool {
        match &self.name {
            Some(n) => self.facet.each(b).any(|has| has == n),
            None => self.facet.each(b).next().is_none(),
        }
    }

    /// "series: Discworld", "author: (unknown author)".
    pub fn describe(&self) -> String {
        let name = self.name.as_deref().unwrap_or(self.facet.none_label());
        format!("{}: {name}", self.facet.label())
    }
}

/// One row of the group list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupRow {
    /// `None`: the books without one.
    pub name: Option<String>,
    pub books: usize,
}

/// Counts per name over `books` (the ones that pass the filter), sorted
/// by name caselessly; the "none" row last.
pub fn group_rows<'a>(facet: Facet, books: impl Iterator<Item = &'a Book>) -> Vec<GroupRow> {
    let mut counts: HashMap<&str, usize> = HashMap::new();
    let mut without = 0;
    for b in books {
        let names = facet.names(b);
        if names.is_empty() {
            without += 1;
        }
        for (i, n) in names.iter().enumerate() {
            // A book naming someone twice counts once.
            if !names[..i].contains(n) {
                *counts.entry(n).or_default() += 1;
            }
        }
    }
    let mut rows: Vec<(&str, usize)> = counts.into_iter().collect();
    rows.sort_by(|a, b| caseless(a.0).cmp(&caseless(b.0)).then(a.0.cmp(b.0)));
    let mut out: Vec<GroupRow> = rows
        .into_iter()
        .map(|(n, books)| GroupRow {
            name: Some(n.to_owned()),
            books,
        })
        .collect();
    if without > 0 {
        out.push(GroupRow {
            name: None,
            books: without,
        });
    }
    out
}

/// A book's sequence in the series `name`.
pub fn sequence_in<'a>(b: &'a Book, name: &str) -> Option<&'a Sequence> {
    b.series
        .iter()
        .find(|s| s.name == name)
        .and_then(|s| s.sequence.as_ref())
}

/// Orders `view` (indices into `books`) by sequence in `series`, then title.
pub fn order_series(view: &mut [u32], books: &[Book], series: &str) {
    view.sort_by(|&a, &b| {
        let (a, b) = (&books[a as usize], &books[b as usize]);
        series_order(
            (sequence_in(a, series), &a.title),
            (sequence_in(b, series), &b.title),
        )
    });
}

impl Library {
    /// The group list is on screen (grouped, no focus, no search typed).
    pub fn showing_groups(&self) -> bool {
        self.group.is_some() && self.focus.is_none() && !self.has_query()
    }

    pub(super) fn has_query(&self) -> bool {
        self.search
            .as_ref()
            .is_some_and(|s| !s.query.trim().is_empty())
    }

    /// After the view is filtered: a series focus in series order, and the
    /// group list when grouped.
    pub(super) fn arrange_by_facet(&mut self) {
        if let Some(Focus {
            facet: Facet::Series,
            name: Some(series),
        }) = &self.focus
        {
            order_series(&mut self.view, &self.books, series);
        }
        self.groups = match self.group.filter(|_| self.focus.is_none()) {
            Some(facet) => group_rows(facet, self.view.iter().map(|&i| &self.books[i as usize])),
            None => Vec::new(),
        };
    }

    pub fn groups(&self) -> &[GroupRow] {
        &self.groups
    }

    /// Groups by `group` (or not at all), on its first row.
    pub fn set_group(&mut self, group: Option<Facet>) {
        self.group = group;
        self.focus = None;
        self.cursor = 0;
        self.offset = 0;
        self.rebuild(None);
    }

    /// Opens the group under the cursor.
    pub fn open_group(&mut self) {
        let Some(row) = self.groups.get(self.cursor).cloned() else {
            return;
        };
        if let Some(facet) = self.group {
            self.group_cursor = self.cursor;
            self.set_focus(Some(Focus {
                facet,
                name: row.name,
            }));
        }
    }

    /// Narrows to one name (or back to everything); the cursor goes to the
    /// first book, or back to the group it came from.
    pub fn set_focus(&mut self, focus: Option<Focus>) {
        let back_to_groups = focus.is_none() && self.group.is_some();
        self.focus = focus;
        self.cursor = 0;
        self.offset = 0;
        self.rebuild(None);
        if back_to_groups {
            self.cursor = self.group_cursor.min(self.len().saturating_sub(1));
        }
    }

    /// Focus on `book`'s next name for `facet`: its first, or the one
    /// after the name focused now (a book in two series goes to each in
    /// turn). False when the book has none.
    pub fn focus_on(&mut self, facet: Facet, book: &Book) -> bool {
        let names = facet.names(book);
        let Some(first) = names.first() else {
            return false;
        };
        let next = match &self.focus {
            Some(Focus {
                facet: f,
                name: Some(cur),
            }) if *f == facet => names
                .iter()
                .position(|n| n == cur)
                .and_then(|i| names.get(i + 1))
                .unwrap_or(first),
            _ => first,
        };
        let name = (*next).to_owned();
        if let Some(g) = self.group.filter(|g| *g == facet) {
            // Back from the focus lands on this name's group row.
            self.group_cursor = group_rows(g, self.books.iter().filter(|b| self.passes_filter(b)))
                .iter()
                .position(|r| r.name.as_deref() == Some(name.as_str()))
                .unwrap_or(0);
        }
        self.focus = Some(Focus {
            facet,
            name: Some(name),
        });
        self.offset = 0;
        // The cursor stays on the book the link was followed from.
        self.rebuild(Some(book.id.clone()));
        true
    }
}
